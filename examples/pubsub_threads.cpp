// pubsub_threads: producer threads and consumer threads of one process talking through a
// topic. Each record's value carries the time it was sent, so consumers measure end-to-end
// latency; each key's records carry a sequence number, so consumers check that every record
// arrived exactly once and in order per key. Exits non-zero if any check fails.
//
// Usage: pubsub_threads [DIR] [RECORDS] [RATE]   DIR is emptied first (default: a directory
// under /tmp); RECORDS defaults to 200000; RATE (records/s, all producers together) to 0, as
// fast as possible, so latency includes the backlog: try 50000 to see it without one.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/brook.hpp>

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

constexpr int producers = 2, consumers = 2, partitions = 4, keys_per_producer = 16;
const std::string topic = "events";

std::int64_t now_ns() { return steady::now().time_since_epoch() / std::chrono::nanoseconds(1); }
std::string key_of(int producer, int k) { return fmt::format("p{}-k{}", producer, k); }

// The value: send time (steady_clock ns) and the record's sequence number within its key.
struct payload {
  std::int64_t sent_ns;
  std::int64_t seq;
};

int main(int argc, char** argv) {
  fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "brook-pubsub-threads";
  const long total = argc > 2 ? std::atol(argv[2]) : 200'000;
  const long rate = argc > 3 ? std::atol(argv[3]) : 0;
  const long per_key = total / (producers * keys_per_producer);
  fs::remove_all(dir);

  // 1. A data directory with one topic of 4 partitions.
  auto dd = brook::data_dir::open(dir);
  if (!dd) return std::fprintf(stderr, "open: %s\n", dd.error().to_string().c_str()), 1;
  brook::topic_config tc;
  tc.partitions = partitions;
  if (auto r = (*dd)->create_topic(topic, tc); !r)
    return std::fprintf(stderr, "create_topic: %s\n", r.error().to_string().c_str()), 1;

  // 2. Consumer c reads partitions c, c + consumers, ... (manual assignment). It knows how
  //    many records to expect: keys go to partitions by murmur2, as in Kafka.
  struct key_state {
    long next_seq = 0;
    bool broken = false;
  };
  std::vector<std::vector<std::int64_t>> latencies(consumers);
  std::vector<std::map<std::string, key_state>> seen(consumers);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  const auto start = steady::now();
  for (int c = 0; c < consumers; ++c) {
    threads.emplace_back([&, c] {
      brook::consumer_config cc;
      cc.auto_offset_reset = brook::offset_reset::earliest;
      brook::consumer con(**dd, cc);
      std::vector<brook::topic_partition> mine;
      for (int p = c; p < partitions; p += consumers) mine.push_back({topic, brook::partition_id(p)});
      long expected = 0;
      for (int pr = 0; pr < producers; ++pr)
        for (int k = 0; k < keys_per_producer; ++k)
          if (brook::partition_for_key(key_of(pr, k), partitions).value() % consumers == c) expected += per_key;
      long received = 0;
      if (!con.assign(mine)) ++failures;
      while (failures == 0 && received < expected && steady::now() - start < std::chrono::seconds(60)) {
        auto records = con.poll(std::chrono::milliseconds(100));
        if (!records) {
          std::fprintf(stderr, "poll: %s\n", records.error().to_string().c_str());
          ++failures;
          break;
        }
        const std::int64_t now = now_ns();  // when the application holds the records
        for (const auto& rec : *records) {
          payload p;
          std::memcpy(&p, rec.value().data(), sizeof p);
          latencies[c].push_back(now - p.sent_ns);
          auto& ks = seen[c][rec.key().to_string()];
          if (p.seq != ks.next_seq) ks.broken = true;  // a gap, a duplicate or a reordering
          ks.next_seq = p.seq + 1;
          ++received;
        }
      }
      if (received != expected) {
        std::fprintf(stderr, "consumer %d: received %ld of %ld records\n", c, received, expected);
        ++failures;
      }
    });
  }

  // 3. Producer threads share one producer (send() is thread-safe). Each owns its keys and
  //    sends them round-robin; linger 0 sends as soon as the producer's sender is free.
  brook::producer_config pc;
  pc.linger = std::chrono::milliseconds(0);
  pc.acks = brook::acks_mode::leader;
  brook::producer prod(**dd, pc);
  for (int pr = 0; pr < producers; ++pr) {
    threads.emplace_back([&, pr] {
      std::vector<std::string> keys;
      for (int k = 0; k < keys_per_producer; ++k) keys.push_back(key_of(pr, k));
      const auto interval = std::chrono::nanoseconds(rate > 0 ? 1'000'000'000L * producers / rate : 0);
      auto due = steady::now();
      for (long seq = 0; seq < per_key; ++seq) {
        for (const auto& key : keys) {
          if (rate > 0) std::this_thread::sleep_until(due += interval);
          payload p{now_ns(), seq};
          brook::producer_record rec;
          rec.topic = topic;
          rec.key = key;
          rec.value = std::span(reinterpret_cast<const std::byte*>(&p), sizeof p);  // send() copies it
          prod.send(rec, [&](const brook::result<brook::record_metadata>& md) {
            if (!md) ++failures;
          });
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(steady::now() - start).count();
  if (auto r = prod.close(); !r) ++failures;

  // 4. Report: throughput, latency percentiles, and the exactly-once / order check.
  std::vector<std::int64_t> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double q) { return all.empty() ? 0.0 : double(all[std::size_t(q * double(all.size() - 1))]) / 1e3; };
  std::printf("%zu records in %.3f s: %.0f records/s\n", all.size(), seconds, double(all.size()) / seconds);
  std::printf("end-to-end latency (us): p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", pct(0.5), pct(0.99), pct(0.999),
              pct(1.0));
  long keys_ok = 0, keys_total = 0;
  for (auto& per_consumer : seen)
    for (auto& [key, ks] : per_consumer) {
      ++keys_total;
      if (!ks.broken && ks.next_seq == per_key) ++keys_ok;
    }
  const bool ok = failures == 0 && keys_total == producers * keys_per_producer && keys_ok == keys_total &&
                  long(all.size()) == per_key * producers * keys_per_producer;
  std::printf("%ld of %d keys complete and in order, %d failures: %s\n", keys_ok, producers * keys_per_producer,
              failures.load(), ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

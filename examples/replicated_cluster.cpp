// replicated_cluster: three brokers in one process replicating a topic, and a leader that dies
// mid-stream. A producer thread sends with acks=all (min.insync.replicas=2) while the cluster
// runs on its threads; the leader of partition 0 stops without a controlled shutdown (as a
// killed process: nobody is told), the controller fences it after broker.session.timeout.ms and
// elects a new leader from the ISR; the old leader restarts, truncates to the new leaders' logs and
// catches up. Then every partition is read back from its leader's data directory: each
// acknowledged record must be there exactly once, at the offset its acknowledgement gave, and
// every replica must be byte-identical to its leader. Exits non-zero if a check fails.
//
// Usage: replicated_cluster [DIR]   DIR is emptied first (default: ./replicated-cluster-data).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <brook/brook.hpp>
#include <brook/replication/cluster.hpp>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string topic = "payments";
constexpr int partitions = 3;
constexpr long max_records = 500'000;  // the producer stops here whatever happens

// Where an acknowledged record landed, by sequence number (its value). Written by callbacks.
struct ack {
  std::atomic<bool> acknowledged{false};
  int partition = -1;
  std::int64_t offset = -1;
};

// Polls `done` every 10 ms; false after 60 s (a hang, not a slow machine).
bool wait_for(const char* what, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return fmt::print("timed out waiting for {}\n", what), false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// Every byte of a replica's log, batch by batch.
std::vector<std::byte> log_bytes(const brook::partition_log& log) {
  std::vector<std::byte> out;
  for (auto at = log.log_start_offset(); at < log.log_end_offset();) {
    auto s = log.read(at);
    if (!s || s->empty()) break;
    out.insert(out.end(), s->bytes().begin(), s->bytes().end());
    at = s->next_offset();
  }
  return out;
}

int main(int argc, char** argv) {
  const fs::path root = argc > 1 ? fs::path(argv[1]) : fs::path("replicated-cluster-data");
  fs::remove_all(root);
  brook::cluster_config cfg;  // brokers 1, 2, 3
  cfg.broker.min_insync_replicas = 2;
  cfg.controller.broker_session_timeout = std::chrono::milliseconds(1000);  // Kafka's 9 s would make a slow demo
  cfg.broker_heartbeat_interval = std::chrono::milliseconds(100);           // well inside the session timeout
  cfg.broker.dir.defaults.flush_messages = 500;  // fsync every 500 records (Kafka's default: never)
  auto opened = brook::cluster::open(root, cfg);
  if (!opened) return fmt::print(stderr, "open: {}\n", opened.error().to_string()), 1;
  brook::cluster& c = **opened;
  if (auto r = c.create_topic(topic, partitions, 3); !r)
    return fmt::print(stderr, "create_topic: {}\n", r.error().to_string()), 1;
  auto ps = [&](int p) { return *c.image()->partition(topic, brook::partition_id(p)); };
  for (int p = 0; p < partitions; ++p)
    fmt::print("{}-{}: replicas [{}], leader {}, ISR [{}]\n", topic, p, fmt::join(ps(p).replicas, ","), ps(p).leader,
               fmt::join(ps(p).isr, ","));
  c.start();  // a fetcher thread per broker and a control thread

  // The producer thread: keyed records whose values are 0, 1, 2, ...; no retries, so a
  // failed send is simply not acknowledged.
  std::vector<ack> acks(max_records);
  std::atomic<long> sent{0}, acked{0}, failed{0};
  std::mutex errors_mu;
  std::map<std::string, int> errors;  // failures by error code
  std::atomic<bool> producing{true};
  brook::cluster_target target(c);
  brook::producer_config pc;
  pc.acks = brook::acks_mode::all;
  brook::producer prod(target, pc);
  std::thread producer_thread([&] {
    for (long seq = 0; producing && seq < max_records; ++seq) {
      const std::string key = fmt::format("account-{}", seq % 50), value = std::to_string(seq);
      brook::producer_record rec{topic, std::nullopt, key, value, {}, std::nullopt};
      prod.send(rec, [&, seq](const brook::result<brook::record_metadata>& md) {
        auto& a = acks[static_cast<std::size_t>(seq)];
        if (md) {
          a.partition = md->partition.value();
          a.offset = md->offset.value();
          a.acknowledged = true;
          ++acked;
        } else {
          ++failed;
          std::lock_guard lk(errors_mu);
          ++errors[md.error().code().message()];
        }
      });
      sent = seq + 1;
      if (seq % 10 == 9) std::this_thread::sleep_for(1ms);
    }
  });
  auto acked_reaches = [&](long n) {
    return wait_for("acknowledgements", [&] { return acked >= n || sent == max_records; });
  };

  bool ok = acked_reaches(3000);
  fmt::print("producing with acks=all, min.insync.replicas=2: {} records acknowledged so far\n", acked.load());

  // Partition 0's leader dies: it stops at once, and the controller is not told.
  const brook::broker_id victim = ps(0).leader;
  if (auto r = c.stop_broker(victim, brook::shutdown_mode::uncontrolled); !r) ok = false;
  const auto crashed_at = std::chrono::steady_clock::now();
  fmt::print("broker {} dies without a controlled shutdown\n", victim);
  auto new_leader = [&] { return ps(0).has_leader() && ps(0).leader != victim; };
  ok = wait_for("a new leader", new_leader) && ok;
  const auto failover_ms = (std::chrono::steady_clock::now() - crashed_at) / 1ms;
  fmt::print("controller fenced broker {} after ~{} ms: {}-0 now led by broker {} at leader epoch {}, ISR [{}]\n",
             victim, failover_ms, topic, ps(0).leader, ps(0).leader_epoch, fmt::join(ps(0).isr, ","));
  ok = acked_reaches(acked + 2000) && ok;  // the stream goes on with the new leader

  if (auto r = c.restart_broker(victim); !r) ok = false;
  fmt::print("broker {} restarts: recovers its logs, truncates to the new leaders' and catches up\n", victim);
  auto isr_full = [&] {
    for (int p = 0; p < partitions; ++p)
      if (ps(p).isr.size() != 3) return false;
    return true;
  };
  ok = wait_for("the ISRs to be full", isr_full) && ok;
  fmt::print("broker {} is back in the ISR of every partition\n", victim);
  ok = acked_reaches(acked + 2000) && ok;

  producing = false;
  producer_thread.join();
  if (!prod.flush()) ok = false;  // every send has completed now
  {
    std::lock_guard lk(errors_mu);
    std::vector<std::string> why;
    for (const auto& [code, n] : errors) why.push_back(fmt::format("{} {}", n, code));
    fmt::print("producer stopped: {} sent, {} acknowledged, {} failed ({})\n", sent.load(), acked.load(), failed.load(),
               fmt::join(why, ", "));
  }

  // Let every follower reach its leader's log end and high watermark, then stop the threads.
  auto replica = [&](brook::broker_id id, int p) {
    auto b = c.broker(id);
    return b ? b->replica(topic, brook::partition_id(p)) : nullptr;
  };
  auto in_sync = [&] {
    for (int p = 0; p < partitions; ++p) {
      auto leader = replica(ps(p).leader, p);
      if (!leader || leader->high_watermark() != leader->log_end_offset()) return false;
      for (auto id : ps(p).replicas)
        if (auto r = replica(id, p);
            !r || r->log_end_offset() != leader->log_end_offset() || r->high_watermark() != leader->high_watermark())
          return false;
    }
    return true;
  };
  ok = wait_for("the followers to catch up", in_sync) && ok;
  c.stop();

  // Checks: replicas byte-identical; each partition read through the cluster (its leader).
  brook::cluster_source source(c);
  std::vector<int> seen(static_cast<std::size_t>(sent.load()), 0);
  long misplaced = 0, unknown = 0;
  for (int p = 0; p < partitions; ++p) {
    const auto s = ps(p);
    auto leader = replica(s.leader, p);
    if (!leader) {
      ok = false;
      continue;
    }
    const auto leader_bytes = log_bytes(leader->part()->log());
    int identical = 0;
    for (auto id : s.replicas)
      if (auto r = replica(id, p); r && log_bytes(r->part()->log()) == leader_bytes) ++identical;
    ok = ok && identical == static_cast<int>(s.replicas.size());
    brook::consumer cons(source);
    const brook::topic_partition tp{topic, brook::partition_id(p)};
    const auto hw = leader->high_watermark();
    bool read_ok = cons.assign({tp}) && cons.seek(tp, brook::offset(0));
    for (auto pos = cons.position(tp); read_ok && pos && *pos < hw; pos = cons.position(tp)) {
      auto records = cons.poll(0ms);
      if (!records || records->empty()) {
        read_ok = false;  // below the high watermark there is always a record to read
        break;
      }
      for (const auto& r : *records) {
        const auto seq = std::stol(r.value().to_string());
        if (seq < 0 || seq >= sent) {
          ++unknown;
          continue;
        }
        ++seen[static_cast<std::size_t>(seq)];
        const auto& a = acks[static_cast<std::size_t>(seq)];
        if (a.acknowledged && (a.partition != p || a.offset != r.offset().value())) ++misplaced;
      }
    }
    ok = ok && read_ok;
    fmt::print("{}-{}: leader {} (epoch {}), ISR [{}], high watermark {}, {} of {} replicas byte-identical\n", topic, p,
               s.leader, s.leader_epoch, fmt::join(s.isr, ","), hw, identical, s.replicas.size());
  }
  long acked_read = 0, unacked_read = 0, lost = 0, duplicated = 0;
  for (long seq = 0; seq < sent; ++seq) {
    const int n = seen[static_cast<std::size_t>(seq)];
    const bool acknowledged = acks[static_cast<std::size_t>(seq)].acknowledged;
    duplicated += n > 1 ? n - 1 : 0;
    acked_read += acknowledged && n > 0;
    lost += acknowledged && n == 0;
    unacked_read += !acknowledged && n > 0;
  }
  if (duplicated || misplaced || unknown)
    fmt::print("{} duplicated, {} not at their acknowledged offset, {} never sent\n", duplicated, misplaced, unknown);
  ok = ok && lost == 0 && duplicated == 0 && misplaced == 0 && unknown == 0;
  if (auto r = c.close(); !r) ok = false;
  fmt::print("acknowledged {}, failed {}, read back {} acknowledged (+{} unacknowledged that made it), lost {}: {}\n",
             acked.load(), failed.load(), acked_read, unacked_read, lost, ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

// consumer_group: consumer threads sharing a topic through a consumer group. Three members
// (a, b, c) split six partitions while a producer writes; b leaves, d joins, and each
// member's rebalance listener prints what it owns in every generation. At the end the
// program checks that every record sent was consumed at least once and that the group's
// committed offsets reached the end of every partition. Exits non-zero if a check fails.
//
// Usage: consumer_group [DIR]   DIR is emptied first (default: a directory under /tmp).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <brook/brook.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/group/group_coordinator.hpp>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string topic = "orders", group = "billing";
constexpr int partitions = 6;

// Prints the member's whole assignment after every rebalance. It runs inside poll(), on
// the member's thread, so it may ask its consumer for the assignment and generation.
struct printing_listener : brook::rebalance_listener {
  std::string name;
  brook::group_consumer* consumer = nullptr;
  std::atomic<int> generation{-1};  // the last generation this member has joined; read by main
  void on_partitions_revoked(const std::vector<brook::topic_partition>&) override {}
  void on_partitions_assigned(const std::vector<brook::topic_partition>&) override {
    std::vector<std::string> owned;
    for (const auto& tp : consumer->assignment()) owned.push_back(fmt::format("{}-{}", tp.topic, tp.partition));
    generation = consumer->group_metadata().generation.value();
    fmt::print("generation {}: {} owns [{}]\n", generation.load(), name, fmt::join(owned, ", "));
  }
};

// Everything the main thread and the consumer threads share.
struct shared_state {
  std::mutex mu;
  std::vector<int> times_seen;  // by sequence number (the record's value)
  std::atomic<bool> failed{false};
};

// One group member on its own thread: polls until told to stop, then close() commits its
// positions and leaves the group, which makes the others rebalance.
struct member {
  printing_listener listener;
  std::atomic<bool> stop{false};
  std::thread thread;

  member(brook::data_dir& dd, brook::group_coordinator& coord, shared_state& st, std::string name) {
    listener.name = name;
    thread = std::thread([&, name] {
      brook::group_consumer_config cfg;
      cfg.group_id = group;
      cfg.client_id = name;  // the prefix of the member id the coordinator gives it
      cfg.consumer.auto_offset_reset = brook::offset_reset::earliest;  // where the group has no commit yet
      brook::group_consumer c(dd, coord, cfg);                         // auto-commit on: at-least-once
      listener.consumer = &c;
      if (!c.subscribe({topic}, &listener)) st.failed = true;
      while (!stop && !st.failed) {
        auto records = c.poll(100ms);  // also takes part in rebalances
        if (!records) {
          fmt::print(stderr, "{}: poll: {}\n", name, records.error().to_string());
          st.failed = true;
          break;
        }
        std::lock_guard lk(st.mu);
        for (const auto& r : *records) {
          const auto seq = std::stoul(r.value().to_string());
          if (seq >= st.times_seen.size()) st.times_seen.resize(seq + 1);
          ++st.times_seen[seq];
        }
      }
      if (auto r = c.close(); !r) fmt::print(stderr, "{}: close: {}\n", name, r.error().to_string());
      fmt::print("{} closed\n", name);
    });
  }
  ~member() {
    stop = true;
    thread.join();
  }
};

// Polls `done` every 10 ms for up to 10 s.
bool wait_for(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

int main(int argc, char** argv) {
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "brook-consumer-group";
  fs::remove_all(dir);
  auto dd = brook::data_dir::open(dir);
  if (!dd) return fmt::print(stderr, "open: {}\n", dd.error().to_string()), 1;
  brook::topic_config tc;
  tc.partitions = partitions;
  if (auto r = (*dd)->create_topic(topic, tc); !r)
    return fmt::print(stderr, "create_topic: {}\n", r.error().to_string()), 1;

  // The coordinator, its timer thread driving session and rebalance timeouts. A new group
  // waits group.initial.rebalance.delay.ms for more members before its first rebalance;
  // Kafka's 3 s would only slow the demo down, 200 ms is plenty for threads of one process.
  // Committed offsets go to the internal topic __consumer_offsets: one partition is enough
  // for one group (Kafka's 50 spread many groups' commits; creating them takes seconds).
  brook::coordinator_config ccfg;
  ccfg.group_initial_rebalance_delay = 200ms;
  ccfg.offsets_topic_num_partitions = 1;
  auto coord = brook::group_coordinator::open(**dd, ccfg);
  if (!coord) return fmt::print(stderr, "coordinator: {}\n", coord.error().to_string()), 1;
  (*coord)->start();

  // A producer thread sends keyed records "0", "1", ... at about 2,000 a second until told to stop.
  shared_state st;
  std::atomic<bool> producing{true};
  std::atomic<long> sent{0};
  brook::producer prod(**dd);
  std::thread producer_thread([&] {
    for (long seq = 0; producing; ++seq) {
      const std::string key = fmt::format("customer-{}", seq % 20), value = std::to_string(seq);
      brook::producer_record rec;
      rec.topic = topic;
      rec.key = key;
      rec.value = value;
      prod.send(rec, [&](const brook::result<brook::record_metadata>& md) {
        if (!md) st.failed = true;
      });
      sent = seq + 1;
      if (seq % 10 == 9) std::this_thread::sleep_for(5ms);
    }
  });

  // The group is settled when it is Stable with `n` members and every running member has
  // joined its current generation.
  std::vector<std::unique_ptr<member>> members;
  auto settled = [&](std::size_t n) {
    return wait_for([&] {
      auto d = (*coord)->describe_group(group);
      if (!d || d->state != brook::group_state::stable || d->members.size() != n) return false;
      for (const auto& m : members)
        if (!m->stop && m->listener.generation != d->generation.value()) return false;
      return true;
    });
  };
  bool ok = true;
  for (const char* name : {"consumer-a", "consumer-b", "consumer-c"})
    members.push_back(std::make_unique<member>(**dd, **coord, st, name));
  ok = ok && settled(3);
  std::this_thread::sleep_for(300ms);

  fmt::print("consumer-b leaves\n");
  members[1].reset();  // stops its thread: close() leaves the group
  members.erase(members.begin() + 1);
  ok = ok && settled(2);
  std::this_thread::sleep_for(300ms);

  fmt::print("consumer-d joins\n");
  members.push_back(std::make_unique<member>(**dd, **coord, st, "consumer-d"));
  ok = ok && settled(3);
  std::this_thread::sleep_for(300ms);

  // Stop producing; wait until every record sent has been consumed, then close the group.
  producing = false;
  producer_thread.join();
  if (auto r = prod.close(); !r) st.failed = true;
  auto consumed_all = [&] {
    std::lock_guard lk(st.mu);
    if (long(st.times_seen.size()) != sent) return false;
    for (int n : st.times_seen)
      if (n == 0) return false;
    return true;
  };
  ok = ok && wait_for(consumed_all);
  fmt::print("all {} records consumed; closing the group\n", sent.load());
  members.clear();
  (*coord)->stop();

  // Checks: every record consumed at least once; the commits reached every partition's end.
  long redelivered = 0;
  for (int n : st.times_seen) redelivered += n > 1 ? n - 1 : 0;
  std::vector<brook::topic_partition> tps;
  for (int p = 0; p < partitions; ++p) tps.push_back({topic, brook::partition_id(p)});
  const auto committed = (*coord)->fetch_offsets(group, tps);
  int at_end = 0;
  for (const auto& tp : tps) {
    auto part = (*dd)->get_partition(tp.topic, tp.partition);
    auto c = committed.find(tp);
    if (part && c != committed.end() && c->second.off == (*part)->high_watermark()) ++at_end;
  }
  ok = ok && !st.failed && consumed_all() && at_end == partitions;
  fmt::print(
      "{} records sent, all consumed: {}, {} delivered more than once (at-least-once); "
      "committed offsets at the end of {} of {} partitions: {}\n",
      sent.load(), consumed_all() ? "yes" : "no", redelivered, at_end, partitions, ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

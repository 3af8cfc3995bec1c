// cluster on threads (fetcher threads, the control thread, producer threads) while brokers
// crash (a process crash, then a power loss), restart and get isolated: no acknowledged record is lost and replicas
// converge. Run under TSan too (the *_threaded_test suffix).
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <brook/client/producer.hpp>
#include <brook/replication/cluster.hpp>
#include <brook/testing/crash.hpp>

#include "support/crash_helpers.hpp"
#include "support/log_builders.hpp"

using namespace brook;
using brook::testing::crash_broker;
using brook::testing::crash_mode;

namespace {

template <typename Pred>
bool wait_until(Pred p, std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (p()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return p();
}

}  // namespace

TEST_CASE("producers, fetchers and the control thread run while brokers crash, restart and get isolated") {
  brook::test::scratch_dir dir("brook-cluster-thr");
  cluster_config cfg;
  cfg.broker.min_insync_replicas = 2;
  cfg.controller.broker_session_timeout = std::chrono::milliseconds(400);
  cfg.broker_heartbeat_interval = std::chrono::milliseconds(50);
  cfg.control_interval = std::chrono::milliseconds(10);
  cfg.broker.replica.replica_lag_time_max = std::chrono::milliseconds(1000);
  cfg.fetcher.wait_max = std::chrono::milliseconds(20);
  brook::testing::broker_disks disks;
  cfg.broker_files = disks.hook();
  auto opened = cluster::open(dir.path(), cfg);
  REQUIRE(opened);
  auto& c = **opened;
  REQUIRE(c.create_topic("t", 3, 3));
  c.start();

  std::mutex mu;
  std::map<std::string, std::pair<int, std::int64_t>> acked;  // value -> (partition, offset)
  std::atomic<int> failed{0};
  std::atomic<bool> stop{false};
  std::atomic<int> flush_errors{0};
  cluster_target target(c);
  auto run_producer = [&](int n) {
    producer_config pc;
    pc.acks = acks_mode::all;
    pc.linger = std::chrono::milliseconds(1);
    pc.request_timeout = std::chrono::milliseconds(2000);
    producer p(target, pc);
    for (int i = 0; !stop.load(); ++i) {
      std::string v = fmt::format("p{}-{}", n, i);
      p.send(producer_record{"t", std::nullopt, v, v, {}, std::nullopt}, [&, v](const result<record_metadata>& r) {
        if (!r) {
          ++failed;
          return;
        }
        std::lock_guard l(mu);
        acked.emplace(v, std::pair{r->partition.value(), r->offset.value()});
      });
      if (i % 64 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!p.flush()) ++flush_errors;  // no Catch assertions off the main thread (Catch is not thread-safe)
  };
  std::thread p1(run_producer, 1), p2(run_producer, 2);

  auto acked_count = [&] {
    std::lock_guard l(mu);
    return acked.size();
  };
  REQUIRE(wait_until([&] { return acked_count() > 500; }));
  const auto leader0 = c.image()->partition("t", partition_id{0})->leader;
  REQUIRE(crash_broker(c, disks, leader0, crash_mode::process));
  REQUIRE(wait_until([&] { return c.image()->partition("t", partition_id{0})->leader != leader0; }));
  const auto n1 = acked_count();
  REQUIRE(wait_until([&] { return acked_count() > n1 + 200; }));
  REQUIRE(c.restart_broker(leader0));
  const auto other = leader0 == broker_id{1} ? broker_id{2} : broker_id{1};
  c.isolate(other);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  c.heal(other);
  const auto n2 = acked_count();
  REQUIRE(wait_until([&] { return acked_count() > n2 + 200; }));
  // A power loss while other brokers are fetching from the victim's logs: its files are cut
  // under their mappings (which must keep working), then it restarts and catches up.
  // The victim is read from the same image that showed every ISR full: a later image may
  // be mid-election and have no leader for partition 1.
  broker_id victim = metadata::no_leader;
  REQUIRE(wait_until([&] {
    auto img = c.image();
    for (int p = 0; p < 3; ++p)
      if (img->partition("t", partition_id(p))->isr.size() != 3) return false;
    victim = img->partition("t", partition_id{1})->leader;
    return victim != metadata::no_leader;
  }));
  REQUIRE(crash_broker(c, disks, victim, crash_mode::random_byte, 42));
  REQUIRE(wait_until([&] { return c.image()->partition("t", partition_id{1})->leader != victim; }));
  REQUIRE(c.restart_broker(victim));
  const auto n3 = acked_count();
  REQUIRE(wait_until([&] { return acked_count() > n3 + 200; }));
  stop = true;
  p1.join();
  p2.join();
  REQUIRE(flush_errors == 0);

  // Converge: every ISR full, all replicas at the leader's end and high watermark.
  REQUIRE(wait_until([&] {
    auto img = c.image();
    for (int p = 0; p < 3; ++p) {
      const auto& ps = *img->partition("t", partition_id(p));
      if (!ps.has_leader() || ps.isr.size() != 3) return false;
      auto leader = c.broker(ps.leader);
      if (!leader) return false;
      const auto end = leader->replica("t", partition_id(p))->log_end_offset();
      for (broker_id id : {broker_id{1}, broker_id{2}, broker_id{3}}) {
        auto b = c.broker(id);
        if (!b || b->replica("t", partition_id(p))->log_end_offset() != end ||
            b->replica("t", partition_id(p))->high_watermark() != end)
          return false;
      }
    }
    return true;
  }));
  c.stop();

  std::map<std::string, std::pair<int, std::int64_t>> found;
  for (int p = 0; p < 3; ++p) {
    const auto leader = c.image()->partition("t", partition_id(p))->leader;
    auto recs = brook::test::read_all(c.broker(leader)->replica("t", partition_id(p))->part()->log());
    for (const auto& r : recs) REQUIRE(found.emplace(r.value, std::pair{p, r.offset}).second);  // no duplicates
    for (broker_id id : {broker_id{1}, broker_id{2}, broker_id{3}})
      CHECK(brook::test::read_all(c.broker(id)->replica("t", partition_id(p))->part()->log()) == recs);
  }
  std::size_t lost = 0;
  for (const auto& [v, where] : acked) {
    auto it = found.find(v);
    if (it == found.end() || it->second != where) ++lost;
  }
  INFO("acknowledged " << acked.size() << ", failed " << failed.load());
  CHECK(lost == 0);
  CHECK(acked.size() > 900);
}

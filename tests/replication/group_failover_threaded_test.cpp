// Groups on a cluster through failover: for each seed, a 3-broker cluster runs on its threads
// (system clock, a 1.5 s broker session timeout), with a 3-partition RF=3 topic and
// __consumer_offsets replicated the same way (min.insync.replicas 2). A group coordinator runs
// on the cluster (cluster_backend) and one group member consumes and commits while a seeded
// schedule stops brokers cleanly, kills them (testing::crash_mode::process) and restarts them, never
// more than one down at a time. Every round produces a batch with acks=all, polls, and
// commits.
//
// The checker:
//   1. every acknowledged record is consumed at least once by the group;
//   2. after the last round (every broker back and in sync), a coordinator that replays the cluster from
//      scratch finds, per partition, a committed offset at least the last one acknowledged
//      to the member and one that the member did commit (never an offset nobody committed);
//   3. the running coordinator's committed offsets are ones the member committed, and at
//      least the last acknowledged ones. (They may differ from the replayed ones: a commit
//      that failed, e.g. timed out, can still have reached the log, as in Kafka.)
//
// BROOK_SCENARIO_SEEDS overrides the number of seeds (default 2); BROOK_SCENARIO_SEED runs
// one; BROOK_SEED_BASE shifts them (support/seeds.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <future>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <brook/client/producer.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/replication/cluster.hpp>
#include <brook/testing/crash.hpp>

#include "support/checks.hpp"
#include "support/crash_helpers.hpp"
#include "support/replication_helpers.hpp"
#include "support/seeds.hpp"

using namespace brook;
using namespace std::chrono_literals;

namespace {

constexpr int partitions = 3;
constexpr int rounds = 6;
const std::string topic = "orders";

std::unique_ptr<cluster> open_cluster(const std::filesystem::path& root, brook::testing::broker_disks& disks) {
  cluster_config cfg;
  cfg.broker.min_insync_replicas = 2;
  cfg.controller.broker_session_timeout = 1500ms;
  cfg.broker_heartbeat_interval = 300ms;
  cfg.controller.seed = 7;
  cfg.broker_files = disks.hook();
  auto c = cluster::open(root, cfg);
  REQUIRE_OK(c);
  return std::move(*c);
}

/// Waits (up to 60 s, woken by the cluster's notifier) until every partition has a leader and
/// all its replicas in the ISR: a restarted broker has caught up.
bool wait_in_sync(cluster& c) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    const auto seen = c.data_notifier().sequence();
    bool all = true;
    for (const auto& v : c.describe())
      all = all && v.state.has_leader() && v.state.isr.size() == v.state.replicas.size();
    if (all) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    c.data_notifier().wait(seen, deadline);
  }
}

/// Produces `n` records with acks=all; returns the values acknowledged.
std::vector<std::string> produce(cluster& c, int round, int n) {
  cluster_target target(c);
  producer_config pc;
  pc.acks = acks_mode::all;
  pc.request_timeout = 5s;
  producer prod(target, pc);
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) values.push_back(fmt::format("r{}-{}", round, i));
  std::vector<std::future<result<record_metadata>>> acks;
  for (int i = 0; i < n; ++i)
    acks.push_back(prod.send(producer_record{topic,
                                             partition_id(i % partitions),
                                             values[static_cast<std::size_t>(i)],
                                             values[static_cast<std::size_t>(i)],
                                             {},
                                             std::nullopt}));
  (void)prod.flush();
  std::vector<std::string> acked;
  for (int i = 0; i < n; ++i)
    if (acks[static_cast<std::size_t>(i)].get()) acked.push_back(values[static_cast<std::size_t>(i)]);
  return acked;
}

/// Polls `member` until it has consumed every acknowledged record, or until `deadline`.
void consume_until(group_consumer& member, std::set<std::string>& consumed, const std::set<std::string>& acked,
                   std::chrono::steady_clock::time_point deadline) {
  while (!std::includes(consumed.begin(), consumed.end(), acked.begin(), acked.end()) &&
         std::chrono::steady_clock::now() < deadline) {
    auto r = member.poll(100ms);
    REQUIRE_OK(r);
    for (const auto& rec : *r) consumed.insert(rec.value().to_string());
  }
}

void run_seed(std::uint64_t seed) {
  INFO("seed " << seed << " (replay: " << brook::test::seed_base_hint() << "BROOK_SCENARIO_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  brook::test::scratch_dir dir("brook-group-failover");
  brook::testing::broker_disks disks;
  auto c = open_cluster(dir.path(), disks);
  REQUIRE_OK(c->create_topic(topic, partitions, 3));
  c->start();
  cluster_backend backend(*c);
  coordinator_config cc;
  cc.group_initial_rebalance_delay = 0ms;
  cc.offsets_topic_num_partitions = 1;
  auto coord = group_coordinator::open(backend, cc);
  REQUIRE_OK(coord);
  (*coord)->start();

  std::set<std::string> acked, consumed;
  // Per partition: the offsets the member committed (acknowledged or not) and the last one
  // acknowledged.
  std::map<topic_partition, std::set<std::int64_t>> attempted;
  std::map<topic_partition, std::int64_t> last_acked;
  std::optional<broker_id> down;
  int faults = 0, failed_commits = 0;
  {
    group_consumer_config gc;
    gc.group_id = "g";
    gc.enable_auto_commit = false;
    gc.consumer.auto_offset_reset = offset_reset::earliest;
    gc.consumer.fetch_max_wait = 20ms;
    group_consumer member(**coord, gc);
    REQUIRE_OK(member.subscribe({topic}));
    for (int round = 0; round < rounds; ++round) {
      // A fault, or a restart of the broker that is down.
      const auto roll = rng() % 4;
      if (down) {
        REQUIRE_OK(c->restart_broker(*down));
        down.reset();
      } else if (roll < 3) {
        const broker_id victim(static_cast<std::int32_t>(1 + rng() % 3));
        if (roll == 0)
          REQUIRE_OK(c->stop_broker(victim));
        else
          REQUIRE_OK(brook::testing::crash_broker(*c, disks, victim, brook::testing::crash_mode::process));
        down = victim;
        ++faults;
      }
      for (const auto& v : produce(*c, round, 12)) acked.insert(v);
      // Poll until the group has every acknowledged record (or for 2 s: leaderships may be
      // moving), then commit the positions.
      consume_until(member, consumed, acked, std::chrono::steady_clock::now() + 2s);
      std::map<topic_partition, offset_and_metadata> positions;
      for (const auto& tp : member.assignment())
        if (auto p = member.position(tp)) positions[tp] = offset_and_metadata{*p, -1, {}};
      for (const auto& [tp, om] : positions) attempted[tp].insert(om.off.value());
      if (auto r = member.commit_sync(positions); r) {
        for (const auto& [tp, om] : positions) last_acked[tp] = om.off.value();
      } else {
        ++failed_commits;
        CHECK((r.error() == errc::coordinator_not_available || r.error() == errc::not_coordinator ||
               r.error() == errc::request_timed_out || r.error() == errc::rebalance_in_progress));
      }
    }
    if (down) REQUIRE_OK(c->restart_broker(*down));
    // Drain: every acknowledged record reaches the group once every broker is back.
    consume_until(member, consumed, acked, std::chrono::steady_clock::now() + 60s);
    (*coord)->stop();
  }
  INFO(faults << " faults, " << acked.size() << " records acknowledged, " << failed_commits << " commits failed");
  std::vector<std::string> missing;
  std::set_difference(acked.begin(), acked.end(), consumed.begin(), consumed.end(), std::back_inserter(missing));
  CHECK(missing.empty());

  const auto live = (*coord)->fetch_offsets("g");
  // Every broker is back; once they are all in sync, a coordinator replaying the cluster can
  // write again (its open stores each group's metadata, which needs min.insync.replicas).
  REQUIRE(wait_in_sync(*c));
  auto replayed = group_coordinator::open(backend, cc);
  REQUIRE_OK(replayed);
  const auto stored = (*replayed)->fetch_offsets("g");
  for (const auto& [tp, off] : last_acked) {
    INFO(tp.topic << "-" << tp.partition.value() << ": last acknowledged commit " << off);
    REQUIRE(stored.count(tp) == 1);
    REQUIRE(live.count(tp) == 1);
    CHECK(stored.at(tp).off.value() >= off);
    CHECK(attempted[tp].count(stored.at(tp).off.value()) == 1);
    CHECK(live.at(tp).off.value() >= off);
    CHECK(attempted[tp].count(live.at(tp).off.value()) == 1);
  }
  c->stop();
  REQUIRE_OK(c->close());
}

}  // namespace

TEST_CASE("a group on a 3-broker cluster loses no acknowledged commit or record through failovers") {
  if (auto one = brook::test::env_int("BROOK_SCENARIO_SEED")) {
    run_seed(static_cast<std::uint64_t>(*one));
    return;
  }
  const int n = static_cast<int>(brook::test::env_int("BROOK_SCENARIO_SEEDS").value_or(2));
  for (int s = 1; s <= n; ++s) run_seed(brook::test::seed_base() + static_cast<std::uint64_t>(s));
}

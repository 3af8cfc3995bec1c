// controller: registration, heartbeats and fencing, topic placement, AlterPartition and
// elections, driven directly (no brokers) on a manual clock. Every refused request must leave
// the metadata log untouched, so most error checks also compare its end offset.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/core/clock.hpp>
#include <brook/replication/controller.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/replication_helpers.hpp"

using namespace brook;
using brook::testing::manual_clock;

// The call must fail with `code`.
#define REQUIRE_ERR(expr, code)                    \
  do {                                             \
    auto _r = (expr);                              \
    REQUIRE_FALSE(_r.has_value());                 \
    INFO(#expr << ": " << _r.error().to_string()); \
    CHECK(_r.error() == (code));                   \
  } while (0)

namespace {

using brook::test::ids;

struct fixture {
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>(1'000'000);
  brook::test::scratch_dir dir{"brook-controller"};
  controller_config cfg;
  std::unique_ptr<controller> c;
  std::map<std::int32_t, std::int64_t> epochs;

  explicit fixture(bool unclean = false) {
    cfg.clock = clk;
    cfg.seed = 7;
    cfg.unclean_leader_election_enable = unclean;
    c = open();
  }

  std::unique_ptr<controller> open() {
    auto r = controller::open(dir.path(), cfg);
    REQUIRE(r);
    return std::move(*r);
  }

  /// Registers and unfences each broker.
  void join(std::initializer_list<std::int32_t> brokers) {
    for (auto id : brokers) {
      auto e = c->register_broker(broker_id(id));
      REQUIRE(e);
      epochs[id] = *e;
      REQUIRE_OK(c->heartbeat(broker_id(id), *e));
    }
  }

  void beat(std::int32_t id) { REQUIRE_OK(c->heartbeat(broker_id(id), epochs.at(id))); }

  /// A copy: the image it came from may be replaced by the next call.
  partition_state state(const std::string& t, std::int32_t p) const {
    auto img = c->image();
    const auto* s = img->partition(t, partition_id(p));
    REQUIRE(s != nullptr);
    return *s;
  }
  bool fenced(std::int32_t id) const {
    auto img = c->image();
    const auto* b = img->broker(broker_id(id));
    REQUIRE(b != nullptr);
    return b->fenced;
  }
  offset end() const { return c->log().end_offset(); }

  result<partition_state> alter(const std::string& t, std::int32_t p, std::int32_t leader, ids isr) {
    auto s = state(t, p);
    return c->alter_partition(t, partition_id(p), broker_id(leader), s.leader_epoch, s.partition_epoch, std::move(isr));
  }
};

}  // namespace

// ------------------------------------------------------------------ brokers

TEST_CASE("a registered broker is fenced until a heartbeat carries its registered epoch", "[replication][controller]") {
  fixture f;
  const offset before = f.end();
  auto e = f.c->register_broker(broker_id{1});
  REQUIRE(e);
  CHECK(*e == before.value());  // the offset of its registration record, as KRaft
  CHECK(f.fenced(1));
  CHECK(f.c->image()->alive_brokers().empty());
  REQUIRE_ERR(f.c->create_topic("t", 1, 1), errc::invalid_replication_factor);  // nobody may lead yet

  REQUIRE_ERR(f.c->heartbeat(broker_id{1}, *e + 1), errc::stale_broker_epoch);
  REQUIRE_ERR(f.c->heartbeat(broker_id{1}, *e - 1), errc::stale_broker_epoch);
  CHECK(f.fenced(1));
  REQUIRE_ERR(f.c->heartbeat(broker_id{9}, 0), errc::broker_not_available);
  REQUIRE_ERR(f.c->fence_broker(broker_id{9}), errc::broker_not_available);
  REQUIRE_ERR(f.c->register_broker(broker_id{-1}), errc::invalid_argument);
  CHECK(f.c->image()->broker(broker_id{9}) == nullptr);

  REQUIRE_OK(f.c->heartbeat(broker_id{1}, *e));
  CHECK_FALSE(f.fenced(1));
  CHECK(f.c->image()->alive_brokers() == ids{1});
  const offset unfenced = f.end();
  REQUIRE_OK(f.c->heartbeat(broker_id{1}, *e));  // keeps the session, writes nothing
  CHECK(f.end() == unfenced);

  REQUIRE_OK(f.c->fence_broker(broker_id{1}));
  CHECK(f.fenced(1));
  const offset fenced_at = f.end();
  REQUIRE_OK(f.c->fence_broker(broker_id{1}));  // already fenced: a no-op
  CHECK(f.end() == fenced_at);
  REQUIRE_OK(f.c->heartbeat(broker_id{1}, *e));  // the same incarnation comes back
  CHECK_FALSE(f.fenced(1));

  // A restart registers again: a newer epoch, fenced, and the old incarnation is stale.
  auto e2 = f.c->register_broker(broker_id{1});
  REQUIRE(e2);
  CHECK(*e2 > *e);
  CHECK(f.fenced(1));
  REQUIRE_ERR(f.c->heartbeat(broker_id{1}, *e), errc::stale_broker_epoch);
  REQUIRE_OK(f.c->heartbeat(broker_id{1}, *e2));
  CHECK_FALSE(f.fenced(1));
}

TEST_CASE("re-registering a live broker fences its old incarnation first and moves its leaderships",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2});
  REQUIRE_OK(f.c->create_topic("t", 1, 2));
  CHECK(f.state("t", 0).leader == broker_id{1});
  auto e2 = f.c->register_broker(broker_id{1});
  REQUIRE(e2);
  auto s = f.state("t", 0);
  CHECK(s.leader == broker_id{2});
  CHECK(s.isr == ids{2});
  CHECK(s.leader_epoch == leader_epoch{1});
  CHECK(f.fenced(1));
  REQUIRE_ERR(f.c->heartbeat(broker_id{1}, f.epochs[1]), errc::stale_broker_epoch);
}

TEST_CASE("tick fences a broker once broker.session.timeout.ms has passed without a heartbeat, not before",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2});  // both heartbeat at t0
  f.clk->advance(5000);
  f.beat(2);             // t0 + 5000
  f.clk->advance(4000);  // t0 + 9000: broker 1 is exactly at the timeout
  auto t = f.c->tick();
  REQUIRE(t);
  CHECK(t->empty());
  CHECK_FALSE(f.fenced(1));
  f.clk->advance(1);  // one millisecond past it
  t = f.c->tick();
  REQUIRE(t);
  CHECK(*t == ids{1});
  CHECK(f.fenced(1));
  CHECK_FALSE(f.fenced(2));
  t = f.c->tick();  // a fenced broker is not fenced twice
  REQUIRE(t);
  CHECK(t->empty());

  f.beat(1);  // back: unfenced, with a fresh session
  CHECK_FALSE(f.fenced(1));
  f.clk->advance(5000);  // broker 2: 9001 ms since its heartbeat, broker 1: 5000
  t = f.c->tick();
  REQUIRE(t);
  CHECK(*t == ids{2});
  CHECK_FALSE(f.fenced(1));
}

TEST_CASE("broker.session.timeout.ms comes from the config", "[replication][controller]") {
  fixture f;
  REQUIRE_OK(f.c->close());
  f.c.reset();
  f.cfg.broker_session_timeout = std::chrono::milliseconds(100);
  f.c = f.open();
  f.join({1});
  f.clk->advance(100);
  CHECK(f.c->tick()->empty());
  f.clk->advance(1);
  CHECK(*f.c->tick() == ids{1});
}

TEST_CASE("fencing drops a broker from every ISR but the last member, and moves the partitions it led",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 3, 3));
  CHECK(f.state("t", 0).replicas == ids{1, 2, 3});
  CHECK(f.state("t", 1).replicas == ids{2, 3, 1});
  CHECK(f.state("t", 2).replicas == ids{3, 1, 2});

  REQUIRE_OK(f.c->fence_broker(broker_id{1}));
  auto p0 = f.state("t", 0), p1 = f.state("t", 1), p2 = f.state("t", 2);
  CHECK(p0.leader == broker_id{2});  // the first unfenced ISR member in replica order (no probe)
  CHECK(p0.isr == ids{2, 3});
  CHECK(p0.leader_epoch == leader_epoch{1});
  CHECK(p0.partition_epoch == 1);
  CHECK(p1.leader == broker_id{2});  // not led by 1: the ISR shrinks, the leader epoch stays
  CHECK(p1.isr == ids{2, 3});
  CHECK(p1.leader_epoch == leader_epoch{0});
  CHECK(p1.partition_epoch == 1);
  CHECK(p2.leader == broker_id{3});
  CHECK(p2.isr == ids{3, 2});
  CHECK(p2.leader_epoch == leader_epoch{0});

  REQUIRE_OK(f.c->fence_broker(broker_id{2}));
  for (int p = 0; p < 3; ++p) {
    CHECK(f.state("t", p).leader == broker_id{3});
    CHECK(f.state("t", p).isr == ids{3});
  }

  // The last ISR member is fenced: it stays in the ISR (KRaft), the partition goes offline.
  REQUIRE_OK(f.c->fence_broker(broker_id{3}));
  for (int p = 0; p < 3; ++p) {
    auto s = f.state("t", p);
    CHECK(s.leader == metadata::no_leader);
    CHECK(s.offline());
    CHECK(s.isr == ids{3});
  }
  CHECK(f.c->image()->offline_partitions().size() == 3);
  CHECK(f.state("t", 0).leader_epoch == leader_epoch{3});

  // A returning replica outside the ISR cannot lead (no unclean election).
  f.beat(1);
  CHECK(f.c->image()->offline_partitions().size() == 3);

  // The ISR member returns: every partition is elected again, in a new leader epoch.
  f.beat(3);
  CHECK(f.c->image()->offline_partitions().empty());
  for (int p = 0; p < 3; ++p) {
    auto s = f.state("t", p);
    CHECK(s.leader == broker_id{3});
    CHECK(s.isr == ids{3});
    CHECK(s.leader_recovery_state == 0);
  }
  CHECK(f.state("t", 0).leader_epoch == leader_epoch{4});
}

TEST_CASE("the log end probe picks the live ISR member with the highest log end, ties in replica order",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 3, 3));  // p0 [1,2,3], p1 [2,3,1], p2 [3,1,2]
  std::map<std::int32_t, std::int64_t> leo;
  std::vector<std::int32_t> asked;
  f.c->set_log_end_probe([&](broker_id id, const std::string& topic, partition_id) -> std::optional<offset> {
    CHECK(topic == "t");
    asked.push_back(id.value());
    auto it = leo.find(id.value());
    if (it == leo.end()) return std::nullopt;
    return offset(it->second);
  });

  SECTION("the highest log end wins over replica order") {
    leo = {{1, 10}, {2, 5}, {3, 8}};
    REQUIRE_OK(f.c->fence_broker(broker_id{1}));
    CHECK(f.state("t", 0).leader == broker_id{3});
    CHECK(f.state("t", 0).isr == ids{2, 3});
    // Only live ISR members are candidates.
    CHECK(std::find(asked.begin(), asked.end(), 1) == asked.end());
  }
  SECTION("a tie goes to the earlier replica, not the lower broker id") {
    leo = {{1, 7}, {2, 7}, {3, 7}};
    REQUIRE_OK(f.c->fence_broker(broker_id{2}));
    CHECK(f.state("t", 1).leader == broker_id{3});  // replicas [2,3,1]: 3 comes before 1
    CHECK(f.state("t", 0).leader == broker_id{1});  // not led by 2: unchanged
  }
  SECTION("a known log end beats an unknown one") {
    leo = {{1, 4}};
    REQUIRE_OK(f.c->fence_broker(broker_id{2}));
    CHECK(f.state("t", 1).leader == broker_id{1});
  }
  SECTION("without any answer, replica order") {
    REQUIRE_OK(f.c->fence_broker(broker_id{2}));
    CHECK(f.state("t", 1).leader == broker_id{3});
    CHECK_FALSE(asked.empty());
  }
}

// ------------------------------------------------------------------ topics

TEST_CASE("create_topic refuses bad requests with Kafka's errors and writes nothing", "[replication][controller]") {
  fixture f;
  f.join({1, 2});
  REQUIRE(f.c->register_broker(broker_id{3}));  // registered but fenced: not counted
  const offset end0 = f.end();

  REQUIRE_ERR(f.c->create_topic("t", 1, 3), errc::invalid_replication_factor);
  REQUIRE_ERR(f.c->create_topic("t", 1, 0), errc::invalid_replication_factor);
  REQUIRE_ERR(f.c->create_topic("t", 1, -1), errc::invalid_replication_factor);
  REQUIRE_ERR(f.c->create_topic("t", 0, 1), errc::invalid_partitions);
  REQUIRE_ERR(f.c->create_topic("t", -3, 1), errc::invalid_partitions);
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "..", "a/b", "sp ace", "t\xC3\xBC", std::string(250, 'x')})
    REQUIRE_ERR(f.c->create_topic(bad, 1, 1), errc::invalid_topic);
  CHECK(f.end() == end0);
  CHECK(f.c->image()->topics().empty());

  REQUIRE_OK(f.c->create_topic(std::string(249, 'x'), 1, 1));
  REQUIRE_OK(f.c->create_topic("t", 4, 2));
  for (int p = 0; p < 4; ++p) {
    auto s = f.state("t", p);
    CHECK(s.replicas.size() == 2);
    CHECK(std::find(s.replicas.begin(), s.replicas.end(), broker_id{3}) == s.replicas.end());  // only unfenced brokers
    CHECK(s.isr == s.replicas);
    CHECK(s.leader == s.replicas.front());
    CHECK(s.leader_epoch == leader_epoch{0});
    CHECK(s.partition_epoch == 0);
  }
  const offset end1 = f.end();
  REQUIRE_ERR(f.c->create_topic("t", 4, 2), errc::topic_already_exists);
  REQUIRE_ERR(f.c->create_topic("t", 1, 9), errc::topic_already_exists);
  REQUIRE_ERR(f.c->create_topic("u", 1, 1, {{"cleanup.policy", "tidy"}}), errc::invalid_config);
  REQUIRE_ERR(f.c->create_topic("u", 1, 1, {{"no.such.config", "1"}}), errc::invalid_config);
  CHECK(f.end() == end1);
}

TEST_CASE("create_topic writes a ConfigRecord per override, after the topic, before its partitions",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2});
  const offset end0 = f.end();
  std::vector<metadata::record_type> written;
  f.c->log().watch([&](const auto&, const std::vector<metadata::metadata_record>& recs) {
    for (const auto& r : recs) written.push_back(metadata::type_of(r));
  });
  REQUIRE_OK(f.c->create_topic("t", 2, 2, {{"cleanup.policy", "compact"}, {"segment.bytes", "1048576"}}));
  using rt = metadata::record_type;
  CHECK(written == std::vector<rt>{rt::topic, rt::config, rt::config, rt::partition, rt::partition});
  CHECK(f.c->image()->topic_configs("t") ==
        std::map<std::string, std::string>{{"cleanup.policy", "compact"}, {"segment.bytes", "1048576"}});
  CHECK(f.end() == end0 + 5);  // the TopicRecord, 2 ConfigRecords, 2 PartitionRecords
  // Replayed by a reopened controller.
  f.c.reset();
  f.c = f.open();
  CHECK(f.c->image()->topic_configs("t").at("cleanup.policy") == "compact");
}

// ------------------------------------------------------------------ AlterPartition

TEST_CASE("alter_partition refuses stale, foreign and malformed proposals and writes nothing",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 1, 3));  // leader 1, epochs 0, ISR {1,2,3}
  const offset end0 = f.end();

  REQUIRE_ERR(f.c->alter_partition("nope", partition_id{0}, broker_id{1}, leader_epoch{0}, 0, ids{1}),
              errc::unknown_topic_or_partition);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{1}, broker_id{1}, leader_epoch{0}, 0, ids{1}),
              errc::unknown_topic_or_partition);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{-1}, broker_id{1}, leader_epoch{0}, 0, ids{1}),
              errc::unknown_topic_or_partition);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{2}, leader_epoch{0}, 0, ids{2}),
              errc::not_leader_or_follower);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{1}, 0, ids{1}),
              errc::unknown_leader_epoch);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, 1, ids{1}),
              errc::invalid_update_version);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, -1, ids{1}),
              errc::invalid_update_version);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, 0, ids{2, 3}),
              errc::invalid_request);  // without the leader
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, 0, ids{}),
              errc::invalid_request);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, 0, ids{1, 4}),
              errc::invalid_request);  // 4 is no replica
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, 0, ids{1, -1}),
              errc::invalid_request);
  CHECK(f.end() == end0);
  CHECK(f.state("t", 0).isr == ids{1, 2, 3});

  // Success: duplicates collapse, the ISR is kept in replica order, the partition epoch moves.
  auto r = f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, 0, ids{3, 1, 1});
  REQUIRE(r);
  CHECK(r->isr == ids{1, 3});
  CHECK(r->leader == broker_id{1});
  CHECK(r->leader_epoch == leader_epoch{0});
  CHECK(r->partition_epoch == 1);
  CHECK(*r == f.state("t", 0));
  // The proposal that was current a moment ago is stale now.
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{0}, 0, ids{1, 2, 3}),
              errc::invalid_update_version);

  // A fenced broker cannot join the ISR; once it heartbeats again it can.
  REQUIRE_OK(f.c->fence_broker(broker_id{2}));
  CHECK(f.state("t", 0).partition_epoch == 1);  // 2 was neither in the ISR nor the leader
  const offset end1 = f.end();
  REQUIRE_ERR(f.alter("t", 0, 1, {1, 2, 3}), errc::ineligible_replica);
  CHECK(f.end() == end1);
  f.beat(2);
  r = f.alter("t", 0, 1, {1, 2, 3});
  REQUIRE(r);
  CHECK(r->isr == ids{1, 2, 3});
  CHECK(r->partition_epoch == 2);

  // The leadership moves: the old leader is refused, the new one with an old epoch is fenced.
  REQUIRE_OK(f.c->fence_broker(broker_id{1}));
  auto s = f.state("t", 0);
  REQUIRE(s.leader == broker_id{2});
  REQUIRE(s.leader_epoch == leader_epoch{1});
  REQUIRE_ERR(
      f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{1}, s.partition_epoch, ids{1, 2, 3}),
      errc::not_leader_or_follower);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{2}, leader_epoch{0}, s.partition_epoch, ids{2, 3}),
              errc::fenced_leader_epoch);
  REQUIRE_ERR(f.c->alter_partition("t", partition_id{0}, broker_id{2}, leader_epoch{2}, s.partition_epoch, ids{2, 3}),
              errc::unknown_leader_epoch);
  REQUIRE_OK(f.c->alter_partition("t", partition_id{0}, broker_id{2}, leader_epoch{1}, s.partition_epoch, ids{2}));
}

// ------------------------------------------------------------------ elections

TEST_CASE("with unclean.leader.election.enable an out-of-sync live replica leads when the last ISR member is fenced",
          "[replication][controller]") {
  fixture f(/*unclean=*/true);
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  f.c->set_log_end_probe([](broker_id id, const std::string&, partition_id) -> std::optional<offset> {
    return offset(id == broker_id{3} ? 9 : 3);
  });
  REQUIRE_OK(f.alter("t", 0, 1, {1}));  // 2 and 3 fell behind
  // Broker 1 stops heartbeating; 2 and 3 keep theirs.
  f.clk->advance(6000);
  f.beat(2);
  f.beat(3);
  f.clk->advance(3001);
  auto t = f.c->tick();
  REQUIRE(t);
  CHECK(*t == ids{1});
  auto s = f.state("t", 0);
  CHECK(s.leader == broker_id{3});  // the highest log end among the live replicas
  CHECK(s.isr == ids{3});
  CHECK(s.leader_recovery_state == 1);  // RECOVERING
  CHECK(s.leader_epoch == leader_epoch{1});

  // The new leader's first ISR change marks it recovered.
  auto r = f.alter("t", 0, 3, {3, 2});
  REQUIRE(r);
  CHECK(r->isr == ids{2, 3});
  CHECK(r->leader_recovery_state == 0);
}

TEST_CASE("with unclean.leader.election.enable a returning out-of-sync replica leads an offline partition",
          "[replication][controller]") {
  fixture f(/*unclean=*/true);
  f.join({1, 2});
  REQUIRE_OK(f.c->create_topic("t", 1, 2));
  REQUIRE_OK(f.alter("t", 0, 1, {1}));
  REQUIRE_OK(f.c->fence_broker(broker_id{2}));
  REQUIRE_OK(f.c->fence_broker(broker_id{1}));  // nobody left: offline even with unclean elections
  CHECK(f.state("t", 0).offline());
  CHECK(f.state("t", 0).isr == ids{1});
  f.beat(2);
  auto s = f.state("t", 0);
  CHECK(s.leader == broker_id{2});
  CHECK(s.isr == ids{2});
  CHECK(s.leader_recovery_state == 1);
}

TEST_CASE("without unclean election the partition stays offline until an ISR member returns",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  REQUIRE_OK(f.alter("t", 0, 1, {1}));
  REQUIRE_OK(f.c->fence_broker(broker_id{1}));
  auto s = f.state("t", 0);
  CHECK(s.offline());
  CHECK(s.isr == ids{1});
  CHECK(s.leader_recovery_state == 0);
  // Nobody leads, so nobody may change the ISR (-1 is no leader's id).
  const offset end0 = f.end();
  CHECK_FALSE(f.c->alter_partition("t", partition_id{0}, broker_id{-1}, leader_epoch{s.leader_epoch}, s.partition_epoch,
                                   ids{-1}));
  CHECK_FALSE(f.c->alter_partition("t", partition_id{0}, broker_id{-1}, leader_epoch{s.leader_epoch}, s.partition_epoch,
                                   ids{1}));
  REQUIRE_ERR(
      f.c->alter_partition("t", partition_id{0}, broker_id{1}, leader_epoch{s.leader_epoch}, s.partition_epoch, ids{1}),
      errc::not_leader_or_follower);
  CHECK(f.end() == end0);
  f.beat(2);
  CHECK(f.state("t", 0).offline());
  f.beat(1);
  s = f.state("t", 0);
  CHECK(s.leader == broker_id{1});
  CHECK(s.leader_recovery_state == 0);
}

TEST_CASE("elect_leaders preferred: not needed, not available, then moves leadership to the first replica",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 2, 3));  // p0 [1,2,3], p1 [2,3,1]
  const topic_partition p0{"t", partition_id{0}}, p1{"t", partition_id{1}}, gone{"nope", partition_id{0}};

  auto r = f.c->elect_leaders(election_type::preferred);
  REQUIRE(r);
  REQUIRE(r->size() == 2);  // every partition when none is named
  CHECK(r->at(p0).error() == errc::election_not_needed);
  CHECK(r->at(p1).error() == errc::election_not_needed);

  REQUIRE_OK(f.c->fence_broker(broker_id{1}));  // p0 moves to 2; 1 leaves every ISR
  f.beat(1);                                    // back, but not in the ISR yet
  r = f.c->elect_leaders(election_type::preferred, {p0, gone});
  REQUIRE(r);
  CHECK(r->at(p0).error() == errc::preferred_leader_not_available);
  CHECK(r->at(gone).error() == errc::unknown_topic_or_partition);
  CHECK(f.state("t", 0).leader == broker_id{2});

  REQUIRE_OK(f.alter("t", 0, 2, {1, 2, 3}));    // 1 caught up
  REQUIRE_OK(f.c->fence_broker(broker_id{1}));  // fenced while in the ISR: it leaves it again
  f.beat(1);
  r = f.c->elect_leaders(election_type::preferred, {p0});
  REQUIRE(r);
  CHECK(r->at(p0).error() == errc::preferred_leader_not_available);

  REQUIRE_OK(f.alter("t", 0, 2, {1, 2, 3}));
  const auto before = f.state("t", 0);
  r = f.c->elect_leaders(election_type::preferred, {p0});
  REQUIRE(r);
  CHECK(r->at(p0).has_value());
  auto s = f.state("t", 0);
  CHECK(s.leader == broker_id{1});
  CHECK(s.has_preferred_leader());
  CHECK(s.leader_epoch == before.leader_epoch + 1);
  CHECK(s.isr == ids{1, 2, 3});
}

TEST_CASE("elect_leaders unclean: not needed, no eligible leader, then ISR = the new leader",
          "[replication][controller]") {
  fixture f;
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  REQUIRE_OK(f.c->create_topic("u", 1, 1));  // led by 1
  const topic_partition t0{"t", partition_id{0}}, u0{"u", partition_id{0}};

  auto r = f.c->elect_leaders(election_type::unclean, {t0});
  REQUIRE(r);
  CHECK(r->at(t0).error() == errc::election_not_needed);

  REQUIRE_OK(f.alter("t", 0, 1, {1}));
  REQUIRE_OK(f.c->fence_broker(broker_id{2}));
  REQUIRE_OK(f.c->fence_broker(broker_id{3}));
  REQUIRE_OK(f.c->fence_broker(broker_id{1}));
  CHECK(f.state("t", 0).offline());
  const offset end0 = f.end();
  r = f.c->elect_leaders(election_type::unclean);
  REQUIRE(r);
  CHECK(r->at(t0).error() == errc::eligible_leaders_not_available);
  CHECK(r->at(u0).error() == errc::eligible_leaders_not_available);
  CHECK(f.end() == end0);

  f.beat(3);  // not in the ISR: no clean election
  CHECK(f.state("t", 0).offline());
  r = f.c->elect_leaders(election_type::unclean, {t0});
  REQUIRE(r);
  CHECK(r->at(t0).has_value());
  auto s = f.state("t", 0);
  CHECK(s.leader == broker_id{3});
  CHECK(s.isr == ids{3});
  CHECK(s.leader_recovery_state == 1);
  r = f.c->elect_leaders(election_type::unclean, {t0});
  REQUIRE(r);
  CHECK(r->at(t0).error() == errc::election_not_needed);
  // The next ISR change marks the leader recovered.
  auto a = f.alter("t", 0, 3, {3});
  REQUIRE(a);
  CHECK(a->leader_recovery_state == 0);
}

// ------------------------------------------------------------------ durability

TEST_CASE("a reopened controller replays the same image and restarts broker sessions", "[replication][controller]") {
  fixture f;
  f.join({1, 2, 3});
  REQUIRE_OK(f.c->create_topic("t", 3, 3));
  REQUIRE_OK(f.c->create_topic("u", 1, 2));
  REQUIRE_OK(f.alter("t", 0, 1, {1, 2}));
  REQUIRE_OK(f.c->fence_broker(broker_id{3}));
  const cluster_image before = *f.c->image();
  const offset end0 = f.end();
  REQUIRE_OK(f.c->close());
  f.c.reset();

  f.c = f.open();
  CHECK(*f.c->image() == before);
  CHECK(f.end() == end0);
  // The same directory cannot be opened twice.
  auto second = controller::open(f.dir.path(), f.cfg);
  REQUIRE_FALSE(second);
  CHECK(second.error() == errc::log_dir_locked);

  // Sessions restart at the first tick, not at the last heartbeat of the previous life.
  f.clk->advance(60'000);
  auto t = f.c->tick();
  REQUIRE(t);
  CHECK(t->empty());
  f.clk->advance(5000);
  f.beat(1);             // the registered epochs survive
  f.clk->advance(4001);  // 9001 ms since the sessions restarted
  t = f.c->tick();
  REQUIRE(t);
  CHECK(*t == ids{2});
  CHECK_FALSE(f.fenced(1));
  REQUIRE_ERR(f.c->heartbeat(broker_id{3}, f.epochs[3] + 100), errc::stale_broker_epoch);
  f.beat(3);
  CHECK_FALSE(f.fenced(3));
}

TEST_CASE("a closed controller refuses changes", "[replication][controller]") {
  fixture f;
  f.join({1});
  REQUIRE_OK(f.c->close());
  REQUIRE_OK(f.c->close());  // twice is fine
  REQUIRE_ERR(f.c->register_broker(broker_id{2}), errc::closed);
  REQUIRE_ERR(f.c->create_topic("t", 1, 1), errc::closed);
  REQUIRE_ERR(f.c->fence_broker(broker_id{1}), errc::closed);
  CHECK(f.c->image()->topics().empty());
}

// Regression (found by this test, fixed): with a fixed controller_config::seed the topic-id engine
// restarts from the same state on every open, so a reopened controller that makes the same
// number of draws (brokers registering again after a restart) draws the id of a topic it
// already has, and the TopicRecord is refused: create_topic fails with invalid_request.
TEST_CASE("a reopened controller with a fixed seed gives a new topic a fresh id", "[replication][controller]") {
  fixture f;
  f.join({1, 2});
  REQUIRE_OK(f.c->create_topic("a", 1, 2));
  REQUIRE_OK(f.c->close());
  f.c.reset();
  f.c = f.open();
  f.join({1, 2});  // a restarted cluster's brokers register again
  auto r = f.c->create_topic("b", 1, 2);
  if (!r) FAIL_CHECK("create_topic after reopen: " << r.error().to_string());
  REQUIRE(f.c->image()->topic("b") != nullptr);
  CHECK(f.c->image()->topic("b")->id != f.c->image()->topic("a")->id);
}

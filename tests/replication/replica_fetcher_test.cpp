// replica_fetcher: one follower broker's fetch rounds against a leader broker, stepped by hand.
// Images are built from metadata records (no controller); connectivity is a map the test
// controls. Covers the log start restart (truncateFullyAndStartAt), unreachable and stale
// leaders, the per-partition and per-round byte budgets, and log start propagation.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <brook/core/clock.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/replication/replica_fetcher.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/log_builders.hpp"
#include "support/replication_helpers.hpp"

using namespace brook;
using brook::testing::manual_clock;

namespace {

using brook::test::ids;
using brook::test::image_builder;
namespace fs = std::filesystem;

/// One batch of `n` records with values "<tag>-<i>" padded to `value_size`.
std::vector<std::byte> batch_of(int n, timestamp_ms ts, const std::string& tag = "v", std::size_t value_size = 0) {
  record_batch_builder rb;
  for (int i = 0; i < n; ++i) {
    std::string v = fmt::format("{}-{}", tag, i);
    if (v.size() < value_size) v.resize(value_size, 'x');
    rb.append(ts + i, fmt::format("k{}", i), v);
  }
  auto s = rb.finish();
  return {s.begin(), s.end()};
}

/// Every byte of a replica's log from its start to its end.
std::vector<std::byte> log_bytes(const partition_replica& r, offset from = offset(-1)) {
  return brook::test::log_bytes(r.part()->log(), from);
}

struct fixture {
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>(1'000'000);
  brook::test::scratch_dir root{"brook-fetcher"};
  std::map<std::int32_t, std::shared_ptr<broker>> b;
  std::set<std::int32_t> down;  // brokers the fetcher cannot reach
  std::uint64_t version = 0;
  std::vector<std::pair<std::int32_t, std::int32_t>> connects;

  std::shared_ptr<broker> open(std::int32_t id) {
    broker_config c;
    c.id = broker_id(id);
    c.dir.defaults.clock = clk;
    auto r = broker::open(root.path() / fmt::format("broker-{}", id), c);
    if (!r) FAIL("broker::open " << id << ": " << r.error().to_string());
    b[id] = std::shared_ptr<broker>(std::move(*r));
    return b[id];
  }
  void apply(const cluster_image& img) {
    ++version;
    for (auto& [id, br] : b) REQUIRE_OK(br->apply(img, version));
  }
  replica_fetcher::connect_fn connector() {
    return [this](broker_id from, broker_id to) -> result<std::shared_ptr<broker>> {
      connects.emplace_back(from.value(), to.value());
      auto it = b.find(to.value());
      if (it == b.end() || down.count(to.value()))
        return make_error(errc::broker_not_available, "broker {} is not reachable from {}", to, from);
      return it->second;
    };
  }
  append_result produce(std::int32_t id, const std::string& t, std::int32_t p, int n, std::size_t value_size = 0) {
    auto batch = batch_of(n, clk->now_ms(), "v", value_size);
    std::optional<result<append_result>> out;
    b.at(id)->produce(t, partition_id(p), batch, acks_mode::leader, std::chrono::milliseconds(30000),
                      [&](const result<append_result>& r) { out = r; });
    REQUIRE(out);
    if (!*out) FAIL("produce: " << out->error().to_string());
    return **out;
  }
  std::shared_ptr<partition_replica> rep(std::int32_t id, const std::string& t, std::int32_t p) {
    auto r = b.at(id)->replica(t, partition_id(p));
    REQUIRE(r);
    return r;
  }
};

}  // namespace

TEST_CASE("a follower behind the leader's log start restarts its log there and catches up",
          "[replication][replica_fetcher]") {
  fixture f;
  f.open(1);
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  replica_fetcher fetcher(b2, f.connector());
  auto leader = f.rep(1, "t", 0);
  auto follower = f.rep(2, "t", 0);

  const std::size_t batch = f.produce(1, "t", 0, 5).bytes;  // every batch here has this size
  auto r = fetcher.step();                                  // truncation (nothing to cut), then 0..4
  CHECK(r.truncations == 1);
  CHECK(r.fetches == 1);
  CHECK(r.errors == 0);
  CHECK(follower->log_end_offset() == offset(5));
  CHECK(follower->latest_epoch() == leader_epoch(0));

  // The follower is cut off while the leader goes on and retention moves its log start to 15.
  f.down.insert(1);
  for (int i = 0; i < 3; ++i) f.produce(1, "t", 0, 5);
  REQUIRE_OK(leader->part()->log().delete_records_before(offset(15)));
  f.down.clear();

  r = fetcher.step();  // fetch from 5: out of range, so the log restarts at 15
  CHECK(r.errors == 0);
  CHECK(r.fetches == 0);
  CHECK(r.bytes == 0);
  CHECK(follower->log_start_offset() == offset(15));
  CHECK(follower->log_end_offset() == offset(15));
  CHECK(follower->high_watermark() == offset(15));
  CHECK_FALSE(follower->latest_epoch().has_value());  // no epochs: they described the records dropped

  r = fetcher.step();
  CHECK(r.errors == 0);
  CHECK(r.fetches == 1);
  CHECK(r.bytes > 0);
  CHECK(follower->log_end_offset() == offset(20));
  CHECK(log_bytes(*follower) == log_bytes(*leader, offset(15)));
  CHECK(follower->latest_epoch() == leader_epoch(0));
  r = fetcher.step();  // caught up: the leader learns it, the HW reaches the follower next time
  CHECK(r.bytes == 0);
  CHECK(leader->high_watermark() == offset(20));
  fetcher.step();
  CHECK(follower->high_watermark() == offset(20));
  CHECK(follower->log_start_offset() == offset(15));
  CHECK(fetcher.rounds() == 5);
  CHECK(fetcher.bytes_fetched() == 2 * batch);
}

// Regression (found by this test, fixed): when the leader's log start falls inside a batch (DeleteRecords
// or delete_records_before to an offset that is not a batch boundary), the follower restarts
// its log at that offset, but the leader's read from it returns the whole batch, whose base
// offset is below the follower's log end: append_as_follower refuses it (offset_out_of_range)
// on every round and the follower never catches up. Kafka handles this case in
// Partition.appendRecordsToFollowerOrFutureReplica (UnexpectedAppendOffsetException on an
// empty log: truncateFullyAndStartAt(batch base offset), then append).
TEST_CASE("a follower catches up when the leader's log start falls inside a batch", "[replication][replica_fetcher]") {
  fixture f;
  f.open(1);
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  replica_fetcher fetcher(b2, f.connector());
  auto leader = f.rep(1, "t", 0);
  auto follower = f.rep(2, "t", 0);
  for (int i = 0; i < 4; ++i) f.produce(1, "t", 0, 5);  // batches at 0, 5, 10, 15
  REQUIRE_OK(leader->part()->log().delete_records_before(offset(13)));
  std::size_t errors = 0;
  for (int i = 0; i < 5; ++i) errors += fetcher.step().errors;
  CHECK(errors == 0);
  CHECK(follower->log_end_offset() == offset(20));
}

TEST_CASE("an unreachable leader counts an error and changes nothing", "[replication][replica_fetcher]") {
  fixture f;
  f.open(1);
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  f.produce(1, "t", 0, 5);
  replica_fetcher fetcher(b2, f.connector());
  auto follower = f.rep(2, "t", 0);

  f.down.insert(1);
  auto r = fetcher.step();
  CHECK(r.errors == 1);
  CHECK(r.fetches == 0);
  CHECK(r.truncations == 0);
  CHECK(r.bytes == 0);
  CHECK(f.connects == std::vector<std::pair<std::int32_t, std::int32_t>>{{2, 1}});
  CHECK(follower->log_end_offset() == offset(0));
  REQUIRE(b2->following().size() == 1);
  CHECK(b2->following()[0].needs_truncation);                                     // still to do once the leader is back
  CHECK(f.rep(1, "t", 0)->follower(broker_id{2})->log_end_offset == offset(-1));  // the leader heard nothing
  CHECK(fetcher.rounds() == 1);
  CHECK(fetcher.bytes_fetched() == 0);

  f.down.clear();
  r = fetcher.step();
  CHECK(r.errors == 0);
  CHECK(r.truncations == 1);
  CHECK(follower->log_end_offset() == offset(5));
  CHECK_FALSE(b2->following()[0].needs_truncation);
}

TEST_CASE("an offline partition is skipped without an error", "[replication][replica_fetcher]") {
  fixture f;
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}}).change("t", 0, metadata::no_leader.value());
  f.apply(ib.img);
  REQUIRE(b2->following().size() == 1);
  CHECK(b2->following()[0].leader == broker_id{-1});
  replica_fetcher fetcher(b2, f.connector());
  auto r = fetcher.step();
  CHECK(r.errors == 0);
  CHECK(r.fetches == 0);
  CHECK(f.connects.empty());
}

TEST_CASE("a leader in a newer epoch refuses a follower that has not seen it, and nothing changes",
          "[replication][replica_fetcher]") {
  fixture f;
  auto b1 = f.open(1);
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  replica_fetcher fetcher(b2, f.connector());
  f.produce(1, "t", 0, 5);
  REQUIRE(fetcher.step().fetches == 1);
  f.produce(1, "t", 0, 5);
  // The leader is re-elected (epoch 1); the follower's metadata is late.
  ib.change("t", 0, 1);
  REQUIRE_OK(b1->apply(ib.img, ++f.version));
  auto r = fetcher.step();
  CHECK(r.errors == 1);
  CHECK(r.fetches == 0);
  CHECK(f.rep(2, "t", 0)->log_end_offset() == offset(5));
  // The new epoch reaches the follower: truncation against the leader first, then the fetch.
  REQUIRE_OK(b2->apply(ib.img, f.version));
  CHECK(b2->following()[0].needs_truncation);
  CHECK(f.rep(2, "t", 0)->current_leader_epoch() == leader_epoch(1));
  r = fetcher.step();
  CHECK(r.errors == 0);
  CHECK(r.truncations == 1);
  CHECK(f.rep(2, "t", 0)->log_end_offset() == offset(10));
  CHECK(log_bytes(*f.rep(2, "t", 0)) == log_bytes(*f.rep(1, "t", 0)));
  // A follower whose metadata is ahead of the leader's is refused the other way round.
  ib.change("t", 0, 1);
  REQUIRE_OK(b2->apply(ib.img, ++f.version));
  r = fetcher.step();
  CHECK(r.errors == 1);
  CHECK(r.truncations == 1);  // OffsetsForLeaderEpoch: unknown_leader_epoch
  CHECK(b2->following()[0].needs_truncation);
}

TEST_CASE("replica.fetch.max.bytes bounds each partition and replica.fetch.response.max.bytes each round",
          "[replication][replica_fetcher]") {
  fixture f;
  f.open(1);
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}, {1, 2}});
  f.apply(ib.img);
  std::size_t batch = 0;
  for (int p = 0; p < 2; ++p)
    for (int i = 0; i < 3; ++i) batch = f.produce(1, "t", p, 5, 100).bytes;  // equal-sized batches
  REQUIRE(batch > 500);
  auto p0 = f.rep(2, "t", 0);
  auto p1 = f.rep(2, "t", 1);

  SECTION("a round's budget stops the round once spent") {
    fetcher_config fc;
    fc.response_max_bytes = batch;
    replica_fetcher fetcher(b2, f.connector(), fc);
    auto r = fetcher.step();
    CHECK(r.bytes == batch);
    CHECK(r.fetches == 1);
    CHECK(p0->log_end_offset() == offset(5));
    CHECK(p1->log_end_offset() == offset(0));
  }
  SECTION("the first batch comes whole even when it is larger than the budget") {
    fetcher_config fc;
    fc.response_max_bytes = 1;
    fc.max_bytes = 1;
    replica_fetcher fetcher(b2, f.connector(), fc);
    auto r = fetcher.step();
    CHECK(r.bytes == batch);
    CHECK(r.fetches == 1);
    CHECK(p0->log_end_offset() == offset(5));
  }
  SECTION("each partition gets up to replica.fetch.max.bytes while the round's budget lasts") {
    fetcher_config fc;
    fc.max_bytes = batch + batch / 2;   // one batch per partition
    fc.response_max_bytes = 3 * batch;  // room for both
    replica_fetcher fetcher(b2, f.connector(), fc);
    auto r = fetcher.step();
    CHECK(r.bytes == 2 * batch);
    CHECK(r.fetches == 2);
    CHECK(p0->log_end_offset() == offset(5));
    CHECK(p1->log_end_offset() == offset(5));
    r = fetcher.step();
    CHECK(r.bytes == 2 * batch);
    for (int i = 0; i < 3; ++i) fetcher.step();
    CHECK(p0->log_end_offset() == offset(15));
    CHECK(p1->log_end_offset() == offset(15));
    CHECK(fetcher.bytes_fetched() == 6 * batch);
  }
  SECTION("without limits one round fetches everything") {
    replica_fetcher fetcher(b2, f.connector());
    auto r = fetcher.step();
    CHECK(r.bytes == 6 * batch);
    CHECK(r.fetches == 2);
  }
}

// Kafka parity (found by this test, fixed): the fetcher visited partitions in the same
// (topic, partition) order every round, so when the first partition's backlog fills each
// round's replica.fetch.response.max.bytes, the later ones get nothing until it has caught up;
// under steady load they fall out of the ISR. Kafka's AbstractFetcherThread moves a fetched
// partition to the end of its list (PartitionStates.updateAndMoveToEnd) to avoid this.
TEST_CASE("a partition whose backlog fills the round's budget does not starve the next one",
          "[replication][replica_fetcher]") {
  fixture f;
  f.open(1);
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}, {1, 2}});
  f.apply(ib.img);
  std::size_t batch = f.produce(1, "t", 1, 5, 100).bytes;
  fetcher_config fc;
  fc.response_max_bytes = batch;
  replica_fetcher fetcher(b2, f.connector(), fc);
  for (int round = 0; round < 4; ++round) {
    f.produce(1, "t", 0, 5, 100);  // partition 0 always has a new batch waiting
    fetcher.step();
  }
  CHECK(f.rep(2, "t", 1)->log_end_offset() == offset(5));
}

TEST_CASE("follow_log_start never moves the follower's log start past its high watermark",
          "[replication][replica_fetcher]") {
  fixture f;
  f.open(1);
  auto b2 = f.open(2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  replica_fetcher fetcher(b2, f.connector());
  auto leader = f.rep(1, "t", 0);
  auto follower = f.rep(2, "t", 0);
  f.produce(1, "t", 0, 5);
  f.produce(1, "t", 0, 5);
  fetcher.step();  // the follower has 0..9; the leader's HW is still 0
  CHECK(follower->log_end_offset() == offset(10));
  CHECK(follower->high_watermark() == offset(0));
  // The leader's log start passes its high watermark (as retention can).
  REQUIRE_OK(leader->part()->log().delete_records_before(offset(5)));

  fetcher.step();  // answer: HW 0 (before this fetch moved it), log start 5
  CHECK(follower->high_watermark() == offset(0));
  CHECK(follower->log_start_offset() == offset(0));  // held at the follower's HW
  fetcher.step();                                    // answer: HW 10
  CHECK(follower->high_watermark() == offset(10));
  CHECK(follower->log_start_offset() == offset(5));

  // Called directly: the target is min(leader's log start, own HW), and it never goes back.
  follower->part()->reset_high_watermark(offset(7));
  REQUIRE_OK(follower->follow_log_start(offset(9)));
  CHECK(follower->log_start_offset() == offset(7));
  REQUIRE_OK(follower->follow_log_start(offset(2)));
  CHECK(follower->log_start_offset() == offset(7));
  REQUIRE_OK(follower->follow_log_start(offset(7)));
  CHECK(follower->log_start_offset() == offset(7));
  CHECK(follower->log_end_offset() == offset(10));
  CHECK(log_bytes(*follower) == log_bytes(*leader, offset(5)));  // whole batches: 5..9 still stored
}

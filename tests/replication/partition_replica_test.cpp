// partition_replica: Kafka's per-partition replication state machine, driven by explicit calls
// with a manual clock. Single-threaded and deterministic.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <brook/core/clock.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/replication/partition_replica.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/log_builders.hpp"
#include "support/replication_helpers.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using brook::test::ids;
using brook::test::temp_dir;
using brook::testing::manual_clock;

namespace {

constexpr std::int64_t lag_max = 30000;

struct node {
  std::int32_t id;
  std::unique_ptr<brook::test::scratch_dir> dir;  // tmpfs when available: fsyncs are free
  std::shared_ptr<partition> part;
  std::unique_ptr<partition_replica> rep;
};

log_config small_segments(std::shared_ptr<const brook::clock> c, bool small) {
  log_config cfg;
  cfg.clock = std::move(c);
  if (small) {
    cfg.segment_bytes = 2048;
    cfg.segment_index_bytes = 4096;
    cfg.index_interval_bytes = 256;
  }
  return cfg;
}

// A replica on a fresh directory; `in_memory_epochs` keeps the epoch cache out of files
// (each change of a file-backed cache costs two fsyncs: fine for the scenarios, too slow for
// 200 random seeds).
node make_node(std::int32_t id, std::shared_ptr<const brook::clock> c, bool small = false,
               bool in_memory_epochs = false) {
  node n;
  n.id = id;
  n.dir = std::make_unique<brook::test::scratch_dir>("brook-replica");
  auto log = partition_log::open(n.dir->path() / "t-0", small_segments(std::move(c), small));
  REQUIRE(log);
  n.part = std::make_shared<partition>("t", partition_id(0), std::move(*log), nullptr);
  auto r = in_memory_epochs ? partition_replica::open(broker_id(id), n.part, leader_epoch_cache::in_memory())
                            : partition_replica::open(broker_id(id), n.part);
  REQUIRE(r);
  n.rep = std::move(*r);
  return n;
}

struct cluster {
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>();
  std::vector<node> nodes;
  explicit cluster(int n = 3, bool small = false, bool in_memory_epochs = false) {
    for (int i = 0; i < n; ++i) nodes.push_back(make_node(i, clk, small, in_memory_epochs));
  }
  partition_replica& operator[](int i) { return *nodes[static_cast<std::size_t>(i)].rep; }
  timestamp_ms now() const { return clk->now_ms(); }
  ids all() const {
    ids v;
    for (const auto& n : nodes) v.push_back(broker_id(n.id));
    return v;
  }
  /// Leader `l` in `epoch` with `isr`; everyone else follows.
  void elect(int l, std::int32_t epoch, ids isr) {
    REQUIRE((*this)[l].become_leader(leader_epoch(epoch), std::move(isr), all(), now()));
    for (auto& n : nodes)
      if (n.id != l) REQUIRE(n.rep->become_follower(broker_id(l), leader_epoch(epoch)));
  }
};

/// One batch of `n` records valued "<tag>-<i>" (fmt rather than test::make_batch's string
/// concatenation, which trips GCC 12's false -Wrestrict when inlined here).
std::vector<std::byte> make_batch(int n, const std::string& tag = "v") {
  record_batch_builder b;
  for (int i = 0; i < n; ++i) b.append(1'000 + i, fmt::format("k{}", i), fmt::format("{}-{}", tag, i));
  auto s = b.finish();
  return {s.begin(), s.end()};
}

append_result produce(partition_replica& leader, int records, const std::string& tag, timestamp_ms now) {
  auto b = make_batch(records, tag);
  auto r = leader.append_as_leader(b, now);
  REQUIRE(r);
  return *r;
}

/// One fetch round of `f` from `leader`, as a fetcher thread does it.
void fetch(partition_replica& f, partition_replica& leader, timestamp_ms now, std::size_t max_bytes = 1 << 20) {
  auto resp = leader.fetch_as_leader(f.make_fetch_request(max_bytes), now);
  REQUIRE(resp);
  REQUIRE(f.apply_fetch_response(*resp));
}

/// KIP-101/279: OffsetsForLeaderEpoch until the follower's log matches the leader's.
offset truncate(partition_replica& f, partition_replica& leader) {
  auto r =
      f.truncate_before_fetch([&](leader_epoch e) { return leader.end_offset_for_epoch(f.current_leader_epoch(), e); });
  REQUIRE(r);
  return *r;
}

/// Every byte of the log, from its start to its end.
std::vector<std::byte> log_bytes(const partition_replica& r) {
  std::vector<std::byte> out;
  const partition_log& log = r.part()->log();
  offset at = log.log_start_offset();
  while (at < log.log_end_offset()) {
    auto s = log.read(at, read_options{1 << 30, std::nullopt});
    REQUIRE(s);
    REQUIRE(!s->empty());
    auto b = s->bytes();
    out.insert(out.end(), b.begin(), b.end());
    at = s->next_offset();
  }
  return out;
}

std::vector<std::string> values(const partition_replica& r) {
  std::vector<std::string> v;
  for (const auto& p : test::read_all(r.part()->log())) v.push_back(p.value);
  return v;
}

/// Values of the records a consumer sees (below the high watermark).
std::vector<std::string> consumed(const partition_replica& r) {
  std::vector<std::string> v;
  offset at = r.part()->log_start_offset();
  while (true) {
    auto s = r.part()->read(at);
    REQUIRE(s);
    if (s->empty()) break;
    REQUIRE(s->for_each_record([&](const record_view& rv) { v.push_back(rv.value().to_string()); }));
    at = s->next_offset();
  }
  return v;
}

/// partitionLeaderEpoch of every batch, in order.
std::vector<std::int32_t> batch_epochs(const partition_replica& r) {
  std::vector<std::int32_t> v;
  auto bytes = log_bytes(r);
  for (std::size_t pos = 0; pos < bytes.size();) {
    auto h = check_batch_header(std::span<const std::byte>(bytes).subspan(pos));
    REQUIRE(h);
    v.push_back(h->partition_leader_epoch);
    pos += h->size_bytes();
  }
  return v;
}

}  // namespace

TEST_CASE("leader replicates to followers, HW is the minimum ISR log end", "[replication][partition_replica]") {
  cluster c;
  c.elect(0, 0, {0, 1, 2});
  CHECK(c[0].role() == replica_role::leader);
  CHECK(c[1].role() == replica_role::follower);
  CHECK(c[0].leader_epoch_start_offset() == offset(0));

  produce(c[0], 3, "a", c.now());
  produce(c[0], 2, "b", c.now());
  CHECK(c[0].log_end_offset() == offset(5));
  CHECK(c[0].high_watermark() == offset(0));  // followers' LEO unknown
  CHECK(consumed(c[0]).empty());

  fetch(c[1], c[0], c.now());
  CHECK(c[1].log_end_offset() == offset(5));
  CHECK(c[1].high_watermark() == offset(0));
  CHECK(c[0].high_watermark() == offset(0));  // follower 2 has not fetched

  fetch(c[2], c[0], c.now());
  fetch(c[2], c[0], c.now());                 // reports LEO 5
  CHECK(c[0].high_watermark() == offset(0));  // follower 1 reported only offset 0 so far
  fetch(c[1], c[0], c.now());
  CHECK(c[0].high_watermark() == offset(5));
  CHECK(c[1].high_watermark() == offset(0));  // learns of HW 5 one fetch later
  fetch(c[1], c[0], c.now());
  fetch(c[2], c[0], c.now());
  CHECK(c[1].high_watermark() == offset(5));
  CHECK(c[2].high_watermark() == offset(5));

  // Consumers read only below the HW.
  produce(c[0], 4, "c", c.now());
  CHECK(consumed(c[0]).size() == 5);
  fetch(c[1], c[0], c.now());
  CHECK(c[0].high_watermark() == offset(5));  // 2 still at 5
  fetch(c[2], c[0], c.now());
  fetch(c[2], c[0], c.now());
  CHECK(c[0].high_watermark() == offset(5));  // 1 reported offset 5 only
  fetch(c[1], c[0], c.now());
  CHECK(c[0].high_watermark() == offset(9));
  CHECK(consumed(c[0]).size() == 9);
  CHECK(consumed(c[1]).size() == 5);

  // Epochs are stamped in every batch, and the CRC still holds.
  for (int i = 0; i < 3; ++i) {
    CHECK(batch_epochs(c[i]) == std::vector<std::int32_t>{0, 0, 0});
    CHECK_NOTHROW(test::read_all(c[i].part()->log()));
    CHECK(c[i].epoch_cache().entries() == std::vector<epoch_entry>{{leader_epoch(0), offset(0)}});
  }
  CHECK(log_bytes(c[0]) == log_bytes(c[1]));
  CHECK(log_bytes(c[0]) == log_bytes(c[2]));
}

TEST_CASE("ISR shrinks after replica.lag.time.max.ms and expands after catch-up", "[replication][partition_replica]") {
  cluster c;
  c.elect(0, 0, {0, 1, 2});
  produce(c[0], 2, "a", c.now());
  fetch(c[1], c[0], c.now());
  fetch(c[1], c[0], c.now());
  fetch(c[2], c[0], c.now());
  fetch(c[2], c[0], c.now());
  CHECK(c[0].high_watermark() == offset(2));

  // Follower 2 stops fetching; 1 keeps up.
  for (int i = 0; i < 10; ++i) {
    c.clk->advance(5000);
    produce(c[0], 1, fmt::format("x{}", i), c.now());
    fetch(c[1], c[0], c.now());
    fetch(c[1], c[0], c.now());
    if (c.clk->now_ms() - c[0].follower(broker_id{2})->last_caught_up_time_ms <= lag_max)
      CHECK(c[0].maybe_shrink_isr(c.now()).empty());
  }
  CHECK(c[0].high_watermark() == offset(2));  // held back by 2
  CHECK(c[0].maybe_shrink_isr(c.now()) == ids{2});
  REQUIRE(c[0].set_isr(ids{0, 1}, c.now()));
  CHECK(c[0].high_watermark() == offset(12));
  CHECK(c[0].maybe_expand_isr().empty());

  // 2 fetches but stays below the HW: not a candidate yet.
  fetch(c[2], c[0], c.now(), 1);  // one batch per fetch
  CHECK(c[0].maybe_expand_isr().empty());
  for (int i = 0; i < 20 && c[2].log_end_offset() < c[0].log_end_offset(); ++i) fetch(c[2], c[0], c.now(), 1);
  fetch(c[2], c[0], c.now());
  CHECK(c[0].maybe_expand_isr() == ids{2});
  REQUIRE(c[0].set_isr(ids{0, 1, 2}, c.now()));
  CHECK(c[0].maybe_shrink_isr(c.now()).empty());

  // A follower with the leader's LEO is never out of sync, however old its catch-up.
  c.clk->advance(10 * lag_max);
  CHECK(c[0].maybe_shrink_isr(c.now()).empty());
  produce(c[0], 1, "late", c.now());
  CHECK(c[0].maybe_shrink_isr(c.now()) == ids{1, 2});

  // Kafka's "previous fetch" rule: fetching up to the LEO of the previous fetch catches up at
  // that previous fetch's time.
  timestamp_ms t1 = c.now();
  fetch(c[1], c[0], t1);  // LEO 13 at t1, fetches from 12
  CHECK(c[0].follower(broker_id{1})->last_caught_up_time_ms < t1);
  produce(c[0], 1, "more", c.now());
  c.clk->advance(100);
  fetch(c[1], c[0], c.now());  // fetch offset 13 >= LEO of previous fetch (13), < LEO now (14)
  CHECK(c[0].follower(broker_id{1})->last_caught_up_time_ms == t1);
}

TEST_CASE("stale and unknown epochs, wrong roles, out-of-range fetches", "[replication][partition_replica]") {
  cluster c;
  c.elect(0, 3, {0, 1, 2});
  produce(c[0], 2, "a", c.now());

  SECTION("become_leader / become_follower with an epoch not newer are fenced") {
    auto r = c[0].become_leader(leader_epoch(3), ids{0, 1, 2}, c.all(), c.now());
    REQUIRE(!r);
    CHECK(r.error().code() == errc::fenced_leader_epoch);
    auto f = c[1].become_follower(broker_id{0}, leader_epoch(2));
    REQUIRE(!f);
    CHECK(f.error().code() == errc::fenced_leader_epoch);
    CHECK(c[1].current_leader_epoch() == leader_epoch(3));
    auto bad = c[1].become_leader(leader_epoch(4), ids{0, 2}, c.all(), c.now());
    REQUIRE(!bad);
    CHECK(bad.error().code() == errc::invalid_request);  // not in its own ISR
  }
  SECTION("fetches carry the leader epoch") {
    auto req = c[1].make_fetch_request();
    req.current_leader_epoch = leader_epoch(2);
    auto r = c[0].fetch_as_leader(req, c.now());
    REQUIRE(!r);
    CHECK(r.error().code() == errc::fenced_leader_epoch);
    req.current_leader_epoch = leader_epoch(4);
    r = c[0].fetch_as_leader(req, c.now());
    REQUIRE(!r);
    CHECK(r.error().code() == errc::unknown_leader_epoch);
    auto e = c[0].end_offset_for_epoch(leader_epoch(2), leader_epoch(3));
    REQUIRE(!e);
    CHECK(e.error().code() == errc::fenced_leader_epoch);
  }
  SECTION("only the leader serves fetches, only replicas fetch, only followers append") {
    auto r = c[1].fetch_as_leader(c[2].make_fetch_request(), c.now());
    REQUIRE(!r);
    CHECK(r.error().code() == errc::not_leader_or_follower);
    auto req = c[1].make_fetch_request();
    req.replica_id = broker_id(7);
    r = c[0].fetch_as_leader(req, c.now());
    REQUIRE(!r);
    CHECK(r.error().code() == errc::not_leader_or_follower);
    auto b = make_batch(1);
    auto a = c[1].append_as_leader(b, c.now());
    REQUIRE(!a);
    CHECK(a.error().code() == errc::not_leader_or_follower);
    auto f = c[0].append_as_follower({}, offset(0));
    REQUIRE(!f);
    CHECK(f.error().code() == errc::not_leader_or_follower);
  }
  SECTION("fetch beyond the leader's log end") {
    auto req = c[1].make_fetch_request();
    req.fetch_offset = offset(3);
    auto r = c[0].fetch_as_leader(req, c.now());
    REQUIRE(!r);
    CHECK(r.error().code() == errc::offset_out_of_range);
    CHECK(c[0].follower(broker_id{1})->log_end_offset == offset(-1));  // state untouched
  }
  SECTION("a follower append must start at its log end") {
    auto resp = c[0].fetch_as_leader(c[1].make_fetch_request(), c.now());
    REQUIRE(resp);
    REQUIRE(c[1].apply_fetch_response(*resp));
    auto again = c[1].append_as_follower(resp->records.bytes(), resp->high_watermark);
    REQUIRE(!again);
    CHECK(again.error().code() == errc::offset_out_of_range);
    CHECK(c[1].epoch_cache().entries() == std::vector<epoch_entry>{{leader_epoch(3), offset(0)}});
  }
}

TEST_CASE("KIP-101 scenario 1: leader fails after a follower fetched, before the HW moved",
          "[replication][partition_replica][kip101]") {
  // A leads with B following; B fetches m1, m2 but learns HW 1 only (HW moves one fetch later).
  cluster c(2);
  c.elect(0, 0, {0, 1});
  produce(c[0], 1, "m1", c.now());
  fetch(c[1], c[0], c.now());
  fetch(c[1], c[0], c.now());  // leader HW -> 1, B still at HW 0... now 1 after this response
  produce(c[0], 1, "m2", c.now());
  fetch(c[1], c[0], c.now());  // B has m2; leader HW still 1
  fetch(c[1], c[0], c.now());  // leader HW -> 2; B learns HW 1 only
  CHECK(c[0].high_watermark() == offset(2));
  CHECK(c[1].high_watermark() == offset(1));
  CHECK(consumed(c[0]) == std::vector<std::string>{"m1-0", "m2-0"});  // both were exposed

  // Pre-KIP-101 B would truncate to its HW (1) on restart and lose m2. With epochs, A fails, B
  // leads epoch 1 and keeps everything; A comes back as follower and truncates to nothing.
  REQUIRE(c[1].become_leader(leader_epoch(1), ids{1}, c.all(), c.now()));
  REQUIRE(c[0].become_follower(broker_id{1}, leader_epoch(1)));
  CHECK(c[1].log_end_offset() == offset(2));
  CHECK(truncate(c[0], c[1]) == offset(2));  // leader: epoch 0 ended at 2
  produce(c[1], 1, "m3", c.now());
  fetch(c[0], c[1], c.now());
  fetch(c[0], c[1], c.now());
  CHECK(c[1].maybe_expand_isr() == ids{0});
  REQUIRE(c[1].set_isr(ids{0, 1}, c.now()));
  fetch(c[0], c[1], c.now());
  CHECK(c[1].high_watermark() == offset(3));
  CHECK(consumed(c[1]) == std::vector<std::string>{"m1-0", "m2-0", "m3-0"});
  CHECK(log_bytes(c[0]) == log_bytes(c[1]));
  CHECK(batch_epochs(c[0]) == std::vector<std::int32_t>{0, 0, 1});
  CHECK(c[0].epoch_cache().entries() == c[1].epoch_cache().entries());
}

TEST_CASE("KIP-101 scenario 2: two quick failovers leave divergent tails", "[replication][partition_replica][kip101]") {
  // A leads epoch 0: m1 committed on A and B; m2 only on A. Both fail; B returns first and
  // leads epoch 1 and writes m3 at offset 1. A returns: its m2 must go, replaced by m3.
  cluster c(2);
  c.elect(0, 0, {0, 1});
  produce(c[0], 1, "m1", c.now());
  fetch(c[1], c[0], c.now());
  fetch(c[1], c[0], c.now());
  CHECK(c[0].high_watermark() == offset(1));
  produce(c[0], 1, "m2", c.now());  // uncommitted, A only

  // Unclean from the old ISR's point of view, but B was in the ISR: a clean election.
  REQUIRE(c[1].become_leader(leader_epoch(1), ids{1}, c.all(), c.now()));
  produce(c[1], 2, "m3", c.now());
  CHECK(c[1].epoch_cache().entries() ==
        std::vector<epoch_entry>{{leader_epoch(0), offset(0)}, {leader_epoch(1), offset(1)}});
  REQUIRE(c[0].become_follower(broker_id{1}, leader_epoch(1)));

  SECTION("OffsetsForLeaderEpoch before fetching (KIP-101)") {
    auto ans = c[1].end_offset_for_epoch(leader_epoch(1), leader_epoch(0));
    REQUIRE(ans);
    CHECK(*ans == epoch_end_offset{leader_epoch(0), offset(1)});
    CHECK(truncate(c[0], c[1]) == offset(1));
  }
  SECTION("diverging epoch in the fetch response (KIP-320)") {
    auto resp = c[1].fetch_as_leader(c[0].make_fetch_request(), c.now());
    REQUIRE(resp);
    REQUIRE(resp->diverging_epoch);
    CHECK(*resp->diverging_epoch == epoch_end_offset{leader_epoch(0), offset(1)});
    CHECK(resp->records.empty());
    CHECK(c[1].follower(broker_id{0})->log_end_offset == offset(-1));  // not updated on divergence
    REQUIRE(c[0].apply_fetch_response(*resp));
    CHECK(c[0].log_end_offset() == offset(1));
  }
  CHECK(values(c[0]) == std::vector<std::string>{"m1-0"});
  fetch(c[0], c[1], c.now());
  fetch(c[0], c[1], c.now());
  CHECK(values(c[0]) == std::vector<std::string>{"m1-0", "m3-0", "m3-1"});
  CHECK(log_bytes(c[0]) == log_bytes(c[1]));
  CHECK(c[0].epoch_cache().entries() == c[1].epoch_cache().entries());
}

TEST_CASE("KIP-279: a follower that missed epochs truncates in several rounds",
          "[replication][partition_replica][kip279]") {
  // Follower F has epochs 0,2 (it led epoch 2 briefly with an unreplicated tail); leader L has
  // epochs 0,1,3: asked for epoch 2, L answers epoch 1, unknown to F; F truncates to the end of
  // its epoch 0 and asks again.
  cluster c(2);
  c.elect(0, 0, {0, 1});
  produce(c[0], 2, "e0", c.now());
  fetch(c[1], c[0], c.now());
  fetch(c[1], c[0], c.now());  // both at 2, HW 2
  // Epoch 1: node 1 leads, writes 2 records node 0 never sees.
  REQUIRE(c[1].become_leader(leader_epoch(1), ids{1}, c.all(), c.now()));
  produce(c[1], 2, "e1", c.now());
  // Epoch 2: node 0 leads (stale view in this test: not from the ISR), writes its own tail.
  REQUIRE(c[0].become_leader(leader_epoch(2), ids{0}, c.all(), c.now()));
  produce(c[0], 3, "e2", c.now());
  // Epoch 3: node 1 leads again.
  REQUIRE(c[1].become_follower(broker_id{0}, leader_epoch(2)));
  REQUIRE(c[1].become_leader(leader_epoch(3), ids{1}, c.all(), c.now()));
  produce(c[1], 1, "e3", c.now());
  REQUIRE(c[0].become_follower(broker_id{1}, leader_epoch(3)));

  auto first = c[1].end_offset_for_epoch(leader_epoch(3), leader_epoch(2));
  REQUIRE(first);
  CHECK(*first == epoch_end_offset{leader_epoch(1), offset(4)});
  auto st = c[0].truncate_to_epoch_end(*first);
  REQUIRE(st);
  CHECK(!st->completed);
  CHECK(st->log_end_offset == offset(2));
  CHECK(c[0].latest_epoch() == leader_epoch(0));
  CHECK(truncate(c[0], c[1]) == offset(2));
  for (int i = 0; i < 3; ++i) fetch(c[0], c[1], c.now());
  CHECK(values(c[0]) == std::vector<std::string>{"e0-0", "e0-1", "e1-0", "e1-1", "e3-0"});
  CHECK(log_bytes(c[0]) == log_bytes(c[1]));
  CHECK(c[0].epoch_cache().entries() == c[1].epoch_cache().entries());
  CHECK(batch_epochs(c[0]) == std::vector<std::int32_t>{0, 1, 3});
}

TEST_CASE("the epoch cache survives a reopen and is trimmed to the log end", "[replication][partition_replica]") {
  auto clk = std::make_shared<manual_clock>();
  temp_dir d("brook-replica");
  {
    auto log = partition_log::open(d.path() / "t-0", small_segments(clk, false));
    REQUIRE(log);
    auto part = std::make_shared<partition>("t", partition_id(0), std::move(*log), nullptr);
    auto r = partition_replica::open(broker_id(0), part);
    REQUIRE(r);
    REQUIRE((*r)->become_leader(leader_epoch(5), ids{0}, ids{0}, clk->now_ms()));
    produce(**r, 2, "a", clk->now_ms());
    REQUIRE((*r)->epoch_cache().assign(leader_epoch(6), offset(9)));  // as if a crash left it ahead
  }
  auto log = partition_log::open(d.path() / "t-0", small_segments(clk, false));
  REQUIRE(log);
  auto part = std::make_shared<partition>("t", partition_id(0), std::move(*log), nullptr);
  auto r = partition_replica::open(broker_id(0), part);
  REQUIRE(r);
  CHECK((*r)->epoch_cache().entries() == std::vector<epoch_entry>{{leader_epoch(5), offset(0)}});
}

TEST_CASE("random appends, fetches and clean leader changes converge without losing committed records",
          "[replication][partition_replica][random]") {
  const int seeds = 200;
  int elections = 0, shrinks = 0, expands = 0, cuts = 0;  // the paths the seeds exercised
  for (int seed = 1; seed <= seeds; ++seed) {
    INFO("seed " << seed);
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    cluster c(3, /*small segments=*/seed % 2 == 0, /*in_memory_epochs=*/seed % 10 != 0);
    std::int32_t epoch = 0;
    int leader = 0;
    ids isr{0, 1, 2};
    c.elect(leader, epoch, isr);
    std::vector<bool> needs_truncation(3, false);
    std::vector<bool> partitioned(3, false);  // a partitioned follower does not fetch
    std::vector<std::string> committed;       // every record ever below the leader's HW
    int counter = 0;

    auto fetch_round = [&](int f) {
      auto& fr = c[f];
      const offset before = fr.log_end_offset();
      if (needs_truncation[static_cast<std::size_t>(f)]) {
        if (pick(0, 1) == 0) truncate(fr, c[leader]);
        needs_truncation[static_cast<std::size_t>(f)] = false;
      }
      fetch(fr, c[leader], c.now(), static_cast<std::size_t>(pick(1, 3000)));
      if (fr.log_end_offset() < before) ++cuts;
    };
    auto record_committed = [&] {
      auto& l = c[leader];
      auto vals = values(l);
      const auto hw = static_cast<std::size_t>(l.high_watermark().value());
      REQUIRE(vals.size() >= committed.size());
      REQUIRE(std::equal(committed.begin(), committed.end(), vals.begin()));
      for (std::size_t i = committed.size(); i < hw; ++i) committed.push_back(vals[i]);
    };
    auto check_replicas = [&] {
      for (int i = 0; i < 3; ++i) {
        auto& r = c[i];
        REQUIRE(r.high_watermark() <= r.log_end_offset());
        auto vals = values(r);
        const auto hw = static_cast<std::size_t>(r.high_watermark().value());
        REQUIRE(hw <= committed.size());  // nobody exposes what the leader never committed
        REQUIRE(std::equal(committed.begin(), committed.begin() + static_cast<std::ptrdiff_t>(hw), vals.begin()));
      }
    };

    const int steps = pick(50, 150);
    for (int step = 0; step < steps; ++step) {
      switch (pick(0, 9)) {
        case 0:
        case 1:
        case 2: {  // produce
          for (int b = pick(1, 3); b > 0; --b)
            produce(c[leader], pick(1, 4), fmt::format("s{}-{}", seed, counter++), c.now());
          break;
        }
        case 3:
        case 4:
        case 5: {  // a follower fetches
          int f = pick(0, 2);
          if (f != leader && !partitioned[static_cast<std::size_t>(f)]) fetch_round(f);
          break;
        }
        case 6: {  // time passes; the leader proposes ISR changes, the controller commits them
          c.clk->advance(pick(0, 20000));
          auto out = c[leader].maybe_shrink_isr(c.now());
          auto in = c[leader].maybe_expand_isr();
          shrinks += static_cast<int>(out.size());
          expands += static_cast<int>(in.size());
          if (!out.empty() || !in.empty()) {
            ids next;
            for (auto id : isr)
              if (std::find(out.begin(), out.end(), id) == out.end()) next.push_back(id);
            for (auto id : in) next.push_back(id);
            std::sort(next.begin(), next.end());
            isr = next;
            REQUIRE(c[leader].set_isr(isr, c.now()));
          }
          break;
        }
        case 7: {  // partitions heal or break
          int f = pick(0, 2);
          partitioned[static_cast<std::size_t>(f)] = !partitioned[static_cast<std::size_t>(f)];
          break;
        }
        case 8: {  // clean leader election among the ISR, with an epoch bump
          record_committed();
          int next = isr[static_cast<std::size_t>(pick(0, static_cast<int>(isr.size()) - 1))].value();
          if (next != leader && pick(0, 1) == 0) {
            // the old leader failed: the controller removes it from the ISR
            isr.erase(std::find(isr.begin(), isr.end(), broker_id(leader)));
          }
          ++epoch;
          ++elections;
          leader = next;
          c.elect(leader, epoch, isr);
          for (int i = 0; i < 3; ++i) needs_truncation[static_cast<std::size_t>(i)] = i != leader;
          break;
        }
        default: {  // everyone fetches
          for (int f = 0; f < 3; ++f)
            if (f != leader && !partitioned[static_cast<std::size_t>(f)]) fetch_round(f);
          break;
        }
      }
      record_committed();
      if (step % 10 == 0) check_replicas();
    }

    // Heal: everyone fetches until caught up and back in the ISR.
    for (int round = 0; round < 400; ++round) {
      for (int f = 0; f < 3; ++f)
        if (f != leader) fetch_round(f);
      auto in = c[leader].maybe_expand_isr();
      if (!in.empty()) {
        for (auto id : in) isr.push_back(id);
        std::sort(isr.begin(), isr.end());
        REQUIRE(c[leader].set_isr(isr, c.now()));
      }
      bool done = isr.size() == 3;
      for (int i = 0; i < 3; ++i)
        done = done && c[i].log_end_offset() == c[leader].log_end_offset() &&
               c[i].high_watermark() == c[leader].log_end_offset();
      if (done) break;
    }
    record_committed();
    check_replicas();
    for (int i = 0; i < 3; ++i) {
      auto fs = c[leader].follower(broker_id(i));
      UNSCOPED_INFO(fmt::format("replica {}: leo {} hw {} epoch {} cache {} | seen by leader: leo {} caught up {}", i,
                                c[i].log_end_offset(), c[i].high_watermark(), c[i].current_leader_epoch(),
                                fmt::join(c[i].epoch_cache().entries(), " "), fs ? fs->log_end_offset : offset(-9),
                                fs ? fs->last_caught_up_time_ms : -9));
    }
    UNSCOPED_INFO(fmt::format("leader {} isr [{}] leader isr [{}] start {}", leader, fmt::join(isr, ","),
                              fmt::join(c[leader].isr(), ","),
                              c[leader].leader_epoch_start_offset().value_or(offset(-1))));
    REQUIRE(isr.size() == 3);
    REQUIRE(c[leader].high_watermark() == c[leader].log_end_offset());
    REQUIRE(committed.size() == static_cast<std::size_t>(c[leader].log_end_offset().value()));
    const auto bytes = log_bytes(c[leader]);
    for (int i = 0; i < 3; ++i) {
      REQUIRE(c[i].log_end_offset() == c[leader].log_end_offset());
      REQUIRE(c[i].high_watermark() == c[leader].high_watermark());
      REQUIRE(log_bytes(c[i]) == bytes);
      // The leader may hold an entry for its current epoch at the log end, with nothing in it yet.
      const offset end = c[leader].log_end_offset();
      REQUIRE(c[i].epoch_cache().entries_in_range(offset(-1), end) ==
              c[leader].epoch_cache().entries_in_range(offset(-1), end));
      REQUIRE(values(c[i]) == committed);
    }
  }
  INFO(fmt::format("elections {} shrinks {} expands {} truncations that cut a log {}", elections, shrinks, expands,
                   cuts));
  CHECK(elections > 200);
  CHECK(shrinks > 50);
  CHECK(expands > 50);
  CHECK(cuts > 20);
}

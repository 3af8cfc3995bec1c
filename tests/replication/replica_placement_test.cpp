// replica_placement: Kafka's AdminTest.testReplicaAssignment vector and the AdminUtils Javadoc
// table, the errors, Kafka's start-partition quirk, then seeded properties over random inputs.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/replication/replica_placement.hpp>

using namespace brook;

namespace {

// The tests do arithmetic on broker ids, so they keep them raw and convert at the call.
using raw_broker = std::int32_t;
using replicas = std::vector<raw_broker>;
using raw_assignment = std::map<partition_id, replicas>;

std::vector<broker_id> typed(const std::vector<raw_broker>& v) {
  std::vector<broker_id> out;
  for (auto b : v) out.push_back(broker_id(b));
  return out;
}

std::vector<raw_broker> iota_brokers(std::int32_t n, raw_broker first = 0) {
  std::vector<raw_broker> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), first);
  return v;
}

raw_assignment place(const std::vector<raw_broker>& brokers, std::int32_t partitions, std::int32_t rf,
                     placement_start start = {}, std::int32_t start_partition = 0) {
  auto r = assign_replicas_rack_unaware(typed(brokers), partitions, rf, start, partition_id{start_partition});
  REQUIRE(r);
  raw_assignment out;
  for (const auto& [p, reps] : *r) {
    auto& raw = out[p];
    for (auto b : reps) raw.push_back(b.value());
  }
  return out;
}

raw_assignment assignment(std::initializer_list<std::pair<std::int32_t, replicas>> l) {
  raw_assignment out;
  for (const auto& [p, r] : l) out.emplace(partition_id{p}, r);
  return out;
}

}  // namespace

TEST_CASE("placement: Kafka's AdminTest.testReplicaAssignment vector", "[replication][placement]") {
  // AdminUtils.assignReplicasToBrokers(brokers 0..4 without racks, 10, 3, fixedStartIndex = 0)
  auto expected = assignment({{0, {0, 1, 2}},
                              {1, {1, 2, 3}},
                              {2, {2, 3, 4}},
                              {3, {3, 4, 0}},
                              {4, {4, 0, 1}},
                              {5, {0, 2, 3}},
                              {6, {1, 3, 4}},
                              {7, {2, 4, 0}},
                              {8, {3, 0, 1}},
                              {9, {4, 1, 2}}});
  CHECK(place(iota_brokers(5), 10, 3, placement_start::fixed(0)) == expected);
  CHECK(place(iota_brokers(5), 10, 3) == expected);  // the default start is {0, 0}
}

TEST_CASE("placement: the issue's (i + j) % N holds for the first round only", "[replication][placement]") {
  for (std::int32_t n = 1; n <= 7; ++n)
    for (std::int32_t rf = 1; rf <= n; ++rf) {
      auto a = place(iota_brokers(n), 3 * n, rf);
      for (std::int32_t p = 0; p < n; ++p)
        for (std::int32_t j = 0; j < rf; ++j) CHECK(a.at(partition_id{p})[j] == (p + j) % n);
    }
  // Second round: followers move one step further (shift 1): p = N has [0, 2, 3, ...].
  CHECK(place(iota_brokers(4), 8, 3).at(partition_id{4}) == replicas{0, 2, 3});
  CHECK(place(iota_brokers(4), 8, 3).at(partition_id{5}) == replicas{1, 3, 0});
  // Third round: shift 2 -> followers at +3, then wrapping (1 + (2 + 1) % 3 = 1) at +1.
  CHECK(place(iota_brokers(4), 12, 3).at(partition_id{8}) == replicas{0, 3, 1});
}

TEST_CASE("placement: start index, shift and broker ids", "[replication][placement]") {
  SECTION("broker ids are taken from the list in the given order") {
    auto a = place({10, 30, 20}, 3, 2);
    CHECK(a == assignment({{0, {10, 30}}, {1, {30, 20}}, {2, {20, 10}}}));
  }
  SECTION("fixed start index 2 (Kafka sets the shift to 2 too)") {
    // first = (p + 2) % 5; followers at first + 1 + (2 + j) % 4.
    auto a = place(iota_brokers(5), 2, 3, placement_start::fixed(2));
    CHECK(a == assignment({{0, {2, 0, 1}}, {1, {3, 1, 2}}}));
  }
  SECTION("separate start index and shift") {
    auto a = place(iota_brokers(5), 1, 3, placement_start{1, 0});
    CHECK(a.at(partition_id{0}) == replicas{1, 2, 3});
    a = place(iota_brokers(5), 1, 3, placement_start{1, 3});
    CHECK(a.at(partition_id{0}) == replicas{1, 0, 2});  // +4, then 1 + (3 + 1) % 4 = +1
  }
  SECTION("start index and shift beyond N are used modulo") {
    CHECK(place(iota_brokers(5), 10, 3, placement_start{7, 9}) == place(iota_brokers(5), 10, 3, placement_start{2, 1}));
  }
  SECTION("one broker") { CHECK(place({7}, 3, 1) == assignment({{0, {7}}, {1, {7}}, {2, {7}}})); }
}

TEST_CASE("placement: start partition (adding partitions), with Kafka's shift quirk", "[replication][placement]") {
  const auto brokers = iota_brokers(5);
  const auto all = place(brokers, 20, 3);
  SECTION("0 < start <= N: the same as placing everything at once") {
    for (std::int32_t s = 1; s <= 5; ++s) {
      auto part = place(brokers, 20 - s, 3, {}, s);
      REQUIRE(part.size() == static_cast<std::size_t>(20 - s));
      CHECK(part.begin()->first == partition_id{s});
      for (const auto& [p, r] : part) CHECK(r == all.at(p));
    }
  }
  SECTION("start > N: the shift counts rounds from the start partition, not from 0") {
    auto part = place(brokers, 5, 3, {}, 10);
    // One call would use shift 2 for p10 ([0,3,4]); Kafka's formula gives shift 1 ([0,2,3]).
    CHECK(all.at(partition_id{10}) == replicas{0, 3, 4});
    CHECK(part.at(partition_id{10}) == replicas{0, 2, 3});
  }
}

TEST_CASE("placement: errors", "[replication][placement]") {
  auto err = [](std::vector<raw_broker> b, std::int32_t parts, std::int32_t rf, placement_start s = {},
                std::int32_t sp = 0) {
    auto r = assign_replicas_rack_unaware(typed(b), parts, rf, s, partition_id{sp});
    REQUIRE_FALSE(r);
    return r.error();
  };
  auto e = err(iota_brokers(3), 4, 4);
  CHECK(e == errc::invalid_replication_factor);
  CHECK(e.message() == "Replication factor: 4 larger than available brokers: 3.");
  CHECK(err({}, 1, 1) == errc::invalid_replication_factor);
  e = err(iota_brokers(3), 4, 0);
  CHECK(e == errc::invalid_replication_factor);
  CHECK(e.message() == "Replication factor must be larger than 0.");
  CHECK(err(iota_brokers(3), 4, -2) == errc::invalid_replication_factor);
  e = err(iota_brokers(3), 0, 1);
  CHECK(e == errc::invalid_partitions);
  CHECK(e.message() == "Number of partitions must be larger than 0.");
  CHECK(err(iota_brokers(3), -1, 1) == errc::invalid_partitions);
  CHECK(err(iota_brokers(3), 0, 9) == errc::invalid_partitions);  // Kafka checks partitions first
  e = err({1, 2, 1}, 3, 2);
  CHECK(e == errc::invalid_argument);
  CHECK_THAT(e.message(), Catch::Contains("broker id 1 is listed twice"));
  CHECK(err({1, -2}, 3, 2) == errc::invalid_argument);
  CHECK(err(iota_brokers(3), 3, 2, placement_start{-1, 0}) == errc::invalid_argument);
  CHECK(err(iota_brokers(3), 3, 2, placement_start{0, -1}) == errc::invalid_argument);
  CHECK(err(iota_brokers(3), 3, 2, {}, -1) == errc::invalid_argument);
  CHECK(err(iota_brokers(3), 2, 2, {}, std::numeric_limits<std::int32_t>::max()) == errc::invalid_partitions);
  // The last int32 partition id itself is fine.
  CHECK(assign_replicas_rack_unaware(typed(iota_brokers(3)), 1, 2, {},
                                     partition_id{std::numeric_limits<std::int32_t>::max()}));
}

TEST_CASE("placement: random start from a caller's engine", "[replication][placement]") {
  std::mt19937 a(42), b(42);
  auto sa = placement_start::random(a, 5);
  auto sb = placement_start::random(b, 5);
  CHECK(sa == sb);
  std::set<std::pair<int, int>> seen;
  for (int i = 0; i < 2000; ++i) {
    auto s = placement_start::random(a, 5);
    REQUIRE(s.start_index >= 0);
    REQUIRE(s.start_index < 5);
    REQUIRE(s.replica_shift >= 0);
    REQUIRE(s.replica_shift < 5);
    seen.insert({s.start_index, s.replica_shift});
  }
  CHECK(seen.size() == 25);  // both drawn independently over [0, N)
  CHECK(placement_start::random(a, 0) == placement_start{});
}

TEST_CASE("placement: seeded properties over random inputs", "[replication][placement]") {
  const std::uint32_t seed = 0x5eed'0a11;
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 3000; ++iter) {
    std::uniform_int_distribution<std::int32_t> nb(1, 12);
    const std::int32_t n = nb(rng);
    const std::int32_t rf = std::uniform_int_distribution<std::int32_t>(1, n)(rng);
    const std::int32_t rounds = std::uniform_int_distribution<std::int32_t>(1, 6)(rng);
    const bool whole_rounds = iter % 2 == 0;
    const std::int32_t parts =
        whole_rounds ? n * rounds : std::uniform_int_distribution<std::int32_t>(1, n * rounds)(rng);
    // Distinct, shuffled, non-contiguous broker ids.
    std::vector<raw_broker> brokers;
    std::set<raw_broker> ids;
    while (static_cast<std::int32_t>(ids.size()) < n)
      ids.insert(std::uniform_int_distribution<raw_broker>(0, 1000)(rng));
    brokers.assign(ids.begin(), ids.end());
    std::shuffle(brokers.begin(), brokers.end(), rng);
    const auto start = placement_start::random(rng, brokers.size());
    INFO("seed " << seed << " iteration " << iter << ": N=" << n << " rf=" << rf << " partitions=" << parts
                 << " start=" << start.start_index << " shift=" << start.replica_shift);

    auto a = place(brokers, parts, rf, start);
    REQUIRE(a.size() == static_cast<std::size_t>(parts));
    std::map<raw_broker, int> leaders, replicas_held;
    std::int32_t expected_p = 0;
    for (const auto& [p, r] : a) {
      REQUIRE(p == partition_id{expected_p++});
      REQUIRE(r.size() == static_cast<std::size_t>(rf));
      REQUIRE(std::set<raw_broker>(r.begin(), r.end()).size() == r.size());  // rf distinct brokers
      for (raw_broker b : r) REQUIRE(ids.count(b) == 1);
      ++leaders[r.front()];
      for (raw_broker b : r) ++replicas_held[b];
    }
    // Preferred leaders are dealt round robin: counts differ by at most one, and are exactly
    // partitions / N each when partitions is a multiple of N.
    int lo = parts, hi = 0;
    for (raw_broker b : brokers) {
      lo = std::min(lo, leaders[b]);
      hi = std::max(hi, leaders[b]);
    }
    CHECK(hi - lo <= 1);
    if (whole_rounds) {
      CHECK(lo == parts / n);
      CHECK(hi == parts / n);
      // Each round puts every follower slot on every broker once: replicas are even too.
      for (raw_broker b : brokers) CHECK(replicas_held[b] == rounds * rf);
    }
    // Relabelling: placement only picks list positions, so placing 0..N-1 and mapping each
    // index through the list gives the same answer.
    auto by_index = place(iota_brokers(n), parts, rf, start);
    for (const auto& [p, r] : by_index) {
      replicas mapped;
      for (raw_broker i : r) mapped.push_back(brokers[static_cast<std::size_t>(i)]);
      REQUIRE(mapped == a.at(p));
    }
    // Kafka's goal 2 (a broker's partitions spread their other replicas over the other
    // brokers): the same leader one round later gets a different first follower when N > 2.
    if (n > 2 && rf > 1 && parts >= 2 * n) {
      for (std::int32_t p = 0; p + n < parts; ++p) CHECK(a.at(partition_id{p})[1] != a.at(partition_id{p + n})[1]);
    }
  }
}

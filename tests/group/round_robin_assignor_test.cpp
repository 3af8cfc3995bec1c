// round_robin_assignor: Kafka's RoundRobinAssignor Javadoc and RoundRobinAssignorTest
// cases, then seeded property tests over random groups.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include <brook/group/round_robin_assignor.hpp>

#include "assignor_support.hpp"

using namespace brook;
using namespace brook::test;

TEST_CASE("roundrobin: name and protocol", "[group][roundrobin]") {
  round_robin_assignor a;
  CHECK(a.name() == "roundrobin");
  CHECK(a.protocol() == rebalance_protocol::eager);
}

TEST_CASE("roundrobin: Kafka's examples", "[group][roundrobin]") {
  round_robin_assignor a;

  SECTION("Javadoc: identical subscriptions") {
    auto r = a.assign({{"t0", 3}, {"t1", 3}}, {member("C1", {"t0", "t1"}), member("C0", {"t0", "t1"})});
    CHECK(r == group_assignment{{"C0", {tp("t0", 0), tp("t0", 2), tp("t1", 1)}},
                                {"C1", {tp("t0", 1), tp("t1", 0), tp("t1", 2)}}});
  }
  SECTION("Javadoc: different subscriptions") {
    auto r = a.assign({{"t0", 1}, {"t1", 2}, {"t2", 3}},
                      {member("C0", {"t0"}), member("C1", {"t0", "t1"}), member("C2", {"t0", "t1", "t2"})});
    CHECK(r == group_assignment{{"C0", {tp("t0", 0)}},
                                {"C1", {tp("t1", 0)}},
                                {"C2", {tp("t1", 1), tp("t2", 0), tp("t2", 1), tp("t2", 2)}}});
  }
  SECTION("RoundRobinAssignorTest.testOneConsumerNoTopic / NonexistentTopic / OneTopic") {
    CHECK(a.assign({}, {member("c", {})}) == group_assignment{{"c", {}}});
    CHECK(a.assign({}, {member("c", {"topic"})}) == group_assignment{{"c", {}}});
    CHECK(a.assign({{"topic", 3}, {"other", 3}}, {member("c", {"topic"})}) ==
          group_assignment{{"c", {tp("topic", 0), tp("topic", 1), tp("topic", 2)}}});
  }
  SECTION("testMultipleConsumersMixedTopics") {
    auto r = a.assign(
        {{"topic1", 3}, {"topic2", 2}},
        {member("consumer1", {"topic1"}), member("consumer2", {"topic1", "topic2"}), member("consumer3", {"topic1"})});
    CHECK(r == group_assignment{{"consumer1", {tp("topic1", 0)}},
                                {"consumer2", {tp("topic1", 1), tp("topic2", 0), tp("topic2", 1)}},
                                {"consumer3", {tp("topic1", 2)}}});
  }
  SECTION("testTwoConsumersTwoTopicsSixPartitions") {
    auto r = a.assign({{"topic1", 3}, {"topic2", 3}},
                      {member("consumer1", {"topic1", "topic2"}), member("consumer2", {"topic1", "topic2"})});
    CHECK(r == group_assignment{{"consumer1", {tp("topic1", 0), tp("topic1", 2), tp("topic2", 1)}},
                                {"consumer2", {tp("topic1", 1), tp("topic2", 0), tp("topic2", 2)}}});
  }
  SECTION("the cursor continues across topics (CircularIterator)") {
    // 3 members, t0 has 4 partitions: the cursor ends after c0, so t1 starts at c1.
    auto r = a.assign({{"t0", 4}, {"t1", 2}},
                      {member("c0", {"t0", "t1"}), member("c1", {"t0", "t1"}), member("c2", {"t0", "t1"})});
    CHECK(r == group_assignment{{"c0", {tp("t0", 0), tp("t0", 3)}},
                                {"c1", {tp("t0", 1), tp("t1", 0)}},
                                {"c2", {tp("t0", 2), tp("t1", 1)}}});
  }
  SECTION("static members first, by group.instance.id") {
    auto s = member("z", {"t"});
    s.group_instance_id = "i";
    auto r = a.assign({{"t", 3}}, {member("a", {"t"}), s});
    CHECK(r == group_assignment{{"z", {tp("t", 0), tp("t", 2)}}, {"a", {tp("t", 1)}}});
  }
}

TEST_CASE("roundrobin: the circle in Java's String order (UTF-16 code units)", "[group][roundrobin]") {
  // Issue 11 (#23): "\U0001F600" (0xD83D 0xDE00) comes before "\uFF71" in Java, after it in bytes.
  round_robin_assignor a;
  const std::string grin = "\U0001F600", kana = "\uFF71";
  const auto r = a.assign({{"t", 3}}, {member(kana, {"t"}), member(grin, {"t"})});
  CHECK(r == group_assignment{{grin, {tp("t", 0), tp("t", 2)}}, {kana, {tp("t", 1)}}});
}

TEST_CASE("roundrobin: properties over random groups", "[group][roundrobin][property]") {
  round_robin_assignor a;
  const std::uint32_t base_seed = 0x726f626e;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    const std::uint32_t seed = base_seed + i;
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    auto g = make_random_group(rng, i % 2 == 0, i % 3 == 0);
    const auto r = a.assign(g.partitions, g.members);
    INFO(to_string(r));
    REQUIRE(check_valid(g.partitions, g.members, r).empty());
    if (equal_subscriptions(g.members)) REQUIRE(total_spread(r) <= 1);
    auto shuffled = g.members;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    REQUIRE(a.assign(g.partitions, shuffled) == r);
  }
}

// range_assignor: Kafka's RangeAssignor Javadoc and RangeAssignorTest cases, then
// seeded property tests over random groups.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include <brook/group/range_assignor.hpp>

#include "assignor_support.hpp"

using namespace brook;
using namespace brook::test;

TEST_CASE("range: name and protocol", "[group][range]") {
  range_assignor a;
  CHECK(a.name() == "range");
  CHECK(a.protocol() == rebalance_protocol::eager);
}

TEST_CASE("range: Kafka's examples", "[group][range]") {
  range_assignor a;

  SECTION("Javadoc: C0, C1; t0, t1 with 3 partitions each") {
    auto r = a.assign({{"t0", 3}, {"t1", 3}}, {member("C0", {"t0", "t1"}), member("C1", {"t0", "t1"})});
    CHECK(r == group_assignment{{"C0", {tp("t0", 0), tp("t0", 1), tp("t1", 0), tp("t1", 1)}},
                                {"C1", {tp("t0", 2), tp("t1", 2)}}});
  }
  SECTION("RangeAssignorTest.testOneConsumerNoTopic / NonexistentTopic") {
    CHECK(a.assign({}, {member("c", {})}) == group_assignment{{"c", {}}});
    CHECK(a.assign({}, {member("c", {"topic"})}) == group_assignment{{"c", {}}});
  }
  SECTION("testOneConsumerOneTopic / testOnlyAssignsPartitionsFromSubscribedTopics") {
    auto r = a.assign({{"topic", 3}, {"other", 3}}, {member("c", {"topic"})});
    CHECK(r == group_assignment{{"c", {tp("topic", 0), tp("topic", 1), tp("topic", 2)}}});
  }
  SECTION("testOneConsumerMultipleTopics") {
    auto r = a.assign({{"topic1", 1}, {"topic2", 2}}, {member("c", {"topic1", "topic2"})});
    CHECK(r == group_assignment{{"c", {tp("topic1", 0), tp("topic2", 0), tp("topic2", 1)}}});
  }
  SECTION("testTwoConsumersOneTopicOnePartition / TwoPartitions") {
    CHECK(a.assign({{"t", 1}}, {member("c2", {"t"}), member("c1", {"t"})}) ==
          group_assignment{{"c1", {tp("t", 0)}}, {"c2", {}}});
    CHECK(a.assign({{"t", 2}}, {member("c2", {"t"}), member("c1", {"t"})}) ==
          group_assignment{{"c1", {tp("t", 0)}}, {"c2", {tp("t", 1)}}});
  }
  SECTION("testMultipleConsumersMixedTopics") {
    auto r = a.assign(
        {{"topic1", 3}, {"topic2", 2}},
        {member("consumer1", {"topic1"}), member("consumer2", {"topic1", "topic2"}), member("consumer3", {"topic1"})});
    CHECK(r == group_assignment{{"consumer1", {tp("topic1", 0)}},
                                {"consumer2", {tp("topic1", 1), tp("topic2", 0), tp("topic2", 1)}},
                                {"consumer3", {tp("topic1", 2)}}});
  }
  SECTION("static members sort by group.instance.id, before dynamic members") {
    auto s1 = member("z-consumer", {"t1", "t2"});
    s1.group_instance_id = "instance1";
    auto s2 = member("a-consumer", {"t1", "t2"});
    s2.group_instance_id = "instance2";
    auto dyn = member("0-dynamic", {"t1", "t2"});
    auto r = a.assign({{"t1", 3}, {"t2", 3}}, {s2, dyn, s1});
    CHECK(r == group_assignment{{"z-consumer", {tp("t1", 0), tp("t2", 0)}},
                                {"a-consumer", {tp("t1", 1), tp("t2", 1)}},
                                {"0-dynamic", {tp("t1", 2), tp("t2", 2)}}});
    // testStaticMemberRangeAssignmentPersistent: new member ids, same instance ids -> same partitions.
    s1.member_id = "b-new";
    s2.member_id = "a-new";
    auto again = a.assign({{"t1", 3}, {"t2", 3}}, {s1, s2, dyn});
    CHECK(again.at("b-new") == r.at("z-consumer"));
    CHECK(again.at("a-new") == r.at("a-consumer"));
  }
}

TEST_CASE("range: members in Java's String order (UTF-16 code units), not byte order", "[group][range]") {
  // Issue 11 (#23). Java: "\uD83D\uDE00".compareTo("\uFF71") < 0, as 0xD83D < 0xFF71; in
  // UTF-8 bytes (F0 9F 98 80 against EF BD B1) the order is the other way round.
  range_assignor a;
  const std::string grin = "\U0001F600", kana = "\uFF71";
  SECTION("member ids") {
    const auto r = a.assign({{"t", 1}}, {member(kana, {"t"}), member(grin, {"t"})});
    CHECK(r == group_assignment{{grin, {tp("t", 0)}}, {kana, {}}});
  }
  SECTION("member ids with a shared client.id prefix") {
    const auto r = a.assign({{"t", 1}}, {member("app-" + kana + "-1", {"t"}), member("app-" + grin + "-2", {"t"})});
    CHECK(r.at("app-" + grin + "-2") == std::vector<topic_partition>{tp("t", 0)});
  }
  SECTION("group.instance.ids") {
    auto s1 = member("a", {"t"}), s2 = member("b", {"t"});
    s1.group_instance_id = kana;
    s2.group_instance_id = grin;
    const auto r = a.assign({{"t", 1}}, {s1, s2});
    CHECK(r == group_assignment{{"a", {}}, {"b", {tp("t", 0)}}});
  }
}

TEST_CASE("range: properties over random groups", "[group][range][property]") {
  range_assignor a;
  const std::uint32_t base_seed = 0x72616e67;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    const std::uint32_t seed = base_seed + i;
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    auto g = make_random_group(rng, i % 3 == 0, i % 2 == 0);
    const auto r = a.assign(g.partitions, g.members);
    INFO(to_string(r));
    REQUIRE(check_valid(g.partitions, g.members, r).empty());

    // Per topic, subscribers' counts within one; extra partitions go to the first in member-id order.
    for (const auto& [topic, count] : g.partitions) {
      std::vector<std::string> subs;
      for (const auto& m : g.members)
        if (std::find(m.topics.begin(), m.topics.end(), topic) != m.topics.end()) subs.push_back(m.member_id);
      std::sort(subs.begin(), subs.end());
      std::size_t prev = SIZE_MAX;
      for (const auto& s : subs) {
        const auto n = static_cast<std::size_t>(
            std::count_if(r.at(s).begin(), r.at(s).end(), [&](const topic_partition& x) { return x.topic == topic; }));
        REQUIRE(n <= prev);
        if (prev != SIZE_MAX) REQUIRE(prev - n <= 1);
        REQUIRE((n == static_cast<std::size_t>(count) / subs.size() ||
                 n == static_cast<std::size_t>(count) / subs.size() + 1));
        prev = n;
      }
    }

    auto shuffled = g.members;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    REQUIRE(a.assign(g.partitions, shuffled) == r);
  }
}

// cooperative_sticky_assignor: KIP-429 hand-over, checked against the sticky target on
// examples, seeded random groups and seeded sequences of group changes, with the number of
// follow-up rounds the header states.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/group/cooperative_sticky_assignor.hpp>
#include <brook/group/sticky_assignor.hpp>

#include "assignor_support.hpp"

using namespace brook;
using namespace brook::test;

TEST_CASE("cooperative-sticky: name and protocol", "[group][cooperative]") {
  cooperative_sticky_assignor a;
  CHECK(a.name() == "cooperative-sticky");
  CHECK(a.protocol() == rebalance_protocol::cooperative);
}

TEST_CASE("cooperative-sticky: a joining member gets moved partitions one rebalance later", "[group][cooperative]") {
  cooperative_sticky_assignor a;
  sticky_assignor s;
  const partition_counts parts{{"t0", 4}};
  std::vector<member_subscription> group{member("C0", {"t0"}, {tp("t0", 0), tp("t0", 1), tp("t0", 2), tp("t0", 3)}, 1),
                                         member("C1", {"t0"})};
  CHECK(s.assign(parts, group) ==
        group_assignment{{"C0", {tp("t0", 0), tp("t0", 1)}}, {"C1", {tp("t0", 2), tp("t0", 3)}}});
  const auto first = a.assign(parts, group);
  CHECK(first == group_assignment{{"C0", {tp("t0", 0), tp("t0", 1)}}, {"C1", {}}});
  const auto second = a.assign(parts, with_owned(group, first, 2));
  CHECK(second == group_assignment{{"C0", {tp("t0", 0), tp("t0", 1)}}, {"C1", {tp("t0", 2), tp("t0", 3)}}});
}

TEST_CASE("cooperative-sticky: Javadoc example 1, a member leaving moves nothing between owners",
          "[group][cooperative]") {
  cooperative_sticky_assignor a;
  const partition_counts parts{{"t0", 2}, {"t1", 2}, {"t2", 2}, {"t3", 2}};
  const std::vector<std::string> all{"t0", "t1", "t2", "t3"};
  auto r = a.assign(parts, {member("C0", all), member("C1", all), member("C2", all)});
  CHECK(r == group_assignment{{"C0", {tp("t0", 0), tp("t1", 1), tp("t3", 0)}},
                              {"C1", {tp("t0", 1), tp("t2", 0), tp("t3", 1)}},
                              {"C2", {tp("t1", 0), tp("t2", 1)}}});
  // C1's partitions are nobody's once it has left: assigned at once.
  auto after = a.assign(parts, {member("C0", all, r.at("C0"), 1), member("C2", all, r.at("C2"), 1)});
  CHECK(after == group_assignment{{"C0", {tp("t0", 0), tp("t1", 1), tp("t2", 0), tp("t3", 0)}},
                                  {"C2", {tp("t0", 1), tp("t1", 0), tp("t2", 1), tp("t3", 1)}}});
}

namespace {

// Nothing given to a member while another member may still hold it: for every
// partition p in m's assignment, any other claimant has a lower generation than
// m's own claim, or is no longer subscribed to p's topic while m claims p.
std::string check_no_same_round_transfer(const std::vector<member_subscription>& members, const group_assignment& r) {
  for (const auto& m : members)
    for (const auto& x : r.at(m.member_id))
      for (const auto& o : members) {
        if (o.member_id == m.member_id) continue;
        if (std::find(o.owned_partitions.begin(), o.owned_partitions.end(), x) == o.owned_partitions.end()) continue;
        const bool m_claims =
            std::find(m.owned_partitions.begin(), m.owned_partitions.end(), x) != m.owned_partitions.end();
        const bool o_subscribed = std::find(o.topics.begin(), o.topics.end(), x.topic) != o.topics.end();
        if (!m_claims || (o_subscribed && o.generation >= m.generation))
          return fmt::format("{}p{} given to {} while {} still holds it", x.topic, x.partition.value(), m.member_id,
                             o.member_id);
      }
  return {};
}

// Everything a member holds in one cooperative round: what it owned at the join, until it
// revokes, and what it is given. No partition may be held by two members in one round.
std::string check_never_held_twice(const std::vector<member_subscription>& members, const group_assignment& r) {
  std::map<topic_partition, std::string> holder;
  for (const auto& m : members) {
    std::set<topic_partition> held(m.owned_partitions.begin(), m.owned_partitions.end());
    held.insert(r.at(m.member_id).begin(), r.at(m.member_id).end());
    for (const auto& x : held)
      if (auto [it, fresh] = holder.emplace(x, m.member_id); !fresh)
        return fmt::format("{}p{} held by {} and {} in one round", x.topic, x.partition.value(), it->second,
                           m.member_id);
  }
  return {};
}

// Whether a member must revoke something (owned, not assigned): then it rejoins and the
// group rebalances again (ConsumerCoordinator.onJoinComplete, KIP-429).
bool revokes(const std::vector<member_subscription>& members, const group_assignment& r) {
  for (const auto& m : members) {
    const auto& mine = r.at(m.member_id);
    for (const auto& x : m.owned_partitions)
      if (std::find(mine.begin(), mine.end(), x) == mine.end()) return true;
  }
  return false;
}

// The rounds of one rebalance: the first assignment, then follow-up rounds (every member
// reporting what it now owns, one generation later) until a round revokes nothing.
struct cooperative_run {
  group_assignment first;
  group_assignment stable;  // the assignment of the round that revokes nothing
  int follow_ups = 0;       // rounds after the first
  std::string error;        // a broken invariant, or empty
};

constexpr int max_rounds_tried = 20;

// owned_consistent: the members' owned_partitions are one earlier round's result (no
// partition listed twice), so check_never_held_twice applies from the first round on.
cooperative_run run_cooperative(assignor& a, const partition_counts& parts, std::vector<member_subscription> members,
                                std::int32_t& generation, bool owned_consistent) {
  cooperative_run out;
  for (int round = 0;; ++round) {
    if (round == max_rounds_tried) {
      out.error = fmt::format("no stable round after {} follow-ups", round - 1);
      return out;
    }
    const auto r = a.assign(parts, members);
    if (round == 0) out.first = r;
    if (auto e = check_no_same_round_transfer(members, r); !e.empty()) out.error = e;
    if (round > 0 || owned_consistent)
      if (auto e = check_never_held_twice(members, r); out.error.empty() && !e.empty()) out.error = e;
    if (!out.error.empty()) {
      out.error = fmt::format("round {}: {}\nassignment:\n{}", round, out.error, to_string(r));
      return out;
    }
    ++generation;
    if (!revokes(members, r)) {
      out.stable = r;
      out.follow_ups = round;
      return out;
    }
    members = with_owned(std::move(members), r, generation);
  }
}

// Follow-up rounds as cooperative_sticky_assignor.hpp states them: identical subscriptions
// need at most one (always); with different ones no bound holds in general, but the seeded
// cases here need at most three.
constexpr int follow_ups_equal_subscriptions = 1;
constexpr int follow_ups_observed_different = 3;

}  // namespace

TEST_CASE("cooperative-sticky: properties over random groups", "[group][cooperative][property]") {
  cooperative_sticky_assignor a;
  sticky_assignor s;
  const std::uint32_t base_seed = 0x636f6f70;
  std::size_t general_groups = 0, general_exact = 0;
  std::map<int, int> follow_ups_seen;  // follow-up rounds -> groups, different subscriptions
  for (std::uint32_t i = 0; i < 2000; ++i) {
    const std::uint32_t seed = base_seed + i;
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    auto g = make_random_group(rng, i % 2 == 0, true);
    const bool equal = equal_subscriptions(g.members);
    const auto target = s.assign(g.partitions, g.members);
    const auto first = a.assign(g.partitions, g.members);
    INFO("target:\n" << to_string(target) << "first:\n" << to_string(first));

    // The first round is the target minus partitions changing hands.
    for (const auto& [m, list] : first)
      REQUIRE(std::includes(target.at(m).begin(), target.at(m).end(), list.begin(), list.end()));
    REQUIRE(check_no_same_round_transfer(g.members, first).empty());

    auto shuffled = g.members;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    REQUIRE(a.assign(g.partitions, shuffled) == first);

    // The follow-up round (members report what they now own).
    const auto next = with_owned(g.members, first, 7);
    const auto second = a.assign(g.partitions, next);
    INFO("second:\n" << to_string(second));
    REQUIRE(check_no_same_round_transfer(next, second).empty());
    if (equal) {
      REQUIRE(second == target);
      continue;
    }
    // Balancing may pick other partitions in the follow-up round, which then need one more
    // hand-over; every round is hand-over safe and the rounds converge.
    ++general_groups;
    if (second == target) ++general_exact;
    std::int32_t generation = 7;
    const auto run = run_cooperative(a, g.partitions, g.members, generation, false);
    INFO(run.error);
    REQUIRE(run.error.empty());
    ++follow_ups_seen[run.follow_ups];
    REQUIRE(run.follow_ups <= follow_ups_observed_different);
    REQUIRE(check_valid(g.partitions, g.members, run.stable).empty());
    REQUIRE(check_locally_balanced(g.members, run.stable).empty());
    REQUIRE(s.assign(g.partitions, with_owned(g.members, run.stable, 99)) == run.stable);
  }
  std::string histogram;
  for (const auto& [n, groups] : follow_ups_seen) histogram += fmt::format(" {}:{}", n, groups);
  WARN("cooperative, different subscriptions: follow-up round equal to the first target in "
       << general_exact << " of " << general_groups << " groups; follow-up rounds -> groups:" << histogram);
}

TEST_CASE("cooperative-sticky: follow-up rounds over random sequences of group changes",
          "[group][cooperative][property]") {
  // Issue 11 (#24). Each sequence starts empty and applies changes one at a time (a member
  // joins or leaves, changes its subscription, a topic grows or appears); after each, the
  // group rebalances until a round revokes nothing. Checked in every round: nothing is held
  // by two members. Checked at the stable round: valid, balanced, sticky. The number of
  // follow-up rounds must stay within what cooperative_sticky_assignor.hpp states.
  cooperative_sticky_assignor a;
  sticky_assignor s;
  const std::uint32_t base_seed = 0x73657173;
  const std::vector<std::string> id_prefixes{"c", "consumer", "\U0001F600", "\uFF71", "\u00e9"};
  std::map<int, int> seen_equal, seen_different;  // follow-up rounds -> rebalances
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const std::uint32_t seed = base_seed + i;
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const bool equal_mode = i % 3 == 0;  // every member always subscribes to the same topics
    partition_counts parts;
    const int n_topics = uniform(1, 6);
    std::vector<std::string> topics;  // existing ones, and sometimes one not created yet
    for (int t = 0; t < n_topics; ++t) topics.push_back(fmt::format("t{}", t)), parts[topics.back()] = uniform(1, 16);
    topics.push_back("later");
    auto random_topics = [&] {
      std::vector<std::string> out;
      for (const auto& t : topics)
        if (uniform(0, 2) == 0) out.push_back(t);
      if (out.empty()) out.push_back(topics[static_cast<std::size_t>(uniform(0, n_topics - 1))]);
      return out;
    };
    std::vector<std::string> shared = random_topics();
    std::vector<member_subscription> members;
    int next_id = 0;
    std::int32_t generation = 0;
    group_assignment current;
    for (int step = 0; step < 16; ++step) {
      const int event = members.empty() ? 0 : uniform(0, 5);  // joins twice as likely: groups grow
      std::string what;
      if (event == 0 || event == 5 || (event == 1 && members.size() == 1)) {
        const auto& prefix = id_prefixes[static_cast<std::size_t>(uniform(0, 4))];
        members.push_back(member(fmt::format("{}-{:02}-{}", prefix, uniform(0, 99), next_id++),
                                 equal_mode ? shared : random_topics()));
        what = "join " + members.back().member_id;
      } else if (event == 1) {
        const auto k = static_cast<std::size_t>(uniform(0, static_cast<int>(members.size()) - 1));
        what = "leave " + members[k].member_id;
        members.erase(members.begin() + static_cast<std::ptrdiff_t>(k));
      } else if (event == 2) {
        if (equal_mode) {
          shared = random_topics();
          for (auto& m : members) m.topics = shared;
          what = "everyone resubscribes";
        } else {
          auto& m = members[static_cast<std::size_t>(uniform(0, static_cast<int>(members.size()) - 1))];
          m.topics = random_topics();
          what = "resubscribe " + m.member_id;
        }
      } else if (event == 3) {
        auto& count = parts[topics[static_cast<std::size_t>(uniform(0, n_topics - 1))]];
        count += uniform(1, 8);
        what = "a topic grows";
      } else {
        parts["later"] = uniform(1, 8);
        what = "topic 'later' exists";
      }
      INFO("step " << step << ": " << what);
      const bool equal = equal_subscriptions(members);
      const auto target = s.assign(parts, members);
      const auto run = run_cooperative(a, parts, members, generation, true);
      INFO(run.error);
      REQUIRE(run.error.empty());
      INFO("first:\n" << to_string(run.first) << "stable:\n" << to_string(run.stable));
      REQUIRE(check_valid(parts, members, run.stable).empty());
      REQUIRE(check_locally_balanced(members, run.stable).empty());
      REQUIRE(s.assign(parts, with_owned(members, run.stable, generation)) == run.stable);
      if (equal) {
        ++seen_equal[run.follow_ups];
        REQUIRE(run.follow_ups <= follow_ups_equal_subscriptions);
        REQUIRE(run.stable == target);
      } else {
        ++seen_different[run.follow_ups];
        REQUIRE(run.follow_ups <= follow_ups_observed_different);
      }
      current = run.stable;
      members = with_owned(std::move(members), current, generation);
    }
  }
  auto histogram = [](const std::map<int, int>& seen) {
    std::string out;
    for (const auto& [n, rebalances] : seen) out += fmt::format(" {}:{}", n, rebalances);
    return out;
  };
  WARN("follow-up rounds -> rebalances; identical subscriptions:" << histogram(seen_equal)
                                                                  << "; different:" << histogram(seen_different));
  // The header states that one follow-up round is not always enough with different
  // subscriptions; these sequences show it (a change making that false must update the header).
  CHECK(std::any_of(seen_different.begin(), seen_different.end(), [](const auto& kv) { return kv.first > 1; }));
}

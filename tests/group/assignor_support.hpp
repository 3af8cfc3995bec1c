// Helpers for the assignor tests: compact builders, a seeded random group
// generator and the invariants every assignor must keep.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/group/assignor.hpp>

namespace brook::test {

using partition_counts = std::map<std::string, std::int32_t>;

inline topic_partition tp(const std::string& topic, std::int32_t p) { return topic_partition{topic, partition_id{p}}; }

inline member_subscription member(std::string id, std::vector<std::string> topics,
                                  std::vector<topic_partition> owned = {}, std::int32_t generation = -1) {
  member_subscription m;
  m.member_id = std::move(id);
  m.topics = std::move(topics);
  m.owned_partitions = std::move(owned);
  m.generation = generation;
  return m;
}

inline std::string to_string(const group_assignment& a) {
  std::string out;
  for (const auto& [m, list] : a) {
    out += m + ": [";
    for (std::size_t i = 0; i < list.size(); ++i)
      out += fmt::format("{}{}p{}", i ? ", " : "", list[i].topic, list[i].partition.value());
    out += "]\n";
  }
  return out;
}

/// A random group: 1..20 members, 1..8 topics with 1..30 partitions.
struct random_group {
  partition_counts partitions;
  std::vector<member_subscription> members;
};

inline random_group make_random_group(std::mt19937& rng, bool equal_subscriptions, bool random_ownership) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  random_group g;
  const int n_topics = uniform(1, 8);
  std::vector<std::string> all;
  for (int t = 0; t < n_topics; ++t) {
    all.push_back(fmt::format("t{}", t));
    g.partitions[all.back()] = uniform(1, 30);
  }
  if (uniform(0, 4) == 0) all.push_back("missing");  // subscribed but without metadata: ignored
  const int n_members = uniform(1, 20);
  std::vector<std::string> shared;
  for (const auto& t : all)
    if (uniform(0, 1)) shared.push_back(t);
  if (shared.empty()) shared.push_back(all.front());
  for (int i = 0; i < n_members; ++i) {
    member_subscription m;
    m.member_id = fmt::format("member-{:02}-{}", uniform(0, 99), i);  // unique, not in index order
    if (equal_subscriptions) {
      m.topics = shared;
    } else {
      for (const auto& t : all)
        if (uniform(0, 2) == 0) m.topics.push_back(t);
      if (m.topics.empty()) m.topics.push_back(all[static_cast<std::size_t>(uniform(0, n_topics - 1))]);
    }
    g.members.push_back(std::move(m));
  }
  if (random_ownership) {
    // Each partition: usually one previous owner, sometimes none or two (stale generation).
    for (const auto& [topic, count] : g.partitions)
      for (std::int32_t p = 0; p < count; ++p) {
        const int owners = uniform(0, 9) == 0 ? 0 : (uniform(0, 9) == 0 ? 2 : 1);
        for (int k = 0; k < owners; ++k)
          g.members[static_cast<std::size_t>(uniform(0, n_members - 1))].owned_partitions.push_back(tp(topic, p));
      }
    for (auto& m : g.members) m.generation = uniform(0, 3) == 0 ? -1 : uniform(1, 3);
  }
  return g;
}

/// Every partition of a topic someone subscribes to goes to exactly one subscribed
/// member; nothing else is assigned; every member is present; lists sorted.
/// Returns an empty string when valid, else what is wrong.
inline std::string check_valid(const partition_counts& partitions, const std::vector<member_subscription>& members,
                               const group_assignment& a) {
  if (a.size() != members.size()) return fmt::format("{} members in result, {} in group", a.size(), members.size());
  std::map<topic_partition, int> seen;
  for (const auto& m : members) {
    const auto it = a.find(m.member_id);
    if (it == a.end()) return fmt::format("member {} missing", m.member_id);
    const std::set<std::string> subs(m.topics.begin(), m.topics.end());
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const auto& x = it->second[i];
      if (i > 0 && !(it->second[i - 1] < x)) return fmt::format("{}: list not sorted", m.member_id);
      if (!subs.contains(x.topic))
        return fmt::format("{} got {}p{} without subscribing", m.member_id, x.topic, x.partition.value());
      const auto pc = partitions.find(x.topic);
      if (pc == partitions.end() || x.partition.value() < 0 || x.partition.value() >= pc->second)
        return fmt::format("{} got nonexistent {}p{}", m.member_id, x.topic, x.partition.value());
      ++seen[x];
    }
  }
  std::set<std::string> subscribed;
  for (const auto& m : members) subscribed.insert(m.topics.begin(), m.topics.end());
  for (const auto& [topic, count] : partitions) {
    if (!subscribed.contains(topic)) continue;
    for (std::int32_t p = 0; p < count; ++p) {
      const int n = seen.contains(tp(topic, p)) ? seen[tp(topic, p)] : 0;
      if (n != 1) return fmt::format("{}p{} assigned {} times", topic, p, n);
    }
  }
  return {};
}

/// Whether all members subscribe to the same set of topics.
inline bool equal_subscriptions(const std::vector<member_subscription>& members) {
  for (const auto& m : members)
    if (std::set<std::string>(m.topics.begin(), m.topics.end()) !=
        std::set<std::string>(members.front().topics.begin(), members.front().topics.end()))
      return false;
  return true;
}

/// Max minus min of the members' totals.
inline std::size_t total_spread(const group_assignment& a) {
  std::size_t lo = SIZE_MAX, hi = 0;
  for (const auto& [m, list] : a) lo = std::min(lo, list.size()), hi = std::max(hi, list.size());
  return a.empty() ? 0 : hi - lo;
}

/// Kafka's isBalanced: no partition sits with a member while another member subscribed
/// to its topic has at least two fewer partitions.
inline std::string check_locally_balanced(const std::vector<member_subscription>& members, const group_assignment& a) {
  for (const auto& m : members)
    for (const auto& x : a.at(m.member_id))
      for (const auto& o : members) {
        if (std::find(o.topics.begin(), o.topics.end(), x.topic) == o.topics.end()) continue;
        if (a.at(o.member_id).size() + 1 < a.at(m.member_id).size())
          return fmt::format("{}p{} with {} ({}), {} subscribed with {}", x.topic, x.partition.value(), m.member_id,
                             a.at(m.member_id).size(), o.member_id, a.at(o.member_id).size());
      }
  return {};
}

/// The members with owned_partitions set to `a` and the given generation.
inline std::vector<member_subscription> with_owned(std::vector<member_subscription> members, const group_assignment& a,
                                                   std::int32_t generation) {
  for (auto& m : members) {
    m.owned_partitions = a.at(m.member_id);
    m.generation = generation;
  }
  return members;
}

}  // namespace brook::test

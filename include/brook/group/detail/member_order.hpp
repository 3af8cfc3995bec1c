// Internals shared by the assignors: member orderings and the empty result.
//
// Ids compare as Java's String.compareTo does (UTF-16 code units, group/detail/java_string_order.hpp),
// since member ids (client.id-UUID) and group.instance.ids can be any UTF-8.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <brook/core/assert.hpp>
#include <brook/group/assignor.hpp>
#include <brook/group/detail/java_string_order.hpp>

namespace brook::detail {

/// Kafka's AbstractPartitionAssignor.MemberInfo order: static members (with a
/// group.instance.id) first, by instance id; then dynamic members by member id; ids in
/// Java's String order.
/// Equal instance ids (a misconfiguration) fall back to the member id so the
/// order stays total and independent of the input order.
inline bool member_info_less(const member_subscription* a, const member_subscription* b) {
  if (a->group_instance_id && b->group_instance_id) {
    if (*a->group_instance_id != *b->group_instance_id)
      return java_string_less(*a->group_instance_id, *b->group_instance_id);
    return java_string_less(a->member_id, b->member_id);
  }
  if (a->group_instance_id) return true;
  if (b->group_instance_id) return false;
  return java_string_less(a->member_id, b->member_id);
}

/// Pointers to `members` sorted by member id in Java's String order. REQUIRES: member ids unique (asserted).
inline std::vector<const member_subscription*> sorted_by_member_id(const std::vector<member_subscription>& members) {
  std::vector<const member_subscription*> out;
  out.reserve(members.size());
  for (const auto& m : members) out.push_back(&m);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return java_string_less(a->member_id, b->member_id); });
  for (std::size_t i = 1; i < out.size(); ++i)
    BROOK_ASSERT(out[i - 1]->member_id != out[i]->member_id, "duplicate member id '{}' in group", out[i]->member_id);
  return out;
}

/// Pointers to `members` in MemberInfo order (member_info_less). REQUIRES: member ids unique (asserted).
inline std::vector<const member_subscription*> sorted_by_member_info(const std::vector<member_subscription>& members) {
  auto out = sorted_by_member_id(members);
  std::stable_sort(out.begin(), out.end(), member_info_less);
  return out;
}

/// An assignment with an empty list for every member.
inline group_assignment empty_assignment(const std::vector<member_subscription>& members) {
  group_assignment out;
  for (const auto& m : members) out.emplace(m.member_id, std::vector<topic_partition>{});
  return out;
}

/// Whether `m` subscribes to `topic` (linear: subscriptions are short).
inline bool subscribes(const member_subscription& m, const std::string& topic) {
  return std::find(m.topics.begin(), m.topics.end(), topic) != m.topics.end();
}

}  // namespace brook::detail

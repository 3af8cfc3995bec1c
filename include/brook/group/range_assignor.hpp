// Kafka's RangeAssignor ("range"): works topic by topic.
//
// For each topic, its partitions in numeric order and the members subscribed
// to it in MemberInfo order (static members by group.instance.id first, then
// the others by member id; ids compared as Java's String.compareTo does, by
// UTF-16 code units, so "\U0001F600" comes before "\uFF71"). With
// n = partitions / members and m = partitions % members, the first m members
// get n + 1 consecutive partitions and the rest n.
//
// Example (RangeAssignor Javadoc): members C0, C1, topics t0, t1 with 3
// partitions each:
//   C0: [t0p0, t0p1, t1p0, t1p1]
//   C1: [t0p2, t1p2]
// The first members of every topic get the extra partition, so across many
// topics the totals can differ by more than one; per topic they are within one.
//
// Thread-safety: stateless; assign() may be called from many threads at once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <brook/group/assignor.hpp>
#include <brook/group/detail/member_order.hpp>

namespace brook {

class range_assignor final : public assignor {
 public:
  std::string_view name() const override { return "range"; }

  group_assignment assign(const std::map<std::string, std::int32_t>& partitions_per_topic,
                          const std::vector<member_subscription>& members) override {
    group_assignment out = detail::empty_assignment(members);
    const auto ordered = detail::sorted_by_member_info(members);
    std::vector<const member_subscription*> consumers;
    for (const auto& [topic, count] : partitions_per_topic) {
      if (count <= 0) continue;
      consumers.clear();
      for (const auto* m : ordered)
        if (detail::subscribes(*m, topic)) consumers.push_back(m);
      if (consumers.empty()) continue;
      const auto n_consumers = static_cast<std::int32_t>(consumers.size());
      const std::int32_t per_consumer = count / n_consumers;
      const std::int32_t with_extra = count % n_consumers;
      std::int32_t next = 0;
      for (std::int32_t i = 0; i < n_consumers; ++i) {
        const std::int32_t length = per_consumer + (i < with_extra ? 1 : 0);
        auto& list = out[consumers[static_cast<std::size_t>(i)]->member_id];
        for (std::int32_t p = next; p < next + length; ++p) list.push_back(topic_partition{topic, partition_id{p}});
        next += length;
      }
    }
    // partitions_per_topic is iterated in topic order, so every list is already sorted.
    return out;
  }
};

}  // namespace brook

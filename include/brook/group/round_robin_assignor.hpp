// Kafka's RoundRobinAssignor ("roundrobin").
//
// All partitions of the subscribed topics are laid out sorted by topic, then
// partition; the members are put on a circle in MemberInfo order (static
// members by group.instance.id first, then the others by member id; ids in Java's
// String order, by UTF-16 code units). A cursor
// walks the circle: for each partition it skips members not subscribed to the
// partition's topic, gives the partition to the member under the cursor and
// moves the cursor one past it (Kafka's CircularIterator: peek/next).
//
// Example (RoundRobinAssignor Javadoc): C0, C1 subscribed to t0, t1 (3 partitions each):
//   C0: [t0p0, t0p2, t1p1]
//   C1: [t0p1, t1p0, t1p2]
// With identical subscriptions the totals are within one of each other; with
// different subscriptions they can be unbalanced (Javadoc: C0 {t0}, C1 {t0, t1},
// C2 {t0, t1, t2}, topics with 1, 2, 3 partitions -> C0 [t0p0], C1 [t1p0],
// C2 [t1p1, t2p0, t2p1, t2p2]).
//
// Thread-safety: stateless; assign() may be called from many threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <brook/group/assignor.hpp>
#include <brook/group/detail/member_order.hpp>

namespace brook {

class round_robin_assignor final : public assignor {
 public:
  std::string_view name() const override { return "roundrobin"; }

  group_assignment assign(const std::map<std::string, std::int32_t>& partitions_per_topic,
                          const std::vector<member_subscription>& members) override {
    group_assignment out = detail::empty_assignment(members);
    const auto circle = detail::sorted_by_member_info(members);
    std::set<std::string> topics;
    for (const auto& m : members) topics.insert(m.topics.begin(), m.topics.end());

    // One list per member, in circle order, to avoid a map lookup per partition.
    std::vector<std::vector<topic_partition>*> lists;
    lists.reserve(circle.size());
    for (const auto* m : circle) lists.push_back(&out[m->member_id]);

    std::size_t cursor = 0;
    for (const auto& topic : topics) {
      const auto it = partitions_per_topic.find(topic);
      if (it == partitions_per_topic.end() || it->second <= 0) continue;
      // Someone subscribes to `topic` (it came from a subscription), so the skip loop ends.
      std::vector<bool> subscribed(circle.size());
      for (std::size_t i = 0; i < circle.size(); ++i) subscribed[i] = detail::subscribes(*circle[i], topic);
      for (std::int32_t p = 0; p < it->second; ++p) {
        while (!subscribed[cursor]) cursor = (cursor + 1) % circle.size();
        lists[cursor]->push_back(topic_partition{topic, partition_id{p}});
        cursor = (cursor + 1) % circle.size();
      }
    }
    return out;
  }
};

}  // namespace brook

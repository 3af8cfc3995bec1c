// Kafka's CooperativeStickyAssignor ("cooperative-sticky", KIP-429).
//
// Computes the sticky_assignor target, then withholds for one rebalance every
// partition that changes hands: a partition whose previous owner (see
// sticky_assignor.hpp for how claims are resolved) differs from its target
// owner, or whose claim was contested or came only from a member no longer
// subscribed to its topic. The old owner, not finding it in its assignment,
// revokes it; because something was revoked, the group rebalances again
// (the consumer rejoins), and in that follow-up round the partition is unowned
// and goes to its target owner.
//
// Guarantee: with identical subscriptions, feeding the result back as every
// member's owned_partitions (same members, same topics) yields exactly the
// sticky target. With different subscriptions the follow-up round is a valid,
// balanced sticky assignment in which nothing changes hands in the same round,
// but it can differ from the first target (balancing may pick other partitions).
//
// Example: C0 owns t0p0..t0p3 (generation 1), C1 joins: the sticky target is
// C0 [t0p0, t0p1], C1 [t0p2, t0p3]; this assignor returns C0 [t0p0, t0p1], C1 [];
// the follow-up round returns the target.
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
#include <brook/group/detail/sticky_plan.hpp>

namespace brook {

class cooperative_sticky_assignor final : public assignor {
 public:
  std::string_view name() const override { return "cooperative-sticky"; }
  rebalance_protocol protocol() const override { return rebalance_protocol::cooperative; }

  group_assignment assign(const std::map<std::string, std::int32_t>& partitions_per_topic,
                          const std::vector<member_subscription>& members) override {
    auto plan = detail::plan_sticky(partitions_per_topic, members);
    if (plan.transferring.empty()) return std::move(plan.target);
    for (auto& [member, list] : plan.target)
      std::erase_if(list, [&](const topic_partition& tp) { return plan.transferring.contains(tp); });
    return std::move(plan.target);
  }
};

}  // namespace brook

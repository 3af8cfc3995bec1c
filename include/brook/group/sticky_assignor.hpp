// Kafka's StickyAssignor ("sticky", KIP-54), eager protocol.
//
// Two goals, in this order:
//   1. balance: with identical subscriptions every member gets floor(P/N) or
//      ceil(P/N) partitions; otherwise no partition sits with a member while
//      another member subscribed to its topic has at least two fewer
//      partitions (Kafka's AbstractStickyAssignor.isBalanced);
//   2. stickiness: as many partitions as possible stay with their previous owner.
//
// Previous owners come from owned_partitions. A partition claimed by several
// members goes to the claim with the highest generation (KIP-341: a member
// that missed a rebalance still reports its stale partitions); a tie at the
// highest generation makes the partition unowned, as Kafka 3.x does. Claims for
// topics the member no longer subscribes to are dropped.
//
// The algorithm (deterministic; members in member-id order, Java's String order by
// UTF-16 code units as Kafka's Collections.sort and TreeSet use, partitions in
// (topic, partition) order):
//   identical subscriptions (Kafka's constrainedAssign):
//     - each member keeps its owned partitions, at most min_quota = floor(P/N),
//       or max_quota = ceil(P/N) for the first P % N members that own that many;
//     - the remaining partitions — first those nobody owned, then those taken
//       from an owner — go one at a time to the least loaded member that may
//       still take one (ties: lowest member id).
//   different subscriptions (Kafka's generalAssign):
//     - every member keeps all its owned partitions;
//     - the rest go to the least loaded subscribed member, partitions of topics
//       with fewer subscribers first;
//     - then partitions move from a member to a subscribed member with at least
//       two fewer, preferring partitions that were not kept, until none can.
//
// Examples (StickyAssignor Javadoc), reproduced exactly:
//   C0, C1, C2 all subscribed to t0..t3 (2 partitions each):
//     C0 [t0p0, t1p1, t3p0], C1 [t0p1, t2p0, t3p1], C2 [t1p0, t2p1]
//   then C1 leaves: C0 [t0p0, t1p1, t2p0, t3p0], C2 [t0p1, t1p0, t2p1, t3p1]
//   (round robin would move 5 partitions instead of 2).
//   C0 {t0}, C1 {t0, t1}, C2 {t0, t1, t2}; t0, t1, t2 with 1, 2, 3 partitions:
//     C0 [t0p0], C1 [t1p0, t1p1], C2 [t2p0, t2p1, t2p2]
//   then C0 leaves: C1 [t0p0, t1p0, t1p1], C2 [t2p0, t2p1, t2p2].
//
// Differences from Kafka: Kafka walks members in HashMap order at several
// points, so its exact output for ties is not specified; brook always uses
// member-id order. The user data of the Java StickyAssignor (previous
// assignment serialised in the subscription) is replaced by owned_partitions
// and generation.
//
// Thread-safety: stateless; assign() may be called from many threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <brook/group/assignor.hpp>
#include <brook/group/detail/sticky_plan.hpp>

namespace brook {

class sticky_assignor final : public assignor {
 public:
  std::string_view name() const override { return "sticky"; }

  group_assignment assign(const std::map<std::string, std::int32_t>& partitions_per_topic,
                          const std::vector<member_subscription>& members) override {
    return detail::plan_sticky(partitions_per_topic, members).target;
  }
};

}  // namespace brook

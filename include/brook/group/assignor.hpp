// The partition assignor interface of consumer groups: given every member's
// subscription (and what it owns now), decide which partitions each member
// consumes. The group leader runs it during a rebalance (Kafka's
// ConsumerPartitionAssignor); brook ships Kafka's four built-in strategies
// under Kafka's names:
//
//   "range"               range_assignor               (per topic, contiguous ranges)
//   "roundrobin"          round_robin_assignor         (all partitions dealt in turn)
//   "sticky"              sticky_assignor              (balanced, keeps owners; eager)
//   "cooperative-sticky"  cooperative_sticky_assignor  (sticky, KIP-429 incremental)
//
// Kafka's default partition.assignment.strategy is [range, cooperative-sticky].
//
// Conventions shared by every assignor:
//   - partitions_per_topic holds every subscribed topic's partition count;
//     topics missing from it (or with a count <= 0) are ignored.
//   - every member appears in the result, possibly with an empty list; each
//     list is sorted by (topic, partition).
//   - the result depends only on the set of members, never on the order of
//     `members`. Member ids must be unique (checked with BROOK_ASSERT).
//
// Thread-safety: assignor implementations here are stateless; assign() may be
// called from many threads at once. A host's own assignor states its own contract.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <brook/core/types.hpp>

namespace brook {

/// How a group moves partitions between members (ConsumerPartitionAssignor.RebalanceProtocol).
/// eager: every member revokes everything before each rebalance.
/// cooperative (KIP-429): members keep what they own; a partition that moves is
/// revoked in one rebalance and assigned to its new owner in the next.
enum class rebalance_protocol { eager, cooperative };

/// One member's view sent to the group leader (ConsumerPartitionAssignor.Subscription).
struct member_subscription {
  std::string member_id;
  std::optional<std::string> group_instance_id;   ///< static membership (KIP-345); range and roundrobin sort by it
  std::vector<std::string> topics;                ///< subscribed topics
  std::vector<topic_partition> owned_partitions;  ///< what the member owns now (sticky / cooperative, KIP-429)
  std::int32_t generation = -1;                   ///< generation owned_partitions come from (KIP-341); -1 = unknown
};

/// member id -> its partitions, each list sorted by (topic, partition).
using group_assignment = std::map<std::string, std::vector<topic_partition>>;

/// A partition assignment strategy.
/// Thread-safety: see each implementation; the built-in ones are stateless.
class assignor {
 public:
  virtual ~assignor() = default;

  /// Kafka's name of the strategy: "range", "roundrobin", "sticky", "cooperative-sticky".
  virtual std::string_view name() const = 0;

  /// The rebalance protocol the strategy supports. Default: eager.
  virtual rebalance_protocol protocol() const { return rebalance_protocol::eager; }

  /// partitions_per_topic: every subscribed topic's partition count (topics missing here are ignored).
  /// Returns an entry for every member (possibly an empty list), each list sorted.
  virtual group_assignment assign(const std::map<std::string, std::int32_t>& partitions_per_topic,
                                  const std::vector<member_subscription>& members) = 0;
};

}  // namespace brook

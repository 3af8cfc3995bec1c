// What a group consumer tells its host when partitions move (Kafka's
// ConsumerRebalanceListener). Every callback runs on the thread that called
// group_consumer::poll() (or close()), inside that call, so it may use the consumer:
// commit in on_partitions_revoked, seek in on_partitions_assigned.
//
//   on_partitions_revoked   the member still owns the partitions and can commit their
//                           offsets; afterwards another member may consume them. Eager
//                           groups revoke everything before each rebalance; cooperative
//                           groups only what moves.
//   on_partitions_assigned  the partitions are the member's now; their positions come from
//                           the committed offsets (or auto.offset.reset) unless the callback
//                           seeks. A host that keeps its offsets with its results (the
//                           exactly-once pattern, docs/groups.md) seeks here to its own.
//   on_partitions_lost      the member was removed from the group (missed heartbeats, slow
//                           poll, fenced): the partitions may already be another member's,
//                           so committing is pointless. Default: on_partitions_revoked.
//
// Thread-safety: called on the consumer's thread only; an implementation shared between
// consumers synchronises itself.
#pragma once

#include <vector>

#include <brook/core/types.hpp>

namespace brook {

class rebalance_listener {
 public:
  virtual ~rebalance_listener() = default;
  virtual void on_partitions_revoked(const std::vector<topic_partition>& partitions) = 0;
  virtual void on_partitions_assigned(const std::vector<topic_partition>& partitions) = 0;
  virtual void on_partitions_lost(const std::vector<topic_partition>& partitions) { on_partitions_revoked(partitions); }
};

}  // namespace brook

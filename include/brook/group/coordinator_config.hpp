// The group coordinator's settings, with Kafka's broker config names and defaults.
// (brook::node, the embedded facade, changes two defaults for one process: see
// embedded/node.hpp.)
//
// Thread-safety: a value.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace brook {

struct coordinator_config {
  /// offsets.topic.num.partitions (used when the internal topic is created). Default 50.
  std::int32_t offsets_topic_num_partitions = 50;
  /// group.initial.rebalance.delay.ms: how long a new (Empty) group waits for more members. Default 3000.
  std::chrono::milliseconds group_initial_rebalance_delay{3000};
  /// group.min.session.timeout.ms / group.max.session.timeout.ms. Defaults 6000 / 1800000.
  std::chrono::milliseconds group_min_session_timeout{6000};
  std::chrono::milliseconds group_max_session_timeout{1800000};
  /// group.max.size. Default: unbounded (Kafka's default is Integer.MAX_VALUE).
  std::size_t group_max_size = static_cast<std::size_t>(INT32_MAX);
  /// offsets.retention.minutes. Default 10080 (7 days).
  std::chrono::minutes offsets_retention{10080};
  /// offsets.retention.check.interval.ms. Default 600000.
  std::chrono::milliseconds offsets_retention_check_interval{600000};
  /// offset.metadata.max.bytes. Default 4096.
  std::size_t offset_metadata_max_bytes = 4096;
  /// How often tick() looks for topic metadata changes when start() drives it. Default 1000.
  std::chrono::milliseconds metadata_check_interval{1000};
};

}  // namespace brook

// A committed offset: where a group resumes reading a partition, as Kafka's
// OffsetAndMetadata (the offset of the next record to read, the leader epoch of the last
// record read, and the host's free-form metadata), plus the time the coordinator stored
// it. The one type for an offset commit, an offset fetch and the coordinator's memory; the
// bytes in `__consumer_offsets` are offset_commit_value (group/offsets_topic_records.hpp).
//
// Thread-safety: a value.
#pragma once

#include <cstdint>
#include <string>

#include <brook/core/types.hpp>

namespace brook {

struct offset_and_metadata {
  offset off{0};                   ///< the next offset to read
  std::int32_t leader_epoch = -1;  ///< of the last record read; -1 = unknown
  std::string metadata{};          ///< at most offset.metadata.max.bytes (default 4096)
  timestamp_ms commit_timestamp =
      -1;  ///< when stored; in a commit, -1 = the coordinator's clock (OffsetCommit v1 may give one)
  friend bool operator==(const offset_and_metadata&, const offset_and_metadata&) = default;
};

}  // namespace brook

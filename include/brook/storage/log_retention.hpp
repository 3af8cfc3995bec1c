// Which of a log's oldest segments retention deletes (Kafka's deleteOldSegments):
//
//   by log start   the next segment starts at or below the log start offset (DeleteRecords
//                  or a checkpoint moved it): nothing in this one is readable any more
//   by time        cleanup.policy has delete, retention.ms >= 0, and the segment's largest
//                  timestamp is older than retention.ms (a timestamp in the future keeps the
//                  segment until that time has passed, as in Kafka)
//   by size        cleanup.policy has delete, retention.bytes >= 0, and the log without this
//                  segment is still at least retention.bytes
//
// Segments go oldest first and the walk stops at the first one no rule selects; an empty
// active segment (it holds the log end) is never selected. The time rule reads a
// segment's timestamp hint first and confirms it against the batches before selecting.
//
// Thread-safety: a pure function of its arguments (segments are read through their const,
// thread-safe interface).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/segment.hpp>

namespace brook {

/// How many of the oldest segments of `segs` (a log's list, the last one active) retention
/// deletes at time `now`. The caller rolls first when that is every segment.
inline result<std::size_t> segments_past_retention(const std::vector<std::shared_ptr<segment>>& segs, offset log_start,
                                                   const log_config& config, timestamp_ms now) {
  const std::int64_t retention = config.retention_time.count();
  std::int64_t total = 0;
  for (const auto& s : segs) total += static_cast<std::int64_t>(s->size());
  std::int64_t excess = config.retention_bytes >= 0 ? total - config.retention_bytes : 0;
  auto expired = [&](timestamp_ms m) { return retention >= 0 && m >= 0 && now - m > retention; };
  std::size_t n = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const auto& s = segs[i];
    const bool last = i + 1 == segs.size();
    if (s->empty() && last) break;  // an empty active segment holds the log end
    const auto size = static_cast<std::int64_t>(s->size());
    const bool by_start = !last ? segs[i + 1]->base_offset() <= log_start : s->next_offset() <= log_start;
    bool by_time = config.deletes() && expired(s->max_timestamp());
    if (by_time) {
      BROOK_TRY_ASSIGN(timestamp_ms exact, s->exact_max_timestamp());  // the hint said expired: confirm
      by_time = expired(exact);
    }
    const bool by_size = config.deletes() && config.retention_bytes >= 0 && excess - size >= 0;
    if (!(by_start || by_time || by_size)) break;
    excess -= size;
    ++n;
  }
  return n;
}

}  // namespace brook

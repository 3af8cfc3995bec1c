// Reading a log's segments: a slice of whole batches from an offset (Kafka's
// LocalLog.read) and the first record at or after a timestamp (offsetsForTimes,
// UnifiedLog.fetchOffsetByTimestamp). partition_log checks the offsets against its
// log start and log end and calls these; they walk a segment_list, pinning one
// segment at a time, and never take the log's writer lock.
//
// Thread-safety: free functions; safe alongside appends, retention and compaction
// (each segment they read is pinned, so its bytes outlive a concurrent removal).
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <optional>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/log_slice.hpp>
#include <brook/storage/segment.hpp>
#include <brook/storage/segment_list.hpp>

namespace brook {

struct read_options {
  /// Stop adding batches once this many bytes are in the slice (the first batch is always
  /// returned whole, as in Kafka's fetch since KIP-74). Default 1 MiB (max.partition.fetch.bytes).
  std::size_t max_bytes = 1024 * 1024;
  /// Exclusive upper bound on offsets returned (the high watermark); default log end.
  std::optional<offset> max_offset{};
  /// Also find where a record at or before the start begins in the first batch
  /// (log_slice::start_hint(), from the segment's record marks, made the first time a read
  /// with a hint starts inside the batch: storage/record_marks.hpp). For a lookup of one
  /// record: record_batch_view::seek(start, slice.start_hint()) then steps over at most 15
  /// records. Off by default: a fetch or a consumer reads batches from their start.
  bool hint = false;
};

/// Whole batches of `segs` starting with the one that holds `start`, below `bound`, up to
/// `max_bytes`, from one segment; empty when no batch holds `start` or a later offset. With
/// `hint`, the slice carries a start_hint() when `start` lies inside (past the first offset
/// of) a batch that has or gets record marks (record_marks.hpp says which batches do).
/// offset_out_of_range when the segments holding `start` were removed (retention or
/// delete_records_before raced the caller's check): later records are never handed out as
/// if they followed. REQUIRES: start < bound <= the log end the caller loaded.
inline result<log_slice> read_segments(const segment_list& segs, offset start, offset bound, std::size_t max_bytes,
                                       const std::filesystem::path& dir, bool hint = false) {
  auto seg = segs.pin(start);
  if (seg && start < seg->base_offset())
    return make_error(errc::offset_out_of_range,
                      "{}: offset {} is below the oldest segment (base {}): the log start moved", dir.string(), start,
                      seg->base_offset());
  offset skip_to = start;
  for (; seg; seg = segs.pin_after(seg->base_offset())) {  // start may lie past a segment's batches
    BROOK_TRY_ASSIGN(auto at, seg->find_batch(start, seg->end_pos(), hint));
    if (at) return log_slice::of_batches(std::move(seg), at->position, start, bound, max_bytes, at->hint);
    // An empty segment past `start` (the active one after a hole): nothing below its base
    // exists, so the next read starts there.
    if (seg->empty() && seg->base_offset() > start) skip_to = std::min(seg->base_offset(), bound);
  }
  return log_slice(nullptr, file_pos{0}, 0, start, skip_to);
}

/// The first record of `segs` at or after `log_start` and below `bound` whose timestamp is
/// >= ts (control batches skipped); nullopt when there is none. A segment whose time-index
/// maximum says it is older is skipped only once its batch headers confirm it.
inline result<std::optional<timestamp_offset>> find_offset_by_timestamp(const segment_list::vector& segs,
                                                                        timestamp_ms ts, offset log_start,
                                                                        offset bound) {
  for (const auto& s : segs) {
    if (s->max_timestamp() < ts) {
      BROOK_TRY_ASSIGN(timestamp_ms exact, s->exact_max_timestamp());  // never skip a segment on a stale hint
      if (exact < ts) continue;
    }
    const offset from = std::max(s->time_lookup(ts), log_start);
    BROOK_TRY_ASSIGN(auto found, s->first_record_since(ts, from, log_start, bound));
    if (found) return found;
  }
  return std::optional<timestamp_offset>();
}

}  // namespace brook

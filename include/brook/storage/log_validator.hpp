// What an append to a partition log is, and the rules a batch must pass before it is
// written (Kafka's LogValidator, for uncompressed magic-2 batches):
//
//   every batch      a whole RecordBatch v2 whose CRC and records check out
//                    (record_batch.hpp), no larger than max.message.bytes
//   from a producer  not a control batch; record count == lastOffsetDelta + 1; on a
//                    compacted log every record has a key. The log assigns the offsets
//                    (baseOffset rewritten in place) and, for LogAppendTime logs, the
//                    batch's timestamp (and so its CRC).
//   from a replica   the offsets it carries, starting at or after the log end
//
// Thread-safety: free functions over the caller's buffer; the caller serialises appends.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/log_config.hpp>

namespace brook {

struct append_options {
  /// true: the log assigns offsets from log_end_offset (producers). false: keep the offsets
  /// the batches carry, which must start at or after log_end_offset (replicas).
  bool assign_offsets = true;
};

struct append_result {
  offset base_offset{0};              ///< first offset written
  offset last_offset{0};              ///< last offset written
  timestamp_ms log_append_time = -1;  ///< the stamped time for LogAppendTime logs, else -1
  std::size_t records = 0;
  std::size_t bytes = 0;
};

/// The completion of an append handed to someone else (a produce_target, a broker): called
/// exactly once with the append's outcome. The one name for that callback in every layer.
using append_callback = std::function<void(const result<append_result>&)>;

/// Batches that passed validate_append, as they will be written.
struct validated_append {
  append_result result;
  timestamp_ms max_timestamp = -1;  ///< the largest batch timestamp (after LogAppendTime)
};

namespace detail {

/// The producer rules for one batch (`index` counts batches in the append, for messages).
inline result<void> check_producer_batch(const record_batch_view& v, std::size_t index, const log_config& config,
                                         std::string_view log_name) {
  const batch_header& h = v.header();
  if (h.is_control()) return make_error(errc::invalid_record, "{}: producers may not append control batches", log_name);
  if (std::int64_t{h.records_count} != std::int64_t{h.last_offset_delta} + 1)
    return make_error(errc::invalid_record, "{}: batch has {} records but lastOffsetDelta {}", log_name,
                      h.records_count, h.last_offset_delta);
  if (config.compacts())
    for (const record_view& r : v)
      if (r.key().is_null())
        return make_error(errc::invalid_record,
                          "{}: compacted topic cannot accept a record without a key (record {} of batch {})", log_name,
                          r.offset() - h.base_offset, index);
  return ok();
}

}  // namespace detail

/// Validates the concatenated `batches` for an append at `log_end` and, for producers,
/// assigns offsets (and LogAppendTime) in place. Errors: corrupt_message,
/// unsupported_compression_type, record_too_large, invalid_record, offset_out_of_range
/// (replica batches below the log end).
inline result<validated_append> validate_append(std::span<std::byte> batches, append_options ao,
                                                const log_config& config, offset log_end, timestamp_ms now,
                                                std::string_view log_name) {
  const bool log_append_time = config.message_timestamp_type == timestamp_type::log_append_time;
  validated_append out;
  offset next = log_end;
  out.result.base_offset = next;
  for (std::size_t pos = 0, count = 0; pos < batches.size(); ++count) {
    auto rest = batches.subspan(pos);
    BROOK_TRY_ASSIGN(batch_header h, check_batch_header(rest, "appended batch"));
    if (h.size_bytes() > config.max_message_bytes)
      return make_error(errc::record_too_large, "{}: batch of {} bytes exceeds max.message.bytes {}", log_name,
                        h.size_bytes(), config.max_message_bytes);
    BROOK_TRY_ASSIGN(record_batch_view v, record_batch_view::parse(rest, batch_check{}, "appended batch"));
    auto one = rest.first(h.size_bytes());
    // LogAppendTime (producer appends only) rewrites the batch's maxTimestamp to `now`.
    const bool stamp_time = ao.assign_offsets && log_append_time;
    if (ao.assign_offsets) {
      BROOK_TRY(detail::check_producer_batch(v, count, config, log_name));
      set_batch_base_offset(one, next);
      if (stamp_time) set_batch_log_append_time(one, now);
      next = next + (std::int64_t{h.last_offset_delta} + 1);
    } else {
      if (h.base_offset < next)
        return make_error(errc::offset_out_of_range, "{}: replica batch at offset {} is below the log end {}", log_name,
                          h.base_offset, next);
      if (count == 0) out.result.base_offset = h.base_offset;
      next = h.next_offset();
    }
    out.max_timestamp = std::max(out.max_timestamp, stamp_time ? now : h.max_timestamp);
    out.result.records += static_cast<std::size_t>(h.records_count);
    pos += h.size_bytes();
  }
  out.result.last_offset = next - 1;
  out.result.bytes = batches.size();
  out.result.log_append_time = log_append_time ? now : -1;
  return out;
}

}  // namespace brook

// What an append to a partition log is, and the rules a batch must pass before it is
// written (Kafka's LogValidator, for magic-2 batches):
//
//   every batch      a whole RecordBatch v2 whose CRC and records check out
//                    (record_batch.hpp), no larger than max.message.bytes (its stored,
//                    compressed size); a producer's compressed batch is decompressed with
//                    log_config::codecs (at most default_max_decompressed_batch_bytes) and
//                    its records checked as an uncompressed batch's, then kept as it came
//                    (Kafka's in-place path) unless the topic's compression.type names
//                    another codec: then it is rebuilt with that codec and level (Kafka's
//                    rebuild path), and must still fit max.message.bytes; a replica's
//                    compressed batch is checked by its CRC and copied byte for byte, as
//                    Kafka's followers do
//   from a producer  not a control batch; record count == lastOffsetDelta + 1; on a
//                    compacted log every record has a key; timestamps >= 0 (or -1, none),
//                    within message.timestamp.before/after.max.ms of now on CreateTime
//                    logs, and no batch claiming LogAppendTime. The log assigns the offsets
//                    (baseOffset rewritten in place) and, for LogAppendTime logs, the
//                    batch's timestamp (and so its CRC); on CreateTime logs a maxTimestamp
//                    that is not the records' largest is corrected (and the CRC with it).
//   from a replica   the offsets it carries, starting at or after the log end
//
// A batch record_batch_builder finished in this process (format/built_batch.hpp) passes the
// producer rules by validate_built_append: the header is read again and the rules are
// checked against what the builder knows of the records (their timestamps, the first record
// without a key), without the CRC or a walk of the records; the same batch gets the same
// verdict and the same bytes either way. One the builder does not vouch for, or one the
// topic recompresses, goes through validate_append.
//
// Thread-safety: free functions over the caller's buffer; the caller serialises appends.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <brook/compression/compression_codec.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>
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
  /// Empty when the batches are written as validated, in place. Otherwise every batch of the
  /// append as it is written, some recompressed for the topic's compression.type: the
  /// caller writes these bytes instead.
  std::vector<std::byte> rebuilt;
};

namespace detail {

/// Kafka's timestamp rules for a producer's batch (LogValidator.validateTimestamp): the
/// batch may not claim LogAppendTime, and on a CreateTime log every record timestamp other
/// than -1 (none) lies within [now - message.timestamp.before.max.ms, now +
/// message.timestamp.after.max.ms]. brook also refuses negative timestamps other than -1,
/// which Kafka's producer never sends (ProducerRecord rejects them).
inline result<void> check_producer_timestamps(const batch_header& h, const record_batch_view::record_timestamps& t,
                                              std::size_t index, const log_config& config, timestamp_ms now,
                                              std::string_view log_name) {
  if (h.timestamp_type() == timestamp_type::log_append_time)
    return make_error(errc::invalid_timestamp, "{}: batch {} claims LogAppendTime, which only the log may set",
                      log_name, index);
  if (config.message_timestamp_type == timestamp_type::log_append_time) return ok();
  if (!t.any) return ok();  // every record says -1: no timestamp
  if (t.min < 0)
    return make_error(errc::invalid_timestamp, "{}: batch {} has a record with timestamp {}; timestamps are >= 0",
                      log_name, index, t.min);
  // t.min <= t.max, both >= 0: `now - t.min` and `t.max - now` cannot overflow for now >= 0.
  BROOK_ASSERT(now >= 0, "the append time {} is negative", now);
  const std::int64_t before = config.message_timestamp_before_max.count();
  const std::int64_t after = config.message_timestamp_after_max.count();
  if (now - t.min > before || t.max - now > after)
    return make_error(errc::invalid_timestamp,
                      "{}: batch {} has a record timestamp outside [now - {} ms, now + {} ms] (now {}, records {}..{}; "
                      "message.timestamp.before.max.ms / after.max.ms)",
                      log_name, index, before, after, now, t.min, t.max);
  return ok();
}

/// Rebuilds the producer batch `v` (records readable) with `codec` at `level` into `out`, as
/// Kafka's LogValidator rebuilds a batch whose codec differs from the topic's compression.type:
/// the same producer id, epoch, base sequence and transactional flag, the records in order
/// with offset deltas 0..n-1 and their own timestamps. The caller assigns offsets and times.
inline result<void> recompress_batch(const record_batch_view& v, const compression_codec& codec, int level,
                                     std::vector<std::byte>& out) {
  const batch_header& h = v.header();
  batch_options o;
  o.producer_id = h.producer_id;
  o.producer_epoch = h.producer_epoch;
  o.base_sequence = h.base_sequence;
  o.partition_leader_epoch = h.partition_leader_epoch;
  o.transactional = h.is_transactional();
  record_batch_builder b(o, v.records_bytes().size() + batch_layout::header_size);
  std::vector<record_header> headers;
  for (const record_view& r : v) {
    headers.clear();
    for (const auto& x : r.headers()) headers.push_back(x);
    b.append(r.timestamp(), r.key(), r.value(), headers);
  }
  BROOK_TRY_ASSIGN(auto bytes, b.finish(codec, level));
  out.assign(bytes.begin(), bytes.end());
  return ok();
}

/// The producer batch `v` rebuilt into `out` with the topic's compression.type and level;
/// record_too_large when the result exceeds max.message.bytes (Kafka checks the rebuilt size).
inline result<void> recompress(const record_batch_view& v, const log_config& config, std::string_view log_name,
                               std::vector<std::byte>& out) {
  const compression_type t = *config.compression;
  const compression_codecs none_only;
  const compression_codecs& codecs = config.codecs ? *config.codecs : none_only;
  auto codec = codecs.get(t);
  if (!codec)
    return make_error(errc::unsupported_compression_type, "{}: compression.type {}: {}", log_name, compression_name(t),
                      codec.error().message());
  BROOK_TRY(recompress_batch(v, **codec, config.compression_level(t), out));
  if (out.size() > config.max_message_bytes)
    return make_error(errc::record_too_large, "{}: batch recompressed with {} is {} bytes, over max.message.bytes {}",
                      log_name, compression_name(t), out.size(), config.max_message_bytes);
  return ok();
}

inline result<void> check_batch_size(const batch_header& h, const log_config& config, std::string_view log_name) {
  if (h.size_bytes() > config.max_message_bytes)
    return make_error(errc::record_too_large, "{}: batch of {} bytes exceeds max.message.bytes {}", log_name,
                      h.size_bytes(), config.max_message_bytes);
  return ok();
}

/// The producer rules for one batch's header and timestamps (`index` counts batches in the
/// append, for messages).
inline result<void> check_producer_header(const batch_header& h, const record_batch_view::record_timestamps& t,
                                          std::size_t index, const log_config& config, timestamp_ms now,
                                          std::string_view log_name) {
  if (h.is_control()) return make_error(errc::invalid_record, "{}: producers may not append control batches", log_name);
  if (std::int64_t{h.records_count} != std::int64_t{h.last_offset_delta} + 1)
    return make_error(errc::invalid_record, "{}: batch has {} records but lastOffsetDelta {}", log_name,
                      h.records_count, h.last_offset_delta);
  return check_producer_timestamps(h, t, index, config, now, log_name);
}

inline error null_key_error(std::string_view log_name, std::int64_t record, std::size_t index) {
  return make_error(errc::invalid_record,
                    "{}: compacted topic cannot accept a record without a key (record {} of batch {})", log_name,
                    record, index);
}

/// The producer rules for one batch whose records were walked.
inline result<void> check_producer_batch(const record_batch_view& v, std::size_t index, const log_config& config,
                                         timestamp_ms now, std::string_view log_name) {
  const batch_header& h = v.header();
  BROOK_TRY(check_producer_header(h, v.timestamps(), index, config, now, log_name));
  if (config.compacts())
    for (const record_view& r : v)
      if (r.key().is_null()) return null_key_error(log_name, r.offset() - h.base_offset, index);
  return ok();
}

/// Gives the producer batch `one` (header `h`, records' largest timestamp `records_max`) its
/// offsets from `next` and its maxTimestamp, in place. Returns the offset after it.
inline result<offset> place_producer_batch(std::span<std::byte> one, const batch_header& h, timestamp_ms records_max,
                                           offset next, timestamp_ms now, bool stamp_time, std::string_view log_name) {
  const std::int64_t span = std::int64_t{h.last_offset_delta} + 1;
  if (next.value() > std::numeric_limits<std::int64_t>::max() - span)
    return make_error(errc::offset_out_of_range, "{}: {} more offsets from {} would pass 2^63-1", log_name, span, next);
  set_batch_base_offset(one, next);
  if (stamp_time)
    set_batch_log_append_time(one, now);
  else if (h.max_timestamp != records_max)  // Kafka sets maxTimestamp from the records
    set_batch_max_timestamp(one, records_max);
  return next + span;
}

}  // namespace detail

/// Validates the concatenated `batches` for an append at `log_end` and, for producers,
/// assigns offsets (and LogAppendTime, or the records' largest timestamp as maxTimestamp) in
/// place. Errors: corrupt_message, unsupported_compression_type, record_too_large,
/// invalid_record, invalid_timestamp, offset_out_of_range (replica batches below the log end,
/// or offsets that would pass 2^63-1).
inline result<validated_append> validate_append(std::span<std::byte> batches, append_options ao,
                                                const log_config& config, offset log_end, timestamp_ms now,
                                                std::string_view log_name) {
  const bool log_append_time = config.message_timestamp_type == timestamp_type::log_append_time;
  validated_append out;
  std::optional<batch_decompressor> dec;  // made at the first compressed batch from a producer
  offset next = log_end;
  out.result.base_offset = next;
  for (std::size_t pos = 0, count = 0; pos < batches.size(); ++count) {
    auto rest = batches.subspan(pos);
    BROOK_TRY_ASSIGN(batch_header h, check_batch_header(rest, "appended batch"));
    BROOK_TRY(detail::check_batch_size(h, config, log_name));
    record_batch_view v;
    if (h.compression() == compression_type::none) {
      BROOK_TRY_ASSIGN(v, record_batch_view::parse(rest, batch_check{}, "appended batch"));
    } else if (ao.assign_offsets) {
      if (!dec) dec.emplace(config.codecs ? *config.codecs : compression_codecs{});
      BROOK_TRY_ASSIGN(v, record_batch_view::parse(rest, *dec, batch_check{}, "appended batch"));
    } else {
      BROOK_TRY_ASSIGN(v, record_batch_view::parse(rest, batch_check{true, false}, "appended batch"));
    }
    auto one = rest.first(h.size_bytes());
    // LogAppendTime (producer appends only) rewrites the batch's maxTimestamp to `now`.
    const bool stamp_time = ao.assign_offsets && log_append_time;
    std::vector<std::byte> fresh;  // this batch recompressed for the topic's compression.type
    if (ao.assign_offsets) {
      BROOK_TRY(detail::check_producer_batch(v, count, config, now, log_name));
      if (config.compression && *config.compression != h.compression()) {
        BROOK_TRY(detail::recompress(v, config, log_name, fresh));
        if (out.rebuilt.empty())
          out.rebuilt.assign(batches.begin(), batches.begin() + static_cast<std::ptrdiff_t>(pos));
        one = std::span<std::byte>(fresh);
      }
      BROOK_TRY_ASSIGN(next, detail::place_producer_batch(one, h, v.timestamps().max, next, now, stamp_time, log_name));
    } else {
      if (h.base_offset < next)
        return make_error(errc::offset_out_of_range, "{}: replica batch at offset {} is below the log end {}", log_name,
                          h.base_offset, next);
      if (count == 0) out.result.base_offset = h.base_offset;
      next = h.next_offset();
    }
    const timestamp_ms batch_max = stamp_time ? now : ao.assign_offsets ? v.timestamps().max : h.max_timestamp;
    out.max_timestamp = std::max(out.max_timestamp, batch_max);
    out.result.records += static_cast<std::size_t>(h.records_count);
    if (!fresh.empty() || !out.rebuilt.empty()) out.rebuilt.insert(out.rebuilt.end(), one.begin(), one.end());
    pos += h.size_bytes();
  }
  out.result.last_offset = next - 1;
  out.result.bytes = out.rebuilt.empty() ? batches.size() : out.rebuilt.size();
  out.result.log_append_time = log_append_time ? now : -1;
  return out;
}

/// Whether validate_built_append may take `b` under `config`: the builder vouches for its
/// records, and the topic keeps the batch's codec (none) rather than recompressing it.
inline bool can_append_built(const built_batch& b, const log_config& config) noexcept {
  return b.trusted() && config.compression.value_or(compression_type::none) == compression_type::none;
}

/// validate_append for one batch record_batch_builder finished in this process: the producer
/// rules checked against what the builder knows of the records (format/built_batch.hpp), the
/// header read again but neither the CRC nor the records walked. Offsets (and LogAppendTime
/// or maxTimestamp) are assigned in place as validate_append assigns them. The same errors
/// for the same batch. REQUIRES: can_append_built(b, config).
inline result<validated_append> validate_built_append(const built_batch& b, const log_config& config, offset log_end,
                                                      timestamp_ms now, std::string_view log_name) {
  BROOK_ASSERT(can_append_built(b, config), "{}: a built batch the log must walk after all", log_name);
  const std::span<std::byte> one = b.bytes();
  BROOK_TRY_ASSIGN(batch_header h, check_batch_header(one, "appended batch"));
  BROOK_ASSERT(h.size_bytes() == one.size() && h.compression() == compression_type::none,
               "{}: a built batch of {} bytes whose header says {} bytes, codec {}", log_name, one.size(),
               h.size_bytes(), compression_name(h.compression()));
  BROOK_TRY(detail::check_batch_size(h, config, log_name));
  const auto& times = b.timestamps();
  BROOK_TRY(detail::check_producer_header(h, times, 0, config, now, log_name));
  if (config.compacts() && b.first_null_key() >= 0) return detail::null_key_error(log_name, b.first_null_key(), 0);
  const bool stamp_time = config.message_timestamp_type == timestamp_type::log_append_time;
  validated_append out;
  out.result.base_offset = log_end;
  BROOK_TRY_ASSIGN(offset next, detail::place_producer_batch(one, h, times.max, log_end, now, stamp_time, log_name));
  out.max_timestamp = stamp_time ? now : times.max;
  out.result.records = static_cast<std::size_t>(h.records_count);
  out.result.last_offset = next - 1;
  out.result.bytes = one.size();
  out.result.log_append_time = stamp_time ? now : -1;
  return out;
}

}  // namespace brook

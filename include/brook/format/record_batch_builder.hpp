// Builds RecordBatch v2 bytes (layout in format/record_batch.hpp) the way
// Kafka's Java producer does: baseTimestamp = first record's timestamp,
// maxTimestamp = largest, offsets consecutive from the base offset,
// producerId/Epoch/baseSequence -1 unless set; uncompressed, or compressed
// with a codec at finish (the records, back to back, as one codec payload).
//
// Records are encoded straight into one growable buffer that is reused across
// reset() calls: appending a record never allocates once the buffer has grown
// to the batch size.
//
//   record_batch_builder b;
//   b.append(ts, "key", "value");
//   b.append(ts, nullable_bytes::null(), "v2", headers);
//   std::span<const std::byte> batch = b.finish();   // valid until the next reset/append
//   auto zbatch = b.finish(*zstd, 3);                 // or compressed (result<span>)
//
// After an uncompressed finish(), built() names the same bytes with what the builder knows
// of their records (format/built_batch.hpp): a log in this process appends that without
// walking the records again.
//
// Thread-safety: none; one builder per thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>

#include <vector>

#include <brook/compression/compression_codec.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/types.hpp>
#include <brook/format/built_batch.hpp>
#include <brook/format/bytes.hpp>
#include <brook/format/crc32c.hpp>
#include <brook/format/record.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/varint.hpp>

namespace brook {

/// Batch-level fields a builder stamps. Defaults: a plain non-idempotent producer.
struct batch_options {
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::int32_t partition_leader_epoch = -1;
  bool transactional = false;
  bool control = false;
};

class record_batch_builder {
 public:
  explicit record_batch_builder(batch_options opts = {}, std::size_t initial_capacity = 16384) : opts_(opts) {
    grow(std::max<std::size_t>(initial_capacity, batch_layout::header_size));
    reset();
  }

  /// Starts a new, empty batch with the given base offset; keeps the buffer.
  void reset(brook::offset base_offset = brook::offset{0}) noexcept {
    base_offset_ = base_offset;
    size_ = batch_layout::header_size;
    count_ = 0;
    base_ts_ = 0;
    times_ = {};
    times_.known = true;
    first_null_key_ = -1;
    trusted_ = true;
    finished_ = false;
    packed_last_ = false;
  }
  void set_options(const batch_options& o) noexcept { opts_ = o; }
  const batch_options& options() const noexcept { return opts_; }

  /// Bytes one record takes inside a batch (length prefix included).
  static std::size_t record_size(std::int64_t timestamp_delta, std::int32_t offset_delta, nullable_bytes key,
                                 nullable_bytes value, std::span<const record_header> headers = {}) noexcept {
    std::size_t body = body_size(timestamp_delta, offset_delta, key, value, headers);
    return varint_size(static_cast<std::int32_t>(body)) + body;
  }

  /// Appends one record with the next offset. Key, value and header bytes are copied.
  void append(timestamp_ms ts, nullable_bytes key, nullable_bytes value, std::span<const record_header> headers = {}) {
    BROOK_ASSERT(!finished_, "record_batch_builder::append after finish() without reset()");
    if (count_ == 0) base_ts_ = ts;
    // Wraps as Java's does (INT64_MAX then INT64_MIN is delta 1): no UB here; the log's
    // validation refuses such a batch (its timestamps overflow, or are negative).
    const std::int64_t ts_delta = detail::sub_wrapping(ts, base_ts_);
    const std::int32_t off_delta = count_;
    const std::size_t body = body_size(ts_delta, off_delta, key, value, headers);
    note(ts, key, body);
    const std::size_t need = size_ + max_varint_size + body;
    if (need > cap_) grow(std::max(need, cap_ * 2));
    std::byte* p = buf_.get() + size_;
    p += encode_varint(static_cast<std::int32_t>(body), p);
    *p++ = std::byte{0};  // attributes
    p += encode_varlong(ts_delta, p);
    p += encode_varint(off_delta, p);
    p = put_bytes(p, key);
    p = put_bytes(p, value);
    p += encode_varint(static_cast<std::int32_t>(headers.size()), p);
    for (const auto& h : headers) {
      p = put_bytes(p, nullable_bytes(h.key));
      p = put_bytes(p, h.value);
    }
    size_ = static_cast<std::size_t>(p - buf_.get());
    times_.add(ts);
    ++count_;
  }

  /// Fills in the header and CRC and returns the batch. The span stays valid until
  /// the next reset() or destruction. REQUIRES: at least one record.
  std::span<std::byte> finish() noexcept {
    BROOK_ASSERT(count_ > 0, "record_batch_builder::finish on an empty batch");
    write_header(buf_.get(), size_);
    finished_ = true;
    packed_last_ = false;
    return {buf_.get(), size_};
  }

  /// The batch the last finish() returned, with what the builder knows of its records.
  /// REQUIRES: the batch was finished uncompressed (finish(), or finish with codec none).
  built_batch built() noexcept {
    BROOK_ASSERT(finished_ && !packed_last_, "record_batch_builder::built without an uncompressed finish()");
    return built_batch({buf_.get(), size_}, times_, first_null_key_, trusted_);
  }

  /// Finishes the batch with its records compressed by `codec` at `level` (Kafka's level;
  /// `codec.default_level()` for the codec's default) into a second buffer this builder
  /// reuses. The span stays valid until the next finish, reset() or destruction. Errors:
  /// those of compression_codec::compress (invalid_config for a level out of range), and
  /// record_too_large when the compressed batch would not fit batchLength's int32.
  /// REQUIRES: at least one record.
  result<std::span<std::byte>> finish(const compression_codec& codec, int level) {
    BROOK_ASSERT(count_ > 0, "record_batch_builder::finish on an empty batch");
    if (codec.type() == compression_type::none) return finish();
    write_header(buf_.get(), size_, /*with_crc=*/false);  // compress_batch computes the CRC
    finished_ = true;
    packed_last_ = true;
    BROOK_TRY(compress_batch({buf_.get(), size_}, codec, level, packed_));
    return std::span<std::byte>(packed_);
  }

  bool empty() const noexcept { return count_ == 0; }
  std::int32_t record_count() const noexcept { return count_; }
  /// Bytes the batch would take if finished now.
  std::size_t size_bytes() const noexcept { return size_; }
  brook::offset base_offset() const noexcept { return base_offset_; }

 private:
  /// Records what a walk of the records would find (built_batch): the first record without
  /// a key, and whether the record at timestamp `ts` and of `body` bytes is one the walk
  /// would take as it was meant. (append() takes each timestamp into times_ once written.)
  void note(timestamp_ms ts, nullable_bytes key, std::size_t body) noexcept {
    timestamp_ms unused;
    if (count_ > 0 && __builtin_sub_overflow(ts, base_ts_, &unused)) trusted_ = false;  // the walk: overflow
    if (body > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) trusted_ = false;
    if (key.is_null() && first_null_key_ < 0) first_null_key_ = count_;
  }

  /// Writes the header of a batch of `size` bytes at `b` (records already after it), then
  /// (with_crc) its CRC over attributes .. end.
  void write_header(std::byte* b, std::size_t size, bool with_crc = true) const noexcept {
    namespace L = batch_layout;
    detail::store_be64(b + L::base_offset, base_offset_.value());
    detail::store_be32(b + L::batch_length, static_cast<std::int32_t>(size - L::log_overhead));
    detail::store_be32(b + L::partition_leader_epoch, opts_.partition_leader_epoch);
    b[L::magic] = static_cast<std::byte>(current_magic);
    std::int16_t attrs = 0;
    if (opts_.transactional) attrs |= batch_attr::transactional;
    if (opts_.control) attrs |= batch_attr::control;
    detail::store_be16(b + L::attributes, attrs);
    detail::store_be32(b + L::last_offset_delta, count_ - 1);
    detail::store_be64(b + L::base_timestamp, base_ts_);
    detail::store_be64(b + L::max_timestamp, times_.max);
    detail::store_be64(b + L::producer_id, opts_.producer_id);
    detail::store_be16(b + L::producer_epoch, opts_.producer_epoch);
    detail::store_be32(b + L::base_sequence, opts_.base_sequence);
    detail::store_be32(b + L::records_count, count_);
    if (with_crc) detail::store_be_u32(b + L::crc, crc32c({b + L::crc_begin, size - L::crc_begin}));
  }

  static std::size_t body_size(std::int64_t ts_delta, std::int32_t off_delta, nullable_bytes key, nullable_bytes value,
                               std::span<const record_header> headers) noexcept {
    std::size_t n = 1 + varlong_size(ts_delta) + varint_size(off_delta);
    n += varint_size(key.wire_length()) + key.size();
    n += varint_size(value.wire_length()) + value.size();
    n += varint_size(static_cast<std::int32_t>(headers.size()));
    for (const auto& h : headers) {
      n += varint_size(static_cast<std::int32_t>(h.key.size())) + h.key.size();
      n += varint_size(h.value.wire_length()) + h.value.size();
    }
    return n;
  }
  static std::byte* put_bytes(std::byte* p, nullable_bytes b) noexcept {
    p += encode_varint(b.wire_length(), p);
    if (!b.is_null() && b.size() > 0) {
      std::memcpy(p, b.data(), b.size());
      p += b.size();
    }
    return p;
  }
  void grow(std::size_t cap) {
    auto nb = std::make_unique_for_overwrite<std::byte[]>(cap);
    if (buf_) std::memcpy(nb.get(), buf_.get(), size_);
    buf_ = std::move(nb);
    cap_ = cap;
  }

  batch_options opts_;
  std::unique_ptr<std::byte[]> buf_;
  std::size_t cap_ = 0;
  std::size_t size_ = 0;
  brook::offset base_offset_{0};
  std::int32_t count_ = 0;
  timestamp_ms base_ts_ = 0;
  bool finished_ = false;
  bool packed_last_ = false;                    // the last finish compressed into packed_
  record_batch_view::record_timestamps times_;  // of the records appended so far
  std::int32_t first_null_key_ = -1;
  bool trusted_ = true;
  byte_buffer packed_;  // the last compressed batch
};

}  // namespace brook

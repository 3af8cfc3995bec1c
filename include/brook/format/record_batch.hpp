// RecordBatch v2 (magic 2), byte for byte as Apache Kafka writes it
// (DefaultRecordBatch.java). All integers big-endian.
//
//   offset  size  field
//        0     8  baseOffset
//        8     4  batchLength            bytes after this field (total = 12 + batchLength)
//       12     4  partitionLeaderEpoch   not covered by the CRC (a leader stamps it)
//       16     1  magic                  2
//       17     4  crc                    CRC-32C of bytes 21 .. end
//       21     2  attributes             bits 0-2 compression, 3 timestamp type (1 = LogAppendTime),
//                                        4 transactional, 5 control, 6 delete horizon set
//       23     4  lastOffsetDelta
//       27     8  baseTimestamp          first record's timestamp (Java producer)
//       35     8  maxTimestamp           largest record timestamp, or the append time
//       43     8  producerId             -1 when not idempotent
//       51     2  producerEpoch          -1
//       53     4  baseSequence           -1
//       57     4  recordsCount
//       61        records (format/record.hpp)
//
// A compressed batch (attributes bits 0-2 name the codec) keeps this header as
// it is and holds its records as one codec payload from byte 61 to the end
// (format/batch_decompressor.hpp); the CRC covers the compressed bytes.
//
// record_batch_view::parse validates everything before handing a view out:
// the length against the bytes present, the magic, the CRC, the compression
// bits, recordsCount against lastOffsetDelta, and every record's length and
// fields, which must end exactly at the end of the records. A compressed
// batch's records are decompressed first, with a batch_decompressor; without
// one, reading them is unsupported_compression_type, never misread bytes.
//
// Thread-safety: batch_header is a value; record_batch_view borrows bytes (and a
// compressed batch's decompressed records) and may be read from any number of
// threads while those bytes stay alive.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include <brook/compression/compression_codec.hpp>
#include <brook/compression/compression_type.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/batch_decompressor.hpp>
#include <brook/format/bytes.hpp>
#include <brook/format/crc32c.hpp>
#include <brook/format/record.hpp>

namespace brook {

namespace batch_layout {
inline constexpr std::size_t base_offset = 0;
inline constexpr std::size_t batch_length = 8;
inline constexpr std::size_t partition_leader_epoch = 12;
inline constexpr std::size_t magic = 16;
inline constexpr std::size_t crc = 17;
inline constexpr std::size_t attributes = 21;
inline constexpr std::size_t last_offset_delta = 23;
inline constexpr std::size_t base_timestamp = 27;
inline constexpr std::size_t max_timestamp = 35;
inline constexpr std::size_t producer_id = 43;
inline constexpr std::size_t producer_epoch = 51;
inline constexpr std::size_t base_sequence = 53;
inline constexpr std::size_t records_count = 57;
inline constexpr std::size_t records = 61;
/// Bytes before the batchLength count starts: baseOffset + batchLength.
inline constexpr std::size_t log_overhead = 12;
/// Fixed header size.
inline constexpr std::size_t header_size = 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
static_assert(header_size == records, "header fields must add up to the records position");
/// The CRC covers [crc_begin, end).
inline constexpr std::size_t crc_begin = attributes;
}  // namespace batch_layout

inline constexpr std::int8_t current_magic = 2;

enum class timestamp_type : std::uint8_t { create_time = 0, log_append_time = 1 };

namespace batch_attr {
inline constexpr std::int16_t compression_mask = 0x07;
inline constexpr std::int16_t timestamp_type = 0x08;
inline constexpr std::int16_t transactional = 0x10;
inline constexpr std::int16_t control = 0x20;
inline constexpr std::int16_t delete_horizon = 0x40;
}  // namespace batch_attr

/// The decoded fixed header of a batch.
struct batch_header {
  brook::offset base_offset{0};
  std::int32_t batch_length = 0;
  std::int32_t partition_leader_epoch = -1;
  std::int8_t magic = current_magic;
  std::uint32_t crc = 0;
  std::int16_t attributes = 0;
  std::int32_t last_offset_delta = 0;
  timestamp_ms base_timestamp = 0;
  timestamp_ms max_timestamp = 0;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;
  std::int32_t base_sequence = -1;
  std::int32_t records_count = 0;

  brook::offset last_offset() const noexcept { return base_offset + last_offset_delta; }
  /// Offset of the record after this batch.
  brook::offset next_offset() const noexcept { return base_offset + (std::int64_t{last_offset_delta} + 1); }
  /// Bytes the whole batch occupies on disk.
  std::size_t size_bytes() const noexcept {
    return batch_layout::log_overhead + static_cast<std::size_t>(batch_length);
  }
  brook::compression_type compression() const noexcept {
    return static_cast<brook::compression_type>(attributes & batch_attr::compression_mask);
  }
  brook::timestamp_type timestamp_type() const noexcept {
    return (attributes & batch_attr::timestamp_type) ? timestamp_type::log_append_time : timestamp_type::create_time;
  }
  bool is_transactional() const noexcept { return attributes & batch_attr::transactional; }
  bool is_control() const noexcept { return attributes & batch_attr::control; }
};

/// Decodes the 61-byte header at the start of `b` without checking anything but
/// that 61 bytes are there. REQUIRES: b.size() >= batch_layout::header_size.
inline batch_header decode_batch_header_unchecked(const std::byte* p) noexcept {
  using namespace batch_layout;
  using namespace detail;
  batch_header h;
  h.base_offset = brook::offset(load_be64(p + base_offset));
  h.batch_length = load_be32(p + batch_length);
  h.partition_leader_epoch = load_be32(p + partition_leader_epoch);
  h.magic = static_cast<std::int8_t>(p[magic]);
  h.crc = load_be_u32(p + crc);
  h.attributes = load_be16(p + attributes);
  h.last_offset_delta = load_be32(p + last_offset_delta);
  h.base_timestamp = load_be64(p + base_timestamp);
  h.max_timestamp = load_be64(p + max_timestamp);
  h.producer_id = load_be64(p + producer_id);
  h.producer_epoch = load_be16(p + producer_epoch);
  h.base_sequence = load_be32(p + base_sequence);
  h.records_count = load_be32(p + records_count);
  return h;
}

namespace detail {
/// a + b without undefined behaviour on overflow (validated batches never overflow).
constexpr std::int64_t add_wrapping(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
/// a - b with Java's two's-complement wrap: a timestamp delta as Kafka's writers compute it.
constexpr std::int64_t sub_wrapping(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
/// Error-message context: a string, or a callable producing one (built only on error).
template <typename Where>
std::string where_string(const Where& w) {
  if constexpr (std::is_invocable_v<const Where&>)
    return std::string(w());
  else
    return std::string(std::string_view(w));
}
}  // namespace detail

/// How much of a batch to check.
struct batch_check {
  bool crc = true;      ///< verify the CRC-32C
  bool records = true;  ///< walk every record (lengths, varints, offset deltas, headers)
};

/// Checks the header fields of the batch at the start of `b` (length, magic, counts, offset
/// range) without the CRC, the compression bits (check_batch_codec) or the records. On
/// success the whole batch is inside `b`: enough to walk from batch to batch.
/// `where` prefixes error messages (e.g. "00000000000000000000.log at byte 4096"): a string, or
/// a callable returning one, which is only called when there is an error to report.
template <typename Where = std::string_view>
result<batch_header> check_batch_header(std::span<const std::byte> b, const Where& where_ = std::string_view("batch")) {
  using namespace batch_layout;
  auto where = [&] { return detail::where_string(where_); };
  if (b.size() < log_overhead)
    return make_error(errc::corrupt_message, "{}: {} bytes is too short for a batch (need {})", where(), b.size(),
                      log_overhead);
  std::int32_t blen = detail::load_be32(b.data() + batch_length);
  if (blen < static_cast<std::int32_t>(header_size - log_overhead))
    return make_error(errc::corrupt_message, "{}: batchLength {} is smaller than the {}-byte header", where(), blen,
                      header_size);
  if (b.size() < header_size)
    return make_error(errc::corrupt_message, "{}: {} bytes is too short for a batch header (need {})", where(),
                      b.size(), header_size);
  std::size_t total = log_overhead + static_cast<std::size_t>(blen);
  if (total > b.size())
    return make_error(errc::corrupt_message, "{}: batch of {} bytes runs past the {} bytes available", where(), total,
                      b.size());
  batch_header h = decode_batch_header_unchecked(b.data());
  if (h.magic != current_magic) {
    if (h.magic == 0 || h.magic == 1)
      return make_error(errc::corrupt_message, "{}: message format v{} (magic {}) is not supported, only v2", where(),
                        h.magic, h.magic);
    return make_error(errc::corrupt_message, "{}: bad magic byte {} (expected 2)", where(), h.magic);
  }
  if (h.last_offset_delta < 0 || h.records_count < 0 ||
      static_cast<std::int64_t>(h.records_count) > std::int64_t{h.last_offset_delta} + 1)
    return make_error(errc::corrupt_message, "{}: recordsCount {} does not fit lastOffsetDelta {}", where(),
                      h.records_count, h.last_offset_delta);
  if (h.base_offset.value() < 0)
    return make_error(errc::corrupt_message, "{}: negative baseOffset {}", where(), h.base_offset);
  if (h.base_offset.value() > std::numeric_limits<std::int64_t>::max() - h.last_offset_delta)
    return make_error(errc::corrupt_message, "{}: baseOffset {} + lastOffsetDelta {} overflows", where(), h.base_offset,
                      h.last_offset_delta);
  return h;
}

/// Checks the compression bits of a header that passed check_batch_header (and, when the
/// bytes may be damaged, the CRC: a flipped bit must read as corruption, not as a codec).
/// The codec ids are compression/compression_type.hpp's; ids 5-7 name no codec and are
/// corrupt_message.
template <typename Where = std::string_view>
result<void> check_batch_codec(const batch_header& h, const Where& where_ = std::string_view("batch")) {
  const int comp = h.attributes & batch_attr::compression_mask;
  if (compression_type_from_id(comp)) return ok();
  return make_error(errc::corrupt_message, "{}: unknown compression codec {}", detail::where_string(where_), comp);
}

namespace detail {
/// From the first of a batch's records at p (`left` = recordsCount of them), the first record
/// whose offsetDelta is at least `want`. It steps by record lengths: where the records fill
/// every offset (recordsCount = lastOffsetDelta + 1, every batch but a compacted one) it
/// counts them, otherwise it reads each one's offsetDelta. First it asks the memory for
/// the lines up to where the record should be (the batch's bytes spread evenly over its
/// offsets), so the walk's misses overlap instead of following each other. Returns that
/// record's position with `left` the records from it on (end and 0 when none), or nullptr
/// when a record before it is malformed. Never reads at or past end.
inline const std::byte* seek_record(const batch_header& h, const std::byte* p, const std::byte* end, std::int64_t want,
                                    std::int32_t& left) noexcept {
  if (want <= 0) return p;
  constexpr std::size_t line = 64;
  const auto size = static_cast<std::uint64_t>(end - p), span = std::uint64_t{1} + std::uint64_t(h.last_offset_delta);
  const std::uint64_t guess = std::min(size, size * (static_cast<std::uint64_t>(want) + 2) / span);
  for (std::uint64_t at = line; at < guess; at += line) __builtin_prefetch(p + at);
  const std::byte* body = nullptr;
  if (std::int64_t{left} == std::int64_t{h.last_offset_delta} + 1) {
    for (std::int64_t i = 0; i < want && left > 0; ++i, --left)
      if ((p = skip_record(p, end, body)) == nullptr) return nullptr;
    return p;
  }
  for (; left > 0; --left) {
    const std::byte* next = skip_record(p, end, body);
    std::int32_t delta = 0;
    if (next == nullptr || !record_offset_delta(body, next, delta)) return nullptr;
    if (delta >= want) break;
    p = next;
  }
  return p;
}
}  // namespace detail

/// Where one record of a batch starts, as a reader learned it beforehand (a log's record
/// marks, storage/record_marks.hpp): the `index`-th record (from 0) starts `byte` bytes into
/// the batch's records, the bytes after its 61-byte header. A hint: seek() checks it.
struct record_position {
  std::uint32_t byte = 0;
  std::int32_t index = 0;
};

/// A validated batch: a view over bytes it does not own. Valid as long as those bytes.
class record_batch_view {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = record_view;
    using difference_type = std::ptrdiff_t;
    using pointer = const record_view*;
    using reference = const record_view&;

    iterator() = default;
    iterator(const batch_header& h, const std::byte* p, const std::byte* end, std::int32_t left)
        : base_offset_(h.base_offset),
          base_ts_(h.base_timestamp),
          append_ts_(h.timestamp_type() == timestamp_type::log_append_time ? h.max_timestamp : -1),
          log_append_(h.timestamp_type() == timestamp_type::log_append_time),
          p_(p),
          end_(end),
          left_(left) {
      load();
    }
    reference operator*() const { return cur_; }
    pointer operator->() const { return &cur_; }
    iterator& operator++() {
      p_ = next_;
      --left_;
      load();
      return *this;
    }
    iterator operator++(int) {
      auto t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.left_ == b.left_; }

   private:
    void load() {
      if (left_ <= 0) return;
      detail::record_fields f;
      next_ = detail::parse_record(p_, end_, f, /*check_headers=*/false);
      // Unreachable for validated bytes (a record's delta is at most lastOffsetDelta, and the
      // header check bounds baseOffset + lastOffsetDelta); stop rather than misread or overflow.
      if (next_ == nullptr || f.offset_delta > std::numeric_limits<std::int64_t>::max() - base_offset_.value()) {
        left_ = 0;
        return;
      }
      cur_ = record_view(base_offset_ + f.offset_delta,
                         log_append_ ? append_ts_ : detail::add_wrapping(base_ts_, f.timestamp_delta), f);
    }
    brook::offset base_offset_{0};
    timestamp_ms base_ts_ = 0;
    timestamp_ms append_ts_ = -1;
    bool log_append_ = false;
    const std::byte* p_ = nullptr;
    const std::byte* end_ = nullptr;
    const std::byte* next_ = nullptr;
    std::int32_t left_ = 0;
    record_view cur_;
  };

  record_batch_view() = default;

  /// Validates the batch at the start of `b` (which may hold more bytes after it). A
  /// compressed batch's header and CRC are checked, but its records cannot be read without a
  /// decompressor: with batch_check::records that is unsupported_compression_type naming the
  /// codec; without it the view has no readable records (records_readable() is false). A
  /// batch whose recordsCount is 0 has no records to read whatever its codec bits say: its
  /// payload is never decoded, as Kafka's DefaultRecordBatch.iterator() (docs/format.md).
  /// Errors: corrupt_message (with `where` and the reason), unsupported_compression_type.
  template <typename Where = std::string_view>
  static result<record_batch_view> parse(std::span<const std::byte> b, batch_check check = {},
                                         const Where& where_ = std::string_view("batch")) {
    return parse_with(b, check, nullptr, where_);
  }

  /// As parse() above, and a compressed batch's records are decompressed into `d`'s buffer: the
  /// view's records are then valid until `d`'s next use. Uncompressed batches stay zero-copy.
  /// With batch_check::records, a decompressed record count that disagrees with recordsCount,
  /// or bytes left after the records, is corrupt_message; without it the caller walks the
  /// records itself and must make those checks (as log_slice::for_each_record does; the
  /// iterator stops at the first malformed record, never reading past the bytes). Errors also
  /// those of batch_decompressor::decompress (unsupported_compression_type, record_too_large).
  template <typename Where = std::string_view>
  static result<record_batch_view> parse(std::span<const std::byte> b, batch_decompressor& d, batch_check check = {},
                                         const Where& where_ = std::string_view("batch")) {
    return parse_with(b, check, &d, where_);
  }

  /// The records' own timestamps (baseTimestamp + timestampDelta, whatever the batch's
  /// timestamp type), as parse() found them while walking the records.
  struct record_timestamps {
    bool known = false;  ///< parse() walked the records (batch_check::records)
    bool any = false;    ///< some record has a timestamp other than -1 (Kafka's NO_TIMESTAMP)
    /// The smallest timestamp other than -1; meaningful when `any`.
    timestamp_ms min = no_timestamp;
    timestamp_ms max = no_timestamp;  ///< the largest timestamp; -1 when none is set

    /// Takes one record's timestamp into min, max and any.
    void add(timestamp_ms ts) noexcept {
      if (ts != no_timestamp) {
        min = any ? std::min(min, ts) : ts;
        any = true;
      }
      max = std::max(max, ts);
    }
  };
  /// REQUIRES: parsed with batch_check::records.
  const record_timestamps& timestamps() const noexcept {
    BROOK_ASSERT(times_.known, "record_batch_view::timestamps() of a batch parsed without its records");
    return times_;
  }

  const batch_header& header() const noexcept { return header_; }
  /// The whole batch, header included.
  std::span<const std::byte> bytes() const noexcept { return {begin_, end_}; }
  std::size_t size_bytes() const noexcept { return static_cast<std::size_t>(end_ - begin_); }
  brook::offset base_offset() const noexcept { return header_.base_offset; }
  brook::offset last_offset() const noexcept { return header_.last_offset(); }
  std::size_t record_count() const noexcept { return static_cast<std::size_t>(header_.records_count); }

  /// The codec of the batch's records (none: stored as they are).
  brook::compression_type compression() const noexcept { return header_.compression(); }
  bool compressed() const noexcept { return compression() != compression_type::none; }
  /// False only for a compressed batch with records parsed without a batch_decompressor.
  bool records_readable() const noexcept { return records_begin_ != nullptr; }
  /// The records' bytes: inside bytes() when uncompressed, else the decompressed records.
  /// REQUIRES: records_readable().
  std::span<const std::byte> records_bytes() const noexcept {
    BROOK_ASSERT(records_readable(),
                 "record_batch_view: the records of a compressed batch read without a decompressor");
    return {records_begin_, records_end_};
  }

  /// Records in offset order. The iterator borrows the bytes, not this view.
  /// REQUIRES: records_readable().
  iterator begin() const {
    const auto r = records_bytes();
    return iterator(header_, r.data(), r.data() + r.size(), header_.records_count);
  }
  iterator end() const { return iterator(header_, records_end_, records_end_, 0); }

  /// The first record whose offset is at least `o`, or end(): detail::seek_record, a lookup
  /// that steps by record lengths instead of decoding each record. On records that were not
  /// checked (batch_check::records off) it trusts them as the iterator does: it never reads
  /// past the bytes, and a malformed record before `o` gives end().
  /// REQUIRES: records_readable().
  iterator seek(brook::offset o) const {
    const auto r = records_bytes();
    if (o <= base_offset()) return begin();
    if (o > last_offset()) return end();
    std::int32_t left = header_.records_count;
    const std::byte* p = detail::seek_record(header_, r.data(), r.data() + r.size(), o - base_offset(), left);
    if (p == nullptr) return end();
    return iterator(header_, p, r.data() + r.size(), left);
  }

  /// seek(o), starting from a record whose place the caller knows (`from`, when at or before
  /// `o`) instead of the batch's first: it steps by record lengths from there and checks that
  /// it lands on o's offsetDelta. A hint that does not fit (past o or past the records, on a
  /// compressed or compacted batch, or whose walk lands elsewhere) gives seek(o)'s answer.
  /// It never reads past the records.
  /// REQUIRES: records_readable(); `from`, if given, is where a record of these bytes starts,
  /// as log_slice::start_hint() names one (the log made it from the same bytes): a walk from
  /// inside a record may land on a wrong record whose bytes happen to say o.
  iterator seek(brook::offset o, std::optional<record_position> from) const {
    const std::int64_t want = o - base_offset();
    if (!from || compressed() || want < from->index || from->index < 0 || o > last_offset() ||
        header_.records_count != std::int64_t{header_.last_offset_delta} + 1)
      return seek(o);
    const auto r = records_bytes();
    if (from->byte >= r.size()) return seek(o);
    const std::byte* end = r.data() + r.size();
    const std::byte* p = r.data() + from->byte;
    // The lines up to the record, at the batch's mean record size, so the walk's misses overlap.
    const auto steps = static_cast<std::uint64_t>(want - from->index);
    const std::uint64_t guess =
        std::min<std::uint64_t>(static_cast<std::uint64_t>(end - p), r.size() * (steps + 1) / header_.records_count);
    for (std::uint64_t at = 64; at < guess; at += 64) __builtin_prefetch(p + at);
    const std::byte* body = nullptr;
    for (std::uint64_t i = 0; i < steps; ++i)
      if ((p = detail::skip_record(p, end, body)) == nullptr) return seek(o);
    const std::byte* next = detail::skip_record(p, end, body);
    std::int32_t delta = 0;
    if (next == nullptr || !detail::record_offset_delta(body, next, delta) || delta != want) return seek(o);
    return iterator(header_, p, end, header_.records_count - static_cast<std::int32_t>(want));
  }

 private:
  record_batch_view(const batch_header& h, const std::byte* b, const std::byte* e, std::span<const std::byte> records,
                    const record_timestamps& t)
      : header_(h),
        begin_(b),
        end_(e),
        records_begin_(records.data()),
        records_end_(records.data() + records.size()),
        times_(t) {}

  template <typename Where>
  static result<record_batch_view> parse_with(std::span<const std::byte> b, batch_check check, batch_decompressor* d,
                                              const Where& where_) {
    auto where = [&] { return detail::where_string(where_); };
    BROOK_TRY_ASSIGN(auto hr, check_batch_header(b, where_));
    const batch_header& h = hr;
    const std::byte* begin = b.data();
    const std::byte* end = begin + h.size_bytes();
    if (check.crc) {
      std::uint32_t actual = crc32c({begin + batch_layout::crc_begin, end});
      if (actual != h.crc)
        return make_error(errc::corrupt_message,
                          "{}: CRC mismatch in batch at offset {} (stored {:#010x}, computed {:#010x})", where(),
                          h.base_offset, h.crc, actual);
    }
    BROOK_TRY(check_batch_codec(h, where_));
    std::span<const std::byte> records(begin + batch_layout::records, end);
    record_timestamps times;
    if (h.compression() != compression_type::none && h.records_count == 0) {
      // An empty batch holds no records whatever its codec bits say, and its payload is not
      // decoded (Kafka's DefaultRecordBatch.iterator() returns nothing for a count of 0).
      records = records.first(0);
    } else if (h.compression() != compression_type::none) {
      if (d == nullptr) {
        if (check.records)
          return make_error(errc::unsupported_compression_type,
                            "{}: batch at offset {} is {}-compressed and was read without a batch_decompressor",
                            where(), h.base_offset, compression_name(h.compression()));
        return record_batch_view(h, begin, end, {}, times);
      }
      auto unpacked = d->decompress(h.compression(), records);
      if (!unpacked)  // the place is formatted only for an error
        return error(unpacked.error().code(),
                     fmt::format("{}: batch at offset {}: {}", where(), h.base_offset, unpacked.error().message()));
      records = *unpacked;
      if (records.data() == nullptr) records = std::span<const std::byte>(begin + batch_layout::records, 0);
    }
    if (check.records) {
      const std::string_view kind = h.compression() != compression_type::none ? "decompressed " : "";
      BROOK_TRY_ASSIGN(times, walk_records(h, records, kind, where));
    }
    return record_batch_view(h, begin, end, records, times);
  }

  /// Walks and checks every record of `records` (recordsCount of them, ending exactly at the
  /// end) and collects their timestamps.
  template <typename WhereFn>
  static result<record_timestamps> walk_records(const batch_header& h, std::span<const std::byte> records,
                                                std::string_view kind, const WhereFn& where) {
    record_timestamps times;
    times.known = true;
    const std::byte* p = records.data();
    const std::byte* end = p + records.size();
    std::int64_t prev_delta = -1;
    detail::record_fields f;
    for (std::int32_t i = 0; i < h.records_count; ++i) {
      const std::byte* next = detail::parse_record(p, end, f, /*check_headers=*/true);
      if (next == nullptr)
        return make_error(
            errc::corrupt_message,
            "{}: record {} of batch at offset {} is malformed or missing (byte {} of the {}records, of {})", where(), i,
            h.base_offset, p - records.data(), kind, records.size());
      if (f.offset_delta <= prev_delta || f.offset_delta > h.last_offset_delta)
        return make_error(errc::corrupt_message, "{}: record {} of batch at offset {} has offsetDelta {} out of order",
                          where(), i, h.base_offset, f.offset_delta);
      timestamp_ms ts = 0;
      if (__builtin_add_overflow(h.base_timestamp, f.timestamp_delta, &ts))
        return make_error(errc::corrupt_message, "{}: record {} of batch at offset {} has a timestamp that overflows",
                          where(), i, h.base_offset);
      times.add(ts);
      prev_delta = f.offset_delta;
      p = next;
    }
    if (p != end)
      return make_error(errc::corrupt_message, "{}: batch at offset {} has {} {}bytes after its {} records", where(),
                        h.base_offset, end - p, kind, h.records_count);
    return times;
  }

  batch_header header_;
  const std::byte* begin_ = nullptr;
  const std::byte* end_ = nullptr;
  const std::byte* records_begin_ = nullptr;
  const std::byte* records_end_ = nullptr;
  record_timestamps times_;
};

/// Overwrites baseOffset in place (the CRC does not cover it). REQUIRES: b holds a batch header.
inline void set_batch_base_offset(std::span<std::byte> b, brook::offset o) noexcept {
  detail::store_be64(b.data() + batch_layout::base_offset, o.value());
}
/// Overwrites partitionLeaderEpoch in place (the CRC does not cover it).
inline void set_batch_leader_epoch(std::span<std::byte> b, std::int32_t epoch) noexcept {
  detail::store_be32(b.data() + batch_layout::partition_leader_epoch, epoch);
}
/// Recomputes and stores the CRC of the whole batch `b` (exactly one batch).
inline void update_batch_crc(std::span<std::byte> b) noexcept {
  detail::store_be_u32(b.data() + batch_layout::crc,
                       crc32c(std::span<const std::byte>(b).subspan(batch_layout::crc_begin)));
}
/// Writes into `out` the uncompressed batch `b` (exactly one batch, every header field final)
/// with its records compressed by `codec` at `level`: the same header with the codec in the
/// attributes, batchLength and the CRC recomputed, then the codec payload. Errors: those of
/// compression_codec::compress, record_too_large when the result does not fit batchLength.
/// REQUIRES: b is uncompressed.
inline result<void> compress_batch(std::span<const std::byte> b, const compression_codec& codec, int level,
                                   byte_buffer& out) {
  namespace L = batch_layout;
  BROOK_ASSERT(
      b.size() >= L::header_size && (detail::load_be16(b.data() + L::attributes) & batch_attr::compression_mask) == 0,
      "compress_batch of a batch that is short or already compressed");
  out.assign(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(L::header_size));
  BROOK_TRY(codec.compress(b.subspan(L::header_size), level, out));
  if (out.size() - L::log_overhead > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    return make_error(errc::record_too_large, "a {}-compressed batch of {} bytes does not fit a batch",
                      compression_name(codec.type()), out.size());
  const auto attrs = detail::load_be16(out.data() + L::attributes);
  detail::store_be16(out.data() + L::attributes,
                     static_cast<std::int16_t>((attrs & ~batch_attr::compression_mask) |
                                               (static_cast<int>(codec.type()) & batch_attr::compression_mask)));
  detail::store_be32(out.data() + L::batch_length, static_cast<std::int32_t>(out.size() - L::log_overhead));
  detail::store_be_u32(out.data() + L::crc, crc32c(std::span<const std::byte>(out).subspan(L::crc_begin)));
  return ok();
}

/// Overwrites maxTimestamp and recomputes the CRC of the batch `b` (exactly one batch), as
/// Kafka's broker corrects a producer's maxTimestamp to the largest record timestamp.
inline void set_batch_max_timestamp(std::span<std::byte> b, timestamp_ms t) noexcept {
  detail::store_be64(b.data() + batch_layout::max_timestamp, t);
  update_batch_crc(b);
}
/// Stamps a LogAppendTime on the batch `b` (exactly one batch): sets the timestamp-type
/// bit and maxTimestamp, then recomputes the CRC, as Kafka's broker does.
inline void set_batch_log_append_time(std::span<std::byte> b, timestamp_ms now) noexcept {
  auto attrs = detail::load_be16(b.data() + batch_layout::attributes);
  detail::store_be16(b.data() + batch_layout::attributes,
                     static_cast<std::int16_t>(attrs | batch_attr::timestamp_type));
  detail::store_be64(b.data() + batch_layout::max_timestamp, now);
  update_batch_crc(b);
}

}  // namespace brook

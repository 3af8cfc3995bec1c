// Bounds-checked reader and writer for the primitive types of Kafka's
// generated messages (clients/src/main/java/org/apache/kafka/common/protocol/
// Readable.java, Writable.java, ByteUtils.java), shared by the group layer's
// record and protocol codecs and replication's metadata records, so it sits in
// the codec layer below both. The byte diagrams live in the headers that own
// each format (offsets_topic_records.hpp, consumer_protocol.hpp,
// metadata_records.hpp).
//
//   int16/int32/int64     big-endian, two's complement
//   string                int16 length N, N bytes of UTF-8; N = -1 is null (nullable fields only)
//   bytes                 int32 length N, N bytes; N = -1 is null (nullable fields only)
//   [T]  array            int32 count N, N elements; N = -1 is null (nullable fields only)
//   uvarint               unsigned base-128, low group first, at most 5 bytes (NOT zigzag)
//   compact string/bytes  uvarint N+1, N bytes; uvarint 0 is null
//   compact [T]           uvarint N+1, N elements; uvarint 0 is null
//   tagged fields         uvarint count, then per field: uvarint tag, uvarint size, size bytes
//
// Every read checks the bytes are there and fails with errc::corrupt_message,
// naming the message, the field and the byte position. Any negative length
// other than the -1 null marker is rejected (Java would read any negative as
// null; brook treats it as corruption). A count of elements larger than the
// bytes left could hold is rejected before anything is allocated.
//
// Thread-safety: message_reader and message_writer are single-threaded values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/format/bytes.hpp>

namespace brook::detail {

/// Largest string Kafka's generated code reads or writes (Short.MAX_VALUE bytes).
inline constexpr std::size_t max_message_string_size = 0x7fff;

/// Reads one message from a borrowed buffer. Does not own the bytes: they must
/// outlive the reader. Thread-safety: one thread at a time.
class message_reader {
 public:
  /// `what` names the message in errors ("OffsetCommitValue v3"); it must outlive the reader.
  message_reader(std::span<const std::byte> buf, std::string_view what) noexcept : buf_(buf), what_(what) {}

  std::size_t position() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return buf_.size() - pos_; }
  void set_what(std::string_view what) noexcept { what_ = what; }

  /// An errc::corrupt_message error at the current position.
  template <typename... Args>
  brook::error fail(std::string_view field, fmt::format_string<Args...> f, Args&&... args) const {
    return fail_at(pos_, field, f, std::forward<Args>(args)...);
  }
  template <typename... Args>
  brook::error fail_at(std::size_t pos, std::string_view field, fmt::format_string<Args...> f, Args&&... args) const {
    return make_error(errc::corrupt_message, "{}: field '{}' at byte {}: {}", what_, field, pos,
                      fmt::format(f, std::forward<Args>(args)...));
  }

  result<void> int16(std::string_view field, std::int16_t& out) {
    BROOK_TRY(need(field, 2, "int16"));
    out = load_be16(buf_.data() + pos_);
    pos_ += 2;
    return ok();
  }
  result<void> int32(std::string_view field, std::int32_t& out) {
    BROOK_TRY(need(field, 4, "int32"));
    out = load_be32(buf_.data() + pos_);
    pos_ += 4;
    return ok();
  }
  result<void> int64(std::string_view field, std::int64_t& out) {
    BROOK_TRY(need(field, 8, "int64"));
    out = load_be64(buf_.data() + pos_);
    pos_ += 8;
    return ok();
  }

  /// Unsigned varint (ByteUtils.readUnsignedVarint): at most 5 bytes, value < 2^32.
  result<void> uvarint(std::string_view field, std::uint32_t& out) {
    const std::size_t start = pos_;
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 5; ++i) {
      if (pos_ >= buf_.size())
        return fail_at(start, field, "unsigned varint runs past the end ({} bytes in all)", buf_.size());
      const auto b = static_cast<std::uint8_t>(buf_[pos_++]);
      if (i == 4 && b > 0x0f) return fail_at(start, field, "unsigned varint longer than 32 bits");
      v |= static_cast<std::uint32_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        out = v;
        return ok();
      }
    }
    return fail_at(start, field, "unsigned varint longer than 32 bits");  // unreachable: i == 4 returns above
  }

  // ---- strings
  result<void> string(std::string_view field, std::string& out) {
    std::optional<std::string> s;
    BROOK_TRY(nullable_string(field, s));
    if (!s) return fail_at(pos_ - 2, field, "null (length -1) in a non-nullable string");
    out = std::move(*s);
    return ok();
  }
  result<void> nullable_string(std::string_view field, std::optional<std::string>& out) {
    const std::size_t start = pos_;
    std::int16_t n = 0;
    BROOK_TRY(int16(field, n));
    if (n == -1) {
      out.reset();
      return ok();
    }
    if (n < 0) return fail_at(start, field, "negative string length {}", n);
    return take_string(field, start, static_cast<std::size_t>(n), out);
  }
  result<void> compact_string(std::string_view field, std::string& out) {
    const std::size_t start = pos_;
    std::optional<std::string> s;
    BROOK_TRY(compact_nullable_string(field, s));
    if (!s) return fail_at(start, field, "null (length 0) in a non-nullable compact string");
    out = std::move(*s);
    return ok();
  }
  result<void> compact_nullable_string(std::string_view field, std::optional<std::string>& out) {
    const std::size_t start = pos_;
    std::uint32_t n1 = 0;
    BROOK_TRY(uvarint(field, n1));
    if (n1 == 0) {
      out.reset();
      return ok();
    }
    const std::uint32_t n = n1 - 1;
    if (n > max_message_string_size)
      return fail_at(start, field, "compact string length {} exceeds {}", n, max_message_string_size);
    return take_string(field, start, n, out);
  }

  // ---- bytes
  result<void> bytes(std::string_view field, std::vector<std::byte>& out) {
    std::optional<std::vector<std::byte>> b;
    BROOK_TRY(nullable_bytes(field, b));
    if (!b) return fail_at(pos_ - 4, field, "null (length -1) in non-nullable bytes");
    out = std::move(*b);
    return ok();
  }
  result<void> nullable_bytes(std::string_view field, std::optional<std::vector<std::byte>>& out) {
    const std::size_t start = pos_;
    std::int32_t n = 0;
    BROOK_TRY(int32(field, n));
    if (n == -1) {
      out.reset();
      return ok();
    }
    if (n < 0) return fail_at(start, field, "negative bytes length {}", n);
    return take_bytes(field, start, static_cast<std::size_t>(n), out);
  }
  result<void> compact_bytes(std::string_view field, std::vector<std::byte>& out) {
    const std::size_t start = pos_;
    std::optional<std::vector<std::byte>> b;
    BROOK_TRY(compact_nullable_bytes(field, b));
    if (!b) return fail_at(start, field, "null (length 0) in non-nullable compact bytes");
    out = std::move(*b);
    return ok();
  }
  result<void> compact_nullable_bytes(std::string_view field, std::optional<std::vector<std::byte>>& out) {
    const std::size_t start = pos_;
    std::uint32_t n1 = 0;
    BROOK_TRY(uvarint(field, n1));
    if (n1 == 0) {
      out.reset();
      return ok();
    }
    if (n1 - 1 > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max()))
      return fail_at(start, field, "compact bytes length {} exceeds int32", n1 - 1);
    return take_bytes(field, start, n1 - 1, out);
  }

  // ---- array lengths
  /// int32 element count of a non-nullable array; each element takes at least min_element_size bytes.
  result<void> array_length(std::string_view field, std::size_t min_element_size, std::size_t& out) {
    const std::size_t start = pos_;
    std::int32_t n = 0;
    BROOK_TRY(int32(field, n));
    if (n == -1) return fail_at(start, field, "null (count -1) in a non-nullable array");
    if (n < 0) return fail_at(start, field, "negative array count {}", n);
    return check_count(field, start, static_cast<std::size_t>(n), min_element_size, out);
  }
  /// Compact (uvarint N+1) element count of a non-nullable array.
  result<void> compact_array_length(std::string_view field, std::size_t min_element_size, std::size_t& out) {
    const std::size_t start = pos_;
    std::uint32_t n1 = 0;
    BROOK_TRY(uvarint(field, n1));
    if (n1 == 0) return fail_at(start, field, "null (count 0) in a non-nullable compact array");
    return check_count(field, start, n1 - 1, min_element_size, out);
  }

  /// Skips a tagged-field section (every tag is unknown to the versions brook reads).
  result<void> skip_tagged_fields(std::string_view field) {
    std::uint32_t count = 0;
    BROOK_TRY(uvarint(field, count));
    if (count > remaining() / 2)  // each tagged field takes at least 2 bytes (tag, size)
      return fail(field, "{} tagged fields cannot fit in the {} bytes left", count, remaining());
    for (std::uint32_t i = 0; i < count; ++i) {
      std::uint32_t tag = 0;
      std::uint32_t size = 0;
      BROOK_TRY(uvarint(field, tag));
      const std::size_t at = pos_;
      BROOK_TRY(uvarint(field, size));
      if (size > remaining())
        return fail_at(at, field, "tagged field {} of {} bytes runs past the end ({} bytes left)", tag, size,
                       remaining());
      pos_ += size;
    }
    return ok();
  }

  /// Fails unless every byte was consumed.
  result<void> expect_end() const {
    if (pos_ != buf_.size())
      return make_error(errc::corrupt_message, "{}: {} unexpected trailing bytes at byte {}", what_, buf_.size() - pos_,
                        pos_);
    return ok();
  }

 private:
  result<void> need(std::string_view field, std::size_t n, std::string_view type) const {
    if (remaining() < n) return fail(field, "{} needs {} bytes, {} left", type, n, remaining());
    return ok();
  }
  result<void> take_string(std::string_view field, std::size_t start, std::size_t n, std::optional<std::string>& out) {
    if (n > remaining()) return fail_at(start, field, "string of {} bytes runs past the end ({} left)", n, remaining());
    out.emplace(reinterpret_cast<const char*>(buf_.data() + pos_), n);
    pos_ += n;
    return ok();
  }
  result<void> take_bytes(std::string_view field, std::size_t start, std::size_t n,
                          std::optional<std::vector<std::byte>>& out) {
    if (n > remaining()) return fail_at(start, field, "{} bytes run past the end ({} left)", n, remaining());
    out.emplace(buf_.begin() + static_cast<std::ptrdiff_t>(pos_), buf_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return ok();
  }
  result<void> check_count(std::string_view field, std::size_t start, std::size_t n, std::size_t min_element_size,
                           std::size_t& out) const {
    if (min_element_size > 0 && n > remaining() / min_element_size)
      return fail_at(start, field, "{} elements of at least {} bytes cannot fit in the {} bytes left", n,
                     min_element_size, remaining());
    out = n;
    return ok();
  }

  std::span<const std::byte> buf_;
  std::string_view what_;
  std::size_t pos_ = 0;
};

/// Appends message primitives to a byte vector. Thread-safety: one thread at a time.
class message_writer {
 public:
  void int16(std::int16_t v) { store_be16(grow(2), v); }
  void int32(std::int32_t v) { store_be32(grow(4), v); }
  void int64(std::int64_t v) { store_be64(grow(8), v); }
  void uvarint(std::uint32_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::byte>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<std::byte>(v));
  }

  /// REQUIRES: s.size() <= 32767 (Kafka's generated writers throw beyond it).
  void string(std::string_view s) {
    BROOK_ASSERT(s.size() <= max_message_string_size, "string of {} bytes exceeds Kafka's 32767", s.size());
    int16(static_cast<std::int16_t>(s.size()));
    raw(as_bytes(s));
  }
  void nullable_string(const std::optional<std::string>& s) {
    if (!s) return int16(-1);
    string(*s);
  }
  void compact_string(std::string_view s) {
    BROOK_ASSERT(s.size() <= max_message_string_size, "string of {} bytes exceeds Kafka's 32767", s.size());
    uvarint(static_cast<std::uint32_t>(s.size()) + 1);
    raw(as_bytes(s));
  }
  void compact_nullable_string(const std::optional<std::string>& s) {
    if (!s) return uvarint(0);
    compact_string(*s);
  }
  void bytes(std::span<const std::byte> b) {
    BROOK_ASSERT(b.size() <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()),
                 "bytes of {} exceed int32", b.size());
    int32(static_cast<std::int32_t>(b.size()));
    raw(b);
  }
  void nullable_bytes(const std::optional<std::vector<std::byte>>& b) {
    if (!b) return int32(-1);
    bytes(*b);
  }
  void compact_bytes(std::span<const std::byte> b) {
    BROOK_ASSERT(b.size() < static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()),
                 "bytes of {} exceed int32", b.size());
    uvarint(static_cast<std::uint32_t>(b.size()) + 1);
    raw(b);
  }
  void array_length(std::size_t n) {
    BROOK_ASSERT(n <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()), "array of {}", n);
    int32(static_cast<std::int32_t>(n));
  }
  void compact_array_length(std::size_t n) {
    BROOK_ASSERT(n < static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()), "array of {}", n);
    uvarint(static_cast<std::uint32_t>(n) + 1);
  }
  /// An empty tagged-field section (brook writes no tagged fields).
  void no_tagged_fields() { uvarint(0); }

  void raw(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  std::vector<std::byte> finish() && { return std::move(out_); }

 private:
  std::byte* grow(std::size_t n) {
    out_.resize(out_.size() + n);
    return out_.data() + out_.size() - n;
  }
  std::vector<std::byte> out_;
};

}  // namespace brook::detail

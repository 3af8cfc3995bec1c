// The one reader and writer of the primitive types of Kafka's generated
// messages (clients/src/main/java/org/apache/kafka/common/protocol/
// Readable.java, Writable.java, ByteUtils.java, types/Type.java). The group
// records, the consumer protocol, the KRaft metadata records and the wire
// protocol all read and write through it, mostly via the declarative field
// tables of codec/schema.hpp. The byte diagrams of each message live in the
// header that owns the message.
//
//   int8/int16/int32/int64  big-endian, two's complement
//   uint16/uint32           big-endian, unsigned
//   bool                    one byte: 0 = false, anything else = true (Readable.readByte() != 0)
//   float64                 IEEE 754 binary64, big-endian
//   uuid                    16 bytes, most significant first
//   uvarint                 unsigned base-128, low group first, at most 5 bytes (format/varint.hpp)
//   varint / varlong        zigzag base-128, at most 5 / 10 bytes (format/varint.hpp)
//   string                  int16 length N, N bytes of UTF-8; N = -1 is null (nullable fields only)
//   bytes                   int32 length N, N bytes; N = -1 is null (nullable fields only)
//   [T]  array              int32 count N, N elements; N = -1 is null (nullable fields only)
//   compact string/bytes    uvarint N+1, N bytes; uvarint 0 is null
//   compact [T]             uvarint N+1, N elements; uvarint 0 is null
//   tagged fields           uvarint count, then per field: uvarint tag | uvarint size | size bytes
//
// Every read checks the bytes are there and fails with errc::corrupt_message
// naming the message, the field (its path through nested structs, e.g.
// "Topics.Partitions.Index") and the byte position. Any negative length other
// than the -1 null marker is rejected (Java would read any negative as null;
// brook treats it as corruption). A count of elements larger than the bytes
// left could hold is rejected before anything is allocated. Strings longer
// than 32767 bytes are rejected on read and on write, as Kafka's generated
// code does.
//
// Thread-safety: message_reader and message_writer are single-threaded values.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/bytes.hpp>
#include <brook/format/varint.hpp>

namespace brook::codec {

/// Largest string Kafka's generated code reads or writes (Short.MAX_VALUE bytes).
inline constexpr std::size_t max_string_size = 0x7fff;

/// A field's name and, for a field of a nested struct, the field that holds the struct;
/// errors print the path ("Topics.Partitions.Index"). Lives on the caller's stack.
struct field_ref {
  std::string_view name;
  const field_ref* parent = nullptr;

  constexpr field_ref(const char* n) noexcept : name(n) {}  // NOLINT: implicit, for literals
  constexpr field_ref(std::string_view n, const field_ref* p = nullptr) noexcept : name(n), parent(p) {}
  field_ref(const std::string& n) noexcept : name(n) {}  // NOLINT: implicit
};

}  // namespace brook::codec

template <>
struct fmt::formatter<brook::codec::field_ref> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const brook::codec::field_ref& f, Ctx& ctx) const {
    return put(f, ctx.out());
  }

 private:
  // The path written out without formatting a field_ref inside its own formatter, which
  // clang 14 cannot check at compile time (fmt 9's consteval format strings).
  template <typename Out>
  static Out put(const brook::codec::field_ref& f, Out out) {
    if (f.parent != nullptr) {
      out = put(*f.parent, out);
      *out++ = '.';
    }
    return std::copy(f.name.begin(), f.name.end(), out);
  }
};

namespace brook::codec {

/// Reads one message from a borrowed buffer. Does not own the bytes: they must
/// outlive the reader. Thread-safety: one thread at a time.
class message_reader {
 public:
  /// `what` names the message in errors ("OffsetCommitValue v3").
  message_reader(std::span<const std::byte> buf, std::string what) : buf_(buf), what_(std::move(what)) {}

  std::size_t position() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return buf_.size() - pos_; }
  const std::string& what() const noexcept { return what_; }
  void set_what(std::string what) { what_ = std::move(what); }

  /// An errc::corrupt_message error at byte `pos`.
  template <typename... Args>
  brook::error fail_at(std::size_t pos, const field_ref& field, fmt::format_string<Args...> f, Args&&... args) const {
    return make_error(errc::corrupt_message, "{}: field '{}' at byte {}: {}", what_, field, pos,
                      fmt::format(f, std::forward<Args>(args)...));
  }
  /// An errc::corrupt_message error at the current position.
  template <typename... Args>
  brook::error fail(const field_ref& field, fmt::format_string<Args...> f, Args&&... args) const {
    return fail_at(pos_, field, f, std::forward<Args>(args)...);
  }

  // ---- fixed-size scalars
  result<void> int8(const field_ref& f, std::int8_t& out) {
    BROOK_TRY(need(f, 1, "int8"));
    out = static_cast<std::int8_t>(buf_[pos_++]);
    return ok();
  }
  result<void> boolean(const field_ref& f, bool& out) {
    std::int8_t v = 0;
    BROOK_TRY(int8(f, v));
    out = v != 0;
    return ok();
  }
  result<void> int16(const field_ref& f, std::int16_t& out) {
    BROOK_TRY(need(f, 2, "int16"));
    out = detail::load_be16(buf_.data() + pos_);
    pos_ += 2;
    return ok();
  }
  result<void> uint16(const field_ref& f, std::uint16_t& out) {
    std::int16_t v = 0;
    BROOK_TRY(int16(f, v));
    out = static_cast<std::uint16_t>(v);
    return ok();
  }
  result<void> int32(const field_ref& f, std::int32_t& out) {
    BROOK_TRY(need(f, 4, "int32"));
    out = detail::load_be32(buf_.data() + pos_);
    pos_ += 4;
    return ok();
  }
  result<void> uint32(const field_ref& f, std::uint32_t& out) {
    BROOK_TRY(need(f, 4, "uint32"));
    out = detail::load_be_u32(buf_.data() + pos_);
    pos_ += 4;
    return ok();
  }
  result<void> int64(const field_ref& f, std::int64_t& out) {
    BROOK_TRY(need(f, 8, "int64"));
    out = detail::load_be64(buf_.data() + pos_);
    pos_ += 8;
    return ok();
  }
  result<void> float64(const field_ref& f, double& out) {
    std::int64_t bits = 0;
    BROOK_TRY(int64(f, bits));
    out = std::bit_cast<double>(bits);
    return ok();
  }
  result<void> id(const field_ref& f, uuid& out) {
    BROOK_TRY(need(f, 16, "uuid"));
    for (std::size_t i = 0; i < 16; ++i) out.bytes[i] = static_cast<std::uint8_t>(buf_[pos_ + i]);
    pos_ += 16;
    return ok();
  }

  // ---- varints
  /// Unsigned varint (ByteUtils.readUnsignedVarint): at most 5 bytes, value < 2^32.
  result<void> uvarint(const field_ref& f, std::uint32_t& out) {
    return base128(f, decode_uvarint(here(), end(), out), "unsigned varint", max_varint_size);
  }
  /// Zigzag varint (ByteUtils.readVarint).
  result<void> varint(const field_ref& f, std::int32_t& out) {
    return base128(f, decode_varint(here(), end(), out), "varint", max_varint_size);
  }
  /// Zigzag varlong (ByteUtils.readVarlong).
  result<void> varlong(const field_ref& f, std::int64_t& out) {
    return base128(f, decode_varlong(here(), end(), out), "varlong", max_varlong_size);
  }

  // ---- strings: classic (int16 length) or compact (uvarint length + 1)
  result<void> string(const field_ref& f, std::string& out) {
    return non_null(f, false, &message_reader::nullable_string, out);
  }
  result<void> compact_string(const field_ref& f, std::string& out) {
    return non_null(f, true, &message_reader::compact_nullable_string, out);
  }
  result<void> nullable_string(const field_ref& f, std::optional<std::string>& out) {
    const std::size_t start = pos_;
    std::int16_t n = 0;
    BROOK_TRY(int16(f, n));
    if (n == -1) return set_null(out);
    if (n < 0) return fail_at(start, f, "negative string length {}", n);
    return take(f, start, static_cast<std::size_t>(n), out);
  }
  result<void> compact_nullable_string(const field_ref& f, std::optional<std::string>& out) {
    const std::size_t start = pos_;
    std::uint32_t n1 = 0;
    BROOK_TRY(uvarint(f, n1));
    if (n1 == 0) return set_null(out);
    if (n1 - 1 > max_string_size)
      return fail_at(start, f, "compact string length {} exceeds {}", n1 - 1, max_string_size);
    return take(f, start, n1 - 1, out);
  }

  // ---- bytes: classic (int32 length) or compact (uvarint length + 1)
  result<void> bytes(const field_ref& f, std::vector<std::byte>& out) {
    return non_null(f, false, &message_reader::nullable_bytes, out);
  }
  result<void> compact_bytes(const field_ref& f, std::vector<std::byte>& out) {
    return non_null(f, true, &message_reader::compact_nullable_bytes, out);
  }
  result<void> nullable_bytes(const field_ref& f, std::optional<std::vector<std::byte>>& out) {
    const std::size_t start = pos_;
    std::optional<std::size_t> n;
    BROOK_TRY(bytes_length(f, false, n));
    if (!n) return set_null(out);
    return take(f, start, *n, out);
  }
  result<void> compact_nullable_bytes(const field_ref& f, std::optional<std::vector<std::byte>>& out) {
    const std::size_t start = pos_;
    std::optional<std::size_t> n;
    BROOK_TRY(bytes_length(f, true, n));
    if (!n) return set_null(out);
    return take(f, start, *n, out);
  }
  /// Nullable bytes, classic or compact, as a view of the reader's buffer (no copy): valid as
  /// long as the buffer. nullopt when null.
  result<void> nullable_bytes_view(const field_ref& f, bool compact, std::optional<std::span<const std::byte>>& out) {
    const std::size_t start = pos_;
    std::optional<std::size_t> n;
    BROOK_TRY(bytes_length(f, compact, n));
    if (!n) return set_null(out);
    if (*n > remaining()) return fail_at(start, f, "{} bytes run past the end ({} left)", *n, remaining());
    out = buf_.subspan(pos_, *n);
    pos_ += *n;
    return ok();
  }

  // ---- array counts; each element takes at least min_element_size bytes (0 counts as 1)
  /// int32 count of a non-nullable array.
  result<void> array_length(const field_ref& f, std::size_t min_element_size, std::size_t& out) {
    return non_null_count(f, false, min_element_size, out);
  }
  /// Compact (uvarint N+1) count of a non-nullable array.
  result<void> compact_array_length(const field_ref& f, std::size_t min_element_size, std::size_t& out) {
    return non_null_count(f, true, min_element_size, out);
  }
  /// Count of a nullable array, classic or compact; nullopt when null.
  result<void> nullable_array_length(const field_ref& f, bool compact, std::size_t min_element_size,
                                     std::optional<std::size_t>& out) {
    const std::size_t start = pos_;
    std::int64_t n = 0;
    if (compact) {
      std::uint32_t n1 = 0;
      BROOK_TRY(uvarint(f, n1));
      n = static_cast<std::int64_t>(n1) - 1;
    } else {
      std::int32_t n32 = 0;
      BROOK_TRY(int32(f, n32));
      n = n32;
    }
    if (n == -1) return set_null(out);
    if (n < 0) return fail_at(start, f, "negative array count {}", n);
    const std::size_t min = std::max<std::size_t>(min_element_size, 1);
    if (static_cast<std::uint64_t>(n) > remaining() / min)
      return fail_at(start, f, "{} elements of at least {} bytes cannot fit in the {} bytes left", n, min, remaining());
    out = static_cast<std::size_t>(n);
    return ok();
  }

  // ---- tagged fields
  /// Reads a tagged-field section. on_tag(tag) reads a known tag's value from this reader and
  /// returns result<bool>: false = unknown tag, skipped. A known tag's value may not read past
  /// its declared size and must consume all of it.
  template <typename OnTag>
  result<void> tagged_fields(const field_ref& f, OnTag&& on_tag) {
    std::uint32_t count = 0;
    BROOK_TRY(uvarint(f, count));
    if (count > remaining() / 2)  // each tagged field takes at least 2 bytes (tag, size)
      return fail(f, "{} tagged fields cannot fit in the {} bytes left", count, remaining());
    for (std::uint32_t i = 0; i < count; ++i) BROOK_TRY(one_tagged_field(f, on_tag));
    return ok();
  }
  /// Skips a tagged-field section (every tag unknown).
  result<void> skip_tagged_fields(const field_ref& f) {
    return tagged_fields(f, [](std::uint32_t) -> result<bool> { return false; });
  }

  /// Fails unless every byte was consumed.
  result<void> expect_end() const {
    if (pos_ != buf_.size())
      return make_error(errc::corrupt_message, "{}: {} trailing bytes of garbage after the message at byte {}", what_,
                        buf_.size() - pos_, pos_);
    return ok();
  }

 private:
  const std::byte* here() const noexcept { return buf_.data() + pos_; }
  const std::byte* end() const noexcept { return buf_.data() + buf_.size(); }

  result<void> need(const field_ref& f, std::size_t n, std::string_view type) const {
    if (remaining() < n) return fail(f, "{} needs {} bytes, {} left", type, n, remaining());
    return ok();
  }
  result<void> base128(const field_ref& f, std::size_t consumed, std::string_view type, std::size_t max_bytes) {
    if (consumed == 0) {
      if (remaining() < max_bytes &&
          std::none_of(here(), end(), [](std::byte b) { return (b & std::byte{0x80}) == std::byte{0}; }))
        return fail(f, "{} runs past the end ({} bytes left)", type, remaining());
      return fail(f, "{} longer than {} bytes or out of range", type, max_bytes);
    }
    pos_ += consumed;
    return ok();
  }
  // The length of nullable bytes: int32 (-1 null) or compact uvarint N+1 (0 null).
  result<void> bytes_length(const field_ref& f, bool compact, std::optional<std::size_t>& out) {
    const std::size_t start = pos_;
    if (compact) {
      std::uint32_t n1 = 0;
      BROOK_TRY(uvarint(f, n1));
      if (n1 == 0) return set_null(out);
      if (n1 - 1 > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max()))
        return fail_at(start, f, "compact bytes length {} exceeds int32", n1 - 1);
      out = n1 - 1;
      return ok();
    }
    std::int32_t n = 0;
    BROOK_TRY(int32(f, n));
    if (n == -1) return set_null(out);
    if (n < 0) return fail_at(start, f, "negative bytes length {}", n);
    out = static_cast<std::size_t>(n);
    return ok();
  }
  template <typename T>
  static result<void> set_null(std::optional<T>& out) {
    out.reset();
    return ok();
  }
  template <typename T>
  result<void> non_null(const field_ref& f, bool compact,
                        result<void> (message_reader::*nullable)(const field_ref&, std::optional<T>&), T& out) {
    const std::size_t start = pos_;
    std::optional<T> v;
    BROOK_TRY((this->*nullable)(f, v));
    if (!v) return fail_at(start, f, "null (length {}) in a non-nullable field", compact ? "0" : "-1");
    out = std::move(*v);
    return ok();
  }
  result<void> non_null_count(const field_ref& f, bool compact, std::size_t min_element_size, std::size_t& out) {
    const std::size_t start = pos_;
    std::optional<std::size_t> n;
    BROOK_TRY(nullable_array_length(f, compact, min_element_size, n));
    if (!n) return fail_at(start, f, "null (count {}) in a non-nullable array", compact ? "0" : "-1");
    out = *n;
    return ok();
  }
  result<void> take(const field_ref& f, std::size_t start, std::size_t n, std::optional<std::string>& out) {
    if (n > max_string_size) return fail_at(start, f, "string length {} exceeds {}", n, max_string_size);
    if (n > remaining()) return fail_at(start, f, "string of {} bytes runs past the end ({} left)", n, remaining());
    out.emplace(reinterpret_cast<const char*>(here()), n);
    pos_ += n;
    return ok();
  }
  result<void> take(const field_ref& f, std::size_t start, std::size_t n, std::optional<std::vector<std::byte>>& out) {
    if (n > remaining()) return fail_at(start, f, "{} bytes run past the end ({} left)", n, remaining());
    out.emplace(here(), here() + n);
    pos_ += n;
    return ok();
  }
  template <typename OnTag>
  result<void> one_tagged_field(const field_ref& f, OnTag& on_tag) {
    std::uint32_t tag = 0;
    std::uint32_t size = 0;
    BROOK_TRY(uvarint(f, tag));
    const std::size_t at = pos_;
    BROOK_TRY(uvarint(f, size));
    if (size > remaining())
      return fail_at(at, f, "tagged field {} of {} bytes runs past the end ({} bytes left)", tag, size, remaining());
    const std::size_t start = pos_;
    const std::span<const std::byte> whole = buf_;
    buf_ = buf_.first(start + size);  // a known field may not read past its declared size
    auto known = on_tag(tag);
    buf_ = whole;
    if (!known) return known.error();
    if (!*known) {
      pos_ = start + size;
      return ok();
    }
    if (pos_ != start + size)
      return fail_at(start, f, "tagged field {} declares {} bytes but its value took {}", tag, size, pos_ - start);
    return ok();
  }

  std::span<const std::byte> buf_;
  std::string what_;
  std::size_t pos_ = 0;
};

/// Bytes a written message refers to instead of holding: `size` bytes that belong at byte
/// `at` of the writer's buffer (before what was written after them), kept by `source`, which
/// only the type that wrote the reference interprets (protocol/records.hpp: a segment file
/// range a server sends with sendfile).
struct external_part {
  std::size_t at = 0;
  std::size_t size = 0;
  const void* source = nullptr;
};

/// Appends message primitives to a byte vector. Thread-safety: one thread at a time.
class message_writer {
 public:
  /// Bytes in the buffer (external parts not counted).
  std::size_t size() const noexcept { return out_.size(); }
  /// Bytes of the whole message: the buffer plus the external parts.
  std::size_t message_size() const noexcept { return out_.size() + external_bytes_; }

  void int8(std::int8_t v) { out_.push_back(static_cast<std::byte>(v)); }
  void boolean(bool v) { int8(v ? 1 : 0); }
  void int16(std::int16_t v) { detail::store_be16(grow(2), v); }
  void uint16(std::uint16_t v) { int16(static_cast<std::int16_t>(v)); }
  void int32(std::int32_t v) { detail::store_be32(grow(4), v); }
  void uint32(std::uint32_t v) { detail::store_be_u32(grow(4), v); }
  void int64(std::int64_t v) { detail::store_be64(grow(8), v); }
  void float64(double v) { int64(std::bit_cast<std::int64_t>(v)); }
  void id(const uuid& u) {
    raw(std::span<const std::byte>(reinterpret_cast<const std::byte*>(u.bytes.data()), u.bytes.size()));
  }
  void uvarint(std::uint32_t v) {
    put_base128(max_varint_size, [v](std::byte* p) { return encode_uvarint(v, p); });
  }
  void varint(std::int32_t v) {
    put_base128(max_varint_size, [v](std::byte* p) { return encode_varint(v, p); });
  }
  void varlong(std::int64_t v) {
    put_base128(max_varlong_size, [v](std::byte* p) { return encode_varlong(v, p); });
  }

  /// REQUIRES: s.size() <= 32767 (Kafka's generated writers throw beyond it).
  void string(std::string_view s) {
    BROOK_ASSERT(s.size() <= max_string_size, "string of {} bytes exceeds Kafka's 32767", s.size());
    int16(static_cast<std::int16_t>(s.size()));
    raw(as_bytes(s));
  }
  void nullable_string(const std::optional<std::string>& s) {
    if (!s) return int16(-1);
    string(*s);
  }
  void compact_string(std::string_view s) {
    BROOK_ASSERT(s.size() <= max_string_size, "string of {} bytes exceeds Kafka's 32767", s.size());
    uvarint(static_cast<std::uint32_t>(s.size()) + 1);
    raw(as_bytes(s));
  }
  void compact_nullable_string(const std::optional<std::string>& s) {
    if (!s) return uvarint(0);
    compact_string(*s);
  }
  void bytes(std::span<const std::byte> b) {
    array_length(b.size());
    raw(b);
  }
  void nullable_bytes(const std::optional<std::vector<std::byte>>& b) {
    if (!b) return int32(-1);
    bytes(*b);
  }
  void compact_bytes(std::span<const std::byte> b) {
    compact_array_length(b.size());
    raw(b);
  }
  void compact_nullable_bytes(const std::optional<std::vector<std::byte>>& b) {
    if (!b) return uvarint(0);
    compact_bytes(*b);
  }
  void array_length(std::size_t n) {
    BROOK_ASSERT(n <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()), "array of {}", n);
    int32(static_cast<std::int32_t>(n));
  }
  void compact_array_length(std::size_t n) {
    BROOK_ASSERT(n < static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()), "array of {}", n);
    uvarint(static_cast<std::uint32_t>(n) + 1);
  }
  /// A null array: int32 -1, or compact uvarint 0.
  void null_array(bool compact) { compact ? uvarint(0) : int32(-1); }
  /// An empty tagged-field section.
  void no_tagged_fields() { uvarint(0); }

  void raw(std::span<const std::byte> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  /// Marks `size` bytes kept by `source` as the message's next bytes, without copying them.
  void external(std::size_t size, const void* source) {
    externals_.push_back({out_.size(), size, source});
    external_bytes_ += size;
  }
  /// The external parts, in message order.
  const std::vector<external_part>& externals() const noexcept { return externals_; }
  /// The buffer. REQUIRES: no external parts (the bytes would not be the message).
  std::vector<std::byte> finish() && {
    BROOK_ASSERT(externals_.empty(), "a message with {} external parts finished as plain bytes", externals_.size());
    return std::move(out_);
  }
  /// The buffer, with or without external parts (see externals()).
  std::vector<std::byte> release() && { return std::move(out_); }

 private:
  std::byte* grow(std::size_t n) {
    out_.resize(out_.size() + n);
    return out_.data() + out_.size() - n;
  }
  template <typename Encode>
  void put_base128(std::size_t max_size, Encode encode) {
    const std::size_t at = out_.size();
    out_.resize(at + max_size);
    out_.resize(at + encode(out_.data() + at));
  }
  std::vector<std::byte> out_;
  std::vector<external_part> externals_;
  std::size_t external_bytes_ = 0;
};

/// Collects tagged fields (each tag's value bytes) and writes the section in ascending tag
/// order, as Kafka's generated writers do. Thread-safety: one thread at a time.
class tagged_section {
 public:
  /// Adds `tag` with the bytes write_value(message_writer&) writes.
  template <typename Fn>
  void add(std::uint32_t tag, Fn&& write_value) {
    message_writer v;
    write_value(v);
    fields_.emplace_back(tag, std::move(v).finish());
  }
  std::size_t count() const noexcept { return fields_.size(); }
  void write(message_writer& w) {
    std::sort(fields_.begin(), fields_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    w.uvarint(static_cast<std::uint32_t>(fields_.size()));
    for (const auto& [tag, bytes] : fields_) {
      w.uvarint(tag);
      w.uvarint(static_cast<std::uint32_t>(bytes.size()));
      w.raw(bytes);
    }
  }

 private:
  std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fields_;
};

}  // namespace brook::codec

// Kafka's varints (ByteUtils): protobuf base-128, least significant group
// first, high bit = "more bytes follow". The unsigned forms carry lengths and
// counts in flexible messages; the zigzag forms carry record fields.
//
//   uvarint   unsigned 32-bit                    1..5 bytes
//   varint    zigzag32(v) = (v << 1) ^ (v >> 31)  1..5 bytes
//   varlong   zigzag64(v) = (v << 1) ^ (v >> 63)  1..10 bytes
//
//   value 300 -> zigzag 600 = 0b100_1011000 -> bytes D8 04
//   uvarint 300 = 0b10_0101100 -> bytes AC 02
//
// Decoding is bounds-checked: a varint that runs past the buffer, or is
// longer than 5 (uvarint, varint) / 10 (varlong) bytes, or whose last byte
// carries bits beyond 32 / 64, is rejected (decode returns 0 bytes consumed);
// callers turn that into errc::corrupt_message. Nothing is ever read past `end`.
// This file is the one decoder of each form; codec/message_codec.hpp reads
// through it.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include <brook/core/linkage.hpp>

namespace brook {

inline constexpr std::size_t max_varint_size = 5;
inline constexpr std::size_t max_varlong_size = 10;

constexpr std::uint32_t zigzag_encode32(std::int32_t v) noexcept {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
constexpr std::int32_t zigzag_decode32(std::uint32_t u) noexcept {
  return static_cast<std::int32_t>((u >> 1) ^ (~(u & 1) + 1));
}
constexpr std::uint64_t zigzag_encode64(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
constexpr std::int64_t zigzag_decode64(std::uint64_t u) noexcept {
  return static_cast<std::int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

namespace detail {

/// Base-128 groups of u, least significant first. Returns bytes written.
template <typename U>
inline std::size_t encode_base128(U u, std::byte* out) noexcept {
  std::size_t n = 0;
  while (u >= 0x80) {
    out[n++] = static_cast<std::byte>((u & 0x7f) | 0x80);
    u >>= 7;
  }
  out[n++] = static_cast<std::byte>(u);
  return n;
}

template <typename U>
constexpr std::size_t base128_size(U u) noexcept {
  std::size_t n = 1;
  while (u >= 0x80) {
    u >>= 7;
    ++n;
  }
  return n;
}

/// decode_base128's general form: any length, every check.
template <typename U, std::size_t MaxBytes>
BROOK_NOINLINE std::size_t decode_base128_any(const std::byte* p, const std::byte* end, U& out) noexcept {
  constexpr unsigned last_bits = sizeof(U) * 8 - 7 * (MaxBytes - 1);  // 4 for 32-bit, 1 for 64-bit
  U u = 0;
  for (std::size_t i = 0; i < MaxBytes; ++i) {
    if (p + i >= end) return 0;
    const auto b = static_cast<std::uint8_t>(p[i]);
    if (i == MaxBytes - 1 && (b >> last_bits) != 0) return 0;  // bits beyond U or one byte too many
    u |= static_cast<U>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      out = u;
      return i + 1;
    }
  }
  return 0;  // unreachable: the last byte either ends the value or fails the check above
}

/// Decodes at most MaxBytes groups into U; the last group may carry only the bits U has left.
/// Returns bytes consumed, 0 if truncated, too long or overflowing. One- and two-byte values
/// (every length and delta of a typical record) are decoded inline; the rest out of line.
template <typename U, std::size_t MaxBytes>
BROOK_ALWAYS_INLINE std::size_t decode_base128(const std::byte* p, const std::byte* end, U& out) noexcept {
  static_assert(MaxBytes >= 2 && sizeof(U) >= 2);
  if (p < end) [[likely]] {
    const auto b0 = static_cast<std::uint8_t>(p[0]);
    if (b0 < 0x80) {
      out = b0;
      return 1;
    }
    if (end - p >= 2) {
      const auto b1 = static_cast<std::uint8_t>(p[1]);
      if (b1 < 0x80) {
        out = static_cast<U>((b0 & 0x7fu) | (static_cast<U>(b1) << 7));
        return 2;
      }
    }
  }
  return decode_base128_any<U, MaxBytes>(p, end, out);
}

}  // namespace detail

/// Bytes the unsigned varint of u takes.
constexpr std::size_t uvarint_size(std::uint32_t u) noexcept { return detail::base128_size(u); }
/// Bytes the zigzag varint of v takes.
constexpr std::size_t varint_size(std::int32_t v) noexcept { return detail::base128_size(zigzag_encode32(v)); }
/// Bytes the zigzag varlong of v takes.
constexpr std::size_t varlong_size(std::int64_t v) noexcept { return detail::base128_size(zigzag_encode64(v)); }

/// Writes the unsigned varint of u at out (room for max_varint_size). Returns bytes written.
inline std::size_t encode_uvarint(std::uint32_t u, std::byte* out) noexcept { return detail::encode_base128(u, out); }
/// Writes the zigzag varint of v at out (room for max_varint_size). Returns bytes written.
inline std::size_t encode_varint(std::int32_t v, std::byte* out) noexcept {
  return detail::encode_base128(zigzag_encode32(v), out);
}
/// Writes the zigzag varlong of v at out (room for max_varlong_size). Returns bytes written.
inline std::size_t encode_varlong(std::int64_t v, std::byte* out) noexcept {
  return detail::encode_base128(zigzag_encode64(v), out);
}

/// Decodes an unsigned varint from [p, end). Returns bytes consumed, 0 if truncated or malformed.
BROOK_ALWAYS_INLINE std::size_t decode_uvarint(const std::byte* p, const std::byte* end, std::uint32_t& out) noexcept {
  return detail::decode_base128<std::uint32_t, max_varint_size>(p, end, out);
}
/// Decodes a zigzag varint from [p, end). Returns bytes consumed, 0 if truncated or malformed.
BROOK_ALWAYS_INLINE std::size_t decode_varint(const std::byte* p, const std::byte* end, std::int32_t& out) noexcept {
  std::uint32_t u = 0;
  const std::size_t n = detail::decode_base128<std::uint32_t, max_varint_size>(p, end, u);
  if (n != 0) out = zigzag_decode32(u);
  return n;
}
/// Decodes a zigzag varlong from [p, end). Returns bytes consumed, 0 if truncated or malformed.
BROOK_ALWAYS_INLINE std::size_t decode_varlong(const std::byte* p, const std::byte* end, std::int64_t& out) noexcept {
  std::uint64_t u = 0;
  const std::size_t n = detail::decode_base128<std::uint64_t, max_varlong_size>(p, end, u);
  if (n != 0) out = zigzag_decode64(u);
  return n;
}

}  // namespace brook

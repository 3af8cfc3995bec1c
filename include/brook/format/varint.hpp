// Zigzag varints, as Kafka's ByteUtils writes them (protobuf base-128, least
// significant group first, high bit = "more bytes follow"):
//
//   zigzag32(v) = (v << 1) ^ (v >> 31)      varint : 1..5 bytes
//   zigzag64(v) = (v << 1) ^ (v >> 63)      varlong: 1..10 bytes
//
//   value 300 -> zigzag 600 = 0b100_1011000 -> bytes D8 04
//
// Decoding is bounds-checked: a varint that runs past the buffer, or is
// longer than 5 (varint) / 10 (varlong) bytes, or whose last byte carries
// bits beyond 32 / 64, is rejected (decode returns 0 bytes consumed); callers
// turn that into errc::corrupt_message. Nothing is ever read past `end`.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

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

/// Bytes the zigzag varint of v takes.
constexpr std::size_t varint_size(std::int32_t v) noexcept {
  std::uint32_t u = zigzag_encode32(v);
  std::size_t n = 1;
  while (u >= 0x80) { u >>= 7; ++n; }
  return n;
}
/// Bytes the zigzag varlong of v takes.
constexpr std::size_t varlong_size(std::int64_t v) noexcept {
  std::uint64_t u = zigzag_encode64(v);
  std::size_t n = 1;
  while (u >= 0x80) { u >>= 7; ++n; }
  return n;
}

/// Writes the zigzag varint of v at out (room for max_varint_size). Returns bytes written.
inline std::size_t encode_varint(std::int32_t v, std::byte* out) noexcept {
  std::uint32_t u = zigzag_encode32(v);
  std::size_t n = 0;
  while (u >= 0x80) {
    out[n++] = static_cast<std::byte>((u & 0x7f) | 0x80);
    u >>= 7;
  }
  out[n++] = static_cast<std::byte>(u);
  return n;
}
/// Writes the zigzag varlong of v at out (room for max_varlong_size). Returns bytes written.
inline std::size_t encode_varlong(std::int64_t v, std::byte* out) noexcept {
  std::uint64_t u = zigzag_encode64(v);
  std::size_t n = 0;
  while (u >= 0x80) {
    out[n++] = static_cast<std::byte>((u & 0x7f) | 0x80);
    u >>= 7;
  }
  out[n++] = static_cast<std::byte>(u);
  return n;
}

/// Decodes a zigzag varint from [p, end). Returns bytes consumed, 0 if truncated or malformed.
inline std::size_t decode_varint(const std::byte* p, const std::byte* end, std::int32_t& out) noexcept {
  std::uint32_t u = 0;
  for (std::size_t i = 0; i < max_varint_size; ++i) {
    if (p + i >= end) return 0;
    auto b = static_cast<std::uint8_t>(p[i]);
    if (i == max_varint_size - 1 && b > 0x0f) return 0;  // bits beyond 32 or a 6th byte
    u |= static_cast<std::uint32_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      out = zigzag_decode32(u);
      return i + 1;
    }
  }
  return 0;
}
/// Decodes a zigzag varlong from [p, end). Returns bytes consumed, 0 if truncated or malformed.
inline std::size_t decode_varlong(const std::byte* p, const std::byte* end, std::int64_t& out) noexcept {
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < max_varlong_size; ++i) {
    if (p + i >= end) return 0;
    auto b = static_cast<std::uint8_t>(p[i]);
    if (i == max_varlong_size - 1 && b > 0x01) return 0;  // bits beyond 64 or an 11th byte
    u |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      out = zigzag_decode64(u);
      return i + 1;
    }
  }
  return 0;
}

}  // namespace brook

// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the
// checksum of Kafka's RecordBatch v2.
//
// crc32c() picks, once per process, the SSE4.2 `crc32` instruction when the
// CPU has it and a portable slicing-by-8 table otherwise. Both are exposed in
// brook::detail so tests can check one against the other.
//
// Known value: crc32c("123456789") == 0xE3069283.
//
// Thread-safety: pure functions; the one-time dispatch is a thread-safe static.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#if defined(__x86_64__) || defined(_M_X64)
#include <nmmintrin.h>
#define BROOK_CRC32C_HAVE_X86 1
#else
#define BROOK_CRC32C_HAVE_X86 0
#endif

namespace brook {
namespace detail {

inline constexpr std::uint32_t crc32c_poly = 0x82F63B78u;

struct crc32c_tables {
  std::uint32_t t[8][256];
};

constexpr crc32c_tables make_crc32c_tables() {
  crc32c_tables tb{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ crc32c_poly : c >> 1;
    tb.t[0][i] = c;
  }
  for (std::uint32_t i = 0; i < 256; ++i)
    for (int s = 1; s < 8; ++s) tb.t[s][i] = (tb.t[s - 1][i] >> 8) ^ tb.t[0][tb.t[s - 1][i] & 0xff];
  return tb;
}

inline constexpr crc32c_tables crc32c_table = make_crc32c_tables();

/// Portable slicing-by-8. `crc` is the running value (pre-inverted state, see crc32c_extend).
inline std::uint32_t crc32c_sw_update(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
  const auto& t = crc32c_table.t;
  while (n >= 8) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    lo = __builtin_bswap32(lo);
    hi = __builtin_bswap32(hi);
#endif
    lo ^= crc;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
          t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ static_cast<std::uint8_t>(*p++)) & 0xff];
  return crc;
}

#if BROOK_CRC32C_HAVE_X86
/// SSE4.2 `crc32` instruction. REQUIRES: cpu_has_sse42().
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_hw_update(std::uint32_t crc, const std::byte* p,
                                                                        std::size_t n) noexcept {
  std::uint64_t c = crc;
  while (n > 0 && (reinterpret_cast<std::uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<std::uint32_t>(c), static_cast<std::uint8_t>(*p++));
    --n;
  }
  while (n >= 32) {
    std::uint64_t a, b, d, e;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, 8);
    std::memcpy(&d, p + 16, 8);
    std::memcpy(&e, p + 24, 8);
    c = _mm_crc32_u64(c, a);
    c = _mm_crc32_u64(c, b);
    c = _mm_crc32_u64(c, d);
    c = _mm_crc32_u64(c, e);
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    std::uint64_t a;
    std::memcpy(&a, p, 8);
    c = _mm_crc32_u64(c, a);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n--) c32 = _mm_crc32_u8(c32, static_cast<std::uint8_t>(*p++));
  return c32;
}

inline bool cpu_has_sse42() noexcept { return __builtin_cpu_supports("sse4.2"); }
#else
inline bool cpu_has_sse42() noexcept { return false; }
inline std::uint32_t crc32c_hw_update(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
  return crc32c_sw_update(crc, p, n);
}
#endif

using crc32c_update_fn = std::uint32_t (*)(std::uint32_t, const std::byte*, std::size_t) noexcept;

inline crc32c_update_fn crc32c_pick() noexcept {
  static const crc32c_update_fn fn = cpu_has_sse42() ? &crc32c_hw_update : &crc32c_sw_update;
  return fn;
}

/// Portable CRC-32C of a whole buffer (for tests and as the reference).
inline std::uint32_t crc32c_sw(std::span<const std::byte> d) noexcept {
  return ~crc32c_sw_update(~0u, d.data(), d.size());
}
/// Hardware CRC-32C of a whole buffer. REQUIRES: cpu_has_sse42().
inline std::uint32_t crc32c_hw(std::span<const std::byte> d) noexcept {
  return ~crc32c_hw_update(~0u, d.data(), d.size());
}

}  // namespace detail

/// Continues a CRC-32C: crc32c_extend(crc32c(a), b) == crc32c(a ++ b). Start from 0.
inline std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> d) noexcept {
  return ~detail::crc32c_pick()(~crc, d.data(), d.size());
}

/// CRC-32C of a buffer, using the fastest implementation this CPU supports.
inline std::uint32_t crc32c(std::span<const std::byte> d) noexcept { return crc32c_extend(0, d); }

}  // namespace brook

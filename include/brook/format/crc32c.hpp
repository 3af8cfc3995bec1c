// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the
// checksum of Kafka's RecordBatch v2.
//
// crc32c() picks, once per process, the fastest path the CPU has: folding with
// AVX-512 VPCLMULQDQ (about 4x the crc32 instruction on 16 KiB), the SSE4.2
// `crc32` instruction in three streams, or a portable slicing-by-8 table. All
// are exposed in brook::detail so tests can check one against the other.
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
#include <immintrin.h>
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
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ static_cast<std::uint8_t>(*p++)) & 0xff];
  return crc;
}

// Shifting a CRC state over n zero bytes is multiplication by x^(8n) modulo the polynomial
// (GF(2), reflected bit order). The hardware path runs three independent streams over
// three adjacent blocks and joins them with that shift, so the CPU's crc32 unit (latency 3,
// one per cycle) is kept busy; the shift is done with per-byte tables built once.

/// a * b modulo the CRC-32C polynomial, reflected.
constexpr std::uint32_t crc32c_multmodp(std::uint32_t a, std::uint32_t b) noexcept {
  std::uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ crc32c_poly : b >> 1;
  }
  return p;
}

/// x^n modulo the polynomial, reflected.
constexpr std::uint32_t crc32c_xn(std::uint64_t n) noexcept {
  std::uint32_t result = 1u << 31;  // x^0
  std::uint32_t sq = 1u << 30;      // x^1
  while (n) {
    if (n & 1) result = crc32c_multmodp(sq, result);
    sq = crc32c_multmodp(sq, sq);
    n >>= 1;
  }
  return result;
}

/// x^(8 * n) modulo the polynomial, reflected: the operator that shifts a state over n zero bytes.
constexpr std::uint32_t crc32c_x8n(std::size_t n) noexcept { return crc32c_xn(std::uint64_t{8} * n); }

/// Tables applying "shift by n zero bytes" to a 32-bit state with four lookups.
struct crc32c_shift_table {
  std::uint32_t t[4][256];
};
constexpr crc32c_shift_table make_crc32c_shift_table(std::size_t n) {
  crc32c_shift_table st{};
  const std::uint32_t op = crc32c_x8n(n);
  for (int k = 0; k < 4; ++k)
    for (std::uint32_t i = 0; i < 256; ++i) st.t[k][i] = crc32c_multmodp(op, i << (8 * k));
  return st;
}
inline std::uint32_t crc32c_shift(const crc32c_shift_table& st, std::uint32_t crc) noexcept {
  return st.t[0][crc & 0xff] ^ st.t[1][(crc >> 8) & 0xff] ^ st.t[2][(crc >> 16) & 0xff] ^ st.t[3][crc >> 24];
}

inline constexpr std::size_t crc32c_long_block = 4096;
inline constexpr std::size_t crc32c_short_block = 256;
inline constexpr crc32c_shift_table crc32c_long_shift = make_crc32c_shift_table(crc32c_long_block);
inline constexpr crc32c_shift_table crc32c_short_shift = make_crc32c_shift_table(crc32c_short_block);

#if BROOK_CRC32C_HAVE_X86
/// Three interleaved streams of `block` bytes each, joined by shifts. Consumes 3 * block.
__attribute__((target("sse4.2"))) inline std::uint64_t crc32c_hw_triple(std::uint64_t c0, const std::byte*& p,
                                                                        std::size_t block,
                                                                        const crc32c_shift_table& shift) noexcept {
  std::uint64_t c1 = 0, c2 = 0;
  const std::byte* end = p + block;
  while (p < end) {
    std::uint64_t a, b, d;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + block, 8);
    std::memcpy(&d, p + 2 * block, 8);
    c0 = _mm_crc32_u64(c0, a);
    c1 = _mm_crc32_u64(c1, b);
    c2 = _mm_crc32_u64(c2, d);
    p += 8;
  }
  p += 2 * block;
  std::uint32_t c = crc32c_shift(shift, static_cast<std::uint32_t>(c0)) ^ static_cast<std::uint32_t>(c1);
  return crc32c_shift(shift, c) ^ static_cast<std::uint32_t>(c2);
}

/// SSE4.2 `crc32` instruction. REQUIRES: cpu_has_sse42().
__attribute__((target("sse4.2"))) inline std::uint32_t crc32c_hw_update(std::uint32_t crc, const std::byte* p,
                                                                        std::size_t n) noexcept {
  std::uint64_t c = crc;
  while (n > 0 && (reinterpret_cast<std::uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<std::uint32_t>(c), static_cast<std::uint8_t>(*p++));
    --n;
  }
  while (n >= 3 * crc32c_long_block) {
    c = crc32c_hw_triple(c, p, crc32c_long_block, crc32c_long_shift);
    n -= 3 * crc32c_long_block;
  }
  while (n >= 3 * crc32c_short_block) {
    c = crc32c_hw_triple(c, p, crc32c_short_block, crc32c_short_shift);
    n -= 3 * crc32c_short_block;
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

// Folding with carry-less multiplication (VPCLMULQDQ on 512-bit registers), for CPUs with
// AVX-512. A 128-bit lane holds 16 message bytes; loaded little-endian, bit j of the lane is
// the coefficient of x^(127-j) (the reflected order of the CRC), so its low quadword H is
// the lane's high-degree half. Moving a lane D bits further down the message multiplies it
// by x^D: H * x^(D+64) + L * x^D. Carry-less products of reflected operands come out one
// degree low, so the constants are x^(D+63) and x^(D-1) modulo the polynomial, each a
// 32-bit remainder in the top half of a quadword. Products have degree < 96 and fit a lane.
// One lane left at the end is congruent to the whole message (with the running state XORed
// into its first four bytes), so two `crc32` instructions on it finish the CRC.

/// The two folding constants of a 128-bit lane moved `bytes` further down the message.
struct crc32c_fold_constants {
  std::uint64_t high_half;  // multiplies the lane's low quadword: x^(8 bytes + 63)
  std::uint64_t low_half;   // multiplies its high quadword: x^(8 bytes - 1)
};
constexpr crc32c_fold_constants crc32c_fold(std::size_t bytes) noexcept {
  return {std::uint64_t{crc32c_xn(8 * bytes + 63)} << 32, std::uint64_t{crc32c_xn(8 * bytes - 1)} << 32};
}
inline constexpr crc32c_fold_constants crc32c_fold_256 = crc32c_fold(256);
inline constexpr crc32c_fold_constants crc32c_fold_64 = crc32c_fold(64);
inline constexpr crc32c_fold_constants crc32c_fold_16 = crc32c_fold(16);

/// Folding starts from four 64-byte registers; shorter input takes the crc32 instruction.
inline constexpr std::size_t crc32c_fold_min_bytes = 256;

#define BROOK_CRC32C_FOLD_TARGET __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2")))

BROOK_CRC32C_FOLD_TARGET inline __m512i crc32c_fold_512(__m512i acc, __m512i k, __m512i next) noexcept {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00), _mm512_clmulepi64_epi128(acc, k, 0x11), next,
                                   0x96);
}
BROOK_CRC32C_FOLD_TARGET inline __m128i crc32c_fold_128(__m128i acc, __m128i k, __m128i next) noexcept {
  return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(acc, k, 0x00), _mm_clmulepi64_si128(acc, k, 0x11), next, 0x96);
}

BROOK_CRC32C_FOLD_TARGET inline __m512i crc32c_k512(const crc32c_fold_constants& c) noexcept {
  // The maskz forms: GCC 12 warns on the plain ones' undefined source (GCC bug 105593).
  return _mm512_maskz_broadcast_i32x4(
      0xffff, _mm_set_epi64x(static_cast<long long>(c.low_half), static_cast<long long>(c.high_half)));
}

/// CRC-32C update by folding 256 bytes a step. REQUIRES: cpu_has_avx512_clmul().
BROOK_CRC32C_FOLD_TARGET inline std::uint32_t crc32c_fold_update(std::uint32_t crc, const std::byte* p,
                                                                 std::size_t n) noexcept {
  if (n < crc32c_fold_min_bytes) return crc32c_hw_update(crc, p, n);
  __m512i x0 = _mm512_xor_si512(
      _mm512_loadu_si512(p), _mm512_inserti32x4(_mm512_setzero_si512(), _mm_cvtsi32_si128(static_cast<int>(crc)), 0));
  __m512i x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
  p += 256;
  n -= 256;
  const __m512i k256 = crc32c_k512(crc32c_fold_256);
  for (; n >= 256; p += 256, n -= 256) {
    x0 = crc32c_fold_512(x0, k256, _mm512_loadu_si512(p));
    x1 = crc32c_fold_512(x1, k256, _mm512_loadu_si512(p + 64));
    x2 = crc32c_fold_512(x2, k256, _mm512_loadu_si512(p + 128));
    x3 = crc32c_fold_512(x3, k256, _mm512_loadu_si512(p + 192));
  }
  const __m512i k64 = crc32c_k512(crc32c_fold_64);
  x3 = crc32c_fold_512(crc32c_fold_512(crc32c_fold_512(x0, k64, x1), k64, x2), k64, x3);
  for (; n >= 64; p += 64, n -= 64) x3 = crc32c_fold_512(x3, k64, _mm512_loadu_si512(p));
  const __m128i k16 =
      _mm_set_epi64x(static_cast<long long>(crc32c_fold_16.low_half), static_cast<long long>(crc32c_fold_16.high_half));
  __m128i a = _mm512_maskz_extracti32x4_epi32(0xf, x3, 0);
  a = crc32c_fold_128(a, k16, _mm512_maskz_extracti32x4_epi32(0xf, x3, 1));
  a = crc32c_fold_128(a, k16, _mm512_maskz_extracti32x4_epi32(0xf, x3, 2));
  a = crc32c_fold_128(a, k16, _mm512_maskz_extracti32x4_epi32(0xf, x3, 3));
  for (; n >= 16; p += 16, n -= 16) a = crc32c_fold_128(a, k16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const std::uint64_t c = _mm_crc32_u64(_mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(a))),
                                        static_cast<std::uint64_t>(_mm_extract_epi64(a, 1)));
  return crc32c_hw_update(static_cast<std::uint32_t>(c), p, n);
}
#undef BROOK_CRC32C_FOLD_TARGET

/// True when the CPU (and the OS) support AVX-512 and VPCLMULQDQ.
inline bool cpu_has_avx512_clmul() noexcept {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul") && cpu_has_sse42();
}
#else
inline bool cpu_has_sse42() noexcept { return false; }
inline bool cpu_has_avx512_clmul() noexcept { return false; }
inline std::uint32_t crc32c_hw_update(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
  return crc32c_sw_update(crc, p, n);
}
inline std::uint32_t crc32c_fold_update(std::uint32_t crc, const std::byte* p, std::size_t n) noexcept {
  return crc32c_sw_update(crc, p, n);
}
#endif

using crc32c_update_fn = std::uint32_t (*)(std::uint32_t, const std::byte*, std::size_t) noexcept;

inline crc32c_update_fn crc32c_pick() noexcept {
  static const crc32c_update_fn fn = cpu_has_avx512_clmul() ? &crc32c_fold_update
                                     : cpu_has_sse42()      ? &crc32c_hw_update
                                                            : &crc32c_sw_update;
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
/// Folding CRC-32C of a whole buffer. REQUIRES: cpu_has_avx512_clmul().
inline std::uint32_t crc32c_folded(std::span<const std::byte> d) noexcept {
  return ~crc32c_fold_update(~0u, d.data(), d.size());
}

}  // namespace detail

/// Continues a CRC-32C: crc32c_extend(crc32c(a), b) == crc32c(a ++ b). Start from 0.
inline std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> d) noexcept {
  return ~detail::crc32c_pick()(~crc, d.data(), d.size());
}

/// CRC-32C of a buffer, using the fastest implementation this CPU supports.
inline std::uint32_t crc32c(std::span<const std::byte> d) noexcept { return crc32c_extend(0, d); }

}  // namespace brook

// CRC-32C: published vectors, the portable, SSE4.2 and AVX-512 folding paths against each
// other and against a bit-at-a-time reference, and crc32c_extend.
#include <array>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/format/crc32c.hpp>

#include "support/format_helpers.hpp"
#include "support/seeds.hpp"

using brook::test::crc32c_bitwise;

namespace {

std::vector<std::byte> filled(std::size_t n, std::uint8_t v) { return std::vector<std::byte>(n, std::byte{v}); }

std::vector<std::byte> ascending(std::size_t n) {
  std::vector<std::byte> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>(i);
  return b;
}

std::vector<std::byte> descending32() {
  std::vector<std::byte> b(32);
  for (std::size_t i = 0; i < 32; ++i) b[i] = static_cast<std::byte>(31 - i);
  return b;
}

struct vector_case {
  const char* name;
  std::vector<std::byte> data;
  std::uint32_t crc;
};

std::vector<vector_case> known_vectors() {
  auto s = brook::as_bytes("123456789");
  return {
      {"\"123456789\" (check value)", std::vector<std::byte>(s.begin(), s.end()), 0xE3069283u},
      // RFC 3720 (iSCSI), appendix B.4.
      {"32 zero bytes", filled(32, 0x00), 0x8A9136AAu},
      {"32 0xFF bytes", filled(32, 0xFF), 0x62A8AB43u},
      {"32 ascending bytes 0..31", ascending(32), 0x46DD794Eu},
      {"32 descending bytes 31..0", descending32(), 0x113FDB5Cu},
      {"empty", {}, 0x00000000u},
  };
}

}  // namespace

TEST_CASE("crc32c matches published vectors", "[format][crc32c]") {
  for (const auto& v : known_vectors()) {
    INFO(v.name);
    std::span<const std::byte> d(v.data);
    CHECK(brook::crc32c(d) == v.crc);
    CHECK(brook::detail::crc32c_sw(d) == v.crc);
    CHECK(crc32c_bitwise(d) == v.crc);  // the reference the random tests trust
    if (brook::detail::cpu_has_sse42()) CHECK(brook::detail::crc32c_hw(d) == v.crc);
    if (brook::detail::cpu_has_avx512_clmul()) CHECK(brook::detail::crc32c_folded(d) == v.crc);
  }
}

TEST_CASE("crc32c software and hardware paths agree on every length 0..4096 at random alignments", "[format][crc32c]") {
  const auto seed = brook::test::property_seed(1);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 1: rerun with the same base)");
  std::mt19937_64 rng(seed);
  constexpr std::size_t max_len = 4096;
  std::vector<std::byte> pool(max_len + 64);
  for (auto& b : pool) b = static_cast<std::byte>(rng());
  const bool hw = brook::detail::cpu_has_sse42();
  if (!hw) WARN("CPU lacks SSE4.2: only the portable path is checked");
  const bool fold = brook::detail::cpu_has_avx512_clmul();
  if (!fold) WARN("CPU lacks AVX-512 VPCLMULQDQ: the folding path is not checked");

  for (std::size_t len = 0; len <= max_len; ++len) {
    const std::size_t align = rng() % 16;
    std::span<const std::byte> d(pool.data() + align, len);
    const auto sw = brook::detail::crc32c_sw(d);
    if (hw) {
      const auto h = brook::detail::crc32c_hw(d);
      if (h != sw) {  // CHECK only on mismatch: 4097 successful CHECKs would only slow the run
        INFO("len " << len << " align " << align);
        CHECK(h == sw);
      }
    }
    if (fold && brook::detail::crc32c_folded(d) != sw) {
      INFO("len " << len << " align " << align);
      CHECK(brook::detail::crc32c_folded(d) == sw);
    }
    if (brook::crc32c(d) != sw) {
      INFO("len " << len << " align " << align);
      CHECK(brook::crc32c(d) == sw);
    }
    // The bitwise reference is slow; check it on every length up to 300 and on a sample beyond.
    if (len <= 300 || len % 97 == 0 || len == max_len) {
      INFO("len " << len << " align " << align);
      REQUIRE(sw == crc32c_bitwise(d));
    }
  }
}

TEST_CASE("crc32c folding agrees with the portable path on long buffers", "[format][crc32c]") {
  if (!brook::detail::cpu_has_avx512_clmul()) {
    WARN("CPU lacks AVX-512 VPCLMULQDQ: nothing to check");
    return;
  }
  const auto seed = brook::test::property_seed(5);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 5: rerun with the same base)");
  std::mt19937_64 rng(seed);
  std::vector<std::byte> pool((1u << 20) + 64);
  for (auto& b : pool) b = static_cast<std::byte>(rng());
  // Every 256-byte step boundary up to 64 KiB, +-1, and random lengths up to 1 MiB: the main
  // loop, each tail (64- and 16-byte folds, then bytes) and the starting state.
  std::vector<std::size_t> lengths;
  for (std::size_t n = 256; n <= 65536; n += 256) lengths.insert(lengths.end(), {n - 1, n, n + 1, n + 63, n + 79});
  for (int i = 0; i < 50; ++i) lengths.push_back(rng() % (1u << 20));
  for (const std::size_t len : lengths) {
    const std::size_t align = rng() % 64;
    const std::span<const std::byte> d(pool.data() + align, len);
    const auto want = brook::detail::crc32c_sw(d);
    if (brook::detail::crc32c_folded(d) != want) {
      INFO("len " << len << " align " << align);
      CHECK(brook::detail::crc32c_folded(d) == want);
    }
    const std::uint32_t state = static_cast<std::uint32_t>(rng());
    if (brook::detail::crc32c_fold_update(state, d.data(), len) !=
        brook::detail::crc32c_sw_update(state, d.data(), len)) {
      INFO("len " << len << " align " << align << " state " << state);
      CHECK(brook::detail::crc32c_fold_update(state, d.data(), len) ==
            brook::detail::crc32c_sw_update(state, d.data(), len));
    }
  }
}

TEST_CASE("crc32c_extend over any split equals the whole", "[format][crc32c]") {
  const auto seed = brook::test::property_seed(2);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 2: rerun with the same base)");
  std::mt19937_64 rng(seed);
  std::vector<std::byte> data(517);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  std::span<const std::byte> all(data);
  const auto whole = crc32c_bitwise(all);
  REQUIRE(brook::crc32c(all) == whole);

  SECTION("two parts, every split point") {
    for (std::size_t cut = 0; cut <= data.size(); ++cut) {
      INFO("cut " << cut);
      auto c = brook::crc32c_extend(brook::crc32c(all.first(cut)), all.subspan(cut));
      REQUIRE(c == whole);
    }
  }
  SECTION("many random small pieces") {
    for (int trial = 0; trial < 200; ++trial) {
      std::uint32_t c = 0;
      std::size_t pos = 0;
      while (pos < data.size()) {
        std::size_t n = std::min<std::size_t>(rng() % 40, data.size() - pos);
        c = brook::crc32c_extend(c, all.subspan(pos, n));
        pos += n;
      }
      REQUIRE(c == whole);
    }
  }
  SECTION("extending by nothing changes nothing") {
    CHECK(brook::crc32c_extend(whole, {}) == whole);
    CHECK(brook::crc32c_extend(0, {}) == 0u);
  }
  SECTION("the known vector split in two") {
    auto s = brook::as_bytes("123456789");
    CHECK(brook::crc32c_extend(brook::crc32c(s.first(4)), s.subspan(4)) == 0xE3069283u);
  }
}

TEST_CASE("crc32c detects every single-bit flip in a buffer", "[format][crc32c]") {
  auto data = ascending(64);
  const auto base = brook::crc32c(std::span<const std::byte>(data));
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      data[i] ^= static_cast<std::byte>(1u << bit);
      const auto flipped = brook::crc32c(std::span<const std::byte>(data));
      data[i] ^= static_cast<std::byte>(1u << bit);
      if (flipped == base) {
        INFO("byte " << i << " bit " << bit);
        FAIL("CRC unchanged by a single-bit flip");
      }
    }
  }
}

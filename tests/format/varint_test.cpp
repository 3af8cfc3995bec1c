// Zigzag varints and varlongs: exact bytes (as Kafka's ByteUtils writes them),
// round trips at the boundaries, sizes, and rejection of truncated or over-long
// input without reading past the end.
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/format/varint.hpp>

#include "support/format_helpers.hpp"
#include "support/seeds.hpp"

using brook::test::exact_copy;
using brook::test::from_hex;
using brook::test::to_hex;

namespace {

using i32 = std::int32_t;
using i64 = std::int64_t;

std::vector<std::byte> enc32(i32 v) {
  std::vector<std::byte> b(brook::max_varint_size + 3, std::byte{0xEE});
  auto n = brook::encode_varint(v, b.data());
  b.resize(n);
  return b;
}
std::vector<std::byte> enc64(i64 v) {
  std::vector<std::byte> b(brook::max_varlong_size + 3, std::byte{0xEE});
  auto n = brook::encode_varlong(v, b.data());
  b.resize(n);
  return b;
}

// Decodes from a heap buffer of exactly b.size() bytes (ASan catches overreads).
std::size_t dec32(const std::vector<std::byte>& b, i32& out) {
  auto p = exact_copy(b);
  return brook::decode_varint(p.get(), p.get() + b.size(), out);
}
std::size_t dec64(const std::vector<std::byte>& b, i64& out) {
  auto p = exact_copy(b);
  return brook::decode_varlong(p.get(), p.get() + b.size(), out);
}

std::vector<i32> boundary32() {
  std::vector<i32> v = {0,
                        1,
                        -1,
                        63,
                        -63,
                        64,
                        -64,
                        65,
                        -65,
                        127,
                        -127,
                        128,
                        -128,
                        8191,
                        -8192,
                        8192,
                        -8193,
                        std::numeric_limits<i32>::min(),
                        std::numeric_limits<i32>::max(),
                        std::numeric_limits<i32>::min() + 1,
                        std::numeric_limits<i32>::max() - 1};
  for (int k = 0; k < 31; ++k) {
    i32 p = i32{1} << k;
    for (i32 x : {p, p - 1, p + 1, -p, -p + 1, -p - 1}) v.push_back(x);
  }
  return v;
}
std::vector<i64> boundary64() {
  std::vector<i64> v = {0,
                        1,
                        -1,
                        63,
                        -63,
                        64,
                        -64,
                        300,
                        -300,
                        std::numeric_limits<i64>::min(),
                        std::numeric_limits<i64>::max(),
                        std::numeric_limits<i64>::min() + 1,
                        std::numeric_limits<i64>::max() - 1,
                        std::numeric_limits<i32>::min(),
                        std::numeric_limits<i32>::max()};
  for (int k = 0; k < 63; ++k) {
    i64 p = i64{1} << k;
    for (i64 x : {p, p - 1, p + 1, -p, -p + 1, -p - 1}) v.push_back(x);
  }
  return v;
}

// Size by definition: 7 payload bits per byte of the zigzag value.
std::size_t expected_size(std::uint64_t zz) {
  std::size_t n = 1;
  while (zz >= 0x80) {
    zz >>= 7;
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("zigzag mapping matches the definition", "[format][varint]") {
  CHECK(brook::zigzag_encode32(0) == 0u);
  CHECK(brook::zigzag_encode32(-1) == 1u);
  CHECK(brook::zigzag_encode32(1) == 2u);
  CHECK(brook::zigzag_encode32(-2) == 3u);
  CHECK(brook::zigzag_encode32(std::numeric_limits<i32>::max()) == 0xFFFFFFFEu);
  CHECK(brook::zigzag_encode32(std::numeric_limits<i32>::min()) == 0xFFFFFFFFu);
  CHECK(brook::zigzag_encode64(std::numeric_limits<i64>::min()) == 0xFFFFFFFFFFFFFFFFull);
  CHECK(brook::zigzag_encode64(std::numeric_limits<i64>::max()) == 0xFFFFFFFFFFFFFFFEull);
  for (i32 v : boundary32()) REQUIRE(brook::zigzag_decode32(brook::zigzag_encode32(v)) == v);
  for (i64 v : boundary64()) REQUIRE(brook::zigzag_decode64(brook::zigzag_encode64(v)) == v);
}

TEST_CASE("varint exact bytes", "[format][varint]") {
  struct c {
    i32 v;
    const char* hex;
  };
  const c cases[] = {
      {0, "00"},
      {-1, "01"},
      {1, "02"},
      {-2, "03"},
      {63, "7e"},
      {-64, "7f"},
      {64, "8001"},
      {-65, "8101"},
      {300, "d804"},
      {-300, "d704"},
      {8191, "fe7f"},
      {-8192, "ff7f"},
      {8192, "808001"},
      {std::numeric_limits<i32>::max(), "feffffff0f"},
      {std::numeric_limits<i32>::min(), "ffffffff0f"},
  };
  for (const auto& x : cases) {
    INFO("value " << x.v);
    CHECK(to_hex(enc32(x.v)) == x.hex);
    i32 out = 12345;
    auto bytes = from_hex(x.hex);
    CHECK(dec32(bytes, out) == bytes.size());
    CHECK(out == x.v);
  }
}

TEST_CASE("varlong exact bytes", "[format][varint]") {
  struct c {
    i64 v;
    const char* hex;
  };
  const c cases[] = {
      {0, "00"},
      {-1, "01"},
      {1, "02"},
      {300, "d804"},
      {std::int64_t{1} << 31, "8080808010"},
      {std::numeric_limits<i64>::max(), "feffffffffffffffff01"},
      {std::numeric_limits<i64>::min(), "ffffffffffffffffff01"},
  };
  for (const auto& x : cases) {
    INFO("value " << x.v);
    CHECK(to_hex(enc64(x.v)) == x.hex);
    i64 out = 12345;
    auto bytes = from_hex(x.hex);
    CHECK(dec64(bytes, out) == bytes.size());
    CHECK(out == x.v);
  }
}

TEST_CASE("varint and varlong round trip at boundaries with matching sizes", "[format][varint]") {
  for (i32 v : boundary32()) {
    INFO("varint " << v);
    auto b = enc32(v);
    CHECK(b.size() == brook::varint_size(v));
    CHECK(b.size() == expected_size(brook::zigzag_encode32(v)));
    CHECK(b.size() <= brook::max_varint_size);
    i32 out = 0;
    REQUIRE(dec32(b, out) == b.size());
    REQUIRE(out == v);
    // A varint value written as a varlong decodes the same.
    i64 out64 = 0;
    auto b64 = enc64(v);
    CHECK(b64 == b);
    REQUIRE(dec64(b64, out64) == b64.size());
    REQUIRE(out64 == v);
  }
  for (i64 v : boundary64()) {
    INFO("varlong " << v);
    auto b = enc64(v);
    CHECK(b.size() == brook::varlong_size(v));
    CHECK(b.size() == expected_size(brook::zigzag_encode64(v)));
    CHECK(b.size() <= brook::max_varlong_size);
    i64 out = 0;
    REQUIRE(dec64(b, out) == b.size());
    REQUIRE(out == v);
  }
}

TEST_CASE("varint round trips on random values", "[format][varint]") {
  const auto seed = brook::test::property_seed(1);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 1: rerun with the same base)");
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    // Random magnitudes: shift a random word right by a random amount.
    const auto w = rng();
    const i64 v64 = static_cast<i64>(w >> (rng() % 64));
    const i64 s64 = (rng() & 1) ? v64 : -v64 - 1;
    const i32 s32 = static_cast<i32>(static_cast<std::uint32_t>(s64));
    auto b32 = enc32(s32);
    auto b64 = enc64(s64);
    i32 o32 = 0;
    i64 o64 = 0;
    if (dec32(b32, o32) != b32.size() || o32 != s32 || dec64(b64, o64) != b64.size() || o64 != s64 ||
        b32.size() != brook::varint_size(s32) || b64.size() != brook::varlong_size(s64)) {
      INFO("s32 " << s32 << " s64 " << s64);
      FAIL("round trip mismatch");
    }
  }
}

TEST_CASE("truncated varints decode to 0 bytes without reading past the end", "[format][varint]") {
  for (i32 v : boundary32()) {
    auto b = enc32(v);
    for (std::size_t n = 0; n < b.size(); ++n) {
      INFO("varint " << v << " truncated to " << n << " bytes");
      std::vector<std::byte> t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
      i32 out = 777;
      CHECK(dec32(t, out) == 0);
      CHECK(out == 777);  // output untouched on failure
    }
  }
  for (i64 v : boundary64()) {
    auto b = enc64(v);
    for (std::size_t n = 0; n < b.size(); ++n) {
      INFO("varlong " << v << " truncated to " << n << " bytes");
      std::vector<std::byte> t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
      i64 out = 777;
      CHECK(dec64(t, out) == 0);
      CHECK(out == 777);
    }
  }
  SECTION("a continuation byte at the very end of a larger buffer") {
    // [p, end) ends on a byte with the high bit set; the byte after it is valid but out of range.
    auto b = from_hex("d8 04");
    auto p = exact_copy(b);
    i32 out = 0;
    CHECK(brook::decode_varint(p.get(), p.get() + 1, out) == 0);
    i64 out64 = 0;
    CHECK(brook::decode_varlong(p.get(), p.get() + 1, out64) == 0);
    CHECK(brook::decode_varint(p.get(), p.get(), out) == 0);
  }
}

TEST_CASE("over-long varints are rejected", "[format][varint]") {
  i32 o32 = 0;
  i64 o64 = 0;
  SECTION("varint: 5th byte may carry only 4 bits and no continuation") {
    CHECK(dec32(from_hex("ffffffff0f"), o32) == 5);  // the largest legal value (INT32_MIN)
    CHECK(o32 == std::numeric_limits<i32>::min());
    CHECK(dec32(from_hex("ffffffff1f"), o32) == 0);  // bit 32 set
    CHECK(dec32(from_hex("8080808070"), o32) == 0);  // bits 32..34 set
    CHECK(dec32(from_hex("ffffffff7f"), o32) == 0);
    CHECK(dec32(from_hex("ffffffff8f00"), o32) == 0);  // 6 bytes (continuation on the 5th)
    CHECK(dec32(from_hex("808080808000"), o32) == 0);  // 6 bytes encoding 0
    CHECK(dec32(from_hex("ffffffffffffffffffff01"), o32) == 0);
  }
  SECTION("varlong: 10th byte may carry only 1 bit and no continuation") {
    CHECK(dec64(from_hex("ffffffffffffffffff01"), o64) == 10);
    CHECK(o64 == std::numeric_limits<i64>::min());
    CHECK(dec64(from_hex("ffffffffffffffffff02"), o64) == 0);
    CHECK(dec64(from_hex("ffffffffffffffffff03"), o64) == 0);
    CHECK(dec64(from_hex("ffffffffffffffffff7f"), o64) == 0);
    CHECK(dec64(from_hex("ffffffffffffffffff8100"), o64) == 0);  // 11 bytes
    CHECK(dec64(from_hex("8080808080808080808000"), o64) == 0);  // 11 bytes encoding 0
  }
  SECTION("non-minimal but in-range encodings are accepted, as Kafka's ByteUtils does") {
    CHECK(dec32(from_hex("8000"), o32) == 2);
    CHECK(o32 == 0);
    CHECK(dec32(from_hex("8180808000"), o32) == 5);
    CHECK(o32 == -1);
    CHECK(dec64(from_hex("80808080808080808000"), o64) == 10);
    CHECK(o64 == 0);
  }
}

TEST_CASE("decoding consumes exactly one varint from a longer buffer", "[format][varint]") {
  // Three values back to back: each decode returns its own length.
  std::vector<std::byte> b;
  for (i32 v : {300, -1, std::numeric_limits<i32>::min()}) {
    auto e = enc32(v);
    b.insert(b.end(), e.begin(), e.end());
  }
  auto p = exact_copy(b);
  const std::byte* cur = p.get();
  const std::byte* end = p.get() + b.size();
  i32 out = 0;
  auto n = brook::decode_varint(cur, end, out);
  CHECK(n == 2);
  CHECK(out == 300);
  cur += n;
  n = brook::decode_varint(cur, end, out);
  CHECK(n == 1);
  CHECK(out == -1);
  cur += n;
  n = brook::decode_varint(cur, end, out);
  CHECK(n == 5);
  CHECK(out == std::numeric_limits<i32>::min());
  CHECK(cur + n == end);
}

// The primitive reader and writer of Kafka's generated messages: golden bytes for each
// primitive (as Kafka's ByteUtils / Readable / Writable produce them), every truncation
// rejected, hostile lengths and counts rejected before allocating, tagged sections, and
// errors that name the field path and byte.
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/codec/message_codec.hpp>

#include "support/checks.hpp"
#include "support/format_helpers.hpp"
#include "support/seeds.hpp"

using namespace brook;
using brook::test::cspan;
using brook::test::from_hex;
using brook::test::to_hex;
using codec::field_ref;
using codec::message_reader;
using codec::message_writer;

namespace {

template <typename Fn>
std::string written(Fn&& fn) {
  message_writer w;
  fn(w);
  return to_hex(std::move(w).finish());
}

std::string error_of(const result<void>& r) {
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == errc::corrupt_message);
  return r.error().message();
}

}  // namespace

TEST_CASE("fixed-size primitives are big-endian", "[codec][message_codec]") {
  CHECK(written([](auto& w) { w.int8(-2); }) == "fe");
  CHECK(written([](auto& w) { w.boolean(true); }) == "01");
  CHECK(written([](auto& w) { w.int16(-2); }) == "fffe");
  CHECK(written([](auto& w) { w.uint16(65535); }) == "ffff");
  CHECK(written([](auto& w) { w.int32(0x01020304); }) == "01020304");
  CHECK(written([](auto& w) { w.uint32(0xfffffffeU); }) == "fffffffe");
  CHECK(written([](auto& w) { w.int64(-1); }) == "ffffffffffffffff");
  CHECK(written([](auto& w) { w.float64(1.5); }) == "3ff8000000000000");  // IEEE 754 binary64
  CHECK(written([](auto& w) { w.id(uuid::from_parts(0x0102030405060708, 0x090a0b0c0d0e0f10)); }) ==
        "0102030405060708090a0b0c0d0e0f10");

  const auto b = from_hex("fe 02 fffe ffff 01020304 fffffffe ffffffffffffffff 3ff8000000000000");
  message_reader r(cspan(b), "test");
  std::int8_t i8 = 0;
  bool flag = false;
  std::int16_t i16 = 0;
  std::uint16_t u16 = 0;
  std::int32_t i32 = 0;
  std::uint32_t u32 = 0;
  std::int64_t i64 = 0;
  double f64 = 0;
  REQUIRE(r.int8("a", i8));
  REQUIRE(r.boolean("b", flag));  // any non-zero byte is true (Readable.readByte() != 0)
  REQUIRE(r.int16("c", i16));
  REQUIRE(r.uint16("d", u16));
  REQUIRE(r.int32("e", i32));
  REQUIRE(r.uint32("f", u32));
  REQUIRE(r.int64("g", i64));
  REQUIRE(r.float64("h", f64));
  REQUIRE(r.expect_end());
  CHECK(i8 == -2);
  CHECK(flag);
  CHECK(i16 == -2);
  CHECK(u16 == 65535);
  CHECK(i32 == 0x01020304);
  CHECK(u32 == 0xfffffffeU);
  CHECK(i64 == -1);
  CHECK(f64 == 1.5);
}

TEST_CASE("unsigned and zigzag varints match ByteUtils", "[codec][message_codec]") {
  CHECK(written([](auto& w) { w.uvarint(0); }) == "00");
  CHECK(written([](auto& w) { w.uvarint(127); }) == "7f");
  CHECK(written([](auto& w) { w.uvarint(128); }) == "8001");
  CHECK(written([](auto& w) { w.uvarint(300); }) == "ac02");
  CHECK(written([](auto& w) { w.uvarint(0xffffffffU); }) == "ffffffff0f");
  CHECK(written([](auto& w) { w.varint(-1); }) == "01");
  CHECK(written([](auto& w) { w.varint(300); }) == "d804");
  CHECK(written([](auto& w) { w.varint(std::numeric_limits<std::int32_t>::min()); }) == "ffffffff0f");
  CHECK(written([](auto& w) { w.varlong(std::numeric_limits<std::int64_t>::min()); }) == "ffffffffffffffffff01");

  const std::uint32_t samples[] = {0, 1, 127, 128, 16383, 16384, 0x7fffffff, 0xffffffffU};
  for (auto v : samples) {
    message_writer w;
    w.uvarint(v);
    const auto b = std::move(w).finish();
    message_reader r(cspan(b), "test");
    std::uint32_t back = 1;
    REQUIRE(r.uvarint("n", back));
    CHECK(back == v);
    CHECK(r.remaining() == 0);
  }
  SECTION("overlong or out-of-range varints are corrupt") {
    for (const char* hex : {"ffffffff1f", "8080808080", "ffffffffffffffffff02"}) {
      INFO(hex);
      const auto b = from_hex(hex);
      message_reader r(cspan(b), "test");
      std::uint32_t u = 0;
      std::int64_t l = 0;
      if (b.size() == 5) {
        CHECK(error_of(r.uvarint("n", u)).find("field 'n' at byte 0") != std::string::npos);
      } else {
        CHECK(error_of(r.varlong("n", l)).find("field 'n' at byte 0") != std::string::npos);
      }
    }
    const auto cut = from_hex("8080");
    message_reader r(cspan(cut), "test");
    std::uint32_t u = 0;
    CHECK(error_of(r.uvarint("n", u)).find("runs past the end") != std::string::npos);
  }
}

TEST_CASE("strings and bytes, classic and compact, nullable or not", "[codec][message_codec]") {
  CHECK(written([](auto& w) { w.string("ab"); }) == "00026162");
  CHECK(written([](auto& w) { w.nullable_string(std::nullopt); }) == "ffff");
  CHECK(written([](auto& w) { w.compact_string("ab"); }) == "036162");
  CHECK(written([](auto& w) { w.compact_nullable_string(std::nullopt); }) == "00");
  const std::vector<std::byte> two{std::byte{1}, std::byte{2}};
  CHECK(written([&](auto& w) { w.bytes(two); }) == "000000020102");
  CHECK(written([](auto& w) { w.nullable_bytes(std::nullopt); }) == "ffffffff");
  CHECK(written([&](auto& w) { w.compact_bytes(two); }) == "030102");
  CHECK(written([](auto& w) { w.compact_nullable_bytes(std::nullopt); }) == "00");

  auto read_string = [](const char* hex, bool compact) {
    const auto b = from_hex(hex);
    message_reader r(cspan(b), "test");
    std::string s;
    auto res = compact ? r.compact_string("s", s) : r.string("s", s);
    return res ? result<std::string>(s) : result<std::string>(res.error());
  };
  CHECK(*read_string("00026162", false) == "ab");
  CHECK(*read_string("036162", true) == "ab");
  CHECK(read_string("ffff", false).error().message().find("null") != std::string::npos);
  CHECK(read_string("00", true).error().message().find("null") != std::string::npos);
  CHECK(read_string("fffe", false).error().message().find("negative string length -2") != std::string::npos);
  CHECK(read_string("000361", false).error().message().find("runs past the end") != std::string::npos);
  CHECK(read_string("ffff03", true).error().message().find("exceeds 32767") != std::string::npos);

  const auto nb = from_hex("fffffffb");
  message_reader r(cspan(nb), "test");
  std::optional<std::vector<std::byte>> out;
  CHECK(error_of(r.nullable_bytes("b", out)).find("negative bytes length -5") != std::string::npos);
}

TEST_CASE("array counts are bounded by the bytes left before anything is allocated", "[codec][message_codec]") {
  const auto b = from_hex("7fffffff 00000000");
  message_reader r(cspan(b), "test");
  std::size_t n = 0;
  CHECK(error_of(r.array_length("Topics", 4, n)).find("cannot fit") != std::string::npos);

  const auto null_classic = from_hex("ffffffff");
  message_reader r2(cspan(null_classic), "test");
  std::optional<std::size_t> maybe;
  REQUIRE(r2.nullable_array_length("Topics", false, 4, maybe));
  CHECK_FALSE(maybe.has_value());

  const auto null_compact = from_hex("00");
  message_reader r3(cspan(null_compact), "test");
  CHECK(error_of(r3.compact_array_length("Topics", 4, n)).find("null (count 0)") != std::string::npos);

  const auto negative = from_hex("fffffffe");
  message_reader r4(cspan(negative), "test");
  CHECK(error_of(r4.array_length("Topics", 4, n)).find("negative array count -2") != std::string::npos);
}

TEST_CASE("tagged sections: known tags read in bounds, unknown skipped, written in tag order",
          "[codec][message_codec]") {
  codec::tagged_section tags;
  tags.add(5, [](message_writer& w) { w.int8(7); });
  tags.add(1, [](message_writer& w) { w.int32(9); });
  message_writer w;
  tags.write(w);
  const auto b = std::move(w).finish();
  CHECK(to_hex(b) ==
        "02"
        "01"
        "04"
        "00000009"
        "05"
        "01"
        "07");

  message_reader r(cspan(b), "test");
  std::int32_t one = 0;
  std::vector<std::uint32_t> skipped;
  REQUIRE(r.tagged_fields("_tagged_fields", [&](std::uint32_t tag) -> result<bool> {
    if (tag != 1) {
      skipped.push_back(tag);
      return false;
    }
    BROOK_TRY(r.int32("One", one));
    return true;
  }));
  CHECK(one == 9);
  CHECK(skipped == std::vector<std::uint32_t>{5});
  CHECK(r.remaining() == 0);

  SECTION("a known tag may not read past its declared size") {
    const auto short_tag = from_hex("01 01 02 0000 00");
    message_reader s(cspan(short_tag), "test");
    auto res = s.tagged_fields("_tagged_fields", [&](std::uint32_t) -> result<bool> {
      BROOK_TRY(s.int32("One", one));
      return true;
    });
    CHECK(error_of(res).find("int32 needs 4 bytes, 2 left") != std::string::npos);
  }
  SECTION("a known tag must use its whole size") {
    const auto long_tag = from_hex("01 01 05 00000009 ff");
    message_reader s(cspan(long_tag), "test");
    auto res = s.tagged_fields("_tagged_fields", [&](std::uint32_t) -> result<bool> {
      BROOK_TRY(s.int32("One", one));
      return true;
    });
    CHECK(error_of(res).find("declares 5 bytes but its value took 4") != std::string::npos);
  }
  SECTION("a count that cannot fit") {
    const auto many = from_hex("7f 00 00");
    message_reader s(cspan(many), "test");
    CHECK(error_of(s.skip_tagged_fields("_tagged_fields")).find("cannot fit") != std::string::npos);
  }
}

TEST_CASE("errors name the message, the field path and the byte", "[codec][message_codec]") {
  const auto b = from_hex("0001");
  message_reader r(cspan(b), "FetchRequest v4");
  const field_ref topics("Topics");
  const field_ref partitions("Partitions", &topics);
  const field_ref index("Index", &partitions);
  std::int32_t x = 0;
  CHECK(error_of(r.int32(index, x)) ==
        "FetchRequest v4: field 'Topics.Partitions.Index' at byte 0: int32 needs 4 bytes, 2 left");
  std::int16_t y = 0;
  REQUIRE(r.int16("y", y));
  CHECK(r.expect_end());
  const auto more = from_hex("0001ff");
  message_reader t(cspan(more), "M v0");
  REQUIRE(t.int16("y", y));
  CHECK(error_of(t.expect_end()).find("1 trailing bytes") != std::string::npos);
}

TEST_CASE("every truncation of a message is rejected and random bytes never crash", "[codec][message_codec]") {
  message_writer w;
  w.int16(3);
  w.compact_string("topic");
  w.compact_nullable_bytes(std::vector<std::byte>(3, std::byte{7}));
  w.uvarint(70000);
  w.varlong(-123456789);
  w.id(uuid::from_parts(1, 2));
  w.no_tagged_fields();
  const auto full = std::move(w).finish();
  auto read_all = [](std::span<const std::byte> b) -> result<void> {
    message_reader r(b, "test");
    std::int16_t a = 0;
    std::string s;
    std::optional<std::vector<std::byte>> by;
    std::uint32_t u = 0;
    std::int64_t l = 0;
    uuid id;
    BROOK_TRY(r.int16("a", a));
    BROOK_TRY(r.compact_string("s", s));
    BROOK_TRY(r.compact_nullable_bytes("b", by));
    BROOK_TRY(r.uvarint("u", u));
    BROOK_TRY(r.varlong("l", l));
    BROOK_TRY(r.id("id", id));
    BROOK_TRY(r.skip_tagged_fields("_tagged_fields"));
    return r.expect_end();
  };
  REQUIRE(read_all(cspan(full)));
  for (std::size_t cut = 0; cut < full.size(); ++cut) CHECK_FALSE(read_all(std::span(full.data(), cut)));

  const auto seed = brook::test::property_seed(31);
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::byte> b(rng() % 48);
    for (auto& x : b) x = static_cast<std::byte>(rng());
    (void)read_all(cspan(b));
  }
}

TEST_CASE("bytes read as a view point into the buffer without copying", "[codec][message_codec]") {
  const auto b = from_hex(
      "00000002abcd"
      "03ef01"
      "ffffffff"
      "00"
      "00000005ab");
  message_reader r(cspan(b), "test");
  std::optional<std::span<const std::byte>> v;
  REQUIRE_OK(r.nullable_bytes_view("classic", false, v));
  REQUIRE(v);
  CHECK(v->data() == b.data() + 4);
  CHECK(to_hex(std::vector<std::byte>(v->begin(), v->end())) == "abcd");
  REQUIRE_OK(r.nullable_bytes_view("compact", true, v));
  REQUIRE(v);
  CHECK(v->data() == b.data() + 7);
  CHECK(v->size() == 2);
  REQUIRE_OK(r.nullable_bytes_view("null classic", false, v));
  CHECK_FALSE(v);
  REQUIRE_OK(r.nullable_bytes_view("null compact", true, v));
  CHECK_FALSE(v);
  // A length past the end is refused, naming the field.
  CHECK(error_of(r.nullable_bytes_view("lying", false, v)).find("'lying'") != std::string::npos);
  const auto neg = from_hex("fffffffe");
  message_reader rn(cspan(neg), "test");
  CHECK(error_of(rn.nullable_bytes_view("negative", false, v)).find("negative bytes length -2") != std::string::npos);
}

TEST_CASE("external parts are listed where they belong and counted in the message size", "[codec][message_codec]") {
  const int a = 1, c = 2;
  message_writer w;
  w.int16(7);
  w.external(100, &a);
  w.int8(1);
  w.external(5, &c);
  CHECK(w.size() == 3);
  CHECK(w.message_size() == 108);
  REQUIRE(w.externals().size() == 2);
  CHECK(w.externals()[0].at == 2);
  CHECK(w.externals()[0].size == 100);
  CHECK(w.externals()[0].source == &a);
  CHECK(w.externals()[1].at == 3);
  CHECK(w.externals()[1].source == &c);
  CHECK(to_hex(std::move(w).release()) == "000701");
}

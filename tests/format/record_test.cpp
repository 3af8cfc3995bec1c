// Single-record parsing (detail::parse_record / parse_header) on hand-written
// bytes: the documented example, headers with null values, and malformed
// records (truncation, wrong length, negative lengths).
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/format/record.hpp>
#include <brook/format/record_batch_builder.hpp>

#include "support/format_helpers.hpp"

using brook::test::exact_copy;
using brook::test::from_hex;
using brook::test::to_opt;

namespace {

struct parsed {
  bool ok = false;
  std::size_t consumed = 0;
  brook::detail::record_fields f;
  std::vector<brook::test::test_header> headers;
};

// Parses one record from an exactly-sized heap copy of `b`.
parsed parse(const std::vector<std::byte>& b, bool check_headers = true) {
  parsed out;
  auto p = exact_copy(b);
  const std::byte* end = p.get() + b.size();
  const std::byte* next = brook::detail::parse_record(p.get(), end, out.f, check_headers);
  out.ok = next != nullptr;
  if (!out.ok) return out;
  out.consumed = static_cast<std::size_t>(next - p.get());
  brook::record_headers hs(out.f.headers_begin, out.f.headers_end, out.f.header_count);
  for (const auto& h : hs) out.headers.push_back({std::string(h.key), to_opt(h.value)});
  // Everything is copied out above: `p` dies here.
  out.f.key = {};
  out.f.value = {};
  return out;
}

}  // namespace

TEST_CASE("record: the example from record.hpp", "[format][record]") {
  // offsetDelta 0, timestampDelta 0, key null, value "hi", no headers.
  auto b = from_hex("10 00 00 00 01 04 68 69 00");
  auto p = exact_copy(b);
  brook::detail::record_fields f;
  const std::byte* next = brook::detail::parse_record(p.get(), p.get() + b.size(), f);
  REQUIRE(next == p.get() + b.size());
  CHECK(f.timestamp_delta == 0);
  CHECK(f.offset_delta == 0);
  CHECK(f.key.is_null());
  CHECK(f.value.to_string() == "hi");
  CHECK(f.header_count == 0);
  CHECK(brook::record_batch_builder::record_size(0, 0, brook::nullable_bytes::null(), "hi") == b.size());
}

TEST_CASE("record: key, null value, header with null value, negative timestamp delta", "[format][record]") {
  // len 10 | attrs 0 | tsDelta -3 (zz 5) | offDelta 7 (zz 14) | key "k" | value null | 1 header: "h" -> null
  auto b = from_hex("14 00 05 0e 02 6b 01 02 02 68 01");
  auto r = parse(b);
  REQUIRE(r.ok);
  CHECK(r.consumed == b.size());
  CHECK(r.f.timestamp_delta == -3);
  CHECK(r.f.offset_delta == 7);
  CHECK(r.headers.size() == 1);
  CHECK(r.headers.at(0).key == "h");
  CHECK_FALSE(r.headers.at(0).value.has_value());
  brook::record_header h{"h", brook::nullable_bytes::null()};
  CHECK(brook::record_batch_builder::record_size(-3, 7, "k", brook::nullable_bytes::null(), {&h, 1}) == b.size());
}

TEST_CASE("record: headers keep order, repeats, empty values and UTF-8 keys", "[format][record]") {
  // Headers: "a"->"1", "\xC3\xBC"->"" , "a"->null, ""->"x"
  //   02 61 02 31 | 04 c3 bc 00 | 02 61 01 | 00 02 78
  const std::string body_hex = "00 00 00 01 01 08 02 61 02 31 04 c3 bc 00 02 61 01 00 02 78";
  auto body = from_hex(body_hex);
  std::vector<std::byte> b;
  b.push_back(static_cast<std::byte>(body.size() * 2));  // zigzag length (< 64)
  b.insert(b.end(), body.begin(), body.end());
  auto r = parse(b);
  REQUIRE(r.ok);
  CHECK(r.consumed == b.size());
  CHECK(r.f.key.is_null());
  CHECK(r.f.value.is_null());
  REQUIRE(r.headers.size() == 4);
  CHECK(r.headers[0] == brook::test::test_header{"a", std::string("1")});
  CHECK(r.headers[1] == brook::test::test_header{"\xC3\xBC", std::string()});
  CHECK(r.headers[2] == brook::test::test_header{"a", std::nullopt});
  CHECK(r.headers[3] == brook::test::test_header{"", std::string("x")});
}

TEST_CASE("record: malformed records are rejected", "[format][record]") {
  const auto good = from_hex("14 00 05 0e 02 6b 01 02 02 68 01");
  REQUIRE(parse(good).ok);

  SECTION("every truncation") {
    for (std::size_t n = 0; n < good.size(); ++n) {
      INFO("truncated to " << n);
      CHECK_FALSE(parse(std::vector<std::byte>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n))).ok);
    }
  }
  SECTION("length one short of the contents") {
    auto b = good;
    b[0] = std::byte{0x12};  // 9
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("length one past the contents (extra byte inside the record)") {
    auto b = good;
    b[0] = std::byte{0x16};  // 11
    b.push_back(std::byte{0});
    CHECK_FALSE(parse(b).ok);
    // Without header checking the walker trusts the length (documented): it ends at the length.
    auto r = parse(b, /*check_headers=*/false);
    CHECK(r.ok);
    CHECK(r.consumed == b.size());
  }
  SECTION("zero and negative record length") {
    for (const char* len : {"00", "01", "03"}) {
      auto b = good;
      b[0] = from_hex(len)[0];
      INFO("length byte " << len);
      CHECK_FALSE(parse(b).ok);
    }
  }
  SECTION("key length below -1") {
    auto b = good;
    b[4] = std::byte{0x03};  // -2
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("key length past the record end") {
    auto b = good;
    b[4] = std::byte{0x7e};  // 63
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("value length below -1") {
    auto b = good;
    b[6] = std::byte{0x03};
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("negative header count") {
    auto b = good;
    b[7] = std::byte{0x01};
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("header count larger than the headers present") {
    auto b = good;
    b[7] = std::byte{0x04};
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("negative header key length (null header key)") {
    auto b = good;
    b[8] = std::byte{0x01};  // -1
    CHECK_FALSE(parse(b).ok);
    b[8] = std::byte{0x03};  // -2
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("header value length below -1") {
    auto b = good;
    b[10] = std::byte{0x03};
    CHECK_FALSE(parse(b).ok);
  }
  SECTION("malformed varint inside the record") {
    auto b = good;
    b[2] = std::byte{0x85};  // timestamp delta now runs into the following bytes
    // Either the fields shift and the length no longer matches, or a varint runs out: rejected either way.
    CHECK_FALSE(parse(b).ok);
  }
}

TEST_CASE("record: parse_header on its own", "[format][record]") {
  auto b = from_hex("06 6b 65 79 04 76 31");  // "key" -> "v1"
  auto p = exact_copy(b);
  brook::record_header h;
  const std::byte* next = brook::detail::parse_header(p.get(), p.get() + b.size(), h);
  REQUIRE(next == p.get() + b.size());
  CHECK(h.key == "key");
  CHECK(h.value.to_string() == "v1");
  for (std::size_t n = 0; n < b.size(); ++n) {
    auto q = exact_copy(std::span<const std::byte>(b).first(n));
    INFO("truncated to " << n);
    CHECK(brook::detail::parse_header(q.get(), q.get() + n, h) == nullptr);
  }
}

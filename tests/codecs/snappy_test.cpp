#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <snappy.h>

#include <brook/codecs/snappy.hpp>
#include <support/codec_checks.hpp>

using namespace brook::test;

namespace {

std::uint32_t be32(const brook::byte_buffer& b, std::size_t at) {
  return static_cast<std::uint32_t>(b[at]) << 24 | static_cast<std::uint32_t>(b[at + 1]) << 16 |
         static_cast<std::uint32_t>(b[at + 2]) << 8 | static_cast<std::uint32_t>(b[at + 3]);
}

// libsnappy's own raw output, what librdkafka and kafkajs send.
brook::byte_buffer raw_snappy(const brook::byte_buffer& in) {
  std::string out;
  snappy::Compress(reinterpret_cast<const char*>(in.data()), in.size(), &out);
  return to_bytes(out);
}

}  // namespace

TEST_CASE("snappy has no level", "[codecs][snappy]") {
  const brook::codecs::snappy_codec snappy;
  CHECK(snappy.type() == brook::compression_type::snappy);
  CHECK(snappy.default_level() == 0);
  CHECK(snappy.valid_level(0));
  CHECK_FALSE(snappy.valid_level(1));
  brook::byte_buffer out;
  CHECK(snappy.compress(to_bytes("x"), 1, out) == brook::errc::invalid_config);
}

TEST_CASE("snappy round trips", "[codecs][snappy]") { check_round_trips(brook::codecs::snappy_codec{}, {0}); }

TEST_CASE("snappy writes the xerial framing with 32 KiB blocks", "[codecs][snappy]") {
  const brook::codecs::snappy_codec snappy;
  const auto in = json_like(41, 70'000);
  brook::byte_buffer out;
  REQUIRE(snappy.compress(in, 0, out));
  const auto header = to_bytes(std::string_view("\x82SNAPPY\0\0\0\0\x01\0\0\0\x01", 16));
  REQUIRE(out.size() > 16);
  CHECK(brook::byte_buffer(out.begin(), out.begin() + 16) == header);
  // Three blocks of 32768, 32768 and 4464 input bytes, each after its big-endian length.
  std::vector<std::size_t> lengths;
  std::size_t at = 16;
  while (at < out.size()) {
    const std::uint32_t n = be32(out, at);
    at += 4;
    REQUIRE(at + n <= out.size());
    std::size_t length = 0;
    REQUIRE(snappy::GetUncompressedLength(reinterpret_cast<const char*>(out.data() + at), n, &length));
    lengths.push_back(length);
    at += n;
  }
  CHECK(lengths == std::vector<std::size_t>{32768, 32768, 4464});

  brook::byte_buffer empty;
  REQUIRE(snappy.compress({}, 0, empty));
  CHECK(empty == header);
}

TEST_CASE("snappy reads raw snappy and concatenated xerial streams", "[codecs][snappy]") {
  const brook::codecs::snappy_codec snappy;
  const auto a = json_like(42, 100'000), b = random_bytes(43, 3000);
  SECTION("raw snappy as librdkafka and kafkajs write it") {
    const auto raw = raw_snappy(a);
    brook::byte_buffer out;
    REQUIRE(snappy.decompress(raw, a.size(), out));
    CHECK(out == a);
    check_refused(snappy, raw, brook::errc::record_too_large, a.size() - 1);
  }
  SECTION("a second xerial header between blocks") {
    brook::byte_buffer both;
    REQUIRE(snappy.compress(a, 0, both));
    REQUIRE(snappy.compress(b, 0, both));
    brook::byte_buffer out;
    REQUIRE(snappy.decompress(both, a.size() + b.size(), out));
    auto want = a;
    want.insert(want.end(), b.begin(), b.end());
    CHECK(out == want);
  }
}

TEST_CASE("snappy refuses hostile payloads", "[codecs][snappy]") {
  const brook::codecs::snappy_codec snappy;
  check_hostile_inputs(snappy, {16});  // the header alone is an empty stream
  SECTION("a xerial compatible version brook does not read") {
    brook::byte_buffer out;
    REQUIRE(snappy.compress(json_like(1, 100), 0, out));
    out[15] = std::byte{2};
    check_refused(snappy, out, brook::errc::corrupt_message);
  }
  SECTION("a xerial block length past the end") {
    brook::byte_buffer out;
    REQUIRE(snappy.compress(json_like(1, 100), 0, out));
    out[16] = std::byte{0x7f};
    check_refused(snappy, out, brook::errc::corrupt_message);
  }
  SECTION("raw snappy claiming 4 GiB is refused before any allocation") {
    auto bomb = to_bytes(std::string_view("\xff\xff\xff\xff\x0f", 5));
    const auto tail = random_bytes(5, 100);
    bomb.insert(bomb.end(), tail.begin(), tail.end());
    check_refused(snappy, bomb, brook::errc::record_too_large);
  }
}

TEST_CASE("snappy stops a bomb at the limit", "[codecs][snappy]") {
  brook::byte_buffer bomb;
  REQUIRE(brook::codecs::snappy_codec{}.compress(brook::byte_buffer(16 << 20, std::byte{0}), 0, bomb));
  check_bomb(brook::codecs::snappy_codec{}, bomb);
  check_bomb(brook::codecs::snappy_codec{}, raw_snappy(brook::byte_buffer(16 << 20, std::byte{0})));
}

TEST_CASE("snappy is enabled by adding it", "[codecs][snappy]") {
  check_enabling(std::make_shared<brook::codecs::snappy_codec>());
}

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <lz4frame.h>

#include <brook/codecs/lz4.hpp>
#include <support/codec_checks.hpp>

using namespace brook::test;

namespace {

// XXH32 (seed 0) of a short input, written from the xxHash specification, to check the LZ4
// frame's header checksum independently of liblz4.
std::uint32_t xxh32_short(const brook::byte_buffer& in) {
  constexpr std::uint32_t p1 = 2654435761u, p2 = 2246822519u, p3 = 3266489917u, p4 = 668265263u, p5 = 374761393u;
  REQUIRE(in.size() < 16);
  auto rotl = [](std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  std::uint32_t h = p5 + static_cast<std::uint32_t>(in.size());
  std::size_t i = 0;
  for (; i + 4 <= in.size(); i += 4) {
    const std::uint32_t w = static_cast<std::uint32_t>(in[i]) | static_cast<std::uint32_t>(in[i + 1]) << 8 |
                            static_cast<std::uint32_t>(in[i + 2]) << 16 | static_cast<std::uint32_t>(in[i + 3]) << 24;
    h = rotl(h + w * p3, 17) * p4;
  }
  for (; i < in.size(); ++i) h = rotl(h + static_cast<std::uint32_t>(in[i]) * p5, 11) * p1;
  h ^= h >> 15;
  h *= p2;
  h ^= h >> 13;
  h *= p3;
  h ^= h >> 16;
  return h;
}

// The header checksum byte of a frame descriptor (FLG up to, not including, HC).
std::byte header_checksum(const brook::byte_buffer& frame, std::size_t descriptor_size) {
  return static_cast<std::byte>(
      (xxh32_short({frame.begin() + 4, frame.begin() + 4 + static_cast<long>(descriptor_size)}) >> 8) & 0xff);
}

// `in`, `repeat` times, as liblz4's streaming API writes it with `prefs`.
brook::byte_buffer lz4f_stream(const brook::byte_buffer& in, const LZ4F_preferences_t& prefs, std::size_t repeat = 1) {
  LZ4F_cctx* cctx = nullptr;
  REQUIRE_FALSE(LZ4F_isError(LZ4F_createCompressionContext(&cctx, LZ4F_VERSION)));
  brook::byte_buffer out(LZ4F_HEADER_SIZE_MAX);
  std::size_t at = LZ4F_compressBegin(cctx, out.data(), out.size(), &prefs);
  REQUIRE_FALSE(LZ4F_isError(at));
  for (std::size_t i = 0; i < repeat; ++i) {
    out.resize(at + LZ4F_compressBound(in.size(), &prefs));
    const std::size_t n = LZ4F_compressUpdate(cctx, out.data() + at, out.size() - at, in.data(), in.size(), nullptr);
    REQUIRE_FALSE(LZ4F_isError(n));
    at += n;
  }
  out.resize(at + LZ4F_compressBound(0, &prefs));
  const std::size_t n = LZ4F_compressEnd(cctx, out.data() + at, out.size() - at, nullptr);
  REQUIRE_FALSE(LZ4F_isError(n));
  out.resize(at + n);
  LZ4F_freeCompressionContext(cctx);
  return out;
}

}  // namespace

TEST_CASE("lz4 has Kafka's levels", "[codecs][lz4]") {
  const brook::codecs::lz4_codec lz4;
  CHECK(lz4.type() == brook::compression_type::lz4);
  CHECK(lz4.default_level() == 9);
  for (int level : {1, 9, 17}) CHECK(lz4.valid_level(level));
  for (int level : {0, 18, -1}) CHECK_FALSE(lz4.valid_level(level));
  CHECK(brook::codecs::lz4_codec::liblz4_level(9) == 0);  // the fast compressor
  CHECK(brook::codecs::lz4_codec::liblz4_level(1) == 3);
  CHECK(brook::codecs::lz4_codec::liblz4_level(10) == 10);
  CHECK(brook::codecs::lz4_codec::liblz4_level(17) == 12);
  brook::byte_buffer out;
  CHECK(lz4.compress(to_bytes("x"), 0, out) == brook::errc::invalid_config);
}

TEST_CASE("lz4 round trips at several levels", "[codecs][lz4]") {
  check_round_trips(brook::codecs::lz4_codec{}, {1, 9, 12, 17});
}

TEST_CASE("lz4 writes Kafka's frame", "[codecs][lz4]") {
  const brook::codecs::lz4_codec lz4;
  for (const int level : {9, 12}) {
    const auto in = json_like(21, 200'000);
    brook::byte_buffer out;
    REQUIRE(lz4.compress(in, level, out));
    REQUIRE(out.size() > 11);
    CHECK(brook::byte_buffer(out.begin(), out.begin() + 4) ==
          brook::byte_buffer{std::byte{0x04}, std::byte{0x22}, std::byte{0x4d}, std::byte{0x18}});
    CHECK(out[4] == std::byte{0x60});  // version 1, independent blocks, no checksums, no content size
    CHECK(out[5] == std::byte{0x40});  // 64 KiB blocks
    CHECK(out[6] == header_checksum(out, 2));
    // Blocks of at most 64 KiB, then the end mark and no content checksum.
    std::size_t at = 7, blocks = 0;
    for (;;) {
      REQUIRE(at + 4 <= out.size());
      const std::uint32_t word = static_cast<std::uint32_t>(out[at]) | static_cast<std::uint32_t>(out[at + 1]) << 8 |
                                 static_cast<std::uint32_t>(out[at + 2]) << 16 |
                                 static_cast<std::uint32_t>(out[at + 3]) << 24;
      at += 4;
      if (word == 0) break;
      CHECK((word & 0x7fffffffu) <= 64 * 1024);
      at += word & 0x7fffffffu;
      ++blocks;
    }
    CHECK(at == out.size());
    CHECK(blocks == (in.size() + 65535) / 65536);
  }
}

TEST_CASE("lz4 reads kafkajs's frames: 4 MiB blocks and a content checksum", "[codecs][lz4]") {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  const auto in = json_like(31, 5 << 20);
  auto frame = lz4f_stream(in, prefs);
  REQUIRE(frame[5] == std::byte{0x70});
  REQUIRE((static_cast<unsigned>(frame[4]) & 0x04u) != 0);
  const brook::codecs::lz4_codec lz4;
  brook::byte_buffer out;
  REQUIRE(lz4.decompress(frame, in.size(), out));
  CHECK(out == in);
  SECTION("a wrong content checksum is corrupt") {
    frame[frame.size() - 1] ^= std::byte{0x5a};
    check_refused(lz4, frame, brook::errc::corrupt_message, in.size());
  }
}

TEST_CASE("lz4 refuses hostile payloads", "[codecs][lz4]") {
  const brook::codecs::lz4_codec lz4;
  check_hostile_inputs(lz4);
  SECTION("a wrong header checksum") {
    brook::byte_buffer frame;
    REQUIRE(lz4.compress(json_like(2, 1000), 9, frame));
    frame[6] ^= std::byte{0x01};
    check_refused(lz4, frame, brook::errc::corrupt_message);
  }
  SECTION("a header claiming a huge content size") {
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.contentSize = 1000;
    auto frame = lz4f_stream(json_like(2, 1000), prefs);
    REQUIRE((static_cast<unsigned>(frame[4]) & 0x08u) != 0);
    for (std::size_t i = 0; i < 8; ++i) frame[6 + i] = std::byte{0x7f};  // 0x7f7f7f7f7f7f7f7f
    frame[14] = header_checksum(frame, 10);
    check_refused(lz4, frame, brook::errc::record_too_large);
  }
}

TEST_CASE("lz4 stops a bomb at the limit", "[codecs][lz4]") {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  const auto bomb = lz4f_stream(brook::byte_buffer(1 << 20, std::byte{0}), prefs, 256);
  CHECK(bomb.size() < 2 << 20);
  check_bomb(brook::codecs::lz4_codec{}, bomb);
}

TEST_CASE("lz4 is enabled by adding it", "[codecs][lz4]") {
  check_enabling(std::make_shared<brook::codecs::lz4_codec>());
}

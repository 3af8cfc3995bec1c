#include <catch2/catch.hpp>
#include <cstddef>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include <zstd.h>

#include <brook/codecs/zstd.hpp>
#include <support/codec_checks.hpp>

using namespace brook::test;

namespace {

// `in` as libzstd's streaming API writes it without a pledged size (as Kafka's Java client
// and Debian's librdkafka do): the frame carries no content size.
brook::byte_buffer stream_compress(const brook::byte_buffer& in, std::size_t repeat = 1, int window_log = 0) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  if (window_log != 0) ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);
  brook::byte_buffer out(ZSTD_CStreamOutSize());
  std::size_t produced = 0;
  // Every input goes in with e_continue (an e_end first call would pledge the size), then an
  // empty e_end ends the frame.
  for (std::size_t i = 0; i <= repeat; ++i) {
    const auto mode = i == repeat ? ZSTD_e_end : ZSTD_e_continue;
    ZSTD_inBuffer src{in.data(), mode == ZSTD_e_end ? 0 : in.size(), 0};
    for (;;) {
      if (out.size() - produced < ZSTD_CStreamOutSize()) out.resize(out.size() * 2);
      ZSTD_outBuffer dst{out.data() + produced, out.size() - produced, 0};
      const std::size_t left = ZSTD_compressStream2(cctx, &dst, &src, mode);
      REQUIRE_FALSE(ZSTD_isError(left));
      produced += dst.pos;
      if (mode == ZSTD_e_end ? left == 0 : src.pos == src.size) break;
    }
  }
  ZSTD_freeCCtx(cctx);
  out.resize(produced);
  return out;
}

}  // namespace

TEST_CASE("zstd has Kafka's levels", "[codecs][zstd]") {
  const brook::codecs::zstd_codec zstd;
  CHECK(zstd.type() == brook::compression_type::zstd);
  CHECK(zstd.default_level() == 3);
  for (int level : {ZSTD_minCLevel(), -5, 0, 1, 3, 19, 22}) CHECK(zstd.valid_level(level));
  for (int level : {ZSTD_minCLevel() - 1, 23}) CHECK_FALSE(zstd.valid_level(level));
  brook::byte_buffer out;
  CHECK(zstd.compress(to_bytes("x"), 23, out) == brook::errc::invalid_config);
}

TEST_CASE("zstd round trips at several levels", "[codecs][zstd]") {
  check_round_trips(brook::codecs::zstd_codec{}, {-5, 1, 3, 9});
}

TEST_CASE("zstd writes one frame", "[codecs][zstd]") {
  const brook::codecs::zstd_codec zstd;
  const auto in = json_like(4, 100'000);
  brook::byte_buffer out;
  REQUIRE(zstd.compress(in, 3, out));
  REQUIRE(out.size() > 4);
  // Magic number 0xFD2FB528, little-endian.
  CHECK(brook::byte_buffer(out.begin(), out.begin() + 4) ==
        brook::byte_buffer{std::byte{0x28}, std::byte{0xb5}, std::byte{0x2f}, std::byte{0xfd}});
  CHECK(ZSTD_findFrameCompressedSize(out.data(), out.size()) == out.size());
  CHECK(ZSTD_getFrameContentSize(out.data(), out.size()) == in.size());
}

TEST_CASE("zstd reads frames without a content size and several frames with skippable ones", "[codecs][zstd]") {
  const brook::codecs::zstd_codec zstd;
  const auto a = json_like(8, 200'000);
  SECTION("a streamed frame without a content size") {
    const auto frame = stream_compress(a);
    REQUIRE(ZSTD_getFrameContentSize(frame.data(), frame.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
    brook::byte_buffer out;
    REQUIRE(zstd.decompress(frame, a.size(), out));
    CHECK(out == a);
    CHECK(zstd.decompress(frame, a.size() - 1, out) == brook::errc::record_too_large);
  }
  SECTION("two frames and a skippable frame") {
    INFO("the second frame has no content size; the first has");
    const auto b = random_bytes(9, 1000);
    brook::byte_buffer payload;
    REQUIRE(zstd.compress(a, 3, payload));
    // Skippable frame: magic 0x184D2A53 (0x184D2A50 + 3), size 5, then 5 bytes; all LE.
    auto skippable =
        to_bytes(std::string_view("\x53\x2a\x4d\x18\x05\x00\x00\x00"
                                  "brook",
                                  13));
    payload.insert(payload.end(), skippable.begin(), skippable.end());
    const auto second = stream_compress(b);
    payload.insert(payload.end(), second.begin(), second.end());
    brook::byte_buffer out;
    REQUIRE(zstd.decompress(payload, a.size() + b.size(), out));
    auto want = a;
    want.insert(want.end(), b.begin(), b.end());
    CHECK(out == want);
  }
}

TEST_CASE("zstd refuses hostile payloads", "[codecs][zstd]") {
  const brook::codecs::zstd_codec zstd;
  check_hostile_inputs(zstd);
  SECTION("a frame claiming a content size past the limit") {
    brook::byte_buffer frame;
    REQUIRE(zstd.compress(json_like(1, 5000), 3, frame));
    check_refused(zstd, frame, brook::errc::record_too_large, 4999);
  }
  SECTION("a frame declaring a window past what the limit allows") {
    // Streamed without a content size and with a 128 MiB window, past 8 MiB.
    const auto frame = stream_compress(to_bytes("abc"), 1, 27);
    brook::byte_buffer out;
    CHECK(zstd.decompress(frame, 1 << 20, out) == brook::errc::corrupt_message);
    CHECK(zstd.decompress(frame, std::size_t{128} << 20, out));  // a 128 MiB limit accepts it
  }
}

TEST_CASE("zstd stops a bomb at the limit", "[codecs][zstd]") {
  // 256 MiB of zeros in a streamed frame that claims no size.
  const auto bomb = stream_compress(brook::byte_buffer(1 << 20, std::byte{0}), 256);
  REQUIRE(ZSTD_getFrameContentSize(bomb.data(), bomb.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
  CHECK(bomb.size() < 64 * 1024);
  check_bomb(brook::codecs::zstd_codec{}, bomb);
}

TEST_CASE("zstd is usable from several threads at once", "[codecs][zstd]") {
  const brook::codecs::zstd_codec zstd;
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < ok.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const auto in = json_like(t * 100 + static_cast<std::size_t>(i), 20'000);
        brook::byte_buffer c, d;
        if (zstd.compress(in, 1 + i % 5, c) && zstd.decompress(c, in.size(), d) && d == in) ++ok[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int n : ok) CHECK(n == 20);
}

TEST_CASE("zstd is enabled by adding it", "[codecs][zstd]") {
  check_enabling(std::make_shared<brook::codecs::zstd_codec>());
}

#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include <brook/protocol/frame.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::encoded;

namespace {
std::vector<std::byte> message(std::size_t n, int fill) { return std::vector<std::byte>(n, std::byte(fill)); }
}  // namespace

TEST_CASE("frames come out whole and in order however the stream is cut", "[protocol][frame]") {
  const std::vector<std::vector<std::byte>> msgs{message(0, 0), message(1, 1), message(300, 2), message(5, 3)};
  std::vector<std::byte> stream;
  for (const auto& m : msgs) append_frame(stream, m);
  REQUIRE(stream.size() == 4 * 4 + 306);
  std::mt19937_64 g(7);
  for (int trial = 0; trial < 200; ++trial) {
    frame_reader fr;
    std::vector<std::vector<std::byte>> got;
    std::size_t pos = 0;
    while (pos < stream.size()) {
      const std::size_t n = trial == 0 ? 1 : std::min<std::size_t>(stream.size() - pos, 1 + g() % 40);
      fr.feed(std::span<const std::byte>(stream.data() + pos, n));
      pos += n;
      for (;;) {
        auto f = fr.next();
        REQUIRE_OK(f);
        if (!*f) break;
        got.push_back(std::move(**f));
      }
    }
    CHECK(got == msgs);
    CHECK(fr.buffered() == 0);
  }
}

TEST_CASE("a frame size below 0 or above the limit is refused at once and for good", "[protocol][frame]") {
  SECTION("negative") {
    frame_reader fr;
    fr.feed(bytes_of({0xff, 0xff, 0xff, 0xfe}));
    auto f = fr.next();
    REQUIRE_FALSE(f);
    CHECK(f.error() == errc::invalid_request);
    fr.feed(bytes_of({0, 0, 0, 0}));
    CHECK_FALSE(fr.next());  // the stream cannot be resynchronised
  }
  SECTION("above the limit: no waiting for 2 GiB that will never be accepted") {
    frame_reader fr;
    fr.feed(bytes_of({0x7f, 0xff, 0xff, 0xff}));
    auto f = fr.next();
    REQUIRE_FALSE(f);
    CHECK(f.error() == errc::invalid_request);
    CHECK_THAT(f.error().message(), Catch::Contains("104857600"));
  }
  SECTION("exactly the limit is accepted, one more byte is not") {
    frame_reader at(10), over(9);
    std::vector<std::byte> s;
    append_frame(s, message(10, 9));
    at.feed(s);
    over.feed(s);
    auto f = at.next();
    REQUIRE_OK(f);
    REQUIRE(*f);
    CHECK((*f)->size() == 10);
    CHECK_FALSE(over.next());
  }
  SECTION("a partial size prefix waits") {
    frame_reader fr;
    fr.feed(bytes_of({0x7f, 0xff, 0xff}));
    auto f = fr.next();
    REQUIRE_OK(f);
    CHECK_FALSE(*f);
  }
}

TEST_CASE("the reader holds no more than it was fed", "[protocol][frame]") {
  frame_reader fr;
  std::vector<std::byte> s;
  for (int i = 0; i < 1000; ++i) append_frame(s, message(10, i % 256));
  for (std::size_t pos = 0; pos < s.size(); pos += 700) {
    fr.feed(std::span<const std::byte>(s.data() + pos, std::min<std::size_t>(700, s.size() - pos)));
    CHECK(fr.buffered() <= 700 + 13);  // one read plus at most one partial frame
    while (true) {
      auto f = fr.next();
      REQUIRE_OK(f);
      if (!*f) break;
    }
  }
  CHECK(fr.buffered() == 0);
}

#include <brook/codecs/detail/bounded_output.hpp>

#include <algorithm>
#include <cstddef>

#include <catch2/catch.hpp>

using brook::byte_buffer;
using brook::codecs::detail::bounded_output;

TEST_CASE("bounded_output: the first window follows the payload's hint") {
  byte_buffer out;
  SECTION("a content size gives that size plus one byte") {
    bounded_output sink(out, 1 << 20, 100, 10'000);
    CHECK(sink.window().size() == 10'001);
  }
  SECTION("without one eight times the input") {
    bounded_output sink(out, 1 << 20, 1'000);
    CHECK(sink.window().size() == 8'000);
  }
  SECTION("never below 4 KiB nor above a whole window") {
    bounded_output small(out, 1 << 20, 10);
    CHECK(small.window().size() == 4096);
    byte_buffer other;
    bounded_output large(other, 1 << 20, 100, 1 << 20);
    CHECK(large.window().size() == bounded_output::window_bytes);
  }
}

TEST_CASE("bounded_output: the first window takes a reused buffer's free room up to a window") {
  byte_buffer out;
  std::size_t expected = 0;
  SECTION("room past the hint is taken") {
    out.reserve(20'000);
    expected = out.capacity();
  }
  SECTION("but no more than a window") {
    out.reserve(4 * bounded_output::window_bytes);
    expected = bounded_output::window_bytes;
  }
  SECTION("room counts after what the buffer already holds") {
    out.reserve(bounded_output::window_bytes);
    brook::resize_uninitialized(out, bounded_output::window_bytes - 10'000);
    expected = out.capacity() - out.size();  // at least 10,000 bytes
  }
  REQUIRE(expected > 4096);  // more than the hint below asks for
  const std::size_t capacity = out.capacity();
  const std::byte* data = out.data();
  {
    bounded_output sink(out, 1 << 20, 100, 1'000);
    CHECK(sink.window().size() == expected);
    // Taking the room neither allocates nor moves the buffer.
    CHECK(out.capacity() == capacity);
    CHECK(out.data() == data);
  }
}

TEST_CASE("bounded_output: a reused buffer's room never takes a window past the limit plus one byte") {
  byte_buffer out;
  out.reserve(bounded_output::window_bytes);
  bounded_output sink(out, 500, 100, 1'000);
  CHECK(sink.window().size() == 501);
}

TEST_CASE("bounded_output: windows double up to a whole window and stop one byte past the limit") {
  byte_buffer out;
  constexpr std::size_t limit = 300'000;
  bounded_output sink(out, limit, 10);
  std::size_t expected = 4096;
  while (!sink.over()) {
    const auto w = sink.window();
    REQUIRE(!w.empty());
    CHECK(w.size() == std::min(expected, limit + 1 - sink.produced()));
    std::fill(w.begin(), w.end(), std::byte{7});
    sink.commit(w.size());
    expected = std::min(expected * 2, bounded_output::window_bytes);
  }
  CHECK(sink.produced() == limit + 1);
  CHECK(sink.window().empty());
}

TEST_CASE("bounded_output: what was produced is kept only on keep") {
  byte_buffer out{std::byte{1}, std::byte{2}};
  {
    bounded_output sink(out, 100);
    auto w = sink.window();
    w[0] = std::byte{9};
    sink.commit(1);
  }
  CHECK(out == byte_buffer{std::byte{1}, std::byte{2}});
  {
    bounded_output sink(out, 100);
    auto w = sink.window();
    w[0] = std::byte{9};
    sink.commit(1);
    sink.keep();
  }
  CHECK(out == byte_buffer{std::byte{1}, std::byte{2}, std::byte{9}});
}

// byte_buffer: a vector of bytes whose resize does not write zeros, and whose other members
// set bytes as std::vector's do.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/core/byte_buffer.hpp>

using brook::byte_buffer;

TEST_CASE("byte_buffer: growth within capacity leaves the bytes as they were", "[core][byte_buffer]") {
  byte_buffer b;
  b.reserve(4096);
  b.assign(4096, std::byte{0xab});
  const std::byte* data = b.data();
  b.resize(16);
  b.resize(4096);  // within capacity: no reallocation, and no zeros written
  REQUIRE(b.data() == data);
  // (std::vector<std::byte> would have zero-filled bytes 16..4095 here.) The bytes read back
  // are the ones written before: the allocator's construct wrote nothing over them.
  CHECK(std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0xab}; }));
}

TEST_CASE("byte_buffer: value-setting members set bytes as std::vector's do", "[core][byte_buffer]") {
  byte_buffer b(3, std::byte{7});
  CHECK(b.size() == 3);
  CHECK(b[2] == std::byte{7});
  b.resize(5, std::byte{1});
  CHECK(b[4] == std::byte{1});
  b.push_back(std::byte{9});
  const std::vector<std::byte> tail{std::byte{4}, std::byte{5}};
  b.insert(b.end(), tail.begin(), tail.end());
  const byte_buffer want{std::byte{7}, std::byte{7}, std::byte{7}, std::byte{1},
                         std::byte{1}, std::byte{9}, std::byte{4}, std::byte{5}};
  CHECK(b == want);
  byte_buffer copy = b;
  CHECK(copy == b);
  byte_buffer moved = std::move(copy);
  CHECK(moved == want);
}

TEST_CASE("default_init_allocator: non-trivial types are still constructed", "[core][byte_buffer]") {
  std::vector<std::string, brook::default_init_allocator<std::string>> v;
  v.resize(3);  // default-initialising a std::string constructs it empty
  v.emplace_back("kafka");
  CHECK(v.size() == 4);
  CHECK(v[0].empty());
  CHECK(v[3] == "kafka");
}

TEST_CASE("byte_buffer: resize_uninitialized keeps the bytes when it grows past the capacity", "[core][byte_buffer]") {
  byte_buffer b;
  for (int i = 0; i < 1000; ++i) b.push_back(static_cast<std::byte>(i * 7));
  const std::size_t cap = b.capacity();
  brook::resize_uninitialized(b, cap + 1);
  CHECK(b.size() == cap + 1);
  CHECK(b.capacity() >= 2 * cap);  // geometric, as std::vector's own growth
  for (int i = 0; i < 1000; ++i) REQUIRE(b[static_cast<std::size_t>(i)] == static_cast<std::byte>(i * 7));
  const std::byte* data = b.data();
  brook::resize_uninitialized(b, 10);  // within the capacity: as resize
  CHECK(b.size() == 10);
  CHECK(b.data() == data);
  byte_buffer empty;
  brook::resize_uninitialized(empty, 5);
  CHECK(empty.size() == 5);
}

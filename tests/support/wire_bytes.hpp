// Helpers of the protocol tests: bytes written out in a test, and a message's encoding that
// must succeed.
//
// Thread-safety: call from the test's main thread (it uses Catch's macros).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/codec/schema.hpp>

#include "support/checks.hpp"

namespace brook::test {

/// {0, 3, 'a'} as bytes.
inline std::vector<std::byte> bytes_of(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

/// m encoded at version v; the test fails if it cannot be.
template <typename T>
std::vector<std::byte> encoded(const T& m, std::int16_t v) {
  auto b = brook::codec::encode(m, v);
  REQUIRE_OK(b);
  return *b;
}

/// m survives encode -> decode -> encode at version v unchanged, in value and in bytes.
template <typename T>
void check_round_trip(const T& m, std::int16_t v) {
  const auto b = encoded(m, v);
  auto back = brook::codec::decode<T>(b, v);
  REQUIRE_OK(back);
  CHECK(*back == m);
  CHECK(encoded(*back, v) == b);
}

}  // namespace brook::test

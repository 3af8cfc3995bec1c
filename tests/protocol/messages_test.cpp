// Every message of every described API (protocol/messages.hpp), at every version Kafka
// defines, over seeded random values: the codec does what the schema table says.
#include <catch2/catch.hpp>

#include <brook/protocol/messages.hpp>

#include "support/checks.hpp"
#include "support/random_message.hpp"
#include "support/seeds.hpp"

using namespace brook;
using namespace brook::protocol;

namespace {
constexpr int cases_per_version = 40;

/// Random values for the fields of v round-trip in value and in bytes.
template <typename T>
void round_trips(test::message_randomizer& rnd, std::int16_t v) {
  const T m = rnd.make<T>(v);
  auto bytes = codec::encode(m, v);
  REQUIRE_OK(bytes);
  auto back = codec::decode<T>(*bytes, v);
  REQUIRE_OK(back);
  CHECK(*back == m);
  auto again = codec::encode(*back, v);
  REQUIRE_OK(again);
  CHECK(*again == *bytes);
}

/// Values for the newest version, encoded at v: refused exactly when the table says, and
/// otherwise decoded as the value with v's missing fields at their defaults.
template <typename T>
void encodes_only_its_fields(test::message_randomizer& rnd, std::int16_t v, int& refused, int& projected) {
  const T m = rnd.make<T>(codec::schema_of<T>.info.valid.hi);
  const auto want_error = test::expected_write_error(m, v);
  auto bytes = codec::encode(m, v);
  if (want_error) {
    REQUIRE_FALSE(bytes);
    CHECK(bytes.error() == *want_error);
    ++refused;
    return;
  }
  REQUIRE_OK(bytes);
  auto back = codec::decode<T>(*bytes, v);
  REQUIRE_OK(back);
  CHECK(*back == test::project(m, v));
  ++projected;
}
}  // namespace

TEST_CASE("Every message round-trips at every version over seeded random values", "[protocol][messages]") {
  const auto seed = test::property_seed(0x6d657373);
  test::message_randomizer rnd(seed);
  INFO("seed " << seed << " (" << test::seed_base_hint() << ")");
  for_each_api([&](auto api) {
    using A = decltype(api);
    const auto valid = codec::schema_of<typename A::request>.info.valid;
    for (std::int16_t v = valid.lo; v <= valid.hi; ++v) {
      INFO(codec::schema_of<typename A::request>.info.name << " v" << v);
      for (int i = 0; i < cases_per_version; ++i) {
        round_trips<typename A::request>(rnd, v);
        round_trips<typename A::response>(rnd, v);
      }
    }
  });
}

TEST_CASE("Each version encodes exactly the fields its table gives it", "[protocol][messages]") {
  const auto seed = test::property_seed(0x6669656c);
  test::message_randomizer rnd(seed);
  INFO("seed " << seed << " (" << test::seed_base_hint() << ")");
  int refused = 0, projected = 0;
  for_each_api([&](auto api) {
    using A = decltype(api);
    const auto valid = codec::schema_of<typename A::request>.info.valid;
    for (std::int16_t v = valid.lo; v <= valid.hi; ++v) {
      INFO(codec::schema_of<typename A::request>.info.name << " v" << v);
      for (int i = 0; i < cases_per_version; ++i) {
        encodes_only_its_fields<typename A::request>(rnd, v, refused, projected);
        encodes_only_its_fields<typename A::response>(rnd, v, refused, projected);
      }
    }
  });
  // Both outcomes happen often: the walk is not vacuous.
  CHECK(refused > 1000);
  CHECK(projected > 1000);
}

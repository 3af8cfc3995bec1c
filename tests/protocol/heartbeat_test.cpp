#include <catch2/catch.hpp>

#include <brook/protocol/heartbeat.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("Heartbeat byte for byte: v0, v3 with an instance id, flexible v4", "[protocol][heartbeat]") {
  heartbeat_request q{"g", generation_id{5}, "m", std::nullopt};
  CHECK(encoded(q, 0) == bytes_of({0, 1, 'g', 0, 0, 0, 5, 0, 1, 'm'}));
  CHECK(encoded(q, 3) == bytes_of({0, 1, 'g', 0, 0, 0, 5, 0, 1, 'm', 0xff, 0xff}));
  q.group_instance_id = "i";
  CHECK(encoded(q, 4) == bytes_of({2, 'g', 0, 0, 0, 5, 2, 'm', 2, 'i', 0}));
  auto v2 = codec::encode(q, 2);  // a static member cannot be said before v3
  REQUIRE_FALSE(v2);
  CHECK(v2.error() == errc::unsupported_version);
  heartbeat_response r{7, 27};  // REBALANCE_IN_PROGRESS
  CHECK(encoded(r, 0) == bytes_of({0, 27}));
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 7, 0, 27}));
  CHECK(encoded(r, 4) == bytes_of({0, 0, 0, 7, 0, 27, 0}));
}

TEST_CASE("Heartbeat round-trips at every version and names damage", "[protocol][heartbeat]") {
  for (std::int16_t v = 0; v <= 4; ++v) {
    INFO("v" << v);
    heartbeat_request q{"group-" + std::to_string(v), generation_id{v * 7}, "member", std::nullopt};
    if (v >= 3) q.group_instance_id = "instance";
    check_round_trip(q, v);
    check_round_trip(heartbeat_response{v >= 1 ? 100 : 0, 22}, v);
    const auto b = encoded(q, v);
    for (std::size_t n = 0; n < b.size(); ++n) {
      auto cut = codec::decode<heartbeat_request>(std::span<const std::byte>(b.data(), n), v);
      REQUIRE_FALSE(cut);
      CHECK(cut.error() == errc::corrupt_message);
    }
  }
}

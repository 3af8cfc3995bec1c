#include <catch2/catch.hpp>

#include <brook/protocol/delete_groups.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("DeleteGroups byte for byte: v0 v1 and flexible v2", "[protocol][delete_groups]") {
  delete_groups_request q{{"g", "h"}};
  // GroupsNames [string]
  CHECK(encoded(q, 0) == bytes_of({0, 0, 0, 2, 0, 1, 'g', 0, 1, 'h'}));
  CHECK(encoded(q, 1) == bytes_of({0, 0, 0, 2, 0, 1, 'g', 0, 1, 'h'}));
  // Compact array of compact strings, then the (empty) tagged fields.
  CHECK(encoded(q, 2) == bytes_of({3, 2, 'g', 2, 'h', 0}));
  delete_groups_response r{4, {{"g", 0}, {"h", 68}}};  // NON_EMPTY_GROUP
  // ThrottleTimeMs | Results [GroupId | ErrorCode]
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 4, 0, 0, 0, 2, 0, 1, 'g', 0, 0, 0, 1, 'h', 0, 68}));
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 4, 0, 0, 0, 2, 0, 1, 'g', 0, 0, 0, 1, 'h', 0, 68}));
  CHECK(encoded(r, 2) == bytes_of({0, 0, 0, 4, 3, 2, 'g', 0, 0, 0, 2, 'h', 0, 68, 0, 0}));
}

TEST_CASE("DeleteGroups round-trips at every version", "[protocol][delete_groups]") {
  for (std::int16_t v = 0; v <= 2; ++v) {
    INFO("v" << v);
    delete_groups_request q{{"group-a", "group-b", "group-c"}};
    delete_groups_response r{v + 1, {{"group-a", 0}, {"group-b", 69}, {"group-c", 30}}};
    check_round_trip(q, v);
    check_round_trip(r, v);
    check_round_trip(delete_groups_request{}, v);
  }
}

TEST_CASE("DeleteGroups refuses lying counts and lengths and unknown versions", "[protocol][delete_groups]") {
  // v0 request: GroupsNames claims 3 and holds one.
  auto names = codec::decode<delete_groups_request>(bytes_of({0, 0, 0, 3, 0, 1, 'g'}), 0);
  REQUIRE_FALSE(names);
  CHECK(names.error() == errc::corrupt_message);
  CHECK_THAT(names.error().message(), Catch::Contains("GroupsNames"));
  // v2 response: a result's GroupId claims 4 bytes and has 3.
  auto id = codec::decode<delete_groups_response>(bytes_of({0, 0, 0, 0, 2, 5, 'g', 0, 0}), 2);
  REQUIRE_FALSE(id);
  CHECK(id.error() == errc::corrupt_message);
  CHECK_THAT(id.error().message(), Catch::Contains("GroupId"));
  // v0 response: ThrottleTimeMs cut short.
  auto throttle = codec::decode<delete_groups_response>(bytes_of({0, 0, 0}), 0);
  REQUIRE_FALSE(throttle);
  CHECK(throttle.error() == errc::corrupt_message);
  CHECK_THAT(throttle.error().message(), Catch::Contains("ThrottleTimeMs"));
  auto v3 = codec::encode(delete_groups_request{{"g"}}, 3);
  REQUIRE_FALSE(v3);
  CHECK(v3.error() == errc::unsupported_version);
}

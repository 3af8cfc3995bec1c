#include <catch2/catch.hpp>

#include <brook/protocol/list_groups.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("ListGroups request byte for byte: v0 and flexible v3 v4 v5", "[protocol][list_groups]") {
  list_groups_request q;
  CHECK(encoded(q, 0).empty());              // no fields
  CHECK(encoded(q, 3) == bytes_of({0}));     // only the (empty) tagged fields
  CHECK(encoded(q, 4) == bytes_of({1, 0}));  // an empty StatesFilter
  q.states_filter = {"S"};
  auto v3 = codec::encode(q, 3);  // StatesFilter is not ignorable
  REQUIRE_FALSE(v3);
  CHECK(v3.error() == errc::unsupported_version);
  CHECK_THAT(v3.error().message(), Catch::Contains("StatesFilter"));
  // StatesFilter [string]
  CHECK(encoded(q, 4) == bytes_of({2, 2, 'S', 0}));
  q.types_filter = {"c"};
  auto v4 = codec::encode(q, 4);  // TypesFilter is not ignorable
  REQUIRE_FALSE(v4);
  CHECK(v4.error() == errc::unsupported_version);
  CHECK_THAT(v4.error().message(), Catch::Contains("TypesFilter"));
  // StatesFilter [string] | TypesFilter [string]
  CHECK(encoded(q, 5) == bytes_of({2, 2, 'S', 2, 2, 'c', 0}));
}

TEST_CASE("ListGroups response byte for byte: v0 v1 and flexible v3 v4 v5", "[protocol][list_groups]") {
  // ThrottleTimeMs, GroupState and GroupType are ignorable.
  list_groups_response r{4, 0, {{"g", "c", "S", "T"}}};
  // ErrorCode | Groups [GroupId | ProtocolType]
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 0, 0, 1, 0, 1, 'g', 0, 1, 'c'}));
  // v1: + ThrottleTimeMs first
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 4, 0, 0, 0, 0, 0, 1, 0, 1, 'g', 0, 1, 'c'}));
  // Compact array and strings; each struct ends with its (empty) tagged fields.
  CHECK(encoded(r, 3) == bytes_of({0, 0, 0, 4, 0, 0, 2, 2, 'g', 2, 'c', 0, 0}));
  // v4: + GroupState
  CHECK(encoded(r, 4) == bytes_of({0, 0, 0, 4, 0, 0, 2, 2, 'g', 2, 'c', 2, 'S', 0, 0}));
  // v5: + GroupType
  CHECK(encoded(r, 5) == bytes_of({0, 0, 0, 4, 0, 0, 2, 2, 'g', 2, 'c', 2, 'S', 2, 'T', 0, 0}));
}

TEST_CASE("ListGroups round-trips at every version", "[protocol][list_groups]") {
  for (std::int16_t v = 0; v <= 5; ++v) {
    INFO("v" << v);
    list_groups_request q;
    list_groups_response r{v >= 1 ? 7 : 0, 0, {{"group-a", "consumer", "", ""}, {"connect-x", "connect", "", ""}}};
    if (v >= 4) {
      q.states_filter = {"Stable", "PreparingRebalance"};
      r.groups[0].group_state = "Stable";
      r.groups[1].group_state = "Empty";
    }
    if (v >= 5) {
      q.types_filter = {"classic", "consumer"};
      r.groups[0].group_type = "consumer";
      r.groups[1].group_type = "classic";
    }
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
  list_groups_response failed{0, 15, {}};  // COORDINATOR_NOT_AVAILABLE
  check_round_trip(failed, 2);
}

TEST_CASE("ListGroups refuses lying counts and lengths", "[protocol][list_groups]") {
  // v0 response: Groups claims 2 and holds one.
  auto groups = codec::decode<list_groups_response>(bytes_of({0, 0, 0, 0, 0, 2, 0, 1, 'g', 0, 1, 'c'}), 0);
  REQUIRE_FALSE(groups);
  CHECK(groups.error() == errc::corrupt_message);
  CHECK_THAT(groups.error().message(), Catch::Contains("Groups"));
  // v4 request: a StatesFilter entry claims 5 bytes and has 1.
  auto states = codec::decode<list_groups_request>(bytes_of({2, 6, 'S', 0}), 4);
  REQUIRE_FALSE(states);
  CHECK(states.error() == errc::corrupt_message);
  CHECK_THAT(states.error().message(), Catch::Contains("StatesFilter"));
}

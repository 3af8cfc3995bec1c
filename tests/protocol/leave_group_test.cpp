#include <catch2/catch.hpp>

#include <brook/protocol/leave_group.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("LeaveGroup byte for byte: one member (v0-2), many (v3+)", "[protocol][leave_group]") {
  leave_group_request one{"g", "m", {}};
  CHECK(encoded(one, 0) == bytes_of({0, 1, 'g', 0, 1, 'm'}));
  auto v3 = codec::encode(one, 3);  // MemberId is gone in v3: not ignorable
  REQUIRE_FALSE(v3);
  CHECK(v3.error() == errc::unsupported_version);
  leave_group_request many{"g", "", {{"m", "i", std::nullopt}}};
  CHECK(encoded(many, 3) == bytes_of({0, 1, 'g', 0, 0, 0, 1, 0, 1, 'm', 0, 1, 'i'}));
  CHECK_FALSE(codec::encode(many, 2));
  many.members[0].reason = "bye";  // ignorable: dropped before v5
  CHECK(encoded(many, 4) == bytes_of({2, 'g', 2, 2, 'm', 2, 'i', 0, 0}));
  CHECK(encoded(many, 5) == bytes_of({2, 'g', 2, 2, 'm', 2, 'i', 4, 'b', 'y', 'e', 0, 0}));
  leave_group_response r{5, 0, {}};
  CHECK(encoded(r, 0) == bytes_of({0, 0}));
  r.members = {{"m", std::nullopt, 25}};  // UNKNOWN_MEMBER_ID
  CHECK_FALSE(codec::encode(r, 2));       // per-member answers need v3
  CHECK(encoded(r, 3) == bytes_of({0, 0, 0, 5, 0, 0, 0, 0, 0, 1, 0, 1, 'm', 0xff, 0xff, 0, 25}));
}

TEST_CASE("LeaveGroup round-trips at every version", "[protocol][leave_group]") {
  for (std::int16_t v = 0; v <= 5; ++v) {
    INFO("v" << v);
    leave_group_request q{"group", "", {}};
    leave_group_response r{v >= 1 ? 9 : 0, 0, {}};
    if (v <= 2) {
      q.member_id = "member";
    } else {
      q.members = {{"a", std::nullopt, std::nullopt}, {"b", "static-b", std::nullopt}};
      if (v >= 5) q.members[1].reason = "shutting down";
      r.members = {{"a", std::nullopt, 0}, {"b", "static-b", 25}};
    }
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
}

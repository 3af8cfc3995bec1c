#include <catch2/catch.hpp>

#include <brook/protocol/describe_groups.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("DescribeGroups request byte for byte: v0 v3 and flexible v5", "[protocol][describe_groups]") {
  describe_groups_request q{{"g", "h"}, false};
  // Groups [string]
  CHECK(encoded(q, 0) == bytes_of({0, 0, 0, 2, 0, 1, 'g', 0, 1, 'h'}));
  q.include_authorized_operations = true;
  auto v2 = codec::encode(q, 2);  // IncludeAuthorizedOperations is not ignorable
  REQUIRE_FALSE(v2);
  CHECK(v2.error() == errc::unsupported_version);
  CHECK_THAT(v2.error().message(), Catch::Contains("IncludeAuthorizedOperations"));
  // v3: + IncludeAuthorizedOperations
  CHECK(encoded(q, 3) == bytes_of({0, 0, 0, 2, 0, 1, 'g', 0, 1, 'h', 1}));
  // Compact array of compact strings, then the (empty) tagged fields.
  CHECK(encoded(q, 5) == bytes_of({3, 2, 'g', 2, 'h', 1, 0}));
}

TEST_CASE("DescribeGroups response byte for byte: v0 v1 v3 v4 and flexible v5", "[protocol][describe_groups]") {
  described_group_member m{"m", "i", "x", "h", bytes_of({1}), bytes_of({2})};  // GroupInstanceId: ignorable
  describe_groups_response r{4, {{0, "g", "S", "c", "r", {m}}}};               // ThrottleTimeMs: ignorable
  // Groups [ErrorCode | GroupId | GroupState | ProtocolType | ProtocolData | Members [MemberId
  // | ClientId | ClientHost | MemberMetadata | MemberAssignment]]
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 1,   0, 0, 0,   1, 'g', 0,   1, 'S', 0, 1, 'c', 0, 1, 'r', 0, 0, 0,
                                   1, 0, 1, 'm', 0, 1, 'x', 0, 1,   'h', 0, 0,   0, 1, 1,   0, 0, 0,   1, 2}));
  // v1: + ThrottleTimeMs first
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 4, 0, 0,   0, 1, 0,   0, 0, 1,   'g', 0, 1, 'S', 0, 1, 'c', 0, 1, 'r', 0,
                                   0, 0, 1, 0, 1, 'm', 0, 1, 'x', 0, 1, 'h', 0,   0, 0, 1,   1, 0, 0,   0, 1, 2}));
  r.groups[0].authorized_operations = 8;
  auto v2 = codec::encode(r, 2);  // AuthorizedOperations is not ignorable
  REQUIRE_FALSE(v2);
  CHECK(v2.error() == errc::unsupported_version);
  CHECK_THAT(v2.error().message(), Catch::Contains("AuthorizedOperations"));
  // v3: + AuthorizedOperations after Members
  CHECK(encoded(r, 3) ==
        bytes_of({0, 0, 0, 4,   0, 0, 0,   1, 0, 0,   0, 1, 'g', 0, 1, 'S', 0, 1, 'c', 0, 1, 'r', 0, 0, 0,
                  1, 0, 1, 'm', 0, 1, 'x', 0, 1, 'h', 0, 0, 0,   1, 1, 0,   0, 0, 1,   2, 0, 0,   0, 8}));
  // v4: + GroupInstanceId after MemberId
  CHECK(encoded(r, 4) ==
        bytes_of({0, 0, 0,   4, 0, 0,   0, 1, 0,   0, 0, 1,   'g', 0, 1, 'S', 0, 1, 'c', 0, 1, 'r', 0, 0, 0, 1,
                  0, 1, 'm', 0, 1, 'i', 0, 1, 'x', 0, 1, 'h', 0,   0, 0, 1,   1, 0, 0,   0, 1, 2,   0, 0, 0, 8}));
  // Compact strings, arrays and bytes; each struct ends with its (empty) tagged fields.
  CHECK(encoded(r, 5) == bytes_of({0, 0,   0, 4,   2, 0,   0, 2, 'g', 2, 'S', 2, 'c', 2, 'r', 2, 2, 'm',
                                   2, 'i', 2, 'x', 2, 'h', 2, 1, 2,   2, 0,   0, 0,   0, 8,   0, 0}));
}

TEST_CASE("DescribeGroups round-trips at every version", "[protocol][describe_groups]") {
  for (std::int16_t v = 0; v <= 5; ++v) {
    INFO("v" << v);
    describe_groups_request q{{"group-a", "group-b", ""}, v >= 3};
    described_group_member leader{"member-1",  std::nullopt,        "client-1",
                                  "/10.0.0.1", bytes_of({0, 1, 2}), bytes_of({3})};
    described_group_member other{"member-2", std::nullopt, "client-2", "/10.0.0.2", {}, {}};
    if (v >= 4) other.group_instance_id = "static-2";
    described_group a{0, "group-a", "Stable", "consumer", "range", {leader, other}};
    described_group b{16, "group-b", "", "", "", {}};  // NOT_COORDINATOR
    if (v >= 3) a.authorized_operations = 0x0ff8;
    describe_groups_response r{v >= 1 ? 3 : 0, {a, b}};
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
}

TEST_CASE("DescribeGroups refuses lying counts and lengths", "[protocol][describe_groups]") {
  // v5 request: Groups claims 9 and holds one.
  auto groups = codec::decode<describe_groups_request>(bytes_of({10, 2, 'g', 1, 0}), 5);
  REQUIRE_FALSE(groups);
  CHECK(groups.error() == errc::corrupt_message);
  CHECK_THAT(groups.error().message(), Catch::Contains("Groups"));
  // v0 response: a member's MemberAssignment claims 200 bytes and has 1.
  auto assignment =
      codec::decode<describe_groups_response>(bytes_of({0, 0, 0, 1,   0, 0, 0, 1, 'g', 0, 0, 0, 0, 0, 0, 0,   0, 0,
                                                        1, 0, 1, 'm', 0, 0, 0, 0, 0,   0, 0, 0, 0, 0, 0, 200, 2}),
                                              0);
  REQUIRE_FALSE(assignment);
  CHECK(assignment.error() == errc::corrupt_message);
  CHECK_THAT(assignment.error().message(), Catch::Contains("MemberAssignment"));
}

#include <catch2/catch.hpp>

#include <brook/protocol/join_group.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("JoinGroup request byte for byte: v0 v1 v5 and flexible v6 and v8", "[protocol][join_group]") {
  join_group_request q;
  q.group_id = "g";
  q.session_timeout_ms = 10;
  q.rebalance_timeout_ms = 20;  // ignorable: dropped in v0
  q.protocol_type = "c";
  q.protocols = {{"r", bytes_of({0xab})}};
  q.reason = "x";  // ignorable: dropped before v8
  // GroupId | SessionTimeoutMs | MemberId | ProtocolType | Protocols [Name | Metadata]
  CHECK(encoded(q, 0) == bytes_of({0, 1, 'g', 0, 0, 0, 10, 0, 0, 0, 1, 'c', 0, 0, 0, 1, 0, 1, 'r', 0, 0, 0, 1, 0xab}));
  // + RebalanceTimeoutMs after SessionTimeoutMs
  CHECK(encoded(q, 1) ==
        bytes_of({0, 1, 'g', 0, 0, 0, 10, 0, 0, 0, 20, 0, 0, 0, 1, 'c', 0, 0, 0, 1, 0, 1, 'r', 0, 0, 0, 1, 0xab}));
  // + GroupInstanceId (null) after MemberId
  CHECK(encoded(q, 5) == bytes_of({0, 1, 'g', 0, 0, 0, 10, 0, 0, 0,   20, 0, 0, 0xff, 0xff,
                                   0, 1, 'c', 0, 0, 0, 1,  0, 1, 'r', 0,  0, 0, 1,    0xab}));
  q.group_instance_id = "i";
  auto v4 = codec::encode(q, 4);  // a static member needs v5
  REQUIRE_FALSE(v4);
  CHECK(v4.error() == errc::unsupported_version);
  CHECK_THAT(v4.error().message(), Catch::Contains("GroupInstanceId"));
  // Compact strings, arrays and bytes; each struct ends with its (empty) tagged fields.
  CHECK(encoded(q, 6) == bytes_of({2, 'g', 0, 0, 0, 10, 0, 0, 0, 20, 1, 2, 'i', 2, 'c', 2, 2, 'r', 2, 0xab, 0, 0}));
  // + Reason at the end
  CHECK(encoded(q, 8) ==
        bytes_of({2, 'g', 0, 0, 0, 10, 0, 0, 0, 20, 1, 2, 'i', 2, 'c', 2, 2, 'r', 2, 0xab, 0, 2, 'x', 0}));
}

TEST_CASE("JoinGroup response byte for byte: v0 v2 and flexible v7 and v9", "[protocol][join_group]") {
  join_group_response r;
  r.throttle_time_ms = 5;  // ignorable: dropped before v2
  r.generation = generation_id{3};
  r.protocol_type = "c";  // ignorable: dropped before v7
  r.protocol_name = "r";
  r.leader = "l";
  r.member_id = "m";
  r.members = {{"l", std::nullopt, bytes_of({1})}};
  // ErrorCode | GenerationId | ProtocolName | Leader | MemberId | Members [MemberId | Metadata]
  CHECK(encoded(r, 0) ==
        bytes_of({0, 0, 0, 0, 0, 3, 0, 1, 'r', 0, 1, 'l', 0, 1, 'm', 0, 0, 0, 1, 0, 1, 'l', 0, 0, 0, 1, 1}));
  CHECK(encoded(r, 2) == bytes_of({0, 0, 0,   5, 0, 0, 0, 0, 0, 3,   0, 1, 'r', 0, 1, 'l',
                                   0, 1, 'm', 0, 0, 0, 1, 0, 1, 'l', 0, 0, 0,   1, 1}));
  // v5 adds the members' GroupInstanceId (null here)
  CHECK(encoded(r, 5) == bytes_of({0, 0,   0, 5, 0, 0, 0, 0, 0,   3,    0,    1, 'r', 0, 1, 'l', 0,
                                   1, 'm', 0, 0, 0, 1, 0, 1, 'l', 0xff, 0xff, 0, 0,   0, 1, 1}));
  // ThrottleTimeMs | ErrorCode | GenerationId | ProtocolType | ProtocolName | Leader | MemberId
  // | Members [MemberId | GroupInstanceId | Metadata | tags] | tags
  CHECK(encoded(r, 7) ==
        bytes_of({0, 0, 0, 5, 0, 0, 0, 0, 0, 3, 2, 'c', 2, 'r', 2, 'l', 2, 'm', 2, 2, 'l', 0, 2, 1, 0, 0}));
  r.skip_assignment = true;
  auto v8 = codec::encode(r, 8);  // SkipAssignment is not ignorable
  REQUIRE_FALSE(v8);
  CHECK(v8.error() == errc::unsupported_version);
  CHECK_THAT(v8.error().message(), Catch::Contains("SkipAssignment"));
  // + SkipAssignment after Leader
  CHECK(encoded(r, 9) ==
        bytes_of({0, 0, 0, 5, 0, 0, 0, 0, 0, 3, 2, 'c', 2, 'r', 2, 'l', 1, 2, 'm', 2, 2, 'l', 0, 2, 1, 0, 0}));
  r.protocol_name = std::nullopt;  // ProtocolName is nullable only from v7
  CHECK(encoded(r, 9)[12] == std::byte{0});
  auto v6 = codec::encode(r, 6);
  REQUIRE_FALSE(v6);
  CHECK(v6.error() == errc::invalid_request);
}

TEST_CASE("JoinGroup round-trips at every version", "[protocol][join_group]") {
  for (std::int16_t v = 0; v <= 9; ++v) {
    INFO("v" << v);
    join_group_request q;
    q.group_id = "group";
    q.session_timeout_ms = 45000;
    q.member_id = "member-1";
    q.protocol_type = "consumer";
    q.protocols = {{"range", bytes_of({0, 1, 2})}, {"cooperative-sticky", {}}};
    join_group_response r;
    r.error_code = 0;
    r.generation = generation_id{v + 7};
    r.protocol_name = "range";
    r.leader = "member-1";
    r.member_id = "member-2";
    r.members = {{"member-1", std::nullopt, bytes_of({4, 5})}, {"member-2", std::nullopt, {}}};
    if (v >= 1) q.rebalance_timeout_ms = 300000;
    if (v >= 2) r.throttle_time_ms = 12;
    if (v >= 5) {
      q.group_instance_id = "static-1";
      r.members[0].group_instance_id = "static-1";
    }
    if (v >= 7) r.protocol_type = "consumer";
    if (v >= 8) q.reason = "rebalance failed";
    if (v >= 9) r.skip_assignment = true;
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
  join_group_response nulls;
  nulls.protocol_name = std::nullopt;
  check_round_trip(nulls, 7);
}

TEST_CASE("JoinGroup refuses lying counts and lengths", "[protocol][join_group]") {
  // v0 response: ErrorCode | GenerationId | three empty strings | Members count 5 with no bytes.
  auto members = codec::decode<join_group_response>(bytes_of({0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5}), 0);
  REQUIRE_FALSE(members);
  CHECK(members.error() == errc::corrupt_message);
  CHECK_THAT(members.error().message(), Catch::Contains("Members"));
  // v6 request: a protocol's Metadata claims 16 bytes and has 1.
  auto metadata = codec::decode<join_group_request>(
      bytes_of({2, 'g', 0, 0, 0, 10, 0, 0, 0, 20, 1, 0, 2, 'c', 2, 2, 'r', 17, 0xab, 0, 0}), 6);
  REQUIRE_FALSE(metadata);
  CHECK(metadata.error() == errc::corrupt_message);
  CHECK_THAT(metadata.error().message(), Catch::Contains("Metadata"));
  // v6 response: null ProtocolName before v7 is corrupt.
  auto name = codec::decode<join_group_response>(bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0}), 6);
  REQUIRE_FALSE(name);
  CHECK(name.error() == errc::corrupt_message);
  CHECK_THAT(name.error().message(), Catch::Contains("ProtocolName"));
}

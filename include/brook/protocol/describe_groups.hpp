// DescribeGroups (key 15): the state, protocol and members of classic groups, as the admin
// client and kafka-consumer-groups.sh show them. Transcribed from apache/kafka's
// DescribeGroupsRequest.json and DescribeGroupsResponse.json (1eb7644): v0-4 classic, v5+
// flexible; v3 (KIP-430) adds the authorized operations, v4 the members' GroupInstanceId.
//
//   request   Groups [string] | IncludeAuthorizedOperations bool (v3+)
//   response  ThrottleTimeMs int32 (v1+) | Groups [ErrorCode int16 | GroupId string
//             | GroupState string | ProtocolType string | ProtocolData string
//             | Members [MemberId string | GroupInstanceId nullable string (v4+)
//             | ClientId string | ClientHost string | MemberMetadata bytes
//             | MemberAssignment bytes] | AuthorizedOperations int32 (v3+, default INT32_MIN)]
//
// ProtocolData is the chosen protocol's name (e.g. "range"); the member metadata and
// assignment bytes are the consumer protocol's, opaque here. IncludeAuthorizedOperations and
// AuthorizedOperations are not ignorable: asking for or answering with operations needs v3+,
// anything else is unsupported_version. The members' GroupInstanceId is ignorable and
// dropped before v4.
//
// Worked example, DescribeGroupsResponse v5 (flexible): group "g" in state "S", protocol type
// "c", protocol "r", one member "m" (instance "i", client "x" on host "h", metadata 01,
// assignment 02), authorized operations 8, throttled 4 ms:
//
//   00 00 00 04                    ThrottleTimeMs 4
//   02                             Groups: compact array, 1 element + 1
//     00 00                        ErrorCode 0
//     02 67                        GroupId: compact string, length 1 + 1, "g"
//     02 53                        GroupState "S"
//     02 63                        ProtocolType "c"
//     02 72                        ProtocolData "r"
//     02                           Members: 1 element + 1
//       02 6d                      MemberId "m"
//       02 69                      GroupInstanceId "i"
//       02 78                      ClientId "x"
//       02 68                      ClientHost "h"
//       02 01                      MemberMetadata: compact bytes, length 1 + 1
//       02 02                      MemberAssignment: compact bytes, length 1 + 1
//       00                         the member's tagged fields: none
//     00 00 00 08                  AuthorizedOperations 8
//     00                           the group's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/describe_groups_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>

namespace brook::protocol {

struct describe_groups_request {
  std::vector<std::string> groups{};
  bool include_authorized_operations = false;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_groups_request;
    return message<r>({.name = "DescribeGroupsRequest", .valid = between(0, 5), .flexible = since(5), .api_key = 15},
                      field("Groups", &r::groups),
                      field("IncludeAuthorizedOperations", &r::include_authorized_operations).in(since(3)));
  }
  friend bool operator==(const describe_groups_request&, const describe_groups_request&) = default;
};

struct described_group_member {
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::string client_id{};
  std::string client_host{};
  std::vector<std::byte> member_metadata{};
  std::vector<std::byte> member_assignment{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = described_group_member;
    return structure<r>(field("MemberId", &r::member_id),
                        field("GroupInstanceId", &r::group_instance_id).in(since(4)).nullable_in(since(4)).ignorable(),
                        field("ClientId", &r::client_id), field("ClientHost", &r::client_host),
                        field("MemberMetadata", &r::member_metadata), field("MemberAssignment", &r::member_assignment));
  }
  friend bool operator==(const described_group_member&, const described_group_member&) = default;
};

struct described_group {
  std::int16_t error_code = 0;
  std::string group_id{};
  std::string group_state{};
  std::string protocol_type{};
  std::string protocol_data{};
  std::vector<described_group_member> members{};
  /// Kafka's "not asked for" is INT32_MIN (-2147483648).
  std::int32_t authorized_operations = std::numeric_limits<std::int32_t>::min();

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = described_group;
    return structure<r>(field("ErrorCode", &r::error_code), field("GroupId", &r::group_id),
                        field("GroupState", &r::group_state), field("ProtocolType", &r::protocol_type),
                        field("ProtocolData", &r::protocol_data), field("Members", &r::members),
                        field("AuthorizedOperations", &r::authorized_operations).in(since(3)));
  }
  friend bool operator==(const described_group&, const described_group&) = default;
};

struct describe_groups_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<described_group> groups{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_groups_response;
    return message<r>({.name = "DescribeGroupsResponse", .valid = between(0, 5), .flexible = since(5), .api_key = 15},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("Groups", &r::groups));
  }
  friend bool operator==(const describe_groups_response&, const describe_groups_response&) = default;
};

}  // namespace brook::protocol

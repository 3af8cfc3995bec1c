// JoinGroup (key 11): a member asks to (re-)join a group and names the protocols it supports;
// the coordinator answers, after the rebalance, with the generation, the chosen protocol, the
// leader and (to the leader only) every member's metadata. Transcribed from apache/kafka's
// JoinGroupRequest.json and JoinGroupResponse.json (1eb7644): v0-5 classic, v6+ flexible;
// v4 makes a new member join twice (the first answer, MEMBER_ID_REQUIRED, carries its id).
//
//   request   GroupId string | SessionTimeoutMs int32 | RebalanceTimeoutMs int32 (v1+,
//             default -1) | MemberId string | GroupInstanceId nullable string (v5+)
//             | ProtocolType string | Protocols [Name string | Metadata bytes]
//             | Reason nullable string (v8+)
//   response  ThrottleTimeMs int32 (v2+) | ErrorCode int16 | GenerationId int32 (default -1)
//             | ProtocolType nullable string (v7+) | ProtocolName string (nullable v7+)
//             | Leader string | SkipAssignment bool (v9+) | MemberId string
//             | Members [MemberId string | GroupInstanceId nullable string (v5+)
//             | Metadata bytes]
//
// The protocol metadata and member metadata bytes are the consumer protocol's, opaque here.
// Kafka keys Protocols by Name ("mapKey"); brook keeps them in order in a vector, which has
// the same wire form. GroupInstanceId (request) and SkipAssignment are not ignorable: a static
// member needs v5+ and a leader told to skip the assignment needs v9+, anything else is
// unsupported_version. RebalanceTimeoutMs, Reason, the response's ProtocolType and the
// members' GroupInstanceId are ignorable and dropped by versions without them.
//
// Worked example, JoinGroupRequest v8 (flexible): a new static member "i" joins group "g"
// (session timeout 10 ms, rebalance timeout 20 ms) with protocol type "c", one protocol "r"
// whose metadata is the byte ab, giving the reason "x":
//
//   02 67                          GroupId: compact string, length 1 + 1, "g"
//   00 00 00 0a                    SessionTimeoutMs 10
//   00 00 00 14                    RebalanceTimeoutMs 20
//   01                             MemberId: "" (compact string, length 0 + 1)
//   02 69                          GroupInstanceId "i"
//   02 63                          ProtocolType "c"
//   02                             Protocols: compact array, 1 element + 1
//     02 72                        Name "r"
//     02 ab                        Metadata: compact bytes, length 1 + 1
//     00                           the element's tagged fields: none
//   02 78                          Reason "x"
//   00                             the message's tagged fields: none
//
// (tests/protocol/join_group_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>

namespace brook::protocol {

struct join_group_request_protocol {
  std::string name{};
  std::vector<std::byte> metadata{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = join_group_request_protocol;
    return structure<r>(field("Name", &r::name), field("Metadata", &r::metadata));
  }
  friend bool operator==(const join_group_request_protocol&, const join_group_request_protocol&) = default;
};

struct join_group_request {
  std::string group_id{};
  std::int32_t session_timeout_ms = 0;
  std::int32_t rebalance_timeout_ms = -1;
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::string protocol_type{};
  std::vector<join_group_request_protocol> protocols{};
  std::optional<std::string> reason{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = join_group_request;
    return message<r>({.name = "JoinGroupRequest", .valid = between(0, 9), .flexible = since(6), .api_key = 11},
                      field("GroupId", &r::group_id), field("SessionTimeoutMs", &r::session_timeout_ms),
                      field("RebalanceTimeoutMs", &r::rebalance_timeout_ms).in(since(1)).ignorable(),
                      field("MemberId", &r::member_id),
                      field("GroupInstanceId", &r::group_instance_id).in(since(5)).nullable_in(since(5)),
                      field("ProtocolType", &r::protocol_type), field("Protocols", &r::protocols),
                      field("Reason", &r::reason).in(since(8)).nullable_in(since(8)).ignorable());
  }
  friend bool operator==(const join_group_request&, const join_group_request&) = default;
};

struct join_group_response_member {
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::vector<std::byte> metadata{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = join_group_response_member;
    return structure<r>(field("MemberId", &r::member_id),
                        field("GroupInstanceId", &r::group_instance_id).in(since(5)).nullable_in(since(5)).ignorable(),
                        field("Metadata", &r::metadata));
  }
  friend bool operator==(const join_group_response_member&, const join_group_response_member&) = default;
};

struct join_group_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;
  generation_id generation{-1};
  std::optional<std::string> protocol_type{};
  std::optional<std::string> protocol_name{std::string()};
  std::string leader{};
  bool skip_assignment = false;
  std::string member_id{};
  std::vector<join_group_response_member> members{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = join_group_response;
    return message<r>({.name = "JoinGroupResponse", .valid = between(0, 9), .flexible = since(6), .api_key = 11},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(2)).ignorable(),
                      field("ErrorCode", &r::error_code), field("GenerationId", &r::generation),
                      field("ProtocolType", &r::protocol_type).in(since(7)).nullable_in(since(7)).ignorable(),
                      field("ProtocolName", &r::protocol_name).nullable_in(since(7)), field("Leader", &r::leader),
                      field("SkipAssignment", &r::skip_assignment).in(since(9)), field("MemberId", &r::member_id),
                      field("Members", &r::members));
  }
  friend bool operator==(const join_group_response&, const join_group_response&) = default;
};

}  // namespace brook::protocol

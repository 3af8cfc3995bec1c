// LeaveGroup (key 13): members leave a group so it rebalances at once instead of after their
// session timeout. Transcribed from apache/kafka's LeaveGroupRequest.json and
// LeaveGroupResponse.json (1eb7644): v0-3 classic, v4+ flexible; v3 (KIP-345) leaves
// several members, static ones included, in one request.
//
//   request   GroupId string | MemberId string (v0-2) | Members [MemberId string
//             | GroupInstanceId nullable string | Reason nullable string (v5+)] (v3+)
//   response  ThrottleTimeMs int32 (v1+) | ErrorCode int16 | Members [MemberId string
//             | GroupInstanceId nullable string | ErrorCode int16] (v3+)
//
// MemberId (v0-2) and Members (v3+) are not ignorable: a request a version cannot carry is
// unsupported_version.
//
// Worked example, LeaveGroupRequest v5 (flexible): member "m" (instance "i") leaves group "g"
// with the reason "bye":
//
//   02 67                          GroupId: compact string, length 1 + 1, "g"
//   02                             Members: compact array, 1 element + 1
//     02 6d                        MemberId "m"
//     02 69                        GroupInstanceId "i"
//     04 62 79 65                  Reason: compact string, length 3 + 1, "bye"
//     00                           the element's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/leave_group_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>

namespace brook::protocol {

struct leave_group_member {
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::optional<std::string> reason{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = leave_group_member;
    return structure<r>(field("MemberId", &r::member_id), field("GroupInstanceId", &r::group_instance_id),
                        field("Reason", &r::reason).in(since(5)).ignorable());
  }
  friend bool operator==(const leave_group_member&, const leave_group_member&) = default;
};

struct leave_group_request {
  std::string group_id{};
  std::string member_id{};
  std::vector<leave_group_member> members{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = leave_group_request;
    return message<r>({.name = "LeaveGroupRequest", .valid = between(0, 5), .flexible = since(4), .api_key = 13},
                      field("GroupId", &r::group_id), field("MemberId", &r::member_id).in(between(0, 2)),
                      field("Members", &r::members).in(since(3)));
  }
  friend bool operator==(const leave_group_request&, const leave_group_request&) = default;
};

struct leave_group_member_response {
  std::string member_id{};
  std::optional<std::string> group_instance_id{std::string()};
  std::int16_t error_code = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = leave_group_member_response;
    return structure<r>(field("MemberId", &r::member_id), field("GroupInstanceId", &r::group_instance_id),
                        field("ErrorCode", &r::error_code));
  }
  friend bool operator==(const leave_group_member_response&, const leave_group_member_response&) = default;
};

struct leave_group_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;
  std::vector<leave_group_member_response> members{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = leave_group_response;
    return message<r>({.name = "LeaveGroupResponse", .valid = between(0, 5), .flexible = since(4), .api_key = 13},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("ErrorCode", &r::error_code), field("Members", &r::members).in(since(3)));
  }
  friend bool operator==(const leave_group_response&, const leave_group_response&) = default;
};

}  // namespace brook::protocol

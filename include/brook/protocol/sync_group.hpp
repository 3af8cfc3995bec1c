// SyncGroup (key 14): after a rebalance the leader sends every member's assignment and each
// member receives its own. Transcribed from apache/kafka's SyncGroupRequest.json and
// SyncGroupResponse.json (1eb7644): v0-3 classic, v4+ flexible.
//
//   request   GroupId string | GenerationId int32 | MemberId string
//             | GroupInstanceId nullable string (v3+) | ProtocolType nullable string (v5+)
//             | ProtocolName nullable string (v5+) | Assignments [MemberId string
//             | Assignment bytes]
//   response  ThrottleTimeMs int32 (v1+) | ErrorCode int16 | ProtocolType nullable string
//             (v5+) | ProtocolName nullable string (v5+) | Assignment bytes
//
// The assignment bytes are the consumer protocol's (group/consumer_protocol.hpp), opaque
// here. GroupInstanceId is not ignorable (a static member needs v3+).
//
// Worked example, SyncGroupRequest v4 (flexible) for group "g", generation 1, member "m"
// assigning itself the bytes ab:
//
//   02 67                          GroupId: compact string, length 1 + 1, "g"
//   00 00 00 01                    GenerationId 1
//   02 6d                          MemberId "m"
//   00                             GroupInstanceId: null (compact nullable string 0)
//   02                             Assignments: compact array, 1 element + 1
//     02 6d                        MemberId "m"
//     02 ab                        Assignment: compact bytes, length 1 + 1
//     00                           the element's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/sync_group_test.cpp checks these bytes.)
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

struct sync_group_assignment {
  std::string member_id{};
  std::vector<std::byte> assignment{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = sync_group_assignment;
    return structure<r>(field("MemberId", &r::member_id), field("Assignment", &r::assignment));
  }
  friend bool operator==(const sync_group_assignment&, const sync_group_assignment&) = default;
};

struct sync_group_request {
  std::string group_id{};
  generation_id generation{0};
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::optional<std::string> protocol_type{};
  std::optional<std::string> protocol_name{};
  std::vector<sync_group_assignment> assignments{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = sync_group_request;
    return message<r>({.name = "SyncGroupRequest", .valid = between(0, 5), .flexible = since(4), .api_key = 14},
                      field("GroupId", &r::group_id), field("GenerationId", &r::generation),
                      field("MemberId", &r::member_id), field("GroupInstanceId", &r::group_instance_id).in(since(3)),
                      field("ProtocolType", &r::protocol_type).in(since(5)).ignorable(),
                      field("ProtocolName", &r::protocol_name).in(since(5)).ignorable(),
                      field("Assignments", &r::assignments));
  }
  friend bool operator==(const sync_group_request&, const sync_group_request&) = default;
};

struct sync_group_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;
  std::optional<std::string> protocol_type{};
  std::optional<std::string> protocol_name{};
  std::vector<std::byte> assignment{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = sync_group_response;
    return message<r>(
        {.name = "SyncGroupResponse", .valid = between(0, 5), .flexible = since(4), .api_key = 14},
        field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(), field("ErrorCode", &r::error_code),
        field("ProtocolType", &r::protocol_type).in(since(5)).ignorable(),
        field("ProtocolName", &r::protocol_name).in(since(5)).ignorable(), field("Assignment", &r::assignment));
  }
  friend bool operator==(const sync_group_response&, const sync_group_response&) = default;
};

}  // namespace brook::protocol

// Heartbeat (key 12): a group member tells its coordinator it is alive, and learns of a
// rebalance from the answer's error. Transcribed from apache/kafka's HeartbeatRequest.json
// and HeartbeatResponse.json (1eb7644): v0-3 classic, v4 flexible.
//
//   request   GroupId string | GenerationId int32 | MemberId string
//             | GroupInstanceId nullable string (v3+, default null)
//   response  ThrottleTimeMs int32 (v1+) | ErrorCode int16
//
// GroupInstanceId is not ignorable: a static member cannot be written in v0-2
// (unsupported_version).
//
// Worked example, HeartbeatRequest v4 (flexible) from static member "i" (member id "m") of
// group "g", generation 5:
//
//   02 67                          GroupId: compact string, length 1 + 1, "g"
//   00 00 00 05                    GenerationId 5
//   02 6d                          MemberId "m"
//   02 69                          GroupInstanceId: compact nullable string "i"
//   00                             the message's tagged fields: none
//
// (tests/protocol/heartbeat_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>

namespace brook::protocol {

struct heartbeat_request {
  std::string group_id{};
  generation_id generation{0};
  std::string member_id{};
  std::optional<std::string> group_instance_id{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = heartbeat_request;
    return message<r>({.name = "HeartbeatRequest", .valid = between(0, 4), .flexible = since(4), .api_key = 12},
                      field("GroupId", &r::group_id), field("GenerationId", &r::generation),
                      field("MemberId", &r::member_id), field("GroupInstanceId", &r::group_instance_id).in(since(3)));
  }
  friend bool operator==(const heartbeat_request&, const heartbeat_request&) = default;
};

struct heartbeat_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = heartbeat_response;
    return message<r>({.name = "HeartbeatResponse", .valid = between(0, 4), .flexible = since(4), .api_key = 12},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("ErrorCode", &r::error_code));
  }
  friend bool operator==(const heartbeat_response&, const heartbeat_response&) = default;
};

}  // namespace brook::protocol

// FindCoordinator (key 10): which broker coordinates a group (key type 0) or a
// transactional id (key type 1). Transcribed from apache/kafka's FindCoordinatorRequest.json
// and FindCoordinatorResponse.json (1eb7644): v0-2 classic, v3+ flexible; v4 (KIP-699) asks
// for many keys at once.
//
//   request   Key string (v0-3) | KeyType int8 (v1+, default 0) | CoordinatorKeys [string] (v4+)
//   response  ThrottleTimeMs int32 (v1+) | ErrorCode int16 (v0-3)
//             | ErrorMessage nullable string (v1-3) | NodeId int32 (v0-3) | Host string (v0-3)
//             | Port int32 (v0-3) | Coordinators [Key string | NodeId int32 | Host string
//             | Port int32 | ErrorCode int16 | ErrorMessage nullable string] (v4+)
//
// Key, KeyType and CoordinatorKeys are not ignorable: a request that a version cannot
// carry is unsupported_version, never silently a different question.
//
// Worked example, FindCoordinatorResponse v4 (flexible): group "g" is coordinated by broker 1
// at "h":9092:
//
//   00 00 00 00                    ThrottleTimeMs 0
//   02                             Coordinators: compact array, 1 element + 1
//     02 67                        Key: compact string, length 1 + 1, "g"
//     00 00 00 01                  NodeId 1
//     02 68                        Host "h"
//     00 00 23 84                  Port 9092
//     00 00                        ErrorCode 0
//     00                           ErrorMessage: null (compact nullable string 0)
//     00                           the element's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/find_coordinator_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>

namespace brook::protocol {

/// FindCoordinator's KeyType.
enum class coordinator_type : std::int8_t { group = 0, transaction = 1 };

struct find_coordinator_request {
  std::string key{};
  std::int8_t key_type = 0;  ///< coordinator_type
  std::vector<std::string> coordinator_keys{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = find_coordinator_request;
    return message<r>({.name = "FindCoordinatorRequest", .valid = between(0, 6), .flexible = since(3), .api_key = 10},
                      field("Key", &r::key).in(between(0, 3)), field("KeyType", &r::key_type).in(since(1)),
                      field("CoordinatorKeys", &r::coordinator_keys).in(since(4)));
  }
  friend bool operator==(const find_coordinator_request&, const find_coordinator_request&) = default;
};

struct coordinator {
  std::string key{};
  broker_id node_id{0};
  std::string host{};
  std::int32_t port = 0;
  std::int16_t error_code = 0;
  std::optional<std::string> error_message{std::string()};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = coordinator;
    return structure<r>(field("Key", &r::key), field("NodeId", &r::node_id), field("Host", &r::host),
                        field("Port", &r::port), field("ErrorCode", &r::error_code),
                        field("ErrorMessage", &r::error_message).ignorable());
  }
  friend bool operator==(const coordinator&, const coordinator&) = default;
};

struct find_coordinator_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;
  std::optional<std::string> error_message{std::string()};
  broker_id node_id{0};
  std::string host{};
  std::int32_t port = 0;
  std::vector<coordinator> coordinators{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = find_coordinator_response;
    return message<r>({.name = "FindCoordinatorResponse", .valid = between(0, 6), .flexible = since(3), .api_key = 10},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("ErrorCode", &r::error_code).in(between(0, 3)),
                      field("ErrorMessage", &r::error_message).in(between(1, 3)).ignorable(),
                      field("NodeId", &r::node_id).in(between(0, 3)), field("Host", &r::host).in(between(0, 3)),
                      field("Port", &r::port).in(between(0, 3)), field("Coordinators", &r::coordinators).in(since(4)));
  }
  friend bool operator==(const find_coordinator_response&, const find_coordinator_response&) = default;
};

}  // namespace brook::protocol

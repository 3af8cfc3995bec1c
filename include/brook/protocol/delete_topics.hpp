// DeleteTopics (key 20): delete topics by name, or (v6+) by name or topic id. Transcribed
// from apache/kafka's DeleteTopicsRequest.json and DeleteTopicsResponse.json (1eb7644):
// v0-3 classic, v4+ flexible (v0 deprecated).
//
//   request   Topics [Name nullable string (default null) | TopicId uuid] (v6+)
//             | TopicNames [string] (v0-5) | TimeoutMs int32
//   response  ThrottleTimeMs int32 (v1+) | Responses [Name string (nullable v6+)
//             | TopicId uuid (v6+) | ErrorCode int16
//             | ErrorMessage nullable string (v5+, default null)]
//
// v6 reorganises the request: Topics replaces TopicNames. Topics is not ignorable, so a
// request naming topics that way cannot be written in v0-5 (unsupported_version); the
// ignorable TopicNames is dropped from v6 on. A v6 topic gives a name or an id (the other
// null or zero). The response Name is nullable only in v6+ (a topic deleted by id whose
// name is unknown); it starts empty, as Kafka's generated code, since the JSON sets no
// default.
//
// Worked example, DeleteTopicsRequest v6 (flexible): delete topic "a" (id 0102...0f10) and
// the topic with id 0...02a, whose name is not given; timeout 1000 ms:
//
//   03                             Topics: compact array, 2 elements + 1
//     02 61                        Name: compact nullable string, length 1 + 1, "a"
//     01 02 03 04 05 06 07 08      TopicId: uuid, 16 bytes
//     09 0a 0b 0c 0d 0e 0f 10
//     00                           the element's tagged fields: none
//     00                           Name: null (compact nullable string 0)
//     00 00 00 00 00 00 00 00      TopicId: uuid, 16 bytes
//     00 00 00 00 00 00 00 2a
//     00                           the element's tagged fields: none
//   00 00 03 e8                    TimeoutMs 1000
//   00                             the message's tagged fields: none
//
// (tests/protocol/delete_topics_test.cpp checks these bytes.)
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

/// DeleteTopicState (v6+).
struct delete_topics_request_topic {
  std::optional<std::string> name{};
  uuid topic_id{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = delete_topics_request_topic;
    return structure<r>(field("Name", &r::name).in(since(6)).nullable_in(since(6)),
                        field("TopicId", &r::topic_id).in(since(6)));
  }
  friend bool operator==(const delete_topics_request_topic&, const delete_topics_request_topic&) = default;
};

struct delete_topics_request {
  std::vector<delete_topics_request_topic> topics{};
  std::vector<std::string> topic_names{};
  std::int32_t timeout_ms = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = delete_topics_request;
    return message<r>({.name = "DeleteTopicsRequest", .valid = between(0, 6), .flexible = since(4), .api_key = 20},
                      field("Topics", &r::topics).in(since(6)),
                      field("TopicNames", &r::topic_names).in(between(0, 5)).ignorable(),
                      field("TimeoutMs", &r::timeout_ms));
  }
  friend bool operator==(const delete_topics_request&, const delete_topics_request&) = default;
};

/// DeletableTopicResult.
struct delete_topics_response_topic {
  std::optional<std::string> name{std::string()};
  uuid topic_id{};
  std::int16_t error_code = 0;
  std::optional<std::string> error_message{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = delete_topics_response_topic;
    return structure<r>(field("Name", &r::name).nullable_in(since(6)),
                        field("TopicId", &r::topic_id).in(since(6)).ignorable(), field("ErrorCode", &r::error_code),
                        field("ErrorMessage", &r::error_message).in(since(5)).nullable_in(since(5)).ignorable());
  }
  friend bool operator==(const delete_topics_response_topic&, const delete_topics_response_topic&) = default;
};

struct delete_topics_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<delete_topics_response_topic> responses{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = delete_topics_response;
    return message<r>({.name = "DeleteTopicsResponse", .valid = between(0, 6), .flexible = since(4), .api_key = 20},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("Responses", &r::responses));
  }
  friend bool operator==(const delete_topics_response&, const delete_topics_response&) = default;
};

}  // namespace brook::protocol

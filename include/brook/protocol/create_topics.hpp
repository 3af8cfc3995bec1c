// CreateTopics (key 19): create topics with a partition count and replication factor, or a
// manual replica assignment, and per-topic configs; v1+ can only validate. Transcribed from
// apache/kafka's CreateTopicsRequest.json and CreateTopicsResponse.json (1eb7644): v0-4
// classic, v5+ flexible (v0-1 deprecated).
//
//   request   Topics [Name string | NumPartitions int32 | ReplicationFactor int16
//             | Assignments [PartitionIndex int32 | BrokerIds [int32]]
//             | Configs [Name string | Value nullable string]] | timeoutMs int32 (default
//             60000) | validateOnly bool (v1+, default false)
//   response  ThrottleTimeMs int32 (v2+) | Topics [Name string | TopicId uuid (v7+)
//             | ErrorCode int16 | ErrorMessage nullable string (v1+)
//             | NumPartitions int32 (v5+, default -1) | ReplicationFactor int16 (v5+, default -1)
//             | Configs nullable [Name string | Value nullable string | ReadOnly bool
//             | ConfigSource int8 (default -1) | IsSensitive bool] (v5+)
//             | <tag 0> TopicConfigErrorCode int16 (v5+)]
//
// NumPartitions and ReplicationFactor are -1 when an assignment (or, v4+, the broker's
// default) decides them. validateOnly is not ignorable: a validation-only request cannot be
// written in v0 (unsupported_version), so it never silently creates. Every response field
// newer than v0 is ignorable. Nullable strings without a JSON default start empty, as in
// Kafka's generated code; the nullable Configs array starts empty, not null.
//
// Worked example, CreateTopicsResponse v6 (flexible): topic "t" exists already
// (TOPIC_ALREADY_EXISTS, 36, message "x") with 3 partitions and replication factor 2, its
// configs withheld (null) and the tagged TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED (29):
//
//   00 00 00 05                    ThrottleTimeMs 5
//   02                             Topics: compact array, 1 element + 1
//     02 74                        Name: compact string, length 1 + 1, "t"
//     00 24                        ErrorCode 36
//     02 78                        ErrorMessage "x"
//     00 00 00 03                  NumPartitions 3
//     00 02                        ReplicationFactor 2
//     00                           Configs: null (compact nullable array 0)
//     01                           the topic's tagged fields: 1 field
//       00                         tag 0: TopicConfigErrorCode
//       02                         size: 2 bytes
//       00 1d                      TopicConfigErrorCode 29
//   00                             the message's tagged fields: none
//
// (tests/protocol/create_topics_test.cpp checks these bytes.)
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

/// CreatableReplicaAssignment: the replicas of one partition, chosen by the client.
struct create_topics_request_assignment {
  partition_id partition_index{0};
  std::vector<broker_id> broker_ids{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = create_topics_request_assignment;
    return structure<r>(field("PartitionIndex", &r::partition_index), field("BrokerIds", &r::broker_ids));
  }
  friend bool operator==(const create_topics_request_assignment&, const create_topics_request_assignment&) = default;
};

/// CreatableTopicConfig.
struct create_topics_request_config {
  std::string name{};
  std::optional<std::string> value{std::string()};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = create_topics_request_config;
    return structure<r>(field("Name", &r::name), field("Value", &r::value));
  }
  friend bool operator==(const create_topics_request_config&, const create_topics_request_config&) = default;
};

/// CreatableTopic.
struct create_topics_request_topic {
  std::string name{};
  std::int32_t num_partitions = 0;
  std::int16_t replication_factor = 0;
  std::vector<create_topics_request_assignment> assignments{};
  std::vector<create_topics_request_config> configs{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = create_topics_request_topic;
    return structure<r>(field("Name", &r::name), field("NumPartitions", &r::num_partitions),
                        field("ReplicationFactor", &r::replication_factor), field("Assignments", &r::assignments),
                        field("Configs", &r::configs));
  }
  friend bool operator==(const create_topics_request_topic&, const create_topics_request_topic&) = default;
};

struct create_topics_request {
  std::vector<create_topics_request_topic> topics{};
  std::int32_t timeout_ms = 60000;
  bool validate_only = false;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = create_topics_request;
    return message<r>({.name = "CreateTopicsRequest", .valid = between(0, 7), .flexible = since(5), .api_key = 19},
                      field("Topics", &r::topics), field("timeoutMs", &r::timeout_ms),
                      field("validateOnly", &r::validate_only).in(since(1)));
  }
  friend bool operator==(const create_topics_request&, const create_topics_request&) = default;
};

/// CreatableTopicConfigs: a config of the created topic (v5+, KIP-525).
struct create_topics_response_config {
  std::string name{};
  std::optional<std::string> value{std::string()};
  bool read_only = false;
  std::int8_t config_source = -1;
  bool is_sensitive = false;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = create_topics_response_config;
    return structure<r>(field("Name", &r::name).in(since(5)),
                        field("Value", &r::value).in(since(5)).nullable_in(since(5)),
                        field("ReadOnly", &r::read_only).in(since(5)),
                        field("ConfigSource", &r::config_source).in(since(5)).ignorable(),
                        field("IsSensitive", &r::is_sensitive).in(since(5)));
  }
  friend bool operator==(const create_topics_response_config&, const create_topics_response_config&) = default;
};

/// CreatableTopicResult.
struct create_topics_response_topic {
  std::string name{};
  uuid topic_id{};
  std::int16_t error_code = 0;
  std::optional<std::string> error_message{std::string()};
  std::int16_t topic_config_error_code = 0;
  std::int32_t num_partitions = -1;
  std::int16_t replication_factor = -1;
  std::optional<std::vector<create_topics_response_config>> configs{std::vector<create_topics_response_config>{}};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = create_topics_response_topic;
    return structure<r>(field("Name", &r::name), field("TopicId", &r::topic_id).in(since(7)).ignorable(),
                        field("ErrorCode", &r::error_code),
                        field("ErrorMessage", &r::error_message).in(since(1)).ignorable(),
                        field("TopicConfigErrorCode", &r::topic_config_error_code).tagged(0, since(5)).ignorable(),
                        field("NumPartitions", &r::num_partitions).in(since(5)).ignorable(),
                        field("ReplicationFactor", &r::replication_factor).in(since(5)).ignorable(),
                        field("Configs", &r::configs).in(since(5)).nullable_in(since(5)).ignorable());
  }
  friend bool operator==(const create_topics_response_topic&, const create_topics_response_topic&) = default;
};

struct create_topics_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<create_topics_response_topic> topics{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = create_topics_response;
    return message<r>({.name = "CreateTopicsResponse", .valid = between(0, 7), .flexible = since(5), .api_key = 19},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(2)).ignorable(),
                      field("Topics", &r::topics));
  }
  friend bool operator==(const create_topics_response&, const create_topics_response&) = default;
};

}  // namespace brook::protocol

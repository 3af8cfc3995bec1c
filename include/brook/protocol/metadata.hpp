// Metadata (key 3): which brokers there are, which topics and partitions, and who leads
// each. Transcribed from apache/kafka's MetadataRequest.json and MetadataResponse.json
// (1eb7644): v0-8 classic, v9-12 flexible.
//
//   request   Topics [TopicId uuid (v10+) | Name string (nullable v10+)]  (null: all, v1+;
//             in v0 an empty array means all) | AllowAutoTopicCreation bool (v4+, default
//             true) | IncludeClusterAuthorizedOperations bool (v8-10)
//             | IncludeTopicAuthorizedOperations bool (v8+)
//   response  ThrottleTimeMs int32 (v3+) | Brokers [NodeId int32 | Host string | Port int32
//             | Rack nullable string (v1+)] | ClusterId nullable string (v2+)
//             | ControllerId int32 (v1+, default -1) | Topics [ErrorCode int16
//             | Name string (nullable v12+) | TopicId uuid (v10+) | IsInternal bool (v1+)
//             | Partitions [ErrorCode int16 | PartitionIndex int32 | LeaderId int32
//             | LeaderEpoch int32 (v7+, default -1) | ReplicaNodes [int32] | IsrNodes [int32]
//             | OfflineReplicas [int32] (v5+)] | TopicAuthorizedOperations int32 (v8+)]
//             | ClusterAuthorizedOperations int32 (v8-10)
//
// Flexible versions use compact strings and arrays and end each struct with tagged fields.
// AllowAutoTopicCreation, TopicAuthorizedOperations and the Include* flags are not
// ignorable: writing a value other than the default in a version without the field is
// unsupported_version, as Kafka's generated code refuses it.
//
// Worked example, MetadataRequest v9 (flexible) for topic "a", auto-creation allowed:
//
//   02                             Topics: compact array, 1 element + 1
//     02 61                        Name: compact string, length 1 + 1, "a"
//     00                           the topic's tagged fields: none
//   01                             AllowAutoTopicCreation true
//   00                             IncludeClusterAuthorizedOperations false
//   00                             IncludeTopicAuthorizedOperations false
//   00                             the message's tagged fields: none
//
// (tests/protocol/metadata_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>

namespace brook::protocol {

/// Kafka's "no authorized operations were asked for" (INT32_MIN).
inline constexpr std::int32_t authorized_operations_unknown = std::numeric_limits<std::int32_t>::min();

struct metadata_request_topic {
  uuid topic_id{};
  std::optional<std::string> name{std::string()};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = metadata_request_topic;
    return structure<r>(field("TopicId", &r::topic_id).in(since(10)).ignorable(),
                        field("Name", &r::name).nullable_in(since(10)));
  }
  friend bool operator==(const metadata_request_topic&, const metadata_request_topic&) = default;
};

struct metadata_request {
  /// None: every topic (v1+). In v0 an empty array asks for every topic.
  std::optional<std::vector<metadata_request_topic>> topics{std::vector<metadata_request_topic>{}};
  bool allow_auto_topic_creation = true;
  bool include_cluster_authorized_operations = false;
  bool include_topic_authorized_operations = false;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = metadata_request;
    return message<r>(
        {.name = "MetadataRequest", .valid = between(0, 12), .flexible = since(9), .api_key = 3},
        field("Topics", &r::topics).nullable_in(since(1)),
        field("AllowAutoTopicCreation", &r::allow_auto_topic_creation).in(since(4)),
        field("IncludeClusterAuthorizedOperations", &r::include_cluster_authorized_operations).in(between(8, 10)),
        field("IncludeTopicAuthorizedOperations", &r::include_topic_authorized_operations).in(since(8)));
  }
  friend bool operator==(const metadata_request&, const metadata_request&) = default;
};

struct metadata_response_broker {
  broker_id node_id{0};
  std::string host{};
  std::int32_t port = 0;
  std::optional<std::string> rack{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = metadata_response_broker;
    return structure<r>(field("NodeId", &r::node_id), field("Host", &r::host), field("Port", &r::port),
                        field("Rack", &r::rack).in(since(1)).ignorable());
  }
  friend bool operator==(const metadata_response_broker&, const metadata_response_broker&) = default;
};

struct metadata_response_partition {
  std::int16_t error_code = 0;
  partition_id partition_index{0};
  broker_id leader_id{0};
  leader_epoch leader_epoch_value{-1};
  std::vector<broker_id> replica_nodes{};
  std::vector<broker_id> isr_nodes{};
  std::vector<broker_id> offline_replicas{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = metadata_response_partition;
    return structure<r>(field("ErrorCode", &r::error_code), field("PartitionIndex", &r::partition_index),
                        field("LeaderId", &r::leader_id),
                        field("LeaderEpoch", &r::leader_epoch_value).in(since(7)).ignorable(),
                        field("ReplicaNodes", &r::replica_nodes), field("IsrNodes", &r::isr_nodes),
                        field("OfflineReplicas", &r::offline_replicas).in(since(5)).ignorable());
  }
  friend bool operator==(const metadata_response_partition&, const metadata_response_partition&) = default;
};

struct metadata_response_topic {
  std::int16_t error_code = 0;
  std::optional<std::string> name{std::string()};
  uuid topic_id{};
  bool is_internal = false;
  std::vector<metadata_response_partition> partitions{};
  std::int32_t topic_authorized_operations = authorized_operations_unknown;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = metadata_response_topic;
    return structure<r>(field("ErrorCode", &r::error_code), field("Name", &r::name).nullable_in(since(12)),
                        field("TopicId", &r::topic_id).in(since(10)).ignorable(),
                        field("IsInternal", &r::is_internal).in(since(1)).ignorable(),
                        field("Partitions", &r::partitions),
                        field("TopicAuthorizedOperations", &r::topic_authorized_operations).in(since(8)));
  }
  friend bool operator==(const metadata_response_topic&, const metadata_response_topic&) = default;
};

struct metadata_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<metadata_response_broker> brokers{};
  std::optional<std::string> cluster_id{};
  broker_id controller_id{-1};
  std::vector<metadata_response_topic> topics{};
  std::int32_t cluster_authorized_operations = authorized_operations_unknown;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = metadata_response;
    return message<r>({.name = "MetadataResponse", .valid = between(0, 12), .flexible = since(9), .api_key = 3},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(3)).ignorable(),
                      field("Brokers", &r::brokers), field("ClusterId", &r::cluster_id).in(since(2)).ignorable(),
                      field("ControllerId", &r::controller_id).in(since(1)).ignorable(), field("Topics", &r::topics),
                      field("ClusterAuthorizedOperations", &r::cluster_authorized_operations).in(between(8, 10)));
  }
  friend bool operator==(const metadata_response&, const metadata_response&) = default;
};

}  // namespace brook::protocol

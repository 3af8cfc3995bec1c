// Fetch (key 1): consumers and followers read record batches from partitions. Transcribed
// from apache/kafka's FetchRequest.json and FetchResponse.json (1eb7644): v0-11 classic,
// v12-17 flexible. Kafka's clients send v4 and later.
//
//   request   ClusterId nullable string (tag 0, v12+) | ReplicaId int32 (v0-14, default -1)
//             | ReplicaState {ReplicaId int32 (default -1) | ReplicaEpoch int64 (default -1)}
//             (tag 1, v15+) | MaxWaitMs int32 | MinBytes int32 | MaxBytes int32 (v3+,
//             default 0x7fffffff) | IsolationLevel int8 (v4+) | SessionId int32 (v7+)
//             | SessionEpoch int32 (v7+, default -1) | Topics [Topic string (v0-12)
//             | TopicId uuid (v13+) | Partitions [Partition int32 | CurrentLeaderEpoch int32
//             (v9+, default -1) | FetchOffset int64 | LastFetchedEpoch int32 (v12+, default
//             -1) | LogStartOffset int64 (v5+, default -1) | PartitionMaxBytes int32
//             | ReplicaDirectoryId uuid (tag 0, v17+)]] | ForgottenTopicsData [Topic string
//             (v7-12) | TopicId uuid (v13+) | Partitions [int32]] (v7+) | RackId string (v11+)
//   response  ThrottleTimeMs int32 (v1+) | ErrorCode int16 (v7+) | SessionId int32 (v7+)
//             | Responses [Topic string (v0-12) | TopicId uuid (v13+) | Partitions
//             [PartitionIndex int32 | ErrorCode int16 | HighWatermark int64
//             | LastStableOffset int64 (v4+, default -1) | LogStartOffset int64 (v5+, default
//             -1) | DivergingEpoch {Epoch int32 | EndOffset int64} (tag 0, v12+)
//             | CurrentLeader LeaderIdAndEpoch (tag 1, v12+) | SnapshotId {EndOffset int64
//             | Epoch int32} (tag 2, v12+) | AbortedTransactions [ProducerId int64
//             | FirstOffset int64] (v4+, nullable) | PreferredReadReplica int32 (v11+,
//             default -1) | Records records (nullable)]] | NodeEndpoints [NodeEndpoint]
//             (tag 0, v16+)
//
// From v13 topics are named by id, not by name (Topic and TopicId are both ignorable: the
// version decides which one is written). LastFetchedEpoch, ForgottenTopicsData, SessionId
// (response) and PreferredReadReplica are not ignorable.
//
// A response's records are usually log slices (protocol/records.hpp): encoding writes their
// lengths and leaves the batches as external parts a server sends from the segment files
// (protocol/response.hpp), so only the parts around the batches are built in memory.
//
// Worked example, FetchResponse v12 (flexible): partition 0 of topic "t", high watermark
// and last stable offset 10, log start 0, records 01 02 03, and the tagged DivergingEpoch
// (epoch 2 ends at offset 8):
//
//   00 00 00 00                    ThrottleTimeMs 0
//   00 00                          ErrorCode 0
//   00 00 00 00                    SessionId 0
//   02                             Responses: compact array, 1 element + 1
//     02 74                        Topic: compact string, length 1 + 1, "t"
//     02                           Partitions: 1 element + 1
//       00 00 00 00                PartitionIndex 0
//       00 00                      ErrorCode 0
//       00 00 00 00 00 00 00 0a    HighWatermark 10
//       00 00 00 00 00 00 00 0a    LastStableOffset 10
//       00 00 00 00 00 00 00 00    LogStartOffset 0
//       00                         AbortedTransactions: null (compact array 0)
//       ff ff ff ff                PreferredReadReplica -1
//       04 01 02 03                Records: compact length 3 + 1, the batch bytes
//       01                         the partition's tagged fields: 1 field
//         00                       tag 0: DivergingEpoch
//         0d                       size: 13 bytes
//         00 00 00 02              Epoch 2
//         00 00 00 00 00 00 00 08  EndOffset 8
//         00                       the struct's tagged fields: none
//     00                           the topic's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/fetch_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>
#include <brook/protocol/isolation_level.hpp>
#include <brook/protocol/leader_hints.hpp>
#include <brook/protocol/records.hpp>

namespace brook::protocol {

struct fetch_replica_state {
  broker_id replica_id{-1};
  std::int64_t replica_epoch = -1;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_replica_state;
    return structure<r>(field("ReplicaId", &r::replica_id), field("ReplicaEpoch", &r::replica_epoch));
  }
  friend bool operator==(const fetch_replica_state&, const fetch_replica_state&) = default;
};

struct fetch_request_partition {
  partition_id partition{0};
  leader_epoch current_leader_epoch{-1};
  offset fetch_offset{0};
  leader_epoch last_fetched_epoch{-1};
  offset log_start_offset{-1};
  std::int32_t partition_max_bytes = 0;
  uuid replica_directory_id{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_request_partition;
    return structure<r>(field("Partition", &r::partition),
                        field("CurrentLeaderEpoch", &r::current_leader_epoch).in(since(9)).ignorable(),
                        field("FetchOffset", &r::fetch_offset),
                        field("LastFetchedEpoch", &r::last_fetched_epoch).in(since(12)),
                        field("LogStartOffset", &r::log_start_offset).in(since(5)).ignorable(),
                        field("PartitionMaxBytes", &r::partition_max_bytes),
                        field("ReplicaDirectoryId", &r::replica_directory_id).tagged(0, since(17)).ignorable());
  }
  friend bool operator==(const fetch_request_partition&, const fetch_request_partition&) = default;
};

struct fetch_request_topic {
  std::string topic{};
  uuid topic_id{};
  std::vector<fetch_request_partition> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_request_topic;
    return structure<r>(field("Topic", &r::topic).in(between(0, 12)).ignorable(),
                        field("TopicId", &r::topic_id).in(since(13)).ignorable(), field("Partitions", &r::partitions));
  }
  friend bool operator==(const fetch_request_topic&, const fetch_request_topic&) = default;
};

struct fetch_forgotten_topic {
  std::string topic{};
  uuid topic_id{};
  std::vector<partition_id> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_forgotten_topic;
    return structure<r>(field("Topic", &r::topic).in(between(7, 12)).ignorable(),
                        field("TopicId", &r::topic_id).in(since(13)).ignorable(), field("Partitions", &r::partitions));
  }
  friend bool operator==(const fetch_forgotten_topic&, const fetch_forgotten_topic&) = default;
};

struct fetch_request {
  std::optional<std::string> cluster_id{};
  broker_id replica_id{-1};
  fetch_replica_state replica_state{};
  std::int32_t max_wait_ms = 0;
  std::int32_t min_bytes = 0;
  std::int32_t max_bytes = 0x7fffffff;
  isolation_level isolation = isolation_level::read_uncommitted;
  std::int32_t session_id = 0;
  std::int32_t session_epoch = -1;
  std::vector<fetch_request_topic> topics{};
  std::vector<fetch_forgotten_topic> forgotten_topics_data{};
  std::string rack_id{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_request;
    return message<r>({.name = "FetchRequest", .valid = between(0, 17), .flexible = since(12), .api_key = 1},
                      field("ClusterId", &r::cluster_id).tagged(0, since(12)).ignorable(),
                      field("ReplicaId", &r::replica_id).in(between(0, 14)),
                      field("ReplicaState", &r::replica_state).tagged(1, since(15)),
                      field("MaxWaitMs", &r::max_wait_ms), field("MinBytes", &r::min_bytes),
                      field("MaxBytes", &r::max_bytes).in(since(3)).ignorable(),
                      field("IsolationLevel", &r::isolation).in(since(4)).ignorable(),
                      field("SessionId", &r::session_id).in(since(7)).ignorable(),
                      field("SessionEpoch", &r::session_epoch).in(since(7)).ignorable(), field("Topics", &r::topics),
                      field("ForgottenTopicsData", &r::forgotten_topics_data).in(since(7)),
                      field("RackId", &r::rack_id).in(since(11)).ignorable());
  }
  friend bool operator==(const fetch_request&, const fetch_request&) = default;
};

struct fetch_epoch_end_offset {
  leader_epoch epoch{-1};
  offset end_offset{-1};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_epoch_end_offset;
    return structure<r>(field("Epoch", &r::epoch), field("EndOffset", &r::end_offset));
  }
  friend bool operator==(const fetch_epoch_end_offset&, const fetch_epoch_end_offset&) = default;
};

struct fetch_snapshot_id {
  offset end_offset{-1};
  std::int32_t epoch = -1;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_snapshot_id;
    return structure<r>(field("EndOffset", &r::end_offset), field("Epoch", &r::epoch));
  }
  friend bool operator==(const fetch_snapshot_id&, const fetch_snapshot_id&) = default;
};

struct fetch_aborted_transaction {
  std::int64_t producer_id = 0;
  offset first_offset{0};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_aborted_transaction;
    return structure<r>(field("ProducerId", &r::producer_id), field("FirstOffset", &r::first_offset));
  }
  friend bool operator==(const fetch_aborted_transaction&, const fetch_aborted_transaction&) = default;
};

struct fetch_response_partition {
  partition_id partition_index{0};
  std::int16_t error_code = 0;
  offset high_watermark{0};
  offset last_stable_offset{-1};
  offset log_start_offset{-1};
  fetch_epoch_end_offset diverging_epoch{};
  leader_id_and_epoch current_leader{};
  fetch_snapshot_id snapshot_id{};
  std::optional<std::vector<fetch_aborted_transaction>> aborted_transactions{std::vector<fetch_aborted_transaction>{}};
  broker_id preferred_read_replica{-1};
  protocol::records records{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_response_partition;
    return structure<r>(field("PartitionIndex", &r::partition_index), field("ErrorCode", &r::error_code),
                        field("HighWatermark", &r::high_watermark),
                        field("LastStableOffset", &r::last_stable_offset).in(since(4)).ignorable(),
                        field("LogStartOffset", &r::log_start_offset).in(since(5)).ignorable(),
                        field("DivergingEpoch", &r::diverging_epoch).tagged(0, since(12)),
                        field("CurrentLeader", &r::current_leader).tagged(1, since(12)),
                        field("SnapshotId", &r::snapshot_id).tagged(2, since(12)),
                        field("AbortedTransactions", &r::aborted_transactions).in(since(4)).ignorable(),
                        field("PreferredReadReplica", &r::preferred_read_replica).in(since(11)),
                        field("Records", &r::records).nullable_in(since(0)));
  }
  friend bool operator==(const fetch_response_partition&, const fetch_response_partition&) = default;
};

struct fetch_response_topic {
  std::string topic{};
  uuid topic_id{};
  std::vector<fetch_response_partition> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_response_topic;
    return structure<r>(field("Topic", &r::topic).in(between(0, 12)).ignorable(),
                        field("TopicId", &r::topic_id).in(since(13)).ignorable(), field("Partitions", &r::partitions));
  }
  friend bool operator==(const fetch_response_topic&, const fetch_response_topic&) = default;
};

struct fetch_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;
  std::int32_t session_id = 0;
  std::vector<fetch_response_topic> responses{};
  std::vector<node_endpoint> node_endpoints{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = fetch_response;
    return message<r>({.name = "FetchResponse", .valid = between(0, 17), .flexible = since(12), .api_key = 1},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("ErrorCode", &r::error_code).in(since(7)).ignorable(),
                      field("SessionId", &r::session_id).in(since(7)), field("Responses", &r::responses),
                      field("NodeEndpoints", &r::node_endpoints).tagged(0, since(16)));
  }
  friend bool operator==(const fetch_response&, const fetch_response&) = default;
};

}  // namespace brook::protocol

// ListOffsets (key 2): the offset of a partition at a point: the earliest, the latest, the
// first at or after a timestamp, or that of the largest timestamp. Transcribed from
// apache/kafka's ListOffsetsRequest.json and ListOffsetsResponse.json (1eb7644): v0-5
// classic, v6-10 flexible.
//
//   request   ReplicaId int32 | IsolationLevel int8 (v2+) | Topics [Name string
//             | Partitions [PartitionIndex int32 | CurrentLeaderEpoch int32 (v4+, default -1)
//             | Timestamp int64 | MaxNumOffsets int32 (v0 only, default 1)]]
//             | TimeoutMs int32 (v10+)
//   response  ThrottleTimeMs int32 (v2+) | Topics [Name string | Partitions
//             [PartitionIndex int32 | ErrorCode int16 | OldStyleOffsets [int64] (v0 only)
//             | Timestamp int64 (v1+, default -1) | Offset int64 (v1+, default -1)
//             | LeaderEpoch int32 (v4+, default -1)]]
//
// Timestamp in a request is a time in ms or one of Kafka's special values below. v0
// answers with a list of offsets (OldStyleOffsets), later versions with one offset and its
// timestamp. IsolationLevel, MaxNumOffsets, OldStyleOffsets, Timestamp, Offset and
// LeaderEpoch are not ignorable.
//
// Worked example, ListOffsetsRequest v6 (flexible) from a consumer (replica -1), read_committed,
// for the earliest offset of partition 2 of topic "t", leader epoch 3:
//
//   ff ff ff ff                    ReplicaId -1
//   01                             IsolationLevel 1 (read_committed)
//   02                             Topics: compact array, 1 element + 1
//     02 74                        Name: compact string, length 1 + 1, "t"
//     02                           Partitions: 1 element + 1
//       00 00 00 02                PartitionIndex 2
//       00 00 00 03                CurrentLeaderEpoch 3
//       ff ff ff ff ff ff ff fe    Timestamp -2 (earliest)
//       00                         the partition's tagged fields: none
//     00                           the topic's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/list_offsets_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>
#include <brook/protocol/isolation_level.hpp>

namespace brook::protocol {

/// Kafka's special ListOffsets timestamps (ListOffsetsRequest.java).
inline constexpr timestamp_ms latest_timestamp = -1;
inline constexpr timestamp_ms earliest_timestamp = -2;
inline constexpr timestamp_ms max_timestamp = -3;  ///< v7+: the offset of the largest timestamp

struct list_offsets_request_partition {
  partition_id partition_index{0};
  leader_epoch current_leader_epoch{-1};
  timestamp_ms timestamp = 0;
  std::int32_t max_num_offsets = 1;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_offsets_request_partition;
    return structure<r>(field("PartitionIndex", &r::partition_index),
                        field("CurrentLeaderEpoch", &r::current_leader_epoch).in(since(4)).ignorable(),
                        field("Timestamp", &r::timestamp), field("MaxNumOffsets", &r::max_num_offsets).in(only(0)));
  }
  friend bool operator==(const list_offsets_request_partition&, const list_offsets_request_partition&) = default;
};

struct list_offsets_request_topic {
  std::string name{};
  std::vector<list_offsets_request_partition> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_offsets_request_topic;
    return structure<r>(field("Name", &r::name), field("Partitions", &r::partitions));
  }
  friend bool operator==(const list_offsets_request_topic&, const list_offsets_request_topic&) = default;
};

struct list_offsets_request {
  broker_id replica_id{0};
  isolation_level isolation = isolation_level::read_uncommitted;
  std::vector<list_offsets_request_topic> topics{};
  std::int32_t timeout_ms = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_offsets_request;
    return message<r>({.name = "ListOffsetsRequest", .valid = between(0, 10), .flexible = since(6), .api_key = 2},
                      field("ReplicaId", &r::replica_id), field("IsolationLevel", &r::isolation).in(since(2)),
                      field("Topics", &r::topics), field("TimeoutMs", &r::timeout_ms).in(since(10)).ignorable());
  }
  friend bool operator==(const list_offsets_request&, const list_offsets_request&) = default;
};

struct list_offsets_response_partition {
  partition_id partition_index{0};
  std::int16_t error_code = 0;
  std::vector<offset> old_style_offsets{};
  timestamp_ms timestamp = -1;
  offset offset_value{-1};
  leader_epoch leader_epoch_value{-1};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_offsets_response_partition;
    return structure<r>(field("PartitionIndex", &r::partition_index), field("ErrorCode", &r::error_code),
                        field("OldStyleOffsets", &r::old_style_offsets).in(only(0)),
                        field("Timestamp", &r::timestamp).in(since(1)), field("Offset", &r::offset_value).in(since(1)),
                        field("LeaderEpoch", &r::leader_epoch_value).in(since(4)));
  }
  friend bool operator==(const list_offsets_response_partition&, const list_offsets_response_partition&) = default;
};

struct list_offsets_response_topic {
  std::string name{};
  std::vector<list_offsets_response_partition> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_offsets_response_topic;
    return structure<r>(field("Name", &r::name), field("Partitions", &r::partitions));
  }
  friend bool operator==(const list_offsets_response_topic&, const list_offsets_response_topic&) = default;
};

struct list_offsets_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<list_offsets_response_topic> topics{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_offsets_response;
    return message<r>({.name = "ListOffsetsResponse", .valid = between(0, 10), .flexible = since(6), .api_key = 2},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(2)).ignorable(),
                      field("Topics", &r::topics));
  }
  friend bool operator==(const list_offsets_response&, const list_offsets_response&) = default;
};

}  // namespace brook::protocol

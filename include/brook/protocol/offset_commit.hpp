// OffsetCommit (key 8): a consumer stores the offsets it has processed, per partition, with the
// group coordinator (__consumer_offsets). Transcribed from apache/kafka's
// OffsetCommitRequest.json and OffsetCommitResponse.json (1eb7644): v0-7 classic, v8+
// flexible; v9 may be sent by members of the new consumer group protocol (KIP-848), where
// GenerationIdOrMemberEpoch carries the member epoch.
//
//   request   GroupId string | GenerationIdOrMemberEpoch int32 (v1+, default -1)
//             | MemberId string (v1+) | GroupInstanceId nullable string (v7+)
//             | RetentionTimeMs int64 (v2-4, default -1) | Topics [Name string
//             | Partitions [PartitionIndex int32 | CommittedOffset int64
//             | CommittedLeaderEpoch int32 (v6+, default -1) | CommitTimestamp int64 (v1 only,
//             default -1) | CommittedMetadata nullable string]]
//   response  ThrottleTimeMs int32 (v3+) | Topics [Name string | Partitions [PartitionIndex
//             int32 | ErrorCode int16]]
//
// GroupInstanceId and CommitTimestamp are not ignorable: a static member needs v7+, and a
// commit timestamp exists only in v1 (v2 replaced it by RetentionTimeMs, v5 dropped that for
// the broker's offsets.retention.minutes); anything else is unsupported_version. The
// generation, MemberId, RetentionTimeMs and CommittedLeaderEpoch are ignorable and dropped by
// versions without them. CommittedMetadata defaults to the empty string, not null.
//
// Worked example, OffsetCommitRequest v8 (flexible): member "m" (instance "i") of group "g",
// generation 2, commits offset 5 (leader epoch 3, metadata "x") for partition 1 of topic "t":
//
//   02 67                          GroupId: compact string, length 1 + 1, "g"
//   00 00 00 02                    GenerationIdOrMemberEpoch 2
//   02 6d                          MemberId "m"
//   02 69                          GroupInstanceId "i"
//   02                             Topics: compact array, 1 element + 1
//     02 74                        Name "t"
//     02                           Partitions: 1 element + 1
//       00 00 00 01                PartitionIndex 1
//       00 00 00 00 00 00 00 05    CommittedOffset 5
//       00 00 00 03                CommittedLeaderEpoch 3
//       02 78                      CommittedMetadata "x"
//       00                         the partition's tagged fields: none
//     00                           the topic's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/offset_commit_test.cpp checks these bytes.)
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

struct offset_commit_request_partition {
  partition_id partition_index{0};
  offset committed_offset{0};
  leader_epoch committed_leader_epoch{-1};
  timestamp_ms commit_timestamp = -1;
  std::optional<std::string> committed_metadata{std::string()};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_commit_request_partition;
    return structure<r>(field("PartitionIndex", &r::partition_index), field("CommittedOffset", &r::committed_offset),
                        field("CommittedLeaderEpoch", &r::committed_leader_epoch).in(since(6)).ignorable(),
                        field("CommitTimestamp", &r::commit_timestamp).in(only(1)),
                        field("CommittedMetadata", &r::committed_metadata).nullable_in(since(0)));
  }
  friend bool operator==(const offset_commit_request_partition&, const offset_commit_request_partition&) = default;
};

struct offset_commit_request_topic {
  std::string name{};
  std::vector<offset_commit_request_partition> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_commit_request_topic;
    return structure<r>(field("Name", &r::name), field("Partitions", &r::partitions));
  }
  friend bool operator==(const offset_commit_request_topic&, const offset_commit_request_topic&) = default;
};

struct offset_commit_request {
  std::string group_id{};
  generation_id generation_id_or_member_epoch{-1};
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::int64_t retention_time_ms = -1;
  std::vector<offset_commit_request_topic> topics{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_commit_request;
    return message<r>({.name = "OffsetCommitRequest", .valid = between(0, 9), .flexible = since(8), .api_key = 8},
                      field("GroupId", &r::group_id),
                      field("GenerationIdOrMemberEpoch", &r::generation_id_or_member_epoch).in(since(1)).ignorable(),
                      field("MemberId", &r::member_id).in(since(1)).ignorable(),
                      field("GroupInstanceId", &r::group_instance_id).in(since(7)).nullable_in(since(7)),
                      field("RetentionTimeMs", &r::retention_time_ms).in(between(2, 4)).ignorable(),
                      field("Topics", &r::topics));
  }
  friend bool operator==(const offset_commit_request&, const offset_commit_request&) = default;
};

struct offset_commit_response_partition {
  partition_id partition_index{0};
  std::int16_t error_code = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_commit_response_partition;
    return structure<r>(field("PartitionIndex", &r::partition_index), field("ErrorCode", &r::error_code));
  }
  friend bool operator==(const offset_commit_response_partition&, const offset_commit_response_partition&) = default;
};

struct offset_commit_response_topic {
  std::string name{};
  std::vector<offset_commit_response_partition> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_commit_response_topic;
    return structure<r>(field("Name", &r::name), field("Partitions", &r::partitions));
  }
  friend bool operator==(const offset_commit_response_topic&, const offset_commit_response_topic&) = default;
};

struct offset_commit_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<offset_commit_response_topic> topics{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_commit_response;
    return message<r>({.name = "OffsetCommitResponse", .valid = between(0, 9), .flexible = since(8), .api_key = 8},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(3)).ignorable(),
                      field("Topics", &r::topics));
  }
  friend bool operator==(const offset_commit_response&, const offset_commit_response&) = default;
};

}  // namespace brook::protocol

// OffsetFetch (key 9): a consumer (or an admin) reads the offsets a group has committed.
// Transcribed from apache/kafka's OffsetFetchRequest.json and OffsetFetchResponse.json
// (1eb7644): v0-5 classic, v6+ flexible. v0-7 ask about one group (GroupId, Topics); v8
// (KIP-709) asks about many at once (Groups) and drops the single-group fields; v9 (KIP-848)
// adds the member's id and epoch to each group.
//
//   request   GroupId string (v0-7) | Topics [Name string | PartitionIndexes [int32]] (v0-7,
//             nullable v2-7: all topics) | Groups [GroupId string | MemberId nullable string
//             (v9+) | MemberEpoch int32 (v9+, default -1) | Topics [Name string
//             | PartitionIndexes [int32]] (nullable: all topics)] (v8+)
//             | RequireStable bool (v7+)
//   response  ThrottleTimeMs int32 (v3+) | Topics [Name string | Partitions [PartitionIndex
//             int32 | CommittedOffset int64 | CommittedLeaderEpoch int32 (v5-7, default -1)
//             | Metadata nullable string | ErrorCode int16]] (v0-7) | ErrorCode int16 (v2-7)
//             | Groups [GroupId string | Topics [Name string | Partitions [PartitionIndex int32
//             | CommittedOffset int64 | CommittedLeaderEpoch int32 (default -1) | Metadata
//             nullable string | ErrorCode int16]] | ErrorCode int16] (v8+)
//
// Kafka names the single-group element types OffsetFetchRequestTopic / OffsetFetchResponseTopic
// / OffsetFetchResponsePartition and the multi-group ones with a trailing "s"
// (OffsetFetchRequestTopics, ...); the structs here follow those names. The single-group
// fields (v0-7), Groups (v8+) and RequireStable (v7+) are not ignorable: a request or an
// answer the version cannot carry is unsupported_version, never silently another question.
// MemberId, MemberEpoch, the top-level ErrorCode and the committed leader epochs are
// ignorable and dropped by versions without them. Topics defaults to an empty array, not to
// null; Metadata defaults to the empty string.
//
// Worked example, OffsetFetchRequest v9 (flexible) about two groups: partition 1 of topic "t"
// in group "g" (asked by member "m", epoch 5), and every topic of group "h"; stable offsets only:
//
//   03                             Groups: compact array, 2 elements + 1
//     02 67                        GroupId: compact string, length 1 + 1, "g"
//     02 6d                        MemberId "m"
//     00 00 00 05                  MemberEpoch 5
//     02                           Topics: 1 element + 1
//       02 74                      Name "t"
//       02                         PartitionIndexes: 1 element + 1
//       00 00 00 01                partition 1
//       00                         the topic's tagged fields: none
//     00                           the group's tagged fields: none
//     02 68                        GroupId "h"
//     00                           MemberId: null (compact nullable string 0)
//     ff ff ff ff                  MemberEpoch -1
//     00                           Topics: null (compact nullable array 0): all
//     00                           the group's tagged fields: none
//   01                             RequireStable true
//   00                             the message's tagged fields: none
//
// (tests/protocol/offset_fetch_test.cpp checks these bytes.)
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

/// A topic of the single-group form (v0-7).
struct offset_fetch_request_topic {
  std::string name{};
  std::vector<partition_id> partition_indexes{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_request_topic;
    return structure<r>(field("Name", &r::name).in(between(0, 7)),
                        field("PartitionIndexes", &r::partition_indexes).in(between(0, 7)));
  }
  friend bool operator==(const offset_fetch_request_topic&, const offset_fetch_request_topic&) = default;
};

/// A topic of the multi-group form (v8+).
struct offset_fetch_request_topics {
  std::string name{};
  std::vector<partition_id> partition_indexes{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_request_topics;
    return structure<r>(field("Name", &r::name).in(since(8)),
                        field("PartitionIndexes", &r::partition_indexes).in(since(8)));
  }
  friend bool operator==(const offset_fetch_request_topics&, const offset_fetch_request_topics&) = default;
};

struct offset_fetch_request_group {
  std::string group_id{};
  std::optional<std::string> member_id{};
  std::int32_t member_epoch = -1;
  /// None: every topic the group has committed offsets for.
  std::optional<std::vector<offset_fetch_request_topics>> topics{std::vector<offset_fetch_request_topics>{}};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_request_group;
    return structure<r>(field("GroupId", &r::group_id).in(since(8)),
                        field("MemberId", &r::member_id).in(since(9)).nullable_in(since(9)).ignorable(),
                        field("MemberEpoch", &r::member_epoch).in(since(9)).ignorable(),
                        field("Topics", &r::topics).in(since(8)).nullable_in(since(8)));
  }
  friend bool operator==(const offset_fetch_request_group&, const offset_fetch_request_group&) = default;
};

struct offset_fetch_request {
  std::string group_id{};
  /// None: every topic (v2-7).
  std::optional<std::vector<offset_fetch_request_topic>> topics{std::vector<offset_fetch_request_topic>{}};
  std::vector<offset_fetch_request_group> groups{};
  bool require_stable = false;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_request;
    return message<r>({.name = "OffsetFetchRequest", .valid = between(0, 9), .flexible = since(6), .api_key = 9},
                      field("GroupId", &r::group_id).in(between(0, 7)),
                      field("Topics", &r::topics).in(between(0, 7)).nullable_in(between(2, 7)),
                      field("Groups", &r::groups).in(since(8)),
                      field("RequireStable", &r::require_stable).in(since(7)));
  }
  friend bool operator==(const offset_fetch_request&, const offset_fetch_request&) = default;
};

/// A partition of the single-group form (v0-7).
struct offset_fetch_response_partition {
  partition_id partition_index{0};
  offset committed_offset{0};
  leader_epoch committed_leader_epoch{-1};
  std::optional<std::string> metadata{std::string()};
  std::int16_t error_code = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_response_partition;
    return structure<r>(field("PartitionIndex", &r::partition_index).in(between(0, 7)),
                        field("CommittedOffset", &r::committed_offset).in(between(0, 7)),
                        field("CommittedLeaderEpoch", &r::committed_leader_epoch).in(between(5, 7)).ignorable(),
                        field("Metadata", &r::metadata).in(between(0, 7)).nullable_in(between(0, 7)),
                        field("ErrorCode", &r::error_code).in(between(0, 7)));
  }
  friend bool operator==(const offset_fetch_response_partition&, const offset_fetch_response_partition&) = default;
};

/// A topic of the single-group form (v0-7).
struct offset_fetch_response_topic {
  std::string name{};
  std::vector<offset_fetch_response_partition> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_response_topic;
    return structure<r>(field("Name", &r::name).in(between(0, 7)),
                        field("Partitions", &r::partitions).in(between(0, 7)));
  }
  friend bool operator==(const offset_fetch_response_topic&, const offset_fetch_response_topic&) = default;
};

/// A partition of the multi-group form (v8+).
struct offset_fetch_response_partitions {
  partition_id partition_index{0};
  offset committed_offset{0};
  leader_epoch committed_leader_epoch{-1};
  std::optional<std::string> metadata{std::string()};
  std::int16_t error_code = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_response_partitions;
    return structure<r>(field("PartitionIndex", &r::partition_index).in(since(8)),
                        field("CommittedOffset", &r::committed_offset).in(since(8)),
                        field("CommittedLeaderEpoch", &r::committed_leader_epoch).in(since(8)).ignorable(),
                        field("Metadata", &r::metadata).in(since(8)).nullable_in(since(8)),
                        field("ErrorCode", &r::error_code).in(since(8)));
  }
  friend bool operator==(const offset_fetch_response_partitions&, const offset_fetch_response_partitions&) = default;
};

/// A topic of the multi-group form (v8+).
struct offset_fetch_response_topics {
  std::string name{};
  std::vector<offset_fetch_response_partitions> partitions{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_response_topics;
    return structure<r>(field("Name", &r::name).in(since(8)), field("Partitions", &r::partitions).in(since(8)));
  }
  friend bool operator==(const offset_fetch_response_topics&, const offset_fetch_response_topics&) = default;
};

struct offset_fetch_response_group {
  std::string group_id{};
  std::vector<offset_fetch_response_topics> topics{};
  std::int16_t error_code = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_response_group;
    return structure<r>(field("GroupId", &r::group_id).in(since(8)), field("Topics", &r::topics).in(since(8)),
                        field("ErrorCode", &r::error_code).in(since(8)));
  }
  friend bool operator==(const offset_fetch_response_group&, const offset_fetch_response_group&) = default;
};

struct offset_fetch_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<offset_fetch_response_topic> topics{};
  std::int16_t error_code = 0;
  std::vector<offset_fetch_response_group> groups{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = offset_fetch_response;
    return message<r>({.name = "OffsetFetchResponse", .valid = between(0, 9), .flexible = since(6), .api_key = 9},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(3)).ignorable(),
                      field("Topics", &r::topics).in(between(0, 7)),
                      field("ErrorCode", &r::error_code).in(between(2, 7)).ignorable(),
                      field("Groups", &r::groups).in(since(8)));
  }
  friend bool operator==(const offset_fetch_response&, const offset_fetch_response&) = default;
};

}  // namespace brook::protocol

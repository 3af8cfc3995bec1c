// Produce (key 0): a producer appends record batches to partitions. Transcribed from
// apache/kafka's ProduceRequest.json and ProduceResponse.json (1eb7644): v0-8 classic,
// v9-11 flexible. Kafka's clients send v3 and later (RecordBatch v2 only); v0-2 carry the
// older message formats, which brook's storage does not accept.
//
//   request   TransactionalId nullable string (v3+, default null) | Acks int16
//             | TimeoutMs int32 | TopicData [Name string | PartitionData [Index int32
//             | Records records (nullable)]]
//   response  Responses [Name string | PartitionResponses [Index int32 | ErrorCode int16
//             | BaseOffset int64 | LogAppendTimeMs int64 (v2+, default -1)
//             | LogStartOffset int64 (v5+, default -1) | RecordErrors [BatchIndex int32
//             | BatchIndexErrorMessage nullable string] (v8+) | ErrorMessage nullable string
//             (v8+) | CurrentLeader LeaderIdAndEpoch (tag 0, v10+)]] | ThrottleTimeMs int32
//             (v1+) | NodeEndpoints [NodeEndpoint] (tag 0, v10+)
//
// The records are a view of the request's buffer (protocol/records.hpp): a decoded
// produce_request must not outlive the bytes it was decoded from. TransactionalId is not
// ignorable: a transactional producer cannot be written before v3. acks = 0 gets no answer
// at all (that is the server's rule, not the message's).
//
// Worked example, ProduceResponse v10 (flexible): partition 0 of topic "t" failed with
// NOT_LEADER_OR_FOLLOWER (6), and the tagged fields name the new leader, broker 2 at "h":9092,
// epoch 5:
//
//   02                             Responses: compact array, 1 element + 1
//     02 74                        Name: compact string, length 1 + 1, "t"
//     02                           PartitionResponses: 1 element + 1
//       00 00 00 00                Index 0
//       00 06                      ErrorCode 6
//       ff ff ff ff ff ff ff ff    BaseOffset -1
//       ff ff ff ff ff ff ff ff    LogAppendTimeMs -1
//       ff ff ff ff ff ff ff ff    LogStartOffset -1
//       01                         RecordErrors: compact array, empty
//       00                         ErrorMessage: null (compact nullable string 0)
//       01                         the partition's tagged fields: 1 field
//         00                       tag 0: CurrentLeader
//         09                       size: 9 bytes
//         00 00 00 02              LeaderId 2
//         00 00 00 05              LeaderEpoch 5
//         00                       the leader struct's tagged fields: none
//     00                           the topic's tagged fields: none
//   00 00 00 00                    ThrottleTimeMs 0
//   01                             the message's tagged fields: 1 field
//     00                           tag 0: NodeEndpoints
//     0d                           size: 13 bytes
//     02                           compact array, 1 element + 1
//       00 00 00 02                NodeId 2
//       02 68                      Host "h"
//       00 00 23 84                Port 9092
//       00                         Rack: null
//       00                         the endpoint's tagged fields: none
//
// (tests/protocol/produce_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>
#include <brook/protocol/leader_hints.hpp>
#include <brook/protocol/records.hpp>

namespace brook::protocol {

struct produce_request_partition {
  partition_id index{0};
  protocol::records records{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = produce_request_partition;
    return structure<r>(field("Index", &r::index), field("Records", &r::records).nullable_in(since(0)));
  }
  friend bool operator==(const produce_request_partition&, const produce_request_partition&) = default;
};

struct produce_request_topic {
  std::string name{};
  std::vector<produce_request_partition> partition_data{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = produce_request_topic;
    return structure<r>(field("Name", &r::name), field("PartitionData", &r::partition_data));
  }
  friend bool operator==(const produce_request_topic&, const produce_request_topic&) = default;
};

struct produce_request {
  std::optional<std::string> transactional_id{};
  std::int16_t acks = 0;
  std::int32_t timeout_ms = 0;
  std::vector<produce_request_topic> topic_data{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = produce_request;
    return message<r>({.name = "ProduceRequest", .valid = between(0, 11), .flexible = since(9), .api_key = 0},
                      field("TransactionalId", &r::transactional_id).in(since(3)), field("Acks", &r::acks),
                      field("TimeoutMs", &r::timeout_ms), field("TopicData", &r::topic_data));
  }
  friend bool operator==(const produce_request&, const produce_request&) = default;
};

struct produce_response_record_error {
  std::int32_t batch_index = 0;
  std::optional<std::string> batch_index_error_message{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = produce_response_record_error;
    return structure<r>(field("BatchIndex", &r::batch_index),
                        field("BatchIndexErrorMessage", &r::batch_index_error_message));
  }
  friend bool operator==(const produce_response_record_error&, const produce_response_record_error&) = default;
};

struct produce_response_partition {
  partition_id index{0};
  std::int16_t error_code = 0;
  offset base_offset{0};
  timestamp_ms log_append_time_ms = -1;
  offset log_start_offset{-1};
  std::vector<produce_response_record_error> record_errors{};
  std::optional<std::string> error_message{};
  leader_id_and_epoch current_leader{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = produce_response_partition;
    return structure<r>(field("Index", &r::index), field("ErrorCode", &r::error_code),
                        field("BaseOffset", &r::base_offset),
                        field("LogAppendTimeMs", &r::log_append_time_ms).in(since(2)).ignorable(),
                        field("LogStartOffset", &r::log_start_offset).in(since(5)).ignorable(),
                        field("RecordErrors", &r::record_errors).in(since(8)).ignorable(),
                        field("ErrorMessage", &r::error_message).in(since(8)).ignorable(),
                        field("CurrentLeader", &r::current_leader).tagged(0, since(10)));
  }
  friend bool operator==(const produce_response_partition&, const produce_response_partition&) = default;
};

struct produce_response_topic {
  std::string name{};
  std::vector<produce_response_partition> partition_responses{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = produce_response_topic;
    return structure<r>(field("Name", &r::name), field("PartitionResponses", &r::partition_responses));
  }
  friend bool operator==(const produce_response_topic&, const produce_response_topic&) = default;
};

struct produce_response {
  std::vector<produce_response_topic> responses{};
  std::int32_t throttle_time_ms = 0;
  std::vector<node_endpoint> node_endpoints{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = produce_response;
    return message<r>({.name = "ProduceResponse", .valid = between(0, 11), .flexible = since(9), .api_key = 0},
                      field("Responses", &r::responses),
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("NodeEndpoints", &r::node_endpoints).tagged(0, since(10)));
  }
  friend bool operator==(const produce_response&, const produce_response&) = default;
};

}  // namespace brook::protocol

// InitProducerId (key 22): an idempotent or transactional producer obtains its producer id
// and epoch; a transactional one (v3+) may offer its current id and epoch to resume after
// INVALID_PRODUCER_EPOCH. Transcribed from apache/kafka's InitProducerIdRequest.json and
// InitProducerIdResponse.json (1eb7644): v0-1 classic, v2+ flexible.
//
//   request   TransactionalId nullable string | TransactionTimeoutMs int32
//             | ProducerId int64 (v3+, default -1) | ProducerEpoch int16 (v3+, default -1)
//   response  ThrottleTimeMs int32 | ErrorCode int16 | ProducerId int64 (default -1)
//             | ProducerEpoch int16
//
// A producer that is not transactional sends a null TransactionalId; the member starts
// empty, as in Kafka's generated code, since the JSON sets no default. ProducerId and
// ProducerEpoch of the request are not ignorable: an attempt to resume an id cannot be
// written in v0-2 (unsupported_version). The response's ProducerId default is written as
// the JSON number -1 rather than the string "-1" in Kafka's file; it is the same default.
// brook has no producer id type yet: ids are int64, epochs int16.
//
// Worked example, InitProducerIdRequest v5 (flexible): transactional producer "t" (timeout
// 60000 ms) offers its current producer id 0x0102030405060708 and epoch 9:
//
//   02 74                          TransactionalId: compact nullable string, "t"
//   00 00 ea 60                    TransactionTimeoutMs 60000
//   01 02 03 04 05 06 07 08        ProducerId 0x0102030405060708
//   00 09                          ProducerEpoch 9
//   00                             the message's tagged fields: none
//
// (tests/protocol/init_producer_id_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <brook/codec/schema.hpp>

namespace brook::protocol {

struct init_producer_id_request {
  std::optional<std::string> transactional_id{std::string()};
  std::int32_t transaction_timeout_ms = 0;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = -1;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = init_producer_id_request;
    return message<r>(
        {.name = "InitProducerIdRequest", .valid = between(0, 5), .flexible = since(2), .api_key = 22},
        field("TransactionalId", &r::transactional_id), field("TransactionTimeoutMs", &r::transaction_timeout_ms),
        field("ProducerId", &r::producer_id).in(since(3)), field("ProducerEpoch", &r::producer_epoch).in(since(3)));
  }
  friend bool operator==(const init_producer_id_request&, const init_producer_id_request&) = default;
};

struct init_producer_id_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;
  std::int64_t producer_id = -1;
  std::int16_t producer_epoch = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = init_producer_id_response;
    return message<r>({.name = "InitProducerIdResponse", .valid = between(0, 5), .flexible = since(2), .api_key = 22},
                      field("ThrottleTimeMs", &r::throttle_time_ms).ignorable(), field("ErrorCode", &r::error_code),
                      field("ProducerId", &r::producer_id), field("ProducerEpoch", &r::producer_epoch));
  }
  friend bool operator==(const init_producer_id_response&, const init_producer_id_response&) = default;
};

}  // namespace brook::protocol

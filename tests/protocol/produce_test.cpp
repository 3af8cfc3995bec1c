#include <catch2/catch.hpp>

#include <brook/protocol/produce.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

namespace {
const std::vector<std::byte> batch_bytes = bytes_of({1, 2, 3});

produce_request one_partition(records r) {
  produce_request q;
  q.acks = 1;
  q.timeout_ms = 1000;
  q.topic_data = {{"t", {{partition_id{0}, r}}}};
  return q;
}
}  // namespace

TEST_CASE("Produce requests byte for byte: classic v3 and flexible v9", "[protocol][produce]") {
  const auto q = one_partition(records::view(batch_bytes));
  CHECK(encoded(q, 3) == bytes_of({0xff, 0xff, 0, 1, 0, 0, 3, 0xe8, 0, 0, 0, 1, 0, 1, 't',
                                   0,    0,    0, 1, 0, 0, 0, 0,    0, 0, 0, 3, 1, 2, 3}));
  CHECK(encoded(q, 9) == bytes_of({0, 0, 1, 0, 0, 3, 0xe8, 2, 2, 't', 2, 0, 0, 0, 0, 4, 1, 2, 3, 0, 0, 0}));
  // Null records: int32 -1, compact 0.
  CHECK(encoded(one_partition(records()), 3) == bytes_of({0xff, 0xff, 0, 1, 0, 0, 3, 0xe8, 0, 0,    0,    1,    0,   1,
                                                          't',  0,    0, 0, 1, 0, 0, 0,    0, 0xff, 0xff, 0xff, 0xff}));
  CHECK(encoded(one_partition(records()), 9) ==
        bytes_of({0, 0, 1, 0, 0, 3, 0xe8, 2, 2, 't', 2, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST_CASE("Produce responses byte for byte: v8 and v10 with the leader hints", "[protocol][produce]") {
  produce_response r;
  produce_response_partition p;
  p.error_code = 6;  // NOT_LEADER_OR_FOLLOWER
  p.base_offset = offset{-1};
  r.responses = {{"t", {p}}};
  CHECK(encoded(r, 8) == bytes_of({0,    0,    0,    1,    0,    1,    't',  0,    0,    0,    1,    0,    0,
                                   0,    0,    0,    6,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // base
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // append time
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  // log start
                                   0,    0,    0,    0,    0xff, 0xff, 0,    0,    0,    0}));
  r.responses[0].partition_responses[0].current_leader = {broker_id{2}, leader_epoch{5}};
  r.node_endpoints = {{broker_id{2}, "h", 9092, std::nullopt}};
  CHECK(encoded(r, 10) ==
        bytes_of({2,    2,    't',  2,    0,    0,    0,    0,    0,    6,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                  0xff, 0xff,                                                     // base, append time, log start
                  1,    0,                                                        // no record errors, no message
                  1,    0,    9,    0,    0,    0,    2,    0,    0,    0,    5,  // tag 0: leader 2, epoch 5
                  0,                                                              // the leader struct's own tags
                  0,                                                              // the topic's tags
                  0,    0,    0,    0,                                            // throttle
                  1,    0,    13,   2,    0,    0,    0,    2,    2,    'h',  0,    0,    0x23, 0x84, 0,    0}));
  // The leader hints exist from v10 only, and are not ignorable.
  CHECK(codec::encode(r, 9).error() == errc::unsupported_version);
}

TEST_CASE("Produce round-trips at every version and its records stay a view of the buffer", "[protocol][produce]") {
  for (std::int16_t v = 0; v <= 11; ++v) {
    INFO("v" << v);
    auto q = one_partition(records::view(batch_bytes));
    q.topic_data.push_back({"other", {{partition_id{3}, records()}, {partition_id{4}, records::view({})}}});
    if (v >= 3) q.transactional_id = "tx";
    check_round_trip(q, v);

    const auto bytes = encoded(q, v);
    auto back = codec::decode<produce_request>(bytes, v);
    REQUIRE_OK(back);
    const auto view = back->topic_data[0].partition_data[0].records.bytes();
    CHECK(view.data() >= bytes.data());
    CHECK(view.data() + view.size() <= bytes.data() + bytes.size());
    CHECK(back->topic_data[1].partition_data[0].records.is_null());
    CHECK_FALSE(back->topic_data[1].partition_data[1].records.is_null());

    produce_response r;
    produce_response_partition p{partition_id{1}, 0, offset{42}};
    if (v >= 2) p.log_append_time_ms = 1'700'000'000'000;
    if (v >= 5) p.log_start_offset = offset{7};
    if (v >= 8) {
      p.record_errors = {{3, "bad"}, {4, std::nullopt}};
      p.error_message = "batch dropped";
    }
    if (v >= 10) p.current_leader = {broker_id{1}, leader_epoch{9}};
    r.responses = {{"t", {p}}};
    if (v >= 1) r.throttle_time_ms = 5;
    if (v >= 10) r.node_endpoints = {{broker_id{1}, "host", 9092, "rack"}};
    check_round_trip(r, v);
  }
}

TEST_CASE("Produce refuses records whose length lies and a transactional id before v3", "[protocol][produce]") {
  auto bytes = encoded(one_partition(records::view(batch_bytes)), 3);
  bytes[bytes.size() - 4] = std::byte{4};  // the records length now claims 4 bytes, 3 follow
  auto lying = codec::decode<produce_request>(bytes, 3);
  REQUIRE_FALSE(lying);
  CHECK(lying.error() == errc::corrupt_message);
  CHECK_THAT(lying.error().message(), Catch::Contains("TopicData.PartitionData.Records"));

  auto q = one_partition(records());
  q.transactional_id = "tx";
  CHECK(codec::encode(q, 2).error() == errc::unsupported_version);
}

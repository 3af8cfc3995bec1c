#include <catch2/catch.hpp>

#include <brook/protocol/fetch.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

namespace {
const std::vector<std::byte> batch_bytes = bytes_of({1, 2, 3});
const uuid topic_uuid = uuid::from_parts(0x0102030405060708, 0x090a0b0c0d0e0f10);

fetch_request one_partition() {
  fetch_request q;
  q.max_wait_ms = 500;
  q.min_bytes = 1;
  fetch_request_partition p;
  p.fetch_offset = offset{5};
  p.partition_max_bytes = 1 << 20;
  q.topics = {{"t", uuid{}, {p}}};
  return q;
}
}  // namespace

TEST_CASE("Fetch requests byte for byte: classic v4 and flexible v15", "[protocol][fetch]") {
  auto q = one_partition();
  q.isolation = isolation_level::read_committed;
  CHECK(encoded(q, 4) ==
        bytes_of({0xff, 0xff, 0xff, 0xff, 0, 0, 1,   0xf4, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff,  // -1, 500, 1, max
                  1,                                                                            // read_committed
                  0,    0,    0,    1,    0, 1, 't', 0,    0, 0, 1,     // topic t, one partition
                  0,    0,    0,    0,    0, 0, 0,   0,    0, 0, 0, 5,  // partition 0 from offset 5
                  0,    0x10, 0,    0}));                               // up to 1 MiB

  q = one_partition();
  q.replica_id = broker_id{-1};
  q.replica_state = {broker_id{1}, 7};
  q.cluster_id = "c";
  q.topics[0].topic = "";  // v13+ names topics by id
  q.topics[0].topic_id = topic_uuid;
  q.topics[0].partitions[0].current_leader_epoch = leader_epoch{4};
  q.topics[0].partitions[0].last_fetched_epoch = leader_epoch{3};
  CHECK(
      encoded(q, 15) ==
      bytes_of({0,    0,    1,    0xf4, 0,    0,    0,    1,    0x7f, 0xff, 0xff, 0xff,  // wait, min, max
                0,    0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff,                    // isolation, session, epoch
                2,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12, 13, 14, 15, 16,  // topic id
                2,    0,    0,    0,    0,    0,    0,    0,    4,  // partition 0, leader epoch 4
                0,    0,    0,    0,    0,    0,    0,    5,        // fetch offset 5
                0,    0,    0,    3,                                // last fetched epoch 3
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,     // log start -1
                0,    0x10, 0,    0,    0,    0,                    // max bytes, tags of both
                1,    1,                                            // no forgotten topics, rack ""
                2,    0,    2,    2,    'c',                        // tag 0: cluster id "c"
                1,    13,   0,    0,    0,    1,    0,    0,    0,    0,    0,    0,    0,  7,  0}));  // tag 1: replica
                                                                                                       // 1, epoch 7
  // v15 has no ReplicaId outside ReplicaState: a follower id there cannot be written.
  q.replica_id = broker_id{1};
  CHECK(codec::encode(q, 15).error() == errc::unsupported_version);
}

TEST_CASE("Fetch responses byte for byte: classic v4 and flexible v12", "[protocol][fetch]") {
  fetch_response r;
  fetch_response_partition p;
  p.high_watermark = offset{10};
  p.last_stable_offset = offset{10};
  p.records = records::view(batch_bytes);
  r.responses = {{"t", uuid{}, {p}}};
  CHECK(encoded(r, 4) == bytes_of({0, 0, 0, 0, 0, 0, 0, 1,  0, 1, 't', 0, 0, 0, 1, 0,  0, 0, 0, 0, 0,  // partition 0
                                   0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0,   0, 0, 0, 0, 10,                 // hw, lso
                                   0, 0, 0, 0,                                                         // aborted: none
                                   0, 0, 0, 3, 1, 2, 3}));
  r.responses[0].partitions[0].log_start_offset = offset{0};
  r.responses[0].partitions[0].aborted_transactions.reset();
  r.responses[0].partitions[0].diverging_epoch = {leader_epoch{2}, offset{8}};
  CHECK(encoded(r, 12) ==
        bytes_of({0,    0,    0,    0,    0, 0, 0, 0,  0, 0, 2, 2, 't', 2,         // throttle, error, session
                  0,    0,    0,    0,    0, 0,                                    // partition 0, no error
                  0,    0,    0,    0,    0, 0, 0, 10, 0, 0, 0, 0, 0,   0, 0, 10,  // hw, lso
                  0,    0,    0,    0,    0, 0, 0, 0,                              // log start 0
                  0,                                                               // aborted: null
                  0xff, 0xff, 0xff, 0xff,                                          // no preferred replica
                  4,    1,    2,    3,                                             // records
                  1,    0,    13,   0,    0, 0, 2, 0,  0, 0, 0, 0, 0,   0, 8, 0,   // tag 0: diverging epoch 2 at 8
                  0,    0}));                                                      // the topic's and the message's tags
  // The preferred read replica is not ignorable: a follower hint needs v11.
  r.responses[0].partitions[0].diverging_epoch = {};
  CHECK(encoded(r, 10).size() > 0);
  r.responses[0].partitions[0].preferred_read_replica = broker_id{1};
  CHECK(codec::encode(r, 10).error() == errc::unsupported_version);
}

TEST_CASE("Fetch round-trips at every version", "[protocol][fetch]") {
  for (std::int16_t v = 0; v <= 17; ++v) {
    INFO("v" << v);
    auto q = one_partition();
    if (v >= 3) q.max_bytes = 1 << 24;
    if (v >= 4) q.isolation = isolation_level::read_committed;
    if (v >= 7) {
      q.session_id = 12;
      q.session_epoch = 3;
      q.forgotten_topics_data = {{v <= 12 ? "gone" : "", v >= 13 ? topic_uuid : uuid{}, {partition_id{1}}}};
    }
    auto& qp = q.topics[0].partitions[0];
    if (v >= 5) qp.log_start_offset = offset{2};
    if (v >= 9) qp.current_leader_epoch = leader_epoch{6};
    if (v >= 11) q.rack_id = "rack-a";
    if (v >= 12) {
      qp.last_fetched_epoch = leader_epoch{5};
      q.cluster_id = "cluster";
    }
    if (v >= 13) q.topics[0].topic.clear(), q.topics[0].topic_id = topic_uuid;
    if (v >= 15) q.replica_id = broker_id{-1}, q.replica_state = {broker_id{2}, 9};
    if (v >= 17) qp.replica_directory_id = uuid::from_parts(1, 2);
    check_round_trip(q, v);

    fetch_response r;
    if (v >= 1) r.throttle_time_ms = 1;
    if (v >= 7) r.error_code = 0, r.session_id = 12;
    fetch_response_partition p;
    p.partition_index = partition_id{3};
    p.high_watermark = offset{100};
    p.records = records::view(batch_bytes);
    if (v >= 4) p.last_stable_offset = offset{90}, p.aborted_transactions = {{{77, offset{80}}}};
    if (v >= 5) p.log_start_offset = offset{1};
    if (v >= 11) p.preferred_read_replica = broker_id{-1};
    if (v >= 12) {
      p.current_leader = {broker_id{1}, leader_epoch{3}};
      p.snapshot_id = {offset{50}, 2};
    }
    fetch_response_partition empty;
    empty.partition_index = partition_id{4};
    empty.error_code = 1;  // OFFSET_OUT_OF_RANGE: records empty
    empty.records = records::view({});
    r.responses = {{v <= 12 ? "t" : "", v >= 13 ? topic_uuid : uuid{}, {p, empty}}};
    if (v >= 16) r.node_endpoints = {{broker_id{1}, "h", 9092, std::nullopt}};
    check_round_trip(r, v);
  }
}

TEST_CASE("Fetch refuses a topic count that cannot fit and records that run past the end", "[protocol][fetch]") {
  auto lying = codec::decode<fetch_request>(
      bytes_of({0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0x10, 0, 0, 0}), 4);
  REQUIRE_FALSE(lying);
  CHECK(lying.error() == errc::corrupt_message);
  CHECK_THAT(lying.error().message(), Catch::Contains("Topics"));

  fetch_response r;
  fetch_response_partition p;
  p.records = records::view(batch_bytes);
  r.responses = {{"t", uuid{}, {p}}};
  auto bytes = encoded(r, 12);
  bytes.resize(bytes.size() - 5);  // cut inside the records
  auto cut = codec::decode<fetch_response>(bytes, 12);
  REQUIRE_FALSE(cut);
  CHECK(cut.error() == errc::corrupt_message);
  CHECK_THAT(cut.error().message(), Catch::Contains("Responses.Partitions.Records"));
}

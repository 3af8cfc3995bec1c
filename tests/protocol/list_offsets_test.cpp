#include <catch2/catch.hpp>

#include <brook/protocol/list_offsets.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("ListOffsets byte for byte: v0 old-style offsets and v1 and flexible v6", "[protocol][list_offsets]") {
  list_offsets_request q;
  q.replica_id = broker_id{-1};
  q.topics = {{"t", {{partition_id{2}, leader_epoch{-1}, earliest_timestamp}}}};
  CHECK(encoded(q, 0) == bytes_of({0xff, 0xff, 0xff, 0xff, 0,    0,    0,    1,    0,    1,    't',  0, 0, 0, 1, 0,
                                   0,    0,    2,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 1}));
  CHECK(encoded(q, 1) == bytes_of({0xff, 0xff, 0xff, 0xff, 0, 0,    0,    1,    0,    1,    't',  0,    0,   0,
                                   1,    0,    0,    0,    2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}));
  q.isolation = isolation_level::read_committed;
  q.topics[0].partitions[0].current_leader_epoch = leader_epoch{3};
  CHECK(encoded(q, 6) == bytes_of({0xff, 0xff, 0xff, 0xff, 1,    2,    2,    't',  2,    0,    0,    0, 2, 0,
                                   0,    0,    3,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0}));
  CHECK(codec::encode(q, 1).error() == errc::unsupported_version);  // read_committed needs v2

  list_offsets_response r;
  list_offsets_response_partition p;
  p.partition_index = partition_id{2};
  p.old_style_offsets = {offset{5}};
  r.topics = {{"t", {p}}};
  CHECK(encoded(r, 0) ==
        bytes_of({0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5}));
  CHECK(codec::encode(r, 1).error() == errc::unsupported_version);  // old-style offsets are v0 only
  p.old_style_offsets.clear();
  p.timestamp = 1000;
  p.offset_value = offset{5};
  r.topics[0].partitions[0] = p;
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 1, 0, 1, 't', 0,    0, 0, 1, 0, 0, 0, 2,  // topic t, partition 2
                                   0, 0,                                              // error
                                   0, 0, 0, 0, 0, 0, 3,   0xe8,                       // timestamp 1000
                                   0, 0, 0, 0, 0, 0, 0,   5}));                       // offset 5
}

TEST_CASE("ListOffsets round-trips at every version", "[protocol][list_offsets]") {
  for (std::int16_t v = 0; v <= 10; ++v) {
    INFO("v" << v);
    list_offsets_request q;
    q.replica_id = broker_id{-1};
    if (v >= 2) q.isolation = isolation_level::read_committed;
    list_offsets_request_partition qp{partition_id{1}, leader_epoch{-1}, 1'700'000'000'000};
    if (v >= 4) qp.current_leader_epoch = leader_epoch{4};
    if (v == 0) qp.max_num_offsets = 10;
    q.topics = {{"a", {qp, {partition_id{2}, leader_epoch{-1}, max_timestamp}}}, {"b", {}}};
    if (v >= 10) q.timeout_ms = 30'000;
    check_round_trip(q, v);

    list_offsets_response r;
    if (v >= 2) r.throttle_time_ms = 3;
    list_offsets_response_partition rp;
    rp.partition_index = partition_id{1};
    rp.error_code = 1;
    if (v == 0) rp.old_style_offsets = {offset{9}, offset{0}};
    if (v >= 1) rp.timestamp = 12, rp.offset_value = offset{9};
    if (v >= 4) rp.leader_epoch_value = leader_epoch{2};
    r.topics = {{"a", {rp}}};
    check_round_trip(r, v);
  }
}

TEST_CASE("ListOffsets refuses a partition count that cannot fit", "[protocol][list_offsets]") {
  auto lying = codec::decode<list_offsets_request>(bytes_of({0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 1, 0, 0}), 1);
  REQUIRE_FALSE(lying);
  CHECK(lying.error() == errc::corrupt_message);
  CHECK_THAT(lying.error().message(), Catch::Contains("Topics.Partitions"));
}

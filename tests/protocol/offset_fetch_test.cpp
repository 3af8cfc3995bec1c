#include <catch2/catch.hpp>

#include <brook/protocol/offset_fetch.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("OffsetFetch request byte for byte: one group v0 v2 v6 v7 and many groups v8 v9",
          "[protocol][offset_fetch]") {
  offset_fetch_request q;
  q.group_id = "g";
  q.topics = std::vector<offset_fetch_request_topic>{{"t", {partition_id{1}, partition_id{2}}}};
  // GroupId | Topics [Name | PartitionIndexes [int32]]
  CHECK(encoded(q, 0) == bytes_of({0, 1, 'g', 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2}));
  // Compact strings and arrays; each struct ends with its (empty) tagged fields.
  CHECK(encoded(q, 6) == bytes_of({2, 'g', 2, 2, 't', 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0}));
  q.require_stable = true;
  auto v6 = codec::encode(q, 6);  // RequireStable is not ignorable
  REQUIRE_FALSE(v6);
  CHECK(v6.error() == errc::unsupported_version);
  CHECK_THAT(v6.error().message(), Catch::Contains("RequireStable"));
  // v7: + RequireStable last
  CHECK(encoded(q, 7) == bytes_of({2, 'g', 2, 2, 't', 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 0}));
  q.require_stable = false;
  q.topics = std::nullopt;  // every topic: v2+
  CHECK(encoded(q, 2) == bytes_of({0, 1, 'g', 0xff, 0xff, 0xff, 0xff}));
  CHECK(encoded(q, 6) == bytes_of({2, 'g', 0, 0}));
  auto v1 = codec::encode(q, 1);
  REQUIRE_FALSE(v1);
  CHECK(v1.error() == errc::invalid_request);
  auto one_group_v8 = codec::encode(q, 8);  // GroupId and Topics end with v7
  REQUIRE_FALSE(one_group_v8);
  CHECK(one_group_v8.error() == errc::unsupported_version);

  offset_fetch_request many;
  offset_fetch_request_group g;
  g.group_id = "g";
  g.member_id = "m";   // ignorable: dropped before v9
  g.member_epoch = 5;  // ignorable: dropped before v9
  g.topics = std::vector<offset_fetch_request_topics>{{"t", {partition_id{1}}}};
  offset_fetch_request_group h;
  h.group_id = "h";
  h.topics = std::nullopt;  // every topic of h
  many.groups = {g, h};
  many.require_stable = true;
  // Groups [GroupId | Topics [Name | PartitionIndexes]] | RequireStable
  CHECK(encoded(many, 8) == bytes_of({3, 2, 'g', 2, 2, 't', 2, 0, 0, 0, 1, 0, 0, 2, 'h', 0, 0, 1, 0}));
  // v9: + MemberId | MemberEpoch after each GroupId
  CHECK(encoded(many, 9) == bytes_of({3, 2, 'g', 2, 'm', 0,   0, 0,    5,    2,    2,    't', 2, 0, 0,
                                      0, 1, 0,   0, 2,   'h', 0, 0xff, 0xff, 0xff, 0xff, 0,   0, 1, 0}));
  auto v7 = codec::encode(many, 7);  // Groups needs v8
  REQUIRE_FALSE(v7);
  CHECK(v7.error() == errc::unsupported_version);
  CHECK_THAT(v7.error().message(), Catch::Contains("Groups"));
}

TEST_CASE("OffsetFetch response byte for byte: one group v0 v2 v3 v5 v6 and many groups v8",
          "[protocol][offset_fetch]") {
  offset_fetch_response_partition p;
  p.partition_index = partition_id{1};
  p.committed_offset = offset{5};
  p.committed_leader_epoch = leader_epoch{3};  // ignorable: only v5-7
  p.metadata = "x";
  offset_fetch_response r;
  r.throttle_time_ms = 4;  // ignorable: v3+
  r.topics = {{"t", {p}}};
  r.error_code = 16;  // NOT_COORDINATOR; ignorable: v2-7
  // Topics [Name | Partitions [PartitionIndex | CommittedOffset | Metadata | ErrorCode]]
  CHECK(encoded(r, 0) ==
        bytes_of({0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 'x', 0, 0}));
  // v2: + the top-level ErrorCode
  CHECK(encoded(r, 2) ==
        bytes_of({0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 'x', 0, 0, 0, 16}));
  // v3: + ThrottleTimeMs first
  CHECK(encoded(r, 3) == bytes_of({0, 0, 0, 4, 0, 0, 0, 1, 0, 1, 't', 0, 0,   0, 1, 0, 0,
                                   0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0,   1, 'x', 0, 0, 0, 16}));
  // v5: + CommittedLeaderEpoch after CommittedOffset
  CHECK(encoded(r, 5) == bytes_of({0, 0, 0, 4, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1,   0, 0, 0, 1,
                                   0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0,   3, 0, 1, 'x', 0, 0, 0, 16}));
  CHECK(encoded(r, 6) == bytes_of({0, 0, 0, 4, 2, 2, 't', 2, 0,   0, 0, 1, 0, 0, 0,  0, 0,
                                   0, 0, 5, 0, 0, 0, 3,   2, 'x', 0, 0, 0, 0, 0, 16, 0}));
  auto v8 = codec::encode(r, 8);  // the single-group Topics end with v7
  REQUIRE_FALSE(v8);
  CHECK(v8.error() == errc::unsupported_version);
  CHECK_THAT(v8.error().message(), Catch::Contains("Topics"));

  offset_fetch_response_partitions q;
  q.partition_index = partition_id{1};
  q.committed_offset = offset{5};
  q.committed_leader_epoch = leader_epoch{3};
  q.metadata = std::nullopt;
  q.error_code = 0;
  offset_fetch_response many;
  many.throttle_time_ms = 4;
  many.error_code = 16;  // ignorable: dropped in v8
  many.groups = {{"g", {{"t", {q}}}, 16}};
  // ThrottleTimeMs | Groups [GroupId | Topics [Name | Partitions [PartitionIndex | CommittedOffset
  // | CommittedLeaderEpoch | Metadata | ErrorCode]] | ErrorCode]
  CHECK(encoded(many, 8) == bytes_of({0, 0, 0, 4, 2, 2, 'g', 2, 2, 't', 2, 0, 0, 0, 1, 0,  0, 0,
                                      0, 0, 0, 0, 5, 0, 0,   0, 3, 0,   0, 0, 0, 0, 0, 16, 0, 0}));
  auto v7 = codec::encode(many, 7);
  REQUIRE_FALSE(v7);
  CHECK(v7.error() == errc::unsupported_version);
}

TEST_CASE("OffsetFetch round-trips at every version", "[protocol][offset_fetch]") {
  for (std::int16_t v = 0; v <= 9; ++v) {
    INFO("v" << v);
    offset_fetch_request q;
    offset_fetch_response r;
    if (v <= 7) {
      q.group_id = "group";
      q.topics = std::vector<offset_fetch_request_topic>{{"orders", {partition_id{0}, partition_id{3}}}, {"audit", {}}};
      offset_fetch_response_partition a;
      a.partition_index = partition_id{0};
      a.committed_offset = offset{1234567890123};
      a.metadata = "meta";
      offset_fetch_response_partition b;
      b.partition_index = partition_id{3};
      b.committed_offset = offset{-1};
      b.metadata = std::nullopt;
      b.error_code = 3;
      if (v >= 5) a.committed_leader_epoch = leader_epoch{9};
      r.topics = {{"orders", {a, b}}};
      if (v >= 2) r.error_code = 14;
    } else {
      offset_fetch_request_group one;
      one.group_id = "group-a";
      one.topics = std::vector<offset_fetch_request_topics>{{"orders", {partition_id{0}}}};
      offset_fetch_request_group all;
      all.group_id = "group-b";
      all.topics = std::nullopt;
      if (v >= 9) {
        one.member_id = "member-1";
        one.member_epoch = 12;
      }
      q.groups = {one, all};
      offset_fetch_response_partitions a;
      a.partition_index = partition_id{0};
      a.committed_offset = offset{77};
      a.committed_leader_epoch = leader_epoch{2};
      a.metadata = std::nullopt;
      r.groups = {{"group-a", {{"orders", {a}}}, 0}, {"group-b", {}, 15}};
    }
    if (v >= 3) r.throttle_time_ms = 6;
    if (v >= 7) q.require_stable = true;
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
  offset_fetch_request every;
  every.group_id = "group";
  every.topics = std::nullopt;
  check_round_trip(every, 2);
  check_round_trip(every, 7);
}

TEST_CASE("OffsetFetch refuses lying counts and nulls", "[protocol][offset_fetch]") {
  // v0 request: PartitionIndexes claims 4 and holds 1.
  auto indexes =
      codec::decode<offset_fetch_request>(bytes_of({0, 1, 'g', 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 4, 0, 0, 0, 1}), 0);
  REQUIRE_FALSE(indexes);
  CHECK(indexes.error() == errc::corrupt_message);
  CHECK_THAT(indexes.error().message(), Catch::Contains("PartitionIndexes"));
  // v1 request: a null Topics array before v2.
  auto null_topics = codec::decode<offset_fetch_request>(bytes_of({0, 1, 'g', 0xff, 0xff, 0xff, 0xff}), 1);
  REQUIRE_FALSE(null_topics);
  CHECK(null_topics.error() == errc::corrupt_message);
  CHECK_THAT(null_topics.error().message(), Catch::Contains("Topics"));
  // v8 response: Groups claims 100 and holds none.
  auto groups = codec::decode<offset_fetch_response>(bytes_of({0, 0, 0, 0, 101, 0}), 8);
  REQUIRE_FALSE(groups);
  CHECK(groups.error() == errc::corrupt_message);
  CHECK_THAT(groups.error().message(), Catch::Contains("Groups"));
}

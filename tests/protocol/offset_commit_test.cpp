#include <catch2/catch.hpp>

#include <brook/protocol/offset_commit.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("OffsetCommit request byte for byte: v0 v1 v2 v5 v6 v7 and flexible v8", "[protocol][offset_commit]") {
  offset_commit_request q;
  q.group_id = "g";
  q.generation_id_or_member_epoch = generation_id{2};  // ignorable: dropped in v0
  q.member_id = "m";                                   // ignorable: dropped in v0
  q.retention_time_ms = 100;                           // ignorable: only v2-4
  offset_commit_request_partition p;
  p.partition_index = partition_id{1};
  p.committed_offset = offset{5};
  p.committed_leader_epoch = leader_epoch{3};  // ignorable: only v6+
  p.committed_metadata = "x";
  q.topics = {{"t", {p}}};
  // GroupId | Topics [Name | Partitions [PartitionIndex | CommittedOffset | CommittedMetadata]]
  CHECK(encoded(q, 0) ==
        bytes_of({0, 1, 'g', 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 'x'}));
  // v1: + GenerationIdOrMemberEpoch | MemberId, and CommitTimestamp before CommittedMetadata
  q.topics[0].partitions[0].commit_timestamp = 7;
  CHECK(encoded(q, 1) == bytes_of({0, 1, 'g', 0, 0, 0, 2, 0, 1, 'm', 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0,
                                   0, 0, 1,   0, 0, 0, 0, 0, 0, 0,   5, 0, 0, 0, 0, 0, 0,   0, 7, 0, 1, 'x'}));
  auto v2 = codec::encode(q, 2);  // CommitTimestamp exists only in v1 and is not ignorable
  REQUIRE_FALSE(v2);
  CHECK(v2.error() == errc::unsupported_version);
  CHECK_THAT(v2.error().message(), Catch::Contains("CommitTimestamp"));
  q.topics[0].partitions[0].commit_timestamp = -1;
  // v2-4: RetentionTimeMs after MemberId; no CommitTimestamp
  CHECK(encoded(q, 2) == bytes_of({0, 1, 'g', 0, 0, 0, 2, 0, 1, 'm', 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 1,
                                   0, 1, 't', 0, 0, 0, 1, 0, 0, 0,   1, 0, 0, 0, 0, 0, 0, 0,   5, 0, 1, 'x'}));
  // v5: RetentionTimeMs is gone
  CHECK(encoded(q, 5) == bytes_of({0, 1, 'g', 0, 0, 0, 2, 0, 1, 'm', 0, 0, 0, 1, 0, 1, 't', 0,
                                   0, 0, 1,   0, 0, 0, 1, 0, 0, 0,   0, 0, 0, 0, 5, 0, 1,   'x'}));
  // v6: + CommittedLeaderEpoch after CommittedOffset
  CHECK(encoded(q, 6) == bytes_of({0, 1, 'g', 0, 0, 0, 2, 0, 1, 'm', 0, 0, 0, 1, 0, 1, 't', 0, 0, 0,
                                   1, 0, 0,   0, 1, 0, 0, 0, 0, 0,   0, 0, 5, 0, 0, 0, 3,   0, 1, 'x'}));
  // v7: + GroupInstanceId (null) after MemberId
  CHECK(encoded(q, 7) == bytes_of({0, 1, 'g', 0, 0, 0, 2, 0, 1, 'm', 0xff, 0xff, 0, 0, 0, 1, 0, 1, 't', 0, 0,
                                   0, 1, 0,   0, 0, 1, 0, 0, 0, 0,   0,    0,    0, 5, 0, 0, 0, 3, 0,   1, 'x'}));
  q.group_instance_id = "i";
  // Compact strings and arrays; each struct ends with its (empty) tagged fields.
  CHECK(encoded(q, 8) == bytes_of({2, 'g', 0, 0, 0, 2, 2, 'm', 2, 'i', 2, 2, 't', 2,   0, 0, 0, 1,
                                   0, 0,   0, 0, 0, 0, 0, 5,   0, 0,   0, 3, 2,   'x', 0, 0, 0}));
  q.topics[0].partitions[0].committed_metadata = std::nullopt;  // nullable in every version
  CHECK(encoded(q, 9) == bytes_of({2, 'g', 0, 0, 0, 2, 2, 'm', 2, 'i', 2, 2, 't', 2, 0, 0, 0,
                                   1, 0,   0, 0, 0, 0, 0, 0,   5, 0,   0, 0, 3,   0, 0, 0, 0}));
}

TEST_CASE("OffsetCommit response byte for byte: v0 v3 and flexible v8", "[protocol][offset_commit]") {
  offset_commit_response r{4, {{"t", {{partition_id{1}, 25}}}}};  // UNKNOWN_MEMBER_ID
  // Topics [Name | Partitions [PartitionIndex | ErrorCode]]
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 1, 0, 25}));
  // v3: + ThrottleTimeMs first
  CHECK(encoded(r, 3) == bytes_of({0, 0, 0, 4, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 1, 0, 25}));
  CHECK(encoded(r, 8) == bytes_of({0, 0, 0, 4, 2, 2, 't', 2, 0, 0, 0, 1, 0, 25, 0, 0, 0}));
}

TEST_CASE("OffsetCommit round-trips at every version", "[protocol][offset_commit]") {
  for (std::int16_t v = 0; v <= 9; ++v) {
    INFO("v" << v);
    offset_commit_request q;
    q.group_id = "group";
    offset_commit_request_partition a;
    a.partition_index = partition_id{0};
    a.committed_offset = offset{1234567890123};
    a.committed_metadata = "meta";
    offset_commit_request_partition b;
    b.partition_index = partition_id{7};
    b.committed_offset = offset{42};
    b.committed_metadata = std::nullopt;
    q.topics = {{"orders", {a, b}}, {"audit", {}}};
    offset_commit_response r{0, {{"orders", {{partition_id{0}, 0}, {partition_id{7}, 22}}}, {"audit", {}}}};
    if (v >= 1) {
      q.generation_id_or_member_epoch = generation_id{v + 1};
      q.member_id = "member-1";
    }
    if (v == 1) q.topics[0].partitions[0].commit_timestamp = 1700000000000;
    if (v >= 2 && v <= 4) q.retention_time_ms = 86400000;
    if (v >= 3) r.throttle_time_ms = 8;
    if (v >= 6) q.topics[0].partitions[1].committed_leader_epoch = leader_epoch{5};
    if (v >= 7) q.group_instance_id = "static-1";
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
}

TEST_CASE("OffsetCommit refuses lying counts and fields a version lacks", "[protocol][offset_commit]") {
  // v0 response: one topic "t" whose Partitions count (3) outruns the bytes.
  auto parts =
      codec::decode<offset_commit_response>(bytes_of({0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 3, 0, 0, 0, 1, 0, 0}), 0);
  REQUIRE_FALSE(parts);
  CHECK(parts.error() == errc::corrupt_message);
  CHECK_THAT(parts.error().message(), Catch::Contains("Partitions"));
  // v0 request: CommittedMetadata claims 9 bytes and has 1.
  auto meta = codec::decode<offset_commit_request>(
      bytes_of({0, 1, 'g', 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 9, 'x'}), 0);
  REQUIRE_FALSE(meta);
  CHECK(meta.error() == errc::corrupt_message);
  CHECK_THAT(meta.error().message(), Catch::Contains("CommittedMetadata"));
  // A static member's commit needs v7.
  offset_commit_request q;
  q.group_id = "g";
  q.group_instance_id = "i";
  auto v6 = codec::encode(q, 6);
  REQUIRE_FALSE(v6);
  CHECK(v6.error() == errc::unsupported_version);
  CHECK_THAT(v6.error().message(), Catch::Contains("GroupInstanceId"));
}

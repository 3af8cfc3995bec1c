#include <catch2/catch.hpp>

#include <brook/protocol/create_topics.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

namespace {
create_topics_request one_topic() {
  create_topics_request q;
  create_topics_request_topic t;
  t.name = "t";
  t.num_partitions = -1;
  t.replication_factor = -1;
  t.assignments = {{partition_id{0}, {broker_id{1}}}};
  t.configs = {{"k", "v"}};
  q.topics = {t};
  return q;
}
}  // namespace

TEST_CASE("CreateTopics requests byte for byte: v0 v1 and flexible v5", "[protocol][create_topics]") {
  auto q = one_topic();
  // Topics [Name | NumPartitions | ReplicationFactor | Assignments [PartitionIndex | BrokerIds]
  // | Configs [Name | Value]] | timeoutMs (default 60000 = 0xea60)
  CHECK(encoded(q, 0) ==
        bytes_of({0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,   0, 0, 1,   0, 0, 0,    0,   0,
                  0, 0, 1, 0, 0, 0, 1,   0,    0,    0,    1,    0,    1,    'k', 0, 1, 'v', 0, 0, 0xea, 0x60}));
  q.validate_only = true;
  auto v0 = codec::encode(q, 0);  // validateOnly (v1+) is not ignorable
  REQUIRE_FALSE(v0);
  CHECK(v0.error() == errc::unsupported_version);
  CHECK(encoded(q, 1) ==
        bytes_of({0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,   0, 0, 1,   0, 0, 0,    0,    0,
                  0, 0, 1, 0, 0, 0, 1,   0,    0,    0,    1,    0,    1,    'k', 0, 1, 'v', 0, 0, 0xea, 0x60, 1}));
  // Compact arrays and strings; every struct ends with an empty tagged section.
  CHECK(encoded(q, 5) == bytes_of({2, 2, 't', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0,    0,    2, 0, 0,
                                   0, 1, 0,   2,    2,    'k',  2,    'v',  0,    0, 0, 0, 0xea, 0x60, 1, 0}));
  // A null config value: int16 -1 classic, 0 compact.
  q.topics[0].assignments.clear();
  q.topics[0].configs[0].value.reset();
  q.validate_only = false;
  CHECK(encoded(q, 0) == bytes_of({0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,    0,
                                   0, 0, 0, 0, 0, 1, 0,   1,    'k',  0xff, 0xff, 0,    0,    0xea, 0x60}));
  CHECK(encoded(q, 7) ==
        bytes_of({2, 2, 't', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 2, 'k', 0, 0, 0, 0, 0, 0xea, 0x60, 0, 0}));
}

TEST_CASE("CreateTopics responses byte for byte: v0 v1 v2 and flexible v5 v6 v7", "[protocol][create_topics]") {
  create_topics_response r;
  r.throttle_time_ms = 5;
  create_topics_response_topic t;
  t.name = "t";
  t.error_code = 36;  // TOPIC_ALREADY_EXISTS
  t.error_message = "x";
  r.topics = {t};
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 1, 0, 1, 't', 0, 36}));  // throttle and message are ignorable
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 1, 0, 1, 't', 0, 36, 0, 1, 'x'}));
  CHECK(encoded(r, 2) == bytes_of({0, 0, 0, 5, 0, 0, 0, 1, 0, 1, 't', 0, 36, 0, 1, 'x'}));
  // v5: NumPartitions and ReplicationFactor at their default -1, Configs empty (not null).
  CHECK(encoded(r, 5) == bytes_of({0, 0, 0, 5, 2, 2, 't', 0, 36, 2, 'x', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0, 0}));
  // The tagged TopicConfigErrorCode (tag 0) follows every other field of the topic.
  r.topics[0].topic_config_error_code = 29;  // TOPIC_AUTHORIZATION_FAILED
  r.topics[0].num_partitions = 3;
  r.topics[0].replication_factor = 2;
  r.topics[0].configs.reset();
  CHECK(encoded(r, 6) == bytes_of({0, 0, 0, 5, 2, 2, 't', 0, 36, 2, 'x', 0, 0, 0, 3, 0, 2, 0, 1, 0, 2, 0, 29, 0}));
  CHECK(encoded(r, 4) == encoded(r, 2));  // everything v5+ is ignorable
  // v7 adds the topic id after the name.
  r.topics[0] = create_topics_response_topic{};
  r.topics[0].name = "t";
  r.topics[0].topic_id = uuid::from_parts(0x0102030405060708ULL, 0x090a0b0c0d0e0f10ULL);
  r.topics[0].error_message.reset();
  r.topics[0].num_partitions = 3;
  r.topics[0].replication_factor = 2;
  r.topics[0].configs = std::vector<create_topics_response_config>{{"k", std::nullopt, true, 5, false}};
  CHECK(encoded(r, 7) == bytes_of({0,  0,  0, 5, 2, 2, 't', 1, 2, 3, 4, 5, 6, 7,   8, 9, 10, 11, 12, 13, 14,
                                   15, 16, 0, 0, 0, 0, 0,   0, 3, 0, 2, 2, 2, 'k', 0, 1, 5,  0,  0,  0,  0}));
}

TEST_CASE("CreateTopics round-trips at every version", "[protocol][create_topics]") {
  for (std::int16_t v = 0; v <= 7; ++v) {
    INFO("v" << v);
    create_topics_request q;
    create_topics_request_topic manual;
    manual.name = "manual";
    manual.num_partitions = -1;
    manual.replication_factor = -1;
    manual.assignments = {{partition_id{0}, {broker_id{1}, broker_id{2}}}, {partition_id{1}, {broker_id{2}}}};
    create_topics_request_topic sized;
    sized.name = "sized";
    sized.num_partitions = 12;
    sized.replication_factor = 3;
    sized.configs = {{"cleanup.policy", "compact"}, {"retention.ms", std::nullopt}};
    q.topics = {manual, sized};
    q.timeout_ms = 30000 + v;
    if (v >= 1) q.validate_only = true;
    check_round_trip(q, v);

    create_topics_response r;
    if (v >= 2) r.throttle_time_ms = 100 + v;
    create_topics_response_topic ok_topic;
    ok_topic.name = "sized";
    create_topics_response_topic failed;
    failed.name = "manual";
    failed.error_code = 38;  // INVALID_REPLICATION_FACTOR
    if (v >= 1) {
      ok_topic.error_message.reset();
      failed.error_message = "bad replicas";
    }
    if (v >= 5) {
      ok_topic.num_partitions = 12;
      ok_topic.replication_factor = 3;
      ok_topic.configs = std::vector<create_topics_response_config>{{"cleanup.policy", "compact", false, 1, false},
                                                                    {"password", std::nullopt, true, 5, true}};
      failed.topic_config_error_code = 29;
      failed.configs.reset();
    }
    if (v >= 7) ok_topic.topic_id = uuid::from_parts(0xfeedULL + static_cast<std::uint64_t>(v), 42);
    r.topics = {ok_topic, failed};
    check_round_trip(r, v);
  }
}

TEST_CASE("CreateTopics refuses lying counts and lengths", "[protocol][create_topics]") {
  // A topic count far beyond the bytes present.
  auto topics = codec::decode<create_topics_request>(bytes_of({0x7f, 0xff, 0xff, 0xff, 0, 0, 0xea, 0x60}), 0);
  REQUIRE_FALSE(topics);
  CHECK(topics.error() == errc::corrupt_message);
  CHECK_THAT(topics.error().message(), Catch::Contains("Topics"));
  // v5: a compact BrokerIds count of 15 with one id present.
  auto brokers = codec::decode<create_topics_request>(
      bytes_of({2,  2, 't', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0,    0,    0, 0,
                16, 0, 0,   0,    1,    0,    1,    1,    0,    0, 0xea, 0x60, 0, 0}),
      5);
  REQUIRE_FALSE(brokers);
  CHECK(brokers.error() == errc::corrupt_message);
  CHECK_THAT(brokers.error().message(), Catch::Contains("BrokerIds"));
  // A topic name claiming 5 bytes with 1 present.
  auto name = codec::decode<create_topics_response>(bytes_of({0, 0, 0, 1, 0, 5, 't', 0, 0}), 0);
  REQUIRE_FALSE(name);
  CHECK(name.error() == errc::corrupt_message);
  CHECK_THAT(name.error().message(), Catch::Contains("Name"));
  // The tagged TopicConfigErrorCode declared as one byte: an int16 cannot fit.
  auto tagged = codec::decode<create_topics_response>(
      bytes_of({0, 0, 0, 0, 2, 2, 't', 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 1, 0, 1, 29, 0}), 5);
  REQUIRE_FALSE(tagged);
  CHECK(tagged.error() == errc::corrupt_message);
  CHECK_THAT(tagged.error().message(), Catch::Contains("TopicConfigErrorCode"));
  // A null topic name: Name is never nullable.
  auto null_name = codec::decode<create_topics_response>(bytes_of({0, 0, 0, 1, 0xff, 0xff, 0, 0}), 0);
  REQUIRE_FALSE(null_name);
  CHECK(null_name.error() == errc::corrupt_message);
  CHECK_THAT(null_name.error().message(), Catch::Contains("Name"));
}

#include <catch2/catch.hpp>

#include <brook/protocol/delete_topics.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

namespace {
const uuid id_a = uuid::from_parts(0x0102030405060708ULL, 0x090a0b0c0d0e0f10ULL);
const uuid id_b = uuid::from_parts(0, 42);
}  // namespace

TEST_CASE("DeleteTopics requests byte for byte: names (v0-5) and states (v6)", "[protocol][delete_topics]") {
  delete_topics_request q;
  q.topic_names = {"a", "b"};
  q.timeout_ms = 1000;  // 0x3e8
  CHECK(encoded(q, 0) == bytes_of({0, 0, 0, 2, 0, 1, 'a', 0, 1, 'b', 0, 0, 3, 0xe8}));
  CHECK(encoded(q, 3) == encoded(q, 0));
  CHECK(encoded(q, 4) == bytes_of({3, 2, 'a', 2, 'b', 0, 0, 3, 0xe8, 0}));
  CHECK(encoded(q, 5) == encoded(q, 4));
  // TopicNames is ignorable: v6 drops it and sends an empty Topics.
  CHECK(encoded(q, 6) == bytes_of({1, 0, 0, 3, 0xe8, 0}));
  q.topic_names.clear();
  q.topics = {{"a", id_a}, {std::nullopt, id_b}};
  CHECK(encoded(q, 6) == bytes_of({3, 2, 'a', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0,    0, 0,
                                   0, 0, 0,   0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  42, 0,  0,  0,  3,  0xe8, 0}));
  // Topics is not ignorable: v5 cannot carry it.
  auto v5 = codec::encode(q, 5);
  REQUIRE_FALSE(v5);
  CHECK(v5.error() == errc::unsupported_version);
  CHECK_THAT(v5.error().message(), Catch::Contains("Topics"));
}

TEST_CASE("DeleteTopics responses byte for byte: v0 v1 and flexible v4 v5 v6", "[protocol][delete_topics]") {
  delete_topics_response r;
  r.throttle_time_ms = 7;
  delete_topics_response_topic t;
  t.name = "a";
  t.error_code = 3;  // UNKNOWN_TOPIC_OR_PARTITION
  r.responses = {t};
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 1, 0, 1, 'a', 0, 3}));
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 7, 0, 0, 0, 1, 0, 1, 'a', 0, 3}));
  CHECK(encoded(r, 4) == bytes_of({0, 0, 0, 7, 2, 2, 'a', 0, 3, 0, 0}));
  CHECK(encoded(r, 5) == bytes_of({0, 0, 0, 7, 2, 2, 'a', 0, 3, 0, 0, 0}));  // ErrorMessage null
  r.responses[0].error_message = "no";
  CHECK(encoded(r, 5) == bytes_of({0, 0, 0, 7, 2, 2, 'a', 0, 3, 3, 'n', 'o', 0, 0}));
  CHECK(encoded(r, 4) == bytes_of({0, 0, 0, 7, 2, 2, 'a', 0, 3, 0, 0}));  // ignorable before v5
  // v6: a topic deleted by id, its name unknown.
  r.responses[0] = {std::nullopt, id_a, 100, std::nullopt};  // UNKNOWN_TOPIC_ID
  CHECK(encoded(r, 6) ==
        bytes_of({0, 0, 0, 7, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 100, 0, 0, 0}));
  auto null_name = codec::encode(r, 5);  // Name is nullable only from v6
  REQUIRE_FALSE(null_name);
  CHECK(null_name.error() == errc::invalid_request);
}

TEST_CASE("DeleteTopics round-trips at every version", "[protocol][delete_topics]") {
  for (std::int16_t v = 0; v <= 6; ++v) {
    INFO("v" << v);
    delete_topics_request q;
    q.timeout_ms = 15000 + v;
    if (v <= 5) {
      q.topic_names = {"orders", "payments", ""};
    } else {
      q.topics = {{"orders", uuid{}}, {std::nullopt, id_a}, {"payments", id_b}};
    }
    check_round_trip(q, v);

    delete_topics_response r;
    if (v >= 1) r.throttle_time_ms = 50 + v;
    delete_topics_response_topic gone;
    gone.name = "orders";
    delete_topics_response_topic refused;
    refused.name = "payments";
    refused.error_code = 73;  // TOPIC_DELETION_DISABLED
    if (v >= 5) refused.error_message = "deletion is disabled";
    if (v >= 6) {
      gone.topic_id = id_b;
      refused.topic_id = id_a;
      refused.name.reset();
    }
    r.responses = {gone, refused};
    check_round_trip(r, v);
  }
}

TEST_CASE("DeleteTopics refuses lying counts and short ids", "[protocol][delete_topics]") {
  auto names = codec::decode<delete_topics_request>(bytes_of({0, 0, 0, 9, 0, 1, 'a', 0, 0, 3, 0xe8}), 0);
  REQUIRE_FALSE(names);
  CHECK(names.error() == errc::corrupt_message);
  CHECK_THAT(names.error().message(), Catch::Contains("TopicNames"));
  // v6: two topics announced (compact 3), one present.
  auto topics = codec::decode<delete_topics_request>(
      bytes_of({3, 2, 'a', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 3, 0xe8, 0}), 6);
  REQUIRE_FALSE(topics);
  CHECK(topics.error() == errc::corrupt_message);
  CHECK_THAT(topics.error().message(), Catch::Contains("Topics"));
  // A topic id cut short (after a name long enough that the count itself is plausible).
  auto short_id = bytes_of({0, 0, 0, 0, 2, 21});
  short_id.insert(short_id.end(), 20, std::byte{'x'});
  for (int b : {1, 2, 3}) short_id.push_back(static_cast<std::byte>(b));
  auto id = codec::decode<delete_topics_response>(short_id, 6);
  REQUIRE_FALSE(id);
  CHECK(id.error() == errc::corrupt_message);
  CHECK_THAT(id.error().message(), Catch::Contains("TopicId"));
  // A null name in v5, where Name is not nullable.
  auto null_name = codec::decode<delete_topics_response>(bytes_of({0, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0}), 5);
  REQUIRE_FALSE(null_name);
  CHECK(null_name.error() == errc::corrupt_message);
  CHECK_THAT(null_name.error().message(), Catch::Contains("Name"));
}

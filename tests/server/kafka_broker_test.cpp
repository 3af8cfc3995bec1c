// The Kafka broker's handlers, called in-process (support/handler_calls.hpp): each API's
// answers, its errors and the bad input Kafka names, on a node in a temporary directory.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <brook/embedded.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/server/kafka_broker.hpp>

#include "support/broker_fixture.hpp"
#include "support/checks.hpp"
#include "support/handler_calls.hpp"
#include "support/log_builders.hpp"
#include "support/test_codecs.hpp"

using namespace brook;
using namespace brook::protocol;
using namespace brook::server;
using brook::test::call;
using fixture = brook::test::broker_fixture;
using brook::test::make_batch;
using namespace std::chrono_literals;

namespace {

produce_request produce_of(const std::string& topic, std::int32_t partition, const std::vector<std::byte>& batch,
                           std::int16_t acks = -1) {
  produce_request r;
  r.acks = acks;
  r.timeout_ms = 1000;
  r.topic_data.push_back({topic, {{partition_id(partition), records::view(batch)}}});
  return r;
}

fetch_request fetch_of(const std::string& topic, std::int32_t partition, std::int64_t from, std::int32_t max_wait = 0,
                       std::int32_t min_bytes = 1) {
  fetch_request r;
  r.max_wait_ms = max_wait;
  r.min_bytes = min_bytes;
  r.max_bytes = 50 * 1024 * 1024;
  fetch_request_partition p;
  p.partition = partition_id(partition);
  p.fetch_offset = offset(from);
  p.partition_max_bytes = 1024 * 1024;
  r.topics.push_back({topic, {}, {p}});
  return r;
}

std::int16_t code(errc e) { return static_cast<std::int16_t>(e); }

/// The records of a fetched partition, as (offset, value).
std::vector<std::pair<std::int64_t, std::string>> records_in(const fetch_response_partition& p) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  auto bytes = p.records.bytes();
  while (!bytes.empty()) {
    auto v = record_batch_view::parse(bytes);
    REQUIRE_OK(v);
    for (const auto& r : *v) out.emplace_back(r.offset().value(), r.value().to_string());
    bytes = bytes.subspan(v->header().size_bytes());
  }
  return out;
}

}  // namespace

TEST_CASE("ApiVersions lists the served table at every served version", "[server][kafka_broker]") {
  fixture f;
  const auto range = *kafka_broker::apis().find(api_key::api_versions);
  for (std::int16_t v = range.lo; v <= range.hi; ++v) {
    auto r = call(f.b, api_versions_request{}, v);
    REQUIRE_OK(r);
    CHECK(r->error_code == 0);
    CHECK(r->api_keys.size() == kafka_broker::apis().apis().size());
  }
}

TEST_CASE("the served table reaches down to what old clients probe", "[server][kafka_broker]") {
  // librdkafka 2.0.2 gates features on these (KAFKA-PROTOCOL.md 1.1); kafka-python sends
  // Metadata v0 and Fetch v4.
  const auto& t = kafka_broker::apis();
  CHECK(t.serves(api_key::produce, 3));
  CHECK(t.serves(api_key::fetch, 4));
  CHECK(t.serves(api_key::list_offsets, 1));
  CHECK(t.serves(api_key::metadata, 0));
  CHECK(t.serves(api_key::api_versions, 0));
}

TEST_CASE("Metadata lists topics creates unknown ones and names this broker", "[server][kafka_broker]") {
  fixture f;
  f.b.advertise("10.1.2.3", 19092);
  REQUIRE_OK(f.n->create_topic("orders", {.partitions = 3}));

  SECTION("v0 empty and v1+ null mean all topics") {
    metadata_request all0;
    all0.topics = std::vector<metadata_request_topic>{};
    auto r0 = call(f.b, all0, 0);
    REQUIRE_OK(r0);
    metadata_request all1;
    all1.topics = std::nullopt;
    auto r1 = call(f.b, all1, 1);
    REQUIRE_OK(r1);
    for (const auto* r : {&*r0, &*r1}) {
      bool found = false;
      for (const auto& t : r->topics) found = found || (t.name == "orders" && t.partitions.size() == 3);
      CHECK(found);
    }
    // v1+ empty means none.
    metadata_request none;
    auto rn = call(f.b, none, 4);
    REQUIRE_OK(rn);
    CHECK(rn->topics.empty());
    REQUIRE(r1->brokers.size() == 1);
    CHECK(r1->brokers[0].host == "10.1.2.3");
    CHECK(r1->brokers[0].port == 19092);
    CHECK(r1->controller_id == broker_id(0));
  }
  SECTION("an unknown topic is created with num.partitions when allowed") {
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{{{}, std::string("fresh")}};
    auto r = call(f.b, q, 9);
    REQUIRE_OK(r);
    REQUIRE(r->topics.size() == 1);
    CHECK(r->topics[0].error_code == 0);
    CHECK(r->topics[0].partitions.size() == 1);
    CHECK(r->topics[0].partitions[0].leader_id == broker_id(0));
    CHECK(f.n->dir().partition_count("fresh").has_value());
  }
  SECTION("no creation when the request says so") {
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{{{}, std::string("absent")}};
    q.allow_auto_topic_creation = false;
    auto r = call(f.b, q, 4);
    REQUIRE_OK(r);
    CHECK(r->topics[0].error_code == code(errc::unknown_topic_or_partition));
    CHECK_FALSE(f.n->dir().partition_count("absent").has_value());
  }
  SECTION("a bad name is INVALID_TOPIC_EXCEPTION") {
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{{{}, std::string("bad/name")}};
    auto r = call(f.b, q, 4);
    REQUIRE_OK(r);
    CHECK(r->topics[0].error_code == code(errc::invalid_topic));
  }
}

TEST_CASE("Metadata v10+ answers topic ids and v12 finds topics by id", "[server][kafka_broker][topic_id]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("orders", {.partitions = 2}));
  const uuid id = f.n->dir().topic_id("orders").value();
  REQUIRE_FALSE(id.is_zero());
  auto by_name = [](std::initializer_list<const char*> names) {
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{};
    for (const char* n : names) q.topics->push_back({uuid{}, std::string(n)});
    q.allow_auto_topic_creation = false;
    return q;
  };

  SECTION("v10 to v12 by name: the real id, zero with an error; v9 has no ids") {
    for (std::int16_t v = 9; v <= 12; ++v) {
      INFO("v" << v);
      auto r = call(f.b, by_name({"orders", "absent"}), v);
      REQUIRE_OK(r);
      REQUIRE(r->topics.size() == 2);
      CHECK(r->topics[0].error_code == 0);
      CHECK(r->topics[0].topic_id == (v >= 10 ? id : uuid{}));
      CHECK(r->topics[1].error_code == code(errc::unknown_topic_or_partition));
      CHECK(r->topics[1].topic_id == uuid{});
    }
    metadata_request all;
    all.topics = std::nullopt;
    auto r = call(f.b, all, 12);
    REQUIRE_OK(r);
    bool found = false;
    for (const auto& t : r->topics) {
      CHECK_FALSE(t.topic_id.is_zero());
      found = found || (t.name == "orders" && t.topic_id == id);
    }
    CHECK(found);
  }
  SECTION("an auto-created topic is answered with its new id") {
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{{uuid{}, std::string("fresh")}};
    auto r = call(f.b, q, 12);
    REQUIRE_OK(r);
    CHECK(r->topics.at(0).error_code == 0);
    CHECK(r->topics.at(0).topic_id == f.n->dir().topic_id("fresh").value());
    CHECK_FALSE(r->topics.at(0).topic_id.is_zero());
  }
  SECTION("v12 by id with a null name: the topic, or UNKNOWN_TOPIC_ID with a null name") {
    const uuid stranger = uuid::from_parts(0x1234, 0x5678);
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{{id, std::nullopt}, {stranger, std::nullopt}, {id, std::nullopt}};
    auto r = call(f.b, q, 12);
    REQUIRE_OK(r);
    REQUIRE(r->topics.size() == 2);  // each id answered once
    CHECK(r->topics[0].error_code == 0);
    CHECK(r->topics[0].name == "orders");
    CHECK(r->topics[0].topic_id == id);
    CHECK(r->topics[0].partitions.size() == 2);
    CHECK(r->topics[1].error_code == code(errc::unknown_topic_id));
    CHECK_FALSE(r->topics[1].name.has_value());
    CHECK(r->topics[1].topic_id == stranger);
    CHECK(r->topics[1].partitions.empty());
  }
  SECTION("v12 with 200000 ids answers each distinct id once and stays linear") {
    // A frame may hold millions of ids: deduplicating by a scan per id would make about 1e10
    // comparisons here, and the server would spin on one request; one set and one map are
    // linear-logarithmic.
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{};
    constexpr std::uint64_t distinct = 100'000;
    for (std::uint64_t i = 0; i < 2 * distinct; ++i)
      q.topics->push_back({uuid::from_parts(0x7777, 2 + i % distinct), std::nullopt});
    q.topics->push_back({id, std::nullopt});
    auto r = call(f.b, q, 12);
    REQUIRE_OK(r);
    REQUIRE(r->topics.size() == distinct + 1);
    CHECK(r->topics.front().error_code == code(errc::unknown_topic_id));
    CHECK(r->topics.back().name == "orders");
    CHECK(r->topics.back().topic_id == id);
  }
  SECTION("a deleted and recreated topic is not found by its old id") {
    REQUIRE_OK(f.n->dir().delete_topic("orders"));
    REQUIRE_OK(f.n->create_topic("orders", {.partitions = 2}));
    metadata_request q;
    q.topics = std::vector<metadata_request_topic>{{id, std::nullopt}};
    auto r = call(f.b, q, 12);
    REQUIRE_OK(r);
    CHECK(r->topics.at(0).error_code == code(errc::unknown_topic_id));
    auto named = call(f.b, by_name({"orders"}), 12);
    REQUIRE_OK(named);
    CHECK(named->topics.at(0).topic_id == f.n->dir().topic_id("orders").value());
    CHECK(named->topics.at(0).topic_id != id);
  }
  SECTION("v10 and v11 refuse ids and null names as Kafka does: INVALID_REQUEST") {
    for (std::int16_t v = 10; v <= 11; ++v) {
      for (const metadata_request_topic& t :
           {metadata_request_topic{id, std::string("orders")}, metadata_request_topic{uuid{}, std::nullopt}}) {
        metadata_request q;
        q.topics = std::vector<metadata_request_topic>{t, {uuid{}, std::string("orders")}};
        auto r = call(f.b, q, v);
        REQUIRE_OK(r);
        REQUIRE(r->topics.size() == 2);
        for (const auto& rt : r->topics) {
          CHECK(rt.error_code == code(errc::invalid_request));
          CHECK(rt.partitions.empty());
        }
        CHECK(r->topics[0].topic_id == t.topic_id);
      }
    }
  }
}

TEST_CASE("Produce appends the bytes that came and Fetch returns them", "[server][kafka_broker]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {.partitions = 2}));
  const auto batch = make_batch(5, 1'000, "a");
  auto p = call(f.b, produce_of("t", 1, batch), 7);
  REQUIRE_OK(p);
  REQUIRE(p->responses.size() == 1);
  CHECK(p->responses[0].partition_responses[0].error_code == 0);
  CHECK(p->responses[0].partition_responses[0].base_offset == offset(0));
  auto p2 = call(f.b, produce_of("t", 1, make_batch(3, 2'000, "b")), 3);
  REQUIRE_OK(p2);
  CHECK(p2->responses[0].partition_responses[0].base_offset == offset(5));

  auto fr = call(f.b, fetch_of("t", 1, 0), 11);
  REQUIRE_OK(fr);
  const auto& part = fr->responses.at(0).partitions.at(0);
  CHECK(part.error_code == 0);
  CHECK(part.high_watermark == offset(8));
  CHECK(part.last_stable_offset == offset(8));
  CHECK(part.preferred_read_replica == broker_id(-1));
  auto recs = records_in(part);
  REQUIRE(recs.size() == 8);
  CHECK(recs[0] == std::pair<std::int64_t, std::string>{0, "a-0"});
  CHECK(recs[7] == std::pair<std::int64_t, std::string>{7, "b-2"});
  // The stored batch is the produced one but for the base offset (which the CRC skips).
  auto stored = part.records.bytes().subspan(0, batch.size());
  CHECK(std::equal(stored.begin() + 8, stored.end(), batch.begin() + 8));

  SECTION("a fetch inside a batch returns the whole batch") {
    auto mid = call(f.b, fetch_of("t", 1, 2), 4);
    REQUIRE_OK(mid);
    CHECK(records_in(mid->responses[0].partitions[0]).front().first == 0);
  }
  SECTION("at the high watermark records are empty not null") {
    auto end = call(f.b, fetch_of("t", 1, 8), 11);
    REQUIRE_OK(end);
    CHECK_FALSE(end->responses[0].partitions[0].records.is_null());
    CHECK(end->responses[0].partitions[0].records.size_bytes() == 0);
  }
  SECTION("past the high watermark is OFFSET_OUT_OF_RANGE") {
    auto past = call(f.b, fetch_of("t", 1, 9), 11);
    REQUIRE_OK(past);
    CHECK(past->responses[0].partitions[0].error_code == code(errc::offset_out_of_range));
  }
  SECTION("an unknown partition is UNKNOWN_TOPIC_OR_PARTITION") {
    auto u = call(f.b, fetch_of("t", 7, 0), 11);
    REQUIRE_OK(u);
    CHECK(u->responses[0].partitions[0].error_code == code(errc::unknown_topic_or_partition));
  }
  SECTION("KIP-74: the first batch comes whole above the byte limits") {
    auto q = fetch_of("t", 1, 0);
    q.max_bytes = 10;
    q.topics[0].partitions[0].partition_max_bytes = 10;
    auto small = call(f.b, q, 11);
    REQUIRE_OK(small);
    CHECK(records_in(small->responses[0].partitions[0]).size() == 5);  // the first batch only
  }
}

TEST_CASE("Produce refuses what Kafka's validator refuses per partition", "[server][kafka_broker]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {}));
  auto first_error = [&](const produce_request& q) {
    auto r = call(f.b, q, 8);
    REQUIRE_OK(r);
    return r->responses.at(0).partition_responses.at(0).error_code;
  };
  auto batch = make_batch(2);
  SECTION("a flipped byte is CORRUPT_MESSAGE") {
    batch.back() ^= std::byte{1};
    CHECK(first_error(produce_of("t", 0, batch)) == code(errc::corrupt_message));
  }
  SECTION("two batches are INVALID_RECORD") {
    auto two = batch;
    two.insert(two.end(), batch.begin(), batch.end());
    CHECK(first_error(produce_of("t", 0, two)) == code(errc::invalid_record));
  }
  SECTION("no records are INVALID_RECORD") { CHECK(first_error(produce_of("t", 0, {})) == code(errc::invalid_record)); }
  SECTION("a truncated batch is CORRUPT_MESSAGE") {
    batch.resize(batch.size() - 3);
    CHECK(first_error(produce_of("t", 0, batch)) == code(errc::corrupt_message));
  }
  SECTION("magic 1 is INVALID_RECORD") {
    batch[batch_layout::magic] = std::byte{1};
    CHECK(first_error(produce_of("t", 0, batch)) == code(errc::invalid_record));
  }
  SECTION("acks 2 is INVALID_REQUIRED_ACKS") {
    CHECK(first_error(produce_of("t", 0, batch, 2)) == code(errc::invalid_required_acks));
  }
  SECTION("an internal topic is INVALID_TOPIC_EXCEPTION") {
    CHECK(first_error(produce_of("__consumer_offsets", 0, batch)) == code(errc::invalid_topic));
  }
  SECTION("an unknown topic is UNKNOWN_TOPIC_OR_PARTITION and is not created") {
    CHECK(first_error(produce_of("nope", 0, batch)) == code(errc::unknown_topic_or_partition));
    CHECK_FALSE(f.n->dir().partition_count("nope").has_value());
  }
  SECTION("a keyless record on a compacted topic is INVALID_RECORD") {
    REQUIRE_OK(f.n->create_topic("compacted", {.partitions = 1, .overrides = {{"cleanup.policy", "compact"}}}));
    record_batch_builder kb;
    kb.append(1'000, nullable_bytes::null(), nullable_bytes(std::string_view("v")));
    auto s = kb.finish();
    CHECK(first_error(produce_of("compacted", 0, {s.begin(), s.end()})) == code(errc::invalid_record));
  }
  SECTION("a timestamp past message.timestamp.after.max.ms is INVALID_TIMESTAMP") {
    const auto far = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch() + std::chrono::hours(24 * 365))
                         .count();
    CHECK(first_error(produce_of("t", 0, make_batch(2, far))) == code(errc::invalid_timestamp));
  }
  SECTION("a batch over max.message.bytes is MESSAGE_TOO_LARGE") {
    REQUIRE_OK(f.n->create_topic("small", {.partitions = 1, .overrides = {{"max.message.bytes", "100"}}}));
    CHECK(first_error(produce_of("small", 0, make_batch(10))) == code(errc::record_too_large));
  }
  // Nothing refused was stored.
  CHECK((*f.n->dir().get_partition("t", partition_id(0)))->log_end_offset() == offset(0));
}

TEST_CASE("Produce with acks 0 gets no answer but is appended", "[server][kafka_broker]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {}));
  auto pending = brook::test::start_call(f.b, produce_of("t", 0, make_batch(4), 0), 7);
  CHECK(pending.silent());
  CHECK((*f.n->dir().get_partition("t", partition_id(0)))->high_watermark() == offset(4));
  // A failed one closes the connection: the client has no other way to learn it.
  auto bad = make_batch(2);
  bad.back() ^= std::byte{1};
  CHECK(brook::test::start_call(f.b, produce_of("t", 0, bad, 0), 7).closed());
  CHECK((*f.n->dir().get_partition("t", partition_id(0)))->high_watermark() == offset(4));
}

TEST_CASE("a Fetch below min_bytes waits for an append or for max_wait_ms", "[server][kafka_broker]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {}));
  SECTION("an append wakes it") {
    auto pending = brook::test::start_call(f.b, fetch_of("t", 0, 0, 30'000), 11);
    REQUIRE_FALSE(pending.ready_within(50ms));  // nothing to read yet: it waits
    REQUIRE_OK(call(f.b, produce_of("t", 0, make_batch(3)), 7));
    auto r = pending.get();  // long before the 30 s
    REQUIRE_OK(r);
    CHECK(records_in(r->responses[0].partitions[0]).size() == 3);
  }
  SECTION("max_wait_ms answers empty") {
    auto r = call(f.b, fetch_of("t", 0, 0, 100), 11);
    REQUIRE_OK(r);
    CHECK(r->responses[0].partitions[0].records.size_bytes() == 0);
    CHECK(f.b.parked_fetches() == 0);
  }
  SECTION("stop answers parked fetches") {
    auto pending = brook::test::start_call(f.b, fetch_of("t", 0, 0, 60'000), 11);
    REQUIRE_FALSE(pending.ready_within(20ms));
    f.b.stop();
    REQUIRE_OK(pending.get(1s));
  }
  SECTION("an abandoned fetch is dropped without an answer") {
    auto watch = std::make_shared<answer_watch>();
    auto answered = std::make_shared<std::atomic<bool>>(false);
    auto frame = encode_request({1, 11, 5, "c"}, fetch_of("t", 0, 0, 60'000));
    REQUIRE_OK(frame);
    std::vector<std::byte> body(frame->begin() + frame_prefix_size, frame->end());
    codec::message_reader rd(body, "request");
    auto h = read_request_header(rd);
    REQUIRE_OK(h);
    auto q = read_request_body(rd, *h);
    REQUIRE_OK(q);
    f.b.handle(incoming_request(0, std::move(body), *h, std::move(*q)),
               reply([answered](std::optional<response_frame>) { answered->store(true); }, watch));
    for (int i = 0; i < 200 && f.b.parked_fetches() == 0; ++i) std::this_thread::sleep_for(5ms);
    REQUIRE(f.b.parked_fetches() == 1);
    watch->abandon();
    for (int i = 0; i < 200 && f.b.parked_fetches() == 1; ++i) std::this_thread::sleep_for(5ms);
    CHECK(f.b.parked_fetches() == 0);
    CHECK_FALSE(answered->load());
  }
}

TEST_CASE("ListOffsets gives earliest latest by timestamp and max timestamp", "[server][kafka_broker]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {}));
  REQUIRE_OK(call(f.b, produce_of("t", 0, make_batch(5, 1'000)), 7));   // ts 1000..1004
  REQUIRE_OK(call(f.b, produce_of("t", 0, make_batch(5, 50'000)), 7));  // ts 50000..50004
  auto ask = [&](std::int64_t ts, std::int16_t v = 7) {
    list_offsets_request q;
    q.replica_id = broker_id(-1);
    q.topics.push_back({"t", {{partition_id(0), leader_epoch(-1), ts, 1}}});
    auto r = call(f.b, q, v);
    REQUIRE_OK(r);
    return r->topics.at(0).partitions.at(0);
  };
  CHECK(ask(-2).offset_value == offset(0));
  CHECK(ask(-1, 1).offset_value == offset(10));
  auto by_ts = ask(1'003);
  CHECK(by_ts.offset_value == offset(3));
  CHECK(by_ts.timestamp == 1'003);
  CHECK(ask(2'000).offset_value == offset(5));
  CHECK(ask(60'000).offset_value == offset(-1));  // none that late
  auto max = ask(-3);
  CHECK(max.offset_value == offset(9));
  CHECK(max.timestamp == 50'004);
}

TEST_CASE("CreateTopics and DeleteTopics with Kafka's errors", "[server][kafka_broker]") {
  fixture f;
  create_topics_request q;
  q.topics.push_back({"a", 3, 1, {}, {{"retention.ms", std::string("1000")}}});
  q.topics.push_back({"b", -1, -1, {}, {}});
  q.topics.push_back({"bad/name", 1, 1, {}, {}});
  q.topics.push_back({"c", 0, 1, {}, {}});
  q.topics.push_back({"d", 1, 3, {}, {}});
  q.topics.push_back({"e", 1, 1, {}, {{"retention.ms", std::string("soon")}}});
  q.topics.push_back({"f", 1, 1, {}, {{"no.such.config", std::string("1")}}});
  auto r = call(f.b, q, 5);
  REQUIRE_OK(r);
  REQUIRE(r->topics.size() == 7);
  CHECK(r->topics[0].error_code == 0);
  CHECK(r->topics[1].error_code == 0);
  CHECK(r->topics[1].num_partitions == 1);
  CHECK(r->topics[2].error_code == code(errc::invalid_topic));
  CHECK(r->topics[3].error_code == code(errc::invalid_partitions));
  CHECK(r->topics[4].error_code == code(errc::invalid_replication_factor));
  CHECK(r->topics[5].error_code == code(errc::invalid_config));
  CHECK(r->topics[6].error_code == code(errc::invalid_config));
  CHECK(f.n->dir().partition_count("a").value() == 3);
  CHECK_FALSE(f.n->dir().partition_count("e").has_value());

  auto again = call(f.b, q, 0);
  REQUIRE_OK(again);
  CHECK(again->topics[0].error_code == code(errc::topic_already_exists));

  create_topics_request dry;
  dry.validate_only = true;
  dry.topics.push_back({"g", 2, 1, {}, {}});
  auto d = call(f.b, dry, 1);
  REQUIRE_OK(d);
  CHECK(d->topics[0].error_code == 0);
  CHECK_FALSE(f.n->dir().partition_count("g").has_value());

  delete_topics_request del;
  del.topic_names = {"a", "zzz", "__consumer_offsets"};
  auto dr = call(f.b, del, 3);
  REQUIRE_OK(dr);
  CHECK(dr->responses[0].error_code == 0);
  CHECK(dr->responses[1].error_code == code(errc::unknown_topic_or_partition));
  CHECK(dr->responses[2].error_code != 0);
  CHECK_FALSE(f.n->dir().partition_count("a").has_value());
}

TEST_CASE("CreateTopics v7 answers the new topic's id", "[server][kafka_broker][topic_id]") {
  fixture f;
  create_topics_request q;
  q.topics.push_back({"a", 2, 1, {}, {}});
  q.topics.push_back({"bad/name", 1, 1, {}, {}});
  auto r = call(f.b, q, 7);
  REQUIRE_OK(r);
  REQUIRE(r->topics.size() == 2);
  CHECK(r->topics[0].error_code == 0);
  CHECK(r->topics[0].topic_id == f.n->dir().topic_id("a").value());
  CHECK_FALSE(r->topics[0].topic_id.is_zero());
  CHECK(r->topics[1].error_code == code(errc::invalid_topic));
  CHECK(r->topics[1].topic_id == uuid{});
  auto again = call(f.b, q, 7);  // TOPIC_ALREADY_EXISTS carries no id
  REQUIRE_OK(again);
  CHECK(again->topics[0].error_code == code(errc::topic_already_exists));
  CHECK(again->topics[0].topic_id == uuid{});
  create_topics_request dry;  // nothing is created, so there is no id
  dry.validate_only = true;
  dry.topics.push_back({"b", 1, 1, {}, {}});
  auto d = call(f.b, dry, 7);
  REQUIRE_OK(d);
  CHECK(d->topics[0].error_code == 0);
  CHECK(d->topics[0].topic_id == uuid{});
}

TEST_CASE("topics past max_partitions are POLICY_VIOLATION", "[server][kafka_broker]") {
  // The node holds __consumer_offsets' 1 partition.
  fixture f("broker", {.num_partitions = 2, .max_partitions = 6});
  create_topics_request q;
  q.topics.push_back({"a", 3, 1, {}, {}});
  q.topics.push_back({"b", 1000000, 1, {}, {}});
  auto r = call(f.b, q, 4);
  REQUIRE_OK(r);
  CHECK(r->topics[0].error_code == 0);
  CHECK(r->topics[1].error_code == code(errc::policy_violation));
  metadata_request m;  // auto-creation counts too: 4 + 2 fits, 6 + 2 does not
  m.topics = std::vector<metadata_request_topic>{{{}, std::string("c")}, {{}, std::string("d")}};
  auto mr = call(f.b, m, 4);
  REQUIRE_OK(mr);
  CHECK(mr->topics[0].error_code == 0);
  CHECK(mr->topics[1].error_code == code(errc::policy_violation));
}

TEST_CASE("DescribeConfigs reports a topic's values and which were set", "[server][kafka_broker]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {.partitions = 1, .overrides = {{"retention.ms", "1234"}}}));
  describe_configs_request q;
  q.resources.push_back({2, "t", std::nullopt});
  q.resources.push_back({2, "nope", std::nullopt});
  q.resources.push_back({4, "0", std::vector<std::string>{"num.partitions"}});
  auto r = call(f.b, q, 1);
  REQUIRE_OK(r);
  REQUIRE(r->results.size() == 3);
  CHECK(r->results[0].error_code == 0);
  bool saw_retention = false, saw_segment = false;
  for (const auto& c : r->results[0].configs) {
    if (c.name == "retention.ms") {
      saw_retention = true;
      CHECK(c.value == "1234");
      CHECK(c.config_source == 1);
    }
    if (c.name == "segment.bytes") {
      saw_segment = true;
      CHECK(c.value == "1073741824");
      CHECK(c.config_source == 5);
    }
  }
  CHECK(saw_retention);
  CHECK(saw_segment);
  CHECK(r->results[1].error_code == code(errc::unknown_topic_or_partition));
  REQUIRE(r->results[2].configs.size() == 1);
  CHECK(r->results[2].configs[0].value == "1");
}

#ifdef BROOK_BROKER_DOC
#include <fstream>
#include <sstream>

TEST_CASE("docs/broker.md lists exactly the APIs and versions the broker serves", "[server][kafka_broker][docs]") {
  std::string want = "| API | key | versions served | Kafka's versions |\n|---|---|---|---|\n";
  for (const auto& a : kafka_broker::apis().apis()) {
    const api_info& k = api(a.key);
    want += fmt::format("| {} | {} | {}-{} | {}-{} |\n", k.name, static_cast<int>(a.key), a.versions.lo, a.versions.hi,
                        k.valid.lo, k.valid.hi);
  }
  std::ifstream in(BROOK_BROKER_DOC);
  REQUIRE(in);
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const auto begin = text.find("-->\n", text.find("<!-- broker api table:"));
  const auto end = text.find("<!-- end of broker api table -->");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  INFO("the table docs/broker.md should hold:\n" << want);
  CHECK(text.substr(begin + 4, end - begin - 4) == want);
}
#endif

TEST_CASE("the group APIs reach the node's coordinator", "[server][kafka_broker]") {
  fixture f;
  f.b.advertise("10.0.0.7", 9999);
  find_coordinator_request fc;
  fc.key = "g";
  auto c = call(f.b, fc, 2);
  REQUIRE_OK(c);
  CHECK(c->error_code == 0);
  CHECK(c->host == "10.0.0.7");
  CHECK(c->port == 9999);

  protocol::join_group_request j;
  j.group_id = "g";
  j.session_timeout_ms = 10'000;
  j.rebalance_timeout_ms = 10'000;
  j.protocol_type = "consumer";
  j.protocols.push_back({"range", {}});
  auto first = call(f.b, j, 5);  // KIP-394: a new member learns its id first
  REQUIRE_OK(first);
  CHECK(first->error_code == code(errc::member_id_required));
  REQUIRE_FALSE(first->member_id.empty());
  j.member_id = first->member_id;
  auto joined = call(f.b, j, 5);
  REQUIRE_OK(joined);
  CHECK(joined->error_code == 0);
  CHECK(joined->leader == first->member_id);

  protocol::sync_group_request s;
  s.group_id = "g";
  s.generation = joined->generation;
  s.member_id = j.member_id;
  s.assignments.push_back({j.member_id, {std::byte{1}, std::byte{2}}});
  auto synced = call(f.b, s, 3);
  REQUIRE_OK(synced);
  CHECK(synced->error_code == 0);
  CHECK(synced->assignment == std::vector<std::byte>{std::byte{1}, std::byte{2}});

  REQUIRE_OK(f.n->create_topic("t", {}));
  protocol::offset_commit_request oc;
  oc.group_id = "g";
  oc.generation_id_or_member_epoch = joined->generation;
  oc.member_id = j.member_id;
  offset_commit_request_partition ocp;
  ocp.committed_offset = offset(42);
  ocp.committed_metadata = "meta";
  oc.topics.push_back({"t", {ocp}});
  auto committed = call(f.b, oc, 7);
  REQUIRE_OK(committed);
  CHECK(committed->topics.at(0).partitions.at(0).error_code == 0);
  offset_fetch_request of;
  of.group_id = "g";
  of.topics = std::vector<offset_fetch_request_topic>{{"t", {partition_id(0)}}};
  auto fetched = call(f.b, of, 5);
  REQUIRE_OK(fetched);
  CHECK(fetched->topics.at(0).partitions.at(0).committed_offset == offset(42));
  CHECK(fetched->topics.at(0).partitions.at(0).metadata == "meta");
}

namespace {
std::vector<std::byte> compressed_batch(compression_type t, int n = 3) {
  const auto codecs = test::all_codecs();
  record_batch_builder b;
  for (int i = 0; i < n; ++i) b.append(1000 + i, nullable_bytes::null(), fmt::format("value-{}", i));
  auto s = b.finish(**codecs.get(t), (*codecs.get(t))->default_level());
  REQUIRE(s);
  return {s->begin(), s->end()};
}
std::shared_ptr<const compression_codecs> every_codec() {
  return std::make_shared<const compression_codecs>(test::all_codecs());
}
}  // namespace

TEST_CASE("Produce stores compressed batches as they came and Fetch returns them",
          "[server][kafka_broker][compression]") {
  fixture f("compressed", {}, every_codec());
  REQUIRE_OK(f.n->create_topic("c", {.partitions = 1}));
  std::int64_t next = 0;
  for (auto t : test::every_compression_type) {
    INFO(compression_name(t));
    const auto batch = compressed_batch(t);
    auto p = call(f.b, produce_of("c", 0, batch), 9);
    REQUIRE_OK(p);
    REQUIRE(p->responses[0].partition_responses[0].error_code == 0);
    CHECK(p->responses[0].partition_responses[0].base_offset == offset(next));
    auto r = call(f.b, fetch_of("c", 0, next), 12);
    REQUIRE_OK(r);
    const auto& part = r->responses[0].partitions[0];
    REQUIRE(part.error_code == 0);
    const auto got = part.records.bytes();
    REQUIRE(got.size() == batch.size());
    // Byte for byte what was produced, but the base offset the log assigned.
    auto want = batch;
    set_batch_base_offset(want, offset(next));
    CHECK(std::equal(got.begin(), got.end(), want.begin()));
    next += 3;
  }
}

TEST_CASE("zstd needs Produce v7 and a zstd topic needs Fetch v10", "[server][kafka_broker][compression]") {
  fixture f("zstd", {}, every_codec());
  REQUIRE_OK(f.n->create_topic("z", {.partitions = 1}));
  const auto zstd = compressed_batch(compression_type::zstd);
  auto old = call(f.b, produce_of("z", 0, zstd), 6);
  REQUIRE_OK(old);
  CHECK(old->responses[0].partition_responses[0].error_code == code(errc::unsupported_compression_type));
  auto v7 = call(f.b, produce_of("z", 0, zstd), 7);
  REQUIRE_OK(v7);
  CHECK(v7->responses[0].partition_responses[0].error_code == 0);
  // Other codecs go at any version.
  auto lz4 = call(f.b, produce_of("z", 0, compressed_batch(compression_type::lz4)), 3);
  REQUIRE_OK(lz4);
  CHECK(lz4->responses[0].partition_responses[0].error_code == 0);
  // A topic that is not zstd is fetched at v4 even with a zstd batch in it, as in Kafka.
  auto f4 = call(f.b, fetch_of("z", 0, 0), 4);
  REQUIRE_OK(f4);
  CHECK(f4->responses[0].partitions[0].error_code == 0);

  REQUIRE_OK(f.n->create_topic("zt", {.partitions = 1, .overrides = {{"compression.type", "zstd"}}}));
  auto gz = call(f.b, produce_of("zt", 0, compressed_batch(compression_type::gzip)), 3);
  REQUIRE_OK(gz);
  CHECK(gz->responses[0].partition_responses[0].error_code == 0);
  for (std::int16_t v : {std::int16_t{4}, std::int16_t{9}}) {
    auto r = call(f.b, fetch_of("zt", 0, 0), v);
    REQUIRE_OK(r);
    CHECK(r->responses[0].partitions[0].error_code == code(errc::unsupported_compression_type));
  }
  auto r10 = call(f.b, fetch_of("zt", 0, 0), 10);
  REQUIRE_OK(r10);
  REQUIRE(r10->responses[0].partitions[0].error_code == 0);
  // Recompressed on append: the gzip batch is stored as zstd.
  auto v = record_batch_view::parse(r10->responses[0].partitions[0].records.bytes(), batch_check{true, false});
  REQUIRE_OK(v);
  CHECK(v->compression() == compression_type::zstd);
}

TEST_CASE("Produce answers the codec errors Kafka names", "[server][kafka_broker][compression]") {
  SECTION("a codec the broker was not given") {
    fixture f("nocodec");
    REQUIRE_OK(f.n->create_topic("c", {.partitions = 1}));
    auto p = call(f.b, produce_of("c", 0, compressed_batch(compression_type::snappy)), 9);
    REQUIRE_OK(p);
    CHECK(p->responses[0].partition_responses[0].error_code == code(errc::unsupported_compression_type));
    CHECK_THAT(p->responses[0].partition_responses[0].error_message.value_or(""), Catch::Contains("snappy"));
  }
  SECTION("a payload that does not decompress, under a valid CRC") {
    fixture f("garbage", {}, every_codec());
    REQUIRE_OK(f.n->create_topic("c", {.partitions = 1}));
    auto b = compressed_batch(compression_type::lz4);
    for (std::size_t i = batch_layout::records + 8; i < b.size(); ++i) b[i] = std::byte{0x5a};
    update_batch_crc(b);
    auto p = call(f.b, produce_of("c", 0, b), 9);
    REQUIRE_OK(p);
    CHECK(p->responses[0].partition_responses[0].error_code == code(errc::corrupt_message));
    auto end = call(f.b, fetch_of("c", 0, 0), 12);
    REQUIRE_OK(end);
    CHECK(end->responses[0].partitions[0].high_watermark == offset(0));  // nothing was appended
  }
}

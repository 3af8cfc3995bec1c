// brook/testing/faulty_handler.hpp, called in-process (support/handler_calls.hpp) in front of
// a kafka_broker on a temporary directory: every API's error answer carries the code at every
// version Kafka defines, and each fault (pushed errors, latency, dropped connections, down,
// the coordinator taken away) does what it says and is counted. Nothing asserts on time.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <brook/server/kafka_broker.hpp>
#include <brook/testing/faulty_handler.hpp>

#include "support/broker_fixture.hpp"
#include "support/checks.hpp"
#include "support/handler_calls.hpp"
#include "support/log_builders.hpp"

using namespace brook;
using namespace brook::protocol;
using namespace brook::server;
using brook::test::call;
using brook::test::eventually;
using brook::test::start_call;
using brook::testing::faulty_handler;
using namespace std::chrono_literals;

namespace {

/// The broker with the faults in front of it.
struct fixture : brook::test::broker_fixture {
  fixture() : broker_fixture("faulty-handler") {}
  ~fixture() { faults.stop(); }  // then the broker stops
  faulty_handler faults{b};
};

/// An inner handler that only counts what reaches it and closes the connection.
struct counting_handler final : request_handler {
  std::atomic<int> seen{0};
  void handle(incoming_request, reply done) override {
    ++seen;
    done.close();
  }
};

std::int16_t code(errc e) { return static_cast<std::int16_t>(e); }

// ------------------------------------------------------------------ a request per API
// Two of whatever the request names (topics, partitions, groups, keys, members, resources),
// in the fields the version has. Strings are assigned as std::string("..."): assigning the
// literal trips GCC 12's false -Wrestrict.

template <typename Req>
Req sample(std::int16_t v);

template <>
produce_request sample(std::int16_t) {
  produce_request r;
  r.acks = -1;
  r.timeout_ms = 1000;
  for (const char* t : {"a", "b"}) r.topic_data.push_back({t, {{partition_id(0), {}}, {partition_id(1), {}}}});
  return r;
}
template <>
fetch_request sample(std::int16_t) {
  fetch_request r;
  r.max_bytes = 1 << 20;
  for (const char* t : {"a", "b"}) {
    fetch_request_partition p0, p1;
    p1.partition = partition_id(1);
    p0.partition_max_bytes = p1.partition_max_bytes = 1 << 20;
    r.topics.push_back({t, uuid{}, {p0, p1}});
  }
  return r;
}
template <>
list_offsets_request sample(std::int16_t) {
  list_offsets_request r;
  for (const char* t : {"a", "b"}) r.topics.push_back({t, {{partition_id(0)}, {partition_id(1)}}});
  return r;
}
template <>
metadata_request sample(std::int16_t) {
  metadata_request r;
  r.topics = std::vector<metadata_request_topic>{{uuid{}, "a"}, {uuid{}, "b"}};
  return r;
}
template <>
protocol::offset_commit_request sample(std::int16_t) {
  protocol::offset_commit_request r;
  r.group_id = std::string("g");
  for (const char* t : {"a", "b"}) r.topics.push_back({t, {{partition_id(0)}, {partition_id(1)}}});
  return r;
}
template <>
offset_fetch_request sample(std::int16_t v) {
  offset_fetch_request r;
  if (v <= 7) {
    r.group_id = std::string("g");
    r.topics = std::vector<offset_fetch_request_topic>{{"a", {partition_id(0), partition_id(1)}},
                                                       {"b", {partition_id(0), partition_id(1)}}};
  } else {
    for (const char* g : {"g", "h"})
      r.groups.push_back(
          {g, std::nullopt, -1, std::vector<offset_fetch_request_topics>{{"a", {partition_id(0), partition_id(1)}}}});
  }
  return r;
}
template <>
find_coordinator_request sample(std::int16_t v) {
  find_coordinator_request r;
  if (v <= 3) {
    r.key = std::string("g");
  } else {
    r.coordinator_keys = {"g", "h"};
  }
  return r;
}
template <>
protocol::join_group_request sample(std::int16_t) {
  protocol::join_group_request r;
  r.group_id = std::string("g");
  r.session_timeout_ms = 10'000;
  r.protocol_type = std::string("consumer");
  r.protocols.push_back({"range", {}});
  return r;
}
template <>
heartbeat_request sample(std::int16_t) {
  heartbeat_request r;
  r.group_id = std::string("g");
  r.member_id = std::string("m");
  return r;
}
template <>
leave_group_request sample(std::int16_t v) {
  leave_group_request r;
  r.group_id = std::string("g");
  if (v <= 2) {
    r.member_id = std::string("m");
  } else {
    r.members = {{"m", std::nullopt, std::nullopt}, {"n", std::nullopt, std::nullopt}};
  }
  return r;
}
template <>
protocol::sync_group_request sample(std::int16_t) {
  protocol::sync_group_request r;
  r.group_id = std::string("g");
  r.member_id = std::string("m");
  return r;
}
template <>
describe_groups_request sample(std::int16_t) {
  describe_groups_request r;
  r.groups = {"g", "h"};
  return r;
}
template <>
list_groups_request sample(std::int16_t) {
  return {};
}
template <>
api_versions_request sample(std::int16_t) {
  return {};
}
template <>
create_topics_request sample(std::int16_t) {
  create_topics_request r;
  for (const char* t : {"a", "b"}) r.topics.push_back({t, 1, 1, {}, {}});
  return r;
}
template <>
delete_topics_request sample(std::int16_t v) {
  delete_topics_request r;
  if (v <= 5) {
    r.topic_names = {"a", "b"};
  } else {
    r.topics = {{"a", uuid{}}, {"b", uuid{}}};
  }
  return r;
}
template <>
init_producer_id_request sample(std::int16_t) {
  return {};
}
template <>
describe_configs_request sample(std::int16_t) {
  describe_configs_request r;
  r.resources = {{2, "a", std::nullopt}, {2, "b", std::nullopt}};
  return r;
}
template <>
delete_groups_request sample(std::int16_t) {
  delete_groups_request r;
  r.groups_names = {"g", "h"};
  return r;
}

// ------------------------------------------------------------------ the codes of an answer
// Every error code field of a response, whether or not its version has it (one it lacks reads
// as 0).

using codes = std::vector<std::int16_t>;

codes codes_of(const produce_response& r) {
  codes out;
  for (const auto& t : r.responses)
    for (const auto& p : t.partition_responses) out.push_back(p.error_code);
  return out;
}
codes codes_of(const fetch_response& r) {
  codes out{r.error_code};
  for (const auto& t : r.responses)
    for (const auto& p : t.partitions) out.push_back(p.error_code);
  return out;
}
codes codes_of(const list_offsets_response& r) {
  codes out;
  for (const auto& t : r.topics)
    for (const auto& p : t.partitions) out.push_back(p.error_code);
  return out;
}
codes codes_of(const metadata_response& r) {
  codes out;
  for (const auto& t : r.topics) out.push_back(t.error_code);
  return out;
}
codes codes_of(const offset_commit_response& r) {
  codes out;
  for (const auto& t : r.topics)
    for (const auto& p : t.partitions) out.push_back(p.error_code);
  return out;
}
codes codes_of(const offset_fetch_response& r) {
  codes out{r.error_code};
  for (const auto& t : r.topics)
    for (const auto& p : t.partitions) out.push_back(p.error_code);
  for (const auto& g : r.groups) {
    out.push_back(g.error_code);
    for (const auto& t : g.topics)
      for (const auto& p : t.partitions) out.push_back(p.error_code);
  }
  return out;
}
codes codes_of(const find_coordinator_response& r) {
  codes out{r.error_code};
  for (const auto& c : r.coordinators) out.push_back(c.error_code);
  return out;
}
codes codes_of(const protocol::join_group_response& r) { return {r.error_code}; }
codes codes_of(const heartbeat_response& r) { return {r.error_code}; }
codes codes_of(const leave_group_response& r) {
  codes out{r.error_code};
  for (const auto& m : r.members) out.push_back(m.error_code);
  return out;
}
codes codes_of(const sync_group_response& r) { return {r.error_code}; }
codes codes_of(const describe_groups_response& r) {
  codes out;
  for (const auto& g : r.groups) out.push_back(g.error_code);
  return out;
}
codes codes_of(const list_groups_response& r) { return {r.error_code}; }
codes codes_of(const api_versions_response& r) { return {r.error_code}; }
codes codes_of(const create_topics_response& r) {
  codes out;
  for (const auto& t : r.topics) out.push_back(t.error_code);
  return out;
}
codes codes_of(const delete_topics_response& r) {
  codes out;
  for (const auto& t : r.responses) out.push_back(t.error_code);
  return out;
}
codes codes_of(const init_producer_id_response& r) { return {r.error_code}; }
codes codes_of(const describe_configs_response& r) {
  codes out;
  for (const auto& x : r.results) out.push_back(x.error_code);
  return out;
}
codes codes_of(const delete_groups_response& r) {
  codes out;
  for (const auto& g : r.results) out.push_back(g.error_code);
  return out;
}

/// Whether `got` carries `want` somewhere and no other error.
bool carries_only(const codes& got, std::int16_t want) {
  const bool somewhere = std::count(got.begin(), got.end(), want) > 0;
  return somewhere && std::all_of(got.begin(), got.end(), [&](std::int16_t c) { return c == 0 || c == want; });
}

/// `req` at `version` as a connection hands it over: encoded, then decoded from its frame.
template <typename Req>
incoming_request incoming(const Req& req, std::int16_t version) {
  constexpr auto key = codec::schema_of<Req>.info.api_key;
  auto frame = encode_request({key, version, 77, "faulty-test"}, req);
  REQUIRE_OK(frame);
  std::vector<std::byte> body(frame->begin() + frame_prefix_size, frame->end());
  codec::message_reader r(body, "request header");
  auto h = read_request_header(r);
  REQUIRE_OK(h);
  auto b = read_request_body(r, *h);
  REQUIRE_OK(b);
  return incoming_request(0, std::move(body), std::move(*h), std::move(*b));
}

/// The answer in `frame` decoded as a client of `version` would.
template <typename Resp>
Resp decode_answer(const response_frame& frame, std::int16_t version) {
  constexpr auto key = static_cast<api_key>(codec::schema_of<Resp>.info.api_key);
  const auto bytes = frame.flatten();
  codec::message_reader r(std::span<const std::byte>(bytes).subspan(frame_prefix_size), "response");
  auto h = read_response_header(r, key, version);
  REQUIRE_OK(h);
  CHECK(h->correlation_id == 77);
  Resp out{};
  REQUIRE_OK(codec::read(r, out, version));
  REQUIRE_OK(r.expect_end());
  return out;
}

}  // namespace

// ==================================================================== error answers

TEST_CASE("every API's error answer carries the code at every version Kafka defines", "[testing][faulty_handler]") {
  int apis = 0, answers = 0;
  for_each_api([&](auto api) {
    using A = decltype(api);
    using Req = typename A::request;
    using Resp = typename A::response;
    ++apis;
    constexpr auto valid = codec::schema_of<Req>.info.valid;
    for (std::int16_t v = valid.lo; v <= valid.hi; ++v) {
      INFO(codec::schema_of<Req>.info.name << " v" << v);
      for (errc e : {errc::not_leader_or_follower, errc::unknown_server_error}) {
        const auto frame = brook::testing::error_frame(incoming(sample<Req>(v), v), e);
        CHECK(carries_only(codes_of(decode_answer<Resp>(frame, v)), code(e)));
        ++answers;
      }
    }
  });
  CHECK(apis == 19);
  CHECK(answers > 2 * 19 * 4);
}

TEST_CASE("error answers mirror what the request named", "[testing][faulty_handler]") {
  const auto e = errc::not_leader_or_follower;
  SECTION("Produce: every partition with base offset -1") {
    for (std::int16_t v : {std::int16_t{3}, std::int16_t{11}}) {
      auto r =
          decode_answer<produce_response>(brook::testing::error_frame(incoming(sample<produce_request>(v), v), e), v);
      REQUIRE(r.responses.size() == 2);
      CHECK(r.responses[1].name == "b");
      REQUIRE(r.responses[1].partition_responses.size() == 2);
      for (const auto& t : r.responses)
        for (const auto& p : t.partition_responses) {
          CHECK(p.error_code == code(e));
          CHECK(p.base_offset == offset(-1));
        }
      CHECK(r.responses[0].partition_responses[1].index == partition_id(1));
    }
  }
  SECTION("Fetch: every partition with high watermark -1 and empty records") {
    for (std::int16_t v : std::vector<std::int16_t>{4, 7, 12, 13, 17}) {
      auto r = decode_answer<fetch_response>(brook::testing::error_frame(incoming(sample<fetch_request>(v), v), e), v);
      CHECK(r.error_code == (v >= 7 ? code(e) : 0));
      REQUIRE(r.responses.size() == 2);
      for (const auto& t : r.responses) {
        REQUIRE(t.partitions.size() == 2);
        for (const auto& p : t.partitions) {
          CHECK(p.error_code == code(e));
          CHECK(p.high_watermark == offset(-1));
          CHECK_FALSE(p.records.is_null());
          CHECK(p.records.size_bytes() == 0);
        }
      }
    }
  }
  SECTION("Metadata: each named topic and nothing for all topics") {
    auto named =
        decode_answer<metadata_response>(brook::testing::error_frame(incoming(sample<metadata_request>(9), 9), e), 9);
    REQUIRE(named.topics.size() == 2);
    CHECK(named.topics[0].name == "a");
    CHECK(named.topics[1].error_code == code(e));
    metadata_request all;
    all.topics = std::nullopt;
    auto everything = decode_answer<metadata_response>(brook::testing::error_frame(incoming(all, 9), e), 9);
    CHECK(everything.topics.empty());
    CHECK(everything.brokers.empty());
  }
  SECTION("FindCoordinator: top level before v4 and one coordinator per key after") {
    for (std::int16_t v : {std::int16_t{0}, std::int16_t{3}}) {
      auto r = decode_answer<find_coordinator_response>(
          brook::testing::error_frame(incoming(sample<find_coordinator_request>(v), v), e), v);
      CHECK(r.error_code == code(e));
      CHECK(r.node_id == broker_id(-1));
      CHECK(r.port == -1);
    }
    for (std::int16_t v : {std::int16_t{4}, std::int16_t{6}}) {
      auto r = decode_answer<find_coordinator_response>(
          brook::testing::error_frame(incoming(sample<find_coordinator_request>(v), v), e), v);
      REQUIRE(r.coordinators.size() == 2);
      CHECK(r.coordinators[1].key == "h");
      CHECK(r.coordinators[1].error_code == code(e));
      CHECK(r.coordinators[1].node_id == broker_id(-1));
      CHECK(r.coordinators[1].port == -1);
    }
  }
  SECTION("OffsetCommit and OffsetFetch: every partition") {
    auto c = decode_answer<offset_commit_response>(
        brook::testing::error_frame(incoming(sample<protocol::offset_commit_request>(8), 8), e), 8);
    REQUIRE(c.topics.size() == 2);
    CHECK(c.topics[1].partitions.size() == 2);
    for (std::int16_t v : {std::int16_t{0}, std::int16_t{1}, std::int16_t{7}}) {  // the group's topics
      auto f = decode_answer<offset_fetch_response>(
          brook::testing::error_frame(incoming(sample<offset_fetch_request>(v), v), e), v);
      REQUIRE(f.topics.size() == 2);
      CHECK(f.topics[1].name == "b");
      REQUIRE(f.topics[0].partitions.size() == 2);
      CHECK(f.topics[0].partitions[1].partition_index == partition_id(1));
      CHECK(f.topics[0].partitions[1].committed_offset == offset(-1));
      CHECK(f.topics[0].partitions[1].error_code == code(e));
    }
    for (std::int16_t v : {std::int16_t{8}, std::int16_t{9}}) {  // each group's topics
      auto f = decode_answer<offset_fetch_response>(
          brook::testing::error_frame(incoming(sample<offset_fetch_request>(v), v), e), v);
      REQUIRE(f.groups.size() == 2);
      CHECK(f.groups[1].group_id == "h");
      CHECK(f.groups[1].error_code == code(e));
      REQUIRE(f.groups[1].topics.size() == 1);
      CHECK(f.groups[1].topics[0].name == "a");
      REQUIRE(f.groups[1].topics[0].partitions.size() == 2);
      CHECK(f.groups[1].topics[0].partitions[1].partition_index == partition_id(1));
      CHECK(f.groups[1].topics[0].partitions[1].committed_offset == offset(-1));
      CHECK(f.groups[1].topics[0].partitions[1].error_code == code(e));
    }
  }
}

// ==================================================================== pushed errors

TEST_CASE("pushed errors answer every served API at every served version", "[testing][faulty_handler]") {
  fixture f;
  int sent = 0;
  for_each_api([&](auto api) {
    using A = decltype(api);
    using Req = typename A::request;
    const auto served = kafka_broker::apis().find(A::key);
    if (!served) return;  // the broker would not be asked
    for (std::int16_t v = served->lo; v <= served->hi; ++v) {
      INFO(codec::schema_of<Req>.info.name << " v" << v);
      f.faults.push_errors(A::key, {errc::kafka_storage_error});
      auto r = call(f.faults, sample<Req>(v), v);
      REQUIRE_OK(r);
      CHECK(carries_only(codes_of(*r), code(errc::kafka_storage_error)));
      CHECK(f.faults.pending_errors(A::key) == 0);
      ++sent;
    }
  });
  CHECK(sent > 40);
  CHECK(f.faults.faults() == static_cast<std::uint64_t>(sent));
  for (const char* t : {"a", "b"})  // no CreateTopics or Metadata got through to create them
    CHECK_FALSE(f.n->dir().partition_count(t));
}

TEST_CASE("pushed errors are used one per request in order and 0 lets one through", "[testing][faulty_handler]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {}));
  const auto batch = brook::test::make_batch(2);
  produce_request p;
  p.acks = -1;
  p.timeout_ms = 1000;
  p.topic_data.push_back({"t", {{partition_id(0), records::view(batch)}}});
  f.faults.push_errors(api_key::produce, {errc::not_leader_or_follower, errc::none, errc::request_timed_out});
  f.faults.push_errors(api_key::produce, {errc::not_leader_or_follower});
  std::vector<std::pair<std::int16_t, std::int64_t>> got;
  for (int i = 0; i < 5; ++i) {
    auto r = call(f.faults, p, 9);
    REQUIRE_OK(r);
    const auto& rp = r->responses.at(0).partition_responses.at(0);
    got.emplace_back(rp.error_code, rp.base_offset.value());
  }
  const std::vector<std::pair<std::int16_t, std::int64_t>> want{{code(errc::not_leader_or_follower), -1},
                                                                {0, 0},
                                                                {code(errc::request_timed_out), -1},
                                                                {code(errc::not_leader_or_follower), -1},
                                                                {0, 2}};
  CHECK(got == want);
  CHECK(f.faults.requests(api_key::produce) == 5);
  CHECK(f.faults.faults(api_key::produce) == 3);
  CHECK(f.faults.requests(api_key::fetch) == 0);
  CHECK(f.faults.pending_errors(api_key::produce) == 0);
}

TEST_CASE("a pushed error on an acks 0 Produce closes the connection", "[testing][faulty_handler]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {}));
  const auto batch = brook::test::make_batch(1);
  produce_request p;
  p.acks = 0;
  p.topic_data.push_back({"t", {{partition_id(0), records::view(batch)}}});
  f.faults.push_errors(api_key::produce, {errc::not_leader_or_follower});
  CHECK(start_call(f.faults, p, 7).closed());
  CHECK(start_call(f.faults, p, 7).silent());  // through to the broker: appended, no answer
  CHECK((*f.n->dir().get_partition("t", partition_id(0)))->high_watermark() == offset(1));
}

// ==================================================================== connections

TEST_CASE("drop_connection closes the next requests of its key only", "[testing][faulty_handler]") {
  fixture f;
  f.faults.drop_connection(api_key::metadata, 2);
  CHECK(start_call(f.faults, metadata_request{}, 4).closed());
  CHECK_OK(call(f.faults, api_versions_request{}, 3));
  CHECK(start_call(f.faults, metadata_request{}, 4).closed());
  CHECK_OK(call(f.faults, metadata_request{}, 4));
  CHECK(f.faults.faults(api_key::metadata) == 2);
  CHECK(f.faults.faults(api_key::api_versions) == 0);
}

TEST_CASE("while down every request closes its connection", "[testing][faulty_handler]") {
  fixture f;
  f.faults.push_errors(api_key::metadata, {errc::leader_not_available});
  f.faults.set_down(true);
  CHECK(f.faults.down());
  CHECK(start_call(f.faults, api_versions_request{}, 3).closed());
  CHECK(start_call(f.faults, metadata_request{}, 4).closed());
  f.faults.set_down(false);
  auto m = call(f.faults, sample<metadata_request>(4), 4);  // the pushed error waited
  REQUIRE_OK(m);
  CHECK(m->topics.at(0).error_code == code(errc::leader_not_available));

  SECTION("set_down_for ends by itself") {
    f.faults.set_down_for(1h);
    CHECK(start_call(f.faults, api_versions_request{}, 3).closed());
    f.faults.set_down_for(20ms);
    CHECK(eventually([&] { return !start_call(f.faults, api_versions_request{}, 3).closed(); }));
  }
  SECTION("heal brings it back") {
    f.faults.set_down_for(1h);
    f.faults.heal();
    CHECK_OK(call(f.faults, api_versions_request{}, 3));
  }
}

// ==================================================================== the coordinator

TEST_CASE("with the coordinator away group APIs are refused until it is given back", "[testing][faulty_handler]") {
  counting_handler inner;
  faulty_handler faults(inner);
  faults.take_coordinator_away(true);
  auto fc3 = call(faults, sample<find_coordinator_request>(3), 3);
  REQUIRE_OK(fc3);
  CHECK(fc3->error_code == code(errc::coordinator_not_available));
  auto fc4 = call(faults, sample<find_coordinator_request>(4), 4);
  REQUIRE_OK(fc4);
  CHECK(carries_only(codes_of(*fc4), code(errc::coordinator_not_available)));
  auto lg = call(faults, list_groups_request{}, 3);
  REQUIRE_OK(lg);
  CHECK(lg->error_code == code(errc::coordinator_not_available));
  auto j = call(faults, sample<protocol::join_group_request>(5), 5);
  REQUIRE_OK(j);
  CHECK(j->error_code == code(errc::not_coordinator));
  auto h = call(faults, sample<heartbeat_request>(4), 4);
  REQUIRE_OK(h);
  CHECK(h->error_code == code(errc::not_coordinator));
  auto c = call(faults, sample<protocol::offset_commit_request>(8), 8);
  REQUIRE_OK(c);
  CHECK(carries_only(codes_of(*c), code(errc::not_coordinator)));
  auto o = call(faults, sample<offset_fetch_request>(8), 8);
  REQUIRE_OK(o);
  CHECK(carries_only(codes_of(*o), code(errc::not_coordinator)));
  auto d = call(faults, sample<describe_groups_request>(5), 5);
  REQUIRE_OK(d);
  CHECK(carries_only(codes_of(*d), code(errc::not_coordinator)));
  CHECK(inner.seen == 0);

  // Not group requests: through.
  find_coordinator_request txn = sample<find_coordinator_request>(4);
  txn.key_type = static_cast<std::int8_t>(coordinator_type::transaction);
  CHECK(start_call(faults, txn, 4).closed());
  CHECK(start_call(faults, metadata_request{}, 4).closed());
  CHECK(inner.seen == 2);

  faults.take_coordinator_away(false);
  CHECK(start_call(faults, sample<protocol::join_group_request>(5), 5).closed());
  CHECK(start_call(faults, sample<find_coordinator_request>(4), 4).closed());
  CHECK(inner.seen == 4);
  CHECK(faults.faults() == 8);
  CHECK(faults.requests(api_key::find_coordinator) == 4);
}

// ==================================================================== latency

TEST_CASE("answers held by the latency arrive when their delay passes", "[testing][faulty_handler]") {
  fixture f;
  SECTION("a long delay holds the answer until it is released") {
    f.faults.set_latency(1h);
    auto p = start_call(f.faults, metadata_request{}, 4);
    f.faults.push_errors(api_key::api_versions, {errc::unknown_server_error});
    auto e = start_call(f.faults, api_versions_request{}, 3);  // a pushed error is held too
    REQUIRE(f.faults.held() == 2);
    CHECK_FALSE(p.ready_within(0ms));
    CHECK_FALSE(e.ready_within(0ms));
    f.faults.release_held();
    CHECK(f.faults.held() == 0);
    auto m = p.get();
    REQUIRE_OK(m);
    CHECK(m->brokers.size() == 1);
    auto v = e.get();
    REQUIRE_OK(v);
    CHECK(v->error_code == code(errc::unknown_server_error));
  }
  SECTION("a per key delay holds that key alone") {
    f.faults.set_latency(api_key::metadata, 1h);
    auto held = start_call(f.faults, metadata_request{}, 4);
    CHECK_OK(call(f.faults, api_versions_request{}, 3));  // not held
    CHECK(f.faults.held() == 1);
    CHECK_FALSE(held.ready_within(0ms));
    f.faults.stop();  // sends what is held
    CHECK_OK(held.get());
  }
  SECTION("short delays all arrive") {
    f.faults.set_latency(5ms);
    std::vector<brook::test::pending_call<api_versions_response>> calls;
    for (int i = 0; i < 20; ++i) calls.push_back(start_call(f.faults, api_versions_request{}, 3));
    for (auto& c : calls) CHECK_OK(c.get());
    CHECK(f.faults.held() == 0);
    CHECK(f.faults.answers_dropped() == 0);
  }
  SECTION("an answer whose connection goes away meanwhile is dropped") {
    f.faults.set_latency(1h);
    auto watch = std::make_shared<answer_watch>();
    std::atomic<int> sent{0};
    reply done([&](std::optional<response_frame>) { ++sent; }, watch);
    f.faults.handle(incoming(metadata_request{}, 4), done);
    REQUIRE(f.faults.held() == 1);
    watch->abandon();
    CHECK(f.faults.held() == 0);
    CHECK(f.faults.answers_dropped() == 1);
    f.faults.release_held();
    CHECK(sent == 0);
  }
}

TEST_CASE("a held long poll Fetch still learns that its client went away", "[testing][faulty_handler]") {
  fixture f;
  REQUIRE_OK(f.n->create_topic("t", {}));
  f.faults.set_latency(1h);
  fetch_request q = sample<fetch_request>(11);
  q.topics.resize(1);
  q.topics[0].topic = "t";
  q.topics[0].partitions.resize(1);
  q.max_wait_ms = 600'000;
  q.min_bytes = 1;
  auto watch = std::make_shared<answer_watch>();
  reply done([](std::optional<response_frame>) {}, watch);
  f.faults.handle(incoming(q, 11), done);
  REQUIRE(eventually([&] { return f.b.parked_fetches() == 1; }));
  watch->abandon();
  CHECK(eventually([&] { return f.b.parked_fetches() == 0; }));
  CHECK(f.faults.held() == 0);
}

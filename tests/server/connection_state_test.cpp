#include <catch2/catch.hpp>

#include <brook/server/connection_state.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::server::connection_state;
using brook::server::incoming_request;
using brook::server::served_apis;
using brook::test::bytes_of;

namespace {

const served_apis& table() {
  static const served_apis t({{api_key::api_versions, codec::between(0, 3)},
                              {api_key::heartbeat, codec::between(1, 4)},
                              {api_key::produce, codec::between(3, 11)}});
  return t;
}

std::vector<std::byte> heartbeat_frame(std::int32_t correlation, std::int16_t version = 4) {
  auto f = encode_request({12, version, correlation, "c"}, heartbeat_request{"g", generation_id{1}, "m"});
  REQUIRE_OK(f);
  return *f;
}

response_frame answer_to(const incoming_request& q) {
  auto f = encode_response(q.header.correlation_id, heartbeat_response{}, q.header.api_version);
  REQUIRE_OK(f);
  return *f;
}

std::int32_t correlation_of(const response_frame& f) { return brook::detail::load_be32(f.bytes().data() + 4); }

/// Every request buffered now, in order.
std::vector<incoming_request> take_all(connection_state& c) {
  std::vector<incoming_request> out;
  for (;;) {
    auto q = c.next_request();
    REQUIRE_OK(q);
    if (!*q) return out;
    out.push_back(std::move(**q));
  }
}

}  // namespace

TEST_CASE("frames split and pipelined come out in order and answers go back in request order",
          "[server][connection_state]") {
  connection_state c(table());
  std::vector<std::byte> stream;
  for (std::int32_t i = 0; i < 5; ++i) {
    auto f = heartbeat_frame(100 + i);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  // Fed three bytes at a time: partial frames, then several frames in one read.
  std::vector<incoming_request> got;
  for (std::size_t at = 0; at < stream.size(); at += 3) {
    c.feed(std::span<const std::byte>(stream).subspan(at, std::min<std::size_t>(3, stream.size() - at)));
    for (auto& q : take_all(c)) got.push_back(std::move(q));
  }
  REQUIRE(got.size() == 5);
  for (std::size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].seq == i);
    CHECK(got[i].header.correlation_id == static_cast<std::int32_t>(100 + i));
    CHECK(std::get<heartbeat_request>(got[i].body).member_id == "m");
  }
  // Answered backwards: nothing can be written until the first is answered.
  for (std::size_t i = got.size(); i-- > 1;) {
    c.answer(got[i].seq, answer_to(got[i]));
    CHECK_FALSE(c.has_write());
  }
  c.answer(got[0].seq, answer_to(got[0]));
  for (std::int32_t i = 0; i < 5; ++i) {
    REQUIRE(c.has_write());
    CHECK(correlation_of(c.pop_write()) == 100 + i);
  }
  CHECK_FALSE(c.has_write());
  CHECK(c.in_flight() == 0);
}

TEST_CASE("a request without an answer is skipped in the order", "[server][connection_state]") {
  connection_state c(table());
  for (std::int32_t i = 0; i < 3; ++i) c.feed(heartbeat_frame(i));
  auto qs = take_all(c);
  REQUIRE(qs.size() == 3);
  c.answer(qs[2].seq, answer_to(qs[2]));
  c.answer(qs[1].seq, std::nullopt);  // acks=0
  CHECK_FALSE(c.has_write());         // the first is still out
  c.answer(qs[0].seq, answer_to(qs[0]));
  CHECK(correlation_of(c.pop_write()) == 0);
  CHECK(correlation_of(c.pop_write()) == 2);
  CHECK_FALSE(c.has_write());
  CHECK(c.in_flight() == 0);
}

TEST_CASE("a close takes its place in the order after the earlier answers", "[server][connection_state]") {
  connection_state c(table());
  for (std::int32_t i = 0; i < 3; ++i) c.feed(heartbeat_frame(i));
  auto qs = take_all(c);
  REQUIRE(qs.size() == 3);
  c.close_after(qs[1].seq);    // a failed acks=0 produce, say
  CHECK_FALSE(c.close_due());  // the first answer is still out
  c.answer(qs[2].seq, answer_to(qs[2]));
  c.answer(qs[0].seq, answer_to(qs[0]));
  REQUIRE(c.has_write());
  CHECK(correlation_of(c.pop_write()) == 0);
  CHECK_FALSE(c.has_write());  // the answer after the close is never written
  CHECK(c.close_due());
}

TEST_CASE("at max_in_flight nothing more is handed out and the socket is not read", "[server][connection_state]") {
  connection_state c(table(), {.max_in_flight = 2});
  for (std::int32_t i = 0; i < 5; ++i) c.feed(heartbeat_frame(i));
  auto first = take_all(c);
  REQUIRE(first.size() == 2);
  CHECK_FALSE(c.wants_read());
  CHECK(c.buffered() > 0);  // the other three wait, already read
  c.answer(first[1].seq, answer_to(first[1]));
  CHECK(take_all(c).empty());  // still two in flight: the second waits to be written
  c.answer(first[0].seq, answer_to(first[0]));
  CHECK(take_all(c).empty());  // answered, but not written yet
  c.pop_write();
  auto next = take_all(c);
  REQUIRE(next.size() == 1);
  CHECK(next[0].seq == 2);
  CHECK(next[0].header.correlation_id == 2);
  c.pop_write();
  CHECK(take_all(c).size() == 1);
  CHECK_FALSE(c.wants_read());
}

TEST_CASE("an ApiVersions version not served is answered in its place and the connection stays open",
          "[server][connection_state]") {
  connection_state c(table());
  c.feed(heartbeat_frame(1));
  // ApiVersions v9: header v2 (flexible), a body brook cannot know; answered without parsing it.
  c.feed(bytes_of({0, 0, 0, 13, 0, 18, 0, 9, 0, 0, 0, 2, 0xff, 0xff, 0, 0xde, 0xad}));
  c.feed(heartbeat_frame(3));
  auto qs = take_all(c);
  REQUIRE(qs.size() == 2);
  CHECK(qs[0].seq == 0);
  CHECK(qs[1].seq == 2);
  CHECK_FALSE(c.has_write());
  c.answer(qs[0].seq, answer_to(qs[0]));
  CHECK(correlation_of(c.pop_write()) == 1);
  REQUIRE(c.has_write());
  const auto unsupported = c.pop_write().flatten();
  // Response header v0, then ApiVersionsResponse v0: error 35 and the served range 0-3.
  CHECK(unsupported == bytes_of({0, 0, 0, 16, 0, 0, 0, 2, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3}));
  CHECK_FALSE(c.has_write());
  CHECK_FALSE(c.failed());
}

TEST_CASE("what a broker closes on fails the connection for good", "[server][connection_state]") {
  struct bad_case {
    const char* what;
    std::vector<std::byte> bytes;
    errc code;
  };
  const std::vector<bad_case> cases = {
      {"a negative frame size", bytes_of({0xff, 0xff, 0xff, 0xfe}), errc::invalid_request},
      {"a frame over the limit", bytes_of({0x7f, 0, 0, 0}), errc::invalid_request},
      {"an unknown API key", bytes_of({0, 0, 0, 10, 0, 99, 0, 0, 0, 0, 0, 1, 0xff, 0xff}), errc::invalid_request},
      {"an API not served", bytes_of({0, 0, 0, 10, 0, 1, 0, 4, 0, 0, 0, 1, 0xff, 0xff}), errc::invalid_request},
      {"a version not served", heartbeat_frame(1, 0), errc::unsupported_version},
      {"a body cut short", bytes_of({0, 0, 0, 12, 0, 12, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 5}), errc::corrupt_message},
  };
  for (const auto& bc : cases) {
    INFO(bc.what);
    connection_state c(table(), {.max_frame_size = 1 << 20});
    c.feed(bc.bytes);
    auto q = c.next_request();
    REQUIRE_FALSE(q);
    CHECK(q.error() == bc.code);
    CHECK(c.failed());
    CHECK_FALSE(c.wants_read());
    c.feed(heartbeat_frame(7));
    CHECK_FALSE(c.next_request());  // nothing after it is read
  }
}

TEST_CASE("a produce request's records view the frame that travels with it", "[server][connection_state]") {
  connection_state c(table());
  const auto batch = bytes_of({1, 2, 3, 4, 5});
  produce_request pr;
  pr.acks = 1;
  pr.topic_data = {{"t", {{partition_id{0}, records::view(batch)}}}};
  auto f = encode_request({0, 9, 5, "p"}, pr);
  REQUIRE_OK(f);
  c.feed(*f);
  auto qs = take_all(c);
  REQUIRE(qs.size() == 1);
  std::vector<incoming_request> moved;
  moved.push_back(std::move(qs[0]));  // the frame's heap buffer moves with it
  const auto& q = moved[0];
  const auto& got = std::get<produce_request>(q.body).topic_data[0].partition_data[0].records;
  CHECK(got.bytes().data() >= q.frame.data());
  CHECK(got.bytes().data() + got.size_bytes() <= q.frame.data() + q.frame.size());
  CHECK(got == records::view(batch));
}

// brook's broker behind the TCP server, on loopback port 0: record bytes sent with
// sendfile(2) equal the copied ones byte for byte, a long-poll Fetch is answered when an
// append lands, and a client that disconnects while its Fetch waits leaves nothing parked.
// Waits are bounded; nothing asserts on time.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <brook/server/tcp_server.hpp>

#include "support/broker_fixture.hpp"
#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/wire_client.hpp"

using namespace brook;
using namespace brook::protocol;
using namespace brook::server;
using brook::test::eventually;
using brook::test::wire_client;
using namespace std::chrono_literals;

namespace {

fetch_request fetch_of(const std::string& topic, std::int64_t from, std::int32_t max_wait = 0) {
  fetch_request r;
  r.max_wait_ms = max_wait;
  r.min_bytes = 1;
  r.max_bytes = 64 * 1024 * 1024;
  fetch_request_partition p;
  p.fetch_offset = offset(from);
  p.partition_max_bytes = 16 * 1024 * 1024;
  r.topics.push_back({topic, {}, {p}});
  return r;
}

produce_request produce_of(const std::string& topic, const std::vector<std::byte>& batch) {
  produce_request r;
  r.acks = 1;
  r.timeout_ms = 1000;
  r.topic_data.push_back({topic, {{partition_id(0), records::view(batch)}}});
  return r;
}

}  // namespace

TEST_CASE("Fetch answers are the same bytes with sendfile and copied", "[server][broker][sendfile]") {
  brook::test::broker_fixture fx("broker-tcp");
  REQUIRE_OK(fx.n->create_topic("t", {}));
  tcp_server with(fx.b, fx.b.apis(), {.sendfile = true});
  tcp_server without(fx.b, fx.b.apis(), {.sendfile = false});
  REQUIRE_OK(with.start());
  REQUIRE_OK(without.start());
  wire_client producer(with.port());
  std::int64_t records = 0;
  for (int i = 0; i < 40; ++i) {  // 40 batches of 100 records of 1 KiB: about 4 MiB
    auto r = producer.call(produce_of("t", brook::test::make_batch(100, 1'000 + i, "v", 1024)), 7);
    REQUIRE(r.responses[0].partition_responses[0].error_code == 0);
    records += 100;
  }
  wire_client a(with.port()), c(without.port());
  for (std::int64_t from : {0, 150, 3'999}) {
    const auto frame = *encode_request({1, 11, 7, "x"}, fetch_of("t", from));
    a.send(frame);
    c.send(frame);
    auto fa = a.frame();
    auto fc = c.frame();
    REQUIRE(fa.has_value());
    REQUIRE(fc.has_value());
    CHECK(fa->size() > (from == 3'999 ? 100'000u : 3'000'000u));
    CHECK(*fa == *fc);
  }
  CHECK(records == 4'000);
  fx.b.stop();
}

TEST_CASE("a long-poll Fetch over TCP is answered by an append", "[server][broker]") {
  brook::test::broker_fixture fx("broker-tcp");
  REQUIRE_OK(fx.n->create_topic("t", {}));
  tcp_server s(fx.b, fx.b.apis());
  REQUIRE_OK(s.start());
  wire_client consumer(s.port()), producer(s.port());
  consumer.send(*encode_request({1, 11, 1, "x"}, fetch_of("t", 0, 30'000)));
  REQUIRE(eventually([&] { return fx.b.parked_fetches() == 1; }));
  auto p = producer.call(produce_of("t", brook::test::make_batch(3)), 7);
  REQUIRE(p.responses[0].partition_responses[0].error_code == 0);
  auto f = consumer.frame();  // long before the 30 s
  REQUIRE(f.has_value());
  CHECK(f->size() > 60);
  // The purgatory answers from its loop and only then takes the fetch out of its count, so
  // the answer can arrive first.
  CHECK(eventually([&] { return fx.b.parked_fetches() == 0; }));

  SECTION("a client that leaves while its fetch waits leaves nothing parked") {
    {
      wire_client gone(s.port());
      gone.send(*encode_request({1, 11, 2, "x"}, fetch_of("t", 3, 60'000)));
      REQUIRE(eventually([&] { return fx.b.parked_fetches() == 1; }));
    }
    CHECK(eventually([&] { return fx.b.parked_fetches() == 0; }));
    CHECK(eventually([&] { return s.connections() == 2; }));
  }
  s.stop();
  fx.b.stop();
}

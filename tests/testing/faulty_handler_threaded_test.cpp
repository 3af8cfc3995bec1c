// brook/testing/faulty_handler.hpp between a tcp_server and a kafka_broker, on loopback port 0:
// a pushed NOT_LEADER_OR_FOLLOWER fails a Produce and the retry lands, a broker that is down
// closes old and new connections at their next request, a dropped connection still gets the
// answers to its earlier requests, held answers keep the connection's order, and kcat (a real
// librdkafka client) retries through pushed errors. Waits are bounded; nothing asserts on time.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/server/tcp_server.hpp>
#include <brook/testing/faulty_handler.hpp>

#include "support/broker_fixture.hpp"
#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/wire_client.hpp"

using namespace brook;
using namespace brook::protocol;
using namespace brook::server;
using brook::test::wire_client;
using brook::testing::faulty_handler;
using namespace std::chrono_literals;

namespace {

/// A node with topic "t", its broker, the faults and a server in front of them.
struct rig : brook::test::broker_fixture {
  faulty_handler faults{b};
  tcp_server tcp{faults, b.apis(), {.network_threads = 2}};
  rig() : broker_fixture("faulty-tcp") {
    REQUIRE_OK(n->create_topic("t", {}));
    REQUIRE_OK(tcp.start());
    b.advertise("127.0.0.1", tcp.port());
  }
  ~rig() {  // the fixture stops the broker after these
    tcp.stop();
    faults.stop();
  }
  offset high_watermark() { return (*n->dir().get_partition("t", partition_id(0)))->high_watermark(); }
};

produce_request produce_of(const std::vector<std::byte>& batch) {
  produce_request r;
  r.acks = -1;
  r.timeout_ms = 1000;
  r.topic_data.push_back({"t", {{partition_id(0), records::view(batch)}}});
  return r;
}

std::int16_t code(errc e) { return static_cast<std::int16_t>(e); }

}  // namespace

TEST_CASE("a pushed NOT_LEADER_OR_FOLLOWER fails a Produce over TCP and the retry lands", "[testing][faulty_handler]") {
  rig r;
  r.faults.push_errors(api_key::produce, {errc::not_leader_or_follower});
  wire_client c(r.tcp.port());
  const auto batch = brook::test::make_batch(3);
  auto first = c.call(produce_of(batch), 9);
  CHECK(first.responses.at(0).partition_responses.at(0).error_code == code(errc::not_leader_or_follower));
  CHECK(first.responses[0].partition_responses[0].base_offset == offset(-1));
  CHECK(r.high_watermark() == offset(0));  // nothing appended
  auto retry = c.call(produce_of(batch), 9);
  CHECK(retry.responses.at(0).partition_responses.at(0).error_code == 0);
  CHECK(retry.responses[0].partition_responses[0].base_offset == offset(0));
  CHECK(r.high_watermark() == offset(3));
  CHECK(r.faults.faults(api_key::produce) == 1);
  CHECK(r.faults.requests(api_key::produce) == 2);
}

TEST_CASE("a broker that is down closes old and new connections at their next request", "[testing][faulty_handler]") {
  rig r;
  wire_client old(r.tcp.port());
  CHECK(old.call(api_versions_request{}, 3).error_code == 0);
  r.faults.set_down(true);
  old.send(*encode_request({18, 3, 2, "x"}, api_versions_request{}));
  CHECK(old.closed_by_peer());
  wire_client fresh(r.tcp.port());  // accepted, then dies at its first request
  fresh.send(*encode_request({3, 4, 1, "x"}, metadata_request{}));
  CHECK(fresh.closed_by_peer());
  r.faults.set_down(false);
  wire_client after(r.tcp.port());
  CHECK(after.call(metadata_request{}, 4).brokers.size() == 1);
  CHECK(r.faults.faults() == 2);
}

TEST_CASE("a dropped connection gets the answers to its earlier requests first", "[testing][faulty_handler]") {
  rig r;
  r.faults.drop_connection(api_key::produce);
  r.faults.set_latency(api_key::api_versions, 20ms);  // the earlier answer is not ready yet
  wire_client c(r.tcp.port());
  const auto batch = brook::test::make_batch(1);
  auto two = *encode_request({18, 3, 1, "x"}, api_versions_request{});
  const auto produce = *encode_request({0, 9, 2, "x"}, produce_of(batch));
  two.insert(two.end(), produce.begin(), produce.end());
  c.send(two);  // both in one write
  auto answer = c.frame();
  REQUIRE(answer.has_value());
  codec::message_reader rd(*answer, "response");
  auto h = read_response_header(rd, api_key::api_versions, 3);
  REQUIRE_OK(h);
  CHECK(h->correlation_id == 1);
  CHECK(c.closed_by_peer());
  CHECK(r.high_watermark() == offset(0));
}

TEST_CASE("held answers keep their connection's request order", "[testing][faulty_handler]") {
  rig r;
  r.faults.set_latency(api_key::metadata, 30ms);  // later requests are ready first
  wire_client c(r.tcp.port());
  std::vector<std::byte> all;
  for (std::int32_t corr = 1; corr <= 6; ++corr) {
    const auto f = corr % 2 == 1 ? *encode_request({3, 4, corr, "x"}, metadata_request{})
                                 : *encode_request({18, 3, corr, "x"}, api_versions_request{});
    all.insert(all.end(), f.begin(), f.end());
  }
  c.send(all);
  for (std::int32_t corr = 1; corr <= 6; ++corr) {
    auto f = c.frame();
    REQUIRE(f.has_value());
    codec::message_reader rd(*f, "response");
    auto h = read_response_header(rd, corr % 2 == 1 ? api_key::metadata : api_key::api_versions,
                                  corr % 2 == 1 ? std::int16_t{4} : std::int16_t{3});
    REQUIRE_OK(h);
    CHECK(h->correlation_id == corr);
  }
}

TEST_CASE("kcat retries a Produce through pushed errors", "[testing][faulty_handler][kcat]") {
  if (std::system("command -v kcat >/dev/null 2>&1") != 0)
    FAIL("kcat is not installed: run ./scripts/deps.sh (Debian package kcat)");
  rig r;
  r.faults.push_errors(api_key::produce, {errc::not_leader_or_follower, errc::request_timed_out});
  const std::string cmd = fmt::format(
      "printf 'one\\n' | timeout 60 kcat -b 127.0.0.1:{} -P -t t -p 0 -X acks=all -X retry.backoff.ms=10 "
      "-X message.timeout.ms=30000 >/dev/null 2>&1",
      r.tcp.port());
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(r.high_watermark() == offset(1));  // delivered once, after two failures
  CHECK(r.faults.faults(api_key::produce) == 2);
  CHECK(r.faults.requests(api_key::produce) == 3);
}

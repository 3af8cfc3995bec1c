// The TCP server on loopback port 0 with a test handler: order, back-pressure, what closes a
// connection, limits, disconnects and stop with answers outstanding. Waits are bounded
// (socket timeouts, a deadline loop) so a failure cannot hang; nothing asserts on time.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <brook/server/tcp_server.hpp>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/wire_bytes.hpp"
#include "support/wire_client.hpp"

using namespace brook;
using namespace brook::protocol;
using namespace brook::server;
using brook::test::bytes_of;
using brook::test::eventually;

namespace {

const served_apis& table() {
  static const served_apis t({{api_key::api_versions, codec::between(0, 3)},
                              {api_key::heartbeat, codec::between(0, 4)},
                              {api_key::produce, codec::between(3, 11)}});
  return t;
}

/// Answers ApiVersions at once; holds Heartbeat replies for the test to release; answers
/// Produce with nothing when acks=0, by closing the connection when acks=2, and with an
/// empty response otherwise.
class test_handler : public request_handler {
 public:
  void handle(incoming_request q, reply done) override {
    const auto corr = q.header.correlation_id;
    const auto v = q.header.api_version;
    if (std::holds_alternative<api_versions_request>(q.body)) {
      done(*encode_response(corr, table().api_versions_answer(), v));
    } else if (const auto* p = std::get_if<produce_request>(&q.body)) {
      if (p->acks == 0) return done(std::nullopt);
      if (p->acks == 2) return done.close();  // this test's way to ask for a close
      done(*encode_response(corr, produce_response{}, v));
    } else {
      std::lock_guard lock(mu_);
      held_.push_back({corr, v, std::move(done)});
      cv_.notify_all();
    }
  }
  /// Waits (bounded) until `n` heartbeats are held.
  bool wait_held(std::size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return held_.size() >= n; });
  }
  /// Answers held heartbeat `i` (in arrival order).
  void release(std::size_t i) {
    std::unique_lock lock(mu_);
    auto h = std::move(held_.at(i));
    lock.unlock();
    h.done(*encode_response(h.corr, heartbeat_response{}, h.version));
  }
  std::size_t held() {
    std::lock_guard lock(mu_);
    return held_.size();
  }
  /// Whether held heartbeat `i` was abandoned (its connection closed first).
  bool abandoned(std::size_t i) {
    std::lock_guard lock(mu_);
    return held_.at(i).done.abandoned();
  }
  /// Counts the abandon hooks of held heartbeat `i` that ran.
  void watch(std::size_t i, std::atomic<int>& hooks) {
    std::lock_guard lock(mu_);
    held_.at(i).done.on_abandon([&hooks] { ++hooks; });
  }

 private:
  struct holding {
    std::int32_t corr;
    std::int16_t version;
    reply done;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<holding> held_;
};

using client = brook::test::wire_client;

std::int32_t correlation_of(const std::vector<std::byte>& frame) { return brook::detail::load_be32(frame.data()); }

std::vector<std::byte> heartbeat(std::int32_t corr) {
  return *encode_request({12, 4, corr, "c"}, heartbeat_request{"g", generation_id{1}, "m"});
}
std::vector<std::byte> api_versions(std::int32_t corr) {
  return *encode_request({18, 3, corr, "c"}, api_versions_request{"brook-test", "1"});
}

}  // namespace

TEST_CASE("pipelined requests are answered in request order whatever order the handler answers in",
          "[server][tcp_server]") {
  test_handler h;
  tcp_server s(h, table(), {.network_threads = 2});
  REQUIRE_OK(s.start());
  REQUIRE(s.port() != 0);
  client c(s.port());
  std::vector<std::byte> all;
  for (std::int32_t i = 0; i < 3; ++i) {
    auto f = heartbeat(10 + i);
    all.insert(all.end(), f.begin(), f.end());
  }
  auto av = api_versions(13);
  all.insert(all.end(), av.begin(), av.end());
  c.send(all);
  REQUIRE(h.wait_held(3));
  h.release(2);
  h.release(1);
  h.release(0);
  for (std::int32_t i = 0; i < 4; ++i) {
    auto f = c.frame();
    REQUIRE(f);
    CHECK(correlation_of(*f) == 10 + i);
  }
}

TEST_CASE("a bad frame closes its connection only and acks=0 gets no answer", "[server][tcp_server]") {
  test_handler h;
  tcp_server s(h, table());
  REQUIRE_OK(s.start());
  client bad(s.port());
  client good(s.port());
  bad.send(bytes_of({0xff, 0xff, 0xff, 0xfe}));
  CHECK(bad.closed_by_peer());
  produce_request p;
  p.acks = 0;
  good.send(*encode_request({0, 9, 1, "c"}, p));
  good.send(api_versions(2));
  auto f = good.frame();
  REQUIRE(f);
  CHECK(correlation_of(*f) == 2);  // the produce got nothing
  // An unknown key and a body cut short close too.
  client unknown(s.port());
  unknown.send(bytes_of({0, 0, 0, 10, 0, 99, 0, 0, 0, 0, 0, 1, 0xff, 0xff}));
  CHECK(unknown.closed_by_peer());
  good.send(api_versions(3));
  f = good.frame();
  REQUIRE(f);
  CHECK(correlation_of(*f) == 3);
}

TEST_CASE("a handler's close comes after the earlier answers", "[server][tcp_server]") {
  test_handler h;
  tcp_server s(h, table());
  REQUIRE_OK(s.start());
  client c(s.port());
  produce_request p;
  p.acks = 2;
  c.send(api_versions(1));
  c.send(*encode_request({0, 9, 2, "c"}, p));
  c.send(api_versions(3));
  auto f = c.frame();
  REQUIRE(f);
  CHECK(correlation_of(*f) == 1);
  CHECK(c.closed_by_peer());  // and nothing for the request after the close
  REQUIRE(eventually([&] { return s.connections() == 0; }));
}

TEST_CASE("idle connections close and past max_connections new ones are refused", "[server][tcp_server]") {
  test_handler h;
  tcp_server s(h, table(), {.max_connections = 2, .idle_timeout = std::chrono::milliseconds(300)});
  REQUIRE_OK(s.start());
  client a(s.port());
  client b(s.port());
  a.send(api_versions(1));
  b.send(api_versions(1));
  REQUIRE(a.frame());
  REQUIRE(b.frame());
  client third(s.port());
  CHECK(third.closed_by_peer());
  // Nothing more is sent: both are closed for idleness, and a new one is admitted.
  CHECK(a.closed_by_peer());
  CHECK(b.closed_by_peer());
  REQUIRE(eventually([&] { return s.connections() == 0; }));
  client d(s.port());
  d.send(api_versions(4));
  auto f = d.frame();
  REQUIRE(f);
  CHECK(correlation_of(*f) == 4);
}

TEST_CASE("answers to a closed connection and after stop are dropped", "[server][tcp_server]") {
  test_handler h;
  {
    tcp_server s(h, table());
    REQUIRE_OK(s.start());
    std::atomic<int> hooks{0};
    {
      client c(s.port());
      c.send(heartbeat(1));
      REQUIRE(h.wait_held(1));
      CHECK_FALSE(h.abandoned(0));
      h.watch(0, hooks);
    }  // the client disconnects with its request outstanding
    REQUIRE(eventually([&] { return s.connections() == 0; }));
    CHECK(h.abandoned(0));  // the handler can learn it and drop its wait
    CHECK(hooks.load() == 1);
    h.release(0);  // to a closed connection: dropped
    client c2(s.port());
    c2.send(heartbeat(2));
    REQUIRE(h.wait_held(2));
    s.stop();  // with the second outstanding
    CHECK(c2.closed_by_peer());
  }
  h.release(1);  // after the server is gone: dropped, nothing crashes
  CHECK(h.held() == 2);
}

TEST_CASE("a server cannot listen on an address that is not one", "[server][tcp_server]") {
  test_handler h;
  tcp_server s(h, table(), {.host = "not an address"});
  auto r = s.start();
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::invalid_config);
}

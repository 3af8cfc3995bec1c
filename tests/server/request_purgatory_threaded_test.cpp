// server/request_purgatory: parked operations complete on a change, expire at their
// deadline, are dropped when abandoned and expire when the purgatory stops. Waits are
// bounded; nothing asserts on time.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <brook/core/notifier.hpp>
#include <brook/server/request_purgatory.hpp>

using namespace brook;
using namespace brook::server;
using namespace std::chrono_literals;

namespace {

/// Completes once `ready` is set; counts how it ended.
struct counting_op : request_purgatory::operation {
  std::atomic<bool> ready{false};
  std::atomic<int> tries{0}, completed{0}, expired{0};
  bool try_complete() override {
    ++tries;
    if (!ready.load()) return false;
    ++completed;
    return true;
  }
  void expire() override { ++expired; }
};

template <typename Pred>
bool eventually(Pred p) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!p()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

reply no_reply(std::shared_ptr<answer_watch> w = {}) {
  return reply([](std::optional<protocol::response_frame>) {}, std::move(w));
}

}  // namespace

TEST_CASE("a parked operation completes when the notifier moves", "[server][purgatory]") {
  notifier n;
  request_purgatory p(n);
  auto op = std::make_shared<counting_op>();
  p.park(op, std::chrono::steady_clock::now() + 60s, no_reply());
  REQUIRE(eventually([&] { return p.parked() == 1; }));
  n.notify();  // not ready yet: tried again, still parked
  REQUIRE(eventually([&] { return op->tries.load() >= 2; }));
  CHECK(p.parked() == 1);
  op->ready = true;
  n.notify();
  REQUIRE(eventually([&] { return op->completed.load() == 1; }));
  CHECK(eventually([&] { return p.parked() == 0; }));
  CHECK(op->expired.load() == 0);
}

TEST_CASE("an operation ready when parked completes at once", "[server][purgatory]") {
  notifier n;
  request_purgatory p(n);
  auto op = std::make_shared<counting_op>();
  op->ready = true;
  p.park(op, std::chrono::steady_clock::now() + 60s, no_reply());
  REQUIRE(eventually([&] { return op->completed.load() == 1; }));
  CHECK(p.parked() == 0);
}

TEST_CASE("a parked operation expires at its deadline", "[server][purgatory]") {
  notifier n;
  request_purgatory p(n);
  auto op = std::make_shared<counting_op>();
  p.park(op, std::chrono::steady_clock::now() + 20ms, no_reply());
  REQUIRE(eventually([&] { return op->expired.load() == 1; }));
  CHECK(eventually([&] { return p.parked() == 0; }));
  CHECK(op->completed.load() == 0);
}

TEST_CASE("an abandoned operation is dropped without an answer", "[server][purgatory]") {
  notifier n;
  request_purgatory p(n);
  auto op = std::make_shared<counting_op>();
  auto watch = std::make_shared<answer_watch>();
  p.park(op, std::chrono::steady_clock::now() + 60s, no_reply(watch));
  REQUIRE(eventually([&] { return p.parked() == 1; }));
  watch->abandon();
  REQUIRE(eventually([&] { return p.parked() == 0; }));
  CHECK(op->expired.load() == 0);
  CHECK(op->completed.load() == 0);
  CHECK(op.use_count() == 1);  // the purgatory let go of it
}

TEST_CASE("stop expires every parked operation and later ones at once", "[server][purgatory]") {
  notifier n;
  request_purgatory p(n);
  std::vector<std::shared_ptr<counting_op>> ops;
  for (int i = 0; i < 10; ++i) {
    ops.push_back(std::make_shared<counting_op>());
    p.park(ops.back(), std::chrono::steady_clock::now() + 60s, no_reply());
  }
  p.stop();
  for (const auto& op : ops) CHECK(op->expired.load() == 1);
  auto late = std::make_shared<counting_op>();
  p.park(late, std::chrono::steady_clock::now() + 60s, no_reply());
  CHECK(late->expired.load() == 1);
  n.notify();  // no listener any more
  p.stop();    // idempotent
}

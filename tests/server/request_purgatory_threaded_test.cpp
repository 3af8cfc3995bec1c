// server/request_purgatory: parked operations complete on a change, expire at their
// deadline, are dropped when abandoned and expire when the purgatory stops; the purgatory
// listens to the notifier only while something is parked, and a change racing a park is
// never lost. Waits are bounded; nothing asserts on time.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <brook/core/notifier.hpp>
#include <brook/server/request_purgatory.hpp>

#include "support/eventually.hpp"
#include "support/seeds.hpp"

using namespace brook;
using namespace brook::server;
using namespace std::chrono_literals;
using brook::test::eventually;

namespace {

/// Spins `n` times: a pause of a few nanoseconds each that no sleep can make this short.
void spin(int n) {
  std::atomic<int> spun{0};
  while (spun.fetch_add(1, std::memory_order_relaxed) < n) {
  }
}

/// Completes once `ready` is set; counts how it ended. A try that finds it not ready sets
/// `looked` and spins `linger` times before it says so.
struct counting_op : request_purgatory::operation {
  std::atomic<bool> ready{false}, looked{false};
  std::atomic<int> tries{0}, completed{0}, expired{0};
  int linger = 0;
  bool try_complete() override {
    ++tries;
    if (!ready.load()) {
      looked = true;
      spin(linger);
      return false;
    }
    ++completed;
    return true;
  }
  void expire() override { ++expired; }
};

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

TEST_CASE("the purgatory listens to the notifier only while something is parked", "[server][purgatory]") {
  notifier n;
  request_purgatory p(n);
  CHECK_FALSE(p.listening());
  n.notify();  // nothing parked: nothing to call
  auto op = std::make_shared<counting_op>();
  auto watch = std::make_shared<answer_watch>();
  p.park(op, std::chrono::steady_clock::now() + 60s, no_reply(watch));
  REQUIRE(eventually([&] { return p.parked() == 1 && p.listening(); }));

  SECTION("until it completes") {
    op->ready = true;
    n.notify();
    REQUIRE(eventually([&] { return op->completed.load() == 1; }));
  }
  SECTION("until it expires") {
    auto soon = std::make_shared<counting_op>();
    p.park(soon, std::chrono::steady_clock::now() + 10ms, no_reply());
    REQUIRE(eventually([&] { return soon->expired.load() == 1; }));
    CHECK(p.listening());  // op is still parked
    watch->abandon();
  }
  SECTION("until it is abandoned") { watch->abandon(); }
  SECTION("until the purgatory stops") {
    p.stop();
    CHECK(op->expired.load() == 1);
  }
  CHECK(eventually([&] { return p.parked() == 0 && !p.listening(); }));

  auto at_once = std::make_shared<counting_op>();  // ready when parked: listens for its try only
  at_once->ready = true;
  p.park(at_once, std::chrono::steady_clock::now() + 60s, no_reply());
  REQUIRE(eventually([&] { return at_once->completed.load() + at_once->expired.load() == 1; }));
  CHECK(eventually([&] { return p.parked() == 0 && !p.listening(); }));
}

TEST_CASE("park append and wake many times while the listener comes and goes", "[server][purgatory][seeded]") {
  // Each round parks a few operations the way the broker does (look, find nothing, park)
  // while another thread "appends" (makes them ready, then notifies) a random number of
  // spins after it starts or after the first operation's first try found it not ready:
  // before the broker's look, between that look and the listener's registration, just
  // after the purgatory's first try (which lingers, as a slow read would), or later. A lost
  // wakeup leaves an operation parked until its 60 s deadline, which eventually() reports.
  const auto seed = brook::test::property_seed(0x70757267);
  INFO("seed " << seed << " (" << brook::test::seed_base_hint() << ")");
  std::mt19937_64 rng(seed);
  notifier n;
  request_purgatory p(n);
  for (int round = 0; round < 500; ++round) {
    INFO("round " << round);
    std::vector<std::shared_ptr<counting_op>> ops(1 + rng() % 3);
    for (auto& op : ops) op = std::make_shared<counting_op>();
    const bool after_first_try = rng() % 2 == 0;
    ops[0]->linger = static_cast<int>(rng() % 2000);
    const auto spins = static_cast<int>(rng() % (after_first_try ? 100 : 2000));
    std::atomic<bool> running{false};
    std::thread appender([&, spins] {
      running = true;
      for (int i = 0; after_first_try && !ops[0]->looked.load(); ++i)
        if (i > 10'000) std::this_thread::yield();  // spins first: a yield is longer than the window
      spin(spins);
      for (auto& op : ops) op->ready = true;  // the data, then the notify
      n.notify();
    });
    while (!running) std::this_thread::yield();  // so that a thread's start does not delay the append
    std::vector<std::shared_ptr<counting_op>> parked;
    for (auto& op : ops) {
      if (op->ready.load()) continue;  // the broker's own look: it answers without parking
      p.park(op, std::chrono::steady_clock::now() + 60s, no_reply());
      parked.push_back(op);
    }
    appender.join();
    for (const auto& op : parked) REQUIRE(eventually([&] { return op->completed.load() == 1; }));
    REQUIRE(eventually([&] { return p.parked() == 0 && !p.listening(); }));
    for (const auto& op : parked) CHECK(op->expired.load() == 0);
  }
}

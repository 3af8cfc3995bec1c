// core/notifier: blocking waits and listeners, across threads. Waits are bounded so that a
// lost wake-up fails the test instead of hanging it; nothing asserts on time.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include <brook/core/notifier.hpp>

using namespace brook;
using namespace std::chrono_literals;

TEST_CASE("a blocked wait wakes when the sequence moves", "[core][notifier]") {
  notifier n;
  const auto seen = n.sequence();
  std::thread t([&] {
    std::this_thread::sleep_for(10ms);
    n.notify();
  });
  CHECK(n.wait(seen, std::chrono::steady_clock::now() + 10s));
  t.join();
  CHECK_FALSE(n.wait(n.sequence(), std::chrono::steady_clock::now() + 1ms));
}

TEST_CASE("listeners hear every notify until removed", "[core][notifier]") {
  notifier n;
  std::atomic<int> a{0}, b{0};
  const auto ida = n.add_listener([&] { ++a; });
  const auto idb = n.add_listener([&] { ++b; });
  std::thread t([&] {
    for (int i = 0; i < 1000; ++i) n.notify();
  });
  t.join();
  CHECK(a.load() == 1000);
  CHECK(b.load() == 1000);
  n.remove_listener(ida);
  n.notify();
  CHECK(a.load() == 1000);
  CHECK(b.load() == 1001);
  n.remove_listener(idb);
  n.remove_listener(idb);  // twice: nothing
  n.notify();
  CHECK(b.load() == 1001);
}

TEST_CASE("a listener added while another thread notifies misses nothing after it", "[core][notifier]") {
  notifier n;
  std::atomic<bool> stop{false};
  std::thread t([&] {
    while (!stop.load()) n.notify();
  });
  std::atomic<std::uint64_t> last{0};
  const auto id = n.add_listener([&] { last.store(n.sequence()); });
  const auto after = n.sequence();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (last.load() <= after && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  stop = true;
  t.join();
  n.remove_listener(id);
  CHECK(last.load() > after);
}

// A bounded wait for a condition another thread makes true: a test's way to wait, never a
// timing assertion.
//
//   REQUIRE(brook::test::eventually([&] { return server.connections() == 0; }));
//
// Thread-safety: a free function; `cond` must be safe to call from the waiting thread.
#pragma once

#include <chrono>
#include <thread>

namespace brook::test {

/// Whether `cond` holds within `limit` (checked every 2 ms).
template <typename Cond>
bool eventually(Cond cond, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace brook::test

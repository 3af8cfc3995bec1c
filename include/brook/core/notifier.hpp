// A sequence number that waiters can block on: "tell me when anything changed".
// Appends bump it; consumers waiting on many partitions at once wait for it to move
// past the value they last saw, then re-check what they care about. No polling:
// waiting is a condition variable, and notify() takes the mutex only when someone waits
// or listens.
//
// A thread that must not block (a network thread, an event loop) adds a listener instead:
// notify() calls it after each bump, on the notifying thread and under the notifier's
// mutex, so a listener only hands the news on (posts to its loop, sets a flag): it must not
// block, and must not call notify(), wait() or the listener functions (sequence() is
// fine). remove_listener() returns only once no call of that listener is running.
//
// A notifier must outlive every notify() in progress: a wait() that returned does not
// mean that the notify() which woke it has returned.
//
//   auto id = n.add_listener([&] { asio::post(loop, recheck); });
//   ...
//   n.remove_listener(id);
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include <brook/core/adaptive_mutex.hpp>

namespace brook {

class notifier {
 public:
  using listener = std::function<void()>;

  std::uint64_t sequence() const noexcept { return seq_.load(std::memory_order_seq_cst); }

  // The bump and the waiter count are seq_cst on both sides (notify: bump then load
  // waiters; wait and add_listener: count itself then load the sequence), so no wakeup is
  // lost.
  void notify() noexcept {
    seq_.fetch_add(1, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) > 0) {
      {
        // Taking mu_ orders this after any waiter's predicate check: a waiter that saw the
        // old sequence holds mu_ until it is blocked on cv_ (releasing mu_ and blocking are
        // one step to a notifier), so it is blocked before this notifies.
        std::lock_guard lk(mu_);
        for (const auto& l : listeners_) l.second();
      }
      // Outside mu_: a waiter woken under it would at once block on mu_, and need a second
      // wake-up when it is released.
      cv_.notify_all();
    }
  }

  /// Blocks until sequence() != seen or the deadline passes. Returns whether it moved.
  bool wait(std::uint64_t seen, std::chrono::steady_clock::time_point deadline) {
    if (sequence() != seen) return true;
    std::unique_lock lk(mu_);
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    bool moved = cv_.wait_until(lk, deadline, [&] { return sequence() != seen; });
    waiters_.fetch_sub(1, std::memory_order_seq_cst);
    return moved;
  }

  /// Calls `l` after every notify() from now on, until remove_listener(id).
  std::uint64_t add_listener(listener l) {
    std::lock_guard lk(mu_);
    waiters_.fetch_add(1, std::memory_order_seq_cst);  // a listener counts as a waiter
    listeners_.emplace_back(++next_listener_, std::move(l));
    return next_listener_;
  }
  /// Stops calling listener `id`; a call in progress has finished when this returns.
  void remove_listener(std::uint64_t id) {
    std::lock_guard lk(mu_);
    for (auto it = listeners_.begin(); it != listeners_.end(); ++it) {
      if (it->first != id) continue;
      listeners_.erase(it);
      waiters_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
  }

 private:
  std::atomic<std::uint64_t> seq_{0};
  std::atomic<int> waiters_{0};  // blocked waiters plus listeners
  adaptive_mutex mu_;
  std::condition_variable_any cv_;
  std::vector<std::pair<std::uint64_t, listener>> listeners_;  // under mu_
  std::uint64_t next_listener_ = 0;                            // under mu_
};

}  // namespace brook

// A sequence number that waiters can block on: "tell me when anything changed".
// Appends bump it; consumers waiting on many partitions at once wait for it to move
// past the value they last saw, then re-check what they care about. No polling:
// waiting is a condition variable, and notify() takes the mutex only when someone waits.
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace brook {

class notifier {
 public:
  std::uint64_t sequence() const noexcept { return seq_.load(std::memory_order_seq_cst); }

  // The bump and the waiter count are seq_cst on both sides (notify: bump then load
  // waiters; wait: count itself then load the sequence), so no wakeup is lost.
  void notify() noexcept {
    seq_.fetch_add(1, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard lk(mu_); }
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

 private:
  std::atomic<std::uint64_t> seq_{0};
  std::atomic<int> waiters_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace brook

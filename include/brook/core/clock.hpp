// The clock every time-dependent part of brook reads: segment rolling by age,
// retention, flush by time, LogAppendTime, and later session timeouts.
// Injectable so tests drive time deterministically instead of sleeping.
//
// brook takes a clock as std::shared_ptr<const clock>. A virtual call per
// batch or per timer check costs nothing measurable next to the I/O it gates.
//
// Thread-safety: now_ms() is thread-safe for both implementations here;
// manual_clock::advance/set may race with readers (atomic).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include <brook/core/types.hpp>

namespace brook {

class clock {
 public:
  virtual ~clock() = default;
  /// Milliseconds since the Unix epoch.
  virtual timestamp_ms now_ms() const = 0;
};

/// Wall-clock time (std::chrono::system_clock), as Kafka timestamps are.
class system_clock final : public clock {
 public:
  timestamp_ms now_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

/// A clock that moves only when told to. For tests and simulations.
class manual_clock final : public clock {
 public:
  explicit manual_clock(timestamp_ms start = 1'700'000'000'000) : now_(start) {}
  timestamp_ms now_ms() const override { return now_.load(std::memory_order_acquire); }
  void set(timestamp_ms t) { now_.store(t, std::memory_order_release); }
  void advance(std::int64_t ms) { now_.fetch_add(ms, std::memory_order_acq_rel); }

 private:
  std::atomic<timestamp_ms> now_;
};

inline std::shared_ptr<const clock> make_system_clock() { return std::make_shared<system_clock>(); }

}  // namespace brook

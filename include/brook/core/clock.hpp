// The clock every time-dependent part of brook reads: segment rolling by age,
// retention, flush by time, LogAppendTime, and later session timeouts.
// Injectable so tests drive time deterministically instead of sleeping
// (brook/testing/manual_clock.hpp).
//
// brook takes a clock as std::shared_ptr<const clock>. A virtual call per
// batch or per timer check costs nothing measurable next to the I/O it gates.
//
// Thread-safety: implementations' now_ms() must be thread-safe; system_clock's is.
#pragma once

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

inline std::shared_ptr<const clock> make_system_clock() { return std::make_shared<system_clock>(); }

}  // namespace brook

// A clock (core/clock.hpp) that moves only when told to: tests and simulations drive time
// deterministically instead of sleeping.
//
//   auto clk = std::make_shared<brook::testing::manual_clock>();
//   data_dir_options o;
//   o.defaults.clock = clk;
//   clk->advance(60'000);   // a minute passes
//
// Part of the opt-in testing/ layer: the library never includes it.
// Thread-safety: thread-safe; advance/set race with readers harmlessly (atomic).
#pragma once

#include <atomic>
#include <cstdint>

#include <brook/core/clock.hpp>
#include <brook/core/types.hpp>

namespace brook::testing {

class manual_clock final : public clock {
 public:
  explicit manual_clock(timestamp_ms start = 1'700'000'000'000) : now_(start) {}
  timestamp_ms now_ms() const override { return now_.load(std::memory_order_acquire); }
  void set(timestamp_ms t) { now_.store(t, std::memory_order_release); }
  void advance(std::int64_t ms) { now_.fetch_add(ms, std::memory_order_acq_rel); }

 private:
  std::atomic<timestamp_ms> now_;
};

}  // namespace brook::testing

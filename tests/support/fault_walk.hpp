// The driver of the seeded disk-fault scenarios (tests/storage/disk_fault_scenario_test.cpp,
// data_dir_fault_scenario_test.cpp, replication/metadata_log_fault_scenario_test.cpp): for
// each seed, one fault-free run counts the workload's mutating I/O calls, then the workload
// runs again once for every N with the Nth call failing. Each run reports what it saw.
//
//   BROOK_FAULT_SEED=7      run that seed only
//   BROOK_FAULT_SEEDS=50    run seeds base+1..base+50 (base: BROOK_SEED_BASE, support/seeds.hpp)
//
// Thread-safety: call from the test's main thread (it uses Catch's macros).
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "support/crash_helpers.hpp"
#include "support/seeds.hpp"

namespace brook::test {

/// What one run of a workload saw.
struct fault_run {
  std::string failure;  ///< empty when every check held
  std::uint64_t mutations = 0;
  bool faulted = false;  ///< an injected error reached the workload
};

/// How a run names its failure: "seed S fault at call N (ENOSPC, sticky): what".
inline std::string fault_failure(std::uint64_t seed, std::uint64_t nth, int err, bool sticky, const std::string& what) {
  return fmt::format("seed {} fault at call {} ({}, {}): {}", seed, nth, err == ENOSPC ? "ENOSPC" : "EIO",
                     sticky ? "sticky" : "once", what);
}

/// Calls run(seed, 0), then run(seed, n) for n = 1 .. its mutations + 1, for every seed; fails
/// the test case on any failure (the first ten are printed) and unless more than half of the
/// runs met an injected error (the faults really landed on the workload).
template <typename Run>
void walk_every_fault(Run&& run, std::int64_t default_seeds) {
  const auto one = env_int("BROOK_FAULT_SEED");
  const auto seeds = env_int("BROOK_FAULT_SEEDS").value_or(default_seeds);
  const std::uint64_t base = seed_base();
  std::size_t cases = 0, faulted = 0, failed = 0;
  const std::uint64_t first = one ? static_cast<std::uint64_t>(*one) : base + 1;
  const std::uint64_t last = one ? first : base + static_cast<std::uint64_t>(seeds);
  for (std::uint64_t seed = first; seed <= last; ++seed) {
    const fault_run clean = run(seed, 0);
    INFO("fault-free run of seed " << seed);
    REQUIRE(clean.failure == "");
    REQUIRE_FALSE(clean.faulted);
    REQUIRE(clean.mutations > 20);
    for (std::uint64_t n = 1; n <= clean.mutations + 1; ++n) {
      const fault_run r = run(seed, n);
      ++cases;
      if (r.faulted) ++faulted;
      if (!r.failure.empty() && ++failed <= 10) FAIL_CHECK(r.failure);
    }
  }
  INFO(cases << " cases, " << faulted << " saw an error");
  CHECK(failed == 0);
  CHECK(faulted > cases / 2);
}

}  // namespace brook::test

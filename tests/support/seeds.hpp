// Seeds for every seeded test, so that each run is reproducible and fresh seeds are one
// variable away.
//
// BROOK_SEED_BASE (default 0) shifts every seed the tests use: a scenario that runs seeds
// 1..n runs base+1..base+n, and a property test that draws one seed draws base+salt. So the
// default run (CI) always covers the same cases, and
//   BROOK_SEED_BASE=$RANDOM ctest --preset release
// covers new ones. A failure prints its seed and the variables that replay it (see
// replay_hint), which ctest --output-on-failure and scripts/test.sh then show.
//
// Thread-safety: the functions are pure reads of the environment; call from any thread.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

namespace brook::test {

/// BROOK_SEED_BASE as an unsigned integer; 0 when unset or not a number.
inline std::uint64_t seed_base() {
  const char* e = std::getenv("BROOK_SEED_BASE");
  if (e == nullptr || *e == '\0') return 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(e, &end, 10);
  return end != e && *end == '\0' ? static_cast<std::uint64_t>(v) : 0;
}

/// The one seed of a property test: seed_base() + salt (a constant per test, so that two
/// tests of one file do not draw the same stream).
inline std::uint64_t property_seed(std::uint64_t salt) { return seed_base() + salt; }

/// "BROOK_SEED_BASE=<base>" when a base is set, else "" (the default seeds): what to put in
/// front of a replay command.
inline std::string seed_base_hint() {
  const auto b = seed_base();
  return b == 0 ? std::string() : "BROOK_SEED_BASE=" + std::to_string(b) + " ";
}

}  // namespace brook::test

// FUZZ_CHECK(cond): a fuzz invariant. When it does not hold, names it on stderr and aborts, so
// libFuzzer reports the input as a crash and the corpus replay ctest fails.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

// BROOK_ASSERT: invariant checks for programmer errors (never for bad input,
// which gets a brook::error). Always on: a broken invariant in a log is worth
// a crash with context rather than silent corruption.
//
// Thread-safety: stateless.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace brook::detail {
[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "brook: assertion `%s` failed at %s:%d: %s\n", expr, file, line, msg.c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace brook::detail

/// Aborts with the condition, the place and a fmt-formatted message when `cond` is false.
#define BROOK_ASSERT(cond, ...)                                                            \
  do {                                                                                     \
    if (!(cond)) [[unlikely]]                                                              \
      ::brook::detail::assert_fail(#cond, __FILE__, __LINE__, ::fmt::format(__VA_ARGS__)); \
  } while (0)

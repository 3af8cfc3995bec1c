// What every test file may use to check brook's vocabulary: Catch prints strong ints,
// errors, error codes, uuids and topic-partitions in Kafka's text form, and REQUIRE_OK /
// CHECK_OK fail with the error's text instead of "false".
#pragma once

#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/core/error.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>

namespace Catch {
template <typename Tag, typename Rep>
struct StringMaker<brook::strong_int<Tag, Rep>> {
  static std::string convert(const brook::strong_int<Tag, Rep>& v) { return std::to_string(v.value()); }
};
template <>
struct StringMaker<brook::error> {
  static std::string convert(const brook::error& e) { return e.to_string(); }
};
template <>
struct StringMaker<brook::errc> {
  static std::string convert(brook::errc c) { return fmt::format("{}", c); }
};
template <>
struct StringMaker<brook::uuid> {
  static std::string convert(const brook::uuid& u) { return u.to_string(); }
};
template <>
struct StringMaker<brook::topic_partition> {
  static std::string convert(const brook::topic_partition& tp) { return fmt::format("{}", tp); }
};
}  // namespace Catch

// Bind by reference (a temporary lives to the end of the statement block), so results of
// move-only values (result<std::unique_ptr<T>>) can be checked in place.
#define REQUIRE_OK(expr)                                    \
  do {                                                      \
    const auto& _r = (expr);                                \
    if (!_r) FAIL(#expr << ": " << _r.error().to_string()); \
  } while (0)

#define CHECK_OK(expr)                                            \
  do {                                                            \
    const auto& _r = (expr);                                      \
    if (!_r) FAIL_CHECK(#expr << ": " << _r.error().to_string()); \
  } while (0)

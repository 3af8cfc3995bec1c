// result<T> and error: construction, access, value_or / and_then / transform on values
// and errors, comparison against errc, the propagation macros, fmt output, and the
// temporary that a range-for over `*f()` keeps alive.
#include <cerrno>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/core/result.hpp>

using brook::errc;
using brook::error;
using brook::make_error;
using brook::result;

namespace {

result<int> parse_positive(int v) {
  if (v <= 0) return make_error(errc::invalid_argument, "{} is not positive", v);
  return v;
}

result<std::vector<std::string>> names(bool ok) {
  if (!ok) return make_error(errc::unknown_topic_or_partition, "no such topic");
  return std::vector<std::string>{"a", "b", "c"};
}

result<int> doubled_via_try_assign(int v) {
  BROOK_TRY_ASSIGN(auto x, parse_positive(v));
  return x * 2;
}

result<void> check_via_try(int v) {
  BROOK_TRY(parse_positive(v));
  return brook::ok();
}

result<std::unique_ptr<int>> boxed(int v) {
  BROOK_TRY_ASSIGN(const int x, parse_positive(v));
  return std::make_unique<int>(x);
}

result<int> assign_existing(int v) {
  int out = -1;
  BROOK_TRY_ASSIGN(out, parse_positive(v));
  return out + 1;
}

}  // namespace

TEST_CASE("result holds a value or an error", "[core][result]") {
  auto good = parse_positive(3);
  REQUIRE(good.has_value());
  CHECK(static_cast<bool>(good));
  CHECK(*good == 3);
  CHECK(good.value() == 3);

  auto bad = parse_positive(-1);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error() == errc::invalid_argument);
  CHECK(bad.error().message() == "-1 is not positive");
  CHECK(bad.error().to_string() == "INVALID_ARGUMENT: -1 is not positive");
}

TEST_CASE("result compares against errc, and errc::none means a value", "[core][result]") {
  CHECK(parse_positive(1) == errc::none);
  CHECK(parse_positive(1) != errc::invalid_argument);
  CHECK(parse_positive(0) == errc::invalid_argument);
  CHECK(parse_positive(0) != errc::none);
  CHECK(parse_positive(0) != errc::timeout);
  CHECK(check_via_try(2) == errc::none);
  CHECK(check_via_try(-2) == errc::invalid_argument);
  const error e = make_error(errc::timeout, "waited");
  CHECK(e == errc::timeout);
  CHECK(e != errc::closed);
}

TEST_CASE("value_or gives the value or the fallback", "[core][result]") {
  CHECK(parse_positive(4).value_or(-7) == 4);
  CHECK(parse_positive(-4).value_or(-7) == -7);
  const auto kept = names(false);
  CHECK(kept.value_or(std::vector<std::string>{"x"}) == std::vector<std::string>{"x"});
  CHECK(names(true).value_or(std::vector<std::string>{}).size() == 3);
}

TEST_CASE("and_then chains on a value and passes an error through untouched", "[core][result]") {
  auto half = [](int v) -> result<int> {
    if (v % 2) return make_error(errc::invalid_argument, "{} is odd", v);
    return v / 2;
  };
  CHECK(*parse_positive(8).and_then(half) == 4);
  auto odd = parse_positive(7).and_then(half);
  REQUIRE_FALSE(odd);
  CHECK(odd.error().message() == "7 is odd");
  bool called = false;
  auto first_error = parse_positive(-8).and_then([&](int v) {
    called = true;
    return half(v);
  });
  CHECK_FALSE(called);
  CHECK(first_error.error().message() == "-8 is not positive");

  // result<void>::and_then takes no argument; an rvalue chain moves the value along.
  CHECK(*check_via_try(1).and_then([] { return parse_positive(5); }) == 5);
  CHECK(check_via_try(-1).and_then([] { return parse_positive(5); }) == errc::invalid_argument);
  auto moved = boxed(3).and_then([](std::unique_ptr<int> p) -> result<int> { return *p + 1; });
  CHECK(*moved == 4);
}

TEST_CASE("transform maps a value, including to void, and keeps an error", "[core][result]") {
  result<std::string> s = parse_positive(12).transform([](int v) { return std::to_string(v); });
  CHECK(*s == "12");
  result<std::string> e = parse_positive(-12).transform([](int v) { return std::to_string(v); });
  CHECK(e == errc::invalid_argument);
  int seen = 0;
  result<void> v = parse_positive(9).transform([&](int x) { seen = x; });
  CHECK(v == errc::none);
  CHECK(seen == 9);
  CHECK(check_via_try(1).transform([] { return 1.5; }).value() == 1.5);
  CHECK(check_via_try(-1).transform([] { return 1.5; }) == errc::invalid_argument);
  auto len = boxed(2).transform([](std::unique_ptr<int> p) { return *p * 10; });
  CHECK(*len == 20);
}

TEST_CASE("BROOK_TRY_ASSIGN declares or assigns the value, or returns the error", "[core][result]") {
  CHECK(*doubled_via_try_assign(21) == 42);
  auto bad = doubled_via_try_assign(-21);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message() == "-21 is not positive");
  CHECK(**boxed(5) == 5);  // move-only values move through
  CHECK(boxed(-5) == errc::invalid_argument);
  CHECK(*assign_existing(1) == 2);
  CHECK(assign_existing(0) == errc::invalid_argument);
}

TEST_CASE("a range-for over *f() iterates a live value", "[core][result]") {
  // value() && and operator* && return the value, which the range-for keeps alive; a
  // reference into the temporary result would dangle (ASan would report it here).
  std::string joined;
  for (const auto& n : *names(true)) joined += n;
  CHECK(joined == "abc");
  joined.clear();
  for (const auto& n : names(true).value()) joined += n;
  CHECK(joined == "abc");
  static_assert(std::is_same_v<decltype(*names(true)), std::vector<std::string>>);
  static_assert(std::is_same_v<decltype(std::declval<result<int>&>().value()), int&>);
}

TEST_CASE("errors and codes format with fmt", "[core][result]") {
  CHECK(fmt::format("{}", make_error(errc::corrupt_message, "x.log at byte 4")) == "CORRUPT_MESSAGE: x.log at byte 4");
  CHECK(fmt::format("{}", errc::record_too_large) == "MESSAGE_TOO_LARGE");
  CHECK(fmt::format("[{:>9}]", errc::closed) == "[   CLOSED]");
  const error os = brook::make_system_error(2, "open {}", "/nope");
  CHECK(fmt::format("{}", os) == os.message());  // OS errors carry their reason in the message
}

TEST_CASE("an OS error is Kafka's KAFKA_STORAGE_ERROR and keeps its errno", "[core][result]") {
  const error full = brook::make_system_error(ENOSPC, "pwrite {}", "/d/0.log");
  CHECK(full == errc::kafka_storage_error);
  CHECK_FALSE(full != errc::kafka_storage_error);
  CHECK(full != errc::corrupt_message);
  CHECK(full.code() == std::error_code(ENOSPC, std::system_category()));
  const result<int> r = full;
  CHECK(r == errc::kafka_storage_error);
  // A brook code is only itself.
  CHECK(make_error(errc::corrupt_message, "x") != errc::kafka_storage_error);
}

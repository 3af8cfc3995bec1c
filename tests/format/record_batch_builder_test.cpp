#include <catch2/catch.hpp>
#include <limits>
#include <vector>

#include <brook/format/record_batch_builder.hpp>

#include "support/checks.hpp"

using namespace brook;

TEST_CASE("the builder keeps the first timestamp as base and the largest as max", "[format][record_batch_builder]") {
  record_batch_builder b;
  b.append(2'000, "k", "a");
  b.append(1'000, "k", "b");  // deltas may be negative, as Java's
  b.append(3'000, "k", "c");
  auto v = record_batch_view::parse(b.finish());
  REQUIRE_OK(v);
  CHECK(v->header().base_timestamp == 2'000);
  CHECK(v->header().max_timestamp == 3'000);
  std::vector<timestamp_ms> seen;
  for (const record_view& r : *v) seen.push_back(r.timestamp());
  CHECK(seen == std::vector<timestamp_ms>{2'000, 1'000, 3'000});
  CHECK(v->timestamps().min == 1'000);
  CHECK(v->timestamps().max == 3'000);
}

// Issue 11 #15: `ts - base` overflowed (UB; the asan stage's UBSan aborts on it). The delta
// now wraps as Java's does, and the batch reads as corrupt (its timestamps overflow) rather
// than as records with made-up times.
TEST_CASE("timestamps INT64_MAX then INT64_MIN build without overflow", "[format][record_batch_builder]") {
  constexpr auto max = std::numeric_limits<timestamp_ms>::max();
  constexpr auto min = std::numeric_limits<timestamp_ms>::min();
  record_batch_builder b;
  b.append(max, "k", "a");
  b.append(min, "k", "b");
  auto bytes = b.finish();
  auto h = check_batch_header(bytes);
  REQUIRE_OK(h);
  CHECK(h->base_timestamp == max);
  CHECK(h->max_timestamp == max);
  auto v = record_batch_view::parse(bytes);
  REQUIRE_FALSE(v);
  CHECK(v.error() == errc::corrupt_message);
  CHECK_THAT(v.error().message(), Catch::Contains("overflows"));
}

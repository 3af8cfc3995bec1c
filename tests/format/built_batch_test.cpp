#include <catch2/catch.hpp>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <brook/format/built_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

#include "support/checks.hpp"
#include "support/seeds.hpp"

using namespace brook;

namespace {

/// One record a test appends: a timestamp and an optional key.
struct sample {
  timestamp_ms ts;
  std::optional<std::string> key;
};

/// Timestamps as producers and hostile hosts send them: -1 (none), ordinary times, other
/// negatives, and both ends of int64 (which wrap the deltas).
timestamp_ms draw_timestamp(std::mt19937_64& rng, bool extremes) {
  switch (rng() % (extremes ? 6 : 4)) {
    case 0: return no_timestamp;
    case 1: return -static_cast<timestamp_ms>(rng() % 1000) - 2;
    case 4: return std::numeric_limits<timestamp_ms>::max() - static_cast<timestamp_ms>(rng() % 3);
    case 5: return std::numeric_limits<timestamp_ms>::min() + static_cast<timestamp_ms>(rng() % 3);
    default: return 1'700'000'000'000 + static_cast<timestamp_ms>(rng() % 100'000) - 50'000;
  }
}

std::vector<sample> draw_samples(std::mt19937_64& rng, bool extremes) {
  std::vector<sample> out(1 + rng() % 30);
  for (auto& s : out) {
    s.ts = draw_timestamp(rng, extremes);
    if (rng() % 5 != 0) s.key = "k" + std::to_string(rng() % 100);
  }
  return out;
}

void append_all(record_batch_builder& b, const std::vector<sample>& samples) {
  const record_header h{"h", nullable_bytes(std::string_view("v"))};
  for (const auto& s : samples) {
    const nullable_bytes key = s.key ? nullable_bytes(std::string_view(*s.key)) : nullable_bytes::null();
    b.append(s.ts, key, "value",
             s.ts % 2 == 0 ? std::span<const record_header>(&h, 1) : std::span<const record_header>());
  }
}

}  // namespace

TEST_CASE("built_batch names the bytes finish returned and their facts", "[format][built_batch]") {
  record_batch_builder b;
  b.append(2'000, "k", "a");
  b.append(no_timestamp, nullable_bytes::null(), "b");
  b.append(1'000, "k", "c");
  const auto bytes = b.finish();
  const built_batch built = b.built();
  CHECK(built.bytes().data() == bytes.data());
  CHECK(built.bytes().size() == bytes.size());
  CHECK(built.trusted());
  CHECK(built.first_null_key() == 1);
  CHECK(built.timestamps().known);
  CHECK(built.timestamps().any);
  CHECK(built.timestamps().min == 1'000);
  CHECK(built.timestamps().max == 2'000);

  b.reset();  // a new batch forgets the old one's facts
  b.append(no_timestamp, "k", "d");
  b.finish();
  CHECK(b.built().first_null_key() == -1);
  CHECK_FALSE(b.built().timestamps().any);
  CHECK(b.built().timestamps().max == no_timestamp);
}

// The facts stand in for a walk of the records on append (storage/log_validator.hpp), so
// they must be exactly what the walk finds, whenever the builder says they can be trusted;
// and whenever the walk refuses the batch, the builder must not vouch for it.
TEST_CASE("built_batch facts are what a walk of the records finds", "[format][built_batch]") {
  const auto seed = brook::test::property_seed(11);
  std::mt19937_64 rng(seed);
  int trusted = 0, untrusted = 0;
  for (int i = 0; i < 400; ++i) {
    INFO("seed " << seed << " (" << brook::test::seed_base_hint() << ") case " << i);
    const auto samples = draw_samples(rng, i % 4 == 0);
    record_batch_builder b;
    append_all(b, samples);
    b.finish();
    const built_batch built = b.built();
    auto v = record_batch_view::parse(built.bytes());
    if (!built.trusted()) {
      ++untrusted;
      continue;  // the log walks it as any bytes; nothing is claimed
    }
    ++trusted;
    REQUIRE_OK(v);
    CHECK(v->timestamps().any == built.timestamps().any);
    if (built.timestamps().any) CHECK(v->timestamps().min == built.timestamps().min);
    CHECK(v->timestamps().max == built.timestamps().max);
    std::int32_t first_null = -1, k = 0;
    for (const record_view& r : *v) {
      if (r.key().is_null() && first_null < 0) first_null = k;
      ++k;
    }
    CHECK(built.first_null_key() == first_null);
  }
  CHECK(trusted > 300);
  CHECK(untrusted > 0);  // the extremes wrap some deltas
}

TEST_CASE("a built batch whose timestamp delta wraps is not trusted", "[format][built_batch]") {
  record_batch_builder b;
  b.append(no_timestamp, "k", "a");
  b.append(std::numeric_limits<timestamp_ms>::max(), "k", "b");  // delta 2^63: wraps
  b.finish();
  CHECK_FALSE(b.built().trusted());
  auto v = record_batch_view::parse(b.built().bytes());
  REQUIRE_FALSE(v);
  CHECK(v.error().code() == errc::corrupt_message);
}

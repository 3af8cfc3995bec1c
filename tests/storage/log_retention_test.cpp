#include <catch2/catch.hpp>

#include <chrono>

#include <brook/storage/log_retention.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using namespace std::chrono_literals;

namespace {
struct fixture {
  test::temp_dir t;
  log_config cfg;
  fixture() {
    cfg.segment_bytes = 1 << 16;
    cfg.segment_index_bytes = 4096;
  }
  std::vector<std::shared_ptr<segment>> segs(const std::vector<test::segment_spec>& specs) {
    return test::make_segments(t.path(), cfg, specs);
  }
  std::size_t past(const std::vector<std::shared_ptr<segment>>& s, offset log_start, timestamp_ms now) {
    auto r = segments_past_retention(s, log_start, cfg, now);
    REQUIRE_OK(r);
    return *r;
  }
};
}  // namespace

TEST_CASE("retention by time deletes the oldest expired segments and stops at a fresh one", "[storage][retention]") {
  fixture f;
  f.cfg.retention_time = 1000ms;
  // Largest timestamps: 1000, 5000, 1500 (older than the second!), 9000 (active).
  auto s = f.segs({{1, 1, 1000}, {1, 1, 5000}, {1, 1, 1500}, {1, 1, 9000}});
  CHECK(f.past(s, offset(0), 1900) == 0);   // nothing older than 1 s yet
  CHECK(f.past(s, offset(0), 2001) == 1);   // the first; the second is fresh and stops the walk
  CHECK(f.past(s, offset(0), 6001) == 3);   // up to the third
  CHECK(f.past(s, offset(0), 10001) == 4);  // every segment, the active one too (the log rolls)
}

TEST_CASE("retention by time keeps a segment whose timestamps lie in the future", "[storage][retention]") {
  fixture f;
  f.cfg.retention_time = 1000ms;
  auto s = f.segs({{1, 1, 50'000}, {1, 1, 1000}});
  CHECK(f.past(s, offset(0), 10'000) == 0);
}

TEST_CASE("retention.ms -1 keeps everything by time", "[storage][retention]") {
  fixture f;
  f.cfg.retention_time = log_config::keep_forever;
  auto s = f.segs({{1, 1, 1}, {1, 1, 2}});
  CHECK(f.past(s, offset(0), 1'000'000'000) == 0);
}

TEST_CASE("retention by size deletes while the rest still holds retention.bytes", "[storage][retention]") {
  fixture f;
  auto s = f.segs({{2, 1}, {2, 1}, {2, 1}, {2, 1}});
  const auto one = static_cast<std::int64_t>(s[0]->size());
  f.cfg.retention_bytes = 2 * one;
  CHECK(f.past(s, offset(0), 0) == 2);
  f.cfg.retention_bytes = 2 * one + 1;  // two segments are 1 byte short of it: keep three
  CHECK(f.past(s, offset(0), 0) == 1);
  f.cfg.retention_bytes = 4 * one;
  CHECK(f.past(s, offset(0), 0) == 0);
}

TEST_CASE("the log start offset deletes segments wholly below it, whatever the policy", "[storage][retention]") {
  fixture f;
  f.cfg.cleanup = cleanup_policy::compact;
  f.cfg.retention_time = 1ms;  // ignored: compact alone deletes nothing by time or size
  f.cfg.retention_bytes = 1;
  auto s = f.segs({{1, 3}, {1, 3}, {1, 3}});  // [0,3) [3,6) [6,9)
  CHECK(f.past(s, offset(0), 1'000'000) == 0);
  CHECK(f.past(s, offset(2), 1'000'000) == 0);
  CHECK(f.past(s, offset(3), 1'000'000) == 1);
  CHECK(f.past(s, offset(8), 1'000'000) == 2);
  CHECK(f.past(s, offset(9), 1'000'000) == 3);  // the active segment too: the log end moved past it
}

TEST_CASE("an empty active segment is never selected", "[storage][retention]") {
  fixture f;
  f.cfg.retention_time = 1ms;
  auto s = f.segs({{1, 1, 1000}, {0, 1}});
  CHECK(f.past(s, offset(1), 1'000'000) == 1);
}

// log_read: slices over a segment list (the segment holding the start, a start inside
// an offset gap, segments removed under the reader) and offsetsForTimes over segments.
#include <catch2/catch.hpp>

#include <brook/storage/log_read.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;

namespace {

// Segment A: offsets 0..5 in two batches of three, timestamps 1000.. and 1001..
// Segment B: offsets 6..11 the same way, timestamps 5000.. and 5001..
struct fixture {
  test::temp_dir t;
  log_config cfg = test::small_segment_config();
  segment_list list;
  fixture() {
    for (auto& s : test::make_segments(t.path(), cfg, {{2, 3, 1000}, {2, 3, 5000}})) list.push_back(s);
  }
  /// Instead: one batch of three records at each base (gaps between them, as compaction leaves).
  explicit fixture(std::initializer_list<std::int64_t> bases) {
    for (auto b : bases) list.push_back(test::make_segments(t.path(), cfg, {{1, 3}}, offset(b)).front());
  }
  log_slice read(offset start, offset bound, std::size_t max_bytes = 1 << 20) {
    auto s = read_segments(list, start, bound, max_bytes, t.path());
    REQUIRE_OK(s);
    return *s;
  }
  std::optional<timestamp_offset> by_time(timestamp_ms ts, offset log_start = offset(0), offset bound = offset(12)) {
    auto r = find_offset_by_timestamp(list.snapshot(), ts, log_start, bound);
    REQUIRE_OK(r);
    return *r;
  }
};

std::vector<std::int64_t> offsets(const log_slice& s) {
  std::vector<std::int64_t> out;
  REQUIRE_OK(s.for_each_record([&](const record_view& r) { out.push_back(r.offset().value()); }));
  return out;
}

}  // namespace

TEST_CASE("log_read: a slice starts at the batch holding the offset and stays in one segment", "[storage][log_read]") {
  fixture f;
  auto a = f.read(offset(4), offset(12));
  CHECK(offsets(a) == std::vector<std::int64_t>{4, 5});  // from the batch 3..5, records before 4 skipped
  CHECK(a.next_offset() == offset(6));
  auto b = f.read(offset(6), offset(12));
  CHECK(offsets(b) == std::vector<std::int64_t>{6, 7, 8, 9, 10, 11});
  auto bounded = f.read(offset(7), offset(9));  // the batch 9..11 reaches past the bound
  CHECK(offsets(bounded) == std::vector<std::int64_t>{7, 8});
  CHECK(bounded.next_offset() == offset(9));
}

TEST_CASE("log_read: a start inside an offset gap reads the next batch, as after compaction", "[storage][log_read]") {
  fixture f(/*bases=*/{0, 10});  // 0..2, then 10..12
  auto s = read_segments(f.list, offset(5), offset(13), 1 << 20, f.t.path());
  REQUIRE_OK(s);
  CHECK(s->start_offset() == offset(5));
  CHECK(s->next_offset() == offset(13));
  CHECK(offsets(*s) == std::vector<std::int64_t>{10, 11, 12});
}

TEST_CASE("log_read: segments removed under the reader are offset_out_of_range, never later records",
          "[storage][log_read]") {
  fixture f(/*bases=*/{10});  // only 10..12 is left
  auto s = read_segments(f.list, offset(4), offset(13), 1 << 20, f.t.path());
  REQUIRE_FALSE(s);
  CHECK(s.error() == errc::offset_out_of_range);
}

TEST_CASE("log_read: offsetsForTimes finds the first record at or after a timestamp", "[storage][log_read]") {
  fixture f;
  auto at = [&](timestamp_ms ts, offset log_start = offset(0), offset bound = offset(12)) -> std::int64_t {
    auto r = f.by_time(ts, log_start, bound);
    return r ? r->off.value() : -1;
  };
  CHECK(at(0) == 0);
  CHECK(at(1002) == 2);             // offset 2 (batch 0..2, timestamps 1000..1002)
  CHECK(at(1002, offset(3)) == 4);  // not below the log start: 3 has 1001, 4 has 1002
  CHECK(at(1004) == 6);             // past segment A's largest timestamp: segment B
  CHECK(at(5001) == 7);
  CHECK(at(5001, offset(0), offset(7)) == -1);  // 7 is the bound
  CHECK(at(9999) == -1);
  auto r = f.by_time(5002);
  REQUIRE(r);
  CHECK(r->timestamp == 5002);
}

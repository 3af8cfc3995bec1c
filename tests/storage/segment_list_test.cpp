#include <catch2/catch.hpp>

#include <brook/storage/segment_list.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;

namespace {
struct fixture {
  test::temp_dir t;
  log_config cfg;
  segment_list list;
  fixture() {
    cfg.segment_bytes = 1 << 16;
    cfg.segment_index_bytes = 4096;
    // Segments at 10, 13, 16 (3 records each, one batch), the last one active.
    for (auto& s : test::make_segments(t.path(), cfg, {{1, 3}, {1, 3}, {1, 3}}, offset(10))) list.push_back(s);
  }
  std::int64_t base_of(const segment_list::seg_ptr& s) { return s ? s->base_offset().value() : -1; }
};
}  // namespace

TEST_CASE("segment_list: pin finds the segment that would hold an offset", "[storage][segment_list]") {
  fixture f;
  CHECK(f.list.size() == 3);
  CHECK(f.base_of(f.list.pin(offset(10))) == 10);
  CHECK(f.base_of(f.list.pin(offset(12))) == 10);
  CHECK(f.base_of(f.list.pin(offset(13))) == 13);
  CHECK(f.base_of(f.list.pin(offset(18))) == 16);
  CHECK(f.base_of(f.list.pin(offset(1000))) == 16);  // past the end: the active segment
  CHECK(f.base_of(f.list.pin(offset(3))) == 10);     // below the first: the first
  CHECK(f.base_of(f.list.active()) == 16);
}

TEST_CASE("segment_list: pin_after and find", "[storage][segment_list]") {
  fixture f;
  CHECK(f.base_of(f.list.pin_after(offset(10))) == 13);
  CHECK(f.base_of(f.list.pin_after(offset(11))) == 13);
  CHECK(f.base_of(f.list.pin_after(offset(16))) == -1);
  auto mid = f.list.pin(offset(14));
  REQUIRE(f.list.find(mid) == std::optional<std::size_t>(1));
  f.list.pop_front(2);
  CHECK_FALSE(f.list.find(mid).has_value());
}

TEST_CASE("segment_list: pop_front never removes the active segment", "[storage][segment_list]") {
  fixture f;
  auto gone = f.list.pop_front(10);
  REQUIRE(gone.size() == 2);
  CHECK(f.base_of(gone[0]) == 10);
  CHECK(f.base_of(gone[1]) == 13);
  CHECK(f.list.size() == 1);
  CHECK(f.base_of(f.list.active()) == 16);
  CHECK(f.list.pop_front(1).empty());
}

TEST_CASE("segment_list: a snapshot keeps removed segments and their bytes alive", "[storage][segment_list]") {
  fixture f;
  auto snap = f.list.snapshot();
  auto first_bytes = snap[0]->bytes(file_pos{0}, snap[0]->size());
  std::vector<std::byte> copy(first_bytes.begin(), first_bytes.end());
  auto gone = f.list.pop_front(2);
  segment::remove_files(*posix_file_system::shared(), f.t.path(), gone[0]->base_offset());
  gone.clear();
  REQUIRE(snap.size() == 3);
  auto again = snap[0]->bytes(file_pos{0}, snap[0]->size());
  CHECK(std::equal(again.begin(), again.end(), copy.begin(), copy.end()));
}

TEST_CASE("segment_list: modify runs under the lock and returns the function's value", "[storage][segment_list]") {
  fixture f;
  auto n = f.list.modify([](segment_list::vector& v) {
    v.pop_back();
    return v.size();
  });
  CHECK(n == 2);
  CHECK(f.base_of(f.list.active()) == 13);
  f.list.replace_back(f.list.pin(offset(13)));
  CHECK(f.list.size() == 2);
}

TEST_CASE("segment_list: segments_below counts the segments wholly below an offset, never the last",
          "[storage][segment_list]") {
  fixture f;
  const auto segs = f.list.snapshot();  // 10..12, 13..15, 16..18
  CHECK(segments_below(segs, offset(12)) == 0);
  CHECK(segments_below(segs, offset(13)) == 1);
  CHECK(segments_below(segs, offset(15)) == 1);
  CHECK(segments_below(segs, offset(16)) == 2);
  CHECK(segments_below(segs, offset(1000)) == 2);  // the active segment stays
  CHECK(segments_below({}, offset(5)) == 0);
}

TEST_CASE("segment_list: describe and size_bytes report every segment", "[storage][segment_list]") {
  fixture f;
  const auto d = f.list.describe();
  REQUIRE(d.size() == 3);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    CHECK(d[i].base_offset == offset(10 + 3 * static_cast<std::int64_t>(i)));
    CHECK(d[i].next_offset == d[i].base_offset + 3);
    CHECK(d[i].max_timestamp == 1'002);  // one batch at 1000, 1001, 1002
    CHECK(d[i].path.filename() == fmt::format("{:020}.log", 10 + 3 * i));
    total += d[i].size_bytes;
  }
  CHECK(f.list.size_bytes() == total);
  CHECK(total == 3 * f.list.active()->size());
}

#include <catch2/catch.hpp>
#include <fstream>

#include <brook/storage/log_slice.hpp>
#include <brook/storage/segment.hpp>

#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;

namespace {
struct fixture {
  test::temp_dir t;
  log_config cfg;
  recovery_report report;
  fixture() {
    cfg.segment_bytes = 1 << 16;
    cfg.segment_index_bytes = 4096;
    cfg.index_interval_bytes = 100;
  }
  std::shared_ptr<segment> open(segment::open_kind kind, bool active = true, offset rp = offset(1 << 30)) {
    segment::open_args a;
    a.dir = t.path();
    a.base = offset(50);
    a.config = &cfg;
    a.kind = kind;
    a.active = active;
    a.recovery_point = rp;
    auto s = segment::open(a, report);
    REQUIRE(s);
    return *s;
  }
  /// Appends n batches of 3 records at offsets 50, 53, ...
  void fill(segment& s, int n) {
    for (int i = 0; i < n; ++i) {
      auto b = test::make_batch(3, 1000 + i, "v", 40);
      set_batch_base_offset(b, s.next_offset());
      REQUIRE(s.append(b));
    }
  }
};
}  // namespace

TEST_CASE("segment names files by 20-digit base offset", "[storage][segment]") {
  CHECK(partition_files::base_name(offset(0)) == "00000000000000000000");
  CHECK(partition_files::base_name(offset(170410)) == "00000000000000170410");
  CHECK(partition_files::parse_base("00000000000000170410") == offset(170410));
  CHECK_FALSE(partition_files::parse_base("0000000000000017041"));
  CHECK_FALSE(partition_files::parse_base("0000000000000017041x"));
  CHECK_FALSE(partition_files::parse_base("99999999999999999999"));  // overflows int64
}

TEST_CASE("segment append publishes size, next offset and timestamps", "[storage][segment]") {
  fixture f;
  auto s = f.open(segment::open_kind::create);
  CHECK(s->empty());
  CHECK(s->next_offset() == offset(50));
  f.fill(*s, 20);
  CHECK(s->next_offset() == offset(110));
  CHECK(s->max_timestamp() == 1019 + 2);
  CHECK(s->first_batch_timestamp() == 1002);
  CHECK(s->size() == fs::file_size(s->log_path()));
  for (int o = 50; o < 110; ++o) {
    auto p = s->find_position(offset(o), s->end_pos());
    REQUIRE(p);
    REQUIRE(*p);
    auto h = s->header_at(**p, s->end_pos());
    REQUIRE(h);
    CHECK(h->base_offset <= offset(o));
    CHECK(h->last_offset() >= offset(o));
  }
  auto past = s->find_position(offset(110), s->end_pos());
  REQUIRE(past);
  CHECK_FALSE(*past);
  CHECK_FALSE(s->index_suspect());
}

TEST_CASE("a sealed segment reopens trusted without a scan", "[storage][segment]") {
  fixture f;
  {
    auto s = f.open(segment::open_kind::create);
    f.fill(*s, 20);
    REQUIRE(s->seal());
  }
  auto s = f.open(segment::open_kind::trusted, false);
  CHECK(f.report.clean);
  CHECK(f.report.segments_scanned == 0);
  CHECK(s->next_offset() == offset(110));
  CHECK(s->max_timestamp() == 1021);
}

TEST_CASE("a segment past the recovery point, or with a bad index, is recovered", "[storage][segment][recovery]") {
  fixture f;
  {
    auto s = f.open(segment::open_kind::create);
    f.fill(*s, 20);
    REQUIRE(s->seal());
  }
  SECTION("data beyond the recovery point") {
    auto s = f.open(segment::open_kind::trusted, true, offset(60));
    CHECK_FALSE(f.report.clean);
    CHECK(f.report.segments_scanned == 1);
    CHECK(s->next_offset() == offset(110));
  }
  SECTION("a last index entry pointing at the wrong batch (the open-time check covers the last entry)") {
    {
      auto idx = partition_files::index(f.t.path(), offset(50));
      auto n = fs::file_size(idx);
      REQUIRE(n >= 8);
      std::fstream io(idx, std::ios::in | std::ios::out | std::ios::binary);
      io.seekp(static_cast<std::streamoff>(n - 1));  // low byte of the last entry's position
      io.put('\x01');
    }
    auto s = f.open(segment::open_kind::trusted, false);
    CHECK(f.report.indexes_rebuilt == 1);
    CHECK(s->next_offset() == offset(110));
  }
  SECTION("a torn tail is cut at the last whole batch") {
    auto full = fs::file_size(partition_files::log(f.t.path(), offset(50)));
    fs::resize_file(partition_files::log(f.t.path(), offset(50)), full - 5);
    auto s = f.open(segment::open_kind::trusted, true);
    CHECK(f.report.bytes_truncated > 0);
    CHECK(s->was_truncated());
    CHECK(s->next_offset() == offset(107));
    CHECK(fs::file_size(s->log_path()) == s->size());
  }
}

TEST_CASE("a damaged index found at lookup time is ignored, not trusted", "[storage][segment]") {
  fixture f;
  auto s = f.open(segment::open_kind::create);
  f.fill(*s, 20);
  REQUIRE(s->seal());
  s.reset();
  s = f.open(segment::open_kind::trusted, false);
  // Corrupt an entry in the middle (the tail check only verifies the last one).
  {
    std::fstream io(partition_files::index(f.t.path(), offset(50)), std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(8 + 7);
    io.put('\x03');
  }
  for (int o = 50; o < 110; ++o) {
    auto p = s->find_position(offset(o), s->end_pos());
    REQUIRE(p);
    REQUIRE(*p);
    auto h = s->header_at(**p, s->end_pos());
    REQUIRE(h);
    CHECK(h->base_offset <= offset(o));
    CHECK(h->last_offset() >= offset(o));
  }
  CHECK(s->index_suspect());
}

TEST_CASE("prefetch_headers asks for the indexed batches after an offset, below a position", "[storage][segment]") {
  fixture f;  // index.interval.bytes 100 and batches of about 200 bytes: an entry per batch but the first
  auto s = f.open(segment::open_kind::create);
  f.fill(*s, 20);  // batch k: offsets 50 + 3k .. 52 + 3k
  const std::int64_t bs = static_cast<std::int64_t>(s->size() / 20);
  auto at = [&](int k) { return file_pos(k * bs); };
  // Kafka indexes a batch once more than index.interval.bytes precede it: not the first.
  CHECK(s->prefetch_headers(offset(49), s->end_pos(), 1) == at(1));
  CHECK(s->prefetch_headers(offset(52), s->end_pos(), 3) == at(3));           // batches 1, 2, 3
  CHECK(s->prefetch_headers(offset(53), s->end_pos(), 3) == at(3));           // 53 is in batch 1
  CHECK(s->prefetch_headers(offset(52), at(2) + 1, 16) == at(2));             // below the position only
  CHECK(s->prefetch_headers(offset(52), s->end_pos(), 100) == at(19));        // up to the last batch
  CHECK(s->prefetch_headers(offset(109), s->end_pos(), 16) == s->end_pos());  // none after the last
  CHECK(s->prefetch_headers(offset(52), at(1), 16) == at(1));                 // none below: the bound

  SECTION("a damaged entry stops the requests, and a read walks past it as before") {
    REQUIRE(s->seal());
    s.reset();
    s = f.open(segment::open_kind::trusted, false);
    {
      // Entry 5's position (batch 6's) becomes 0xff... (negative), entry 9's (batch 10's)
      // lies past the log.
      std::fstream io(partition_files::index(f.t.path(), offset(50)), std::ios::in | std::ios::out | std::ios::binary);
      io.seekp(5 * 8 + 4);
      io.write("\xff\xff\xff\xff", 4);
      io.seekp(9 * 8 + 4);
      io.write("\x7f\x00\x00\x00", 4);
    }
    CHECK(s->prefetch_headers(offset(49), s->end_pos(), 16) == at(5));
    CHECK(s->prefetch_headers(offset(67), s->end_pos(), 16) == s->end_pos());
    CHECK(s->prefetch_headers(offset(70), s->end_pos(), 16) == at(9));
    auto slice = log_slice::of_batches(s, file_pos(0), offset(50), offset(110), std::size_t{1} << 20);
    REQUIRE(slice);
    CHECK(slice->size_bytes() == s->size());
    CHECK(slice->next_offset() == offset(110));
    auto part = log_slice::of_batches(s, at(3), offset(59), offset(110), static_cast<std::size_t>(7 * bs));
    REQUIRE(part);
    CHECK(part->size_bytes() == static_cast<std::size_t>(7 * bs));
    CHECK(part->next_offset() == offset(80));
  }
}

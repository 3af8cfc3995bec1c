#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include <brook/storage/log_slice.hpp>

#include "support/checks.hpp"
#include "support/format_helpers.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;

namespace {
struct fixture {
  test::temp_dir t;
  log_config cfg;
  std::shared_ptr<segment> seg;
  std::uint64_t batch_size = 0;
  fixture() {
    cfg.segment_bytes = 1 << 16;
    cfg.segment_index_bytes = 4096;
    // One segment from offset 100: five batches of 4 records each (100..119).
    seg = test::make_segments(t.path(), cfg, {{5, 4}}, offset(100)).front();
    batch_size = seg->size() / 5;
  }
  log_slice slice(std::uint64_t pos, offset start, offset bound, std::size_t max_bytes) {
    auto s = log_slice::of_batches(seg, file_pos(static_cast<std::int64_t>(pos)), start, bound, max_bytes);
    REQUIRE_OK(s);
    return *s;
  }
  std::vector<std::int64_t> offsets(const log_slice& s) {
    std::vector<std::int64_t> out;
    REQUIRE_OK(s.for_each_record([&](const record_view& r) { out.push_back(r.offset().value()); }));
    return out;
  }
};
}  // namespace

TEST_CASE("log_slice: whole batches up to max_bytes, the first always whole", "[storage][log_slice]") {
  fixture f;
  auto two = f.slice(0, offset(100), offset(120), 2 * f.batch_size);
  CHECK(two.size_bytes() == 2 * f.batch_size);
  CHECK(two.next_offset() == offset(108));
  auto tiny = f.slice(0, offset(100), offset(120), 1);  // smaller than one batch: still one batch
  CHECK(tiny.size_bytes() == f.batch_size);
  CHECK(tiny.next_offset() == offset(104));
  auto all = f.slice(0, offset(100), offset(120), 1 << 20);
  CHECK(all.size_bytes() == 5 * f.batch_size);
  CHECK(all.next_offset() == offset(120));
}

TEST_CASE("log_slice: a batch reaching the bound is left out", "[storage][log_slice]") {
  fixture f;
  auto s = f.slice(0, offset(100), offset(111), 1 << 20);  // the batch 108..111 crosses the bound
  CHECK(s.size_bytes() == 2 * f.batch_size);
  CHECK(s.next_offset() == offset(108));
  auto none = f.slice(0, offset(100), offset(102), 1 << 20);
  CHECK(none.empty());
  CHECK(none.next_offset() == offset(100));
}

TEST_CASE("log_slice: records before the start offset are skipped", "[storage][log_slice]") {
  fixture f;
  auto s = f.slice(f.batch_size, offset(106), offset(120), 2 * f.batch_size);  // batch 104..107 holds 106
  CHECK(f.offsets(s) == std::vector<std::int64_t>{106, 107, 108, 109, 110, 111});
  CHECK(s.start_offset() == offset(106));
  CHECK(s.file_position() == file_pos(static_cast<std::int64_t>(f.batch_size)));
}

TEST_CASE("log_slice: for_each_record stops at a damaged batch", "[storage][log_slice]") {
  fixture f;
  auto s = f.slice(0, offset(100), offset(120), 1 << 20);
  // Damage the third batch's last byte in the file, then read through a fresh segment open.
  {
    auto fh = brook::file_handle::open(f.seg->files(), f.seg->log_path(), O_RDWR);
    REQUIRE_OK(fh);
    std::byte b{0x5a};
    REQUIRE_OK(fh->pwrite_all({&b, 1}, 3 * f.batch_size - 1));
  }
  std::size_t seen = 0;
  auto r = s.for_each_record([&](const record_view&) { ++seen; });
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == errc::corrupt_message);
  CHECK(seen == 8);  // the first two batches, then the CRC of the third fails before any of its records
}

TEST_CASE("log_slice: send_to copies exactly the slice's bytes", "[storage][log_slice]") {
  fixture f;
  auto s = f.slice(f.batch_size, offset(104), offset(120), 2 * f.batch_size);
  const auto out_path = f.t / "copy";
  int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  auto n = s.send_to(fd);
  ::close(fd);
  REQUIRE_OK(n);
  CHECK(*n == s.size_bytes());
  std::ifstream in(out_path, std::ios::binary);
  std::string got((std::istreambuf_iterator<char>(in)), {});
  auto want = s.bytes();
  REQUIRE(got.size() == want.size());
  CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
}

TEST_CASE("log_slice: send_to resumes from a byte and fails on a file cut short", "[storage][log_slice]") {
  fixture f;
  auto s = f.slice(f.batch_size, offset(104), offset(120), 2 * f.batch_size);
  const auto out_path = f.t / "rest";
  int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  const std::size_t from = 37;
  auto n = s.send_to(fd, from);
  ::close(fd);
  REQUIRE_OK(n);
  CHECK(*n == s.size_bytes() - from);
  std::ifstream in(out_path, std::ios::binary);
  std::string got((std::istreambuf_iterator<char>(in)), {});
  auto want = s.bytes().subspan(from);
  REQUIRE(got.size() == want.size());
  CHECK(std::memcmp(got.data(), want.data(), want.size()) == 0);
  CHECK(*s.send_to(fd, s.size_bytes()) == 0);  // nothing left to send

  // The segment file shrinks under the slice (a truncation): an error, never a short frame.
  REQUIRE(::truncate(s.source()->log_path().c_str(), static_cast<off_t>(s.file_position().value() + 10)) == 0);
  int sink = ::open("/dev/null", O_WRONLY);
  auto cut = s.send_to(sink);
  ::close(sink);
  REQUIRE_FALSE(cut);
  CHECK(cut.error().code() == errc::kafka_storage_error);
}

TEST_CASE("log_slice: an empty batch with codec bits is read through without a decompressor", "[storage][log_slice]") {
  // As Kafka reads one (recordsCount 0: nothing to decode), between two plain batches.
  test::temp_dir t;
  const log_config cfg = test::small_segment_config();
  recovery_report report;
  segment::open_args a;
  a.dir = t.path();
  a.base = offset(0);
  a.config = &cfg;
  a.kind = segment::open_kind::create;
  a.active = true;
  auto seg = segment::open(a, report);
  REQUIRE_OK(seg);
  auto first = test::make_batch(2);
  auto empty = test::make_batch(1);
  test::be_write(empty, batch_layout::records_count, 4, 0);
  empty = test::with_payload(empty, compression_type::lz4, test::bytes(24, std::byte{0x5a}));
  auto last = test::make_batch(2);
  set_batch_base_offset(first, offset(0));
  set_batch_base_offset(empty, offset(2));
  set_batch_base_offset(last, offset(3));
  for (auto* b : {&first, &empty, &last}) REQUIRE_OK((*seg)->append(*b));
  auto s = log_slice::of_batches(*seg, file_pos(0), offset(0), offset(5), 1 << 20);
  REQUIRE_OK(s);
  CHECK(s->next_offset() == offset(5));
  std::vector<std::int64_t> seen;
  REQUIRE_OK(s->for_each_record([&](const record_view& r) { seen.push_back(r.offset().value()); }));
  CHECK(seen == std::vector<std::int64_t>{0, 1, 3, 4});
}

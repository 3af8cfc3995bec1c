// record_marks: the marks a read inside a batch makes, the hint a slice carries from them,
// marks that no longer describe the batch at their place, the batches that get none (small,
// compressed, compacted, damaged), and the batches appended after a truncation.
#include <catch2/catch.hpp>

#include <limits>

#include <brook/storage/partition_log.hpp>
#include <brook/storage/record_marks.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using brook::test::make_batch;
using brook::test::temp_dir;

namespace {

/// Small files, and an index entry for every batch of the sizes these tests append.
log_config marks_config() {
  log_config c;
  c.segment_bytes = 1 << 20;
  c.segment_index_bytes = 1 << 14;
  c.index_interval_bytes = 64;
  return c;
}

std::unique_ptr<partition_log> open_log(const fs::path& dir) {
  auto r = partition_log::open(dir, marks_config());
  REQUIRE_OK(r);
  return std::move(*r);
}

/// Appends `batches` batches of `records` records each ("<tag>-<i>" values padded to `pad`).
void append_batches(partition_log& log, int batches, int records, const std::string& tag = "v", std::size_t pad = 0) {
  for (int b = 0; b < batches; ++b) {
    auto batch = make_batch(records, 1000 + b, tag, pad);
    REQUIRE_OK(log.append(batch));
  }
}

/// The record at offset o by read(o, 1 byte, with a hint) and seek(o, hint); also checks
/// seek(o) agrees.
struct looked_up {
  std::optional<record_position> hint;
  std::string value;
};
looked_up look_up(const partition_log& log, offset o) {
  read_options ro;
  ro.max_bytes = 1;
  ro.hint = true;
  auto s = log.read(o, ro);
  REQUIRE_OK(s);
  auto v = record_batch_view::parse(s->bytes(), batch_check{});
  REQUIRE_OK(v);
  auto hinted = v->seek(o, s->start_hint());
  auto plain = v->seek(o);
  REQUIRE(hinted != v->end());
  REQUIRE(plain != v->end());
  CHECK(hinted->offset() == o);
  CHECK(plain->offset() == o);
  CHECK(hinted->value().to_string() == plain->value().to_string());
  if (auto h = s->start_hint()) {  // the hint names where its record starts (seek would hide a wrong one)
    const auto records = v->records_bytes();
    REQUIRE(h->byte < records.size());
    const std::byte* body = nullptr;
    const std::byte* end = detail::skip_record(records.data() + h->byte, records.data() + records.size(), body);
    std::int32_t delta = -1;
    REQUIRE(end != nullptr);
    REQUIRE(detail::record_offset_delta(body, end, delta));
    CHECK(delta == h->index);
    CHECK(v->base_offset() + h->index <= o);
  }
  return {s->start_hint(), hinted->value().to_string()};
}

}  // namespace

TEST_CASE("record_marks: a read inside a batch gets the mark at or before its offset", "[storage][record_marks]") {
  temp_dir t;
  auto log = open_log(t.path());
  constexpr int records = 100;  // marks at 0, 16, ..., 96
  append_batches(*log, 6, records, "v", 30);
  for (int pass = 0; pass < 2; ++pass) {  // the first makes each batch's marks, the second uses them
    for (std::int64_t o = 0; o < 6 * records; ++o) {
      INFO("offset " << o);
      const auto got = look_up(*log, offset(o));
      const std::int64_t delta = o % records;
      CHECK(got.value.substr(0, 2 + std::to_string(delta).size()) == "v-" + std::to_string(delta));
      if (delta == 0 || o < records) {
        // A read from a batch's start walks nothing; the segment's first batch has no index
        // entry (Kafka's rule indexes a batch once index.interval.bytes came before it).
        CHECK_FALSE(got.hint);
        continue;
      }
      REQUIRE(got.hint);
      CHECK(got.hint->index == delta / record_marks::stride * record_marks::stride);
    }
  }
}

TEST_CASE("record_marks: a mark is where its record starts", "[storage][record_marks]") {
  record_batch_builder b;
  for (int i = 0; i < 40; ++i) b.append(1000 + i, "k", std::string(static_cast<std::size_t>(i * 3), 'x'));
  auto batch = b.finish();
  auto v = record_batch_view::parse(batch, batch_check{});
  REQUIRE_OK(v);
  record_marks marks;
  auto m = marks.make(7, file_pos(4096), v->header(), v->records_bytes());
  REQUIRE(m);
  CHECK(m->describe(file_pos(4096), v->header()));
  CHECK_FALSE(m->describe(file_pos(0), v->header()));
  batch_header other = v->header();  // other records at the same place and offsets
  other.crc ^= 1;
  CHECK_FALSE(m->describe(file_pos(4096), other));
  other = v->header();
  other.base_offset = other.base_offset + 1;
  CHECK_FALSE(m->describe(file_pos(4096), other));
  other = v->header();  // a count that grew under the mapping (same CRC field)
  other.records_count += record_marks::stride;
  other.last_offset_delta += record_marks::stride;
  CHECK_FALSE(m->describe(file_pos(4096), other));
  REQUIRE(m->size() == 3);  // records 0, 16, 32
  std::vector<std::uint32_t> starts;
  const auto records = v->records_bytes();
  const std::byte* p = records.data();
  const std::byte* body = nullptr;
  for (int i = 0; i < 40; ++i, p = detail::skip_record(p, records.data() + records.size(), body))
    if (i % record_marks::stride == 0) starts.push_back(static_cast<std::uint32_t>(p - records.data()));
  CHECK(std::vector<std::uint32_t>{m->start(0), m->start(1), m->start(2)} == starts);
  CHECK(marks.marks_for(7));
  CHECK_FALSE(marks.marks_for(8));
  CHECK_FALSE(marks.marks_for(record_marks::max_slots));
}

TEST_CASE("record_marks: small, compressed and compacted batches get none", "[storage][record_marks]") {
  batch_header h;
  h.records_count = record_marks::stride + 1;
  h.last_offset_delta = record_marks::stride;
  CHECK(record_marks::wanted(file_pos(0), h));
  batch_header small = h;
  small.records_count = small.last_offset_delta = record_marks::stride;  // 17 offsets, 16 records: compacted
  CHECK_FALSE(record_marks::wanted(file_pos(0), small));
  small.last_offset_delta = record_marks::stride - 1;
  CHECK_FALSE(record_marks::wanted(file_pos(0), small));  // 16 records: nothing to skip
  batch_header compressed = h;
  compressed.attributes = static_cast<std::int16_t>(compression_type::lz4);
  CHECK_FALSE(record_marks::wanted(file_pos(0), compressed));
  CHECK_FALSE(record_marks::wanted(file_pos(std::int64_t{1} << 32), h));

  temp_dir t;
  auto log = open_log(t.path());
  append_batches(*log, 3, record_marks::stride, "v", 30);
  for (std::int64_t o = 0; o < 3 * record_marks::stride; ++o) CHECK_FALSE(look_up(*log, offset(o)).hint);
}

TEST_CASE("record_marks: a batch whose records do not fit its bytes gets no marks", "[storage][record_marks]") {
  auto batch = make_batch(40, 1000, "v", 20);
  auto v = record_batch_view::parse(batch, batch_check{});
  REQUIRE_OK(v);
  record_marks marks;
  const auto records = v->records_bytes();
  CHECK_FALSE(marks.make(0, file_pos(0), v->header(), records.first(records.size() - 1)));
  batch_header huge = v->header();  // a damaged count: no allocation sized by it
  huge.records_count = std::numeric_limits<std::int32_t>::max();
  huge.last_offset_delta = huge.records_count - 1;
  CHECK_FALSE(marks.make(0, file_pos(0), huge, records));
  huge.records_count = static_cast<std::int32_t>(records.size() / 2 + 1);
  huge.last_offset_delta = huge.records_count - 1;
  CHECK_FALSE(marks.make(0, file_pos(0), huge, records));
  CHECK_FALSE(marks.marks_for(0));
}

TEST_CASE("record_marks: after a truncation the batches appended in its place get their own marks",
          "[storage][record_marks]") {
  temp_dir t;
  auto log = open_log(t.path());
  append_batches(*log, 4, 64, "old", 10);
  REQUIRE(look_up(*log, offset(150)).hint);  // makes the third batch's marks
  REQUIRE_OK(log->truncate_to(offset(128)));
  append_batches(*log, 2, 64, "new-longer-values", 40);  // the same offsets and place, other bytes
  for (std::int64_t o = 128; o < 256; ++o) {
    INFO("offset " << o);
    const auto got = look_up(*log, offset(o));
    CHECK(got.value.rfind("new-longer-values-" + std::to_string(o % 64), 0) == 0);
    if (o % 64 != 0) CHECK(got.hint);
  }
}

TEST_CASE("record_marks: a read that asks for no hint makes no marks and carries none", "[storage][record_marks]") {
  temp_dir t;
  auto log = open_log(t.path());
  append_batches(*log, 3, 100, "v", 30);
  read_options plain;
  plain.max_bytes = 1;
  for (int pass = 0; pass < 2; ++pass) {
    auto s = log->read(offset(150), plain);  // inside the second batch, which has an index entry
    REQUIRE_OK(s);
    CHECK_FALSE(s->start_hint());
    CHECK_FALSE(s->source()->has_record_marks(offset(150)));
  }
  CHECK(look_up(*log, offset(150)).hint);  // a read with a hint makes them
  auto s = log->read(offset(151), plain);
  REQUIRE_OK(s);
  CHECK_FALSE(s->start_hint());  // a read without one still carries none
  CHECK(s->source()->has_record_marks(offset(151)));
}

TEST_CASE("record_marks: damaged record lengths read with a hint stay inside the batch", "[storage][record_marks]") {
  // The lengths of records 20 and 45 of the third batch set to 0 and -1 under the open log
  // (the CRC now fails), once before any marks exist and once after: a read with a hint, then
  // seek with and without it, must never answer with another offset.
  for (const bool marks_first : {false, true}) {
    INFO("marks made before the damage: " << marks_first);
    temp_dir t;
    auto log = open_log(t.path());
    append_batches(*log, 4, 64, "v", 10);
    read_options ro;
    ro.max_bytes = 1;
    ro.hint = true;
    if (marks_first) REQUIRE(log->read(offset(150), ro)->start_hint());
    auto whole = log->read(offset(128), ro);
    REQUIRE_OK(whole);
    const file_pos at = whole->file_position();
    std::vector<std::int64_t> starts;  // where each record of the batch starts, from the file's start
    {
      auto v = record_batch_view::parse(whole->bytes(), batch_check{});
      REQUIRE_OK(v);
      const auto r = v->records_bytes();
      const std::byte* body = nullptr;
      for (const std::byte* p = r.data(); p != nullptr && p < r.data() + r.size();
           p = detail::skip_record(p, r.data() + r.size(), body))
        starts.push_back(at.value() + (p - whole->bytes().data()));
      REQUIRE(starts.size() == 64);
    }
    {
      auto f = brook::file_handle::open(*posix_file_system::shared(), log->segments().front().path, O_RDWR);
      REQUIRE_OK(f);
      const std::byte zero[] = {std::byte{0x00}}, minus_one[] = {std::byte{0x01}};  // zigzag varints
      REQUIRE_OK(f->pwrite_all(zero, static_cast<std::uint64_t>(starts[20])));
      REQUIRE_OK(f->pwrite_all(minus_one, static_cast<std::uint64_t>(starts[45])));
    }
    int found = 0;
    for (std::int64_t o = 129; o < 192; ++o) {
      INFO("offset " << o);
      auto s = log->read(offset(o), ro);
      REQUIRE_OK(s);                                                                 // the header is intact
      CHECK_FALSE(record_batch_view::parse(s->bytes(), batch_check{}).has_value());  // the CRC is not
      auto v = record_batch_view::parse(s->bytes(), batch_check{.crc = false, .records = false});
      REQUIRE_OK(v);
      for (auto it : {v->seek(offset(o), s->start_hint()), v->seek(offset(o))}) {
        if (it == v->end()) continue;  // a damaged length before o ends the walk
        CHECK(it->offset() == offset(o));
        ++found;
      }
    }
    // Without the hint, offsets 129..147 (records 1..19): every walk past record 20 meets a
    // damaged length. With it, the same when the marks could not be made (a walk over the
    // damaged batch fails); with marks made before the damage, also the records a mark
    // reaches without crossing it: 32..44 and 48..63.
    CHECK(found == (marks_first ? 19 + 19 + 13 + 16 : 2 * 19));
  }
}

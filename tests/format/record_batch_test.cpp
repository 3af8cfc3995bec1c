// RecordBatch v2: builder -> view round trips, exact header fields and exact
// bytes of hand-computed batches, every kind of damaged input, and the in-place
// edits a broker makes (base offset, leader epoch, LogAppendTime).
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

#include "support/format_helpers.hpp"
#include "support/seeds.hpp"

namespace L = brook::batch_layout;
using brook::errc;
using brook::timestamp_ms;
using brook::test::be_read;
using brook::test::be_write;
using brook::test::build_batch;
using brook::test::bytes;
using brook::test::cspan;
using brook::test::exact_copy;
using brook::test::from_hex;
using brook::test::mspan;
using brook::test::read_offsets;
using brook::test::read_records;
using brook::test::restamp_crc;
using brook::test::test_header;
using brook::test::test_record;
using brook::test::to_hex;

namespace {

const std::string utf8_key = "\xF0\x9F\x94\x91-cl\xC3\xA9-\xE9\x8D\xB5";  // 4-, 2- and 3-byte sequences

std::vector<test_record> tricky_records() {
  const timestamp_ms t0 = 1'700'000'000'000;
  return {
      {t0, std::nullopt, std::string("v0"), {}},
      {t0 - 5, std::string("k1"), std::nullopt, {}},                     // negative delta, null value
      {t0 + (std::int64_t{1} << 40), std::string(), std::string(), {}},  // large delta, empty key and value
      {t0, std::nullopt, std::nullopt, {{"h", std::nullopt}}},           // header with null value
      {t0 + 1,
       std::string("k"),
       std::string("v"),
       {{"dup", std::string("1")}, {utf8_key, std::string("x")}, {"dup", std::string("2")}, {"dup", std::string()}}},
      {t0 - (std::int64_t{1} << 40),
       std::string(300, 'K'),
       std::string(9000, 'V'),  // multi-byte length varints
       {{"", std::string("empty key")}}},
  };
}

brook::result<brook::record_batch_view> parse_exact(const bytes& b, std::unique_ptr<std::byte[]>& keep,
                                                    brook::batch_check check = {}) {
  keep = exact_copy(cspan(b));
  return brook::record_batch_view::parse({keep.get(), b.size()}, check);
}

// Parses a copy of `b` held in an exactly-sized buffer; returns the error code (none on success).
// On success every record and header is walked, so a bad view would be caught by ASan.
errc parse_code(const bytes& b, brook::batch_check check = {}) {
  std::unique_ptr<std::byte[]> keep;
  auto r = parse_exact(b, keep, check);
  if (!r) {
    const auto& ec = r.error().code();
    REQUIRE(ec.category() == brook::error_category());
    REQUIRE_FALSE(r.error().message().empty());
    return static_cast<errc>(ec.value());
  }
  std::size_t n = 0;
  for (const auto& rec : *r) {
    n += rec.key().size() + rec.value().size();
    for (const auto& h : rec.headers()) n += h.key.size() + h.value.size();
  }
  (void)n;
  return errc::none;
}

// Position of the first record's first header key length varint in a batch built from
// a record with key null, value null, ts delta 0 and at least one header.
constexpr std::size_t first_header_pos =
    L::records + 1 /*len*/ + 1 /*attrs*/ + 1 /*ts*/ + 1 /*off*/ + 1 /*key*/ + 1 /*value*/ + 1 /*count*/;

}  // namespace

TEST_CASE("record batch: builder -> view round trip of tricky records", "[format][record_batch]") {
  const auto recs = tricky_records();
  const brook::offset base{1000};
  const auto b = build_batch(recs, base);
  std::unique_ptr<std::byte[]> keep;
  auto v = parse_exact(b, keep);
  REQUIRE(v.has_value());
  CHECK(v->size_bytes() == b.size());
  CHECK(v->record_count() == recs.size());
  CHECK(v->base_offset() == base);
  CHECK(v->last_offset() == base + static_cast<std::int64_t>(recs.size() - 1));
  CHECK(read_records(*v) == recs);
  std::vector<std::int64_t> want_offsets;
  for (std::size_t i = 0; i < recs.size(); ++i) want_offsets.push_back(1000 + static_cast<std::int64_t>(i));
  CHECK(read_offsets(*v) == want_offsets);

  SECTION("null and empty stay distinct") {
    auto it = v->begin();
    CHECK(it->key().is_null());
    ++it;
    CHECK(it->value().is_null());
    ++it;
    CHECK_FALSE(it->key().is_null());
    CHECK(it->key().size() == 0);
    CHECK_FALSE(it->value().is_null());
    ++it;
    auto hs = it->headers();
    REQUIRE(hs.size() == 1);
    CHECK(hs.begin()->value.is_null());
  }
  SECTION("the view borrows the bytes it was given") {
    for (const auto& r : *v) {
      if (!r.value().is_null() && r.value().size() > 0) {
        CHECK(r.value().data() >= keep.get());
        CHECK(r.value().data() + r.value().size() <= keep.get() + b.size());
      }
    }
    CHECK(v->bytes().data() == keep.get());
  }
}

TEST_CASE("record batch: header fields are exactly what Kafka's producer writes", "[format][record_batch]") {
  std::vector<test_record> recs = {
      {1000, std::nullopt, std::string("a"), {}},
      {900, std::nullopt, std::string("b"), {}},
      {5000, std::nullopt, std::string("c"), {}},
      {2000, std::nullopt, std::string("d"), {}},
  };
  const auto b = build_batch(recs, brook::offset{42});
  // Read with shifts written here, not brook's loaders.
  CHECK(be_read(b, 0, 8) == 42u);
  CHECK(be_read(b, 8, 4) == b.size() - 12);
  CHECK(be_read(b, 12, 4) == 0xFFFFFFFFu);  // partitionLeaderEpoch -1
  CHECK(be_read(b, 16, 1) == 2u);           // magic
  CHECK(be_read(b, 17, 4) == brook::test::crc32c_bitwise(cspan(b).subspan(21)));
  CHECK(be_read(b, 21, 2) == 0u);                     // attributes
  CHECK(be_read(b, 23, 4) == 3u);                     // lastOffsetDelta
  CHECK(be_read(b, 27, 8) == 1000u);                  // baseTimestamp = first record's
  CHECK(be_read(b, 35, 8) == 5000u);                  // maxTimestamp = largest
  CHECK(be_read(b, 43, 8) == 0xFFFFFFFFFFFFFFFFull);  // producerId -1
  CHECK(be_read(b, 51, 2) == 0xFFFFu);                // producerEpoch -1
  CHECK(be_read(b, 53, 4) == 0xFFFFFFFFu);            // baseSequence -1
  CHECK(be_read(b, 57, 4) == 4u);                     // recordsCount

  std::unique_ptr<std::byte[]> keep;
  auto v = parse_exact(b, keep);
  REQUIRE(v.has_value());
  const auto& h = v->header();
  CHECK(h.base_offset == brook::offset{42});
  CHECK(h.batch_length == static_cast<std::int32_t>(b.size() - 12));
  CHECK(h.partition_leader_epoch == -1);
  CHECK(h.magic == 2);
  CHECK(h.crc == be_read(b, 17, 4));
  CHECK(h.attributes == 0);
  CHECK(h.last_offset_delta == 3);
  CHECK(h.base_timestamp == 1000);
  CHECK(h.max_timestamp == 5000);
  CHECK(h.producer_id == -1);
  CHECK(h.producer_epoch == -1);
  CHECK(h.base_sequence == -1);
  CHECK(h.records_count == 4);
  CHECK(h.size_bytes() == b.size());
  CHECK(h.next_offset() == brook::offset{46});
  CHECK(h.compression() == brook::compression_type::none);
  CHECK(h.timestamp_type() == brook::timestamp_type::create_time);
  CHECK_FALSE(h.is_transactional());
  CHECK_FALSE(h.is_control());
  CHECK(read_records(*v) == recs);
}

TEST_CASE("record batch: batch options reach the header", "[format][record_batch]") {
  brook::batch_options o;
  o.producer_id = 0x0102030405060708;
  o.producer_epoch = 7;
  o.base_sequence = 99;
  o.partition_leader_epoch = 12;
  o.transactional = true;
  o.control = true;
  const auto b = build_batch({{5, std::string("k"), std::string("v"), {}}}, brook::offset{0}, o);
  CHECK(be_read(b, 12, 4) == 12u);
  CHECK(be_read(b, 21, 2) == 0x30u);  // transactional (bit 4) | control (bit 5)
  CHECK(be_read(b, 43, 8) == 0x0102030405060708u);
  CHECK(be_read(b, 51, 2) == 7u);
  CHECK(be_read(b, 53, 4) == 99u);
  std::unique_ptr<std::byte[]> keep;
  auto v = parse_exact(b, keep);
  REQUIRE(v.has_value());
  CHECK(v->header().is_transactional());
  CHECK(v->header().is_control());
  CHECK(v->header().producer_id == 0x0102030405060708);
  CHECK(v->header().partition_leader_epoch == 12);
}

TEST_CASE("record batch: exact bytes of hand-computed batches", "[format][record_batch]") {
  SECTION("one record: key null, value \"hi\"") {
    // ts = 1700000000000 = 0x0000018BCFE56800
    bytes want = from_hex(
        "0000000000000000"      // baseOffset 0
        "0000003a"              // batchLength 58 = 49 header bytes after this field + 9 record bytes
        "ffffffff"              // partitionLeaderEpoch -1
        "02"                    // magic
        "00000000"              // crc, filled in below
        "0000"                  // attributes
        "00000000"              // lastOffsetDelta 0
        "0000018bcfe56800"      // baseTimestamp
        "0000018bcfe56800"      // maxTimestamp
        "ffffffffffffffff"      // producerId -1
        "ffff"                  // producerEpoch -1
        "ffffffff"              // baseSequence -1
        "00000001"              // recordsCount 1
        "100000000104686900");  // the record.hpp example
    REQUIRE(want.size() == 70);
    restamp_crc(want);  // independent bitwise CRC
    auto got = build_batch({{1'700'000'000'000, std::nullopt, std::string("hi"), {}}});
    CHECK(to_hex(cspan(got)) == to_hex(cspan(want)));
  }
  SECTION("two records: base offset 5, header with null value, negative delta, empty value") {
    bytes want = from_hex(
        "0000000000000005"  // baseOffset 5
        "00000043"          // batchLength 67 = 49 + 11 + 7
        "ffffffff"
        "02"
        "00000000"
        "0000"
        "00000001"          // lastOffsetDelta 1
        "0000000000000064"  // baseTimestamp 100
        "0000000000000064"  // maxTimestamp 100 (second record is older)
        "ffffffffffffffff"
        "ffff"
        "ffffffff"
        "00000002"
        // record 0: len 10 | attrs | tsDelta 0 | offDelta 0 | key "k" | value null | 1 header "h" -> null
        "14 00 00 00 02 6b 01 02 02 68 01"
        // record 1: len 6 | attrs | tsDelta -1 | offDelta 1 | key null | value "" | 0 headers
        "0c 00 01 02 01 00 00");
    REQUIRE(want.size() == 79);
    restamp_crc(want);
    auto got = build_batch(
        {{100, std::string("k"), std::nullopt, {{"h", std::nullopt}}}, {99, std::nullopt, std::string(), {}}},
        brook::offset{5});
    CHECK(to_hex(cspan(got)) == to_hex(cspan(want)));
    std::unique_ptr<std::byte[]> keep;
    auto v = parse_exact(want, keep);
    REQUIRE(v.has_value());
    auto recs = read_records(*v);
    REQUIRE(recs.size() == 2);
    CHECK(recs[1].ts == 99);
    CHECK(read_offsets(*v) == std::vector<std::int64_t>{5, 6});
  }
}

TEST_CASE("record batch: seeded random round trips", "[format][record_batch]") {
  const auto seed = brook::test::property_seed(1);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 1: rerun with the same base)");
  brook::test::record_gen g(seed);
  brook::record_batch_builder reused({}, 16);  // one builder across batches: reset() must not leak state
  std::vector<brook::record_header> hs;
  for (int iter = 0; iter < 300; ++iter) {
    INFO("iteration " << iter);
    auto recs = g.records(20);
    const brook::offset base{g.s(0, std::int64_t{1} << 50)};
    auto b = build_batch(recs, base);

    reused.reset(base);
    for (const auto& r : recs) {
      hs.clear();
      for (const auto& h : r.headers) hs.push_back({h.key, brook::test::to_nullable(h.value)});
      const auto before = reused.size_bytes();
      reused.append(r.ts, brook::test::to_nullable(r.key), brook::test::to_nullable(r.value), hs);
      REQUIRE(reused.size_bytes() - before ==
              brook::record_batch_builder::record_size(r.ts - recs[0].ts, reused.record_count() - 1,
                                                       brook::test::to_nullable(r.key),
                                                       brook::test::to_nullable(r.value), hs));
    }
    auto s = reused.finish();
    REQUIRE(to_hex(s) == to_hex(cspan(b)));

    std::unique_ptr<std::byte[]> keep;
    auto v = parse_exact(b, keep);
    REQUIRE(v.has_value());
    REQUIRE(read_records(*v) == recs);
    timestamp_ms mx = std::numeric_limits<timestamp_ms>::min();
    for (const auto& r : recs) mx = std::max(mx, r.ts);
    CHECK(v->header().base_timestamp == recs.front().ts);
    CHECK(v->header().max_timestamp == mx);
    CHECK(v->header().last_offset_delta == static_cast<std::int32_t>(recs.size() - 1));
    auto offs = read_offsets(*v);
    for (std::size_t i = 0; i < offs.size(); ++i) REQUIRE(offs[i] == base.value() + static_cast<std::int64_t>(i));
  }
}

TEST_CASE("record batch: batches back to back and trailing bytes outside the batch", "[format][record_batch]") {
  auto a = build_batch({{1, std::nullopt, std::string("a"), {}}}, brook::offset{0});
  auto b =
      build_batch({{2, std::nullopt, std::string("b"), {}}, {3, std::nullopt, std::string("c"), {}}}, brook::offset{1});
  bytes log = a;
  log.insert(log.end(), b.begin(), b.end());
  log.push_back(std::byte{0x00});  // a partial next batch, as at the end of a segment being written
  std::unique_ptr<std::byte[]> keep;
  auto v1 = parse_exact(log, keep);
  REQUIRE(v1.has_value());
  CHECK(v1->size_bytes() == a.size());
  auto v2 = brook::record_batch_view::parse(std::span<const std::byte>(keep.get(), log.size()).subspan(a.size()));
  REQUIRE(v2.has_value());
  CHECK(v2->size_bytes() == b.size());
  CHECK(read_offsets(*v2) == std::vector<std::int64_t>{1, 2});
  auto v3 =
      brook::record_batch_view::parse(std::span<const std::byte>(keep.get(), log.size()).subspan(a.size() + b.size()));
  REQUIRE_FALSE(v3.has_value());
  CHECK(v3.error() == errc::corrupt_message);
}

TEST_CASE("record batch: every truncation is corrupt_message, never a crash", "[format][record_batch]") {
  const auto b = build_batch(tricky_records(), brook::offset{7});
  for (std::size_t n = 0; n < b.size(); ++n) {
    bytes t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    for (bool crc : {true, false}) {
      const auto code = parse_code(t, {crc, true});
      if (code != errc::corrupt_message) {
        INFO("truncated to " << n << " of " << b.size() << " bytes, crc check " << crc);
        CHECK(code == errc::corrupt_message);
      }
    }
  }
  SECTION("a truncated batch whose batchLength was shrunk to match is still rejected") {
    // Cut inside the records and claim the shorter length (with a correct CRC): the record walk must notice.
    for (std::size_t n = L::records; n < b.size(); n += 997) {
      bytes t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
      be_write(t, L::batch_length, 4, n - L::log_overhead);
      restamp_crc(t);
      INFO("cut at " << n);
      CHECK(parse_code(t) == errc::corrupt_message);
    }
  }
}

TEST_CASE("record batch: a flipped bit anywhere the CRC covers is corrupt_message", "[format][record_batch]") {
  const auto good =
      build_batch({{10, std::string("key"), std::string("value"), {{"h", std::string("hv")}, {utf8_key, std::nullopt}}},
                   {5, std::nullopt, std::string(), {}}},
                  brook::offset{3});
  REQUIRE(parse_code(good) == errc::none);
  for (std::size_t i = L::crc; i < good.size(); ++i) {  // the CRC field itself and everything it covers
    for (int bit = 0; bit < 8; ++bit) {
      auto b = good;
      b[i] ^= static_cast<std::byte>(1u << bit);
      // Without the CRC check the structural checks alone must still never misbehave.
      (void)parse_code(b, {false, true});
      const auto code = parse_code(b);
      if (code != errc::corrupt_message) {
        INFO("byte " << i << " bit " << bit);
        CHECK(code == errc::corrupt_message);
      }
    }
  }
  SECTION("bytes the CRC does not cover") {
    for (std::size_t i = 0; i < L::crc; ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        auto b = good;
        b[i] ^= static_cast<std::byte>(1u << bit);
        const auto code = parse_code(b);
        INFO("byte " << i << " bit " << bit);
        if (i == 0 && bit == 7) {
          CHECK(code == errc::corrupt_message);  // negative baseOffset
        } else if (i < L::batch_length || (i >= L::partition_leader_epoch && i < L::magic)) {
          CHECK(code == errc::none);  // baseOffset and partitionLeaderEpoch are outside the CRC by design
        } else {
          CHECK(code == errc::corrupt_message);  // batchLength, magic
        }
      }
    }
  }
}

// parse() checks the CRC before the codec bits, as Kafka does (UnifiedLog.analyzeAndValidateRecords:
// batch.isValid before the codec), so a bit flipped by corruption in the codec bits of
// `attributes` reads as corruption, not as a compressed batch.
TEST_CASE("record batch: a flipped compression bit with a stale CRC is corrupt_message", "[format][record_batch]") {
  const auto good = build_batch({{10, std::string("key"), std::string("value"), {}}});
  for (int bit = 0; bit < 3; ++bit) {
    auto b = good;
    b[L::attributes + 1] ^= static_cast<std::byte>(1u << bit);
    INFO("attributes bit " << bit);
    CHECK(parse_code(b) == errc::corrupt_message);
  }
}

// No valid log holds a batch whose offsets or record timestamps overflow int64; parse() rejects
// them as corrupt_message so the views never compute them with signed overflow.
TEST_CASE("record batch: offsets past INT64_MAX are corrupt_message", "[format][record_batch]") {
  auto b = build_batch({{1, std::nullopt, std::string("a"), {}},
                        {2, std::nullopt, std::string("b"), {}},
                        {3, std::nullopt, std::string("c"), {}}});
  be_write(b, L::base_offset, 8, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() - 1));
  auto r = brook::record_batch_view::parse(cspan(b));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == brook::errc::corrupt_message);
}

TEST_CASE("record batch: record timestamps past INT64_MAX are corrupt_message", "[format][record_batch]") {
  auto b = build_batch({{1000, std::nullopt, std::string("a"), {}}, {2000, std::nullopt, std::string("b"), {}}});
  be_write(b, L::base_timestamp, 8, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() - 10));
  be_write(b, L::max_timestamp, 8, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  restamp_crc(b);
  auto r = brook::record_batch_view::parse(cspan(b));
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == brook::errc::corrupt_message);
}

TEST_CASE("record batch: magic other than 2 is refused", "[format][record_batch]") {
  auto b = build_batch({{1, std::nullopt, std::string("v"), {}}});
  for (int m : {0, 1, 3, 0x7f, 0x80, 0xff}) {
    auto t = b;
    t[L::magic] = static_cast<std::byte>(m);
    restamp_crc(t);  // the magic is outside the CRC anyway; make sure only the magic is wrong
    INFO("magic " << m);
    CHECK(parse_code(t) == errc::corrupt_message);
    CHECK(parse_code(t, {false, false}) == errc::corrupt_message);
  }
}

TEST_CASE("record batch: compressed batches are refused without a decompressor, never misread",
          "[format][record_batch]") {
  const auto b = build_batch({{1, std::nullopt, std::string("v"), {}}});
  for (std::uint16_t codec = 1; codec <= 7; ++codec) {
    auto t = b;
    be_write(t, L::attributes, 2, codec);
    restamp_crc(t);  // valid CRC: it is the compression check that must fire
    INFO("codec " << codec);
    const auto code = parse_code(t);
    // The header walk alone does not look at the codec; check_batch_codec does.
    auto h = brook::check_batch_header(cspan(t));
    REQUIRE(h.has_value());
    if (codec <= 4) {
      CHECK(code == errc::unsupported_compression_type);
      CHECK(brook::check_batch_codec(*h).has_value());
      // Header and CRC only: parsed, but its records cannot be read.
      std::unique_ptr<std::byte[]> keep;
      auto v = parse_exact(t, keep, {true, false});
      REQUIRE(v);
      CHECK_FALSE(v->records_readable());
    } else {
      CHECK(code == errc::corrupt_message);  // no such codec
      CHECK_FALSE(brook::check_batch_codec(*h).has_value());
      CHECK(parse_code(t, {true, false}) == errc::corrupt_message);
    }
  }
  SECTION("the other attribute bits do not block parsing") {
    auto t = b;
    be_write(t, L::attributes, 2, 0x10 | 0x40);
    restamp_crc(t);
    CHECK(parse_code(t) == errc::none);
  }
}

TEST_CASE("record batch: counts and deltas that do not add up", "[format][record_batch]") {
  const auto b = build_batch({{1, std::nullopt, std::string("a"), {}},
                              {2, std::nullopt, std::string("b"), {}},
                              {3, std::nullopt, std::string("c"), {}}});
  REQUIRE(parse_code(b) == errc::none);
  auto with = [&](std::size_t pos, std::size_t n, std::uint64_t v) {
    auto t = b;
    be_write(t, pos, n, v);
    restamp_crc(t);
    return parse_code(t);
  };
  CHECK(with(L::records_count, 4, 4) == errc::corrupt_message);           // recordsCount > lastOffsetDelta + 1
  CHECK(with(L::records_count, 4, 2) == errc::corrupt_message);           // fewer records claimed: trailing bytes
  CHECK(with(L::records_count, 4, 0xFFFFFFFF) == errc::corrupt_message);  // negative
  CHECK(with(L::last_offset_delta, 4, 1) == errc::corrupt_message);       // records past lastOffsetDelta
  CHECK(with(L::last_offset_delta, 4, 0xFFFFFFFF) == errc::corrupt_message);
  CHECK(with(L::base_offset, 8, 0x8000000000000000ull) == errc::corrupt_message);  // negative baseOffset
  // lastOffsetDelta larger than the records need is legal (compaction leaves gaps).
  CHECK(with(L::last_offset_delta, 4, 10) == errc::none);
  SECTION("recordsCount raised to match a larger lastOffsetDelta: the records run out") {
    auto t = b;
    be_write(t, L::last_offset_delta, 4, 3);
    be_write(t, L::records_count, 4, 4);
    restamp_crc(t);
    CHECK(parse_code(t) == errc::corrupt_message);
  }
  SECTION("offset deltas out of order") {
    auto t = b;
    // Record 1 starts after record 0 (L::records + 1 + body0); set its offsetDelta (zigzag 1 -> 02) to 0.
    const std::size_t r0 = L::records;
    const std::size_t r1 = r0 + 1 + static_cast<std::size_t>(be_read(t, r0, 1) / 2);
    REQUIRE(be_read(t, r1 + 3, 1) == 0x02);
    be_write(t, r1 + 3, 1, 0x00);
    restamp_crc(t);
    CHECK(parse_code(t) == errc::corrupt_message);
  }
  SECTION("batchLength smaller than the header") {
    for (std::uint64_t len : {0ull, 1ull, 48ull, 0x80000000ull}) {
      auto t = b;
      be_write(t, L::batch_length, 4, len);
      INFO("batchLength " << len);
      CHECK(parse_code(t) == errc::corrupt_message);
    }
  }
  SECTION("an empty batch (recordsCount 0, as compaction can leave) parses with no records") {
    bytes t(b.begin(), b.begin() + L::records);
    be_write(t, L::batch_length, 4, L::records - L::log_overhead);
    be_write(t, L::records_count, 4, 0);
    restamp_crc(t);
    std::unique_ptr<std::byte[]> keep;
    auto v = parse_exact(t, keep);
    REQUIRE(v.has_value());
    CHECK(v->begin() == v->end());
  }
}

TEST_CASE("record batch: record length pointing past the batch end", "[format][record_batch]") {
  const auto b = build_batch({{1, std::nullopt, std::string("abc"), {}}});
  // Single record: len byte at L::records, body = 00 00 00 01 06 'abc' 00 = 9 bytes -> 0x12.
  REQUIRE(be_read(b, L::records, 1) == 0x12);
  for (std::uint64_t len : {0x14ull, 0x7eull}) {  // 10 and 63: past the end
    auto t = b;
    be_write(t, L::records, 1, len);
    restamp_crc(t);
    INFO("length byte " << len);
    CHECK(parse_code(t) == errc::corrupt_message);
    CHECK(parse_code(t, {false, true}) == errc::corrupt_message);
  }
  SECTION("a length varint that runs off the end of the batch") {
    auto t = b;
    t.back() = std::byte{0x80};  // headersCount byte becomes a dangling continuation byte
    restamp_crc(t);
    CHECK(parse_code(t) == errc::corrupt_message);
  }
}

TEST_CASE("record batch: header with a negative key length", "[format][record_batch]") {
  const auto b = build_batch({{0, std::nullopt, std::nullopt, {{"k", std::string("v")}}}});
  REQUIRE(be_read(b, first_header_pos, 1) == 0x02);       // key length 1
  for (std::uint64_t zz : {0x01ull, 0x03ull, 0x7full}) {  // -1, -2, -64
    auto t = b;
    be_write(t, first_header_pos, 1, zz);
    restamp_crc(t);
    INFO("key length zigzag " << zz);
    CHECK(parse_code(t) == errc::corrupt_message);
  }
  SECTION("header value length -2") {
    auto t = b;
    be_write(t, first_header_pos + 2, 1, 0x03);
    restamp_crc(t);
    CHECK(parse_code(t) == errc::corrupt_message);
  }
}

TEST_CASE("record batch: bytes after the last record inside the batch", "[format][record_batch]") {
  const auto b = build_batch({{1, std::nullopt, std::string("v"), {}}});
  for (std::size_t extra : {1u, 2u, 100u}) {
    auto t = b;
    t.insert(t.end(), extra, std::byte{0});
    be_write(t, L::batch_length, 4, t.size() - L::log_overhead);
    restamp_crc(t);
    INFO("extra " << extra);
    CHECK(parse_code(t) == errc::corrupt_message);
    // Without the record walk the header alone looks fine (documented: check.records = false skips it).
    CHECK(parse_code(t, {true, false}) == errc::none);
  }
}

TEST_CASE("record batch: set_batch_log_append_time", "[format][record_batch]") {
  auto recs = tricky_records();
  auto b = build_batch(recs, brook::offset{50});
  const auto before_base_ts = be_read(b, L::base_timestamp, 8);
  const timestamp_ms now = 1'800'000'000'123;
  brook::set_batch_log_append_time(mspan(b), now);
  CHECK(be_read(b, L::attributes, 2) == 0x08);
  CHECK(be_read(b, L::max_timestamp, 8) == static_cast<std::uint64_t>(now));
  CHECK(be_read(b, L::base_timestamp, 8) == before_base_ts);
  CHECK(be_read(b, L::crc, 4) == brook::test::crc32c_bitwise(cspan(b).subspan(L::crc_begin)));
  std::unique_ptr<std::byte[]> keep;
  auto v = parse_exact(b, keep);
  REQUIRE(v.has_value());
  CHECK(v->header().timestamp_type() == brook::timestamp_type::log_append_time);
  CHECK(v->header().max_timestamp == now);
  auto got = read_records(*v);
  REQUIRE(got.size() == recs.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("record " << i);
    CHECK(got[i].ts == now);
    recs[i].ts = now;
  }
  CHECK(got == recs);  // everything else unchanged
}

TEST_CASE("record batch: set_batch_base_offset and set_batch_leader_epoch keep the CRC", "[format][record_batch]") {
  auto b = build_batch(tricky_records(), brook::offset{0});
  const auto crc = be_read(b, L::crc, 4);
  const auto tail = bytes(b.begin() + L::magic, b.end());
  brook::set_batch_base_offset(mspan(b), brook::offset{123456789012});
  brook::set_batch_leader_epoch(mspan(b), 77);
  CHECK(be_read(b, L::crc, 4) == crc);
  CHECK(bytes(b.begin() + L::magic, b.end()) == tail);  // only the first 16 bytes changed
  CHECK(be_read(b, 0, 8) == 123456789012u);
  CHECK(be_read(b, 12, 4) == 77u);
  std::unique_ptr<std::byte[]> keep;
  auto v = parse_exact(b, keep);
  REQUIRE(v.has_value());
  CHECK(v->header().partition_leader_epoch == 77);
  auto offs = read_offsets(*v);
  for (std::size_t i = 0; i < offs.size(); ++i) CHECK(offs[i] == 123456789012 + static_cast<std::int64_t>(i));
  CHECK(v->last_offset() == brook::offset{123456789012 + static_cast<std::int64_t>(offs.size()) - 1});
}

TEST_CASE("record batch: error messages name the place", "[format][record_batch]") {
  auto b = build_batch({{1, std::nullopt, std::string("v"), {}}});
  b.back() ^= std::byte{1};
  auto r = brook::record_batch_view::parse(cspan(b), {}, "00000000000000000000.log at byte 4096");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == errc::corrupt_message);
  CHECK_THAT(r.error().message(), Catch::Contains("00000000000000000000.log at byte 4096"));
  CHECK_THAT(r.error().message(), Catch::Contains("CRC"));
}

// Found by brook_fuzz_record_batch (session 20): a batch at baseOffset INT64_MAX whose one
// record claims offsetDelta 1. The header is valid (lastOffsetDelta 0); only the record walk
// refuses the delta, so a view parsed without it must stop iterating, not overflow.
TEST_CASE("record batch: unvalidated records at the top of the offset range stop the iterator",
          "[format][record_batch]") {
  brook::record_batch_builder b;
  const std::string v = "v";
  b.append(1000, brook::nullable_bytes(), brook::nullable_bytes(v), {});
  const auto built = b.finish();
  std::vector<std::byte> raw(built.begin(), built.end());
  boost::endian::store_big_s64(reinterpret_cast<unsigned char*>(raw.data()), std::numeric_limits<std::int64_t>::max());
  // Record 0: length, attributes, timestampDelta 0, then offsetDelta (zigzag 1 = 2).
  const std::size_t delta_at = L::header_size + 3;
  REQUIRE(raw[delta_at] == std::byte{0});
  raw[delta_at] = std::byte{2};
  REQUIRE_FALSE(brook::record_batch_view::parse(raw, brook::batch_check{false, true}));  // the walk refuses it
  auto view = brook::record_batch_view::parse(raw, brook::batch_check{false, false});
  REQUIRE(view);
  std::size_t n = 0;
  for (const auto& r : *view) {
    CHECK(r.offset() >= view->base_offset());
    ++n;
  }
  CHECK(n == 0);
}

namespace {

// Checks seek(o) against the iterator for every o from two below the batch to two above:
// it lands on the first record at or after o, and the records from there are the rest.
void check_seek_everywhere(const brook::record_batch_view& v) {
  std::vector<std::int64_t> all;
  for (const auto& r : v) all.push_back(r.offset().value());
  const std::int64_t lo = v.base_offset().value() - 2, hi = v.last_offset().value() + 2;
  for (std::int64_t o = std::max<std::int64_t>(lo, 0); o <= hi; ++o) {
    INFO("seek to " << o);
    const auto first = std::lower_bound(all.begin(), all.end(), o);
    std::vector<std::int64_t> want(first, all.end()), got;
    for (auto it = v.seek(brook::offset(o)); it != v.end(); ++it) got.push_back(it->offset().value());
    REQUIRE(got == want);
  }
}

// A batch of `n` records whose offsetDeltas are 3 * i (compaction's gaps), lastOffsetDelta
// 3 * (n - 1) + 2. REQUIRES: every record's body under 64 bytes, n under 22 (one-byte varints).
bytes gapped_batch(std::size_t n) {
  std::vector<test_record> recs;
  for (std::size_t i = 0; i < n; ++i) recs.push_back({7, std::nullopt, std::string(i % 5, 'x'), {}});
  auto b = build_batch(recs, brook::offset{40});
  std::size_t at = L::records;
  for (std::size_t i = 0; i < n; ++i) {
    const auto len = be_read(b, at, 1) / 2;
    REQUIRE(be_read(b, at + 3, 1) == 2 * i);  // offsetDelta i, zigzag
    be_write(b, at + 3, 1, 2 * 3 * i);
    at += 1 + len;
  }
  REQUIRE(at == b.size());
  be_write(b, L::last_offset_delta, 4, 3 * (n - 1) + 2);
  restamp_crc(b);
  return b;
}

}  // namespace

TEST_CASE("record batch: seek lands on the first record at or after an offset", "[format][record_batch]") {
  SECTION("seeded batches that fill every offset (one- and multi-byte record lengths)") {
    const auto seed = brook::test::property_seed(2);
    INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 2: rerun with the same base)");
    brook::test::record_gen g(seed);
    for (int iter = 0; iter < 100; ++iter) {
      INFO("iteration " << iter);
      const auto b = build_batch(g.records(30), brook::offset{g.s(0, std::int64_t{1} << 50)});
      std::unique_ptr<std::byte[]> keep;
      auto v = parse_exact(b, keep);
      REQUIRE(v.has_value());
      check_seek_everywhere(*v);
    }
  }
  SECTION("a compacted batch with gaps between offsets reads each offsetDelta") {
    const auto b = gapped_batch(20);
    std::unique_ptr<std::byte[]> keep;
    auto v = parse_exact(b, keep);
    REQUIRE(v.has_value());
    REQUIRE(v->record_count() == 20);
    check_seek_everywhere(*v);
    CHECK(v->seek(brook::offset{41})->offset() == brook::offset{43});
    CHECK(v->seek(brook::offset{40 + 57})->offset() == brook::offset{40 + 57});  // the last record
    CHECK(v->seek(brook::offset{40 + 58}) == v->end());                          // in the gap after it
  }
  SECTION("unchecked records: a damaged length ends the seek, never read past") {
    const auto b = build_batch({{1, std::nullopt, std::string("abc"), {}}, {1, std::nullopt, std::string("def"), {}}});
    REQUIRE(be_read(b, L::records, 1) == 0x12);                       // record 0's body: 9 bytes
    for (std::uint64_t len : {0x00ull, 0x01ull, 0x7eull, 0x80ull}) {  // 0, -1, 63 (past the end), dangling
      INFO("length byte " << len);
      auto t = b;
      be_write(t, L::records, 1, len);
      restamp_crc(t);
      std::unique_ptr<std::byte[]> keep;
      auto v = parse_exact(t, keep, brook::batch_check{true, false});
      REQUIRE(v.has_value());
      CHECK(v->seek(brook::offset{1}) == v->end());
      auto compacted = t;
      be_write(compacted, L::last_offset_delta, 4, 5);
      restamp_crc(compacted);
      auto w = parse_exact(compacted, keep, brook::batch_check{true, false});
      REQUIRE(w.has_value());
      CHECK(w->seek(brook::offset{1}) == w->end());
    }
  }
}

TEST_CASE("record batch: seek from a known record's place lands where seek does, whatever the hint",
          "[format][record_batch]") {
  const auto seed = brook::test::property_seed(3);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 3: rerun with the same base)");
  brook::test::record_gen g(seed);
  for (int iter = 0; iter < 30; ++iter) {
    INFO("iteration " << iter);
    const auto b = build_batch(g.records(40), brook::offset{g.s(0, std::int64_t{1} << 40)});
    std::unique_ptr<std::byte[]> keep;
    auto v = parse_exact(b, keep);
    REQUIRE(v.has_value());
    // Where each record starts in the records (the true hints).
    std::vector<std::uint32_t> starts;
    const auto records = v->records_bytes();
    const std::byte* body = nullptr;
    for (const std::byte* p = records.data(); p != nullptr && p < records.data() + records.size();
         p = brook::detail::skip_record(p, records.data() + records.size(), body))
      starts.push_back(static_cast<std::uint32_t>(p - records.data()));
    REQUIRE(starts.size() == v->record_count());
    const auto n = static_cast<std::int32_t>(starts.size());
    for (std::int32_t d = 0; d < n; ++d) {
      const brook::offset o = v->base_offset() + d;
      INFO("offset delta " << d);
      const auto want = v->seek(o);
      REQUIRE(want != v->end());
      for (std::int32_t k = 0; k <= d; ++k) {  // every true hint at or before the target
        auto got = v->seek(o, brook::record_position{starts[static_cast<std::size_t>(k)], k});
        REQUIRE(got != v->end());
        CHECK(got->offset() == o);
      }
      // Hints that do not fit: past the target, past the records, a record's start with
      // another record's index, a negative index.
      const std::vector<brook::record_position> bad{{starts.back(), n - 1},
                                                    {static_cast<std::uint32_t>(records.size()), 0},
                                                    {static_cast<std::uint32_t>(records.size() + 1000), 1},
                                                    {starts[static_cast<std::size_t>(d / 2)], d / 2 + 1},
                                                    {starts[static_cast<std::size_t>(d / 2)], d / 2 - 1},
                                                    {0, -1}};
      for (const auto& h : bad) {
        INFO("hint byte " << h.byte << " index " << h.index);
        auto got = v->seek(o, h);
        REQUIRE(got != v->end());
        CHECK(got->offset() == o);
        CHECK(got->value().to_string() == want->value().to_string());
      }
    }
    CHECK(v->seek(v->last_offset() + 1, brook::record_position{starts[0], 0}) == v->end());
  }
  SECTION("a compacted batch ignores the hint") {
    const auto gb = gapped_batch(20);
    std::unique_ptr<std::byte[]> keep;
    auto v = parse_exact(gb, keep);
    REQUIRE(v.has_value());
    CHECK(v->seek(brook::offset{41}, brook::record_position{0, 0})->offset() == brook::offset{43});
  }
}

// Compressed batches: the builder finishes them with each codec, record_batch_view reads their
// records through a batch_decompressor exactly as the uncompressed batch's, and every way the
// payload can disagree with the header is a named error, never misread records.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/format/batch_decompressor.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

#include "support/format_helpers.hpp"
#include "support/seeds.hpp"
#include "support/test_codecs.hpp"

namespace L = brook::batch_layout;
using brook::compression_type;
using brook::errc;
using brook::timestamp_ms;
using brook::test::build_batch;
using brook::test::bytes;
using brook::test::cspan;
using brook::test::read_offsets;
using brook::test::read_records;
using brook::test::test_record;
using brook::test::with_payload;

namespace {

std::vector<test_record> sample_records(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<test_record> out;
  const timestamp_ms t0 = 1'700'000'000'000;
  for (int i = 0; i < n; ++i) {
    test_record r;
    r.ts = t0 + static_cast<timestamp_ms>(rng() % 5000);
    if (rng() % 4) r.key = fmt::format("user-{}", rng() % 50);
    if (rng() % 8) r.value = fmt::format(R"({{"event":"click","n":{},"pad":"{}"}})", i, std::string(rng() % 300, 'x'));
    if (rng() % 3 == 0) r.headers.push_back({"trace", std::string("abc")});
    out.push_back(std::move(r));
  }
  return out;
}

const brook::compression_codec& codec_of(const brook::compression_codecs& cs, compression_type t) {
  auto c = cs.get(t);
  REQUIRE(c.has_value());
  return **c;
}

// The records of `batch` compressed with `t` as one payload (what a writer puts after the header).
bytes compress_records(const bytes& uncompressed, const brook::compression_codec& c) {
  brook::byte_buffer out;
  REQUIRE(
      c.compress({uncompressed.data() + L::header_size, uncompressed.size() - L::header_size}, c.default_level(), out));
  return bytes(out.begin(), out.end());
}

errc parse_error(const bytes& b, brook::batch_decompressor& d) {
  auto v = brook::record_batch_view::parse(cspan(b), d);
  if (v) return errc::none;
  REQUIRE_FALSE(v.error().message().empty());
  return static_cast<errc>(v.error().code().value());
}

}  // namespace

TEST_CASE("compressed batch: each codec reads back the records of the uncompressed batch", "[format][compression]") {
  const auto codecs = brook::test::all_codecs();
  brook::batch_decompressor d(codecs);
  for (std::uint64_t i = 1; i <= 12; ++i) {
    const auto seed = brook::test::property_seed(i);
    const auto recs = sample_records(seed, 1 + static_cast<int>(seed % 40));
    const auto plain = build_batch(recs, brook::offset{100});
    auto pv = brook::record_batch_view::parse(cspan(plain));
    REQUIRE(pv);
    for (auto t : brook::test::every_compression_type) {
      INFO("seed " << seed << " (" << brook::test::seed_base_hint() << ") codec " << brook::compression_name(t));
      const auto b = build_batch(recs, codec_of(codecs, t), brook::offset{100});
      auto v = brook::record_batch_view::parse(cspan(b), d);
      REQUIRE(v);
      CHECK(v->compression() == t);
      CHECK(v->compressed() == (t != compression_type::none));
      // The header fields other than the codec, length and CRC are the uncompressed batch's.
      const auto& h = v->header();
      CHECK(h.base_offset == pv->header().base_offset);
      CHECK(h.last_offset_delta == pv->header().last_offset_delta);
      CHECK(h.records_count == pv->header().records_count);
      CHECK(h.base_timestamp == pv->header().base_timestamp);
      CHECK(h.max_timestamp == pv->header().max_timestamp);
      CHECK(read_records(*v) == recs);
      CHECK(read_offsets(*v) == read_offsets(*pv));
      CHECK(v->timestamps().max == pv->timestamps().max);
      // The records read are the uncompressed batch's record bytes.
      const auto a = v->records_bytes();
      const auto e = pv->records_bytes();
      CHECK(bytes(a.begin(), a.end()) == bytes(e.begin(), e.end()));
    }
  }
}

TEST_CASE("compressed batch: uncompressed batches stay zero-copy", "[format][compression]") {
  brook::batch_decompressor d;
  const auto b = build_batch({{1, std::nullopt, std::string("v"), {}}});
  auto v = brook::record_batch_view::parse(cspan(b), d);
  REQUIRE(v);
  CHECK(v->records_bytes().data() == b.data() + L::header_size);
}

TEST_CASE("compressed batch: without a decompressor the records are refused, never misread", "[format][compression]") {
  const auto codecs = brook::test::all_codecs();
  const auto recs = sample_records(7, 5);
  for (auto t : brook::test::every_compression_type) {
    if (t == compression_type::none) continue;
    INFO(brook::compression_name(t));
    const auto b = build_batch(recs, codec_of(codecs, t));
    auto v = brook::record_batch_view::parse(cspan(b));
    REQUIRE_FALSE(v);
    CHECK(v.error() == errc::unsupported_compression_type);
    CHECK_THAT(v.error().message(), Catch::Contains(std::string(brook::compression_name(t))));
    // Header and CRC alone: a view whose records are not readable.
    auto h = brook::record_batch_view::parse(cspan(b), brook::batch_check{true, false});
    REQUIRE(h);
    CHECK_FALSE(h->records_readable());
    CHECK(h->record_count() == recs.size());
    // A decompressor without the codec names it and how to enable it.
    brook::batch_decompressor none_only;
    CHECK(parse_error(b, none_only) == errc::unsupported_compression_type);
    auto e = brook::record_batch_view::parse(cspan(b), none_only);
    CHECK_THAT(e.error().message(), Catch::Contains("brook/codecs/"));
  }
}

TEST_CASE("compressed batch: a payload that disagrees with the header is corrupt_message", "[format][compression]") {
  const auto codecs = brook::test::all_codecs();
  brook::batch_decompressor d(codecs);
  const auto three = build_batch({{1, std::nullopt, std::string("a"), {}},
                                  {2, std::nullopt, std::string("b"), {}},
                                  {3, std::nullopt, std::string("c"), {}}});
  const auto two = build_batch({{1, std::nullopt, std::string("a"), {}}, {2, std::nullopt, std::string("b"), {}}});
  for (auto t : brook::test::every_compression_type) {
    if (t == compression_type::none) continue;
    const auto& c = codec_of(codecs, t);
    INFO(brook::compression_name(t));
    SECTION(fmt::format("{}: more records than recordsCount", brook::compression_name(t))) {
      CHECK(parse_error(with_payload(two, t, compress_records(three, c)), d) == errc::corrupt_message);
    }
    SECTION(fmt::format("{}: fewer records than recordsCount", brook::compression_name(t))) {
      CHECK(parse_error(with_payload(three, t, compress_records(two, c)), d) == errc::corrupt_message);
    }
    SECTION(fmt::format("{}: a malformed inner record", brook::compression_name(t))) {
      auto damaged = three;
      damaged[L::header_size] = std::byte{0x7f};  // first record's length runs past the end
      CHECK(parse_error(with_payload(three, t, compress_records(damaged, c)), d) == errc::corrupt_message);
    }
    SECTION(fmt::format("{}: garbage and empty payloads", brook::compression_name(t))) {
      const bytes garbage(64, std::byte{0x5a});
      CHECK(parse_error(with_payload(three, t, garbage), d) == errc::corrupt_message);
      CHECK(parse_error(with_payload(three, t, {}), d) == errc::corrupt_message);
    }
    SECTION(fmt::format("{}: every truncation of the payload", brook::compression_name(t))) {
      const auto payload = compress_records(three, c);
      for (std::size_t n = 0; n < payload.size(); ++n) {
        INFO("kept " << n << " of " << payload.size());
        const auto e = parse_error(with_payload(three, t, std::span(payload).first(n)), d);
        CHECK((e == errc::corrupt_message || e == errc::record_too_large));
      }
    }
  }
}

TEST_CASE("compressed batch: decompression stops at the decompressor's limit", "[format][compression]") {
  const auto codecs = brook::test::all_codecs();
  // One record of 1 MiB of zeros: a few KiB compressed.
  const std::vector<test_record> big{{1, std::nullopt, std::string(1 << 20, '\0'), {}}};
  for (auto t : brook::test::every_compression_type) {
    INFO(brook::compression_name(t));
    const auto b = build_batch(big, codec_of(codecs, t));
    brook::batch_decompressor small(codecs, 64 * 1024);
    if (t == compression_type::none) {
      CHECK(parse_error(b, small) == errc::none);  // nothing to decompress: the limit is for codecs
      continue;
    }
    CHECK(b.size() < 100 * 1024);
    CHECK(parse_error(b, small) == errc::record_too_large);
    brook::batch_decompressor enough(codecs, 2 << 20);
    CHECK(parse_error(b, enough) == errc::none);
  }
}

TEST_CASE("compressed batch: the decompressor's buffer is reused from batch to batch", "[format][compression]") {
  const auto codecs = brook::test::all_codecs();
  brook::batch_decompressor d(codecs);
  const auto& zstd = codec_of(codecs, compression_type::zstd);
  const auto a = build_batch(sample_records(1, 30), zstd);
  const auto b = build_batch(sample_records(2, 10), zstd);
  auto va = brook::record_batch_view::parse(cspan(a), d);
  REQUIRE(va);
  const auto* first = va->records_bytes().data();
  auto vb = brook::record_batch_view::parse(cspan(b), d);
  REQUIRE(vb);
  CHECK(vb->records_bytes().data() == first);  // the smaller batch fits the buffer as it is
  CHECK(read_records(*vb) == sample_records(2, 10));
}

TEST_CASE("compressed batch: the builder writes Kafka's header for a compressed batch", "[format][compression]") {
  const auto codecs = brook::test::all_codecs();
  brook::record_batch_builder bld(brook::batch_options{.producer_id = 7, .producer_epoch = 1, .base_sequence = 3});
  bld.reset(brook::offset{5});
  bld.append(1000, std::string_view("k"), std::string_view("v1"));
  bld.append(900, brook::nullable_bytes::null(), std::string_view("v2"));
  const auto& gz = codec_of(codecs, compression_type::gzip);
  auto s = bld.finish(gz, gz.default_level());
  REQUIRE(s);
  const bytes b(s->begin(), s->end());
  const auto h = brook::decode_batch_header_unchecked(b.data());
  CHECK(h.compression() == compression_type::gzip);
  CHECK((h.attributes & ~0x7) == 0);
  CHECK(h.base_offset == brook::offset{5});
  CHECK(h.last_offset_delta == 1);
  CHECK(h.records_count == 2);
  CHECK(h.base_timestamp == 1000);
  CHECK(h.max_timestamp == 1000);
  CHECK(h.producer_id == 7);
  CHECK(h.base_sequence == 3);
  CHECK(h.size_bytes() == b.size());
  CHECK(b[L::header_size] == std::byte{0x1f});  // a gzip member follows the header
  CHECK(b[L::header_size + 1] == std::byte{0x8b});
  CHECK(h.crc == brook::crc32c(std::span(b).subspan(L::crc_begin)));
  SECTION("a level out of range is invalid_config") {
    bld.reset();
    bld.append(1, std::string_view("k"), std::string_view("v"));
    auto bad = bld.finish(gz, 42);
    REQUIRE_FALSE(bad);
    CHECK(bad.error() == errc::invalid_config);
  }
}

TEST_CASE("compressed batch: buffers kept for small batches stay small", "[format][compression]") {
  // A consumer keeps each batch's buffer while its records are held (retaining): a small
  // batch must not hold a whole 64 KiB window, whatever a reused buffer gets.
  const auto codecs = brook::test::all_codecs();
  for (auto t : brook::test::every_compression_type) {
    if (t == compression_type::none) continue;
    INFO(brook::compression_name(t));
    const auto b = build_batch(sample_records(8, 1), codec_of(codecs, t));
    brook::batch_decompressor d(codecs);
    d.set_retaining(true);
    for (int i = 0; i < 50; ++i) REQUIRE(brook::record_batch_view::parse(cspan(b), d).has_value());
    const auto kept = d.take_retained();
    REQUIRE(kept.size() == 50);
    for (const auto& k : kept) CHECK(k.capacity() <= 8 * 1024);
  }
}

TEST_CASE("compressed batch: an empty batch with codec bits has no records and its payload is not decoded",
          "[format][compression]") {
  // Kafka's DefaultRecordBatch.iterator() returns nothing for recordsCount 0 without looking
  // at the payload; such a batch reads the same here, with or without the codec.
  const auto codecs = brook::test::all_codecs();
  auto one = build_batch(sample_records(5, 1));
  brook::test::be_write(one, L::records_count, 4, 0);
  for (auto t : brook::test::every_compression_type) {
    if (t == compression_type::none) continue;
    const auto valid = compress_records(build_batch(sample_records(6, 3)), codec_of(codecs, t));
    const bytes garbage(40, std::byte{0x5a});
    for (const bytes* payload : {&valid, &garbage}) {
      const auto b = with_payload(one, t, *payload);
      INFO(brook::compression_name(t) << (payload == &valid ? ", a valid payload" : ", garbage"));
      brook::batch_decompressor d(codecs);
      auto v = brook::record_batch_view::parse(cspan(b), d);
      REQUIRE(v.has_value());
      CHECK(v->compressed());
      CHECK(v->record_count() == 0);
      CHECK(v->begin() == v->end());
      CHECK(v->size_bytes() == b.size());
      brook::batch_decompressor none_enabled;  // the codec itself is not needed
      CHECK(brook::record_batch_view::parse(cspan(b), none_enabled).has_value());
      auto plain = brook::record_batch_view::parse(cspan(b));
      REQUIRE(plain.has_value());
      CHECK(plain->records_readable());
      CHECK(plain->begin() == plain->end());
    }
  }
  SECTION("a batch that claims records still needs its payload decoded") {
    auto three = build_batch(sample_records(7, 3));
    const auto b = with_payload(three, compression_type::lz4, bytes(40, std::byte{0x5a}));
    brook::batch_decompressor d(codecs);
    CHECK(parse_error(b, d) == errc::corrupt_message);
  }
}

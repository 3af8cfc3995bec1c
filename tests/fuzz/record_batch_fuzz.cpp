// libFuzzer target for the RecordBatch v2 decoder (built as brook_fuzz_record_batch with
// -DBROOK_BUILD_FUZZERS=ON and Clang; see CMakeLists.txt). The same entry point is linked
// with replay_main.cpp into brook_fuzz_record_batch_replay, which ctest runs over the corpus.
//
// Arbitrary bytes go to record_batch_view::parse with every check level (full; records but no
// CRC, so mutated records reach the record walker; header only), then every record and header
// of a successful parse is iterated and every byte it exposes is read, with invariants checked:
// views stay inside the input, offsets rise within [baseOffset, lastOffset], counts match.
// record_batch_view::seek is tried at offsets across each batch and must agree with the iterator.
// The input is also scanned as a log (batch after batch) and fed to decode_varint/varlong.
// Each parse is repeated with a batch_decompressor holding all four codecs and a 4 MiB limit,
// so compressed batches (the corpus has one of each codec) are decompressed and their records
// walked: a decompression bomb must stop at the limit, never exhaust memory.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <brook/format/crc32c.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/varint.hpp>

#include "fuzz_check.hpp"
#include "support/test_codecs.hpp"

namespace {

volatile std::uint8_t g_sink;

void touch(std::span<const std::byte> in, const std::byte* p, std::size_t n) {
  if (n == 0) return;
  FUZZ_CHECK(p >= in.data() && p + n <= in.data() + in.size());
  std::uint8_t acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc = static_cast<std::uint8_t>(acc + static_cast<std::uint8_t>(p[i]));
  g_sink = acc;
}

/// Where a record's bytes must lie: the input, or a compressed batch's decompressed records.
std::span<const std::byte> home(const brook::record_batch_view& v, std::span<const std::byte> in) {
  return v.compressed() ? v.records_bytes() : in;
}

/// record_batch_view::seek at up to 64 offsets spread over the batch (and either side): it
/// stays inside the records; on checked records it lands where the iterator says it should.
void seeks(const brook::record_batch_view& v, std::span<const std::byte> recs, brook::batch_check check) {
  std::vector<std::int64_t> offs;
  if (check.records)
    for (const auto& r : v) offs.push_back(r.offset().value());
  const std::int64_t lo = v.base_offset().value(), hi = v.last_offset().value();
  std::vector<std::int64_t> at;
  if (lo > 0) at.push_back(lo - 1);
  const std::int64_t step = std::max<std::int64_t>(1, (hi - lo + 1) / 62);
  for (std::int64_t o = lo;; o += step) {
    at.push_back(o);
    if (hi - o < step) break;  // the next would pass hi (or overflow)
  }
  if (hi < std::numeric_limits<std::int64_t>::max()) at.push_back(hi + 1);
  for (const std::int64_t o : at) {
    auto it = v.seek(brook::offset(o));
    std::size_t n = 0;
    for (; it != v.end() && n < 2; ++it, ++n) {
      touch(recs, it->key().data(), it->key().size());
      touch(recs, it->value().data(), it->value().size());
      if (!check.records) continue;
      const auto want = std::lower_bound(offs.begin(), offs.end(), o) + static_cast<std::ptrdiff_t>(n);
      FUZZ_CHECK(want != offs.end() && *want == it->offset().value());
    }
    if (check.records && n < 2)  // ended early: only because the records did
      FUZZ_CHECK(std::lower_bound(offs.begin(), offs.end(), o) + static_cast<std::ptrdiff_t>(n) == offs.end());
  }
}

void walk(const brook::record_batch_view& v, std::span<const std::byte> in, brook::batch_check check) {
  const auto& h = v.header();
  FUZZ_CHECK(v.bytes().data() >= in.data());
  FUZZ_CHECK(v.bytes().data() + v.size_bytes() <= in.data() + in.size());
  FUZZ_CHECK(v.size_bytes() == h.size_bytes());
  FUZZ_CHECK(v.size_bytes() >= brook::batch_layout::header_size);
  FUZZ_CHECK(h.magic == brook::current_magic);
  if (!v.records_readable()) {  // compressed, parsed without a decompressor: header only
    FUZZ_CHECK(v.compressed() && !check.records);
    return;
  }
  FUZZ_CHECK(h.base_offset.value() >= 0);
  FUZZ_CHECK(h.records_count >= 0 && h.records_count <= std::int64_t{h.last_offset_delta} + 1);
  if (check.crc) {
    FUZZ_CHECK(brook::detail::crc32c_sw(v.bytes().subspan(brook::batch_layout::crc_begin)) == h.crc);
  }
  touch(in, v.bytes().data(), v.size_bytes());

  const auto recs = home(v, in);
  std::int64_t count = 0;
  std::int64_t prev = -1;
  for (const auto& r : v) {
    ++count;
    FUZZ_CHECK(count <= h.records_count);
    touch(recs, r.key().data(), r.key().size());
    touch(recs, r.value().data(), r.value().size());
    g_sink = static_cast<std::uint8_t>(r.timestamp());
    std::size_t nh = 0;
    for (const auto& hd : r.headers()) {
      ++nh;
      touch(recs, reinterpret_cast<const std::byte*>(hd.key.data()), hd.key.size());
      touch(recs, hd.value.data(), hd.value.size());
    }
    if (check.records) {
      const auto off = r.offset().value();
      FUZZ_CHECK(off > prev);
      FUZZ_CHECK(off >= h.base_offset.value() && off <= v.last_offset().value());
      FUZZ_CHECK(nh == r.headers().size());
      if (h.timestamp_type() == brook::timestamp_type::log_append_time) FUZZ_CHECK(r.timestamp() == h.max_timestamp);
      prev = off;
    }
  }
  if (check.records) FUZZ_CHECK(count == h.records_count);
  seeks(v, recs, check);
}

void varints(std::span<const std::byte> in) {
  const std::byte* end = in.data() + in.size();
  for (std::size_t i = 0; i < std::min<std::size_t>(in.size(), 16); ++i) {
    const std::byte* p = in.data() + i;
    std::int32_t v32 = 0;
    if (std::size_t n = brook::decode_varint(p, end, v32); n != 0) {
      FUZZ_CHECK(n <= brook::max_varint_size && p + n <= end);
      std::byte buf[brook::max_varint_size];
      const std::size_t m = brook::encode_varint(v32, buf);
      FUZZ_CHECK(m <= n && m == brook::varint_size(v32));  // minimal re-encoding, never longer
      std::int32_t again = 0;
      FUZZ_CHECK(brook::decode_varint(buf, buf + m, again) == m && again == v32);
    }
    std::int64_t v64 = 0;
    if (std::size_t n = brook::decode_varlong(p, end, v64); n != 0) {
      FUZZ_CHECK(n <= brook::max_varlong_size && p + n <= end);
      std::byte buf[brook::max_varlong_size];
      const std::size_t m = brook::encode_varlong(v64, buf);
      FUZZ_CHECK(m <= n && m == brook::varlong_size(v64));
      std::int64_t again = 0;
      FUZZ_CHECK(brook::decode_varlong(buf, buf + m, again) == m && again == v64);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static brook::batch_decompressor dec(brook::test::all_codecs(), std::size_t{4} << 20);
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  for (const brook::batch_check check :
       {brook::batch_check{true, true}, brook::batch_check{false, true}, brook::batch_check{false, false}}) {
    auto r = brook::record_batch_view::parse(in, check, "fuzz");
    if (r) walk(*r, in, check);
    auto d = brook::record_batch_view::parse(in, dec, check, "fuzz");
    if (d) {
      FUZZ_CHECK(!d->compressed() || d->records_bytes().size() <= dec.max_bytes());
      walk(*d, in, check);
    }
  }
  // Log scan: batch after batch while they parse, as a segment reader does.
  std::size_t pos = 0;
  while (pos < size) {
    auto r = brook::record_batch_view::parse(in.subspan(pos), dec, {false, true}, "fuzz scan");
    if (!r) break;
    walk(*r, in.subspan(pos), {false, true});
    pos += r->size_bytes();
  }
  varints(in);
  return 0;
}

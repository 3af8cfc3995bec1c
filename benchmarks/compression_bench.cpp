// Compressed batches (issue 14), per codec, next to the codec library itself on the same bytes.
//
// The payload: JSON-like events with repeated keys (about 150 bytes each, what Kafka topics
// often hold), 100 records a batch (about 16 KiB of records, batch.size's default).
//
//   BM_CodecLibrary/codec:C/op:O   the library alone on a batch's record bytes (compress:
//                                  the builder's 64 batches in turn; decompress: the scan's
//                                  1,024, into a 64 KiB buffer), with its context kept
//                                  across calls and outputs that are not zero-filled (the
//                                  best a caller can do; each input round-trips before the
//                                  timing): O=0 compress, O=1 decompress, O=2 decompress
//                                  and find every record's key and value with no check (a
//                                  scan's floor in Kafka's format). zlib (gzip, level 6),
//                                  snappy (raw), liblz4 (a frame of 64 KiB independent
//                                  blocks, fast), libzstd (level 3)
//   BM_CompressedBuild/codec:C     record_batch_builder: append the 100 records, then
//                                  finish(codec) at Kafka's default level: a producer's work
//                                  for one batch (C=0: uncompressed)
//   BM_CompressedAppend/codec:C    partition_log::append of that batch, prebuilt: validation
//                                  decompresses it and walks its records, then pwrite and
//                                  index into the page cache
//   BM_CompressedScan/codec:C      every record of 1,024 such batches (already in the page
//                                  cache) through read() and for_each_record with a
//                                  batch_decompressor: what a consumer does
//
// brook's overhead is BM_CompressedBuild over op:0 (compress) and BM_CompressedScan per batch
// over op:1 (decompress), or over op:2 counting the record walk no reader avoids as the
// codec's; BM_CompressedAppend over op:1 is decompression plus the append.
// Counters: records/s, ratio (uncompressed record bytes / compressed batch bytes), and for
// the scan us/batch (which Google Benchmark prints with an "s" after it).
// Rates are against CPU time.
#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <brook/codecs/gzip.hpp>
#include <brook/codecs/lz4.hpp>
#include <brook/codecs/snappy.hpp>
#include <brook/codecs/zstd.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/partition_log.hpp>

#include "bench_support.hpp"

namespace {

using namespace brook;

constexpr int records_per_batch = 100;
constexpr int scan_batches = 1024;

std::shared_ptr<const compression_codecs> codecs() {
  static const auto c = std::make_shared<const compression_codecs>(
      compression_codecs{std::make_shared<codecs::gzip_codec>(), std::make_shared<codecs::snappy_codec>(),
                         std::make_shared<codecs::lz4_codec>(), std::make_shared<codecs::zstd_codec>()});
  return c;
}

/// The 100 events of batch `seed`: JSON with the same keys every time, a few varying values.
std::vector<std::string> events(std::uint32_t seed) {
  static constexpr const char* kinds[] = {"page_view", "click", "add_to_cart", "purchase"};
  static constexpr const char* pages[] = {"/", "/search", "/product/1234", "/cart", "/checkout"};
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < records_per_batch; ++i) {
    out.push_back(fmt::format(
        R"({{"event":"{}","user_id":{},"session":"s-{:08x}","page":"{}","ts":{},"device":"{}","amount":{}.{:02}}})",
        kinds[rng() % 4], rng() % 100000, rng(), pages[rng() % 5], 1700000000000 + i, rng() % 2 ? "mobile" : "desktop",
        rng() % 500, rng() % 100));
  }
  return out;
}

/// Builds batch `seed` with `b` and finishes it with `type`.
std::span<std::byte> build(record_batch_builder& b, const std::vector<std::string>& evs, compression_type type,
                           benchmark::State& state) {
  b.reset();
  for (std::size_t i = 0; i < evs.size(); ++i) b.append(1700000000000, nullable_bytes::null(), evs[i]);
  const auto* c = codecs()->find(type);
  auto s = b.finish(*c, c->default_level());
  if (!s) {
    state.SkipWithError(s.error().to_string().c_str());
    return {};
  }
  return *s;
}

/// The record bytes of an uncompressed batch of `evs`.
std::vector<std::byte> record_bytes(const std::vector<std::string>& evs) {
  record_batch_builder b;
  for (const auto& e : evs) b.append(1700000000000, nullable_bytes::null(), e);
  auto s = b.finish();
  return {s.begin() + batch_layout::header_size, s.end()};
}

/// Bytes that grow without zero-filling, as brook's own byte_buffer: the peer's compress sizes
/// its output to the library's bound and shrinks it, and that growth should cost no writes.
using char_buffer = std::vector<char, default_init_allocator<char>>;

/// One codec library, called directly with its context kept.
class library {
 public:
  explicit library(compression_type t) : type_(t) {
    if (t == compression_type::gzip) {
      deflateInit2(&def_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
      inflateInit2(&inf_, 15 + 16);
    }
    if (t == compression_type::lz4) LZ4F_createDecompressionContext(&lz4d_, LZ4F_VERSION);
    if (t == compression_type::zstd) {
      zc_ = ZSTD_createCCtx();
      zd_ = ZSTD_createDCtx();
    }
  }
  ~library() {
    if (type_ == compression_type::gzip) {
      deflateEnd(&def_);
      inflateEnd(&inf_);
    }
    if (lz4d_ != nullptr) LZ4F_freeDecompressionContext(lz4d_);
    if (zc_ != nullptr) ZSTD_freeCCtx(zc_);
    if (zd_ != nullptr) ZSTD_freeDCtx(zd_);
  }
  library(const library&) = delete;
  library& operator=(const library&) = delete;

  /// Compresses `in` into `out` (resized to the result); false on failure.
  bool compress(std::span<const std::byte> in, char_buffer& out) {
    const auto* src = reinterpret_cast<const char*>(in.data());
    switch (type_) {
      case compression_type::gzip: {
        deflateReset(&def_);
        out.resize(deflateBound(&def_, in.size()) + 32);
        def_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src));
        def_.avail_in = static_cast<uInt>(in.size());
        def_.next_out = reinterpret_cast<Bytef*>(out.data());
        def_.avail_out = static_cast<uInt>(out.size());
        if (deflate(&def_, Z_FINISH) != Z_STREAM_END) return false;
        out.resize(out.size() - def_.avail_out);
        return true;
      }
      case compression_type::snappy: {
        out.resize(snappy::MaxCompressedLength(in.size()));
        std::size_t n = 0;
        snappy::RawCompress(src, in.size(), out.data(), &n);
        out.resize(n);
        return true;
      }
      case compression_type::lz4: {
        LZ4F_preferences_t prefs{};
        prefs.frameInfo.blockSizeID = LZ4F_max64KB;
        prefs.frameInfo.blockMode = LZ4F_blockIndependent;
        out.resize(LZ4F_compressFrameBound(in.size(), &prefs));
        const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), src, in.size(), &prefs);
        if (LZ4F_isError(n)) return false;
        out.resize(n);
        return true;
      }
      case compression_type::zstd: {
        out.resize(ZSTD_compressBound(in.size()));
        const std::size_t n = ZSTD_compressCCtx(zc_, out.data(), out.size(), src, in.size(), 3);
        if (ZSTD_isError(n)) return false;
        out.resize(n);
        return true;
      }
      case compression_type::none: break;
    }
    return false;
  }

  /// Decompresses `in` (this library's output) into `out`, which has room for the result
  /// (more than it: liblz4 decodes straight into the output only where a whole block fits).
  bool decompress(const char_buffer& in, std::span<char> out) {
    switch (type_) {
      case compression_type::gzip: {
        inflateReset(&inf_);
        inf_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        inf_.avail_in = static_cast<uInt>(in.size());
        inf_.next_out = reinterpret_cast<Bytef*>(out.data());
        inf_.avail_out = static_cast<uInt>(out.size());
        return inflate(&inf_, Z_FINISH) == Z_STREAM_END;
      }
      case compression_type::snappy: return snappy::RawUncompress(in.data(), in.size(), out.data());
      case compression_type::lz4: {
        std::size_t dst = out.size(), src = in.size();
        const std::size_t r = LZ4F_decompress(lz4d_, out.data(), &dst, in.data(), &src, nullptr);
        return r == 0 && !LZ4F_isError(r);
      }
      case compression_type::zstd:
        return !ZSTD_isError(ZSTD_decompressDCtx(zd_, out.data(), out.size(), in.data(), in.size()));
      case compression_type::none: break;
    }
    return false;
  }

 private:
  compression_type type_;
  z_stream def_{};
  z_stream inf_{};
  LZ4F_dctx* lz4d_ = nullptr;
  ZSTD_CCtx* zc_ = nullptr;
  ZSTD_DCtx* zd_ = nullptr;
};

/// The least a reader does to find each record's key and value in decompressed record bytes:
/// Kafka's varints decoded with no bounds or sanity check. Returns a sum of the value sizes;
/// `walked` is set to the bytes the records took.
std::size_t walk_unchecked(const char* p, int records, std::size_t& walked) {
  const char* const start = p;
  auto uvarint = [&p] { return bench::varint_unchecked(p); };
  std::size_t values = 0;
  for (int i = 0; i < records; ++i) {
    const std::int64_t len = uvarint();
    const char* end = p + len;
    ++p;                                                  // attributes
    (void)uvarint();                                      // timestampDelta
    (void)uvarint();                                      // offsetDelta
    if (const std::int64_t k = uvarint(); k > 0) p += k;  // key
    const std::int64_t v = uvarint();                     // value: where a reader hands it over
    values += static_cast<std::size_t>(v > 0 ? v : 0);
    benchmark::DoNotOptimize(p);
    p = end;
  }
  walked = static_cast<std::size_t>(p - start);
  return values;
}

void rate_counters(benchmark::State& state, std::int64_t records_per_iteration, double ratio) {
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * records_per_iteration), benchmark::Counter::kIsRate);
  state.counters["ratio"] = ratio;
}

void BM_CodecLibrary(benchmark::State& state) {
  const auto type = static_cast<compression_type>(state.range(0));
  const bool decompress = state.range(1) >= 1, walk = state.range(1) == 2;
  // Batches of different events in turn: one input over and over would let the branch
  // predictor learn its exact bit stream. Compression takes BM_CompressedBuild's 64 batches;
  // decompression the 1,024 BM_CompressedScan reads (about 5 MiB compressed for lz4, past
  // this host's 1 MiB L2, as the scan's are).
  const int kinds = decompress ? scan_batches : 64;
  std::vector<std::vector<std::byte>> raw;
  std::vector<char_buffer> packed(kinds);
  library lib(type);
  std::size_t raw_total = 0, packed_total = 0;
  for (int i = 0; i < kinds; ++i) {
    raw.push_back(record_bytes(events(static_cast<std::uint32_t>(i))));
    if (!lib.compress(raw.back(), packed[static_cast<std::size_t>(i)])) return state.SkipWithError("compress failed");
    raw_total += raw.back().size();
    packed_total += packed[static_cast<std::size_t>(i)].size();
  }
  // Every input round-trips before the timing starts (outside it, so that the peer pays for
  // nothing but the library).
  char_buffer scratch, out(std::size_t{64} << 10);
  for (std::size_t k = 0; k < raw.size(); ++k) {
    if (raw[k].size() > out.size() || !lib.decompress(packed[k], out) ||
        std::memcmp(out.data(), raw[k].data(), raw[k].size()) != 0)
      return state.SkipWithError("decompressed bytes differ");
    std::size_t walked = 0;
    walk_unchecked(out.data(), records_per_batch, walked);
    if (walked != raw[k].size()) return state.SkipWithError("the walk did not end at the records' end");
  }
  std::size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const auto& r = raw[i];
    const bool ok = decompress ? lib.decompress(packed[i], out) : lib.compress(r, scratch);
    if (!ok) return state.SkipWithError("the library failed");
    std::size_t walked = 0;
    if (walk) benchmark::DoNotOptimize(walk_unchecked(out.data(), records_per_batch, walked));
    benchmark::DoNotOptimize(decompress ? out.data() : scratch.data());
    bytes += r.size();
    i = (i + 1) % kinds;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  rate_counters(state, records_per_batch, static_cast<double>(raw_total) / static_cast<double>(packed_total));
}
BENCHMARK(BM_CodecLibrary)
    ->ArgNames({"codec", "op"})
    ->ArgsProduct({{1, 2, 3, 4}, {0, 1, 2}})
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);

void BM_CompressedBuild(benchmark::State& state) {
  const auto type = static_cast<compression_type>(state.range(0));
  constexpr int kinds = 64;  // the same 64 batches, in turn, as BM_CodecLibrary
  std::vector<std::vector<std::string>> evs;
  std::size_t raw_total = 0;
  for (int i = 0; i < kinds; ++i) {
    evs.push_back(events(static_cast<std::uint32_t>(i)));
    raw_total += record_bytes(evs.back()).size();
  }
  record_batch_builder b;
  std::size_t i = 0, packed = 0, raw = 0;
  for (auto _ : state) {
    auto s = build(b, evs[i], type, state);
    if (s.empty()) return;
    packed += s.size() - batch_layout::header_size;
    raw += s.size();  // replaced below by the record bytes once the run is over
    benchmark::DoNotOptimize(s.data());
    i = (i + 1) % kinds;
  }
  // Record bytes per iteration: the 64 batches' mean.
  const double per_batch = static_cast<double>(raw_total) / kinds;
  state.SetBytesProcessed(static_cast<std::int64_t>(per_batch * static_cast<double>(state.iterations())));
  (void)raw;
  rate_counters(
      state, records_per_batch,
      per_batch * static_cast<double>(state.iterations()) / static_cast<double>(std::max<std::size_t>(packed, 1)));
}
BENCHMARK(BM_CompressedBuild)
    ->ArgName("codec")
    ->DenseRange(0, 4)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);

/// A fresh log with the four codecs in its own scratch directory; dropped without writeback.
class codec_log {
 public:
  codec_log() {
    log_config c;
    c.codecs = codecs();
    auto r = partition_log::open(dir_.path() / "bench-0", c);
    if (!r) throw std::runtime_error(r.error().to_string());
    log_ = std::move(*r);
  }
  ~codec_log() {
    (void)log_->truncate_to(offset{0});
    log_.reset();
  }
  partition_log* operator->() { return log_.get(); }
  partition_log& operator*() { return *log_; }

 private:
  bench::scratch_dir dir_;
  std::unique_ptr<partition_log> log_;
};

void BM_CompressedAppend(benchmark::State& state) {
  const auto type = static_cast<compression_type>(state.range(0));
  const auto evs = events(1);
  const auto raw = record_bytes(evs);
  record_batch_builder b;
  auto s = build(b, evs, type, state);
  if (s.empty()) return;
  std::vector<std::byte> batch(s.begin(), s.end());
  codec_log log;
  for (auto _ : state) {
    auto r = log->append(batch);
    if (!r) return state.SkipWithError(r.error().to_string().c_str());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(raw.size()));
  rate_counters(state, records_per_batch,
                static_cast<double>(raw.size()) / static_cast<double>(batch.size() - batch_layout::header_size));
}
BENCHMARK(BM_CompressedAppend)
    ->ArgName("codec")
    ->DenseRange(0, 4)
    ->Iterations(16384)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);

void BM_CompressedScan(benchmark::State& state) {
  const auto type = static_cast<compression_type>(state.range(0));
  codec_log log;
  record_batch_builder b;
  std::size_t raw_bytes = 0, stored = 0;
  for (int i = 0; i < scan_batches; ++i) {
    const auto evs = events(static_cast<std::uint32_t>(i));
    raw_bytes += record_bytes(evs).size();
    auto s = build(b, evs, type, state);
    if (s.empty()) return;
    stored += s.size() - batch_layout::header_size;
    if (auto r = log->append(s); !r) return state.SkipWithError(r.error().to_string().c_str());
  }
  batch_decompressor d(*codecs());
  std::int64_t records = 0;
  for (auto _ : state) {
    for (offset at{0}; at < log->log_end_offset();) {
      auto slice = log->read(at, read_options{.max_bytes = 1024 * 1024});
      if (!slice) return state.SkipWithError(slice.error().to_string().c_str());
      auto n = slice->for_each_record([&](const record_view& r) { benchmark::DoNotOptimize(r.value().data()); },
                                      batch_check{}, &d);
      if (!n) return state.SkipWithError(n.error().to_string().c_str());
      records += static_cast<std::int64_t>(*n);
      at = slice->next_offset();
    }
  }
  if (records != state.iterations() * scan_batches * records_per_batch)
    return state.SkipWithError("the scan did not read every record");
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(raw_bytes));
  rate_counters(state, scan_batches * records_per_batch, static_cast<double>(raw_bytes) / static_cast<double>(stored));
  state.counters["us/batch"] = benchmark::Counter(static_cast<double>(state.iterations() * scan_batches) / 1e6,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CompressedScan)
    ->ArgName("codec")
    ->DenseRange(0, 4)
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

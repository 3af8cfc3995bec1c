// Format-layer micro benchmarks, each next to its baseline, all on the same
// 16 KiB batch of 100-byte records (bench_support.hpp):
//
//   BM_Crc32cFold/N    AVX-512 VPCLMULQDQ folding CRC-32C of the batch's first N bytes
//   BM_Crc32cHw        SSE4.2 CRC-32C of 16 KiB             } bytes/s; the CRC
//   BM_Crc32cSw        slicing-by-8 CRC-32C of 16 KiB       } variants against
//   BM_Memcpy/16KiB    memcpy of 16 KiB (L1/L2 resident)    } a plain copy
//   BM_BatchParse      record_batch_view::parse, full check (CRC + every record)
//   BM_BatchParse/crc_only, /records_only   the two halves of that check
//   BM_BatchBuild      record_batch_builder: append every record + finish (records/s)
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include <brook/format/crc32c.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

#include "bench_support.hpp"

namespace {

using namespace brook;

const std::vector<std::byte>& batch() {
  static const std::vector<std::byte> b = bench::standard_batch(1'700'000'000'000);
  return b;
}

void BM_Crc32cHw(benchmark::State& state) {
  if (!detail::cpu_has_sse42()) {
    state.SkipWithError("CPU has no SSE4.2");
    return;
  }
  const auto& b = batch();
  for (auto _ : state) {
    benchmark::DoNotOptimize(b.data());
    std::uint32_t c = detail::crc32c_hw(b);
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * b.size()));
}
BENCHMARK(BM_Crc32cHw);

void BM_Crc32cFold(benchmark::State& state) {
  if (!detail::cpu_has_avx512_clmul()) {
    state.SkipWithError("CPU has no AVX-512 VPCLMULQDQ");
    return;
  }
  const auto& b = batch();
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(b.data());
    std::uint32_t c = detail::crc32c_folded(std::span(b).first(n));
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_Crc32cFold)->Arg(16384)->Arg(4096)->Arg(1024)->Arg(512);

void BM_Crc32cSw(benchmark::State& state) {
  const auto& b = batch();
  for (auto _ : state) {
    benchmark::DoNotOptimize(b.data());
    std::uint32_t c = detail::crc32c_sw(b);
    benchmark::DoNotOptimize(c);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * b.size()));
}
BENCHMARK(BM_Crc32cSw);

void BM_Memcpy16K(benchmark::State& state) {
  const auto& b = batch();
  std::vector<std::byte> dst(b.size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(b.data());
    std::memcpy(dst.data(), b.data(), b.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * b.size()));
}
BENCHMARK(BM_Memcpy16K)->Name("BM_Memcpy/16KiB");

void parse_bench(benchmark::State& state, batch_check check) {
  const auto& b = batch();
  for (auto _ : state) {
    benchmark::DoNotOptimize(b.data());
    auto v = record_batch_view::parse(b, check);
    if (!v) {
      state.SkipWithError(v.error().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(v->record_count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * b.size()));
  state.counters["records/batch"] = static_cast<double>(bench::records_per_batch());
}

void BM_BatchParse(benchmark::State& state) { parse_bench(state, batch_check{}); }
BENCHMARK(BM_BatchParse);
void BM_BatchParseCrcOnly(benchmark::State& state) { parse_bench(state, batch_check{.crc = true, .records = false}); }
BENCHMARK(BM_BatchParseCrcOnly)->Name("BM_BatchParse/crc_only");
void BM_BatchParseRecordsOnly(benchmark::State& state) {
  parse_bench(state, batch_check{.crc = false, .records = true});
}
BENCHMARK(BM_BatchParseRecordsOnly)->Name("BM_BatchParse/records_only");

void BM_BatchBuild(benchmark::State& state) {
  record_batch_builder builder;
  const auto value = bench::make_value(bench::record_value_bytes);
  const std::int32_t n = bench::records_per_batch();
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto s = bench::build_batch(builder, value, 1'700'000'000'000, n);
    benchmark::DoNotOptimize(s.data());
    bytes += s.size();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_BatchBuild);

}  // namespace

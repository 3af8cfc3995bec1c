// Wire-protocol benchmarks, each next to a memcpy of the same bytes in the same run:
//
//   BM_ProduceDecode/vN        decode_request of a Produce request frame (header and body)
//                              carrying one 16 KiB batch (bench_support.hpp); the records
//                              stay a view of the frame, so the cost is the fields around them
//   BM_ProduceMemcpy/vN        memcpy of that frame: what one copy of the request costs
//   BM_FetchEncode/parts:N     encode_response of a Fetch v12 answer: one topic, N partitions,
//                              each with a 16 KiB batch as a log slice (left out of the bytes,
//                              sent with sendfile); bytes/s counts the whole response
//   BM_FetchMemcpy/parts:N     memcpy of the whole response, batches included: the copy a
//                              server that built the answer in memory would make
#include <cstring>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include <brook/protocol/request.hpp>
#include <brook/protocol/response.hpp>
#include <brook/storage/partition_log.hpp>

#include "bench_support.hpp"

namespace {

using namespace brook;
using namespace brook::protocol;

std::vector<std::byte> produce_frame(std::int16_t version, const std::vector<std::byte>& batch) {
  produce_request q;
  q.acks = -1;
  q.timeout_ms = 30'000;
  q.topic_data = {{"orders", {{partition_id{0}, records::view(batch)}}}};
  auto f = encode_request({0, version, 1, "bench-producer"}, q);
  if (!f) throw std::runtime_error(f.error().to_string());
  return *f;
}

void BM_ProduceDecode(benchmark::State& state) {
  const auto batch = bench::standard_batch(1'700'000'000'000);
  const auto frame = produce_frame(static_cast<std::int16_t>(state.range(0)), batch);
  const auto body = std::span<const std::byte>(frame).subspan(frame_prefix_size);
  for (auto _ : state) {
    auto q = decode_request(body);
    if (!q) state.SkipWithError(q.error().to_string().c_str());
    benchmark::DoNotOptimize(q);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_ProduceDecode)->ArgName("v")->Arg(3)->Arg(9);

void BM_ProduceMemcpy(benchmark::State& state) {
  const auto batch = bench::standard_batch(1'700'000'000'000);
  const auto frame = produce_frame(static_cast<std::int16_t>(state.range(0)), batch);
  std::vector<std::byte> dst(frame.size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(frame.data());
    std::memcpy(dst.data(), frame.data(), frame.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * frame.size()));
}
BENCHMARK(BM_ProduceMemcpy)->ArgName("v")->Arg(3)->Arg(9);

/// A log of N partitions' worth of 16 KiB batches, and a Fetch answer with one slice each.
struct fetch_fixture {
  bench::scratch_dir dir;
  std::unique_ptr<partition_log> log;
  fetch_response answer;

  explicit fetch_fixture(int partitions) {
    auto l = partition_log::open(dir.path() / "orders-0");
    if (!l) throw std::runtime_error(l.error().to_string());
    log = std::move(*l);
    answer.responses.push_back({"orders", uuid{}, {}});
    for (int p = 0; p < partitions; ++p) {
      auto b = bench::standard_batch(1'700'000'000'000 + p);
      auto a = log->append(b);
      if (!a) throw std::runtime_error(a.error().to_string());
      auto s = log->read(a->base_offset, {.max_bytes = 1});
      if (!s) throw std::runtime_error(s.error().to_string());
      fetch_response_partition part;
      part.partition_index = partition_id{p};
      part.high_watermark = log->log_end_offset();
      part.last_stable_offset = part.high_watermark;
      part.log_start_offset = offset{0};
      part.records = records::of(*s);
      answer.responses[0].partitions.push_back(std::move(part));
    }
  }
};

void BM_FetchEncode(benchmark::State& state) {
  fetch_fixture f(static_cast<int>(state.range(0)));
  std::size_t size = 0;
  for (auto _ : state) {
    auto r = encode_response(7, f.answer, 12);
    if (!r) state.SkipWithError(r.error().to_string().c_str());
    size = r->size_bytes();
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}
BENCHMARK(BM_FetchEncode)->ArgName("parts")->Arg(1)->Arg(16);

void BM_FetchMemcpy(benchmark::State& state) {
  fetch_fixture f(static_cast<int>(state.range(0)));
  auto r = encode_response(7, f.answer, 12);
  if (!r) throw std::runtime_error(r.error().to_string());
  const auto whole = r->flatten();
  std::vector<std::byte> dst(whole.size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(whole.data());
    std::memcpy(dst.data(), whole.data(), whole.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * whole.size()));
}
BENCHMARK(BM_FetchMemcpy)->ArgName("parts")->Arg(1)->Arg(16);

}  // namespace

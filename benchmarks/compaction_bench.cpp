// Log cleaner benchmarks: one partition_log::compact() pass next to the physical work it
// cannot avoid, the same bytes read and rewritten, in the same run.
//
//   BM_Compact/keys:10000   64 MiB of sealed segments (8 MiB each), 100-byte values under
//                           10,000 keys drawn at random: the map holds 10,000 keys and nearly
//                           every record is superseded (rebuilt batches, tiny output)
//   BM_Compact/keys:0       the same volume with every key distinct: every record is kept,
//                           every batch copied as is (output = input)
//   BM_CompactPeer_PreadPwrite
//                           the same 64 MiB of .log files read with pread and written to new
//                           files with pwrite in 1 MiB chunks, one fdatasync per file: what
//                           rewriting every byte once costs at least
//
// Each iteration starts from a fresh copy of the prebuilt dirty log (copy, open and
// cleanup are outside the timing). Rates are MB/s of input (bytes of the cleanable
// segments), against wall time: the pass ends with fdatasyncs, as its peer does.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <brook/storage/partition_log.hpp>

#include "bench_support.hpp"

namespace {

using namespace brook;

constexpr std::uint64_t input_bytes = 64ull * 1024 * 1024;

log_config cleaner_config() {
  log_config c;
  c.cleanup = cleanup_policy::compact;
  c.segment_bytes = 8ull * 1024 * 1024;
  return c;
}

/// A prebuilt log of `input_bytes` in sealed segments; keys==0 means all distinct.
class template_log {
 public:
  explicit template_log(int keys) {
    dir_ = root_.path() / "t-0";
    auto r = partition_log::open(dir_, cleaner_config());
    if (!r) throw std::runtime_error(r.error().to_string());
    auto& log = **r;
    auto value = bench::make_value(bench::record_value_bytes);
    std::mt19937_64 g(42);
    record_batch_builder b;
    std::int64_t n = 0;
    std::uint64_t written = 0;
    while (written < input_bytes) {
      b.reset();
      while (b.size_bytes() < bench::batch_target_bytes - 200) {
        std::string key =
            keys > 0 ? fmt::format("key-{}", g() % static_cast<std::uint64_t>(keys)) : fmt::format("key-{}", n);
        b.append(1'700'000'000'000 + n, key, nullable_bytes(value));
        ++n;
      }
      auto a = log.append(b.finish());
      if (!a) throw std::runtime_error(a.error().to_string());
      written += a->bytes;
    }
    if (auto x = log.roll(); !x) throw std::runtime_error(x.error().to_string());
    if (auto x = log.close(); !x) throw std::runtime_error(x.error().to_string());
  }
  const fs::path& dir() const noexcept { return dir_; }

  /// Copies the template into a fresh directory `to`.
  void copy_to(const fs::path& to) const {
    fs::create_directories(to);
    for (const auto& de : fs::directory_iterator(dir_)) fs::copy_file(de.path(), to / de.path().filename());
  }
  std::uint64_t log_bytes() const {
    std::uint64_t n = 0;
    for (const auto& de : fs::directory_iterator(dir_))
      if (de.path().extension() == ".log") n += fs::file_size(de.path());
    return n;
  }

 private:
  bench::scratch_dir root_;
  fs::path dir_;
};

void BM_Compact(benchmark::State& state) {
  template_log tpl(static_cast<int>(state.range(0)));
  bench::scratch_dir work;
  std::uint64_t in = 0, out = 0, kept = 0, read = 0;
  int run = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const fs::path d = work.path() / fmt::format("r{}-0", run++);
    tpl.copy_to(d);
    auto log = partition_log::open(d, cleaner_config());
    if (!log) {
      state.SkipWithError(log.error().to_string().c_str());
      break;
    }
    state.ResumeTiming();
    auto st = (*log)->compact();
    state.PauseTiming();
    if (!st) {
      state.SkipWithError(st.error().to_string().c_str());
      break;
    }
    in += st->bytes_before;
    out += st->bytes_after;
    kept += st->records_kept;
    read += st->records_read;
    log->reset();
    fs::remove_all(d);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(in));
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(read), benchmark::Counter::kIsRate);
  state.counters["out/in"] = in ? static_cast<double>(out) / static_cast<double>(in) : 0.0;
  state.counters["kept/read"] = read ? static_cast<double>(kept) / static_cast<double>(read) : 0.0;
}
BENCHMARK(BM_Compact)->ArgName("keys")->Arg(10000)->Arg(0)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CompactPeer_PreadPwrite(benchmark::State& state) {
  template_log tpl(10000);
  bench::scratch_dir work;
  std::vector<fs::path> logs;
  for (const auto& de : fs::directory_iterator(tpl.dir()))
    if (de.path().extension() == ".log") logs.push_back(de.path());
  std::vector<std::byte> buf(1 << 20);
  std::uint64_t in = 0;
  int run = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const fs::path d = work.path() / fmt::format("r{}", run++);
    fs::create_directories(d);
    state.ResumeTiming();
    for (const auto& l : logs) {
      int src = ::open(l.c_str(), O_RDONLY | O_CLOEXEC);
      int dst = ::open((d / l.filename()).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (src < 0 || dst < 0) {
        state.SkipWithError("open failed");
        break;
      }
      off_t pos = 0;
      for (;;) {
        ssize_t n = ::pread(src, buf.data(), buf.size(), pos);
        if (n <= 0) break;
        if (::pwrite(dst, buf.data(), static_cast<std::size_t>(n), pos) != n) {
          state.SkipWithError("pwrite failed");
          break;
        }
        pos += n;
      }
      ::fdatasync(dst);
      ::close(src);
      ::close(dst);
      in += static_cast<std::uint64_t>(pos);
    }
    state.PauseTiming();
    fs::remove_all(d);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(in));
}
BENCHMARK(BM_CompactPeer_PreadPwrite)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

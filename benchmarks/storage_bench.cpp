// Storage benchmarks: brook's partition log next to the raw system call or memory
// operation that bounds it, over the same bytes and the same file conditions.
//
//   BM_LogAppend           partition_log::append of a prebuilt 16 KiB batch as bytes, as a
//                          file, a follower or the network hands it (validate with CRC and
//                          the record walk, assign offsets, pwrite, index; page cache only)
//   BM_LogAppendBuilt      the same batch as record_batch_builder's built_batch, as an
//                          in-process producer hands it (no CRC check, no record walk)
//   BM_RawPwrite           pwrite of the same 16 KiB buffer at the end of a fresh file
//   BM_ProduceAppend       build the batch with record_batch_builder, then append it as a
//                          built_batch (records/s)
//   BM_LogScan             every record of a 256 MiB log through read() (1 MiB slices) and
//                          log_slice::for_each_record with the CRC and records checked
//   BM_Memcpy/256MiB_from_log_mapping
//                          memcpy of the same 256 MiB, read through the same mapping, in
//                          1 MiB chunks into one cache-resident buffer
//   BM_LogLookup           random offset -> its record: read() the batch holding it, walk to it
//                          (seek:1 from the mark the read's hint names)
//   BM_LogLookupFloor      the same lookups with the least Kafka's format allows, outside
//                          brook: a perfect in-memory index straight to the batch, then
//                          the record lengths before the target, unchecked (marks:1: from
//                          the last 16th record before it, as brook's record marks allow)
//   BM_LogAppendFsync      append + flush() (fdatasync) per 16 KiB batch
//   BM_RawPwriteFdatasync  pwrite + fdatasync per 16 KiB buffer
//
// Every append-style run starts on a fresh directory and file and writes the same number
// of bytes as its peer. At the end of a run the file is truncated to zero before it is
// removed, so its dirty pages are dropped instead of written back (kind to the disk, and
// no writeback of one run disturbs the next). The 256 MiB log of the read benchmarks is
// built once, fdatasync'd, and removed at exit.
//
// Page-cache benchmarks report rates against CPU time (user + system of this process,
// robust to other jobs on the machine); the fsync benchmarks use wall time, since waiting
// for the disk is their cost.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include <brook/storage/partition_log.hpp>

#include "bench_support.hpp"

namespace {

using namespace brook;

/// Batches per append run: 16384 x ~16 KiB = ~256 MiB written per run.
constexpr benchmark::IterationCount append_iterations = 16384;
/// Batches per fsync'd run: ~16 MiB, each batch its own fdatasync.
constexpr benchmark::IterationCount fsync_iterations = 1000;
/// Size of the log the read benchmarks scan and look up in.
constexpr std::uint64_t scan_log_bytes = 256ull * 1024 * 1024;
/// max_bytes of each read() in the scan: 1 MiB, Kafka's max.partition.fetch.bytes default.
constexpr std::size_t scan_read_bytes = 1024 * 1024;

timestamp_ms now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The log configuration under test: Kafka's defaults (segment.bytes 1 GiB, so no run rolls).
log_config bench_config() { return log_config{}; }

template <typename T>
bool failed(benchmark::State& state, const result<T>& r) {
  if (r) return false;
  state.SkipWithError(r.error().to_string().c_str());
  return true;
}

bool failed_errno(benchmark::State& state, bool bad, const char* what) {
  if (!bad) return false;
  state.SkipWithError((std::string(what) + ": " + std::strerror(errno)).c_str());
  return true;
}

/// A fresh, empty partition log in its own scratch directory. Destroying it drops the
/// appended bytes without writing them back, then removes the directory.
class fresh_log {
 public:
  fresh_log() {
    auto r = partition_log::open(dir_.path() / "bench-0", bench_config());
    if (!r) throw std::runtime_error(r.error().to_string());
    log_ = std::move(*r);
  }
  ~fresh_log() {
    (void)log_->truncate_to(offset{0});  // dirty pages go without writeback
    log_.reset();
  }
  partition_log& operator*() { return *log_; }
  partition_log* operator->() { return log_.get(); }

 private:
  bench::scratch_dir dir_;
  std::unique_ptr<partition_log> log_;
};

/// A fresh empty file for the raw peers; truncated, closed and removed at the end.
class fresh_file {
 public:
  fresh_file() {
    path_ = dir_.path() / "00000000000000000000.log";
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("open " + path_.string() + ": " + std::strerror(errno));
  }
  ~fresh_file() {
    (void)::ftruncate(fd_, 0);
    ::close(fd_);
  }
  int fd() const noexcept { return fd_; }

 private:
  bench::scratch_dir dir_;
  fs::path path_;
  int fd_ = -1;
};

// ------------------------------------------------------------------ appends to the page cache

void BM_LogAppend(benchmark::State& state) {
  auto batch = bench::standard_batch(now_ms());  // append rewrites baseOffset in place, reuse it
  const std::int64_t records = bench::records_per_batch();
  fresh_log log;
  for (auto _ : state) {
    auto r = log->append(batch);
    if (failed(state, r)) break;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()));
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * records), benchmark::Counter::kIsRate);
  state.counters["batch_bytes"] = static_cast<double>(batch.size());
}
BENCHMARK(BM_LogAppend)->Iterations(append_iterations)->Unit(benchmark::kMicrosecond);

void BM_LogAppendBuilt(benchmark::State& state) {
  const auto value = bench::make_value(bench::record_value_bytes);
  const std::int32_t records = bench::records_per_batch();
  record_batch_builder builder;
  bench::build_batch(builder, value, now_ms(), records);
  const built_batch batch = builder.built();  // append rewrites baseOffset in place, reuse it
  fresh_log log;
  for (auto _ : state) {
    auto r = log->append(batch);
    if (failed(state, r)) break;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(batch.bytes().size()));
  state.counters["records/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * records), benchmark::Counter::kIsRate);
  state.counters["batch_bytes"] = static_cast<double>(batch.bytes().size());
}
BENCHMARK(BM_LogAppendBuilt)->Iterations(append_iterations)->Unit(benchmark::kMicrosecond);

void BM_RawPwrite(benchmark::State& state) {
  auto batch = bench::standard_batch(now_ms());
  fresh_file f;
  off_t pos = 0;
  for (auto _ : state) {
    ssize_t n = ::pwrite(f.fd(), batch.data(), batch.size(), pos);
    if (failed_errno(state, n != static_cast<ssize_t>(batch.size()), "pwrite")) break;
    pos += n;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()));
  state.counters["batch_bytes"] = static_cast<double>(batch.size());
}
BENCHMARK(BM_RawPwrite)->Iterations(append_iterations)->Unit(benchmark::kMicrosecond);

void BM_ProduceAppend(benchmark::State& state) {
  const auto value = bench::make_value(bench::record_value_bytes);
  const std::int32_t records = bench::records_per_batch();
  record_batch_builder builder;
  std::int64_t bytes = 0;
  fresh_log log;
  for (auto _ : state) {
    // One timestamp per batch (a producer's linger window), one record per 100-byte value.
    auto batch = bench::build_batch(builder, value, now_ms(), records);
    auto r = log->append(builder.built());
    if (failed(state, r)) break;
    bytes += static_cast<std::int64_t>(batch.size());
  }
  state.SetItemsProcessed(state.iterations() * records);
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_ProduceAppend)->Iterations(append_iterations)->Unit(benchmark::kMicrosecond);

// ------------------------------------------------------------------ appends with fdatasync

void BM_LogAppendFsync(benchmark::State& state) {
  auto batch = bench::standard_batch(now_ms());
  fresh_log log;
  for (auto _ : state) {
    auto r = log->append(batch);
    if (failed(state, r)) break;
    auto f = log->flush();
    if (failed(state, f)) break;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()));
}
BENCHMARK(BM_LogAppendFsync)->Iterations(fsync_iterations)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_RawPwriteFdatasync(benchmark::State& state) {
  auto batch = bench::standard_batch(now_ms());
  fresh_file f;
  off_t pos = 0;
  for (auto _ : state) {
    ssize_t n = ::pwrite(f.fd(), batch.data(), batch.size(), pos);
    if (failed_errno(state, n != static_cast<ssize_t>(batch.size()), "pwrite")) break;
    pos += n;
    if (failed_errno(state, ::fdatasync(f.fd()) != 0, "fdatasync")) break;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(batch.size()));
}
BENCHMARK(BM_RawPwriteFdatasync)->Iterations(fsync_iterations)->UseRealTime()->Unit(benchmark::kMicrosecond);

// ------------------------------------------------------------------ reads of a 256 MiB log

/// A log the read benchmarks share (the_scan_log(): 256 MiB of 16 KiB batches;
/// the_small_batch_log(): 64 MiB of one-record batches): built on first use, flushed (so no
/// writeback runs during the measurements), read once so its mapping is faulted in for
/// every benchmark alike, and removed at exit.
struct scan_log {
  bench::scratch_dir dir;
  std::unique_ptr<partition_log> log;
  std::uint64_t bytes = 0;
  std::int64_t records = 0;

  /// `batch` is appended until the log holds `size` bytes.
  explicit scan_log(std::vector<std::byte> batch, std::uint64_t size = scan_log_bytes) {
    auto r = partition_log::open(dir.path() / "scan-0", bench_config());
    if (!r) throw std::runtime_error(r.error().to_string());
    log = std::move(*r);
    while (bytes < size) {
      auto a = log->append(batch);
      if (!a) throw std::runtime_error(a.error().to_string());
      bytes += a->bytes;
      records += static_cast<std::int64_t>(a->records);
    }
    if (auto f = log->flush(); !f) throw std::runtime_error(f.error().to_string());
    auto all = whole();
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < all.size(); i += 4096) sum += static_cast<std::uint8_t>(all[i]);
    benchmark::DoNotOptimize(sum);
  }
  /// Every byte of the log through one slice (the log is one segment).
  std::span<const std::byte> whole() const {
    read_options ro;
    ro.max_bytes = std::numeric_limits<std::size_t>::max();
    auto s = log->read(log->log_start_offset(), ro);
    if (!s || s->size_bytes() != bytes) throw std::runtime_error("scan log is not one segment");
    keep = *s;
    return keep.bytes();
  }
  mutable log_slice keep;
};

scan_log& the_scan_log() {
  static scan_log l(bench::standard_batch(now_ms()));
  return l;
}

/// A 64 MiB log of one-record batches (~170 bytes each): ~24 batches per offset index
/// entry (index.interval.bytes 4096), where a lookup scans batch headers from the entry.
scan_log& the_small_batch_log() {
  static scan_log l(
      [] {
        record_batch_builder b;
        auto s = bench::build_batch(b, bench::make_value(bench::record_value_bytes), now_ms(), 1);
        return std::vector<std::byte>(s.begin(), s.end());
      }(),
      64ull * 1024 * 1024);
  return l;
}

void BM_LogScan(benchmark::State& state) {
  auto& f = the_scan_log();
  read_options ro;
  ro.max_bytes = scan_read_bytes;
  for (auto _ : state) {
    offset o = f.log->log_start_offset();
    const offset end = f.log->log_end_offset();
    std::size_t payload = 0;
    std::int64_t n = 0;
    while (o < end) {
      auto s = f.log->read(o, ro);
      if (failed(state, s)) return;
      auto r = s->for_each_record([&](const record_view& rec) { payload += rec.key().size() + rec.value().size(); });
      if (failed(state, r)) return;
      n += static_cast<std::int64_t>(*r);
      o = s->next_offset();
    }
    benchmark::DoNotOptimize(payload);
    if (n != f.records) {
      state.SkipWithError("scan did not deliver every record");
      return;
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.bytes));
  state.SetItemsProcessed(state.iterations() * f.records);
}
BENCHMARK(BM_LogScan)->Unit(benchmark::kMillisecond);

void BM_MemcpyFromLogMapping(benchmark::State& state) {
  auto& f = the_scan_log();
  auto src = f.whole();
  std::vector<std::byte> dst(scan_read_bytes);
  for (auto _ : state) {
    for (std::size_t pos = 0; pos < src.size(); pos += scan_read_bytes) {
      std::size_t n = std::min(scan_read_bytes, src.size() - pos);
      std::memcpy(dst.data(), src.data() + pos, n);
      benchmark::ClobberMemory();
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(src.size()));
}
BENCHMARK(BM_MemcpyFromLogMapping)->Name("BM_Memcpy/256MiB_from_log_mapping")->Unit(benchmark::kMillisecond);

/// The offsets BM_LogLookup draws: uniform over the records in the last span_MiB of the log.
std::vector<std::int64_t> lookup_targets(const scan_log& f, std::int64_t span_MiB) {
  const std::int64_t start = f.log->log_start_offset().value(), end = f.log->log_end_offset().value();
  const auto span_bytes = static_cast<std::uint64_t>(span_MiB) * 1024 * 1024;
  const std::int64_t first = span_bytes >= f.bytes ? start
                                                   : end - static_cast<std::int64_t>(static_cast<double>(end - start) *
                                                                                     static_cast<double>(span_bytes) /
                                                                                     static_cast<double>(f.bytes));
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> pick(first, end - 1);
  std::vector<std::int64_t> targets(1 << 16);
  for (auto& t : targets) t = pick(rng);
  return targets;
}

/// checked:0  the batch is trusted (it was validated on append): header checks only.
/// checked:1  CRC and every record checked as well, as a consumer with check.crcs does.
/// span_MiB    offsets are drawn uniformly from the records in the last span_MiB of the
///             log: the log's size (256, or 64 for the one-record log) = the whole log
///             (DRAM- and TLB-bound), 8 = a tail that fits in L3 (consumers near the head).
/// seek        0: iterate the batch's records to `o`; 1: record_batch_view::seek(o, hint)
///             with the slice's start_hint() (the log's record marks): it steps by record
///             lengths from the mark at or before `o`.
void log_lookup(benchmark::State& state, scan_log& f) {
  const batch_check check = state.range(0) ? batch_check{} : batch_check{.crc = false, .records = false};
  const bool seek = state.range(2) != 0;
  const auto targets = lookup_targets(f, state.range(1));
  read_options ro;
  ro.max_bytes = 1;  // just the batch holding the offset (a first batch is always whole)
  ro.hint = seek;    // and, for seek, where the record marks say a record before it starts
  std::size_t i = 0, payload = 0;
  for (auto _ : state) {
    const offset o(targets[i++ & (targets.size() - 1)]);
    auto s = f.log->read(o, ro);
    if (failed(state, s)) return;
    auto v = record_batch_view::parse(s->bytes(), check);
    if (failed(state, v)) return;
    bool found = false;
    if (seek) {
      auto it = v->seek(o, s->start_hint());
      if (it != v->end() && it->offset() == o) {
        payload += it->value().size();
        found = true;
      }
    } else {
      for (const record_view& rec : *v) {
        if (rec.offset() == o) {
          payload += rec.value().size();
          found = true;
          break;
        }
      }
    }
    if (!found) {
      state.SkipWithError("offset not found in its batch");
      return;
    }
  }
  benchmark::DoNotOptimize(payload);
  state.SetItemsProcessed(state.iterations());
}
void BM_LogLookup(benchmark::State& state) { log_lookup(state, the_scan_log()); }
BENCHMARK(BM_LogLookup)
    ->ArgNames({"checked", "span_MiB", "seek"})
    ->Args({0, 256, 0})
    ->Args({0, 256, 1})
    ->Args({1, 256, 0})
    ->Args({0, 8, 0})
    ->Args({0, 8, 1});

/// One record's end from its length varint (zigzag), with no check at all: the floor's walk.
inline const std::byte* skip_unchecked(const std::byte* p) {
  const std::int64_t length = bench::varint_unchecked(p);
  return p + length;
}

/// BM_LogLookup's floor: the least a lookup touches in Kafka's format, done without brook.
/// The same mapping (the_scan_log()) and the same targets; an index better than any real one
/// (every batch's base offset and position in two vectors, built before the timing, about
/// 258 KiB that stay in cache), so each lookup goes straight to the target's batch.
/// marks:0  one batch header, a prefetch of the lines up to where the target should be, the
///          lengths of the records before the target stepped over unchecked, then the
///          target's length: the format's own cost, the miss into the mapping and the walk
///          inside the batch (records have no index of their own).
/// marks:1  with where every 16th record of each batch starts also in memory (as brook's
///          record marks keep it, storage/record_marks.hpp): the header's line and the lines
///          from the mark to the target asked for at once, at most 15 records stepped over.
void BM_LogLookupFloor(benchmark::State& state) {
  auto& f = the_scan_log();
  const auto all = f.whole();
  const bool marked = state.range(1) != 0;
  constexpr std::int64_t stride = 16;
  std::vector<std::int64_t> bases;
  std::vector<std::size_t> positions;
  std::vector<std::uint32_t> first_mark;  // per batch: its first entry in `marks`
  std::vector<std::uint32_t> marks;       // where record k * stride starts, from the batch's records
  for (std::size_t pos = 0; pos + batch_layout::header_size <= all.size();) {
    const std::byte* b = all.data() + pos;
    bases.push_back(detail::load_be64(b + batch_layout::base_offset));
    positions.push_back(pos);
    first_mark.push_back(static_cast<std::uint32_t>(marks.size()));
    const std::byte* p = b + batch_layout::records;
    const auto n = static_cast<std::int64_t>(detail::load_be32(b + batch_layout::last_offset_delta)) + 1;
    for (std::int64_t k = 0; marked && k < n; ++k, p = skip_unchecked(p))
      if (k % stride == 0) marks.push_back(static_cast<std::uint32_t>(p - (b + batch_layout::records)));
    pos += batch_layout::log_overhead + static_cast<std::size_t>(detail::load_be32(b + batch_layout::batch_length));
  }
  const auto targets = lookup_targets(f, state.range(0));
  auto walk = [&](std::int64_t o, std::int32_t& delta) {
    const auto k = static_cast<std::size_t>(std::upper_bound(bases.begin(), bases.end(), o) - bases.begin()) - 1;
    const std::byte* b = all.data() + positions[k];
    const std::byte* p = b + batch_layout::records;
    std::int64_t n = o - bases[k];  // records to step over
    if (marked) {
      p += marks[first_mark[k] + static_cast<std::size_t>(n / stride)];
      n %= stride;
      __builtin_prefetch(b);
      for (std::int64_t at = 0; at < (n + 2) * 128; at += 64) __builtin_prefetch(p + at);
      if (detail::load_be64(b + batch_layout::base_offset) != bases[k]) delta = -2;  // the header's line
    } else {
      const std::int64_t base = detail::load_be64(b + batch_layout::base_offset);  // the header's line
      // Ask for the lines up to where the target should be (the records spread evenly over
      // the batch's offsets), so that the walk's misses overlap: a walk without it is 2-3x slower.
      const auto size = static_cast<std::uint64_t>(detail::load_be32(b + batch_layout::batch_length)) +
                        batch_layout::log_overhead - batch_layout::records;
      const auto span = static_cast<std::uint64_t>(detail::load_be32(b + batch_layout::last_offset_delta)) + 1;
      const std::uint64_t guess = std::min(size, size * static_cast<std::uint64_t>(o - base + 2) / span);
      for (std::uint64_t at = 64; at < guess; at += 64) __builtin_prefetch(p + at);
      n = o - base;
    }
    for (; n > 0; --n) p = skip_unchecked(p);
    const std::byte* body = nullptr;
    const std::byte* next = detail::skip_record(p, all.data() + all.size(), body);
    if (delta == 0 && (next == nullptr || !detail::record_offset_delta(body, next, delta))) delta = -1;
    return next - p;  // the target record's size
  };
  for (std::size_t i = 0; i < 64; ++i) {  // the walk lands on each target (checked, untimed)
    std::int32_t delta = 0;
    const std::int64_t o = targets[i];
    walk(o, delta);
    const auto k = static_cast<std::size_t>(std::upper_bound(bases.begin(), bases.end(), o) - bases.begin()) - 1;
    if (delta != o - bases[k]) return state.SkipWithError("the floor's walk missed its target");
  }
  std::size_t i = 0;
  std::int64_t payload = 0;
  for (auto _ : state) {
    std::int32_t delta = 0;
    payload += walk(targets[i++ & (targets.size() - 1)], delta) + delta;
  }
  benchmark::DoNotOptimize(payload);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LogLookupFloor)
    ->ArgNames({"span_MiB", "marks"})
    ->Args({256, 0})
    ->Args({8, 0})
    ->Args({256, 1})
    ->Args({8, 1});

/// BM_LogLookup on the_small_batch_log(): one record per batch, so the lookup's cost is
/// finding the batch (index entry, then batch headers), not stepping inside it.
void BM_LogLookupOneRecordBatches(benchmark::State& state) { log_lookup(state, the_small_batch_log()); }
BENCHMARK(BM_LogLookupOneRecordBatches)->ArgNames({"checked", "span_MiB", "seek"})->Args({0, 64, 1})->Args({0, 8, 1});

}  // namespace

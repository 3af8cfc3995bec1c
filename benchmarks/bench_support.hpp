// Shared helpers for brook's benchmarks: a scratch directory on the disk under
// test, the standard 16 KiB batch of 100-byte records, and a way to stop a
// benchmark with a readable reason when a brook call fails.
//
// Scratch files live under $BROOK_BENCH_DIR when set, else under /tmp, in a
// fresh `brook-bench-XXXXXX` directory removed (recursively) at the end.
//
// Thread-safety: none; benchmarks here are single-threaded.
#pragma once

#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <brook/format/record_batch_builder.hpp>

namespace brook::bench {

namespace fs = std::filesystem;

/// Value bytes per record (Kafka's `--record-size 100`); keys are null.
inline constexpr std::size_t record_value_bytes = 100;
/// Target size of one batch: batch.size 16384, Kafka's producer default.
inline constexpr std::size_t batch_target_bytes = 16 * 1024;

/// Where scratch directories go: $BROOK_BENCH_DIR or /tmp.
inline fs::path bench_root() {
  const char* d = ::getenv("BROOK_BENCH_DIR");
  return d != nullptr && *d != '\0' ? fs::path(d) : fs::path("/tmp");
}

/// A fresh directory under bench_root(), removed with everything in it when destroyed.
class scratch_dir {
 public:
  scratch_dir() {
    std::string tmpl = (bench_root() / "brook-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path_ = tmpl;
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

/// Deterministic, not very compressible value bytes.
inline std::vector<std::byte> make_value(std::size_t n, std::uint32_t seed = 1) {
  std::vector<std::byte> v(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::byte>(x);
  }
  return v;
}

/// How many 100-byte-value records fill a batch of at most batch_target_bytes.
inline std::int32_t records_per_batch() {
  std::size_t size = batch_layout::header_size;
  std::int32_t n = 0;
  for (;;) {
    // record_size reads only the value's length, never its bytes.
    std::size_t r = record_batch_builder::record_size(
        0, n, nullable_bytes::null(), nullable_bytes(static_cast<const std::byte*>(nullptr), record_value_bytes));
    if (size + r > batch_target_bytes) return n;
    size += r;
    ++n;
  }
}

/// Builds one batch of records_per_batch() records (null key, 100-byte value, all
/// stamped `ts`) into `b` and returns it; valid until b's next reset.
inline std::span<std::byte> build_batch(record_batch_builder& b, const std::vector<std::byte>& value, timestamp_ms ts,
                                        std::int32_t records) {
  b.reset();
  for (std::int32_t i = 0; i < records; ++i) b.append(ts, nullable_bytes::null(), nullable_bytes(value));
  return b.finish();
}

/// The standard batch, built once, as an owned byte vector.
inline std::vector<std::byte> standard_batch(timestamp_ms ts) {
  record_batch_builder b;
  auto value = make_value(record_value_bytes);
  auto s = build_batch(b, value, ts, records_per_batch());
  return {s.begin(), s.end()};
}

/// The Kafka zigzag varint (or varlong) at `p`, with no bounds or sanity check at all; `p`
/// moves past it. The floors of the lookup and the compressed scan decode with it: the least
/// the format asks of a reader. `Byte` is char or std::byte.
template <typename Byte>
inline std::int64_t varint_unchecked(const Byte*& p) {
  std::uint64_t u = 0;
  unsigned shift = 0;
  std::uint8_t c = 0;
  do {
    c = static_cast<std::uint8_t>(*p++);
    u |= static_cast<std::uint64_t>(c & 0x7f) << shift;
    shift += 7;
  } while ((c & 0x80) != 0);
  return zigzag_decode64(u);
}

}  // namespace brook::bench

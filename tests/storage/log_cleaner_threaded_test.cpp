// The log cleaner running on its own thread while an appender writes and readers scan the
// same compacted partition_log (run under ThreadSanitizer by scripts/test.sh).
//
// Every record's key, value, headers and timestamp are a pure function of its offset, so a
// reader checks each record it sees is exactly what was written at that offset (never a
// half-swapped segment, never garbage), and that offsets strictly increase within a scan.
// A holder keeps a log_slice of the first segment across passes that rewrite it and checks
// the slice's bytes never change. The appender also truncates now and then (and writes the
// same content again), which ends a pass running at that moment. At the end a final pass
// leaves exactly the latest record per key.
//
// Environment: BROOK_CLEANER_THREADED_RECORDS (default 20000; 5000 under TSan).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"

namespace {

using namespace brook;
using brook::testing::manual_clock;

constexpr timestamp_ms t0 = 1'700'000'000'000;
constexpr std::int64_t key_count = 37;

#if defined(__SANITIZE_THREAD__)
constexpr std::int64_t default_records = 5000;
#else
constexpr std::int64_t default_records = 20000;
#endif

std::string key_for(std::int64_t off) { return fmt::format("key-{}", off % key_count); }
bool tombstone_at(std::int64_t off) { return off % 13 == 5; }
std::string value_for(std::int64_t off) {
  return fmt::format("{:016x}", off) + std::string(static_cast<std::size_t>(off % 50), 'v');
}
timestamp_ms ts_for(std::int64_t off) { return t0 + off; }

std::string verify(const record_view& r) {
  const auto off = r.offset().value();
  if (r.key().is_null() || r.key().as_string_view() != key_for(off)) return fmt::format("offset {}: key differs", off);
  if (r.timestamp() != ts_for(off)) return fmt::format("offset {}: timestamp {} differs", off, r.timestamp());
  if (tombstone_at(off) != r.value().is_null()) return fmt::format("offset {}: value nullness differs", off);
  if (!r.value().is_null() && r.value().as_string_view() != value_for(off))
    return fmt::format("offset {}: value differs", off);
  std::size_t n = 0;
  for (const record_header& h : r.headers()) {
    ++n;
    if (h.key != "o" || h.value.as_string_view() != fmt::format("{}", off))
      return fmt::format("offset {}: header differs", off);
  }
  if (n != 1) return fmt::format("offset {}: {} headers", off, n);
  return {};
}

struct shared {
  std::mutex mu;
  std::vector<std::string> errors;
  void fail(std::string e) {
    std::lock_guard lk(mu);
    if (errors.size() < 20) errors.push_back(std::move(e));
  }
  bool failed() {
    std::lock_guard lk(mu);
    return !errors.empty();
  }
  std::atomic<bool> appending{true};
  std::atomic<bool> cleaning{true};
};

/// One scan from the log start; returns records seen.
std::int64_t scan(const partition_log& log, shared& sh) {
  std::int64_t prev = -1, n = 0;
  offset at = log.log_start_offset();
  while (at < log.log_end_offset()) {
    read_options ro;
    ro.max_bytes = 2048;
    auto s = log.read(at, ro);
    if (!s) {
      // A truncation may have moved the log end below us: the scan ends there.
      if (s.error() == errc::offset_out_of_range && at > log.log_end_offset()) return n;
      sh.fail(fmt::format("read({}) failed: {}", at, s.error().to_string()));
      return n;
    }
    if (s->empty()) break;
    std::string err;
    auto r = s->for_each_record([&](const record_view& v) {
      if (!err.empty()) return;
      if (v.offset().value() <= prev)
        err = fmt::format("offset {} after {}", v.offset(), prev);
      else
        err = verify(v);
      prev = v.offset().value();
      ++n;
    });
    if (!r) err = r.error().to_string();
    if (!err.empty()) {
      sh.fail(fmt::format("scan at {}: {}", at, err));
      return n;
    }
    at = s->next_offset();
  }
  return n;
}

}  // namespace

TEST_CASE("compaction while appending and reading", "[storage][log_cleaner][threaded]") {
  const std::int64_t records = test::env_int("BROOK_CLEANER_THREADED_RECORDS").value_or(default_records);
  test::scratch_dir tmp("brook-cleaner-thr");
  auto clk = std::make_shared<manual_clock>(t0);
  log_config cfg;
  cfg.cleanup = cleanup_policy::compact;
  cfg.segment_bytes = 8192;
  cfg.segment_index_bytes = 4096;
  cfg.index_interval_bytes = 256;
  cfg.max_message_bytes = 8192;
  cfg.clock = clk;
  auto opened = partition_log::open(tmp / "t-0", cfg);
  REQUIRE(opened);
  partition_log& log = **opened;
  shared sh;

  std::atomic<std::int64_t> passes{0}, rewritten{0}, truncations{0};
  std::thread appender([&] {
    std::int64_t off = 0;
    std::uint64_t x = 1;
    std::int64_t batches = 0;
    while (off < records && !sh.failed()) {
      if (++batches % 64 == 0) {  // interleave: let the cleaner finish a pass over what is there
        const auto p0 = passes.load(std::memory_order_acquire);
        while (passes.load(std::memory_order_acquire) < p0 + 2 && !sh.failed()) std::this_thread::yield();
      }
      if (batches % 97 == 0 && off > 10) {  // a replica-style truncation; the same content comes back
        auto t = log.truncate_to(offset(off - 3));
        if (!t) {
          sh.fail(fmt::format("truncate_to({}): {}", off - 3, t.error().to_string()));
          break;
        }
        off = log.log_end_offset().value();
        truncations.fetch_add(1, std::memory_order_relaxed);
      }
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const int n = 1 + static_cast<int>((x >> 33) % 4);
      record_batch_builder b;
      for (int i = 0; i < n; ++i) {
        const std::int64_t o = off + i;
        const std::string hv = fmt::format("{}", o);
        const record_header h{"o", nullable_bytes(hv)};
        b.append(ts_for(o), key_for(o), tombstone_at(o) ? nullable_bytes::null() : nullable_bytes(value_for(o)),
                 {&h, 1});
      }
      auto r = log.append(b.finish());
      if (!r) {
        sh.fail(fmt::format("append at {}: {}", off, r.error().to_string()));
        break;
      }
      off += n;
    }
    sh.appending.store(false, std::memory_order_release);
  });

  std::thread cleaner([&] {
    std::uint64_t k = 0;
    while (sh.appending.load(std::memory_order_acquire) && !sh.failed()) {
      compact_options co;
      if (++k % 3 == 0) co.upper_bound = offset(log.log_end_offset().value() / 2);
      auto r = log.compact(co);
      if (!r) {
        sh.fail(fmt::format("compact: {}", r.error().to_string()));
        break;
      }
      passes.fetch_add(1, std::memory_order_relaxed);
      rewritten.fetch_add(static_cast<std::int64_t>(r->segments_cleaned), std::memory_order_relaxed);
      std::this_thread::yield();
    }
    sh.cleaning.store(false, std::memory_order_release);
  });

  // The holder pins the first segment's bytes before any pass and checks them at the end.
  auto first = log.read(offset(0));
  REQUIRE(first);
  std::vector<std::byte> pinned(first->bytes().begin(), first->bytes().end());

  std::atomic<std::int64_t> scans{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i)
    readers.emplace_back([&] {
      while (sh.cleaning.load(std::memory_order_acquire) && !sh.failed()) {
        scan(log, sh);
        scans.fetch_add(1, std::memory_order_relaxed);
      }
    });

  appender.join();
  cleaner.join();
  for (auto& t : readers) t.join();
  {
    std::lock_guard lk(sh.mu);
    for (const auto& e : sh.errors) FAIL_CHECK(e);
  }
  REQUIRE_FALSE(sh.failed());
  CHECK(std::equal(pinned.begin(), pinned.end(), first->bytes().begin(), first->bytes().end()));

  // A final pass over everything: exactly the latest record of each key remains.
  REQUIRE(log.roll());
  auto fin = log.compact();
  REQUIRE(fin);
  const std::int64_t end = log.log_end_offset().value();
  std::map<std::string, std::int64_t> latest;
  for (std::int64_t o = 0; o < end; ++o) latest[key_for(o)] = o;
  std::vector<std::int64_t> want;
  for (const auto& [_, o] : latest) want.push_back(o);
  std::sort(want.begin(), want.end());
  std::vector<std::int64_t> got;
  for (const auto& r : test::read_all_full(log)) got.push_back(r.rec.offset);
  CHECK(got == want);
  CHECK(scan(log, sh) == static_cast<std::int64_t>(want.size()));
  CHECK_FALSE(sh.failed());
  INFO(passes.load() << " passes rewrote " << rewritten.load() << " segments during " << scans.load() << " scans and "
                     << truncations.load() << " truncations");
  CHECK(passes.load() > 0);
  REQUIRE(log.close());
}

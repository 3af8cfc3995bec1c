// One appender and several readers on one partition_log at once, with small segments (rolls
// happen under the readers), a small index interval, retention by size, DeleteRecords and
// truncation running from the appender thread.
//
// Every record's key, value, headers and timestamp are a pure function of its offset, so a
// reader can check each record it sees is exactly what the appender wrote for that offset
// (never a partially written batch, never garbage), even across truncations (the appender
// rewrites the same content at the same offsets).
//
// Readers move forward by exactly one offset per record. They may jump forward only after
// read() said offset_out_of_range because the log start moved past them; a position past the
// log end (after a truncation) waits for the data to come back. They wait for new data with
// wait_for_data and a deadline (no sleeping), and stop once the appender is done and they
// reached the final log end.
//
// A holder thread keeps two log_slices (one in the oldest segment, one at the log end) while
// retention deletes the first's segment and truncate_to removes the second's bytes, then
// checks both still show their original bytes.
//
// Environment: BROOK_THREADED_RECORDS (default 20000; 10000 under TSan), BROOK_THREADED_SEED
// (default 1), BROOK_THREADED_VERBOSE=1 prints a summary; the race case takes
// BROOK_THREADED_RACE_ROUNDS (default 1500; 300 under TSan) and BROOK_THREADED_RACE_READERS (1).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
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
namespace sfs = std::filesystem;
using steady = std::chrono::steady_clock;

constexpr timestamp_ms t0 = 1'700'000'000'000;

#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;  // ~10x slower: smaller default sizes keep the test at a few seconds
#else
constexpr bool under_tsan = false;
#endif

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// ------------------------------------------------------------------ content as a function of the offset

timestamp_ms ts_for(std::int64_t off) { return t0 + off; }
bool key_null(std::int64_t off) { return off % 5 == 0; }
std::string key_for(std::int64_t off) { return fmt::format("k{}", off); }
bool has_header(std::int64_t off) { return off % 3 == 0; }
std::string header_value_for(std::int64_t off) { return fmt::format("h{}", off * 7); }

std::uint32_t fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

/// "<offset as 16 hex>|<0..159 pseudo-random bytes>|<fnv1a of what precedes, 8 hex>"
std::string value_for(std::int64_t off) {
  const auto u = static_cast<std::uint64_t>(off);
  std::string v = fmt::format("{:016x}|", u);
  const std::size_t n = splitmix(u) % 160;
  std::uint64_t x = splitmix(u ^ 0xABCDEFull);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 8 == 0) x = splitmix(x);
    v.push_back(static_cast<char>((x >> (8 * (i % 8))) & 0xff));
  }
  v += fmt::format("|{:08x}", fnv1a(v));
  return v;
}

/// Empty when the record is exactly what the appender wrote at `want`.
std::string verify_record(const record_view& r, std::int64_t want) {
  const auto off = r.offset().value();
  if (off != want) return fmt::format("record at offset {} where {} was expected", off, want);
  if (r.timestamp() != ts_for(off))
    return fmt::format("offset {}: timestamp {} want {}", off, r.timestamp(), ts_for(off));
  if (r.key().is_null() != key_null(off)) return fmt::format("offset {}: key nullness differs", off);
  if (!key_null(off) && r.key().as_string_view() != key_for(off)) return fmt::format("offset {}: key differs", off);
  if (r.value().is_null()) return fmt::format("offset {}: null value", off);
  const auto v = r.value().as_string_view();
  if (v.size() < 26) return fmt::format("offset {}: value of {} bytes is too short", off, v.size());
  if (v.substr(0, 16) != fmt::format("{:016x}", static_cast<std::uint64_t>(off)))
    return fmt::format("offset {}: value names offset '{}'", off, v.substr(0, 16));
  if (v.substr(v.size() - 8) != fmt::format("{:08x}", fnv1a(v.substr(0, v.size() - 9))))
    return fmt::format("offset {}: value checksum mismatch", off);
  if (v != value_for(off)) return fmt::format("offset {}: value differs", off);
  std::size_t nh = 0;
  for (const record_header& h : r.headers()) {
    ++nh;
    if (h.key != "o" || h.value.is_null() || h.value.as_string_view() != header_value_for(off))
      return fmt::format("offset {}: header differs", off);
  }
  if (nh != (has_header(off) ? 1u : 0u)) return fmt::format("offset {}: {} headers", off, nh);
  return {};
}

// ------------------------------------------------------------------ shared state

struct shared_state {
  std::mutex mu;
  std::vector<std::string> errors;  // guarded by mu
  void fail(std::string e) {
    std::lock_guard lk(mu);
    if (errors.size() < 50) errors.push_back(std::move(e));
  }
  bool failed() {
    std::lock_guard lk(mu);
    return !errors.empty();
  }

  std::atomic<bool> done{false};
  std::atomic<std::int64_t> final_end{-1};

  // Holder protocol: 0 = not ready; 1 = holder holds its slices; 2 = the appender deleted
  // the first slice's segment by retention and truncated below the second: verify now.
  std::atomic<int> holder_stage{0};
  std::atomic<std::int64_t> holder_seg_a{-1};
  std::atomic<std::int64_t> holder_b_start{-1};

  // stats
  std::atomic<std::int64_t> retention_deleted{0}, truncations{0}, delete_records{0}, rolls_seen{0};
};

struct reader_stats {
  std::int64_t reads = 0, records = 0, jumps = 0, waits = 0, wait_false = 0, past_end = 0, time_lookups = 0;
  std::int64_t end = -1;
};

void reader(const partition_log& log, shared_state& st, int id, std::int64_t start, std::size_t max_bytes,
            reader_stats& rs) {
  std::int64_t pos = start;
  std::int64_t empty_spins = 0;
  read_options ro;
  ro.max_bytes = max_bytes;
  while (!st.failed()) {
    auto s = log.read(offset(pos), ro);
    ++rs.reads;
    if (!s) {
      if (s.error().code() != make_error_code(errc::offset_out_of_range)) {
        st.fail(fmt::format("reader {}: read({}) failed: {}", id, pos, s.error().to_string()));
        return;
      }
      const auto log_start = log.log_start_offset().value();
      if (pos < log_start) {  // retention or DeleteRecords moved the start past us: jump forward
        pos = log_start;
        ++rs.jumps;
        continue;
      }
      const auto leo = log.log_end_offset().value();
      if (pos > leo) {  // a truncation removed what we had read: wait for it to come back
        ++rs.past_end;
        if (st.done.load(std::memory_order_acquire) && pos >= st.final_end.load(std::memory_order_acquire)) break;
        ++rs.waits;
        if (!log.wait_for_data(offset(pos), steady::now() + std::chrono::seconds(2))) ++rs.wait_false;
      }
      continue;  // raced with a change of the bounds: retry
    }
    if (s->empty()) {
      const auto leo = log.log_end_offset().value();
      if (pos < leo && ++empty_spins > 1'000'000) {
        st.fail(fmt::format("reader {}: read({}) keeps returning nothing below the log end {}", id, pos, leo));
        return;
      }
      if (pos >= leo) {
        empty_spins = 0;
        if (st.done.load(std::memory_order_acquire) && pos >= st.final_end.load(std::memory_order_acquire)) break;
        ++rs.waits;
        if (!log.wait_for_data(offset(pos), steady::now() + std::chrono::seconds(2))) ++rs.wait_false;
      }
      continue;
    }
    empty_spins = 0;
    std::int64_t expect = pos;
    std::string err;
    auto n = s->for_each_record([&](const record_view& r) {
      if (!err.empty()) return;
      if (r.offset().value() > expect && expect == pos) {
        // Records were skipped without offset_out_of_range: only acceptable if they no longer exist.
        err = fmt::format("read({}) silently started at offset {} (log start now {})", pos, r.offset(),
                          log.log_start_offset());
        return;
      }
      err = verify_record(r, expect);
      ++expect;
    });
    if (!n) {
      st.fail(fmt::format("reader {}: slice at {} failed validation: {}", id, pos, n.error().to_string()));
      return;
    }
    if (!err.empty()) {
      st.fail(fmt::format("reader {}: {}", id, err));
      return;
    }
    if (*n == 0 || expect != s->next_offset().value()) {
      st.fail(fmt::format("reader {}: slice from {} delivered {} records up to {}, next_offset {}", id, pos, *n, expect,
                          s->next_offset()));
      return;
    }
    rs.records += static_cast<std::int64_t>(*n);
    pos = expect;
    if (id == 2 && rs.reads % 64 == 0) {  // timestamp lookups race with everything too
      ++rs.time_lookups;
      auto f = log.offset_for_timestamp(ts_for(pos - 1));
      if (!f) {
        st.fail(fmt::format("reader {}: offset_for_timestamp failed: {}", id, f.error().to_string()));
        return;
      }
      if (*f && ((*f)->timestamp != ts_for((*f)->off.value()) || (*f)->off.value() < pos - 1)) {
        st.fail(fmt::format("reader {}: offset_for_timestamp({}) = offset {} ts {}", id, ts_for(pos - 1), (*f)->off,
                            (*f)->timestamp));
        return;
      }
    }
  }
  rs.end = pos;
}

void holder(const partition_log& log, shared_state& st) {
  auto ready = [&] { return st.holder_stage.load(std::memory_order_acquire); };
  if (!log.wait_for_data(offset(300), steady::now() + std::chrono::seconds(30))) {
    st.fail("holder: the log never reached offset 300");
    st.holder_stage.store(-1, std::memory_order_release);
    st.holder_stage.notify_all();
    return;
  }
  log_slice a, b;
  for (int tries = 0; tries < 1000 && (a.empty() || b.empty()); ++tries) {
    auto ra = log.read(log.log_start_offset());
    auto leo = log.log_end_offset();
    auto rb = log.read(offset(std::max(log.log_start_offset().value(), leo.value() - 10)));
    if (ra && rb && !ra->empty() && !rb->empty()) {
      a = *ra;
      b = *rb;
    }
  }
  if (a.empty() || b.empty()) {
    st.fail("holder: could not read its two slices");
    st.holder_stage.store(-1, std::memory_order_release);
    st.holder_stage.notify_all();
    return;
  }
  const std::vector<std::byte> a_copy(a.bytes().begin(), a.bytes().end());
  const std::vector<std::byte> b_copy(b.bytes().begin(), b.bytes().end());
  st.holder_seg_a.store(a.source()->base_offset().value(), std::memory_order_release);
  st.holder_b_start.store(b.start_offset().value(), std::memory_order_release);
  st.holder_stage.store(1, std::memory_order_release);
  st.holder_stage.notify_all();
  st.holder_stage.wait(1, std::memory_order_acquire);  // atomic wait: no polling
  if (ready() != 2) return;
  if (!std::equal(a_copy.begin(), a_copy.end(), a.bytes().begin(), a.bytes().end()))
    st.fail("holder: the slice of the segment deleted by retention changed");
  if (!std::equal(b_copy.begin(), b_copy.end(), b.bytes().begin(), b.bytes().end()))
    st.fail("holder: the slice of the bytes removed by truncate_to changed");
  if (sfs::exists(a.source()->log_path()))
    st.fail(fmt::format("holder: {} still exists after retention", a.source()->log_path().string()));
  for (const log_slice* s : {&a, &b}) {
    std::string err;
    std::int64_t expect = -1;
    auto n = s->for_each_record([&](const record_view& r) {
      if (expect < 0) expect = r.offset().value();
      if (err.empty()) err = verify_record(r, expect);
      ++expect;
    });
    if (!n) st.fail(fmt::format("holder: kept slice no longer validates: {}", n.error().to_string()));
    if (!err.empty()) st.fail(fmt::format("holder: kept slice: {}", err));
  }
}

void appender(partition_log& log, shared_state& st, std::uint64_t seed, std::int64_t target) {
  std::mt19937_64 g(seed);
  auto chance = [&](double p) { return static_cast<double>(g() >> 11) * 0x1.0p-53 < p; };
  auto range = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  const auto& cfg = log.config();
  record_batch_builder b;
  std::int64_t max_end = 0, iter = 0;
  bool truncated_for_holder = false, retention_hit_a = false;
  auto fail = [&](std::string e) {
    st.fail("appender: " + std::move(e));
    st.holder_stage.store(-1, std::memory_order_release);
    st.holder_stage.notify_all();
  };
  while (!st.failed()) {
    const std::int64_t base = log.log_end_offset().value();
    const int stage = st.holder_stage.load(std::memory_order_acquire);
    if (base >= std::max(target, max_end) && stage == 2) break;
    if (base >= target && stage == 1 && truncated_for_holder && !retention_hit_a) {
      // Retention has not reached the first slice's segment yet: DeleteRecords up to the end.
      if (auto d = log.delete_records_before(offset(base)); !d) return fail(d.error().to_string());
      st.delete_records.fetch_add(1);
    }
    const auto n = range(1, 20);
    b.reset();
    std::vector<std::string> keys, values, hvals;
    for (std::int64_t j = 0; j < n; ++j) {
      const auto off = base + j;
      keys.push_back(key_for(off));
      values.push_back(value_for(off));
      hvals.push_back(header_value_for(off));
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const auto off = base + j;
      const auto ju = static_cast<std::size_t>(j);
      record_header h{"o", nullable_bytes(hvals[ju])};
      std::span<const record_header> hs;
      if (has_header(off)) hs = std::span<const record_header>(&h, 1);
      b.append(ts_for(off), key_null(off) ? nullable_bytes::null() : nullable_bytes(keys[ju]),
               nullable_bytes(values[ju]), hs);
    }
    auto res = log.append(b.finish());
    if (!res) return fail(res.error().to_string());
    if (res->base_offset.value() != base) return fail(fmt::format("append at {} got base {}", base, res->base_offset));
    max_end = std::max(max_end, log.log_end_offset().value());
    ++iter;

    if (iter % 16 == 0) {
      auto d = log.enforce_retention();
      if (!d) return fail(d.error().to_string());
      st.retention_deleted.fetch_add(static_cast<std::int64_t>(*d));
      const auto total = log.size_bytes();
      if (static_cast<std::int64_t>(total) > cfg.retention_bytes + static_cast<std::int64_t>(cfg.segment_bytes) + 65536)
        return fail(fmt::format("{} bytes after retention (retention.bytes {})", total, cfg.retention_bytes));
    }
    if (chance(0.01))
      if (auto f = log.flush(); !f) return fail(f.error().to_string());
    if (chance(0.004)) {
      const auto log_start = log.log_start_offset().value(), leo = log.log_end_offset().value();
      const auto o = log_start + (leo - log_start) / 3;
      if (auto d = log.delete_records_before(offset(o)); !d) return fail(d.error().to_string());
      if (log.log_start_offset().value() != std::max(log_start, o))
        return fail("log start did not move to the DeleteRecords offset");
      st.delete_records.fetch_add(1);
    }
    if (chance(0.004) && log.log_end_offset().value() + 1000 < target) {
      const auto log_start = log.log_start_offset().value(), leo = log.log_end_offset().value();
      const auto o = std::max(log_start, leo - range(1, 60));
      if (auto t = log.truncate_to(offset(o)); !t) return fail(t.error().to_string());
      if (log.log_end_offset().value() > o) return fail("truncate_to left records at or after its offset");
      st.truncations.fetch_add(1);
    }
    if (stage == 1 && !truncated_for_holder) {
      const auto o = st.holder_b_start.load(std::memory_order_acquire);
      if (o >= log.log_start_offset().value()) {
        if (auto t = log.truncate_to(offset(o)); !t) return fail(t.error().to_string());
        st.truncations.fetch_add(1);
      }  // else retention already removed it: the slice still outlived its bytes' removal
      truncated_for_holder = true;
    }
    if (stage == 1 && !retention_hit_a &&
        log.segments().front().base_offset.value() > st.holder_seg_a.load(std::memory_order_acquire))
      retention_hit_a = true;
    if (stage == 1 && truncated_for_holder && retention_hit_a) {
      st.holder_stage.store(2, std::memory_order_release);
      st.holder_stage.notify_all();
    }
    if (stage == -1) break;  // the holder gave up (its error is recorded)
  }
  st.final_end.store(log.log_end_offset().value(), std::memory_order_release);
  st.done.store(true, std::memory_order_release);
  if (auto c = log.close(); !c) st.fail("appender: close failed: " + c.error().to_string());  // wakes every waiter
}

}  // namespace

TEST_CASE("one appender, several readers, retention, DeleteRecords and truncation at once", "[storage][threaded]") {
  const auto target = brook::test::env_int("BROOK_THREADED_RECORDS").value_or(under_tsan ? 10'000 : 20'000);
  const auto seed = static_cast<std::uint64_t>(brook::test::env_int("BROOK_THREADED_SEED").value_or(1));
  INFO(fmt::format("seed {} records {} (rerun: BROOK_THREADED_SEED={} BROOK_THREADED_RECORDS={})", seed, target, seed,
                   target));
  brook::test::scratch_dir tmp("brook-thr");
  const auto dir = tmp / "events-3";
  log_config cfg;
  cfg.segment_bytes = 16 * 1024;
  cfg.index_interval_bytes = 128;
  cfg.segment_index_bytes = 4096;
  cfg.max_message_bytes = 64 * 1024;
  cfg.retention_bytes = 96 * 1024;
  cfg.retention_time = log_config::keep_forever;
  cfg.clock = std::make_shared<manual_clock>(t0);
  auto opened = partition_log::open(dir, cfg);
  REQUIRE(opened.has_value());
  auto& log = **opened;

  shared_state st;
  constexpr int n_readers = 3;
  std::vector<reader_stats> stats(n_readers);
  const auto started = steady::now();
  {
    std::vector<std::jthread> threads;
    threads.emplace_back([&] { appender(log, st, seed, target); });
    threads.emplace_back([&] { holder(log, st); });
    static constexpr std::size_t max_bytes[n_readers] = {1, 4096, 64 * 1024};
    for (int i = 0; i < n_readers; ++i)
      threads.emplace_back([&, i] {
        std::int64_t start = 0;
        if (i == 2) {  // joins late, from the middle
          log.wait_for_data(offset(target / 3), steady::now() + std::chrono::seconds(60));
          start = std::max(log.log_start_offset().value(), log.log_end_offset().value() / 2);
        }
        reader(log, st, i, start, max_bytes[i], stats[static_cast<std::size_t>(i)]);
      });
  }
  const auto secs = std::chrono::duration<double>(steady::now() - started).count();
  {
    std::lock_guard lk(st.mu);
    for (const auto& e : st.errors) FAIL_CHECK(e);
  }
  REQUIRE(st.errors.empty());
  const auto final_end = st.final_end.load();
  std::string summary = fmt::format(
      "{:.2f} s, log [{}, {}), retention deleted {} segments, {} truncations, {} DeleteRecords", secs,
      log.log_start_offset(), final_end, st.retention_deleted.load(), st.truncations.load(), st.delete_records.load());
  for (int i = 0; i < n_readers; ++i) {
    const auto& r = stats[static_cast<std::size_t>(i)];
    summary += fmt::format(
        "; reader {}: {} reads, {} records, {} jumps, {} waits ({} returned false), {} past-end, {} time lookups", i,
        r.reads, r.records, r.jumps, r.waits, r.wait_false, r.past_end, r.time_lookups);
  }
  INFO(summary);
  if (brook::test::env_int("BROOK_THREADED_VERBOSE")) fmt::print("{}\n", summary);
  CHECK(final_end >= target);
  CHECK(st.holder_stage.load() == 2);
  CHECK(st.retention_deleted.load() > 0);
  CHECK(st.truncations.load() > 0);
  for (int i = 0; i < n_readers; ++i) CHECK(stats[static_cast<std::size_t>(i)].end == final_end);

  // Afterwards, single-threaded: the closed log reads back contiguous and exact, and reopens clean.
  auto check_all = [&](const partition_log& l) {
    std::int64_t expect = l.log_start_offset().value();
    std::string err;
    while (expect < l.log_end_offset().value() && err.empty()) {
      auto s = l.read(offset(expect));
      REQUIRE(s.has_value());
      REQUIRE_FALSE(s->empty());
      auto n = s->for_each_record([&](const record_view& r) {
        if (err.empty()) err = verify_record(r, expect);
        ++expect;
      });
      REQUIRE(n.has_value());
    }
    INFO(err);
    CHECK(err.empty());
    CHECK(expect == final_end);
  };
  check_all(log);
  opened->reset();
  auto again = partition_log::open(dir, cfg);
  REQUIRE(again.has_value());
  CHECK((*again)->recovery().clean);
  CHECK((*again)->log_end_offset().value() == final_end);
  check_all(**again);
}

TEST_CASE("a read racing with the log start moving fails with offset_out_of_range, never skips silently",
          "[storage][threaded]") {
  // Each round appends to a fresh segment and DeleteRecords everything before it, so the
  // log start keeps jumping past whole deleted segments while readers read at the log start
  // they just loaded. A read whose start was deleted meanwhile must say offset_out_of_range
  // (the consumer then resets); returning the next segment's records as if they followed
  // would hide the gap from the consumer.
  const auto rounds = brook::test::env_int("BROOK_THREADED_RACE_ROUNDS").value_or(under_tsan ? 300 : 1500);
  const auto readers = brook::test::env_int("BROOK_THREADED_RACE_READERS").value_or(1);
  brook::test::scratch_dir tmp("brook-thr");
  log_config cfg;
  cfg.segment_bytes = 1024;
  cfg.index_interval_bytes = 128;
  cfg.segment_index_bytes = 1024;
  cfg.max_message_bytes = 64 * 1024;
  cfg.retention_time = log_config::keep_forever;
  cfg.clock = std::make_shared<manual_clock>(t0);
  auto opened = partition_log::open(tmp / "race-0", cfg);
  REQUIRE(opened.has_value());
  auto& log = **opened;
  shared_state st;
  std::atomic<std::int64_t> silent_skips{0}, out_of_range{0}, good_reads{0};
  std::string first_skip;  // written once under st.mu
  {
    std::vector<std::jthread> threads;
    threads.emplace_back([&] {
      record_batch_builder b;
      auto add = [&]() -> bool {
        const auto base = log.log_end_offset().value();
        b.reset();
        std::vector<std::string> values;
        for (int j = 0; j < 5; ++j) values.push_back(value_for(base + j));
        for (int j = 0; j < 5; ++j)
          b.append(ts_for(base + j), key_null(base + j) ? nullable_bytes::null() : nullable_bytes(key_for(base + j)),
                   nullable_bytes(values[static_cast<std::size_t>(j)]));
        auto r = log.append(b.finish());
        if (!r) st.fail("appender: " + r.error().to_string());
        return r.has_value();
      };
      for (std::int64_t i = 0; i < rounds && !st.failed(); ++i) {
        if (!add()) break;
        if (auto r = log.roll(); !r) st.fail("roll: " + r.error().to_string());
        if (!add()) break;
        if (auto d = log.delete_records_before(offset(log.log_end_offset().value() - 5)); !d)
          st.fail("delete_records_before: " + d.error().to_string());
      }
      st.done.store(true, std::memory_order_release);
    });
    for (int i = 0; i < readers; ++i)
      threads.emplace_back([&] {
        while (!st.done.load(std::memory_order_acquire)) {
          const auto pos = log.log_start_offset();
          auto s = log.read(pos);
          if (!s) {
            if (s.error().code() == make_error_code(errc::offset_out_of_range))
              out_of_range.fetch_add(1);
            else
              st.fail("read: " + s.error().to_string());
            continue;
          }
          if (s->empty()) continue;
          std::int64_t first = -1;
          (void)s->for_each_record([&](const record_view& r) {
            if (first < 0) first = r.offset().value();
          });
          if (first != pos.value()) {
            if (silent_skips.fetch_add(1) == 0) {
              std::lock_guard lk(st.mu);
              first_skip = fmt::format(
                  "read({}) returned a slice starting at offset {} (slice start_offset {}, "
                  "log start now {})",
                  pos, first, s->start_offset(), log.log_start_offset());
            }
          } else {
            good_reads.fetch_add(1);
          }
        }
      });
  }
  {
    std::lock_guard lk(st.mu);
    for (const auto& e : st.errors) FAIL_CHECK(e);
  }
  INFO(fmt::format("{} rounds: {} good reads, {} offset_out_of_range, {} silent skips; first: {}", rounds,
                   good_reads.load(), out_of_range.load(), silent_skips.load(), first_skip));
  CHECK(silent_skips.load() == 0);
}

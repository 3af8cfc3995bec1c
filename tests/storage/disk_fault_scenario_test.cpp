// Seeded disk-fault scenarios: a full or failing disk at every I/O call of a log's life.
//
// Each seed fixes a workload on a partition_log whose files go through
// testing::faulty_file_system: an open of a log that already holds records, then random
// appends, flushes, rolls, ticks, checkpoints, compactions (a third of the seeds) and
// deletions of old records with small segments
// and indexes (so rolls, index growth and checkpoint rewrites all happen), then a close. A
// fault-free run counts the workload's mutating I/O calls (writes, syncs, truncations,
// allocations of index blocks, renames, removals); then, for every N, the same workload runs
// with the Nth call failing (ENOSPC or EIO; once, or from then on like a disk that stays
// full). Whatever fails must fail with a named error (KAFKA_STORAGE_ERROR) and the process
// keeps running (a SIGBUS would kill the test). Then, with the disk healthy again:
// - the log as it stood before the close is exactly what a reopen finds: every
//   acknowledged record, at its offset, and nothing a reader never saw;
// - every acknowledged append is in it, and records come only from appends (a failed append
//   may be there or not, whole: its batch was written but a later step failed);
// - after a failed flush the log takes no more writes (Kafka takes the log dir offline).
//
// Rerun one seed verbosely: BROOK_FAULT_SEED=7 ./brook_test_storage_disk_fault_scenario
// Change the number of seeds: BROOK_FAULT_SEEDS=50 ./brook_test_storage_disk_fault_scenario
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/testing/faulty_file_system.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/checks.hpp"
#include "support/crash_helpers.hpp"
#include "support/fault_walk.hpp"
#include "support/seeds.hpp"

using namespace brook;
using brook::test::scratch_dir;
using brook::testing::faulty_file_system;
using brook::testing::manual_clock;

namespace {

struct append_try {
  std::vector<std::string> values;
  bool acked = false;
};

log_config fault_config(std::mt19937_64& g, std::shared_ptr<file_system> files, std::shared_ptr<manual_clock> clk) {
  log_config c;
  c.segment_bytes = 1024 + g() % 3072;
  c.segment_index_bytes = 64 + 64 * (g() % 4);  // a few entries: full indexes roll segments too
  c.index_interval_bytes = 64;
  c.retention_time = log_config::keep_forever;
  c.flush_messages = g() % 2 == 0 ? 1 + static_cast<std::int64_t>(g() % 20) : log_config{}.flush_messages;
  // A third of the seeds compact (every key unique, so compaction rewrites segments and
  // removes nothing: its I/O is what is under test).
  if (g() % 3 == 0) c.cleanup = cleanup_policy::compact;
  c.files = std::move(files);
  c.clock = std::move(clk);
  return c;
}

std::vector<std::byte> batch_of(const std::vector<std::string>& values, timestamp_ms ts) {
  record_batch_builder b;
  for (const auto& v : values) b.append(ts, v, v);
  auto f = b.finish();
  return {f.begin(), f.end()};
}

/// (offset, value) of every record from the log start.
std::vector<std::pair<std::int64_t, std::string>> contents(const partition_log& log) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  for (offset at = log.log_start_offset(); at < log.log_end_offset();) {
    auto s = log.read(at);
    if (!s) throw std::runtime_error(s.error().to_string());
    if (s->empty()) throw std::runtime_error(fmt::format("empty read at {} below the log end", at));
    auto r = s->for_each_record(
        [&](const record_view& rv) { out.emplace_back(rv.offset().value(), rv.value().to_string()); });
    if (!r) throw std::runtime_error(r.error().to_string());
    at = s->next_offset();
  }
  return out;
}

using run_result = brook::test::fault_run;

/// One run of seed's workload with the nth mutating call failing (0: none).
run_result run(std::uint64_t seed, std::uint64_t nth) {
  run_result out;
  std::mt19937_64 g(seed);
  scratch_dir tmp("brook-fault");
  const auto dir = tmp / "t-0";
  auto clk = std::make_shared<manual_clock>(1'000'000);
  auto files = std::make_shared<faulty_file_system>();
  const log_config cfg = fault_config(g, files, clk);
  const int err = g() % 2 == 0 ? ENOSPC : EIO;
  const bool sticky = g() % 2 == 0;
  std::vector<append_try> tries;
  int next_value = 0;
  auto fresh_values = [&](std::size_t n) {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(fmt::format("v{:05}-{}", next_value++, std::string(g() % 40, 'x')));
    return v;
  };
  auto fail = [&](std::string what) {
    out.failure = brook::test::fault_failure(seed, nth, err, sticky, what);
    return out;
  };
  {  // a log that already holds records, written without faults
    log_config c0 = cfg;
    c0.files = posix_file_system::shared();
    auto log = partition_log::open(dir, c0);
    if (!log) return fail("setup open: " + log.error().to_string());
    for (int i = 0; i < 5; ++i) {
      append_try t{fresh_values(1 + g() % 4), true};
      auto b = batch_of(t.values, clk->now_ms());
      if (!(*log)->append(b)) return fail("setup append");
      tries.push_back(std::move(t));
    }
    if (!(*log)->close()) return fail("setup close");
  }
  if (nth > 0) files->fail_at(nth, err, sticky);
  std::vector<std::pair<std::int64_t, std::string>> before_close;
  {
    auto opened = partition_log::open(dir, cfg);
    if (!opened) {
      if (!(opened.error() == errc::kafka_storage_error))
        return fail("the open failed without a named error: " + opened.error().to_string());
      out.faulted = true;
    } else {
      auto& log = **opened;
      bool sync_failed = false;
      const int ops = 40 + static_cast<int>(g() % 40);
      for (int i = 0; i < ops; ++i) {
        clk->advance(static_cast<std::int64_t>(g() % 50));
        const auto op = g() % 10;
        result<void> r = ok();
        if (op < 6) {
          append_try t{fresh_values(1 + g() % 6), false};
          auto b = batch_of(t.values, clk->now_ms());
          auto a = log.append(b);
          t.acked = a.has_value();
          if (a && sync_failed) return fail("an append was acknowledged after a failed flush");
          if (!a) r = a.error();
          tries.push_back(std::move(t));
        } else if (op == 6) {
          r = log.flush();
          if (!r && r.error() == errc::kafka_storage_error && files->failures().size() > 0) sync_failed = true;
        } else if (op == 7) {
          r = log.roll();
        } else if (op == 8) {
          r = log.tick();
        } else if (cfg.compacts()) {
          if (g() % 2 == 0) {
            r = log.checkpoint();
          } else if (auto c = log.compact(); !c) {
            r = c.error();
          }
        } else {
          const auto to = std::min(log.log_start_offset() + static_cast<std::int64_t>(g() % 3), log.log_end_offset());
          r = g() % 2 == 0 ? log.checkpoint() : log.delete_records_before(to);
        }
        if (!r) {
          out.faulted = true;
          if (!(r.error() == errc::kafka_storage_error))
            return fail(fmt::format("op {} failed without a named error: {}", op, r.error()));
        }
      }
      try {
        before_close = contents(log);
      } catch (const std::exception& e) {
        return fail(std::string("reading the live log: ") + e.what());
      }
      if (auto c = log.close(); !c) out.faulted = true;
    }
  }
  out.mutations = files->mutations();
  files->revive();
  // ------------------------------------------------------------------ checks, on a healthy disk
  log_config healthy = cfg;
  healthy.files = posix_file_system::shared();
  auto reopened = partition_log::open(dir, healthy);
  if (!reopened) return fail("the reopen on a healthy disk failed: " + reopened.error().to_string());
  std::vector<std::pair<std::int64_t, std::string>> after;
  try {
    after = contents(**reopened);
  } catch (const std::exception& e) {
    return fail(std::string("reading the reopened log: ") + e.what());
  }
  // Only deletions may drop records from the front: compare from the first offset both have.
  if (!before_close.empty()) {
    std::size_t k = 0;
    while (k < after.size() && after[k].first < before_close.front().first) ++k;
    std::vector<std::pair<std::int64_t, std::string>> tail(after.begin() + static_cast<std::ptrdiff_t>(k), after.end());
    if (tail.size() < before_close.size() || !std::equal(before_close.begin(), before_close.end(), tail.begin()))
      return fail(fmt::format("the reopened log holds {} records from offset {}, the live log held {} before close",
                              tail.size(), tail.empty() ? -1 : tail.front().first, before_close.size()));
    // Past what readers saw, only a failed append may show up: its bytes reached the file but
    // a later step failed, and a disk that stays broken cannot take them back. Never
    // acknowledged, so a retry may duplicate it: at-least-once, as with Kafka.
    std::map<std::string, bool> acked_value;
    for (const auto& t : tries)
      for (const auto& v : t.values) acked_value[v] = t.acked;
    for (std::size_t i = before_close.size(); i < tail.size(); ++i)
      if (acked_value[tail[i].second])
        return fail(
            fmt::format("record {} appeared after the reopen, acknowledged but never seen live", tail[i].first));
  }
  // Every record comes from an append, whole and in order; every acknowledged append is there
  // (unless deleted from the front on purpose).
  std::map<std::string, std::size_t> owner;
  for (std::size_t i = 0; i < tries.size(); ++i)
    for (const auto& v : tries[i].values) owner[v] = i;
  std::size_t expect_try = 0;
  for (std::size_t r = 0; r < after.size();) {
    auto it = owner.find(after[r].second);
    if (it == owner.end())
      return fail(fmt::format("record {} = '{}' was never appended", after[r].first, after[r].second));
    const std::size_t t = it->second;
    if (t < expect_try) return fail(fmt::format("record {} is out of order", after[r].first));
    for (std::size_t s = expect_try; s < t; ++s)
      if (tries[s].acked && r > 0) return fail(fmt::format("acknowledged append #{} is missing", s));
    // Deletions move the log start to any offset: the first append may show only its tail.
    const auto& vals = tries[t].values;
    const auto from =
        r == 0 ? static_cast<std::size_t>(std::find(vals.begin(), vals.end(), after[r].second) - vals.begin())
               : std::size_t{0};
    for (std::size_t k = from; k < vals.size(); ++k) {
      const auto& v = vals[k];
      if (r >= after.size() || after[r].second != v)
        return fail(fmt::format("append #{} is not whole at offset {}", t, r < after.size() ? after[r].first : -1));
      if (r > 0 && after[r].first != after[r - 1].first + 1) return fail("offsets are not consecutive");
      ++r;
    }
    expect_try = t + 1;
  }
  for (std::size_t s = expect_try; s < tries.size(); ++s)
    if (tries[s].acked) return fail(fmt::format("acknowledged append #{} (the last ones) is missing", s));
  if (!(*reopened)->close()) return fail("closing the reopened log");
  return out;
}

}  // namespace

TEST_CASE("seeded disk faults at every I/O call: named errors and nothing acknowledged lost",
          "[storage][fault][scenario]") {
  brook::test::walk_every_fault([](std::uint64_t seed, std::uint64_t n) { return run(seed, n); }, 30);
}

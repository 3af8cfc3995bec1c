// Seeded disk-fault scenarios for a data directory: a full or failing disk at every I/O call
// of its topic operations and housekeeping.
//
// Each seed fixes a workload on a data_dir whose files (its own and every partition log's) go
// through testing::faulty_file_system: the open of a directory that already holds topics and
// records (written without faults), then random create_topic (1 or 2 partitions, some with
// overrides: compaction, small segments, segment.ms, flush.messages), create_partitions,
// delete_topic, produce into partitions, partition flushes and tick()s (retention, flush.ms,
// segment.ms rolls, the cleaner), a close, and a second open and round of the same on the
// faulty disk. A fault-free run counts the workload's mutating I/O calls; then, for every N,
// the same workload runs with the Nth call failing (ENOSPC or EIO; once, or from then on like
// a disk that stays full). Checks:
// - every failed operation (open and close included) fails with a named error
//   (KAFKA_STORAGE_ERROR), and the process keeps running;
// - each open on the faulty disk that succeeds, and the final one on a healthy disk (which
//   must succeed: no stray directory of a half-done operation may make it fail), shows every
//   acknowledged topic operation, each failed one either wholly done or not at all (a
//   created topic with all its partitions and its configs, or none; a grown topic at its old
//   or its new count; a deleted topic whole or gone), and no other topic;
// - every partition holds its acknowledged records, in order, and nothing but whole batches
//   that were appended (a failed append may be there or not, whole).
// The workload never touches a topic again on the same open after an operation on it failed
// (what the disk holds is unknown until a reopen tells).
//
// Rerun one seed verbosely: BROOK_FAULT_SEED=7 ./brook_test_storage_data_dir_fault_scenario
// Change the number of seeds: BROOK_FAULT_SEEDS=20 ./brook_test_storage_data_dir_fault_scenario
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/testing/faulty_file_system.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/fault_walk.hpp"
#include "support/seeds.hpp"

using namespace brook;
using brook::test::scratch_dir;
using brook::testing::faulty_file_system;
using brook::testing::manual_clock;

namespace {

struct batch_m {
  std::vector<std::string> values;
  bool acked = false;
};

/// What the workload knows of one topic.
struct topic_m {
  /// After a failed operation on the topic, until a reopen tells which way it went.
  enum class unsure { no, created, grown, deleted };
  std::int32_t partitions = 1;  // grown: the old count
  std::int32_t grown_to = 0;    // grown: the new count
  std::map<std::string, std::string> overrides;
  std::vector<std::vector<batch_m>> parts;  // index = partition
  unsure state = unsure::no;
};

std::vector<std::byte> batch_of(const std::vector<std::string>& values, timestamp_ms ts) {
  record_batch_builder b;
  for (const auto& v : values) b.append(ts, v, v);
  auto f = b.finish();
  return {f.begin(), f.end()};
}

/// The values of every record of a partition, from its log start.
std::vector<std::string> contents(const partition& p) {
  std::vector<std::string> out;
  const partition_log& log = p.log();
  for (offset at = log.log_start_offset(); at < log.log_end_offset();) {
    auto s = log.read(at);
    if (!s) throw std::runtime_error(s.error().to_string());
    if (s->empty()) throw std::runtime_error(fmt::format("empty read at {} below the log end", at));
    auto r = s->for_each_record([&](const record_view& rv) { out.push_back(rv.value().to_string()); });
    if (!r) throw std::runtime_error(r.error().to_string());
    at = s->next_offset();
  }
  return out;
}

/// Matches a partition's records against its batches: every acknowledged batch is there,
/// whole and in order; a failed one is there whole or not at all. Keeps what was found.
std::string match(std::vector<batch_m>& batches, const std::vector<std::string>& found) {
  std::vector<batch_m> kept;
  std::size_t at = 0;
  for (auto& b : batches) {
    const bool here = at < found.size() && found[at] == b.values.front();
    if (!here && b.acked) return fmt::format("acknowledged record '{}' is missing", b.values.front());
    if (!here) continue;
    for (const auto& v : b.values)
      if (at >= found.size() || found[at++] != v) return fmt::format("the batch of '{}' is not whole", v);
    b.acked = true;  // on disk now: no later open may lose it
    kept.push_back(std::move(b));
  }
  if (at != found.size()) return fmt::format("record '{}' was never appended", found[at]);
  batches = std::move(kept);
  return {};
}

using run_result = brook::test::fault_run;

class scenario {
 public:
  scenario(std::uint64_t seed, std::uint64_t nth) : seed_(seed), nth_(nth), g_(seed) {
    auto& d = opts_.defaults;
    d.segment_bytes = 2048 + g_() % 2048;
    d.segment_index_bytes = 128;
    d.index_interval_bytes = 128;
    d.retention_time = log_config::keep_forever;
    d.clock = clk_;
    d.files = files_;
    err_ = g_() % 2 == 0 ? ENOSPC : EIO;
    sticky_ = g_() % 2 == 0;
  }

  run_result run() {
    if (auto f = setup(); !f.empty()) return fail(f);
    if (nth_ > 0) files_->fail_at(nth_, err_, sticky_);
    for (int round = 0; round < 2 && out_.failure.empty(); ++round) faulty_round();
    if (!out_.failure.empty()) return out_;
    out_.mutations = files_->mutations();
    files_->revive();
    // ------------------------------------------------------------ checks, on a healthy disk
    data_dir_options healthy = opts_;
    healthy.defaults.files = posix_file_system::shared();
    auto dd = data_dir::open(tmp_.path(), healthy);
    if (!dd) return fail("the reopen on a healthy disk failed: " + dd.error().to_string());
    if (auto f = verify(**dd, "the healthy reopen"); !f.empty()) return fail(f);
    if (auto c = create_one(**dd); !c)
      return fail("a create_topic after the healthy reopen failed: " + c.error().to_string());
    if (!(*dd)->close()) return fail("closing the reopened directory");
    return out_;
  }

 private:
  run_result fail(const std::string& what) {
    out_.failure = brook::test::fault_failure(seed_, nth_, err_, sticky_, what);
    return out_;
  }

  /// A directory that already holds topics and records, written without faults.
  std::string setup() {
    data_dir_options o = opts_;
    o.defaults.files = posix_file_system::shared();
    auto dd = data_dir::open(tmp_.path(), o);
    if (!dd) return "setup open: " + dd.error().to_string();
    for (int i = 0; i < 2; ++i)
      if (!create_one(**dd)) return "setup create_topic";
    for (int i = 0; i < 4; ++i)
      if (!produce(**dd)) return "setup produce";
    if (!(*dd)->close()) return "setup close";
    return {};
  }

  std::vector<std::string> usable() const {
    std::vector<std::string> out;
    for (const auto& [n, t] : topics_)
      if (t.state == topic_m::unsure::no) out.push_back(n);
    return out;
  }

  /// create_topic of a fresh name, 1 to 3 partitions, some overrides.
  result<void> create_one(data_dir& dd) {
    const std::string name = fmt::format("t{}", next_topic_++);
    topic_config tc;
    tc.partitions = 1 + static_cast<std::int32_t>(g_() % 2);
    if (g_() % 3 == 0) {
      tc.overrides["cleanup.policy"] = "compact";
      tc.overrides["min.cleanable.dirty.ratio"] = "0.01";
    }
    if (g_() % 3 == 0) tc.overrides["segment.ms"] = "300";
    if (g_() % 3 == 0) tc.overrides["flush.messages"] = std::to_string(1 + g_() % 3);
    if (g_() % 4 == 0) tc.overrides["segment.bytes"] = "1024";
    topic_m t;
    t.partitions = tc.partitions;
    t.overrides = tc.overrides;
    t.parts.resize(static_cast<std::size_t>(tc.partitions));
    auto r = dd.create_topic(name, tc);
    if (!r) t.state = topic_m::unsure::created;
    topics_[name] = std::move(t);
    return r;
  }

  /// One batch into a random partition of a usable topic.
  result<void> produce(data_dir& dd) {
    const auto names = usable();
    if (names.empty()) return ok();
    const auto& name = names[g_() % names.size()];
    auto& t = topics_[name];
    const auto p = static_cast<std::int32_t>(g_() % static_cast<std::uint64_t>(t.partitions));
    batch_m b;
    const auto n = 1 + g_() % 5;
    for (std::size_t i = 0; i < n; ++i)
      b.values.push_back(fmt::format("v{:05}-{}", next_value_++, std::string(g_() % 60, 'x')));
    auto part = dd.get_partition(name, partition_id(p));
    if (!part) throw std::logic_error("a usable topic has no partition: " + part.error().to_string());
    auto bytes = batch_of(b.values, clk_->now_ms());
    auto a = (*part)->append(bytes);
    b.acked = a.has_value();
    t.parts[static_cast<std::size_t>(p)].push_back(std::move(b));
    if (!a) return a.error();
    return ok();
  }

  result<void> grow(data_dir& dd) {
    const auto names = usable();
    if (names.empty()) return ok();
    const auto& name = names[g_() % names.size()];
    auto& t = topics_[name];
    const auto total = t.partitions + 1 + static_cast<std::int32_t>(g_() % 2 == 0 && t.partitions < 3);
    auto r = dd.create_partitions(name, total);
    if (r) {
      t.partitions = total;
      t.parts.resize(static_cast<std::size_t>(total));
    } else {
      t.state = topic_m::unsure::grown;
      t.grown_to = total;
    }
    return r;
  }

  result<void> remove(data_dir& dd) {
    const auto names = usable();
    if (names.size() < 2) return ok();
    const auto name = names[g_() % names.size()];
    auto r = dd.delete_topic(name);
    if (r)
      topics_.erase(name);
    else
      topics_[name].state = topic_m::unsure::deleted;
    return r;
  }

  result<void> flush_one(data_dir& dd) {
    const auto names = usable();
    if (names.empty()) return ok();
    const auto& name = names[g_() % names.size()];
    const auto p = static_cast<std::int32_t>(g_() % static_cast<std::uint64_t>(topics_[name].partitions));
    auto part = dd.get_partition(name, partition_id(p));
    if (!part) throw std::logic_error("a usable topic has no partition: " + part.error().to_string());
    return (*part)->log().flush();
  }

  /// What an open shows against what the workload knows; settles every unsure topic.
  std::string verify(const data_dir& dd, const char* where) {
    auto listed = dd.list_topics();
    for (const auto& n : listed)
      if (!topics_.count(n)) return fmt::format("{}: topic '{}' was never created", where, n);
    for (auto it = topics_.begin(); it != topics_.end();) {
      auto& [name, t] = *it;
      const bool there = std::find(listed.begin(), listed.end(), name) != listed.end();
      if (!there) {
        if (t.state == topic_m::unsure::created || t.state == topic_m::unsure::deleted) {
          it = topics_.erase(it);
          continue;
        }
        return fmt::format("{}: topic '{}' is missing", where, name);
      }
      auto d = dd.describe_topic(name);
      if (!d) return fmt::format("{}: describe_topic('{}'): {}", where, name, d.error());
      const auto count = static_cast<std::int32_t>(d->partitions.size());
      if (count != d->config.partitions)
        return fmt::format("{}: topic '{}' says {} partitions, has {}", where, name, d->config.partitions, count);
      if (t.state == topic_m::unsure::grown && count == t.grown_to) {
        t.partitions = t.grown_to;
        t.parts.resize(static_cast<std::size_t>(t.grown_to));
      }
      if (count != t.partitions)
        return fmt::format("{}: topic '{}' has {} partitions, expected {}{}", where, name, count, t.partitions,
                           t.state == topic_m::unsure::grown ? fmt::format(" or {}", t.grown_to) : "");
      if (d->config.overrides != t.overrides) return fmt::format("{}: topic '{}' has other configs", where, name);
      for (std::int32_t p = 0; p < count; ++p) {
        auto part = dd.get_partition(name, partition_id(p));
        if (!part) return fmt::format("{}: {}-{}: {}", where, name, p, part.error());
        std::vector<std::string> found;
        try {
          found = contents(**part);
        } catch (const std::exception& e) {
          return fmt::format("{}: reading {}-{}: {}", where, name, p, e.what());
        }
        if (auto m = match(t.parts[static_cast<std::size_t>(p)], found); !m.empty())
          return fmt::format("{}: {}-{}: {}", where, name, p, m);
      }
      t.state = topic_m::unsure::no;
      ++it;
    }
    return {};
  }

  /// An open on the faulty disk, a random workload, a close.
  void faulty_round() {
    auto opened = data_dir::open(tmp_.path(), opts_);
    if (!opened) {
      out_.faulted = true;
      if (!(opened.error() == errc::kafka_storage_error))
        fail("the open failed without a named error: " + opened.error().to_string());
      return;
    }
    auto& dd = **opened;
    if (auto f = verify(dd, "an open on the faulty disk"); !f.empty()) return (void)fail(f);
    const int ops = 8 + static_cast<int>(g_() % 8);
    for (int i = 0; i < ops; ++i) {
      clk_->advance(static_cast<std::int64_t>(g_() % 200));
      const auto op = g_() % 20;
      result<void> r = ok();
      const char* what = "";
      if (op < 8) {
        what = "produce";
        r = produce(dd);
      } else if (op < 11) {
        what = "create_topic";
        r = create_one(dd);
      } else if (op < 13) {
        what = "create_partitions";
        r = grow(dd);
      } else if (op < 15) {
        what = "delete_topic";
        r = remove(dd);
      } else if (op < 16) {
        what = "flush";
        r = flush_one(dd);
      } else {
        what = "tick";
        r = dd.tick();
      }
      if (!r) {
        out_.faulted = true;
        if (!(r.error() == errc::kafka_storage_error))
          return (void)fail(fmt::format("{} (op {}) failed without a named error: {}", what, i, r.error()));
      }
    }
    if (auto c = dd.close(); !c) {
      out_.faulted = true;
      if (!(c.error() == errc::kafka_storage_error))
        fail("the close failed without a named error: " + c.error().to_string());
    }
  }

  const std::uint64_t seed_, nth_;
  std::mt19937_64 g_;
  scratch_dir tmp_{"brook-dfault"};
  std::shared_ptr<manual_clock> clk_ = std::make_shared<manual_clock>(1'000'000);
  std::shared_ptr<faulty_file_system> files_ = std::make_shared<faulty_file_system>();
  data_dir_options opts_;
  int err_ = EIO;
  bool sticky_ = false;
  int next_topic_ = 0;
  int next_value_ = 0;
  std::map<std::string, topic_m> topics_;
  run_result out_;
};

}  // namespace

TEST_CASE("data_dir: seeded disk faults at every I/O call of topic operations lose nothing acknowledged",
          "[storage][data_dir][fault][scenario]") {
  brook::test::walk_every_fault([](std::uint64_t seed, std::uint64_t n) { return scenario(seed, n).run(); }, 3);
}

// Seeded disk-fault scenarios for the cluster metadata log: a full or failing disk at every
// I/O call of a controller's life.
//
// Each seed fixes a workload on a metadata_log whose files go through
// testing::faulty_file_system: the open of a log that already holds metadata (written
// without faults), random appends of valid record batches (brokers registered, fenced and
// unfenced, topics with their partitions, partition changes, topic configs, removals, no-ops,
// now and then a new controller epoch) with segments small enough that the log rolls, a
// close and a second open and round of appends on the same faulty disk, then a close. A
// fault-free run counts the workload's mutating I/O calls; then, for every N, the same
// workload runs with the Nth call failing (ENOSPC or EIO; once, or from then on like a disk
// that stays full). Checks:
// - every failed open, append or close fails with a named error (KAFKA_STORAGE_ERROR), and
//   the process keeps running;
// - after an append failed with an I/O error the log refuses every later append with
//   kafka_storage_error and writes nothing more (metadata_log.hpp's promise);
// - each open on the faulty disk and the final one on a healthy disk replays an image that
//   is exactly the image after the acknowledged appends, plus, at most, the one failed
//   append that was the last attempt on its log (wholly: never part of a batch);
// - a healthy reopen never fails.
//
// Rerun one seed verbosely: BROOK_FAULT_SEED=7 ./brook_test_replication_metadata_log_fault_scenario
// Change the number of seeds: BROOK_FAULT_SEEDS=50 ./brook_test_replication_metadata_log_fault_scenario
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/replication/metadata_log.hpp>
#include <brook/testing/faulty_file_system.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/fault_walk.hpp"
#include "support/seeds.hpp"

using namespace brook;
using namespace brook::metadata;
using brook::test::scratch_dir;
using brook::testing::faulty_file_system;
using brook::testing::manual_clock;

namespace {

std::vector<broker_id> some_of(std::mt19937_64& g, const std::vector<broker_id>& from) {
  std::vector<broker_id> out;
  for (auto b : from)
    if (g() % 3 != 0) out.push_back(b);
  if (out.empty()) out.push_back(from[g() % from.size()]);
  return out;
}

/// One record that may or may not apply to `img` (the caller checks).
metadata_record candidate(std::mt19937_64& g, const cluster_image& img, int& next_topic) {
  const auto& topics = img.topics();
  const auto pick_topic = [&]() -> const topic_state& {
    return std::next(topics.begin(), static_cast<long>(g() % topics.size()))->second;
  };
  switch (g() % 9) {
    case 0: {
      register_broker_record r;
      r.broker_id = broker_id(static_cast<std::int32_t>(g() % 5));
      const auto* known = img.broker(r.broker_id);
      r.broker_epoch = (known ? known->epoch : 0) + 1 + static_cast<std::int64_t>(g() % 3);
      r.fenced = g() % 2 == 0;
      r.endpoints.push_back({"PLAINTEXT", fmt::format("host{}", r.broker_id), 9092, 0});
      return r;
    }
    case 1: {
      if (img.brokers().empty()) return no_op_record{};
      const auto& b = std::next(img.brokers().begin(), static_cast<long>(g() % img.brokers().size()))->second;
      if (g() % 2 == 0) return fence_broker_record{b.id, b.epoch};
      return unfence_broker_record{b.id, b.epoch};
    }
    case 2:
    case 3: return topic_record{fmt::format("topic-{}", next_topic++), uuid::random(g)};
    case 4: {
      if (topics.empty()) return no_op_record{};
      const auto& t = pick_topic();
      partition_record r;
      r.topic_id = t.id;
      r.partition_id = partition_id(static_cast<std::int32_t>(t.partitions.size()));
      r.replicas = {broker_id(0), broker_id(1), broker_id(2)};
      std::shuffle(r.replicas.begin(), r.replicas.end(), g);
      r.isr = some_of(g, r.replicas);
      r.leader = r.isr.front();
      r.leader_epoch = leader_epoch(0);
      r.partition_epoch = 0;
      return r;
    }
    case 5: {
      if (topics.empty()) return no_op_record{};
      const auto& t = pick_topic();
      if (t.partitions.empty()) return no_op_record{};
      const auto p = g() % t.partitions.size();
      partition_change_record c;
      c.topic_id = t.id;
      c.partition_id = partition_id(static_cast<std::int32_t>(p));
      c.isr = some_of(g, t.partitions[p].replicas);
      c.leader = (*c.isr)[g() % c.isr->size()];
      return c;
    }
    case 6: {
      if (topics.empty()) return no_op_record{};
      config_record c;
      c.resource_name = pick_topic().name;
      c.name = g() % 2 == 0 ? "retention.ms" : "cleanup.policy";
      if (g() % 4 != 0) c.value = std::to_string(g() % 100000);
      return c;
    }
    case 7: {
      if (topics.empty()) return no_op_record{};
      return remove_topic_record{pick_topic().id};
    }
    default: return no_op_record{};
  }
}

/// One batch of 1..6 records that applies to `img` as a whole.
std::vector<metadata_record> next_batch(std::mt19937_64& g, const cluster_image& img, int& next_topic) {
  cluster_image probe = img;
  std::vector<metadata_record> out;
  const auto n = 1 + g() % 6;
  for (std::size_t i = 0; i < n; ++i) {
    auto r = candidate(g, probe, next_topic);
    if (probe.apply(r)) out.push_back(std::move(r));
  }
  if (out.empty()) out.push_back(no_op_record{});
  return out;
}

using run_result = brook::test::fault_run;

class scenario {
 public:
  scenario(std::uint64_t seed, std::uint64_t nth) : seed_(seed), nth_(nth), g_(seed) {
    opts_.clock = clk_;
    opts_.log.segment_bytes = 512 + static_cast<std::int32_t>(g_() % 1536);  // several rolls per run
    opts_.log.segment_index_bytes = 64 + 64 * static_cast<std::int32_t>(g_() % 4);
    opts_.log.index_interval_bytes = 64;
    opts_.log.files = files_;
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
    metadata_log_options healthy = opts_;
    healthy.log.files = posix_file_system::shared();
    auto m = metadata_log::open(tmp_.path(), healthy);
    if (!m) return fail("the reopen on a healthy disk failed: " + m.error().to_string());
    if (auto f = resolve(*(*m)->image(), "the healthy reopen"); !f.empty()) return fail(f);
    if (auto a = (*m)->append({no_op_record{}}); !a) return fail("an append after the healthy reopen failed");
    if (!(*m)->close()) return fail("closing the reopened log");
    return out_;
  }

 private:
  run_result fail(const std::string& what) {
    out_.failure = brook::test::fault_failure(seed_, nth_, err_, sticky_, what);
    return out_;
  }

  /// A log that already holds metadata, written without faults.
  std::string setup() {
    metadata_log_options o = opts_;
    o.log.files = posix_file_system::shared();
    auto m = metadata_log::open(tmp_.path(), o);
    if (!m) return "setup open: " + m.error().to_string();
    for (int i = 0; i < 4; ++i) {
      auto recs = next_batch(g_, acked_, next_topic_);
      if (!(*m)->append(recs)) return "setup append";
      if (!acked_.set_controller_epoch(std::max(acked_.controller_epoch(), 0)) || !acked_.apply_all(recs))
        return "setup: the model refused a batch";
    }
    if (!(*m)->close()) return "setup close";
    return {};
  }

  /// The image a reopen replays must be the acknowledged one, or that plus the one failed
  /// append whose bytes may have reached the disk. Resolves which, for what follows.
  std::string resolve(const cluster_image& replayed, const char* where) {
    if (replayed == acked_) {
      maybe_.reset();
      return {};
    }
    if (maybe_ && replayed == *maybe_) {
      acked_ = *maybe_;
      maybe_.reset();
      return {};
    }
    return fmt::format("{} replayed an image that is neither the acknowledged one{}", where,
                       maybe_ ? " nor that plus the failed append" : "");
  }

  /// An open on the faulty disk, appends, a close.
  void faulty_round() {
    auto opened = metadata_log::open(tmp_.path(), opts_);
    if (!opened) {
      if (!(opened.error() == errc::kafka_storage_error))
        fail("the open failed without a named error: " + opened.error().to_string());
      out_.faulted = true;
      return;
    }
    auto& m = **opened;
    if (auto f = resolve(*m.image(), "an open on the faulty disk"); !f.empty()) {
      fail(f);
      return;
    }
    bool broken = false;
    const int appends = 8 + static_cast<int>(g_() % 8);
    for (int i = 0; i < appends; ++i) {
      clk_->advance(static_cast<std::int64_t>(g_() % 100));
      auto recs = next_batch(g_, acked_, next_topic_);
      const bool new_epoch = g_() % 6 == 0;
      const std::int32_t epoch = std::max(acked_.controller_epoch(), 0) + (new_epoch ? 1 : 0);
      const auto before = files_->mutations();
      auto a = m.append(recs, epoch);
      if (broken) {
        if (a) return (void)fail(fmt::format("append {} was acknowledged after an I/O error", i));
        if (!(a.error() == errc::kafka_storage_error) || a.error().code().category() != brook::error_category())
          return (void)fail(fmt::format("append {} after an I/O error failed with {}", i, a.error()));
        if (files_->mutations() != before)
          return (void)fail(fmt::format("append {} after an I/O error still wrote to the disk", i));
        continue;
      }
      cluster_image next = acked_;
      if (!next.set_controller_epoch(epoch) || !next.apply_all(recs))
        return (void)fail("the model refused a batch it generated");
      if (a) {
        if (!(*a->image == next)) return (void)fail(fmt::format("append {} published an unexpected image", i));
        acked_ = std::move(next);
        continue;
      }
      out_.faulted = true;
      if (!(a.error() == errc::kafka_storage_error))
        return (void)fail(fmt::format("append {} failed without a named error: {}", i, a.error()));
      if (!(*m.image() == acked_)) return (void)fail(fmt::format("failed append {} changed the image", i));
      maybe_ = std::move(next);
      broken = true;
    }
    if (auto c = m.close(); !c) {
      out_.faulted = true;
      if (!(c.error() == errc::kafka_storage_error))
        fail("the close failed without a named error: " + c.error().to_string());
    }
  }

  const std::uint64_t seed_, nth_;
  std::mt19937_64 g_;
  scratch_dir tmp_{"brook-mfault"};
  std::shared_ptr<manual_clock> clk_ = std::make_shared<manual_clock>(1'000'000);
  std::shared_ptr<faulty_file_system> files_ = std::make_shared<faulty_file_system>();
  metadata_log_options opts_;
  int err_ = EIO;
  bool sticky_ = false;
  int next_topic_ = 0;
  cluster_image acked_;                 // the image after every acknowledged append
  std::optional<cluster_image> maybe_;  // acked_ plus the append that failed last, if any
  run_result out_;
};

}  // namespace

TEST_CASE("metadata log: seeded disk faults at every I/O call lose no acknowledged append",
          "[replication][metadata_log][fault][scenario]") {
  brook::test::walk_every_fault([](std::uint64_t seed, std::uint64_t n) { return scenario(seed, n).run(); }, 8);
}

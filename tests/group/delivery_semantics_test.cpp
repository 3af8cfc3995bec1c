// Delivery semantics of a consumer group under failures, checked over seeded random
// schedules in simulated time (one thread, a manual_clock, coordinator tick()):
//
//   at-most-once    commit the positions a poll reached, then process: a crash between the
//                   two loses records, nothing is ever processed twice;
//   at-least-once   process, then commit (the default discipline): a crash between the two
//                   processes records again, nothing is ever skipped;
//   exactly-once    the host stores each result together with the next offset of its
//                   partition (one update of one struct: a transaction), and seeks to the
//                   stored offsets in on_partitions_assigned: every record is processed
//                   exactly once, wherever the crash lands. Each write carries the offset it
//                   follows (compare-and-set), so a member that overran max.poll.interval.ms
//                   (a zombie) cannot overwrite the work of its successor.
//
// A schedule interleaves, for 2-4 members: the steps of each member's cycle (poll, process
// some records, commit), crashes (a close without commit, callbacks or leave; the group
// notices after session.timeout.ms) at every point of the cycle, replacements and new members, graceful
// closes, members that stall past max.poll.interval.ms while holding records, producers,
// and time. Runs vary the assignors (eager and cooperative), static membership (a
// replacement is a new instance of the dead member), commit_sync/commit_async, and for
// at-least-once also enable.auto.commit. Then the survivors (sometimes a single one) drain
// the topic and the output is checked. Each run prints its seed on failure;
// BROOK_SEMANTICS_SEED=<seed> replays one run of each mode with a trace on stderr, and
// BROOK_SEMANTICS_RUNS=<n> changes the number of runs per mode (default 1000).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/format/record_batch_builder.hpp>
#include <brook/group/cooperative_sticky_assignor.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/group/range_assignor.hpp>
#include <brook/group/round_robin_assignor.hpp>
#include <brook/group/sticky_assignor.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/seeds.hpp"

using namespace brook;
using brook::testing::manual_clock;
using namespace std::chrono_literals;

namespace {

enum class semantics { at_most_once, at_least_once, exactly_once };

const char* name_of(semantics s) {
  switch (s) {
    case semantics::at_most_once: return "at-most-once";
    case semantics::at_least_once: return "at-least-once";
    case semantics::exactly_once: return "exactly-once";
  }
  return "?";
}

constexpr std::chrono::milliseconds session_timeout{6000};
constexpr std::chrono::milliseconds heartbeat_interval{2000};
constexpr std::chrono::milliseconds max_poll_interval{10000};

/// Counters over all runs of one mode: what happened, so the checks cannot pass vacuously.
struct tally {
  std::int64_t runs = 0, records = 0, steps = 0;
  std::map<std::string, std::int64_t> kills;  ///< by the point of the cycle where the member died
  std::int64_t closes = 0, joins = 0, stalls = 0, lost_callbacks = 0, generations = 0, refused_commits = 0;
  std::int64_t static_runs = 0, static_restarts = 0;  ///< group.instance.id members; a new instance of a dead one
  std::int64_t auto_commit_runs = 0;                  ///< at-least-once through enable.auto.commit
  std::int64_t lost_records = 0, runs_with_loss = 0, duplicates = 0, runs_with_duplicates = 0;
  std::int64_t zombie_writes = 0, fenced_writes = 0;

  std::int64_t total_kills() const {
    std::int64_t n = 0;
    for (const auto& [_, k] : kills) n += k;
    return n;
  }
  std::string summary() const {
    std::string k;
    for (const auto& [point, n] : kills) k += fmt::format("{}{}: {}", k.empty() ? "" : ", ", point, n);
    return fmt::format(
        "{} runs, {} records, {} steps; kills {} ({}); closes {}, joins {}, stalls {}, lost callbacks {}, "
        "generations {}, refused commits {}; static members in {} runs, {} restarts; auto-commit in {} runs; "
        "lost records {} in {} runs; "
        "duplicates {} in {} runs; zombie writes {}, fenced zombie writes {}",
        runs, records, steps, total_kills(), k, closes, joins, stalls, lost_callbacks, generations, refused_commits,
        static_runs, static_restarts, auto_commit_runs, lost_records, runs_with_loss, duplicates, runs_with_duplicates,
        zombie_writes, fenced_writes);
  }
};

/// The exactly-once host's store: per partition the next offset to process, changed in the
/// same update as the results it covers.
struct host_store {
  struct partition_state {
    std::int64_t next = 0;
    bool zombie_wrote = false;  ///< a member no longer in the group advanced it
  };
  std::map<topic_partition, partition_state> parts;
  std::map<std::string, int> results;  ///< record value -> times stored
};

/// Seeks to the host's offsets (exactly-once) and counts lost partitions.
struct host_listener final : rebalance_listener {
  group_consumer* consumer = nullptr;
  host_store* store = nullptr;  ///< null: the group's committed offsets are used
  std::int64_t* lost = nullptr;
  void on_partitions_assigned(const std::vector<topic_partition>& tps) override {
    if (!store) return;
    for (const auto& tp : tps) REQUIRE(consumer->seek(tp, offset(store->parts.at(tp).next)));
  }
  void on_partitions_revoked(const std::vector<topic_partition>&) override {}  // the store is always consistent
  void on_partitions_lost(const std::vector<topic_partition>&) override { ++*lost; }
};

/// One data directory and coordinator for all runs of a mode (a fresh pair costs more than a
/// run): each run has its own group, starts at the end of the topic and deletes its group.
/// On tmpfs when there is one (support/crash_helpers.hpp): topic creation fsyncs.
struct semantics_env {
  brook::test::scratch_dir dir{"brook-semantics"};
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>();
  std::unique_ptr<data_dir> dd;
  std::unique_ptr<group_coordinator> coord;

  semantics_env() {
    data_dir_options o;
    o.defaults.clock = clk;
    auto d = data_dir::open(dir.path(), o);
    REQUIRE(d);
    dd = std::move(*d);
    coordinator_config c;
    c.offsets_topic_num_partitions = 1;
    c.group_initial_rebalance_delay = 0ms;
    c.group_min_session_timeout = session_timeout;
    auto co = group_coordinator::open(*dd, c);
    REQUIRE(co);
    coord = std::move(*co);
    for (int n = 2; n <= 4; ++n) {
      topic_config tc;
      tc.partitions = n;
      REQUIRE(dd->create_topic(fmt::format("t{}", n), tc));
    }
  }
};

/// A record handed to the host, copied out of its poll.
struct delivered {
  topic_partition tp;
  std::int64_t off = 0;
  std::string value;
};

class scenario {
 public:
  scenario(semantics_env& env, semantics mode, std::uint64_t seed, tally& t, bool trace)
      : env_(env), mode_(mode), seed_(seed), rng_(seed), t_(t), trace_(trace) {}

  void run() {
    setup();
    const int steps = pick(60, 220);
    for (int i = 0; i < steps; ++i) step();
    drain();
    check();
    teardown();
  }

 private:
  enum class phase {
    idle,       ///< between cycles: polls next
    polled,     ///< holds records it has not processed (at-most-once: nor committed)
    committed,  ///< at-most-once: committed, processing
    processed,  ///< at-least-once / exactly-once: processed, commits next
  };
  struct member {
    std::string name;
    std::optional<std::string> instance;  ///< group.instance.id (static membership)
    std::unique_ptr<host_listener> listener;
    std::unique_ptr<group_consumer> c;
    phase ph = phase::idle;
    std::vector<delivered> pending;
    std::size_t done = 0;            ///< records of `pending` processed
    timestamp_ms stalled_until = 0;  ///< does nothing until the clock reaches this
  };

  // ---------------------------------------------------------------- helpers

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  timestamp_ms now() const { return env_.clk->now_ms(); }

  template <typename... Args>
  void note(fmt::format_string<Args...> f, Args&&... args) {
    if (trace_)
      std::fprintf(stderr, "[%s %llu t=%lld] %s\n", name_of(mode_), static_cast<unsigned long long>(seed_),
                   static_cast<long long>(now() - start_ms_), fmt::format(f, std::forward<Args>(args)...).c_str());
  }

  topic_partition tp_of(int p) const { return topic_partition{topic_, partition_id(p)}; }

  void produce(int p, int n) {
    auto part = env_.dd->get_partition(topic_, partition_id(p));
    REQUIRE(part);
    record_batch_builder b;
    std::vector<std::string> vals;
    for (int i = 0; i < n; ++i) {
      vals.push_back(fmt::format("{}:{}", seed_, produced_++));
      b.append(now(), nullable_bytes::null(), nullable_bytes(vals.back()));
    }
    auto r = (*part)->append(b.finish());
    REQUIRE(r);
    for (int i = 0; i < n; ++i) expected_[{tp_of(p), r->base_offset.value() + i}] = vals[static_cast<std::size_t>(i)];
    note("produced {} to p{} at {}", n, p, r->base_offset.value());
  }

  void advance(std::int64_t ms) {
    env_.clk->advance(ms);
    REQUIRE(env_.coord->tick());
  }

  std::vector<member*> live(bool include_stalled = false) {
    std::vector<member*> out;
    for (auto& m : members_) {
      if (!include_stalled && m->stalled_until > now()) continue;
      out.push_back(m.get());
    }
    return out;
  }
  member* any_live(bool include_stalled = false) {
    auto v = live(include_stalled);
    if (v.empty()) return nullptr;
    return v[static_cast<std::size_t>(pick(0, static_cast<int>(v.size()) - 1))];
  }

  /// The member is in the group's current generation (not removed, not superseded).
  bool in_group(const member& m) const {
    auto d = env_.coord->describe_group(group_);
    const auto md = m.c->group_metadata();
    if (!d || md.member_id.empty() || d->generation != md.generation) return false;
    return std::any_of(d->members.begin(), d->members.end(),
                       [&](const member_description& x) { return x.member_id == md.member_id; });
  }

  // ---------------------------------------------------------------- the run

  void setup() {
    const int n_parts = pick(2, 4);
    topic_ = fmt::format("t{}", n_parts);
    partitions_ = n_parts;
    group_ = fmt::format("g-{}-{}", name_of(mode_), seed_);
    start_ms_ = now();
    std::map<topic_partition, offset_and_metadata> base;
    for (int p = 0; p < n_parts; ++p) {
      auto part = env_.dd->get_partition(topic_, partition_id(p));
      REQUIRE(part);
      const std::int64_t end = (*part)->high_watermark().value();
      base[tp_of(p)] = offset_and_metadata{offset(end), -1, {}};
      store_.parts[tp_of(p)].next = end;
    }
    // The group starts where this run's records start (earlier runs wrote the same topic).
    REQUIRE(env_.coord->alter_offsets(group_, base));
    switch (pick(0, 3)) {  // eager (range first, Kafka's default list), cooperative, others
      case 0: assignors_ = {}; break;
      case 1: assignors_ = {std::make_shared<cooperative_sticky_assignor>()}; break;
      case 2: assignors_ = {std::make_shared<round_robin_assignor>()}; break;
      default: assignors_ = {std::make_shared<sticky_assignor>()}; break;
    }
    eos_commits_ = chance(0.5);
    static_members_ = chance(0.25);
    // At-least-once the way Kafka's default does it: every poll first commits what the
    // previous polls returned (and so do rebalances and close()); the host processes
    // everything before it polls again.
    auto_commit_ = mode_ == semantics::at_least_once && chance(1.0 / 3);
    t_.auto_commit_runs += auto_commit_;
    t_.static_runs += static_members_;
    max_poll_records_ = static_cast<std::size_t>(pick(1, 5));
    to_produce_ = pick(6, 20);
    for (int i = 0, n = pick(0, to_produce_); i < n;) {
      const int k = std::min(n - i, pick(1, 3));
      produce(pick(0, partitions_ - 1), k);
      i += k;
      to_produce_ -= k;
    }
    for (int i = 0, n = pick(2, 4); i < n; ++i) spawn();
  }

  /// A new member; with static membership it takes the first instance id no running member
  /// has: the replacement of a dead member is a new instance of it (KIP-345).
  void spawn() {
    auto m = std::make_unique<member>();
    m->name = fmt::format("c{}", next_member_++);
    if (static_members_) {
      for (int i = 0; !m->instance; ++i) {
        auto id = fmt::format("i{}", i);
        if (std::none_of(members_.begin(), members_.end(), [&](const auto& x) { return x->instance == id; }))
          m->instance = id;
      }
      if (std::any_of(dead_.begin(), dead_.end(), [&](const auto& x) { return x->instance == m->instance; }))
        ++t_.static_restarts;
    }
    group_consumer_config cfg;
    cfg.group_id = group_;
    cfg.consumer.fetch_max_wait = 0ms;
    cfg.enable_auto_commit = auto_commit_;
    cfg.auto_commit_interval = std::chrono::milliseconds(pick(0, 3000));
    cfg.session_timeout = session_timeout;
    cfg.heartbeat_interval = heartbeat_interval;
    cfg.max_poll_interval = max_poll_interval;
    cfg.assignors = assignors_;
    cfg.client_id = m->name;
    cfg.group_instance_id = m->instance;
    cfg.consumer.max_poll_records = max_poll_records_;
    m->c = std::make_unique<group_consumer>(*env_.dd, *env_.coord, cfg);
    m->listener = std::make_unique<host_listener>();
    m->listener->consumer = m->c.get();
    m->listener->store = mode_ == semantics::exactly_once ? &store_ : nullptr;
    m->listener->lost = &t_.lost_callbacks;
    REQUIRE(m->c->subscribe({topic_}, m->listener.get()));
    note("{} starts{}", m->name, m->instance ? " as " + *m->instance : std::string());
    members_.push_back(std::move(m));
    ++t_.joins;
  }

  void step() {
    ++t_.steps;
    const int r = pick(0, 99);
    if (r < 58) {
      if (auto* m = any_live()) act(*m);
    } else if (r < 78) {
      advance(pick(1, 2000));
    } else if (r < 84) {
      if (to_produce_ > 0) {
        const int k = std::min(to_produce_, pick(1, 3));
        produce(pick(0, partitions_ - 1), k);
        to_produce_ -= k;
      }
    } else if (r < 89) {
      // Crashes land anywhere; half of them are aimed at a member in the middle of a cycle.
      member* m = any_live();
      if (chance(0.5)) {
        std::vector<member*> busy;
        for (auto* x : live())
          if (x->ph != phase::idle) busy.push_back(x);
        if (!busy.empty()) m = busy[static_cast<std::size_t>(pick(0, static_cast<int>(busy.size()) - 1))];
      }
      if (m) {
        kill(*m);
        if (chance(0.7)) spawn();  // a replacement
      }
    } else if (r < 92) {
      if (live(true).size() < 4) spawn();
    } else if (r < 95) {
      // A graceful close, between cycles (a host closes after finishing its batch).
      if (auto* m = any_live(); m && m->ph == phase::idle && live(true).size() > 1) close(*m);
    } else if (r < 97) {
      if (auto* m = any_live()) {
        m->stalled_until = now() + pick(static_cast<int>(max_poll_interval.count() / 2),
                                        static_cast<int>(max_poll_interval.count() * 2));
        ++t_.stalls;
        note("{} stalls until t={} holding {} records", m->name, m->stalled_until - start_ms_,
             m->pending.size() - m->done);
      }
    } else {
      // A member that just polled processes and commits at once (no other step in between).
      if (auto* m = any_live()) {
        act(*m);
        while (m->ph != phase::idle) act(*m);
      }
    }
  }

  /// One step of the member's cycle.
  void act(member& m) {
    switch (m.ph) {
      case phase::idle: poll(m); return;
      case phase::polled:
        if (mode_ == semantics::at_most_once)
          commit(m);
        else
          process(m);
        return;
      case phase::committed: process(m); return;
      case phase::processed: commit(m); return;
    }
  }

  void poll(member& m) {
    auto recs = m.c->poll(0ms);
    INFO(m.name << " poll: " << (recs ? std::string("ok") : recs.error().to_string()));
    REQUIRE(recs);
    m.pending.clear();
    m.done = 0;
    std::map<topic_partition, std::int64_t> last;
    for (const auto& rec : *recs) {
      delivered d{topic_partition{rec.topic(), rec.partition()}, rec.offset().value(), rec.value().to_string()};
      auto it = expected_.find({d.tp, d.off});
      INFO(m.name << " got " << d.tp.topic << "-" << d.tp.partition.value() << "@" << d.off << " = " << d.value);
      REQUIRE(it != expected_.end());  // a record of this run, where it was written
      REQUIRE(it->second == d.value);
      if (auto l = last.find(d.tp); l != last.end()) REQUIRE(d.off > l->second);
      last[d.tp] = d.off;
      m.pending.push_back(std::move(d));
    }
    if (!m.pending.empty()) {
      m.ph = phase::polled;
      note("{} polled {} records from {}@{}", m.name, m.pending.size(), m.pending.front().tp.partition.value(),
           m.pending.front().off);
    }
  }

  /// Processes some of the records the member holds.
  void process(member& m) {
    const std::size_t left = m.pending.size() - m.done;
    const std::size_t n = static_cast<std::size_t>(pick(1, static_cast<int>(left)));
    const bool zombie = mode_ == semantics::exactly_once && !in_group(m);
    for (std::size_t i = 0; i < n; ++i) handle(m, m.pending[m.done++], zombie);
    note("{} processed {} records{}", m.name, n, zombie ? " (zombie)" : "");
    if (m.done < m.pending.size()) return;
    m.pending.clear();
    m.done = 0;
    m.ph = mode_ == semantics::at_most_once ? phase::idle : phase::processed;
  }

  void handle(const member& m, const delivered& d, bool zombie) {
    if (mode_ != semantics::exactly_once) {
      ++output_[d.value];
      return;
    }
    auto& ps = store_.parts.at(d.tp);
    INFO(m.name << (zombie ? " (zombie)" : "") << " processes " << d.tp.partition.value() << "@" << d.off
                << ", the store is at " << ps.next);
    REQUIRE(d.off <= ps.next);  // a gap: the member was handed records past what the store holds
    if (d.off < ps.next) {
      // Stale: only a zombie (or a successor racing one) may see records the store already has.
      REQUIRE((zombie || ps.zombie_wrote));
      ++t_.fenced_writes;
      return;
    }
    // The transaction: the result and the partition's next offset together.
    ++store_.results[d.value];
    ps.next = d.off + 1;
    if (zombie) {
      ps.zombie_wrote = true;
      ++t_.zombie_writes;
    }
  }

  void commit(member& m) {
    if ((mode_ == semantics::exactly_once && !eos_commits_) || auto_commit_) {
      m.ph = phase::idle;
      return;
    }
    result<void> r = ok();
    if (chance(0.5))
      r = m.c->commit_sync();
    else
      m.c->commit_async([&](const result<void>& x) { r = x; });
    note("{} commit: {}", m.name, r ? std::string("ok") : r.error().to_string());
    if (!r) {
      ++t_.refused_commits;
      INFO(r.error().to_string());
      REQUIRE((r.error() == errc::rebalance_in_progress || r.error() == errc::illegal_generation ||
               r.error() == errc::unknown_member_id));
    }
    if (m.ph == phase::polled) {  // at-most-once: process only what is committed
      if (r) {
        m.ph = phase::committed;
      } else {
        m.pending.clear();
        m.done = 0;
        m.ph = phase::idle;
      }
      return;
    }
    m.ph = phase::idle;
  }

  std::string point_of(semantics mode, const member& m) const {
    switch (m.ph) {
      case phase::idle:
        if (auto_commit_) return "after processing, before the next poll's auto-commit";
        return mode == semantics::at_most_once ? "after processing" : "after commit";
      case phase::polled:
        if (mode == semantics::at_most_once) return "before commit";
        return m.done == 0 ? "before processing" : "while processing";
      case phase::committed: return m.done == 0 ? "after commit, before processing" : "while processing";
      case phase::processed: return "after processing, before commit";
    }
    return "?";
  }

  void kill(member& m) {
    ++t_.kills[point_of(mode_, m)];
    note("{} dies {}", m.name, point_of(mode_, m));
    REQUIRE(m.c->close({.leave_group = false, .commit_and_revoke = false}));  // a crashed process
    remove(m);
  }

  void close(member& m) {
    note("{} closes", m.name);
    REQUIRE(m.c->close());
    ++t_.closes;
    remove(m);
  }

  void remove(member& m) {
    auto it = std::find_if(members_.begin(), members_.end(), [&](const auto& p) { return p.get() == &m; });
    dead_.push_back(std::move(*it));
    members_.erase(it);
  }

  // ---------------------------------------------------------------- the end

  bool complete() {
    for (int p = 0; p < partitions_; ++p) {
      auto part = env_.dd->get_partition(topic_, partition_id(p));
      REQUIRE(part);
      const std::int64_t end = (*part)->high_watermark().value();
      if (mode_ == semantics::exactly_once) {
        if (store_.parts.at(tp_of(p)).next != end) return false;
        continue;
      }
      auto c = env_.coord->fetch_offsets(group_, std::vector<topic_partition>{tp_of(p)});
      if (!c.count(tp_of(p)) || c.at(tp_of(p)).off.value() != end) return false;
    }
    if (mode_ == semantics::at_least_once)
      for (const auto& [_, v] : expected_)
        if (!output_.count(v)) return false;
    return true;
  }

  /// Per partition: log end, committed offset, the host's offset; records not processed yet.
  std::string progress() {
    std::string s;
    for (int p = 0; p < partitions_; ++p) {
      auto part = env_.dd->get_partition(topic_, partition_id(p));
      REQUIRE(part);
      auto c = env_.coord->fetch_offsets(group_, std::vector<topic_partition>{tp_of(p)});
      s += fmt::format("p{}: end {} committed {} stored {}; ", p, (*part)->high_watermark().value(),
                       c.count(tp_of(p)) ? c.at(tp_of(p)).off.value() : -1, store_.parts.at(tp_of(p)).next);
    }
    const auto& out = mode_ == semantics::exactly_once ? store_.results : output_;
    s += "unprocessed:";
    for (const auto& [k, v] : expected_)
      if (!out.count(v)) s += fmt::format(" p{}@{}", k.first.partition.value(), k.second);
    auto d = env_.coord->describe_group(group_);
    if (d)
      s += fmt::format("; group {} generation {} with {} members", group_state_name(d->state), d->generation,
                       d->members.size());
    return s;
  }

  /// The survivors (at least one) run whole cycles, one second apart, until everything is
  /// processed (at-most-once: committed).
  void drain() {
    while (to_produce_ > 0) {
      const int k = std::min(to_produce_, 3);
      produce(pick(0, partitions_ - 1), k);
      to_produce_ -= k;
    }
    note("drain");
    for (auto& m : members_) m->stalled_until = 0;
    if (chance(0.5))  // one survivor takes over everything
      while (members_.size() > 1) {
        auto& m = *members_.back();
        while (m.ph != phase::idle) act(m);
        close(m);
      }
    int round = 0;
    for (; round < 300 && !complete(); ++round) {
      if (members_.empty()) spawn();
      advance(1000);
      for (auto* m : live()) {
        while (m->ph != phase::idle) act(*m);
        act(*m);
        while (m->ph != phase::idle) act(*m);
      }
    }
    INFO("drain rounds " << round << "; " << progress());
    REQUIRE(complete());
  }

  void check() {
    ++t_.runs;
    t_.records += static_cast<std::int64_t>(expected_.size());
    const auto& out = mode_ == semantics::exactly_once ? store_.results : output_;
    std::int64_t lost = 0, dup = 0;
    std::vector<std::string> lost_ids, dup_ids;
    for (const auto& [_, v] : expected_) {
      auto it = out.find(v);
      const int n = it == out.end() ? 0 : it->second;
      if (n == 0) ++lost, lost_ids.push_back(v);
      if (n > 1) dup += n - 1, dup_ids.push_back(v);
    }
    CHECK(out.size() <= expected_.size());
    t_.lost_records += lost;
    t_.duplicates += dup;
    t_.runs_with_loss += lost > 0;
    t_.runs_with_duplicates += dup > 0;
    INFO(name_of(mode_) << " seed " << seed_ << ": lost " << fmt::format("{}", fmt::join(lost_ids, " "))
                        << "; duplicated " << fmt::format("{}", fmt::join(dup_ids, " ")));
    if (mode_ != semantics::at_most_once) REQUIRE(lost == 0);
    if (mode_ != semantics::at_least_once) REQUIRE(dup == 0);
  }

  void teardown() {
    for (auto& m : members_) REQUIRE(m->c->close());
    dead_.clear();
    members_.clear();
    // Crashed members leave once their sessions expire; then the group is Empty.
    for (int i = 0; i < 4; ++i) {
      auto d = env_.coord->describe_group(group_);
      REQUIRE(d);
      if (d->members.empty()) break;
      advance(session_timeout.count() + 1000);
    }
    auto d = env_.coord->describe_group(group_);
    REQUIRE(d);
    CHECK(d->members.empty());
    CHECK(d->state == group_state::empty);
    t_.generations += d->generation.value();
    REQUIRE(env_.coord->delete_group(group_));
  }

  semantics_env& env_;
  semantics mode_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  tally& t_;
  bool trace_;

  std::string topic_;
  int partitions_ = 0;
  std::string group_;
  timestamp_ms start_ms_ = 0;
  std::vector<std::shared_ptr<assignor>> assignors_;
  bool eos_commits_ = false;
  bool static_members_ = false;
  bool auto_commit_ = false;
  std::size_t max_poll_records_ = 5;
  int to_produce_ = 0;
  int produced_ = 0;
  int next_member_ = 0;
  std::map<std::pair<topic_partition, std::int64_t>, std::string> expected_;  ///< (partition, offset) -> value
  std::map<std::string, int> output_;  ///< at-most/at-least-once: record value -> times processed
  host_store store_;
  std::vector<std::unique_ptr<member>> members_;
  std::vector<std::unique_ptr<member>> dead_;  ///< crashed or closed, kept until the end of the run
};

/// Runs `runs` seeded scenarios of one mode (or BROOK_SEMANTICS_SEED alone, traced).
tally run_mode(semantics mode, std::uint64_t base_seed, int runs) {
  semantics_env env;
  tally t;
  auto one = [&](std::uint64_t seed, bool trace) {
    INFO(name_of(mode) << " seed " << seed << " (replay: BROOK_SEMANTICS_SEED=" << seed << ")");
    scenario(env, mode, seed, t, trace).run();
  };
  if (auto s = brook::test::env_int("BROOK_SEMANTICS_SEED")) {
    one(static_cast<std::uint64_t>(*s), true);
  } else {
    const auto n = brook::test::env_int("BROOK_SEMANTICS_RUNS").value_or(runs);
    const std::uint64_t first = base_seed + brook::test::seed_base();
    for (std::int64_t i = 0; i < n; ++i) one(first + static_cast<std::uint64_t>(i), false);
  }
  WARN(name_of(mode) << ": " << t.summary());
  return t;
}

/// What every mode's schedules must have exercised, so that no check passes vacuously.
void check_coverage(semantics mode, const tally& t) {
  if (brook::test::env_int("BROOK_SEMANTICS_SEED") || t.runs < 200) return;
  for (const char* point :
       {"before processing", "while processing", "after processing, before commit", "after commit"}) {
    if (mode == semantics::at_most_once) break;
    INFO(point);
    CHECK(t.kills.count(point));
    CHECK(t.kills.at(point) >= t.runs / 20);
  }
  if (mode == semantics::at_most_once)
    for (const char* point :
         {"before commit", "after commit, before processing", "while processing", "after processing"}) {
      INFO(point);
      CHECK(t.kills.count(point));
      CHECK(t.kills.at(point) >= t.runs / 20);
    }
  CHECK(t.closes >= t.runs / 4);
  CHECK(t.stalls >= t.runs / 4);
  CHECK(t.lost_callbacks > 0);  // members removed while they held partitions
  CHECK(t.generations >= 3 * t.runs);
  CHECK(t.refused_commits > 0);
  CHECK(t.static_restarts >= t.runs / 20);
  if (mode == semantics::at_least_once) {
    CHECK(t.auto_commit_runs >= t.runs / 5);
    CHECK(t.kills.count("after processing, before the next poll's auto-commit"));
  }
}

}  // namespace

TEST_CASE("at-most-once: commit, then process: crashes lose records, never duplicate one",
          "[group][consumer][semantics]") {
  const tally t = run_mode(semantics::at_most_once, 0x616d6f00, 1000);
  check_coverage(semantics::at_most_once, t);
  if (t.runs >= 200) CHECK(t.runs_with_loss >= t.runs / 20);  // the crashes did land between commit and processing
}

TEST_CASE("at-least-once: process, then commit: crashes duplicate records, never skip one",
          "[group][consumer][semantics]") {
  const tally t = run_mode(semantics::at_least_once, 0x616c6f00, 1000);
  check_coverage(semantics::at_least_once, t);
  if (t.runs >= 200) CHECK(t.runs_with_duplicates >= t.runs / 20);
}

TEST_CASE("exactly-once for the host: results stored with their offsets, seek on assignment, nothing lost or repeated",
          "[group][consumer][semantics]") {
  const tally t = run_mode(semantics::exactly_once, 0x656f7300, 1000);
  check_coverage(semantics::exactly_once, t);
  if (t.runs >= 200) CHECK(t.zombie_writes + t.fenced_writes > 0);  // zombies were there to be fenced
}

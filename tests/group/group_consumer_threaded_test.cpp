// Group consumers on real threads against a live coordinator (its own timer thread, the
// system clock) while a producer thread writes: members join, one closes, one crashes
// holding records it never processed, one joins late. Each member processes, then commits
// (at-least-once). Checks: every produced record is consumed at least once, with the value
// the producer wrote; within one member and one generation each partition's offsets come
// in order without gaps; every member's thread ends; the group ends Empty. Runs under
// TSan in CI (the file name ends in _threaded_test).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/client/producer.hpp>
#include <brook/group/cooperative_sticky_assignor.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/storage/data_dir.hpp>

#include "support/crash_helpers.hpp"

using namespace brook;
using namespace std::chrono_literals;

namespace {

using steady = std::chrono::steady_clock;

constexpr int partitions = 4;
constexpr int records = 3000;
const std::string topic = "events";
const std::string group_id = "workers";

/// What every thread reports; checked on the main thread (Catch assertions are not
/// thread-safe).
struct shared_state {
  std::mutex mu;
  std::map<std::pair<int, std::int64_t>, std::string> produced;  ///< (partition, offset) -> value
  std::map<std::pair<int, std::int64_t>, std::string> consumed;  ///< first value seen there
  std::map<std::pair<int, std::int64_t>, int> times;             ///< how often it was processed
  std::set<std::pair<int, std::int64_t>> held_at_crash;          ///< records the crashed member never processed
  std::vector<std::string> errors;
  std::int32_t max_generation = 0;

  void error(std::string e) {
    std::lock_guard lk(mu);
    errors.push_back(std::move(e));
  }
  std::size_t consumed_count() {
    std::lock_guard lk(mu);
    return consumed.size();
  }
};

enum class ending { runs_to_the_end, closes, crashes };

struct worker {
  std::string name;
  ending how = ending::runs_to_the_end;
  std::atomic<bool> stop{false};     ///< set by the main thread: close and return
  std::atomic<bool> act_now{false};  ///< set by the main thread: close / crash at the next chance
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> processed{0};
  std::atomic<std::size_t> owned{0};  ///< partitions assigned after its last poll
  std::atomic<bool> held_records_at_crash{false};
  std::thread thread;
};

class scenario {
 public:
  explicit scenario(std::vector<std::shared_ptr<assignor>> assignors) : assignors_(std::move(assignors)) {
    data_dir_options o;  // the system clock
    auto d = data_dir::open(dir_.path(), o);
    REQUIRE(d);
    dd_ = std::move(*d);
    topic_config tc;
    tc.partitions = partitions;
    REQUIRE(dd_->create_topic(topic, tc));
    coordinator_config cc;
    cc.offsets_topic_num_partitions = 1;
    cc.group_initial_rebalance_delay = 30ms;
    cc.group_min_session_timeout = 100ms;
    auto c = group_coordinator::open(*dd_, cc);
    REQUIRE(c);
    coord_ = std::move(*c);
    coord_->start();
  }
  ~scenario() {
    produce_phase_ = 3;
    for (auto& w : workers_) {
      w->stop = true;
      if (w->thread.joinable()) w->thread.join();
    }
    if (producer_thread_.joinable()) producer_thread_.join();
  }

  void run() {
    // The producer writes a third of the records at once, a third once c3 owns partitions
    // (so that it is sure to get records of its own), the rest once c2 is to crash (so that
    // c2 is sure to hold records when it dies). Each phase waits for the event it needs,
    // never for a time: on a loaded machine a rebalance may take seconds.
    producer_thread_ = std::thread([this] { produce(); });
    add("c0", ending::runs_to_the_end);
    auto& c1 = add("c1", ending::closes);
    auto& c2 = add("c2", ending::crashes);

    // c1 leaves once it has done some work, and c3 joins; then c2 crashes holding records.
    wait_until([&] { return c1.processed.load() > 0; }, 20s, "c1 processes records");
    c1.act_now = true;
    auto& c3 = add("c3", ending::runs_to_the_end);
    wait_until([&] { return c1.done.load(); }, 20s, "c1 closes");
    wait_until([&] { return c3.owned.load() > 0; }, 30s, "c3 is assigned partitions");
    produce_phase_ = 2;
    wait_until([&] { return c3.processed.load() > 0; }, 30s, "c3 processes records");
    c2.act_now = true;
    produce_phase_ = 3;
    wait_until([&] { return c2.done.load(); }, 20s, "c2 crashes");

    // Everything produced is processed and committed, and the crashed member is gone.
    producer_thread_.join();
    wait_until([&] { return caught_up(); }, 30s, "the group catches up");

    const auto stop_at = steady::now();
    for (auto& w : workers_) w->stop = true;
    for (auto& w : workers_) w->thread.join();
    const auto stop_took = steady::now() - stop_at;
    CHECK(stop_took < 5s);

    std::lock_guard lk(s_.mu);
    INFO(fmt::format("errors: {}", fmt::join(s_.errors, "; ")));
    CHECK(s_.errors.empty());
    REQUIRE(s_.produced.size() == static_cast<std::size_t>(records));
    std::size_t missing = 0, wrong = 0, again = 0;
    for (const auto& [k, v] : s_.produced) {
      auto it = s_.consumed.find(k);
      if (it == s_.consumed.end())
        ++missing;
      else if (it->second != v)
        ++wrong;
      else if (s_.times[k] > 1)
        ++again;
    }
    CHECK(missing == 0);
    CHECK(wrong == 0);
    CHECK(s_.consumed.size() == s_.produced.size());  // nothing that was not produced
    CHECK(c2.held_records_at_crash.load());
    for (const auto& k : s_.held_at_crash) CHECK(s_.consumed.count(k));  // what c2 held reached another member

    auto d = coord_->describe_group(group_id);
    REQUIRE(d);
    CHECK(d->members.empty());
    CHECK(d->state == group_state::empty);
    // At least: the first members; c1 leaving and c3 joining (perhaps one rebalance); c2 expiring; the end.
    CHECK(d->generation >= generation_id(4));
    WARN(fmt::format("{} records, {} processed more than once; generations: {} (highest with records {})", records,
                     again, d->generation, s_.max_generation));
  }

 private:
  worker& add(const std::string& name, ending how) {
    workers_.push_back(std::make_unique<worker>());
    worker& w = *workers_.back();
    w.name = name;
    w.how = how;
    w.thread = std::thread([this, &w] { consume(w); });
    return w;
  }

  template <typename Pred>
  void wait_until(Pred p, std::chrono::milliseconds limit, const char* what) {
    const auto end = steady::now() + limit;
    while (!p() && steady::now() < end) std::this_thread::sleep_for(2ms);
    INFO(what);
    REQUIRE(p());
  }

  void produce() {
    producer_config pc;
    pc.linger = 1ms;
    producer p(*dd_, pc);
    for (int i = 0; i < records; ++i) {
      const int phase = 1 + i * 3 / records;
      while (produce_phase_.load() < phase) std::this_thread::sleep_for(1ms);
      const std::string key = fmt::format("k{}", i % 97);
      const std::string value = fmt::format("v{}", i);
      producer_record r;
      r.topic = topic;
      r.key = nullable_bytes(key);
      r.value = nullable_bytes(value);
      p.send(r, [this, value](const result<record_metadata>& m) {
        if (!m) return s_.error("send: " + m.error().to_string());
        std::lock_guard lk(s_.mu);
        s_.produced[{static_cast<int>(m->partition.value()), m->offset.value()}] = value;
      });
      if (i % 20 == 19) std::this_thread::sleep_for(1ms);  // spread over the membership changes
    }
    if (auto r = p.flush(); !r) s_.error("flush: " + r.error().to_string());
    if (auto r = p.close(); !r) s_.error("close: " + r.error().to_string());
  }

  /// Every produced record processed, every partition committed up to its end, and no
  /// member left but the live ones.
  bool caught_up() {
    std::vector<topic_partition> tps;
    for (int p = 0; p < partitions; ++p) tps.push_back(topic_partition{topic, partition_id(p)});
    const auto committed = coord_->fetch_offsets(group_id, tps);
    for (const auto& tp : tps) {
      auto part = dd_->get_partition(tp.topic, tp.partition);
      if (!part) return false;
      auto it = committed.find(tp);
      if (it == committed.end() || it->second.off != (*part)->high_watermark()) return false;
    }
    {
      std::lock_guard lk(s_.mu);
      if (s_.produced.size() != static_cast<std::size_t>(records)) return false;
      for (const auto& [k, _] : s_.produced)
        if (!s_.consumed.count(k)) return false;
    }
    auto d = coord_->describe_group(group_id);
    std::size_t running = 0;
    for (const auto& w : workers_) running += !w->done.load();
    return d && d->state == group_state::stable && d->members.size() == running;
  }

  void consume(worker& w) {
    group_consumer_config cfg;
    cfg.group_id = group_id;
    cfg.client_id = w.name;
    cfg.enable_auto_commit = false;
    cfg.session_timeout = 300ms;
    cfg.heartbeat_interval = 50ms;
    cfg.max_poll_interval = 10s;
    cfg.assignors = assignors_;
    cfg.consumer.auto_offset_reset = offset_reset::earliest;
    cfg.consumer.fetch_max_wait = 5ms;
    cfg.consumer.max_poll_records = 64;
    group_consumer c(*dd_, *coord_, cfg);
    if (auto r = c.subscribe({topic}); !r) s_.error(w.name + " subscribe: " + r.error().to_string());
    // (generation, partition) -> last offset processed: in order, without gaps, per generation.
    std::map<std::pair<std::int32_t, int>, std::int64_t> last;
    const auto crash_deadline_unset = steady::time_point::max();
    auto crash_deadline = crash_deadline_unset;
    while (!w.stop.load()) {
      if (w.act_now.load() && w.how == ending::closes) break;
      if (w.act_now.load() && w.how == ending::crashes && crash_deadline == crash_deadline_unset)
        crash_deadline = steady::now() + 10s;  // crash holding records, or without after 10 s
      auto recs = c.poll(20ms);
      w.owned = c.assignment().size();
      if (!recs) {
        s_.error(w.name + " poll: " + recs.error().to_string());
        break;
      }
      if (crash_deadline != crash_deadline_unset && (!recs->empty() || steady::now() >= crash_deadline)) {
        w.held_records_at_crash = !recs->empty();
        {
          std::lock_guard lk(s_.mu);
          for (const auto& r : *recs)
            s_.held_at_crash.emplace(static_cast<int>(r.partition().value()), r.offset().value());
        }
        // Dies after the poll, before processing: no commit, no leave.
        (void)c.close({.leave_group = false, .commit_and_revoke = false});
        w.done = true;
        return;
      }
      if (recs->empty()) continue;
      const std::int32_t gen = c.group_metadata().generation.value();
      {
        std::lock_guard lk(s_.mu);
        s_.max_generation = std::max(s_.max_generation, gen);
        for (const auto& r : *recs) {
          const int p = static_cast<int>(r.partition().value());
          const std::int64_t off = r.offset().value();
          auto key = std::make_pair(gen, p);
          if (auto it = last.find(key); it != last.end() && off != it->second + 1)
            s_.errors.push_back(
                fmt::format("{} generation {} partition {}: offset {} after {}", w.name, gen, p, off, it->second));
          last[key] = off;
          s_.consumed.emplace(std::make_pair(p, off), r.value().to_string());
          ++s_.times[{p, off}];
        }
      }
      w.processed += static_cast<std::int64_t>(recs->size());
      if (auto r = c.commit_sync(); !r && r.error() != errc::rebalance_in_progress &&
                                    r.error() != errc::illegal_generation && r.error() != errc::unknown_member_id)
        s_.error(w.name + " commit: " + r.error().to_string());
    }
    if (auto r = c.close(); !r) s_.error(w.name + " close: " + r.error().to_string());
    w.done = true;
  }

  brook::test::scratch_dir dir_{"brook-group-threads"};
  std::unique_ptr<data_dir> dd_;
  std::unique_ptr<group_coordinator> coord_;
  std::vector<std::shared_ptr<assignor>> assignors_;
  shared_state s_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::thread producer_thread_;
  std::atomic<int> produce_phase_{1};
};

}  // namespace

TEST_CASE("group consumers on threads: joins, a close, a crash and a late join while a producer writes",
          "[group][consumer][threaded]") {
  SECTION("eager (range, then cooperative-sticky: the default list)") { scenario({}).run(); }
  SECTION("cooperative-sticky") { scenario({std::make_shared<cooperative_sticky_assignor>()}).run(); }
}

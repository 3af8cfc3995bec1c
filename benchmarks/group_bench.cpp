// Consumer groups.
//
// Assignors: one assignment for 100 members x 1,000 partitions (10 topics x 100 partitions,
// every member subscribed to every topic). Items processed = partitions assigned.
//   BM_Assign/<assignor>            fresh group, nobody owns anything
//   BM_AssignOneLeaves/<assignor>   sticky / cooperative-sticky: previous balanced
//                                   assignment, one member has left
//
// Rebalance latency, real threads and the system clock (coordinator.start() drives the
// timeouts): 10 group_consumer threads in a Stable group (default assignors: range, eager),
// subscribed to an idle 100-partition topic, each blocked in poll(1 s) as an idle consumer is.
//   BM_GroupRebalance/trigger:join    an 11th member starts (subscribe + poll)
//   BM_GroupRebalance/trigger:leave   that member close()s (commit, revoke, LeaveGroup)
// Timed (UseManualTime): from the trigger until every remaining member's rebalance
// listener has received its assignment of the same new generation (the group is Stable
// and every member knows it). Each iteration does both; the argument picks the half timed.
//   BM_RebalanceFloor/threads:N       the peer: N threads blocked on a futex are woken at
//                                     once, pass two std::barrier phases (join, sync) and
//                                     report to the timing thread through the same mutex +
//                                     condition variable: the floor of "every member wakes
//                                     and hands something over twice".
// Counters: p50_us, max_us over the iterations.
//
// Group consumption throughput: a topic of 8 partitions, pre-filled once per process with
// ~2 M records (the standard 16 KiB batches of 100-byte values, ~220 MiB), flushed, its
// mapping faulted in. Each iteration reads every record once; records/s.
//   BM_GroupConsume/consumers:K       K group_consumer threads of a fresh group id (auto-commit
//                                     on, Kafka's fetch defaults, earliest). The group forms
//                                     first with its partitions paused (form_ms counter,
//                                     untimed); timed: from resume to the last record.
//   BM_ConsumeAssigned/threads:K      the peer: K brook::consumer threads, partitions assigned
//                                     by hand (p % K), same settings, same loop, no group.
//   BM_Memcpy/group_topic_from_log_mapping
//                                     the floor: one thread memcpys the same bytes, read
//                                     through the same mappings, in 1 MiB chunks
//                                     (max.partition.fetch.bytes) into one 1 MiB buffer.
// Every consumer thread touches each record's key and value size and offset; a run ends
// when every partition's last offset has been returned (after 60 s it fails: a lost record).
// Counters: cpu_ns_per_rec, CPU time of the whole process (getrusage) during the timed
// part per record, the figure that survives a busy machine. The machine has 2 cores:
// K = 4 oversubscribes it.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <brook/client/consumer.hpp>
#include <brook/group/cooperative_sticky_assignor.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/group/range_assignor.hpp>
#include <brook/group/round_robin_assignor.hpp>
#include <brook/group/sticky_assignor.hpp>
#include <brook/storage/data_dir.hpp>

#include "bench_support.hpp"

namespace {

constexpr int kMembers = 100;
constexpr int kTopics = 10;
constexpr int kPartitionsPerTopic = 100;

std::map<std::string, std::int32_t> bench_topics() {
  std::map<std::string, std::int32_t> out;
  for (int t = 0; t < kTopics; ++t) out[fmt::format("topic-{}", t)] = kPartitionsPerTopic;
  return out;
}

std::vector<brook::member_subscription> bench_members(const std::map<std::string, std::int32_t>& topics) {
  std::vector<brook::member_subscription> out(kMembers);
  for (int i = 0; i < kMembers; ++i) {
    out[static_cast<std::size_t>(i)].member_id =
        fmt::format("consumer-{}-{:08x}", i, static_cast<unsigned>(i) * 2654435761u);
    for (const auto& [t, n] : topics) out[static_cast<std::size_t>(i)].topics.push_back(t);
  }
  return out;
}

std::unique_ptr<brook::assignor> make(int which) {
  switch (which) {
    case 0: return std::make_unique<brook::range_assignor>();
    case 1: return std::make_unique<brook::round_robin_assignor>();
    case 2: return std::make_unique<brook::sticky_assignor>();
    default: return std::make_unique<brook::cooperative_sticky_assignor>();
  }
}

void BM_Assign(benchmark::State& state) {
  auto a = make(static_cast<int>(state.range(0)));
  state.SetLabel(std::string(a->name()));
  const auto topics = bench_topics();
  const auto members = bench_members(topics);
  for (auto _ : state) benchmark::DoNotOptimize(a->assign(topics, members));
  state.SetItemsProcessed(state.iterations() * kTopics * kPartitionsPerTopic);
}
BENCHMARK(BM_Assign)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

void BM_AssignOneLeaves(benchmark::State& state) {
  auto a = make(static_cast<int>(state.range(0)));
  state.SetLabel(std::string(a->name()));
  const auto topics = bench_topics();
  auto members = bench_members(topics);
  const auto previous = brook::sticky_assignor{}.assign(topics, members);
  for (auto& m : members) m.owned_partitions = previous.at(m.member_id), m.generation = 1;
  members.erase(members.begin() + kMembers / 2);
  for (auto _ : state) benchmark::DoNotOptimize(a->assign(topics, members));
  state.SetItemsProcessed(state.iterations() * kTopics * kPartitionsPerTopic);
}
BENCHMARK(BM_AssignOneLeaves)->DenseRange(2, 3)->Unit(benchmark::kMicrosecond);

// ------------------------------------------------------------------ rebalance latency

using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kGroupMembers = 10;
constexpr int kRebalancePartitions = 100;
constexpr int kRebalanceIterations = 100;

double micros(steady::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

/// CPU time (user + system) of the whole process, every thread, in microseconds.
double process_cpu_us() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto us = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) * 1e6 + static_cast<double>(tv.tv_usec); };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

/// Latency counters over one run's samples (microseconds).
void report_samples(benchmark::State& state, std::vector<double> us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["max_us"] = us.back();
}

/// Where members report the generation of every assignment they receive; the timing
/// thread waits on it. Thread-safety: all members thread-safe.
class generation_board {
 public:
  void report(int slot, std::int32_t generation) {
    {
      std::lock_guard lk(mu_);
      generations_[slot] = generation;
    }
    cv_.notify_all();
  }
  void remove(int slot) {
    std::lock_guard lk(mu_);
    generations_.erase(slot);
  }
  /// Waits until exactly `n` members have reported, all the same generation, above
  /// `after`; returns it, or -1 after 10 s.
  std::int32_t wait_settled(std::size_t n, std::int32_t after) {
    std::unique_lock lk(mu_);
    auto settled = [&] {
      if (generations_.size() != n) return false;
      const std::int32_t g = generations_.begin()->second;
      return g > after &&
             std::all_of(generations_.begin(), generations_.end(), [&](const auto& kv) { return kv.second == g; });
    };
    if (!cv_.wait_for(lk, 10s, settled)) return -1;
    return generations_.begin()->second;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, std::int32_t> generations_;
};

/// A data directory with an idle topic and a running coordinator.
struct group_fixture {
  brook::bench::scratch_dir dir;
  std::unique_ptr<brook::data_dir> dd;
  std::unique_ptr<brook::group_coordinator> coord;

  group_fixture(const std::string& topic, std::int32_t partitions) {
    auto d = brook::data_dir::open(dir.path());
    if (!d) throw std::runtime_error(d.error().to_string());
    dd = std::move(*d);
    brook::topic_config tc;
    tc.partitions = partitions;
    if (auto r = dd->create_topic(topic, tc); !r) throw std::runtime_error(r.error().to_string());
    brook::coordinator_config cc;
    cc.offsets_topic_num_partitions = 1;  // one group: creating Kafka's 50 only slows the setup
    cc.group_initial_rebalance_delay = 0ms;
    auto c = brook::group_coordinator::open(*dd, cc);
    if (!c) throw std::runtime_error(c.error().to_string());
    coord = std::move(*c);
    coord->start();
  }
  ~group_fixture() { coord->stop(); }
};

/// One group member on its own thread, polling until stopped; its rebalance listener
/// reports each assignment's generation to the board.
class bench_member : public brook::rebalance_listener {
 public:
  bench_member(group_fixture& f, generation_board& board, int slot, const std::string& group, const std::string& topic)
      : board_(board), slot_(slot), consumer_(*f.dd, *f.coord, config(group)) {
    thread_ = std::thread([this, topic] {
      go_.wait(false);
      if (!consumer_.subscribe({topic}, this)) failed_ = true;
      while (!stop_ && !failed_) {
        auto r = consumer_.poll(1s);
        if (!r && r.error() != brook::errc::wakeup) failed_ = true;
      }
      if (!consumer_.close()) failed_ = true;
    });
  }
  ~bench_member() override {
    request_stop();
    join();
  }
  void start() {
    go_ = true;
    go_.notify_one();
  }
  void request_stop() {
    stop_ = true;
    consumer_.wakeup();  // thread-safe; interrupts the poll
    start();
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  bool failed() const { return failed_; }

  void on_partitions_revoked(const std::vector<brook::topic_partition>&) override {}
  void on_partitions_assigned(const std::vector<brook::topic_partition>&) override {
    board_.report(slot_, consumer_.group_metadata().generation.value());
  }

 private:
  static brook::group_consumer_config config(const std::string& group) {
    brook::group_consumer_config c;
    c.group_id = group;
    c.consumer.auto_offset_reset = brook::offset_reset::earliest;
    return c;
  }
  generation_board& board_;
  int slot_;
  brook::group_consumer consumer_;
  std::atomic<bool> go_{false}, stop_{false}, failed_{false};
  std::thread thread_;
};

void BM_GroupRebalance(benchmark::State& state, bool time_join) {
  const std::string topic = "rebalance", group = "g";
  group_fixture f(topic, kRebalancePartitions);
  generation_board board;
  std::vector<std::unique_ptr<bench_member>> members;
  for (int i = 0; i < kGroupMembers; ++i) {
    members.push_back(std::make_unique<bench_member>(f, board, i, group, topic));
    members.back()->start();
  }
  std::int32_t gen = board.wait_settled(kGroupMembers, -1);
  if (gen < 0) return state.SkipWithError("the group did not form");
  std::vector<double> samples;
  double cpu_us = 0;
  for (auto _ : state) {
    bench_member extra(f, board, kGroupMembers, group, topic);
    const double c0 = process_cpu_us();
    const auto t0 = steady::now();
    extra.start();
    gen = board.wait_settled(kGroupMembers + 1, gen);
    const auto t1 = steady::now();
    const double c1 = process_cpu_us();
    if (gen < 0) return state.SkipWithError("no new generation after the join");
    board.remove(kGroupMembers);
    const double c2 = process_cpu_us();
    const auto t2 = steady::now();
    extra.request_stop();
    gen = board.wait_settled(kGroupMembers, gen);
    const auto t3 = steady::now();
    const double c3 = process_cpu_us();
    if (gen < 0) return state.SkipWithError("no new generation after the leave");
    extra.join();
    const auto took = time_join ? t1 - t0 : t3 - t2;
    state.SetIterationTime(std::chrono::duration<double>(took).count());
    samples.push_back(micros(took));
    cpu_us += time_join ? c1 - c0 : c3 - c2;
  }
  members.clear();
  report_samples(state, samples);
  state.counters["cpu_us"] = benchmark::Counter(cpu_us, benchmark::Counter::kAvgIterations);
}
BENCHMARK_CAPTURE(BM_GroupRebalance, trigger
                  : join, true)
    ->Iterations(kRebalanceIterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GroupRebalance, trigger
                  : leave, false)
    ->Iterations(kRebalanceIterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

/// The peer: N threads wait on a futex (atomic wait); each round the timing thread bumps
/// it and wakes them all; each passes two barrier phases and reports to the board.
void BM_RebalanceFloor(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  generation_board board;
  std::atomic<std::int32_t> round{0};
  std::atomic<bool> stop{false};
  std::barrier join_phase(n), sync_phase(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      for (std::int32_t seen = 0;;) {
        round.wait(seen);
        seen = round.load();
        if (stop) return;
        join_phase.arrive_and_wait();
        sync_phase.arrive_and_wait();
        board.report(i, seen);
      }
    });
  std::vector<double> samples;
  double cpu_us = 0;
  std::int32_t r = 0;
  for (auto _ : state) {
    const double c0 = process_cpu_us();
    const auto t0 = steady::now();
    round.store(++r);
    round.notify_all();
    if (board.wait_settled(static_cast<std::size_t>(n), r - 1) != r) return state.SkipWithError("lost a round");
    const auto took = steady::now() - t0;
    cpu_us += process_cpu_us() - c0;
    state.SetIterationTime(std::chrono::duration<double>(took).count());
    samples.push_back(micros(took));
  }
  state.counters["cpu_us"] = benchmark::Counter(cpu_us, benchmark::Counter::kAvgIterations);
  stop = true;
  round.store(++r);
  round.notify_all();
  for (auto& t : threads) t.join();
  report_samples(state, samples);
}
BENCHMARK(BM_RebalanceFloor)
    ->ArgName("threads")
    ->Arg(kGroupMembers)
    ->Arg(kGroupMembers + 1)
    ->Iterations(kRebalanceIterations)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// ------------------------------------------------------------------ group consumption throughput

constexpr std::int32_t kConsumePartitions = 8;
constexpr std::int64_t kConsumeRecords = 2'000'000;
const std::string kConsumeTopic = "consume";

/// The pre-filled 8-partition topic every consumption benchmark reads; built on first use,
/// flushed, its mapping faulted in, removed at exit.
struct consume_topic {
  group_fixture f{kConsumeTopic, kConsumePartitions};
  std::int64_t records = 0;
  std::uint64_t bytes = 0;
  std::vector<std::int64_t> end;  // per partition: the high watermark
  int next_group = 0;

  consume_topic() {
    auto batch = brook::bench::standard_batch(0);
    for (std::int32_t p = 0; records < kConsumeRecords; p = (p + 1) % kConsumePartitions) {
      auto a = part(p).append(batch);
      if (!a) throw std::runtime_error(a.error().to_string());
      records += static_cast<std::int64_t>(a->records);
      bytes += a->bytes;
    }
    for (std::int32_t p = 0; p < kConsumePartitions; ++p) {
      if (auto r = part(p).log().flush(); !r) throw std::runtime_error(r.error().to_string());
      end.push_back(part(p).high_watermark().value());
      std::uint64_t sum = 0;
      auto all = whole(p);
      for (std::size_t i = 0; i < all.size(); i += 4096) sum += static_cast<std::uint8_t>(all[i]);
      benchmark::DoNotOptimize(sum);
    }
  }
  brook::partition& part(std::int32_t p) const { return **f.dd->get_partition(kConsumeTopic, brook::partition_id(p)); }
  /// Every byte of partition p through one slice (each partition is one segment).
  std::span<const std::byte> whole(std::int32_t p) {
    brook::read_options ro;
    ro.max_bytes = std::numeric_limits<std::size_t>::max();
    auto s = part(p).read(brook::offset(0), ro);
    if (!s) throw std::runtime_error(s.error().to_string());
    keep.resize(kConsumePartitions);
    keep[static_cast<std::size_t>(p)] = *s;
    return keep[static_cast<std::size_t>(p)].bytes();
  }
  std::vector<brook::log_slice> keep;
};

consume_topic& the_consume_topic() {
  static consume_topic t;
  return t;
}

/// Progress shared by the consumer threads of one run: the next offset reached in each
/// partition; `done` counts the partitions read to their end.
struct consume_progress {
  explicit consume_progress(const std::vector<std::int64_t>& end) : end_(end), next_(end.size()) {}
  /// Called after each poll with what it returned.
  void add(const brook::consumer_records& recs, std::int64_t& payload) {
    std::int64_t reached[kConsumePartitions] = {};
    for (const auto& r : recs) {
      payload += static_cast<std::int64_t>(r.key().size() + r.value().size());
      reached[r.partition().value()] = r.offset().value() + 1;
    }
    for (std::size_t p = 0; p < end_.size(); ++p) {
      if (reached[p] == 0) continue;
      std::int64_t cur = next_[p].load();
      while (cur < reached[p] && !next_[p].compare_exchange_weak(cur, reached[p])) {
      }
      if (cur < end_[p] && reached[p] >= end_[p]) {
        {
          std::lock_guard lk(mu_);
          ++done_;
        }
        cv_.notify_all();
      }
    }
  }
  bool all_done() const { return done_.load() == static_cast<int>(end_.size()); }
  /// false if some partition was not read to its end within 60 s (a lost record).
  bool wait_all_done() {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, 60s, [&] { return all_done(); });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<int> done_{0};
  const std::vector<std::int64_t>& end_;
  std::vector<std::atomic<std::int64_t>> next_;
};

/// Records/s and bytes/s against the manual (wall) time; cpu_ns_per_rec: CPU time of the
/// whole process during the timed parts, per record.
void set_consume_counters(benchmark::State& state, const consume_topic& t, double cpu_us) {
  state.SetItemsProcessed(state.iterations() * t.records);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(t.bytes));
  state.counters["cpu_ns_per_rec"] =
      cpu_us * 1e3 / (static_cast<double>(state.iterations()) * static_cast<double>(t.records));
}

/// A group member that keeps its partitions paused until go, then reads until told to stop.
class consume_member : public brook::rebalance_listener {
 public:
  consume_member(consume_topic& t, generation_board& board, consume_progress& progress, int slot,
                 const std::string& group)
      : board_(board), progress_(progress), slot_(slot), consumer_(*t.f.dd, *t.f.coord, config(group)) {
    thread_ = std::thread([this] {
      if (!consumer_.subscribe({kConsumeTopic}, this)) failed_ = true;
      std::int64_t payload = 0;
      bool resumed = false;
      while (!stop_ && !failed_) {
        if (go_ && !resumed) {
          consumer_.resume(consumer_.assignment());
          resumed = true;
        }
        auto r = consumer_.poll(1s);
        if (!r) {
          if (r.error() != brook::errc::wakeup) failed_ = true;
          continue;
        }
        progress_.add(*r, payload);
      }
      benchmark::DoNotOptimize(payload);
      if (!consumer_.close()) failed_ = true;
    });
  }
  ~consume_member() override {
    stop();
    if (thread_.joinable()) thread_.join();
  }
  void go() {
    go_ = true;
    consumer_.wakeup();
  }
  void stop() {
    stop_ = true;
    consumer_.wakeup();
  }
  bool failed() const { return failed_; }

  void on_partitions_revoked(const std::vector<brook::topic_partition>&) override {}
  void on_partitions_assigned(const std::vector<brook::topic_partition>& added) override {
    if (!go_) consumer_.pause(added);
    board_.report(slot_, consumer_.group_metadata().generation.value());
  }

 private:
  static brook::group_consumer_config config(const std::string& group) {
    brook::group_consumer_config c;
    c.group_id = group;
    c.consumer.auto_offset_reset = brook::offset_reset::earliest;
    return c;
  }
  generation_board& board_;
  consume_progress& progress_;
  int slot_;
  brook::group_consumer consumer_;
  std::atomic<bool> go_{false}, stop_{false}, failed_{false};
  std::thread thread_;
};

void BM_GroupConsume(benchmark::State& state) {
  auto& t = the_consume_topic();
  const int k = static_cast<int>(state.range(0));
  double form_ms = 0, cpu_us = 0;
  for (auto _ : state) {
    consume_progress progress(t.end);
    generation_board board;
    const std::string group = fmt::format("consume-{}", t.next_group++);
    std::vector<std::unique_ptr<consume_member>> members;
    const auto t0 = steady::now();
    for (int i = 0; i < k; ++i) members.push_back(std::make_unique<consume_member>(t, board, progress, i, group));
    if (board.wait_settled(static_cast<std::size_t>(k), -1) < 0) return state.SkipWithError("the group did not form");
    const double c1 = process_cpu_us();
    const auto t1 = steady::now();
    for (auto& m : members) m->go();
    bool failed = !progress.wait_all_done();
    const auto t2 = steady::now();
    cpu_us += process_cpu_us() - c1;
    for (auto& m : members) m->stop();
    for (auto& m : members) failed |= m->failed();
    members.clear();
    if (failed) return state.SkipWithError("a group member failed or a record was not delivered");
    state.SetIterationTime(std::chrono::duration<double>(t2 - t1).count());
    form_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
  }
  set_consume_counters(state, t, cpu_us);
  state.counters["form_ms"] = benchmark::Counter(form_ms, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_GroupConsume)
    ->ArgName("consumers")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_ConsumeAssigned(benchmark::State& state) {
  auto& t = the_consume_topic();
  const int k = static_cast<int>(state.range(0));
  double cpu_us = 0;
  for (auto _ : state) {
    consume_progress progress(t.end);
    std::atomic<bool> go{false}, failed{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < k; ++i)
      threads.emplace_back([&, i] {
        brook::consumer_config cc;
        cc.auto_offset_reset = brook::offset_reset::earliest;
        brook::consumer c(*t.f.dd, cc);
        std::vector<brook::topic_partition> mine;
        for (int p = i; p < kConsumePartitions; p += k) mine.push_back({kConsumeTopic, brook::partition_id(p)});
        if (!c.assign(mine)) failed = true;
        std::int64_t payload = 0;
        go.wait(false);
        while (!failed && !progress.all_done()) {
          auto r = c.poll(100ms);
          if (!r)
            failed = true;
          else
            progress.add(*r, payload);
        }
        benchmark::DoNotOptimize(payload);
      });
    const double c0 = process_cpu_us();
    const auto t0 = steady::now();
    go = true;
    go.notify_all();
    if (!failed && !progress.wait_all_done()) failed = true;
    const auto t1 = steady::now();
    cpu_us += process_cpu_us() - c0;
    for (auto& th : threads) th.join();
    if (failed) return state.SkipWithError("a consumer failed or a record was not delivered");
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  set_consume_counters(state, t, cpu_us);
}
BENCHMARK(BM_ConsumeAssigned)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_MemcpyGroupTopic(benchmark::State& state) {
  auto& t = the_consume_topic();
  constexpr std::size_t chunk = 1024 * 1024;
  std::vector<std::byte> dst(chunk);
  const double c0 = process_cpu_us();
  for (auto _ : state) {
    for (std::int32_t p = 0; p < kConsumePartitions; ++p) {
      auto src = t.whole(p);
      for (std::size_t pos = 0; pos < src.size(); pos += chunk) {
        std::memcpy(dst.data(), src.data() + pos, std::min(chunk, src.size() - pos));
        benchmark::ClobberMemory();
      }
    }
  }
  set_consume_counters(state, t, process_cpu_us() - c0);
}
BENCHMARK(BM_MemcpyGroupTopic)->Name("BM_Memcpy/group_topic_from_log_mapping")->Unit(benchmark::kMillisecond);

}  // namespace

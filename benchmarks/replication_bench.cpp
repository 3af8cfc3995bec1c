// Replication benchmarks: a 3-broker in-process cluster (replication/cluster.hpp) on its
// threads (cluster::start(): one fetcher thread per broker, one control thread, the system
// clock), next to its peers in the same binary and the same run.
//
//   BM_ReplProduce/<fs>/<size>B/acks=<a>
//       brook::producer -> cluster_target -> the leaders of a 3-partition topic with
//       replication factor 3 (each broker leads one partition, follows the other two),
//       min.insync.replicas = 2; acks 0, 1 and all. One iteration = N send()s + flush().
//   BM_Rf1Produce/<fs>/<size>B                                        (peer: no replication)
//       the same producer and records into one data directory (producer(data_dir&)) with a
//       3-partition topic: what the cluster costs over a single replica.
//   BM_PwriteX3/<fs>/<size>B                                          (floor: the bytes)
//       the batches the producer builds (batch.size 16384, the same records), each written
//       with pwrite at the end of three files, one per replica, by one thread: the page
//       cache work of three replicas without any of brook.
//
//   BM_Failover/<fs>/<how>
//       a cluster with broker.session.timeout.ms 500 and broker.heartbeat.interval.ms 100
//       (control thread every 50 ms), one partition with 3 replicas, min.insync.replicas 2,
//       its leader removed by stop_broker (controlled shutdown: fenced at once) or
//       testing::crash_broker(crash_mode::process) (found by the session timeout), at a different
//       phase of the heartbeat cycle in each iteration. Timed: from the stop/crash call to the
//       first acks=all produce acknowledged while the controller's image names a new leader.
//       A client thread produces from the moment of the call, retrying every 1 ms (a failed
//       attempt answers at once: the old leader is unreachable, or the new one does not lead
//       yet); a watcher thread notes when the image changes. Counters (medians over the
//       iterations, ms): call_ms (the stop/crash call itself), elected_ms (until the image
//       names a new leader), after_election_ms (from there to the acknowledgement),
//       failover_ms (the timed figure; also its min and max), session_timeout_ms (the floor
//       of crash detection), attempts (produce attempts per failover).
//
// <fs> is the medium of the brokers' directories: tmpfs = /dev/shm (memory; no disk at all),
// disk = $BROOK_BENCH_DIR or /tmp (ext4 on the virtual disk; page cache, no fsync in the
// produce path; the metadata log and checkpoints do fsync). Each iteration uses a fresh
// directory, removed afterwards; logs are dropped without flushing (brokers and data
// directories crashed through brook/testing/crash.hpp: their disks stop before they close),
// so no run leaves writeback behind.
//
// Produce figures are wall time (UseManualTime: the work is spread over the producer's two
// threads and the cluster's four) and count value bytes. Counters:
//   cpu_ns_per_rec        CPU time of the whole process (every thread) per record, send()s +
//                         flush(): the figure that survives a busy machine
//   replicated_ms         acks 0/1: wall time until every high watermark reached the log end
//                         (waited for, untimed, after the flush); acks=all: the timed figure
//   repl_cpu_ns_per_rec   process CPU per record up to that point
//   notifies_per_batch    bumps of the cluster's data notifier per batch appended (produce
//                         calls, fetch rounds that moved bytes, high-watermark moves on any
//                         replica, metadata applied); each wakes every waiting fetcher
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <brook/client/producer.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/replication/cluster.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/testing/crash.hpp>

#include "bench_support.hpp"

namespace {

using namespace brook;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

const std::string topic = "bench";
constexpr std::int32_t produce_partitions = 3;
constexpr std::int32_t replication_factor = 3;
constexpr std::int32_t min_isr = 2;

enum class medium { tmpfs, disk };
const char* name_of(medium m) { return m == medium::tmpfs ? "tmpfs" : "disk"; }
fs::path root_of(medium m) { return m == medium::tmpfs ? fs::path("/dev/shm") : bench::bench_root(); }

/// Records per iteration: 100 MB of values at 100 B, ~100 MB at 1 KiB (x3 replicas).
std::int64_t records_for(std::size_t value_size) { return value_size <= 100 ? 1'000'000 : 100'000; }

double process_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}
double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

/// A fresh `brook-repl-XXXXXX` directory under `root`, removed with its contents.
class scratch {
 public:
  explicit scratch(const fs::path& root) {
    std::string tmpl = (root / "brook-repl-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path_ = tmpl;
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

/// The producer settings of every produce benchmark: Kafka's defaults (batch.size 16384,
/// linger.ms 5, buffer.memory 32 MiB, request.timeout.ms 30000) but acks.
producer_config producer_settings(acks_mode acks) {
  producer_config pc;
  pc.acks = acks;
  return pc;
}

/// One produce run: wall time of the send()s + flush(), and where it started.
struct produce_run {
  double seconds = 0;
  steady::time_point start;
  double cpu_start = 0;  ///< process CPU seconds at the start
  double cpu = 0;        ///< process CPU seconds of the send()s + flush()
};

/// Sends n records (null key, `value`) through a fresh producer on `target` and flushes.
/// Counts failed callbacks in `errors` and adds the process CPU time to `cpu_seconds`.
produce_run timed_produce(produce_target& target, acks_mode acks, std::int64_t n, const std::vector<std::byte>& value,
                          std::int64_t& errors, double& cpu_seconds) {
  producer prod(target, producer_settings(acks));
  std::atomic<std::int64_t> failed{0};
  std::atomic<std::int64_t>* fp = &failed;
  producer_record rec;
  rec.topic = topic;
  rec.value = nullable_bytes(value);
  produce_run run;
  run.cpu_start = process_cpu_seconds();
  run.start = steady::now();
  for (std::int64_t i = 0; i < n; ++i)
    prod.send(rec, [fp](const result<record_metadata>& md) {
      if (!md) fp->fetch_add(1, std::memory_order_relaxed);
    });
  (void)prod.flush();
  run.seconds = seconds_since(run.start);
  run.cpu = process_cpu_seconds() - run.cpu_start;
  cpu_seconds += run.cpu;
  (void)prod.close();
  errors += failed.load();
  return run;
}

void report_rates(benchmark::State& state, std::int64_t n, std::size_t value_size, double cpu_seconds) {
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<std::int64_t>(value_size));
  state.counters["cpu_ns_per_rec"] = cpu_seconds * 1e9 / static_cast<double>(state.iterations() * n);
}

/// The brokers' disks (brook/testing/crash.hpp): crashing a broker writes nothing more.
brook::testing::broker_disks& disks() {
  static brook::testing::broker_disks d;
  return d;
}

std::unique_ptr<cluster> open_cluster(const fs::path& root, cluster_config cfg) {
  cfg.broker_files = disks().hook();
  auto c = cluster::open(root, std::move(cfg));
  if (!c) throw std::runtime_error("cluster::open: " + c.error().to_string());
  return std::move(*c);
}

/// Ends a cluster without flushing its logs (the bytes are dropped with the directory).
void drop_cluster(std::unique_ptr<cluster>& c) {
  c->stop();
  for (auto id : c->config().broker_ids)
    if (c->running(id)) (void)brook::testing::crash_broker(*c, disks(), id, brook::testing::crash_mode::process);
  (void)c->close();
  c.reset();
}

/// Batches in the leaders' logs (the producer's batches: one per produce call).
std::int64_t leader_batches(const cluster& c) {
  std::int64_t n = 0;
  for (const auto& pv : c.describe()) {
    auto b = pv.state.has_leader() ? c.broker(pv.state.leader) : nullptr;
    auto r = b ? b->replica(pv.topic, pv.partition) : nullptr;
    if (!r) continue;
    for (offset at = r->log_start_offset(); at < r->log_end_offset();) {
      auto s = r->part()->log().read(at);
      if (!s || s->empty()) break;
      auto k = s->for_each_batch([](const auto&) {}, batch_check{.crc = false, .records = false});
      if (!k) break;
      n += static_cast<std::int64_t>(*k);
      at = s->next_offset();
    }
  }
  return n;
}

// ------------------------------------------------------------------ produce throughput

void BM_ReplProduce(benchmark::State& state, medium m, std::size_t value_size, acks_mode acks) {
  const std::int64_t n = records_for(value_size);
  const auto value = bench::make_value(value_size);
  double cpu = 0, notifies = 0, batches = 0, replicated = 0, replicated_cpu = 0;
  std::int64_t errors = 0;
  for (auto _ : state) {
    scratch dir(root_of(m));
    cluster_config cfg;
    cfg.broker.min_insync_replicas = min_isr;
    auto c = open_cluster(dir.path(), cfg);
    if (auto r = c->create_topic(topic, produce_partitions, replication_factor); !r)
      return state.SkipWithError(("create_topic: " + r.error().to_string()).c_str());
    c->start();
    cluster_target target(*c);
    const auto seq0 = c->data_notifier().sequence();
    const auto run = timed_produce(target, acks, n, value, errors, cpu);
    state.SetIterationTime(run.seconds);
    // Every record is in its leader's log; with acks=all, also below the high watermark.
    // With acks 0/1 the followers may still be copying: wait (untimed) until every high
    // watermark reaches the log end, and note when.
    auto sums = [&] {
      std::pair<std::int64_t, std::int64_t> leo_hw{0, 0};
      for (const auto& p : c->describe()) {
        leo_hw.first += p.log_end_offset.value_or(offset(0)).value();
        leo_hw.second += p.high_watermark.value_or(offset(0)).value();
      }
      return leo_hw;
    };
    auto [leo, hw] = sums();
    if (acks != acks_mode::all) {
      while (hw < n && seconds_since(run.start) < run.seconds + 30) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        std::tie(leo, hw) = sums();
      }
      replicated += seconds_since(run.start);
      replicated_cpu += process_cpu_seconds() - run.cpu_start;
    } else {
      replicated += run.seconds;
      replicated_cpu += run.cpu;
    }
    notifies += static_cast<double>(c->data_notifier().sequence() - seq0);
    batches += static_cast<double>(leader_batches(*c));
    drop_cluster(c);
    if (errors != 0) return state.SkipWithError("a send failed");
    if (leo != n) return state.SkipWithError(fmt::format("leaders hold {} records, not {}", leo, n).c_str());
    if (hw != n) return state.SkipWithError(fmt::format("high watermarks sum to {}, not {}", hw, n).c_str());
  }
  report_rates(state, n, value_size, cpu);
  const double its = static_cast<double>(state.iterations());
  state.counters["replicated_ms"] = replicated * 1e3 / its;
  state.counters["repl_cpu_ns_per_rec"] = replicated_cpu * 1e9 / (its * static_cast<double>(n));
  if (batches > 0) state.counters["notifies_per_batch"] = notifies / batches;
}

void BM_Rf1Produce(benchmark::State& state, medium m, std::size_t value_size) {
  const std::int64_t n = records_for(value_size);
  const auto value = bench::make_value(value_size);
  double cpu = 0;
  std::int64_t errors = 0;
  for (auto _ : state) {
    scratch dir(root_of(m));
    auto disk = std::make_shared<brook::testing::faulty_file_system>();
    data_dir_options o;
    o.defaults.files = disk;
    auto d = data_dir::open(dir.path() / "data", o);
    if (!d) return state.SkipWithError(d.error().to_string().c_str());
    topic_config tc;
    tc.partitions = produce_partitions;
    if (auto r = (*d)->create_topic(topic, tc); !r) return state.SkipWithError(r.error().to_string().c_str());
    data_dir_target target(**d);
    state.SetIterationTime(timed_produce(target, acks_mode::leader, n, value, errors, cpu).seconds);
    std::int64_t leo = 0;
    for (std::int32_t p = 0; p < produce_partitions; ++p)
      if (auto part = (*d)->get_partition(topic, partition_id(p))) leo += (*part)->log_end_offset().value();
    brook::testing::crash_close(**d, *disk);  // nothing flushed: no writeback left behind
    if (errors != 0) return state.SkipWithError("a send failed");
    if (leo != n) return state.SkipWithError("records missing");
  }
  report_rates(state, n, value_size, cpu);
}

void BM_PwriteX3(benchmark::State& state, medium m, std::size_t value_size) {
  const std::int64_t n = records_for(value_size);
  const auto value = bench::make_value(value_size);
  // The producer's batch: records added while they fit in batch.size.
  record_batch_builder b;
  const std::size_t batch_size = producer_config{}.batch_size;
  std::int64_t per_batch = 0;
  const timestamp_ms ts = 1'700'000'000'000;
  for (;;) {
    const auto rs = record_batch_builder::record_size(0, static_cast<std::int32_t>(per_batch), nullable_bytes::null(),
                                                      nullable_bytes(value));
    if (per_batch > 0 && b.size_bytes() + rs > batch_size) break;
    b.append(ts, nullable_bytes::null(), nullable_bytes(value));
    ++per_batch;
  }
  const auto bytes = b.finish();
  const std::vector<std::byte> batch(bytes.begin(), bytes.end());
  const std::int64_t batches = (n + per_batch - 1) / per_batch;
  double cpu = 0;
  for (auto _ : state) {
    scratch dir(root_of(m));
    int fds[3];
    for (int i = 0; i < 3; ++i) {
      fds[i] =
          ::open((dir.path() / fmt::format("replica-{}.log", i)).c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
      if (fds[i] < 0) return state.SkipWithError("open failed");
    }
    const double cpu0 = process_cpu_seconds();
    const auto t0 = steady::now();
    off_t pos = 0;
    bool ok = true;
    for (std::int64_t k = 0; k < batches && ok; ++k) {
      for (int fd : fds) ok &= ::pwrite(fd, batch.data(), batch.size(), pos) == static_cast<ssize_t>(batch.size());
      pos += static_cast<off_t>(batch.size());
    }
    state.SetIterationTime(seconds_since(t0));
    cpu += process_cpu_seconds() - cpu0;
    for (int fd : fds) {
      (void)::ftruncate(fd, 0);  // dirty pages dropped, never written back
      ::close(fd);
    }
    if (!ok) return state.SkipWithError("pwrite failed");
  }
  report_rates(state, n, value_size, cpu);
  state.counters["records_per_batch"] = static_cast<double>(per_batch);
}

// ------------------------------------------------------------------ failover

constexpr std::int64_t session_timeout_ms = 500;
constexpr std::int64_t heartbeat_interval_ms = 100;

/// One acks=all produce of a 1-record batch to topic-0; waits up to `wait` for the answer.
result<append_result> produce_all(cluster& c, std::chrono::milliseconds wait) {
  static const auto value = bench::make_value(100);
  record_batch_builder b;
  b.append(c.now(), nullable_bytes::null(), nullable_bytes(value));
  auto bytes = b.finish();
  auto p = std::make_shared<std::promise<result<append_result>>>();
  auto f = p->get_future();
  c.produce(topic, brook::partition_id{0}, bytes, acks_mode::all, std::chrono::milliseconds(5000),
            [p](const result<append_result>& r) { p->set_value(r); });
  if (f.wait_for(wait) != std::future_status::ready) return make_error(errc::request_timed_out, "no answer");
  return f.get();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void BM_Failover(benchmark::State& state, medium m, bool crash) {
  std::vector<double> call_ms, elected_ms, failover_ms, after_ms;
  std::int64_t attempts = 0, iteration = 0;
  for (auto _ : state) {
    scratch dir(root_of(m));
    cluster_config cfg;
    cfg.broker.min_insync_replicas = min_isr;
    cfg.controller.broker_session_timeout = std::chrono::milliseconds(session_timeout_ms);
    cfg.broker_heartbeat_interval = std::chrono::milliseconds(heartbeat_interval_ms);
    auto c = open_cluster(dir.path(), cfg);
    if (auto r = c->create_topic(topic, 1, replication_factor); !r)
      return state.SkipWithError(("create_topic: " + r.error().to_string()).c_str());
    c->start();
    // Warm: acks=all works (every follower has fetched), and a bit of data is there.
    bool warm = false;
    for (int i = 0; i < 100 && !warm; ++i) warm = produce_all(*c, std::chrono::seconds(2)).has_value();
    if (!warm) return state.SkipWithError("acks=all never succeeded before the failover");
    // The failure falls at a different phase of the heartbeat cycle in each iteration.
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + (iteration++ * 61) % heartbeat_interval_ms));
    const brook::broker_id old = c->image()->partition(topic, brook::partition_id{0})->leader;
    auto new_leader = [&] {
      const auto* ps = c->image()->partition(topic, brook::partition_id{0});
      return ps->leader != old && ps->leader.value() >= 0;
    };

    // A client thread produces from t0 on, as an application would, every 1 ms until an
    // acks=all produce is acknowledged while the image names a new leader; a watcher notes
    // when the image changes. The main thread stops or crashes the leader at t0.
    std::atomic<bool> go{false}, give_up{false}, acknowledged{false};
    std::optional<steady::time_point> t_ok, t_elected;  // read after the joins
    std::int64_t tries = 0;
    std::thread client([&] {
      while (!go.load()) std::this_thread::yield();
      while (!give_up.load()) {
        ++tries;
        if (produce_all(*c, std::chrono::seconds(2)) && new_leader()) {
          t_ok = steady::now();
          acknowledged.store(true);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    std::thread watcher([&] {
      while (!go.load()) std::this_thread::yield();
      while (!give_up.load() && !new_leader()) std::this_thread::sleep_for(std::chrono::microseconds(100));
      if (!give_up.load()) t_elected = steady::now();
    });
    const auto t0 = steady::now();
    go.store(true);
    auto r = crash ? brook::testing::crash_broker(*c, disks(), old, brook::testing::crash_mode::process)
                   : c->stop_broker(old);
    const auto t_call = steady::now();
    if (!r) give_up.store(true);
    while (!acknowledged.load() && !give_up.load() && steady::now() - t0 < std::chrono::seconds(10))
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    give_up.store(true);
    client.join();
    watcher.join();
    attempts += tries;
    if (!r) return state.SkipWithError(("stop/crash: " + r.error().to_string()).c_str());
    if (!t_ok) return state.SkipWithError("no acks=all produce succeeded within 10 s of the failure");
    if (!t_elected) t_elected = t_ok;
    auto ms = [&](steady::time_point t) { return std::chrono::duration<double, std::milli>(t - t0).count(); };
    state.SetIterationTime(ms(*t_ok) / 1e3);
    call_ms.push_back(ms(t_call));
    elected_ms.push_back(ms(*t_elected));
    failover_ms.push_back(ms(*t_ok));
    after_ms.push_back(ms(*t_ok) - ms(*t_elected));
    drop_cluster(c);
  }
  state.counters["call_ms"] = median(call_ms);
  state.counters["elected_ms"] = median(elected_ms);
  state.counters["after_election_ms"] = median(after_ms);
  state.counters["failover_ms"] = median(failover_ms);
  state.counters["failover_min_ms"] =
      failover_ms.empty() ? 0 : *std::min_element(failover_ms.begin(), failover_ms.end());
  state.counters["failover_max_ms"] =
      failover_ms.empty() ? 0 : *std::max_element(failover_ms.begin(), failover_ms.end());
  state.counters["session_timeout_ms"] = static_cast<double>(session_timeout_ms);
  state.counters["attempts"] =
      static_cast<double>(attempts) / static_cast<double>(std::max<std::int64_t>(1, state.iterations()));
}

// ------------------------------------------------------------------ registration

const bool registered = [] {
  for (medium m : {medium::tmpfs, medium::disk}) {
    for (std::size_t size : {std::size_t{100}, std::size_t{1024}}) {
      const std::string suffix = fmt::format("{}/{}B", name_of(m), size);
      for (auto [acks, an] :
           {std::pair{acks_mode::none, "0"}, std::pair{acks_mode::leader, "1"}, std::pair{acks_mode::all, "all"}})
        benchmark::RegisterBenchmark(fmt::format("BM_ReplProduce/{}/acks={}", suffix, an).c_str(), BM_ReplProduce, m,
                                     size, acks)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(fmt::format("BM_Rf1Produce/{}", suffix).c_str(), BM_Rf1Produce, m, size)
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(fmt::format("BM_PwriteX3/{}", suffix).c_str(), BM_PwriteX3, m, size)
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  for (medium m : {medium::tmpfs, medium::disk}) {
    benchmark::RegisterBenchmark(fmt::format("BM_Failover/{}/stop_broker", name_of(m)).c_str(), BM_Failover, m, false)
        ->Iterations(10)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(fmt::format("BM_Failover/{}/crash_process", name_of(m)).c_str(), BM_Failover, m, true)
        ->Iterations(6)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace

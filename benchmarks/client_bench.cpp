// Client benchmarks: records moved from a producer thread to a consumer thread of the same
// process through a persisted topic, next to the same 100-byte payloads moved through
// in-memory queues (the floor of any hand-off between two threads).
//
//   BM_PubSub1P1C/rate:R/in_caller:C/spin_us:S
//                               producer thread -> 1-partition topic -> consumer thread.
//                               producer: acks=1, linger.ms=0; consumer: fetch.min.bytes=1,
//                               poll() in a loop. R = 0: as fast as possible; R = 100000:
//                               paced at 100k records/s (the latency figure). C: the
//                               producer's append_in_caller (0, the default; 1: an idle
//                               send() appends itself). S: the consumer's poll_spin in
//                               microseconds (0, the default: it sleeps at once; 50 or
//                               1000: it watches that long before sleeping. On the
//                               benchmark VM a wake-up from sleep can take a millisecond,
//                               and the paced producer thread stops for 50 us or more
//                               about 70-350 times in a 2 s run, a few times for milliseconds:
//                               see docs/benchmarks.md).
//   BM_PubSub1P1CLinger/linger_ms:L
//                               BM_PubSub1P1C/rate:0 with the producer's linger.ms at L = 5,
//                               Kafka 4.0's default: batches fill before the sender takes them.
//   BM_PubSubFloor              the floor of BM_PubSub1P1C/rate:0 in brook's storage, without
//                               the client layer: the producer thread builds batches of 100
//                               records (CreateTime read per record, CRC) with
//                               record_batch_builder and appends each to the partition itself
//                               (pwrite, index, high watermark, notifier); the consumer thread
//                               reads 1 MiB slices and walks them (CRC checked), sleeping on
//                               the directory's notifier when it finds nothing, as brook's
//                               consumer does by default. No send callback, no sender thread,
//                               no producer lock: what brook's storage path alone costs a
//                               record, at 100 records a batch.
//   BM_PubSubFloorSplit/batch_records:B/callbacks:C/lock:L
//                               BM_PubSubFloor with brook's three threads: the producer
//                               thread builds batches (B records each; B = 0: it hands its
//                               batch over whenever the appender has none left, as linger.ms
//                               0 does, or at 16 KiB) and passes each through a lock-free ring
//                               to an appender thread, which appends it and returns the
//                               builder through a second ring. 2,048 builders (as many 16 KiB
//                               batches as buffer.memory holds), reused. A side whose ring is
//                               empty sleeps on a futex and is woken only then. C = 1: each
//                               record carries a send_callback (kept beside the batch as
//                               brook's producer keeps it), which the appender calls with the
//                               record's metadata after the append. L = 1: the producer
//                               thread takes a mutex (brook's adaptive_mutex) around each
//                               record's append, as send() does; L = 2: and the appender takes
//                               it about twice a batch, as brook's sender does (to take the
//                               ready batches, and in release()), each time a lock and an
//                               unlock with nothing between (brook's sender holds it for its
//                               bookkeeping, so this is a lower bound). B, C, L = 0, 0, 0:
//                               what brook's thread structure costs with nothing between its
//                               threads but two rings and a futex; 0, 1, 2: the same with
//                               brook's per-record callback and mutex. app_sleeps_per_krec:
//                               the appender's sleeps.
//   BM_QueueBaseline/<queue>/rate:R
//                               the same payloads through moodycamel::ConcurrentQueue (consumer
//                               spins), moodycamel::BlockingConcurrentQueue (consumer sleeps
//                               when empty, as brook's consumer does) and
//                               boost::lockfree::spsc_queue (spins); 64 Ki slots each.
//   BM_PubSub4P4C/in_caller:C    4 producer threads (a producer each) -> 8-partition topic ->
//                               4 consumer threads (2 partitions assigned to each); producer
//                               p's record i goes to partition i % 8. Throughput only.
//   BM_QueueMesh4P4C/<queue>    its peer: 4 producer threads -> one moodycamel queue per
//                               consumer (its 2 partitions' records) -> 4 consumer threads;
//                               ConcurrentQueue (consumers spin) and BlockingConcurrentQueue.
//   BM_ProduceKeyed/linger_ms:L keyed records (10,000 keys, murmur2) to an 8-partition topic,
//                               send() in a loop then flush(); L = 0 and 5.
//   BM_ProduceBatchSize/linger_ms:L/batch_KiB:B
//                               BM_PubSub1P1C's producer alone (no consumer): unkeyed records
//                               to a 1-partition topic, send() in a loop then flush(), with
//                               batch.size at B KiB (16, Kafka's default; 64; 1024). With
//                               L = 5 batches fill to B before the sender takes them, so the
//                               rows differ in how many records share each batch: what a
//                               batch costs (the hand-off to the sender, its wake-up, the
//                               batch's bookkeeping, and a part that grows with its bytes) is
//                               the difference between them over each row's recs_per_batch.
//                               L = 0, B = 16: the sender takes whatever it finds each time
//                               it is free. Also prod_sys_ns: the producer thread's system
//                               (kernel) time a record.
//
// Every record's value is 100 bytes and starts with its send time (steady_clock ns) and a
// sequence number; the consumer checks the sequence and computes end-to-end latency, taking
// one clock reading per poll() (the moment the application holds the records). Counters:
//   p50_us p99_us p999_us max_us   end-to-end latency (send() call -> poll() return)
//   ack_p50_us ack_p99_us          send() call -> its callback (appended, high watermark moved);
//                                  paced runs only
//   cpu_ns_per_rec                 CPU time of the whole process (every thread) per record
//   prod_cpu_ns cons_cpu_ns        CPU time per record of the producer and consumer threads
//   rest_cpu_ns                    the rest: brook's sender thread (and the harness)
//   prod_sleeps_per_krec cons_sleeps_per_krec
//                                  voluntary context switches of the producer and consumer
//                                  threads per 1,000 records (a futex wait on a contended mutex
//                                  or a condition variable; the consumer's wait for records)
//   recs_per_batch                 records per batch in the log (BM_PubSub1P1C and its Linger
//                                  variant): how many records each append carried, counted
//                                  outside the timed part
//
// Times are wall clock, measured by hand from the start of sending to the last record
// consumed (UseManualTime): the work is spread over several threads, so one thread's CPU
// time says nothing. Each run uses a fresh data directory; its log is truncated to zero
// (dirty pages dropped, not written back) and removed at the end, outside the timed part.
//
// Pacing yields the producer thread's core (sched_yield) until the next record is due and
// then sends every record that is due: see send_paced for why it does not sleep. In paced
// runs prod_cpu_ns and cpu_ns_per_rec therefore count its yielding too (and
// prod_sleeps_per_krec, voluntary switches only, does not: a yield is an involuntary one).
#include <linux/futex.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <concurrentqueue/blockingconcurrentqueue.h>
#include <concurrentqueue/concurrentqueue.h>
#include <fmt/format.h>
#include <boost/lockfree/spsc_queue.hpp>

#include <brook/client/consumer.hpp>
#include <brook/client/producer.hpp>
#include <brook/core/adaptive_mutex.hpp>
#include <brook/core/clock.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/data_dir.hpp>

#include "bench_support.hpp"

namespace {

using namespace brook;
using steady = std::chrono::steady_clock;

/// Records per unpaced pub/sub run: ~55 MiB of log.
constexpr std::int64_t pubsub_records = 500'000;
/// Records per unpaced queue run (no disk; more records for a run long enough to time).
constexpr std::int64_t queue_records = 5'000'000;
/// Records per paced run: 2 s at 100k records/s.
constexpr std::int64_t paced_records = 200'000;
/// Records per keyed produce run: ~60 MiB of log.
constexpr std::int64_t keyed_records = 500'000;
constexpr std::int32_t keyed_partitions = 8;
constexpr int keyed_keys = 10'000;
/// The 4x4 runs: 4 producer threads, 4 consumer threads, 8 partitions (2 per consumer).
constexpr std::int32_t mesh_producers = 4;
constexpr std::int32_t mesh_consumers = 4;
constexpr std::int32_t mesh_partitions = 8;
/// Records per 4x4 run, over all producers: as many as a 1P1C run.
constexpr std::int64_t mesh_records = pubsub_records;
constexpr std::int64_t mesh_queue_records = queue_records;
static_assert(mesh_records % (mesh_producers * mesh_partitions) == 0 &&
              mesh_queue_records % (mesh_producers * mesh_partitions) == 0);
/// Slots of the in-memory queues.
constexpr std::size_t queue_slots = 64 * 1024;
const std::string topic = "bench";

std::int64_t now_ns() { return steady::now().time_since_epoch() / std::chrono::nanoseconds(1); }

double process_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// The calling thread's voluntary context switches so far: each one a sleep (a futex wait
/// on a contended mutex or a condition variable, or another blocking call).
double thread_sleeps() {
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  return static_cast<double>(ru.ru_nvcsw);
}

/// The calling thread's system (kernel) CPU time so far.
double thread_sys_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  return static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6;
}

/// CPU time per record: the whole process, the producer thread, the consumer thread, and
/// the rest (brook's sender thread; about zero for the queues). CPU time is what each
/// thread needs, whatever the other jobs on the machine do; the slowest thread bounds the
/// throughput an idle machine would give. Also how often the producer and consumer
/// threads slept, per 1,000 records.
struct cpu_split {
  double process = 0, producer = 0, consumer = 0;
  double producer_sleeps = 0, consumer_sleeps = 0;
  void report(benchmark::State& state, std::int64_t records) const {
    const double per = 1e9 / static_cast<double>(records);
    state.counters["cpu_ns_per_rec"] = process * per;
    state.counters["prod_cpu_ns"] = producer * per;
    state.counters["cons_cpu_ns"] = consumer * per;
    state.counters["rest_cpu_ns"] = (process - producer - consumer) * per;
    state.counters["prod_sleeps_per_krec"] = producer_sleeps * 1e3 / static_cast<double>(records);
    state.counters["cons_sleeps_per_krec"] = consumer_sleeps * 1e3 / static_cast<double>(records);
  }
};

/// The 100-byte value: send time, sequence number, then filler.
struct message {
  std::array<std::byte, bench::record_value_bytes> bytes;
};
static_assert(sizeof(message) == 100);

message make_message() {
  message m;
  auto v = bench::make_value(bench::record_value_bytes);
  std::memcpy(m.bytes.data(), v.data(), v.size());
  return m;
}
void stamp(std::byte* v, std::int64_t seq) {
  const std::int64_t t = now_ns();
  std::memcpy(v, &t, 8);
  std::memcpy(v + 8, &seq, 8);
}
std::int64_t sent_ns_of(const std::byte* v) {
  std::int64_t t;
  std::memcpy(&t, v, 8);
  return t;
}
/// A record of `topic` whose value is m's bytes (stamped again before each send).
producer_record record_of(message& m) {
  producer_record rec;
  rec.topic = topic;
  rec.value = nullable_bytes(m.bytes.data(), m.bytes.size());
  return rec;
}
std::int64_t seq_of(const std::byte* v) {
  std::int64_t s;
  std::memcpy(&s, v + 8, 8);
  return s;
}

/// Calls send(i) for i in [0, n): with rate 0 at once, else record i at start + i / rate.
/// Until the next record is due the thread yields its core (sched_yield in a loop), then it
/// sends every record that is due. It does not sleep: on the benchmark VM (docs/benchmarks.md,
/// "Pacing on the benchmark VM") a clock_nanosleep of 10 us costs about 20 us of CPU and
/// never gets to sleep, so a sleeping pacer held its core without yielding it, and a thread
/// woken meanwhile (brook's sender, a kernel worker) waited up to a scheduler slice
/// (milliseconds) for a core. Yielding hands the core at once to any thread runnable on it,
/// as a pacer that really slept would on a host where short sleeps are cheap.
template <typename Send>
void send_paced(std::int64_t n, std::int64_t rate, Send send) {
  if (rate == 0) {
    for (std::int64_t i = 0; i < n; ++i) send(i);
    return;
  }
  const std::int64_t start = now_ns(), interval = 1'000'000'000 / rate;
  for (std::int64_t i = 0; i < n;) {
    const std::int64_t due = start + i * interval;
    while (now_ns() < due) ::sched_yield();
    const std::int64_t now = now_ns();
    do send(i++);
    while (i < n && start + i * interval <= now);
  }
}

/// Latency samples across every iteration of a benchmark, reported as percentile counters.
class latencies {
 public:
  void reserve(std::size_t n) { ns_.reserve(n); }
  void add(std::int64_t ns) { ns_.push_back(ns); }
  void report(benchmark::State& state, const std::string& prefix) {
    if (ns_.empty()) return;
    std::sort(ns_.begin(), ns_.end());
    auto at = [&](double q) {
      return static_cast<double>(ns_[static_cast<std::size_t>(q * static_cast<double>(ns_.size() - 1))]) / 1e3;
    };
    state.counters[prefix + "p50_us"] = at(0.50);
    state.counters[prefix + "p99_us"] = at(0.99);
    if (prefix.empty()) {
      state.counters["p999_us"] = at(0.999);
      state.counters["max_us"] = at(1.0);
    }
  }

 private:
  std::vector<std::int64_t> ns_;
};

/// A fresh data directory with one topic; on destruction its logs are truncated to zero
/// (dirty pages dropped without writeback), closed, and the directory removed.
class fresh_topic {
 public:
  explicit fresh_topic(std::int32_t partitions) {
    auto d = data_dir::open(dir_.path() / "data");
    if (!d) throw std::runtime_error(d.error().to_string());
    dd_ = std::move(*d);
    topic_config tc;
    tc.partitions = partitions;
    if (auto r = dd_->create_topic(topic, tc); !r) throw std::runtime_error(r.error().to_string());
  }
  ~fresh_topic() {
    auto n = dd_->partition_count(topic);
    for (std::int32_t p = 0; n && p < *n; ++p)
      if (auto part = dd_->get_partition(topic, partition_id(p))) (void)(*part)->log().truncate_to(offset{0});
    (void)dd_->close();
  }
  data_dir& operator*() { return *dd_; }

 private:
  bench::scratch_dir dir_;
  std::unique_ptr<data_dir> dd_;
};

/// The batches in every partition of the topic (how many records each append carried).
std::int64_t batches_in(data_dir& dd) {
  std::int64_t total = 0;
  auto n = dd.partition_count(topic);
  for (std::int32_t p = 0; n && p < *n; ++p) {
    auto part = dd.get_partition(topic, partition_id(p));
    for (offset o{0}; part && o < (*part)->high_watermark();) {
      auto s = (*part)->read(o);
      if (!s || s->empty()) break;
      if (auto k = s->for_each_batch([](const record_batch_view&) {}, batch_check{false, false}))
        total += static_cast<std::int64_t>(*k);
      o = s->next_offset();
    }
  }
  return total;
}

// ------------------------------------------------------------------ persisted pub/sub

/// BM_PubSub1P1C and BM_PubSub1P1CLinger: see the file comment.
void pubsub_1p1c(benchmark::State& state, std::int64_t rate, bool in_caller, std::int64_t spin_us,
                 std::chrono::milliseconds linger) {
  const std::int64_t n = rate == 0 ? pubsub_records : paced_records;
  latencies e2e, ack;
  e2e.reserve(static_cast<std::size_t>(n * state.max_iterations));
  cpu_split cpu;
  std::int64_t batches = 0;
  for (auto _ : state) {
    fresh_topic t(1);
    consumer_config cc;
    cc.fetch_min_bytes = 1;
    cc.auto_offset_reset = offset_reset::earliest;
    cc.poll_spin = std::chrono::microseconds(spin_us);
    consumer con(*t, cc);
    if (!con.assign({{topic, partition_id(0)}})) return state.SkipWithError("assign failed");
    producer_config pc;
    pc.acks = acks_mode::leader;
    pc.linger = linger;
    pc.append_in_caller = in_caller;
    producer prod(*t, pc);
    // What the send callbacks touch, behind one pointer so the callback fits in
    // std::function's small buffer (no allocation per record).
    struct acks {
      std::vector<std::int64_t> at;  // callback time by offset (paced runs)
      std::atomic<std::int64_t> errors{0};
      std::int64_t n;
      bool timed;
    } acks_ctx{std::vector<std::int64_t>(static_cast<std::size_t>(n)), {0}, n, rate != 0};

    const double cpu0 = process_cpu_seconds();
    const std::int64_t t0 = now_ns();
    std::thread sender([&] {
      const double tcpu0 = thread_cpu_seconds(), tsleeps0 = thread_sleeps();
      message m = make_message();
      producer_record rec = record_of(m);
      acks* a = &acks_ctx;
      send_paced(n, rate, [&](std::int64_t i) {
        stamp(m.bytes.data(), i);
        prod.send(rec, [a](const result<record_metadata>& md) {
          if (!md || md->offset.value() < 0 || md->offset.value() >= a->n)
            ++a->errors;
          else if (a->timed)
            a->at[static_cast<std::size_t>(md->offset.value())] = now_ns();
        });
      });
      (void)prod.flush();
      cpu.producer += thread_cpu_seconds() - tcpu0;
      cpu.producer_sleeps += thread_sleeps() - tsleeps0;
    });
    const double ccpu0 = thread_cpu_seconds(), csleeps0 = thread_sleeps();
    std::int64_t received = 0;
    const char* error = nullptr;
    while (received < n && error == nullptr) {
      auto recs = con.poll(std::chrono::seconds(10));
      if (!recs)
        error = "poll failed";
      else if (recs->empty())
        error = "no record for 10 s";
      if (error) break;
      const std::int64_t now = now_ns();
      for (const auto& r : *recs) {
        const std::byte* v = r.value().data();
        if (r.value().size() != sizeof(message) || seq_of(v) != received) {
          error = "record lost, duplicated or out of order";
          break;
        }
        e2e.add(now - sent_ns_of(v));
        ++received;
      }
    }
    const std::int64_t t1 = now_ns();
    cpu.consumer += thread_cpu_seconds() - ccpu0;
    cpu.consumer_sleeps += thread_sleeps() - csleeps0;
    sender.join();
    cpu.process += process_cpu_seconds() - cpu0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    if (acks_ctx.errors != 0) error = "send failed";
    if (error) return state.SkipWithError(error);
    (void)prod.close();
    batches += batches_in(*t);
    // Acknowledgement latency (paced runs only: the clock reading costs the sender thread
    // ~40 ns per record here): read the send times back from the log, by offset.
    auto part = (*t).get_partition(topic, partition_id(0));
    for (offset o{0}; rate != 0 && part && o < (*part)->high_watermark();) {
      auto s = (*part)->read(o);
      if (!s) break;
      (void)s->for_each_record([&](const record_view& r) {
        ack.add(acks_ctx.at[static_cast<std::size_t>(r.offset().value())] - sent_ns_of(r.value().data()));
      });
      o = s->next_offset();
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<std::int64_t>(sizeof(message)));
  e2e.report(state, "");
  ack.report(state, "ack_");
  cpu.report(state, state.iterations() * n);
  if (batches > 0)
    state.counters["recs_per_batch"] = static_cast<double>(state.iterations() * n) / static_cast<double>(batches);
}
void BM_PubSub1P1C(benchmark::State& state) {
  pubsub_1p1c(state, state.range(0), state.range(1) != 0, state.range(2), std::chrono::milliseconds(0));
}
void BM_PubSub1P1CLinger(benchmark::State& state) {
  pubsub_1p1c(state, 0, false, 0, std::chrono::milliseconds(state.range(0)));
}
BENCHMARK(BM_PubSub1P1CLinger)
    ->ArgName("linger_ms")
    ->Arg(5)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PubSub1P1C)
    ->ArgNames({"rate", "in_caller", "spin_us"})
    ->Args({0, 0, 0})
    ->Args({100'000, 0, 0})
    ->Args({0, 1, 0})
    ->Args({100'000, 1, 0})
    ->Args({0, 1, 50})
    ->Args({100'000, 1, 50})
    ->Args({100'000, 1, 1000})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// The consumer thread of BM_PubSubFloor and BM_PubSubFloorSplit: reads `p` from offset 0
/// in 1 MiB slices (CRC checked) until it has n records, checking each record's sequence and
/// noting its latency, and sleeps on the directory's notifier when it finds nothing, as
/// brook's consumer does by default. Adds its CPU time and sleeps to `cpu`, sets `end` to
/// when it stopped, and returns what went wrong, or nullptr.
const char* consume_floor(data_dir& dd, partition& p, std::int64_t n, const std::atomic<bool>& failed, latencies& e2e,
                          cpu_split& cpu, std::int64_t& end) {
  const double cpu0 = thread_cpu_seconds(), sleeps0 = thread_sleeps();
  std::int64_t received = 0;
  offset at{0};
  auto consume = [&]() -> const char* {
    while (received < n) {
      const std::uint64_t seen = dd.notifier().sequence();
      auto s = p.read(at, read_options{.max_bytes = 1024 * 1024});
      if (!s) return "read failed";
      if (s->empty()) {
        if (failed) return "append failed";
        if (!dd.notifier().wait(seen, steady::now() + std::chrono::seconds(10))) return "no record for 10 s";
        continue;
      }
      const std::int64_t now = now_ns();
      auto walked = s->for_each_record([&](const record_view& r) {
        const std::byte* v = r.value().data();
        if (r.value().size() != sizeof(message) || seq_of(v) != received) return false;
        e2e.add(now - sent_ns_of(v));
        ++received;
        return true;
      });
      if (!walked) return "corrupt batch";
      at = s->next_offset();
      if (received < at.value() && received < n) return "record lost, duplicated or out of order";
    }
    return nullptr;
  };
  const char* error = consume();
  end = now_ns();
  cpu.consumer += thread_cpu_seconds() - cpu0;
  cpu.consumer_sleeps += thread_sleeps() - sleeps0;
  return error;
}

/// The counters of BM_PubSubFloor and BM_PubSubFloorSplit, for n records an iteration.
void report_floor(benchmark::State& state, std::int64_t n, latencies& e2e, const cpu_split& cpu) {
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<std::int64_t>(sizeof(message)));
  e2e.report(state, "");
  cpu.report(state, state.iterations() * n);
}

void BM_PubSubFloor(benchmark::State& state) {
  constexpr std::int64_t n = pubsub_records;
  constexpr std::int32_t records_per_append = 100;  // about what BM_PubSub1P1C's appends carry
  latencies e2e;
  e2e.reserve(static_cast<std::size_t>(n * state.max_iterations));
  cpu_split cpu;
  for (auto _ : state) {
    fresh_topic t(1);
    auto part = (*t).get_partition(topic, partition_id(0));
    if (!part) return state.SkipWithError(part.error().to_string().c_str());
    partition& p = **part;
    alignas(64) std::atomic<bool> failed{false};  // a line of its own: the producer reads it
    const double cpu0 = process_cpu_seconds();
    const std::int64_t t0 = now_ns();
    std::thread producer_thread([&] {
      const double tcpu0 = thread_cpu_seconds(), tsleeps0 = thread_sleeps();
      message m = make_message();
      record_batch_builder b;
      const system_clock clock;  // CreateTime as the producer takes it
      for (std::int64_t i = 0; i < n; ++i) {
        stamp(m.bytes.data(), i);
        b.append(clock.now_ms(), nullable_bytes::null(), nullable_bytes(m.bytes.data(), m.bytes.size()));
        if (b.record_count() == records_per_append || i + 1 == n) {
          b.finish();
          if (!p.append(b.built())) {
            failed = true;
            (*t).notifier().notify();  // a consumer asleep on an empty read sees it at once
          }
          b.reset();
          if (failed) break;
        }
      }
      cpu.producer += thread_cpu_seconds() - tcpu0;
      cpu.producer_sleeps += thread_sleeps() - tsleeps0;
    });
    std::int64_t t1 = 0;
    const char* error = consume_floor(*t, p, n, failed, e2e, cpu, t1);
    failed = failed || error != nullptr;
    producer_thread.join();
    cpu.process += process_cpu_seconds() - cpu0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    if (error) return state.SkipWithError(error);
  }
  report_floor(state, n, e2e, cpu);
}
BENCHMARK(BM_PubSubFloor)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

/// One thread's wake-up for BM_PubSubFloorSplit: ring() bumps a sequence and makes the futex
/// call only while the other side sleeps in wait(seen), which returns once the sequence
/// moved past `seen`. Both sides are seq_cst (bump then load the flag; set the flag then
/// load the sequence), so no ring is lost. brook's notifier (core/notifier.hpp) does the same
/// with a mutex and a condition variable on its wait path; the floor uses the least a
/// wake-up needs.
class doorbell {
 public:
  std::uint32_t sequence() const noexcept { return seq_.load(std::memory_order_seq_cst); }
  void ring() noexcept {
    seq_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst))
      ::syscall(SYS_futex, &seq_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
  void wait(std::uint32_t seen) noexcept {
    sleeping_.store(true, std::memory_order_seq_cst);
    while (seq_.load(std::memory_order_seq_cst) == seen)
      ::syscall(SYS_futex, &seq_, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
    sleeping_.store(false, std::memory_order_relaxed);
  }

 private:
  alignas(64) std::atomic<std::uint32_t> seq_{0};
  std::atomic<bool> sleeping_{false};
};

/// One iteration of BM_PubSubFloorSplit (see the file comment): the producer thread runs
/// produce(), the appender thread append(); stop() ends both early. Thread-safety: each
/// member is called from the one thread named; stop() from any.
class split_floor {
 public:
  struct options {
    std::int32_t batch_records = 0;  ///< 0: hand a batch over when the appender has none left
    bool callbacks = false;          ///< a send_callback a record, called by the appender
    int lock = 0;                    ///< 1: send()'s mutex a record; 2: and the appender's turns, about two a batch
  };
  // As many 16 KiB batches as the producer's buffer.memory holds (32 MiB): the producer
  // thread runs as far ahead of the appender as brook's may. (With 8 builders it waited for
  // one on most batches, and the futex calls cost both threads more than the rings saved.)
  static constexpr std::size_t slots = 2048;

  split_floor(data_dir& dd, partition& p, std::int64_t n, options o)
      : dd_(dd), p_(p), n_(n), o_(o), pool_(slots), full_(std::make_unique<ring>()), spare_(std::make_unique<ring>()) {
    for (std::size_t i = 1; i < slots; ++i) spare_->push(&pool_[i]);
  }

  void produce() {
    message m = make_message();
    slot* s = &pool_[0];
    const system_clock clock;
    const nullable_bytes value(m.bytes.data(), m.bytes.size());
    // A bound on the next record's size (its deltas are small varints), so a batch never
    // passes batch.size.
    const std::size_t next_bytes = record_batch_builder::record_size(1 << 20, 1 << 20, nullable_bytes::null(), value);
    for (std::int64_t i = 0; i < n_ && !failed_; ++i) {
      stamp(m.bytes.data(), i);
      add(*s, clock.now_ms(), value);
      const bool appender_idle = full_->write_available() == slots;  // its ring is empty
      const bool hand =
          i + 1 == n_ || (o_.batch_records > 0 ? s->builder.record_count() == o_.batch_records
                                               : appender_idle || s->builder.size_bytes() + next_bytes > 16384);
      if (!hand) continue;
      s->builder.finish();
      full_->push(s);
      full_bell_.ring();
      s = next_spare();
    }
  }

  void append() {
    const double sleeps0 = thread_sleeps();
    std::int64_t done = 0;
    while (done < n_ && !failed_) {
      const std::uint32_t seen = full_bell_.sequence();
      if (o_.lock == 2) std::lock_guard turn(mu_);  // as brook's sender takes its ready batches
      slot* s = nullptr;
      if (!full_->pop(s)) {
        full_bell_.wait(seen);
        continue;
      }
      complete(*s, p_.append(s->builder.built()));
      done += s->builder.record_count();
      ++batches_;
      s->builder.reset();
      spare_->push(s);
      spare_bell_.ring();
    }
    sleeps_ = thread_sleeps() - sleeps0;
  }

  void stop() {
    failed_ = true;
    full_bell_.ring();
    spare_bell_.ring();
  }

  std::int64_t batches() const { return batches_; }
  const std::atomic<bool>& failed_flag() const { return failed_; }
  double appender_sleeps() const { return sleeps_; }
  std::int64_t callback_errors() const { return callback_errors_; }

 private:
  struct slot {
    record_batch_builder builder;
    std::vector<std::pair<send_callback, timestamp_ms>> callbacks;  // as brook's producer keeps them
  };
  using ring = boost::lockfree::spsc_queue<slot*, boost::lockfree::capacity<slots>>;

  void add(slot& s, timestamp_ms ts, const nullable_bytes& value) {
    std::unique_lock lk(mu_, std::defer_lock);
    if (o_.lock > 0) lk.lock();
    s.builder.append(ts, nullable_bytes::null(), value);
    if (o_.callbacks) {
      std::atomic<std::int64_t>* errors = &callback_errors_;
      const std::int64_t n = n_;
      s.callbacks.emplace_back(
          [errors, n](const result<record_metadata>& md) {
            if (!md || md->offset.value() < 0 || md->offset.value() >= n) ++*errors;
          },
          ts);
    }
  }

  // What brook's producer does after an append: each record's callback with its metadata,
  // then (lock 2) its second turn on the mutex, as release() takes it.
  void complete(slot& s, const result<append_result>& r) {
    if (!r) {
      failed_ = true;
      dd_.notifier().notify();  // a consumer asleep on an empty read sees it at once
    }
    if (o_.callbacks) {
      result<record_metadata> md(record_metadata{topic, partition_id(0), offset(-1), -1});
      for (std::size_t i = 0; r && i < s.callbacks.size(); ++i) {
        md->offset = r->base_offset + static_cast<std::int64_t>(i);
        md->timestamp = s.callbacks[i].second;
        s.callbacks[i].first(md);
      }
      s.callbacks.clear();
    }
    if (o_.lock == 2) std::lock_guard turn(mu_);
  }

  slot* next_spare() {
    for (;;) {
      const std::uint32_t seen = spare_bell_.sequence();
      slot* s = nullptr;
      if (spare_->pop(s)) return s;
      if (failed_) return &pool_[0];  // the loop ends at once; nothing appends it again
      spare_bell_.wait(seen);
    }
  }

  data_dir& dd_;
  partition& p_;
  const std::int64_t n_;
  const options o_;
  std::vector<slot> pool_;
  std::unique_ptr<ring> full_, spare_;
  doorbell full_bell_, spare_bell_;
  adaptive_mutex mu_;  // send()'s mutex, when o_.lock > 0
  alignas(64) std::atomic<bool> failed_{false};
  alignas(64) std::atomic<std::int64_t> callback_errors_{0};
  std::int64_t batches_ = 0;  // appender thread only, read after it is joined
  double sleeps_ = 0;         // likewise
};

/// BM_PubSubFloorSplit: see the file comment.
void BM_PubSubFloorSplit(benchmark::State& state) {
  constexpr std::int64_t n = pubsub_records;
  const split_floor::options o{static_cast<std::int32_t>(state.range(0)), state.range(1) != 0,
                               static_cast<int>(state.range(2))};
  double sleeps = 0;
  latencies e2e;
  e2e.reserve(static_cast<std::size_t>(n * state.max_iterations));
  cpu_split cpu;
  std::int64_t batches = 0;
  for (auto _ : state) {
    fresh_topic t(1);
    auto part = (*t).get_partition(topic, partition_id(0));
    if (!part) return state.SkipWithError(part.error().to_string().c_str());
    split_floor run(*t, **part, n, o);
    const double cpu0 = process_cpu_seconds();
    const std::int64_t t0 = now_ns();
    std::thread appender([&] { run.append(); });
    std::thread producer_thread([&] {
      const double tcpu0 = thread_cpu_seconds(), tsleeps0 = thread_sleeps();
      run.produce();
      cpu.producer += thread_cpu_seconds() - tcpu0;
      cpu.producer_sleeps += thread_sleeps() - tsleeps0;
    });
    std::int64_t t1 = 0;
    const char* error = consume_floor(*t, **part, n, run.failed_flag(), e2e, cpu, t1);
    if (error != nullptr) run.stop();
    producer_thread.join();
    appender.join();
    batches += run.batches();
    sleeps += run.appender_sleeps();
    cpu.process += process_cpu_seconds() - cpu0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    if (error == nullptr && run.callback_errors() != 0) error = "a callback had a wrong offset";
    if (error) return state.SkipWithError(error);
  }
  report_floor(state, n, e2e, cpu);
  if (batches > 0)
    state.counters["recs_per_batch"] = static_cast<double>(state.iterations() * n) / static_cast<double>(batches);
  state.counters["app_sleeps_per_krec"] = sleeps * 1e3 / static_cast<double>(state.iterations() * n);
}
BENCHMARK(BM_PubSubFloorSplit)
    ->ArgNames({"batch_records", "callbacks", "lock"})
    ->Args({100, 0, 0})
    ->Args({0, 0, 0})
    ->Args({0, 1, 0})
    ->Args({0, 0, 1})
    ->Args({0, 0, 2})
    ->Args({0, 1, 1})
    ->Args({0, 1, 2})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// Producer p's record i goes to partition i % 8 and carries p at byte 16 of its value.
/// Consumers check each (producer, partition) stream: producer p's records on partition k
/// are its i = k, k + 8, k + 16, ... in that order.
class stream_check {
 public:
  explicit stream_check(std::int32_t partitions) : parts_(partitions) {
    next_.resize(static_cast<std::size_t>(mesh_producers * partitions));
    for (std::int32_t p = 0; p < mesh_producers; ++p)
      for (std::int32_t k = 0; k < partitions; ++k) next_[index(p, k)] = k;
  }
  /// False when the record is lost, duplicated or out of order in its stream.
  bool take(std::int32_t partition, const std::byte* v) {
    std::int32_t p;
    std::memcpy(&p, v + 16, 4);
    if (p < 0 || p >= mesh_producers || partition < 0 || partition >= parts_) return false;
    auto& want = next_[index(p, partition)];
    if (seq_of(v) != want) return false;
    want += parts_;
    return true;
  }

 private:
  std::size_t index(std::int32_t p, std::int32_t k) const { return static_cast<std::size_t>(p * parts_ + k); }
  std::int32_t parts_;
  std::vector<std::int64_t> next_;
};

void stamp_producer(std::byte* v, std::int32_t p) { std::memcpy(v + 16, &p, 4); }

/// Moves `last` up to now: the time the last of several consumer threads finished.
void note_finish(std::atomic<std::int64_t>& last) {
  const std::int64_t done = now_ns();
  for (std::int64_t seen = last.load(); seen < done && !last.compare_exchange_weak(seen, done);) {
  }
}

void BM_PubSub4P4C(benchmark::State& state) {
  const bool in_caller = state.range(0) != 0;
  const std::int64_t per_producer = mesh_records / mesh_producers;
  std::atomic<std::int64_t> errors{0};
  for (auto _ : state) {
    fresh_topic t(mesh_partitions);
    std::vector<std::unique_ptr<consumer>> cons;
    for (std::int32_t c = 0; c < mesh_consumers; ++c) {
      consumer_config cc;
      cc.fetch_min_bytes = 1;
      cc.auto_offset_reset = offset_reset::earliest;
      cons.push_back(std::make_unique<consumer>(*t, cc));
      std::vector<topic_partition> mine;
      for (std::int32_t k = c; k < mesh_partitions; k += mesh_consumers) mine.push_back({topic, partition_id(k)});
      if (!cons.back()->assign(mine)) return state.SkipWithError("assign failed");
    }
    producer_config pc;
    pc.acks = acks_mode::leader;
    pc.linger = std::chrono::milliseconds(0);
    pc.append_in_caller = in_caller;
    std::vector<std::unique_ptr<producer>> prods;
    for (std::int32_t p = 0; p < mesh_producers; ++p) prods.push_back(std::make_unique<producer>(*t, pc));
    std::atomic<const char*> error{nullptr};
    const std::int64_t t0 = now_ns();
    std::vector<std::thread> threads;
    for (std::int32_t p = 0; p < mesh_producers; ++p)
      threads.emplace_back([&, p] {
        message m = make_message();
        stamp_producer(m.bytes.data(), p);
        producer_record rec = record_of(m);
        for (std::int64_t i = 0; i < per_producer; ++i) {
          stamp(m.bytes.data(), i);
          rec.partition = partition_id(static_cast<std::int32_t>(i % mesh_partitions));
          prods[static_cast<std::size_t>(p)]->send(rec, [&errors](const result<record_metadata>& md) {
            if (!md) ++errors;
          });
        }
        (void)prods[static_cast<std::size_t>(p)]->flush();
      });
    std::atomic<std::int64_t> t1{0};
    for (std::int32_t c = 0; c < mesh_consumers; ++c)
      threads.emplace_back([&, c] {
        consumer& con = *cons[static_cast<std::size_t>(c)];
        stream_check check(mesh_partitions);
        const std::int64_t want = mesh_records / mesh_consumers;
        for (std::int64_t received = 0; received < want && error.load() == nullptr;) {
          auto recs = con.poll(std::chrono::seconds(10));
          if (!recs || recs->empty()) {
            error = recs ? "no record for 10 s" : "poll failed";
            break;
          }
          for (const auto& r : *recs) {
            if (r.value().size() != sizeof(message) || !check.take(r.partition().value(), r.value().data())) {
              error = "record lost, duplicated or out of order";
              break;
            }
            ++received;
          }
        }
        note_finish(t1);
      });
    for (auto& th : threads) th.join();
    state.SetIterationTime(static_cast<double>(t1.load() - t0) * 1e-9);
    if (errors != 0) error = "send failed";
    if (error.load() != nullptr) return state.SkipWithError(error.load());
    for (auto& p : prods) (void)p->close();
  }
  state.SetItemsProcessed(state.iterations() * mesh_records);
  state.SetBytesProcessed(state.iterations() * mesh_records * static_cast<std::int64_t>(sizeof(message)));
}
BENCHMARK(BM_PubSub4P4C)
    ->ArgName("in_caller")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------ in-memory queue baselines

/// Each queue behind the same two calls: push (spins while full) and pop_bulk (returns
/// 0 or more; the blocking queue sleeps up to 10 ms while empty).
struct moodycamel_spin {
  moodycamel::ConcurrentQueue<message> q{queue_slots};
  moodycamel::ProducerToken ptok{q};
  moodycamel::ConsumerToken ctok{q};
  void push(const message& m) {
    while (!q.try_enqueue(ptok, m)) __builtin_ia32_pause();
  }
  std::size_t pop_bulk(message* out, std::size_t max) {
    std::size_t k = q.try_dequeue_bulk(ctok, out, max);
    if (k == 0) __builtin_ia32_pause();
    return k;
  }
};
struct moodycamel_blocking {
  moodycamel::BlockingConcurrentQueue<message> q{queue_slots};
  moodycamel::ProducerToken ptok{q};
  moodycamel::ConsumerToken ctok{q};
  void push(const message& m) {
    while (!q.try_enqueue(ptok, m)) __builtin_ia32_pause();
  }
  std::size_t pop_bulk(message* out, std::size_t max) {
    return q.wait_dequeue_bulk_timed(ctok, out, max, std::chrono::milliseconds(10));
  }
};
struct boost_spsc {
  boost::lockfree::spsc_queue<message, boost::lockfree::capacity<queue_slots>> q;
  void push(const message& m) {
    while (!q.push(m)) __builtin_ia32_pause();
  }
  std::size_t pop_bulk(message* out, std::size_t max) {
    std::size_t k = q.pop(out, max);
    if (k == 0) __builtin_ia32_pause();
    return k;
  }
};

template <typename Queue>
void BM_QueueBaseline(benchmark::State& state) {
  const std::int64_t rate = state.range(0);
  const std::int64_t n = rate == 0 ? queue_records : paced_records;
  constexpr std::size_t max_poll = 500;  // as max.poll.records
  latencies e2e;
  e2e.reserve(static_cast<std::size_t>(n * state.max_iterations));
  cpu_split cpu;
  for (auto _ : state) {
    auto q = std::make_unique<Queue>();
    std::vector<message> got(max_poll);
    const double cpu0 = process_cpu_seconds();
    const std::int64_t t0 = now_ns();
    std::thread sender([&] {
      const double tcpu0 = thread_cpu_seconds(), tsleeps0 = thread_sleeps();
      message m = make_message();
      send_paced(n, rate, [&](std::int64_t i) {
        stamp(m.bytes.data(), i);
        q->push(m);
      });
      cpu.producer += thread_cpu_seconds() - tcpu0;
      cpu.producer_sleeps += thread_sleeps() - tsleeps0;
    });
    const double ccpu0 = thread_cpu_seconds(), csleeps0 = thread_sleeps();
    std::int64_t received = 0;
    bool in_order = true;
    while (received < n && in_order) {
      const std::size_t k = q->pop_bulk(got.data(), max_poll);
      if (k == 0) continue;
      const std::int64_t now = now_ns();
      for (std::size_t j = 0; j < k; ++j) {
        in_order &= seq_of(got[j].bytes.data()) == received++;
        e2e.add(now - sent_ns_of(got[j].bytes.data()));
      }
    }
    const std::int64_t t1 = now_ns();
    cpu.consumer += thread_cpu_seconds() - ccpu0;
    cpu.consumer_sleeps += thread_sleeps() - csleeps0;
    sender.join();
    cpu.process += process_cpu_seconds() - cpu0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    if (!in_order) return state.SkipWithError("record lost, duplicated or out of order");
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * static_cast<std::int64_t>(sizeof(message)));
  e2e.report(state, "");
  cpu.report(state, state.iterations() * n);
}
BENCHMARK(BM_QueueBaseline<moodycamel_spin>)
    ->Name("BM_QueueBaseline/moodycamel")
    ->ArgName("rate")
    ->Arg(0)
    ->Arg(100'000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_QueueBaseline<moodycamel_blocking>)
    ->Name("BM_QueueBaseline/moodycamel_blocking")
    ->ArgName("rate")
    ->Arg(0)
    ->Arg(100'000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_QueueBaseline<boost_spsc>)
    ->Name("BM_QueueBaseline/boost_spsc")
    ->ArgName("rate")
    ->Arg(0)
    ->Arg(100'000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

/// The 4x4 peer: one moodycamel queue per consumer, holding its two partitions' records
/// (record i of a producer goes to partition i % 8, so to consumer (i % 8) % 4). A queue
/// keeps each producer's order, so each (producer, partition) stream stays in order. The
/// queues grow as needed (unlike the 1P1C baselines' fixed 64 Ki slots).
template <bool Blocking>
void BM_QueueMesh(benchmark::State& state) {
  using queue =
      std::conditional_t<Blocking, moodycamel::BlockingConcurrentQueue<message>, moodycamel::ConcurrentQueue<message>>;
  const std::int64_t per_producer = mesh_queue_records / mesh_producers;
  constexpr std::size_t max_poll = 500;  // as max.poll.records
  for (auto _ : state) {
    std::vector<std::unique_ptr<queue>> qs;
    for (std::int32_t c = 0; c < mesh_consumers; ++c) qs.push_back(std::make_unique<queue>(queue_slots));
    std::atomic<const char*> error{nullptr};
    std::atomic<std::int64_t> t1{0};
    const std::int64_t t0 = now_ns();
    std::vector<std::thread> threads;
    for (std::int32_t p = 0; p < mesh_producers; ++p)
      threads.emplace_back([&, p] {
        std::vector<std::unique_ptr<moodycamel::ProducerToken>> toks;
        for (auto& q : qs) toks.push_back(std::make_unique<moodycamel::ProducerToken>(*q));
        message m = make_message();
        stamp_producer(m.bytes.data(), p);
        for (std::int64_t i = 0; i < per_producer; ++i) {
          stamp(m.bytes.data(), i);
          const auto c = static_cast<std::size_t>((i % mesh_partitions) % mesh_consumers);
          // enqueue, not try_enqueue: four producers share a queue's preallocated blocks, and
          // blocks a producer has used return to it, not to the pool, so try_enqueue can
          // starve a producer for good. enqueue allocates a block when it needs one.
          if (!qs[c]->enqueue(*toks[c], m)) {
            error = "enqueue failed";
            return;
          }
        }
      });
    for (std::int32_t c = 0; c < mesh_consumers; ++c)
      threads.emplace_back([&, c] {
        queue& q = *qs[static_cast<std::size_t>(c)];
        moodycamel::ConsumerToken tok(q);
        std::vector<message> got(max_poll);
        stream_check check(mesh_partitions);
        const std::int64_t want = mesh_queue_records / mesh_consumers;
        for (std::int64_t received = 0; received < want && error.load() == nullptr;) {
          std::size_t k;
          if constexpr (Blocking) {
            k = q.wait_dequeue_bulk_timed(tok, got.data(), max_poll, std::chrono::milliseconds(10));
          } else {
            k = q.try_dequeue_bulk(tok, got.data(), max_poll);
            if (k == 0) __builtin_ia32_pause();
          }
          for (std::size_t j = 0; j < k; ++j) {
            const std::byte* v = got[j].bytes.data();
            if (!check.take(static_cast<std::int32_t>(seq_of(v) % mesh_partitions), v)) {
              error = "record lost, duplicated or out of order";
              break;
            }
            ++received;
          }
        }
        note_finish(t1);
      });
    for (auto& th : threads) th.join();
    state.SetIterationTime(static_cast<double>(t1.load() - t0) * 1e-9);
    if (error.load() != nullptr) return state.SkipWithError(error.load());
  }
  state.SetItemsProcessed(state.iterations() * mesh_queue_records);
  state.SetBytesProcessed(state.iterations() * mesh_queue_records * static_cast<std::int64_t>(sizeof(message)));
}
BENCHMARK(BM_QueueMesh<false>)
    ->Name("BM_QueueMesh4P4C/moodycamel")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_QueueMesh<true>)
    ->Name("BM_QueueMesh4P4C/moodycamel_blocking")
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------ keyed produce

void BM_ProduceKeyed(benchmark::State& state) {
  const auto linger = std::chrono::milliseconds(state.range(0));
  std::vector<std::string> keys;
  for (int k = 0; k < keyed_keys; ++k) keys.push_back(fmt::format("user-{:05}", k));
  cpu_split cpu;
  for (auto _ : state) {
    fresh_topic t(keyed_partitions);
    producer_config pc;
    pc.acks = acks_mode::leader;
    pc.linger = linger;
    producer prod(*t, pc);
    std::atomic<std::int64_t> errors{0};
    message m = make_message();
    producer_record rec = record_of(m);
    const double cpu0 = process_cpu_seconds(), tcpu0 = thread_cpu_seconds(), tsleeps0 = thread_sleeps();
    const std::int64_t t0 = now_ns();
    for (std::int64_t i = 0; i < keyed_records; ++i) {
      rec.key = keys[static_cast<std::size_t>(i % keyed_keys)];
      prod.send(rec, [&](const result<record_metadata>& md) {
        if (!md) ++errors;
      });
    }
    (void)prod.flush();
    const std::int64_t t1 = now_ns();
    cpu.producer += thread_cpu_seconds() - tcpu0;
    cpu.producer_sleeps += thread_sleeps() - tsleeps0;
    cpu.process += process_cpu_seconds() - cpu0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    if (errors != 0) return state.SkipWithError("send failed");
  }
  state.SetItemsProcessed(state.iterations() * keyed_records);
  cpu.report(state, state.iterations() * keyed_records);
}
BENCHMARK(BM_ProduceKeyed)
    ->ArgName("linger_ms")
    ->Arg(0)
    ->Arg(5)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_ProduceBatchSize(benchmark::State& state) {
  constexpr std::int64_t n = pubsub_records;
  cpu_split cpu;
  double sys = 0;
  std::int64_t batches = 0;
  for (auto _ : state) {
    fresh_topic t(1);
    producer_config pc;
    pc.acks = acks_mode::leader;
    pc.linger = std::chrono::milliseconds(state.range(0));
    pc.batch_size = static_cast<std::size_t>(state.range(1)) * 1024;
    producer prod(*t, pc);
    std::atomic<std::int64_t> errors{0};
    message m = make_message();
    producer_record rec = record_of(m);
    const double cpu0 = process_cpu_seconds(), tcpu0 = thread_cpu_seconds(), tsys0 = thread_sys_seconds();
    const double tsleeps0 = thread_sleeps();
    const std::int64_t t0 = now_ns();
    for (std::int64_t i = 0; i < n; ++i) {
      stamp(m.bytes.data(), i);
      prod.send(rec, [&errors](const result<record_metadata>& md) {
        if (!md) ++errors;
      });
    }
    (void)prod.flush();
    const std::int64_t t1 = now_ns();
    cpu.producer += thread_cpu_seconds() - tcpu0;
    sys += thread_sys_seconds() - tsys0;
    cpu.producer_sleeps += thread_sleeps() - tsleeps0;
    cpu.process += process_cpu_seconds() - cpu0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
    if (errors != 0) return state.SkipWithError("send failed");
    (void)prod.close();
    batches += batches_in(*t);
  }
  const std::int64_t records = state.iterations() * n;
  state.SetItemsProcessed(records);
  cpu.report(state, records);
  state.counters["prod_sys_ns"] = sys * 1e9 / static_cast<double>(records);
  if (batches > 0) state.counters["recs_per_batch"] = static_cast<double>(records) / static_cast<double>(batches);
}
BENCHMARK(BM_ProduceBatchSize)
    ->ArgNames({"linger_ms", "batch_KiB"})
    ->Args({0, 16})
    ->Args({5, 16})
    ->Args({5, 64})
    ->Args({5, 1024})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

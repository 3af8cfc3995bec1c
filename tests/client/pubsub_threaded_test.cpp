// Producers and consumers on one data_dir at once, from many threads: seeded scenarios
// over the whole client path (partitioner -> accumulator -> sender -> partition ->
// long-polling consumer), plus retention running under the readers and wakeup().
//
//   1. "pub/sub": P producer threads (each with its own producer, all sharing one, or two
//      producers shared between them, by seed) x C consumers, each assigned every partition
//      of a 2..6-partition topic and running on its own thread from the earliest offset.
//      Every value names (thread, sequence, key, explicit partition) and is a pure function
//      of them, so a consumer checks each record byte for byte. Checked: every record acked
//      to a callback (exactly once, with partition and offset) reaches every consumer exactly
//      once at that partition and offset; offsets per partition are gapless from 0; one
//      thread's records keep their order within a partition (so per-key order holds); keyed
//      records landed on partition_for_key(key, N); flush() from a sending thread returns
//      only after all of that thread's earlier sends completed.
//   2. "retention": small segments and retention.bytes, housekeeping running (the data_dir's
//      own thread or a thread calling tick()), producers writing, and three consumers:
//      a fast earliest one, a slow earliest one (falls behind: reset to the log start), and
//      a slow one with auto.offset.reset=none (gets offset_out_of_range, then seeks to the
//      beginning). Never garbage, never an offset going backwards; the earliest consumers
//      may skip only offsets that are below the log start by then; the `none` consumer may
//      skip nothing without an offset_out_of_range. A consumer_records held across the
//      deletion of its segment still shows its original bytes. Also a deterministic case:
//      offset_out_of_range on one partition must not lose records another partition
//      fetched in the same poll.
//   3. "wakeup": wakeup() ends a blocked poll promptly with errc::wakeup (and only that
//      consumer's), a wakeup() before poll() makes the next poll return at once, a poll
//      blocked on an empty topic returns as soon as a record is produced, and records
//      fetched by a poll that wakeup() interrupts are not lost.
//
// Environment: BROOK_PUBSUB_SEED=<n> runs only seed n (every scenario); BROOK_PUBSUB_SEEDS=<k>
// sets how many seeds each scenario runs (default 20 pub/sub, 10 retention, 6 under TSan, with
// fewer records); BROOK_PUBSUB_VERBOSE=1 prints a line per seed; BROOK_PUBSUB_DIR=<dir> puts the
// data directories there instead of /dev/shm (or the temp dir). Each failure names its seed.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/client/consumer.hpp>
#include <brook/client/partitioner.hpp>
#include <brook/client/producer.hpp>
#include <brook/storage/data_dir.hpp>
#include "support/seeds.hpp"

using namespace brook;
using namespace std::chrono_literals;

namespace {

using steady = std::chrono::steady_clock;

#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif
#else
constexpr bool under_tsan = false;
#endif
#if defined(__SANITIZE_ADDRESS__) || !defined(NDEBUG)
constexpr bool slow_build = true;  // ASan or a Debug build: several times slower than Release
#else
constexpr bool slow_build = under_tsan;
#endif
/// A seed's hang detector, not a performance bound: far above what a loaded machine needs.
constexpr auto seed_deadline = slow_build ? std::chrono::seconds(120) : std::chrono::seconds(60);

const char* const topic = "events";

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::optional<std::uint64_t> env_u64(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return std::nullopt;
  std::uint64_t n = 0;
  auto [p, e] = std::from_chars(v, v + std::strlen(v), n);
  if (e != std::errc() || *p != 0) return std::nullopt;
  return n;
}
bool verbose() { return env_u64("BROOK_PUBSUB_VERBOSE").value_or(0) != 0; }

/// The seeds a scenario runs: BROOK_PUBSUB_SEED alone, or base+1..base+BROOK_PUBSUB_SEEDS
/// (default `n`; base is BROOK_SEED_BASE, see support/seeds.hpp).
std::vector<std::uint64_t> seeds(std::uint64_t n) {
  if (auto one = env_u64("BROOK_PUBSUB_SEED")) return {*one};
  n = env_u64("BROOK_PUBSUB_SEEDS").value_or(n);
  const std::uint64_t base = brook::test::seed_base();
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = base + 1; s <= base + n; ++s) out.push_back(s);
  return out;
}

/// A temporary directory for a scenario's data_dir, removed at the end. In RAM (/dev/shm) when
/// there is one: rolls, retention and topic changes fsync files and directories, and on a disk
/// those milliseconds, not the code under test, would set the running time. BROOK_PUBSUB_DIR
/// picks another parent directory.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& prefix) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path base = fs::temp_directory_path();
    if (const char* d = std::getenv("BROOK_PUBSUB_DIR"); d != nullptr && *d != 0)
      base = d;
    else if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0)
      base = "/dev/shm";
    std::string tmpl = (base / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path_ = tmpl;
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

std::vector<topic_partition> all_partitions(std::int32_t n) {
  std::vector<topic_partition> tps;
  for (std::int32_t p = 0; p < n; ++p) tps.push_back({topic, partition_id(p)});
  return tps;
}

// ------------------------------------------------------------------ record content

/// The key set: index -1 is a null key; "" (an empty, non-null key) is a key like any other.
const std::vector<std::string> keys = {"", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"};

/// What a record says about itself. Everything else about it is a function of these.
struct record_id {
  std::int32_t thread = 0;       // sending thread
  std::int64_t seq = 0;          // per-thread sequence
  std::int32_t key = -1;         // index into `keys`, -1 = null key
  std::int32_t explicit_p = -1;  // partition given in producer_record, -1 = partitioner's choice
};

/// "<thread>.<seq>.<key>.<explicit>.<padding>"; the padding (0..95 bytes) is derived from
/// (thread, seq), so the whole value can be recomputed from the first four fields.
std::string value_of(const record_id& r) {
  std::string v = fmt::format("{}.{}.{}.{}.", r.thread, r.seq, r.key, r.explicit_p);
  std::uint64_t x = splitmix((static_cast<std::uint64_t>(r.thread) << 40) ^ static_cast<std::uint64_t>(r.seq));
  const std::size_t n = x % 96;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 8 == 0) x = splitmix(x);
    v.push_back(static_cast<char>('a' + ((x >> (8 * (i % 8))) & 0xff) % 26));
  }
  return v;
}

template <typename Int>
bool take_int(std::string_view& s, Int& out) {
  auto dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  auto [p, e] = std::from_chars(s.data(), s.data() + dot, out);
  if (e != std::errc() || p != s.data() + dot) return false;
  s.remove_prefix(dot + 1);
  return true;
}

/// Parses and checks a consumed record's value and key; nullopt + `why` when it is not
/// exactly what value_of/key of its record_id would give.
std::optional<record_id> check_record(const consumer_record& rec, std::string& why) {
  const auto where = fmt::format("{}-{}@{}", rec.topic(), rec.partition(), rec.offset());
  if (rec.value().is_null()) {
    why = fmt::format("{}: null value", where);
    return std::nullopt;
  }
  const std::string_view v = rec.value().as_string_view();
  std::string_view s = v;
  record_id id;
  if (!take_int(s, id.thread) || !take_int(s, id.seq) || !take_int(s, id.key) || !take_int(s, id.explicit_p) ||
      id.key < -1 || id.key >= static_cast<std::int32_t>(keys.size())) {
    why = fmt::format("{}: garbage value '{}'", where, v.substr(0, 64));
    return std::nullopt;
  }
  if (v != value_of(id)) {
    why = fmt::format("{}: value '{}' differs from what was sent", where, v.substr(0, 64));
    return std::nullopt;
  }
  if (id.key < 0 ? !rec.key().is_null()
                 : rec.key().is_null() || rec.key().as_string_view() != keys[static_cast<std::size_t>(id.key)]) {
    why = fmt::format("{}: key does not match the value's key index {}", where, id.key);
    return std::nullopt;
  }
  return id;
}

/// Problems found on a worker thread, reported by the main thread (Catch2 is not thread-safe).
struct problems {
  std::mutex mu;
  std::vector<std::string> list;  // guarded by mu; the first 30
  std::size_t count = 0;          // guarded by mu
  void add(std::string s) {
    std::lock_guard lk(mu);
    ++count;
    if (list.size() < 30) list.push_back(std::move(s));
  }
  std::size_t size() {
    std::lock_guard lk(mu);
    return count;
  }
  std::string text() {
    std::lock_guard lk(mu);
    std::string out = fmt::format("{} problem(s):", count);
    for (const auto& s : list) out += "\n  " + s;
    return out;
  }
};

// One slot per sent record, written by its callback (on the sender thread).
struct ack_slot {
  std::atomic<int> calls{0};
  std::int32_t partition = -1;
  std::int64_t offset = -1;
  std::string error;
};

// ================================================================== 1. pub/sub

struct pubsub_params {
  std::int32_t partitions;
  int threads;
  int consumers;
  int mode;             // 0: a producer per thread, 1: one producer for all, 2: two producers shared
  int pause_every = 0;  // > 0: each sending thread sleeps briefly after this many records
  std::vector<std::int64_t> per_thread;
  producer_config pcfg;
  std::vector<consumer_config> ccfg;
  std::string describe() const {
    std::int64_t total = 0;
    for (auto n : per_thread) total += n;
    static const char* modes[] = {"own producer each", "one shared producer", "two shared producers"};
    std::string cs;
    for (const auto& c : ccfg)
      cs += fmt::format(
          "; consumer max.poll.records {} max.partition.fetch.bytes {} fetch.max.bytes {} "
          "fetch.min.bytes {} fetch.max.wait.ms {}",
          c.max_poll_records, c.max_partition_fetch_bytes, c.fetch_max_bytes, c.fetch_min_bytes,
          c.fetch_max_wait.count());
    return fmt::format(
        "{} partitions, {} sending threads ({}), {} consumers, {} records, batch.size {}, linger.ms {}, "
        "buffer.memory {}, acks {}, append_in_caller {}, pause every {}{}",
        partitions, threads, modes[mode], consumers, total, pcfg.batch_size, pcfg.linger.count(), pcfg.buffer_memory,
        static_cast<int>(pcfg.acks), pcfg.append_in_caller, pause_every, cs);
  }
};

pubsub_params make_pubsub_params(std::uint64_t seed) {
  std::mt19937_64 rng(splitmix(seed));
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  pubsub_params p;
  p.partitions = static_cast<std::int32_t>(pick(2, 6));
  p.mode = static_cast<int>(seed % 3);
  p.threads = static_cast<int>(p.mode == 0 ? pick(1, 4) : pick(2, 4));
  p.consumers = static_cast<int>(pick(1, 3));
  const std::int64_t total = under_tsan ? pick(1500, 4000) : pick(5000, 12000);
  for (int t = 0; t < p.threads; ++t) p.per_thread.push_back(total / p.threads);
  static const std::size_t batch_sizes[] = {200, 1024, 4096, 16384};
  p.pcfg.batch_size = batch_sizes[pick(0, 3)];
  p.pcfg.linger = std::chrono::milliseconds(pick(0, 3));
  p.pcfg.buffer_memory = pick(0, 3) == 0 ? 16 * 1024 : 32 * 1024 * 1024;  // sometimes back-pressure
  p.pcfg.acks = pick(0, 1) == 0 ? acks_mode::all : acks_mode::leader;
  // With linger.ms 0, a send() that finds the producer idle appends in its caller; pauses
  // between sends make the producer idle, so both paths (and switches between them) run.
  p.pcfg.append_in_caller = pick(0, 3) != 0;
  static const int pauses[] = {0, 4, 16, 64};
  p.pause_every = pauses[pick(0, 3)];
  for (int c = 0; c < p.consumers; ++c) {
    consumer_config cc;
    cc.auto_offset_reset = offset_reset::earliest;
    static const std::size_t poll_records[] = {1, 7, 100, 500};
    cc.max_poll_records = poll_records[pick(0, 3)];
    static const std::size_t part_bytes[] = {1, 300, 4096, 1024 * 1024};
    cc.max_partition_fetch_bytes = part_bytes[pick(0, 3)];
    // Small, but above the fetch.min.bytes below: a poll that can never reach fetch.min.bytes
    // waits fetch.max.wait.ms every time (as Kafka's broker does), which only costs time.
    cc.fetch_max_bytes = pick(0, 2) == 0 ? 8000 : 50 * 1024 * 1024;
    if (pick(0, 2) == 0) {  // wait for more than one record: the poll loop accumulates
      cc.fetch_min_bytes = 4096;
      cc.fetch_max_wait = std::chrono::milliseconds(pick(1, 10));
    }
    cc.check_crcs = pick(0, 1) == 0;
    p.ccfg.push_back(cc);
  }
  return p;
}

struct pubsub_shared {
  std::atomic<bool> producers_done{false};
  std::vector<std::int64_t> final_end;  // written before producers_done is set
  problems errs;
};

struct seen_record {
  std::int32_t thread;
  std::int64_t seq;
};

// One consumer thread: reads until it has every acked record, checking each as it comes.
void pubsub_consumer(data_dir& dd, const pubsub_params& prm, int id, pubsub_shared& sh,
                     std::vector<std::vector<seen_record>>& seen, steady::time_point deadline) {
  const auto tag = fmt::format("consumer {}", id);
  consumer c(dd, prm.ccfg[static_cast<std::size_t>(id)]);
  if (auto a = c.assign(all_partitions(prm.partitions)); !a) {
    sh.errs.add(fmt::format("{}: assign: {}", tag, a.error().to_string()));
    return;
  }
  seen.assign(static_cast<std::size_t>(prm.partitions), {});
  // last sequence per (thread, partition): one thread's records keep their order in a partition
  std::vector<std::vector<std::int64_t>> last_seq(
      static_cast<std::size_t>(prm.threads), std::vector<std::int64_t>(static_cast<std::size_t>(prm.partitions), -1));
  auto have_all = [&] {
    for (std::size_t p = 0; p < seen.size(); ++p)
      if (static_cast<std::int64_t>(seen[p].size()) < sh.final_end[p]) return false;
    return true;
  };
  for (;;) {
    const bool done = sh.producers_done.load(std::memory_order_acquire);
    if (done && have_all()) break;
    if (steady::now() > deadline) {
      std::string have;
      for (std::size_t p = 0; p < seen.size(); ++p)
        have += fmt::format(" p{}:{}/{}", p, seen[p].size(), done ? sh.final_end[p] : -1);
      sh.errs.add(
          fmt::format("{}: deadline passed before it saw every record (producers done: {});{}", tag, done, have));
      return;
    }
    auto r = c.poll(50ms);
    if (!r) {
      sh.errs.add(fmt::format("{}: poll failed: {}", tag, r.error().to_string()));
      return;
    }
    for (const consumer_record& rec : *r) {
      const auto p = static_cast<std::size_t>(rec.partition().value());
      if (rec.topic() != topic || p >= seen.size()) {
        sh.errs.add(fmt::format("{}: record from {}-{}", tag, rec.topic(), rec.partition()));
        continue;
      }
      const std::int64_t want = static_cast<std::int64_t>(seen[p].size());
      if (rec.offset().value() != want) {
        sh.errs.add(fmt::format("{}: partition {}: offset {} where {} was expected (gap, duplicate or reorder)", tag, p,
                                rec.offset(), want));
        return;  // every later offset would be off by as much: one report is enough
      }
      std::string why;
      auto idr = check_record(rec, why);
      if (!idr) {
        sh.errs.add(fmt::format("{}: {}", tag, why));
        seen[p].push_back({-1, -1});
        continue;
      }
      const record_id& rid = *idr;
      seen[p].push_back({rid.thread, rid.seq});
      if (rid.thread < 0 || rid.thread >= prm.threads || rid.seq < 0 ||
          rid.seq >= prm.per_thread[static_cast<std::size_t>(rid.thread)]) {
        sh.errs.add(fmt::format("{}: {}-{}@{}: no such record (thread {} seq {})", tag, topic, p, rec.offset(),
                                rid.thread, rid.seq));
        continue;
      }
      if (rid.explicit_p >= 0 && rid.explicit_p != static_cast<std::int32_t>(p))
        sh.errs.add(fmt::format("{}: record for explicit partition {} found in partition {} at {}", tag, rid.explicit_p,
                                p, rec.offset()));
      if (rid.explicit_p < 0 && rid.key >= 0) {
        const auto want_p = partition_for_key(nullable_bytes(keys[static_cast<std::size_t>(rid.key)]), prm.partitions);
        if (want_p.value() != static_cast<std::int32_t>(p))
          sh.errs.add(fmt::format("{}: key '{}' is in partition {} at {}; partition_for_key says {}", tag,
                                  keys[static_cast<std::size_t>(rid.key)], p, rec.offset(), want_p));
      }
      auto& last = last_seq[static_cast<std::size_t>(rid.thread)][p];
      if (rid.seq <= last)
        sh.errs.add(fmt::format("{}: partition {}: thread {} seq {} at offset {} after its seq {} (order broken)", tag,
                                p, rid.thread, rid.seq, rec.offset(), last));
      last = std::max(last, rid.seq);
    }
  }
  // Everything acked is consumed: one more poll must find nothing new.
  auto r = c.poll(1ms);
  if (!r)
    sh.errs.add(fmt::format("{}: final poll failed: {}", tag, r.error().to_string()));
  else if (!r->empty())
    sh.errs.add(fmt::format("{}: {} records after the last acked one (first {}-{}@{})", tag, r->size(), (*r)[0].topic(),
                            (*r)[0].partition(), (*r)[0].offset()));
}

void run_pubsub(std::uint64_t seed) {
  const pubsub_params prm = make_pubsub_params(seed);
  INFO("seed " << seed << " (rerun alone with BROOK_PUBSUB_SEED=" << seed << "): " << prm.describe());
  const auto started = steady::now();
  const auto deadline = started + seed_deadline;

  scratch_dir td("brook-pubsub");
  auto dd = data_dir::open(td.path() / "data");
  REQUIRE(dd);
  topic_config tc;
  tc.partitions = prm.partitions;
  REQUIRE((*dd)->create_topic(topic, tc));

  // Producers: own, one shared, or two shared, each with a seeded partitioner.
  const int nprod = prm.mode == 0 ? prm.threads : prm.mode == 1 ? 1 : std::min(2, prm.threads);
  std::vector<std::unique_ptr<producer>> producers;
  for (int i = 0; i < nprod; ++i) {
    producer_config pc = prm.pcfg;
    pc.partitioner = std::make_shared<default_partitioner>(static_cast<std::uint32_t>(splitmix(seed + 77 * i)));
    producers.push_back(std::make_unique<producer>(**dd, pc));
  }

  std::vector<std::unique_ptr<ack_slot[]>> acks;
  for (auto n : prm.per_thread) acks.push_back(std::make_unique<ack_slot[]>(static_cast<std::size_t>(n)));

  pubsub_shared sh;
  std::vector<std::vector<std::vector<seen_record>>> seen(static_cast<std::size_t>(prm.consumers));
  std::vector<std::thread> consumers;
  for (int c = 0; c < prm.consumers; ++c)
    consumers.emplace_back([&, c] { pubsub_consumer(**dd, prm, c, sh, seen[static_cast<std::size_t>(c)], deadline); });

  std::vector<std::thread> senders;
  for (int t = 0; t < prm.threads; ++t)
    senders.emplace_back([&, t] {
      producer& pr = *producers[static_cast<std::size_t>(t % nprod)];
      std::mt19937_64 rng(splitmix(seed * 1000 + static_cast<std::uint64_t>(t)));
      const std::int64_t n = prm.per_thread[static_cast<std::size_t>(t)];
      ack_slot* slots = acks[static_cast<std::size_t>(t)].get();
      const bool flush_at_end = rng() % 2 == 0;
      for (std::int64_t s = 0; s < n; ++s) {
        record_id id;
        id.thread = t;
        id.seq = s;
        const auto roll = rng() % 100;
        id.key = roll < 20 ? -1 : static_cast<std::int32_t>(rng() % keys.size());
        if (roll % 19 == 0)
          id.explicit_p = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(prm.partitions));
        const std::string value = value_of(id);
        producer_record rec;
        rec.topic = topic;
        if (id.key >= 0) rec.key = nullable_bytes(keys[static_cast<std::size_t>(id.key)]);
        rec.value = nullable_bytes(value);
        if (id.explicit_p >= 0) rec.partition = partition_id(id.explicit_p);
        ack_slot* slot = &slots[s];
        pr.send(rec, [slot](const result<record_metadata>& md) {
          if (md) {
            slot->partition = md->partition.value();
            slot->offset = md->offset.value();
          } else {
            slot->error = md.error().to_string();
          }
          slot->calls.fetch_add(1, std::memory_order_acq_rel);
        });
        if (s % 997 == 996 && rng() % 4 == 0) std::this_thread::yield();
        if (prm.pause_every > 0 && s % prm.pause_every == prm.pause_every - 1)
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40));
      }
      if (flush_at_end) {
        // flush() returns only once everything this thread sent has completed.
        if (auto f = pr.flush(); !f) sh.errs.add(fmt::format("thread {}: flush: {}", t, f.error().to_string()));
        std::int64_t missing = 0;
        for (std::int64_t s = 0; s < n; ++s)
          if (slots[s].calls.load(std::memory_order_acquire) == 0) ++missing;
        if (missing > 0)
          sh.errs.add(fmt::format("thread {}: flush() returned with {} of its {} sends not completed", t, missing, n));
      }
    });
  for (auto& t : senders) t.join();
  for (auto& p : producers) CHECK(p->close());  // joins the sender threads: the acks are complete

  // Acks: each exactly once, no errors, offsets per partition gapless from 0.
  std::vector<std::vector<int>> by_offset(static_cast<std::size_t>(prm.partitions));
  std::int64_t ack_errors = 0, bad_calls = 0;
  std::string first_ack_problem;
  for (int t = 0; t < prm.threads; ++t)
    for (std::int64_t s = 0; s < prm.per_thread[static_cast<std::size_t>(t)]; ++s) {
      const ack_slot& a = acks[static_cast<std::size_t>(t)][static_cast<std::size_t>(s)];
      const int calls = a.calls.load(std::memory_order_acquire);
      if (calls != 1) {
        ++bad_calls;
        if (first_ack_problem.empty())
          first_ack_problem = fmt::format("thread {} seq {}: callback called {} times", t, s, calls);
        continue;
      }
      if (!a.error.empty()) {
        ++ack_errors;
        if (first_ack_problem.empty()) first_ack_problem = fmt::format("thread {} seq {}: {}", t, s, a.error);
        continue;
      }
      if (a.partition < 0 || a.partition >= prm.partitions || a.offset < 0) {
        ++bad_calls;
        if (first_ack_problem.empty())
          first_ack_problem = fmt::format("thread {} seq {}: acked at {}@{}", t, s, a.partition, a.offset);
        continue;
      }
      auto& v = by_offset[static_cast<std::size_t>(a.partition)];
      if (v.size() <= static_cast<std::size_t>(a.offset)) v.resize(static_cast<std::size_t>(a.offset) + 1, 0);
      ++v[static_cast<std::size_t>(a.offset)];
    }
  INFO(first_ack_problem);
  CHECK(bad_calls == 0);
  CHECK(ack_errors == 0);
  sh.final_end.assign(static_cast<std::size_t>(prm.partitions), 0);
  for (std::size_t p = 0; p < by_offset.size(); ++p) {
    const auto& v = by_offset[p];
    const auto holes = std::count(v.begin(), v.end(), 0);
    const auto dups = std::count_if(v.begin(), v.end(), [](int x) { return x > 1; });
    INFO("partition " << p << ": " << v.size() << " offsets acked, " << holes << " holes, " << dups << " duplicates");
    CHECK(holes == 0);
    CHECK(dups == 0);
    sh.final_end[p] = static_cast<std::int64_t>(v.size());
    auto part = (*dd)->get_partition(topic, partition_id(static_cast<std::int32_t>(p)));
    CHECK((part && (*part)->high_watermark().value() == sh.final_end[p]));
  }
  sh.producers_done.store(true, std::memory_order_release);
  for (auto& t : consumers) t.join();

  // Every acked record reached every consumer exactly once, at its acked partition and offset
  // (offsets were checked gapless as they came; here the content at each offset).
  if (sh.errs.size() == 0) {
    for (int c = 0; c < prm.consumers; ++c) {
      std::int64_t mismatches = 0;
      std::string first;
      const auto& sc = seen[static_cast<std::size_t>(c)];
      for (int t = 0; t < prm.threads; ++t)
        for (std::int64_t s = 0; s < prm.per_thread[static_cast<std::size_t>(t)]; ++s) {
          const ack_slot& a = acks[static_cast<std::size_t>(t)][static_cast<std::size_t>(s)];
          if (a.partition < 0) continue;
          const auto& sp = sc[static_cast<std::size_t>(a.partition)];
          const auto o = static_cast<std::size_t>(a.offset);
          if (o >= sp.size() || sp[o].thread != t || sp[o].seq != s) {
            if (++mismatches == 1)
              first = fmt::format(
                  "thread {} seq {} acked at {}@{}, consumer saw {}", t, s, a.partition, a.offset,
                  o < sp.size() ? fmt::format("thread {} seq {}", sp[o].thread, sp[o].seq) : std::string("nothing"));
          }
        }
      INFO("consumer " << c << ": " << first);
      CHECK(mismatches == 0);
    }
  }
  INFO(sh.errs.text());
  CHECK(sh.errs.size() == 0);
  if (verbose())
    fmt::print("pubsub seed {}: {}; {} ms\n", seed, prm.describe(),
               std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count());
}

// ================================================================== 2. retention

struct retention_shared {
  std::atomic<bool> producers_done{false};
  std::vector<std::int64_t> final_end;  // written before producers_done is set
  problems errs;
};

struct consumed {
  std::int32_t partition;
  std::int64_t offset;
  record_id id;
};

struct retention_consumer_result {
  std::vector<consumed> records;
  std::int64_t resets = 0;        // jumps forward over deleted offsets (earliest)
  std::int64_t out_of_range = 0;  // offset_out_of_range errors (none)
  std::int64_t polls = 0;
  // The first non-empty poll, kept while retention deletes its segment, with deep copies.
  std::optional<consumer_records> held;
  std::vector<owned_record> held_copy;
};

enum class consumer_kind { fast_earliest, slow_earliest, slow_none };

void retention_consumer(data_dir& dd, std::int32_t partitions, consumer_kind kind, retention_shared& sh,
                        retention_consumer_result& out, steady::time_point deadline, std::uint64_t seed) {
  const char* names[] = {"fast earliest consumer", "slow earliest consumer", "slow none consumer"};
  const std::string tag = names[static_cast<int>(kind)];
  consumer_config cc;
  cc.auto_offset_reset = kind == consumer_kind::slow_none ? offset_reset::none : offset_reset::earliest;
  cc.max_poll_records = kind == consumer_kind::fast_earliest ? 500 : 4;
  cc.max_partition_fetch_bytes = kind == consumer_kind::fast_earliest ? 64 * 1024 : 1;
  consumer c(dd, cc);
  const auto tps = all_partitions(partitions);
  if (auto a = c.assign(tps); !a) return sh.errs.add(tag + ": assign: " + a.error().to_string());
  if (kind == consumer_kind::slow_none)
    if (auto s = c.seek_to_beginning(tps); !s) return sh.errs.add(tag + ": seek: " + s.error().to_string());
  std::vector<std::shared_ptr<partition>> parts;
  for (const auto& tp : tps) parts.push_back(*dd.get_partition(tp.topic, tp.partition));
  std::vector<std::int64_t> next(static_cast<std::size_t>(partitions), 0);  // the next offset expected
  if (kind == consumer_kind::slow_none)
    for (const auto& tp : tps) {  // retention may have moved the log start before this thread started
      auto pos = c.position(tp);
      if (!pos) return sh.errs.add(tag + ": position: " + pos.error().to_string());
      next[static_cast<std::size_t>(tp.partition.value())] = pos->value();
    }
  std::mt19937_64 rng(seed);

  for (;;) {
    if (sh.producers_done.load(std::memory_order_acquire)) {
      bool all = true;
      for (const auto& tp : tps) {
        auto pos = c.position(tp);
        if (!pos) {  // none: a position below the log start is only found by the fetch
          all = false;
          break;
        }
        if (pos->value() < sh.final_end[static_cast<std::size_t>(tp.partition.value())]) all = false;
      }
      if (all) break;
    }
    if (steady::now() > deadline) return sh.errs.add(tag + ": deadline passed before it reached the log end");
    // The slow ones dawdle while the producers write, so they fall behind the retained data.
    if (kind != consumer_kind::fast_earliest && !sh.producers_done.load(std::memory_order_acquire))
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2500));
    ++out.polls;
    auto r = c.poll(20ms);
    if (!r) {
      if (!(r.error() == errc::offset_out_of_range) || kind != consumer_kind::slow_none)
        return sh.errs.add(fmt::format("{}: poll failed: {}", tag, r.error().to_string()));
      ++out.out_of_range;
      // Which partitions fell below the log start? Seek those to the beginning.
      bool justified = false;
      for (const auto& tp : tps) {
        const auto p = static_cast<std::size_t>(tp.partition.value());
        auto pos = c.position(tp);
        if (!pos) return sh.errs.add(tag + ": position: " + pos.error().to_string());
        if (pos->value() != next[p]) {
          sh.errs.add(
              fmt::format("{}: partition {}: position {} after a poll that failed with offset_out_of_range, "
                          "but the last record returned was at {}: records fetched from it were dropped",
                          tag, p, *pos, next[p] - 1));
          next[p] = pos->value();  // reported once here, not again as a gap
        }
        if (*pos < parts[p]->log_start_offset()) {
          justified = true;
          if (auto s = c.seek_to_beginning({tp}); !s) return sh.errs.add(tag + ": seek: " + s.error().to_string());
          auto np = c.position(tp);
          if (!np) return sh.errs.add(tag + ": position: " + np.error().to_string());
          if (np->value() < next[p])
            return sh.errs.add(
                fmt::format("{}: partition {}: the log start {} is below the last position {}", tag, p, *np, next[p]));
          next[p] = np->value();
        }
      }
      if (!justified)
        sh.errs.add(fmt::format("{}: offset_out_of_range but every position is inside its log: {}", tag,
                                r.error().to_string()));
      continue;
    }
    for (const consumer_record& rec : *r) {
      const auto p = static_cast<std::size_t>(rec.partition().value());
      const std::int64_t o = rec.offset().value();
      std::string why;
      auto id = check_record(rec, why);
      if (!id) {
        sh.errs.add(tag + ": " + why);
        continue;
      }
      if (o < next[p]) {
        sh.errs.add(
            fmt::format("{}: partition {}: offset {} after {} (went backwards or repeated)", tag, p, o, next[p] - 1));
      } else if (o > next[p]) {
        // Skipped offsets [next, o): allowed only for an earliest consumer whose position fell
        // below the log start, and then only over offsets retention has deleted.
        const std::int64_t log_start = parts[p]->log_start_offset().value();
        if (kind == consumer_kind::slow_none)
          sh.errs.add(fmt::format(
              "{}: partition {}: skipped offsets [{}, {}) without offset_out_of_range (log start now {}: {})", tag, p,
              next[p], o, log_start,
              next[p] >= log_start ? "the skipped records still exist: fetched, then dropped by a failed poll"
                                   : "read below the log start slipped into the next segment"));
        else if (next[p] >= log_start)
          sh.errs.add(fmt::format("{}: partition {}: skipped offsets [{}, {}) that are still in the log (start {})",
                                  tag, p, next[p], o, log_start));
        else
          ++out.resets;
      }
      next[p] = std::max(next[p], o + 1);
      out.records.push_back({rec.partition().value(), o, *id});
    }
    if (kind == consumer_kind::fast_earliest && !out.held && !r->empty()) {
      for (const auto& rec : *r) out.held_copy.push_back(rec.to_owned());
      out.held = std::move(*r);
    }
  }
}

void run_retention(std::uint64_t seed) {
  std::mt19937_64 rng(splitmix(seed ^ 0x5eed));
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  const auto partitions = static_cast<std::int32_t>(pick(2, 3));
  const std::int64_t segment_bytes = pick(2048, 6144);
  const std::int64_t retention_bytes = segment_bytes * pick(1, 3);
  const bool own_housekeeping = seed % 2 == 0;
  const int threads = static_cast<int>(pick(1, 2));
  // Every roll and deletion fsyncs files and the directory (milliseconds each): the record
  // count, not CPU, sets this scenario's running time.
  const std::int64_t per_thread = (under_tsan ? 5000 : 12000) / threads;
  const auto desc = fmt::format(
      "{} partitions, segment.bytes {}, retention.bytes {}, {} sending threads x {} records, housekeeping by {}",
      partitions, segment_bytes, retention_bytes, threads, per_thread,
      own_housekeeping ? "start_housekeeping(1ms)" : "a thread calling tick()");
  INFO("seed " << seed << " (rerun alone with BROOK_PUBSUB_SEED=" << seed << "): " << desc);
  const auto started = steady::now();
  const auto deadline = started + seed_deadline;

  scratch_dir td("brook-pubsub-ret");
  auto dd = data_dir::open(td.path() / "data");
  REQUIRE(dd);
  topic_config tc;
  tc.partitions = partitions;
  tc.overrides["segment.bytes"] = std::to_string(segment_bytes);
  tc.overrides["retention.bytes"] = std::to_string(retention_bytes);
  tc.overrides["segment.index.bytes"] = "1024";
  tc.overrides["index.interval.bytes"] = "512";
  REQUIRE((*dd)->create_topic(topic, tc));

  retention_shared sh;
  std::atomic<bool> stop_ticking{false};
  std::atomic<std::int64_t> tick_errors{0};
  std::thread ticker;
  if (own_housekeeping) {
    (*dd)->start_housekeeping(1ms);
  } else {
    ticker = std::thread([&] {
      while (!stop_ticking.load(std::memory_order_acquire)) {
        if (auto t = (*dd)->tick(); !t) {
          if (tick_errors.fetch_add(1) == 0) sh.errs.add("tick: " + t.error().to_string());
        }
        std::this_thread::sleep_for(500us);
      }
    });
  }

  const consumer_kind kinds[] = {consumer_kind::fast_earliest, consumer_kind::slow_earliest, consumer_kind::slow_none};
  std::vector<retention_consumer_result> results(3);
  std::vector<std::thread> consumers;
  for (std::size_t k = 0; k < 3; ++k)
    consumers.emplace_back(
        [&, k] { retention_consumer(**dd, partitions, kinds[k], sh, results[k], deadline, splitmix(seed + k)); });

  producer_config pc;
  pc.batch_size = static_cast<std::size_t>(pick(300, 2000));
  pc.linger = std::chrono::milliseconds(pick(0, 2));
  pc.partitioner = std::make_shared<default_partitioner>(static_cast<std::uint32_t>(seed));
  producer prod(**dd, pc);
  std::vector<std::unique_ptr<ack_slot[]>> acks;
  for (int t = 0; t < threads; ++t) acks.push_back(std::make_unique<ack_slot[]>(static_cast<std::size_t>(per_thread)));
  std::vector<std::thread> senders;
  for (int t = 0; t < threads; ++t)
    senders.emplace_back([&, t] {
      std::mt19937_64 trng(splitmix(seed * 31 + static_cast<std::uint64_t>(t)));
      for (std::int64_t s = 0; s < per_thread; ++s) {
        record_id id{t, s, static_cast<std::int32_t>(trng() % (keys.size() + 1)) - 1, -1};
        const std::string value = value_of(id);
        producer_record rec;
        rec.topic = topic;
        if (id.key >= 0) rec.key = nullable_bytes(keys[static_cast<std::size_t>(id.key)]);
        rec.value = nullable_bytes(value);
        ack_slot* slot = &acks[static_cast<std::size_t>(t)][static_cast<std::size_t>(s)];
        prod.send(rec, [slot](const result<record_metadata>& md) {
          if (md) {
            slot->partition = md->partition.value();
            slot->offset = md->offset.value();
          } else {
            slot->error = md.error().to_string();
          }
          slot->calls.fetch_add(1, std::memory_order_acq_rel);
        });
        if (s % 64 == 63) std::this_thread::sleep_for(std::chrono::microseconds(trng() % 300));
      }
    });
  for (auto& t : senders) t.join();
  CHECK(prod.close());

  std::int64_t ack_problems = 0;
  std::map<std::pair<std::int32_t, std::int64_t>, std::pair<std::int32_t, std::int64_t>> acked;  // (p, o) -> (t, s)
  for (int t = 0; t < threads; ++t)
    for (std::int64_t s = 0; s < per_thread; ++s) {
      const ack_slot& a = acks[static_cast<std::size_t>(t)][static_cast<std::size_t>(s)];
      if (a.calls.load(std::memory_order_acquire) != 1 || !a.error.empty() || a.offset < 0) {
        ++ack_problems;
        continue;
      }
      acked[{a.partition, a.offset}] = {t, s};
    }
  CHECK(ack_problems == 0);
  sh.final_end.assign(static_cast<std::size_t>(partitions), 0);
  std::int64_t log_start_sum = 0;
  for (std::int32_t p = 0; p < partitions; ++p) {
    auto part = *(*dd)->get_partition(topic, partition_id(p));
    sh.final_end[static_cast<std::size_t>(p)] = part->high_watermark().value();
    log_start_sum += part->log_start_offset().value();
  }
  sh.producers_done.store(true, std::memory_order_release);
  for (auto& t : consumers) t.join();

  // One housekeeping pass more, so the held slice's segment is surely gone (it is the first
  // segment of its partition, far below retention.bytes of newer data).
  CHECK((*dd)->tick());
  if (own_housekeeping) {
    (*dd)->stop_housekeeping();
    auto e = (*dd)->last_housekeeping_error();
    CHECK_FALSE(e.has_value());
  } else {
    stop_ticking.store(true, std::memory_order_release);
    ticker.join();
  }
  CHECK(tick_errors.load() == 0);

  // Whatever a consumer saw is what was acked at that partition and offset.
  for (std::size_t k = 0; k < 3; ++k) {
    std::int64_t wrong = 0;
    std::string first;
    for (const auto& c : results[k].records) {
      auto it = acked.find({c.partition, c.offset});
      if (it == acked.end() || it->second != std::make_pair(c.id.thread, c.id.seq)) {
        if (++wrong == 1)
          first =
              fmt::format("{}@{} holds thread {} seq {}, acked there: {}", c.partition, c.offset, c.id.thread, c.id.seq,
                          it == acked.end() ? std::string("nothing")
                                            : fmt::format("thread {} seq {}", it->second.first, it->second.second));
      }
    }
    INFO("consumer " << k << ": " << first);
    CHECK(wrong == 0);
  }

  // The held poll result: its segment was deleted by retention, its views still read the
  // original bytes.
  auto& fast = results[0];
  std::int64_t held_checked = 0;
  if (fast.held) {
    std::int64_t differ = 0;
    REQUIRE(fast.held->size() == fast.held_copy.size());
    for (std::size_t i = 0; i < fast.held->size(); ++i) {
      const consumer_record& r = (*fast.held)[i];
      const owned_record& o = fast.held_copy[i];
      auto part = *(*dd)->get_partition(topic, r.partition());
      const bool deleted = r.offset() < part->log_start_offset();
      if (!deleted) continue;
      ++held_checked;
      const bool same = r.offset() == o.offset && r.partition() == o.partition &&
                        r.key().is_null() == !o.key.has_value() && (!o.key || r.key().as_string_view() == *o.key) &&
                        o.value && r.value().as_string_view() == *o.value;
      std::string why;
      if (!same || !check_record(r, why)) ++differ;
    }
    INFO("held records whose segment is deleted: " << held_checked);
    CHECK(held_checked > 0);  // the first poll's records are far below the final log start
    CHECK(differ == 0);
  }

  INFO(sh.errs.text());
  CHECK(sh.errs.size() == 0);
  // The scenario did what it is for: retention deleted data under the readers.
  CHECK(log_start_sum > 0);
  if (verbose())
    fmt::print(
        "retention seed {}: {}; log start sum {}; records seen fast {} slow {} none {}; resets slow {} fast {}; "
        "out_of_range {}; held checked {}; {} ms\n",
        seed, desc, log_start_sum, results[0].records.size(), results[1].records.size(), results[2].records.size(),
        results[1].resets, results[0].resets, results[2].out_of_range, held_checked,
        std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count());
}

/// Sends `n` records to partition p and waits for them.
void produce_to(data_dir& dd, std::int32_t p, int n, const std::string& prefix) {
  producer prod(dd);
  std::vector<std::future<result<record_metadata>>> fs;
  for (int i = 0; i < n; ++i) {
    const std::string v = fmt::format("{}-{}", prefix, i);
    producer_record rec;
    rec.topic = topic;
    rec.partition = partition_id(p);
    rec.value = nullable_bytes(v);
    fs.push_back(prod.send(rec));
  }
  REQUIRE(prod.flush());
  for (auto& f : fs) REQUIRE(f.get());
}

}  // namespace

TEST_CASE("pub/sub: every acked record reaches every consumer once, in order, on its key's partition",
          "[client][threaded][scenario]") {
  for (auto seed : seeds(20)) run_pubsub(seed);
}

TEST_CASE("pub/sub with retention deleting segments under the consumers", "[client][threaded][scenario]") {
  for (auto seed : seeds(under_tsan ? 6 : 10)) run_retention(seed);
}

TEST_CASE("offset_out_of_range on one partition does not lose records fetched from another in the same poll",
          "[client][threaded][scenario]") {
  // Deterministic: partition 0 has records at 0..9 in range; partition 1's log start moves
  // past the consumer's position. A poll under auto.offset.reset=none fails; the records of
  // partition 0 must still come (Kafka's fetcher returns what it has and raises the error on
  // the next poll; either way nothing may be skipped).
  scratch_dir td("brook-pubsub-oor");
  auto dd = data_dir::open(td.path() / "data");
  REQUIRE(dd);
  topic_config tc;
  tc.partitions = 2;
  REQUIRE((*dd)->create_topic(topic, tc));
  produce_to(**dd, 0, 10, "zero");
  produce_to(**dd, 1, 10, "one");
  auto p1 = *(*dd)->get_partition(topic, partition_id(1));
  REQUIRE(p1->log().delete_records_before(offset(5)));

  consumer_config cc;
  cc.auto_offset_reset = offset_reset::none;
  consumer c(**dd, cc);
  const auto tps = all_partitions(2);
  REQUIRE(c.assign(tps));
  REQUIRE(c.seek(tps[0], offset(0)));
  REQUIRE(c.seek(tps[1], offset(0)));

  std::vector<std::int64_t> got0;
  bool saw_error = false;
  for (int i = 0; i < 10 && got0.size() < 10; ++i) {
    auto r = c.poll(100ms);
    if (!r) {
      INFO(r.error().to_string());
      REQUIRE(r.error() == errc::offset_out_of_range);
      saw_error = true;
      REQUIRE(c.seek_to_beginning({tps[1]}));
      continue;
    }
    for (const auto& rec : *r)
      if (rec.partition() == partition_id(0)) got0.push_back(rec.offset().value());
  }
  CHECK(saw_error);
  INFO("partition 0 offsets returned: " << fmt::format("{}", fmt::join(got0, ",")));
  CHECK(got0 == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("wakeup() ends a blocked poll, and a blocked poll wakes for a new record", "[client][threaded][scenario]") {
  scratch_dir td("brook-pubsub-wakeup");
  auto dd = data_dir::open(td.path() / "data");
  REQUIRE(dd);
  topic_config tc;
  tc.partitions = 3;
  REQUIRE((*dd)->create_topic(topic, tc));
  const auto tps = all_partitions(3);
  // Timeouts far beyond any bound checked below: a poll that returns before them returned
  // because it was woken, not because it timed out. No tight timing is asserted.
  constexpr auto long_poll = 30s;
  constexpr auto generous = 20s;
  consumer_config cc;
  cc.auto_offset_reset = offset_reset::earliest;
  cc.fetch_max_wait = 60s;  // longer than the poll: only a notification can end the wait early

  SECTION("wakeup() from another thread ends a poll blocked on an empty topic") {
    std::mt19937_64 rng(splitmix(env_u64("BROOK_PUBSUB_SEED").value_or(1)));
    const int rounds = under_tsan ? 10 : 40;
    for (int i = 0; i < rounds; ++i) {
      INFO("round " << i);
      consumer c(**dd, cc);
      REQUIRE(c.assign(tps));
      std::atomic<bool> started{false};
      auto fut = std::async(std::launch::async, [&] {
        started.store(true, std::memory_order_release);
        const auto t0 = steady::now();
        auto r = c.poll(long_poll);
        return std::make_pair(r.has_value() ? std::optional<error>() : std::optional<error>(r.error()),
                              steady::now() - t0);
      });
      while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
      // Sometimes at once (racing the poll's start), sometimes once it is surely blocked.
      const auto delay = rng() % 3 == 0 ? std::chrono::microseconds(0) : std::chrono::microseconds(rng() % 5000);
      std::this_thread::sleep_for(delay);
      c.wakeup();
      REQUIRE(fut.wait_for(generous) == std::future_status::ready);
      auto [err, took] = fut.get();
      REQUIRE(err.has_value());
      CHECK(*err == errc::wakeup);
      CHECK(took < long_poll / 2);
      // The wakeup is used up: the next poll waits normally (and times out empty).
      auto r = c.poll(1ms);
      REQUIRE(r);
      CHECK(r->empty());
    }
  }

  SECTION("wakeup() before poll() makes the next poll return at once, only for that consumer") {
    consumer a(**dd, cc), b(**dd, cc);
    REQUIRE(a.assign(tps));
    REQUIRE(b.assign(tps));
    a.wakeup();
    const auto t0 = steady::now();
    auto r = a.poll(long_poll);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::wakeup);
    CHECK(steady::now() - t0 < generous);
    // Waking b while a waits must not end a's poll with wakeup: a times out empty.
    auto fa = std::async(std::launch::async, [&] { return a.poll(300ms); });
    auto fb = std::async(std::launch::async, [&] { return b.poll(long_poll); });
    std::this_thread::sleep_for(20ms);
    b.wakeup();
    REQUIRE(fb.wait_for(generous) == std::future_status::ready);
    auto rb = fb.get();
    REQUIRE_FALSE(rb);
    CHECK(rb.error() == errc::wakeup);
    auto ra = fa.get();
    REQUIRE(ra);
    CHECK(ra->empty());
  }

  SECTION("a poll blocked on an empty topic returns the record as soon as it is produced") {
    for (int i = 0; i < (under_tsan ? 3 : 10); ++i) {
      INFO("round " << i);
      consumer c(**dd, cc);
      REQUIRE(c.assign(tps));
      REQUIRE(c.seek_to_end(tps));
      for (const auto& tp : tps) REQUIRE(c.position(tp));  // resolves the lazy seek before producing
      std::atomic<bool> started{false};
      auto fut = std::async(std::launch::async, [&] {
        started.store(true, std::memory_order_release);
        const auto t0 = steady::now();
        auto r = c.poll(long_poll);
        std::vector<owned_record> recs;
        std::optional<error> err;
        if (r)
          for (const auto& rec : *r) recs.push_back(rec.to_owned());
        else
          err = r.error();
        return std::make_tuple(err, recs, steady::now() - t0);
      });
      while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(i % 3 * 10));
      const std::string v = fmt::format("wake-{}", i);
      {
        producer prod(**dd);
        producer_record rec;
        rec.topic = topic;
        rec.key = nullable_bytes(keys[static_cast<std::size_t>(i) % keys.size()]);
        rec.value = nullable_bytes(v);
        auto md = prod.send(rec).get();
        REQUIRE(md);
      }
      REQUIRE(fut.wait_for(generous) == std::future_status::ready);
      auto [err, recs, took] = fut.get();
      INFO((err ? err->to_string() : std::string("no error")));
      REQUIRE_FALSE(err.has_value());
      REQUIRE(recs.size() == 1);
      CHECK(recs[0].value == v);
      CHECK(took < long_poll / 2);  // returned because of the record, not the timeout
    }
  }

  SECTION("records fetched by a poll that wakeup() interrupts are not lost") {
    // fetch.min.bytes far above what is there: poll fetches the 3 records, then waits for more;
    // wakeup() ends that wait. The records were never returned, so the next poll must return
    // them (Kafka keeps fetched records buffered and moves the position only when it returns them).
    produce_to(**dd, 0, 3, "pending");
    consumer_config big = cc;
    big.fetch_min_bytes = 1024 * 1024;
    consumer c(**dd, big);
    REQUIRE(c.assign({tps[0]}));
    auto fut = std::async(std::launch::async, [&] { return c.poll(long_poll); });
    std::this_thread::sleep_for(300ms);  // the poll's first fetch happens right away
    c.wakeup();
    REQUIRE(fut.wait_for(generous) == std::future_status::ready);
    auto r = fut.get();
    REQUIRE_FALSE(r);
    REQUIRE(r.error() == errc::wakeup);
    auto pos = c.position(tps[0]);
    REQUIRE(pos);
    CHECK(pos->value() == 0);    // nothing was returned yet
    auto again = c.poll(200ms);  // returns what it has when the poll times out
    REQUIRE(again);
    std::vector<std::int64_t> offs;
    for (const auto& rec : *again) offs.push_back(rec.offset().value());
    INFO("offsets returned after the wakeup: " << fmt::format("{}", fmt::join(offs, ",")));
    CHECK(offs == std::vector<std::int64_t>{0, 1, 2});
  }
}

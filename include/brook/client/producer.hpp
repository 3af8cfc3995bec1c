// The producer: Kafka's KafkaProducer, in-process. send() picks a partition (keyed
// records by murmur2, others by the configured partitioner), adds the record to that
// partition's open batch in the accumulator, and returns at once; a sender thread owned
// by the producer appends closed batches to the partitions' logs and completes each
// record's callback or future with (topic, partition, offset, timestamp) or an error.
//
// A batch closes when the next record would take it past batch.size, when it has been
// open for linger.ms, on flush(), or on close(). With linger.ms = 0 a batch closes as soon
// as the sender thread is free, so records sent while it is busy still share batches. buffer.memory bounds the bytes
// held in batches not yet appended; a send() that would exceed it blocks up to max.block.ms and then fails with
// errc::timeout (while it waits, every open batch counts as ready, as in Kafka). A record larger than max.request.size
// or buffer.memory fails with record_too_large without being queued.
//
// Errors are never swallowed: every send() completes its callback or future exactly
// once, with the record's metadata or the error. Callbacks never run while a producer lock
// is held. With a data directory they run on the sender thread (errors found in send() on
// the calling thread), and a callback may call send() again. With a cluster they run on the
// thread that completed the request (a fetcher thread, the cluster's control thread, the
// thread calling cluster::step(), or the sender): such a callback must not block (no
// flush() or close(), and no send() that could wait for buffer.memory), since the thread it
// holds may be the one that would complete what it waits for.
//
// Batches go to a produce_target (produce_target.hpp): a data directory (one replica:
// acks=1 and acks=all complete after the append; acks=0 completes after the append too but
// reports offset -1, as Kafka's producer does), or a replicated cluster's leaders, where
// acks=all completes once the ISR has the batch (replication/cluster.hpp) and
// request.timeout.ms bounds the wait. The cluster enforces that bound, so it must keep
// running (start(), or step() calls) until its producers are closed: flush() and close()
// wait for every batch. A failed batch is not retried (Kafka's retries=0): its records
// complete with the error, so a record is never written twice by the producer.
//
// Thread-safety: send(), flush() and close() may be called from any number of threads.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/client/partitioner.hpp>
#include <brook/client/produce_target.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/data_dir.hpp>

namespace brook {

/// The key or value of a producer_record: borrowed bytes (a nullable_bytes) that cannot be
/// made from a temporary std::string. `rec.key = fmt::format(...)` would leave the record
/// pointing at a string destroyed at the end of that statement; it does not compile (the
/// rvalue constructor is deleted). Keep the string in a variable that outlives send().
/// Thread-safety: a value.
class record_bytes : public nullable_bytes {
 public:
  using nullable_bytes::nullable_bytes;
  record_bytes() noexcept = default;
  record_bytes(const nullable_bytes& b) noexcept : nullable_bytes(b) {}  // NOLINT: implicit
  record_bytes(const std::string& s) noexcept : nullable_bytes(s) {}     // NOLINT: implicit
  record_bytes(std::string&&) = delete;                                  // would dangle: see above
};

/// A record to send. The bytes are borrowed for the duration of send() only: send() copies them.
struct producer_record {
  std::string topic{};
  std::optional<partition_id> partition{};  ///< explicit partition; else the partitioner decides
  record_bytes key{};
  record_bytes value{};
  std::span<const record_header> headers{};
  std::optional<timestamp_ms> timestamp{};  ///< CreateTime; default: the producer's clock at send()
};

/// Where a record landed.
struct record_metadata {
  std::string topic;
  partition_id partition{0};
  brook::offset offset{-1};     ///< -1 with acks=0
  timestamp_ms timestamp = -1;  ///< CreateTime, or the log's append time for LogAppendTime topics
};

using send_callback = std::function<void(const result<record_metadata>&)>;

struct producer_config {
  /// acks: 0 (none), 1 (leader), all (-1). Default all (Kafka 3.0+).
  acks_mode acks = acks_mode::all;
  /// batch.size: bytes of records per partition batch. Default 16384.
  std::size_t batch_size = 16384;
  /// linger.ms: how long an open batch waits for more records. Default 5 (Kafka 4.0).
  std::chrono::milliseconds linger{5};
  /// buffer.memory: bytes of records held in batches not yet appended. Default 32 MiB.
  std::size_t buffer_memory = 32 * 1024 * 1024;
  /// max.block.ms: how long send() blocks for buffer space. Default 60000.
  std::chrono::milliseconds max_block{60000};
  /// max.request.size: the largest record (as a one-record batch) accepted. Default 1 MiB.
  std::size_t max_request_size = 1024 * 1024;
  /// partitioner.class: null = default_partitioner (murmur2 for keys, sticky otherwise).
  std::shared_ptr<brook::partitioner> partitioner{};
  /// request.timeout.ms: how long a batch may wait for acks=all. Default 30000.
  std::chrono::milliseconds request_timeout{30000};
};

class producer {
 public:
  /// A producer appending to `dd`'s partitions.
  producer(data_dir& dd, producer_config cfg = {})
      : owned_target_(std::make_unique<data_dir_target>(dd)), target_(*owned_target_), cfg_(std::move(cfg)) {
    start();
  }
  /// A producer sending to `target` (e.g. a cluster_target), which must outlive it.
  producer(produce_target& target, producer_config cfg = {}) : target_(target), cfg_(std::move(cfg)) { start(); }
  producer(const producer&) = delete;
  producer& operator=(const producer&) = delete;
  ~producer() { (void)close(); }

  /// Sends a record; `cb` is called exactly once with the result. See the header comment.
  void send(const producer_record& rec, send_callback cb) {
    auto e = enqueue(rec, std::move(cb));
    if (!e) finish_now(e.error(), std::move(*e.error_cb));
  }

  /// Sends a record; the future yields its metadata or error.
  std::future<result<record_metadata>> send(const producer_record& rec) {
    auto p = std::make_shared<std::promise<result<record_metadata>>>();
    auto f = p->get_future();
    send(rec, [p](const result<record_metadata>& r) { p->set_value(r); });
    return f;
  }

  /// Closes every open batch and waits until everything sent before this call completed.
  /// REQUIRES: not called from a send callback (callbacks run on the sender thread, which
  /// flush() waits for; as in Kafka, that would deadlock).
  result<void> flush() {
    std::unique_lock lk(mu_);
    close_all_open_locked();
    const std::uint64_t target = enqueued_seq_;
    wake_sender_locked();
    // Done when no unfinished batch holds a record sent before this call.
    ++done_waiters_;
    done_cv_.wait(lk, [&] { return incomplete_.empty() || *incomplete_.begin() > target; });
    --done_waiters_;
    return ok();
  }

  /// Flushes and stops the sender thread. Later sends fail with errc::closed. Concurrent
  /// calls all return once it is closed. REQUIRES: not called from a send callback.
  result<void> close() {
    std::lock_guard close_lock(close_mu_);
    {
      std::unique_lock lk(mu_);
      if (closed_) return ok();
      closing_ = true;
    }
    auto r = flush();
    {
      std::lock_guard lk(mu_);
      closed_ = true;
    }
    cv_.notify_all();
    if (sender_.joinable()) sender_.join();
    return r;
  }

  const producer_config& config() const noexcept { return cfg_; }

 private:
  struct pending {
    send_callback cb;
    timestamp_ms ts;
  };
  struct batch {
    std::string topic;
    partition_id pid{0};
    record_batch_builder builder;
    std::vector<pending> records;
    std::chrono::steady_clock::time_point deadline;
    std::size_t reserved = 0;     // bytes counted against buffer.memory
    std::uint64_t first_seq = 0;  // send() sequence number of the first record
  };
  struct topic_cache {
    std::uint64_t version = ~0ull;
    std::int32_t partitions = 0;
    std::vector<std::unique_ptr<batch>> open;  // the open batch of each partition, if any
  };
  struct enqueue_result {
    bool ok_ = true;
    brook::error err;
    std::optional<send_callback> error_cb;
    explicit operator bool() const { return ok_; }
    const brook::error& error() const { return err; }
  };

  static enqueue_result fail(brook::error e, send_callback cb) {
    enqueue_result r;
    r.ok_ = false;
    r.err = std::move(e);
    r.error_cb = std::move(cb);
    return r;
  }

  void start() {
    if (!cfg_.partitioner) cfg_.partitioner = std::make_shared<default_partitioner>();
    sender_ = std::thread([this] { run_sender(); });
  }

  void finish_now(const brook::error& e, send_callback cb) {
    if (cb) cb(result<record_metadata>(e));
  }

  /// The topic's state, its partitions re-read when the data directory's metadata changed.
  result<topic_cache*> topic_of(const std::string& topic) {
    auto it = topics_.find(std::string_view(topic));
    if (it == topics_.end()) it = topics_.emplace(topic, topic_cache{}).first;
    auto& tc = it->second;
    const std::uint64_t v = target_.metadata_version();
    if (tc.version != v) {
      BROOK_TRY_ASSIGN(auto n, target_.partition_count(topic));
      tc.partitions = n;
      tc.open.resize(std::max(tc.open.size(), static_cast<std::size_t>(n)));  // open batches keep their partition
      tc.version = v;
    }
    return &tc;
  }

  enqueue_result enqueue(const producer_record& rec, send_callback cb) {
    const timestamp_ms ts = rec.timestamp ? *rec.timestamp : target_.now_ms();
    const std::size_t rsize = record_batch_builder::record_size(0, 0, rec.key, rec.value, rec.headers);
    if (rsize + batch_layout::header_size > cfg_.max_request_size)
      return fail(make_error(errc::record_too_large, "record of {} bytes exceeds max.request.size {}",
                             rsize + batch_layout::header_size, cfg_.max_request_size),
                  std::move(cb));
    if (rsize + batch_layout::header_size > cfg_.buffer_memory)
      return fail(make_error(errc::record_too_large, "record of {} bytes exceeds buffer.memory {}",
                             rsize + batch_layout::header_size, cfg_.buffer_memory),
                  std::move(cb));
    std::unique_lock lk(mu_);
    if (closing_ || closed_) return fail(make_error(errc::closed, "producer is closed"), std::move(cb));
    auto tc = topic_of(rec.topic);
    if (!tc) return fail(tc.error(), std::move(cb));
    const auto n = (*tc)->partitions;
    partition_id pid{0};
    if (rec.partition) {
      pid = *rec.partition;
      if (pid.value() < 0 || pid.value() >= n)
        return fail(make_error(errc::unknown_topic_or_partition, "topic '{}' has no partition {}", rec.topic, pid),
                    std::move(cb));
    } else {
      lk.unlock();  // a host partitioner may be slow; it is thread-safe
      pid = cfg_.partitioner->partition(rec.topic, rec.key, rec.value, n);
      lk.lock();
      // Kafka's abortOnNewBatch: if this record would start a new batch on that partition,
      // tell the partitioner (a sticky one moves on) and ask again, once.
      if (needs_new_batch_locked(**tc, pid, rsize)) {
        lk.unlock();
        cfg_.partitioner->on_new_batch(rec.topic, n, pid);
        pid = cfg_.partitioner->partition(rec.topic, rec.key, rec.value, n);
        lk.lock();
      }
      if (closing_ || closed_) return fail(make_error(errc::closed, "producer is closed"), std::move(cb));
      tc = topic_of(rec.topic);
      if (!tc) return fail(tc.error(), std::move(cb));
      if (pid.value() < 0 || pid.value() >= (*tc)->partitions)
        return fail(make_error(errc::invalid_partitions, "partitioner chose partition {} of {} for topic '{}'", pid,
                               (*tc)->partitions, rec.topic),
                    std::move(cb));
    }
    // buffer.memory back-pressure.
    const std::size_t need = rsize + batch_layout::header_size;
    if (buffered_ + need > cfg_.buffer_memory) {
      auto deadline = std::chrono::steady_clock::now() + cfg_.max_block;
      // The buffer is exhausted: every open batch is ready now, whatever linger.ms says
      // (Kafka's RecordAccumulator.ready() treats an exhausted pool the same way).
      close_all_open_locked();
      wake_sender_locked();  // let the sender drain
      ++space_waiters_;
      bool got = space_cv_.wait_until(lk, deadline,
                                      [&] { return buffered_ + need <= cfg_.buffer_memory || closing_ || closed_; });
      --space_waiters_;
      if (closing_ || closed_) return fail(make_error(errc::closed, "producer is closed"), std::move(cb));
      if (!got)
        return fail(
            make_error(errc::timeout, "no buffer space for {} bytes within max.block.ms ({} ms); buffer.memory {}",
                       need, cfg_.max_block.count(), cfg_.buffer_memory),
            std::move(cb));
      tc = topic_of(rec.topic);
      if (!tc || pid.value() >= (*tc)->partitions)
        return fail(make_error(errc::unknown_topic_or_partition, "topic '{}' changed while send() waited", rec.topic),
                    std::move(cb));
    }
    auto& open = (*tc)->open[static_cast<std::size_t>(pid.value())];
    if (open && !open->builder.empty() && open->builder.size_bytes() + rsize > cfg_.batch_size)
      close_batch_locked(open);
    if (!open) {
      open = new_batch_locked(rec.topic, pid);
    }
    open->builder.append(ts, rec.key, rec.value, rec.headers);
    open->records.push_back({std::move(cb), ts});
    open->reserved += need;
    buffered_ += need;
    ++enqueued_seq_;
    if (open->records.size() == 1) {
      open->first_seq = enqueued_seq_;
      incomplete_.insert(enqueued_seq_);
    }
    if (open->builder.size_bytes() >= cfg_.batch_size) close_batch_locked(open);
    return {};
  }

  /// Would a record of rsize bytes for (topic, pid) start a new batch?
  bool needs_new_batch_locked(const topic_cache& tc, partition_id pid, std::size_t rsize) const {
    const auto i = static_cast<std::size_t>(pid.value());
    if (i >= tc.open.size() || !tc.open[i]) return true;
    const auto& b = tc.open[i]->builder;
    return !b.empty() && b.size_bytes() + rsize > cfg_.batch_size;
  }

  std::unique_ptr<batch> new_batch_locked(const std::string& topic, partition_id pid) {
    std::unique_ptr<batch> b;
    if (!spare_.empty()) {
      b = std::move(spare_.back());
      spare_.pop_back();
      b->builder.reset();
      b->records.clear();
      b->reserved = 0;
    } else {
      b = std::make_unique<batch>();
    }
    b->topic = topic;
    b->pid = pid;
    b->deadline = std::chrono::steady_clock::now() + cfg_.linger;
    if (!has_deadline_ || b->deadline < next_deadline_) {
      next_deadline_ = b->deadline;
      has_deadline_ = true;
      wake_sender_locked();
    }
    return b;
  }

  void close_batch_locked(std::unique_ptr<batch>& b) {
    ready_.push_back(std::move(b));
    wake_sender_locked();
  }

  /// Wakes the sender if it is waiting (a busy sender looks at everything before it waits
  /// again, so a notification then would only cost a futex call).
  void wake_sender_locked() {
    if (sender_waiting_) cv_.notify_one();
  }

  void close_all_open_locked() {
    for (auto& [_, tc] : topics_)
      for (auto& b : tc.open)
        if (b) close_batch_locked(b);
  }

  void run_sender() {
    std::unique_lock lk(mu_);
    for (;;) {
      // Close batches whose linger expired.
      auto now = std::chrono::steady_clock::now();
      has_deadline_ = false;
      for (auto& [_, tc] : topics_) {
        for (auto& b : tc.open) {
          if (!b) continue;
          if (b->deadline <= now)
            close_batch_locked(b);
          else if (!has_deadline_ || b->deadline < next_deadline_) {
            next_deadline_ = b->deadline;
            has_deadline_ = true;
          }
        }
      }
      if (ready_.empty()) {
        if (closed_) return;
        sender_waiting_ = true;
        if (has_deadline_)
          cv_.wait_until(lk, next_deadline_);
        else
          cv_.wait(lk);
        sender_waiting_ = false;
        continue;
      }
      std::deque<std::unique_ptr<batch>> work;
      work.swap(ready_);
      lk.unlock();
      for (auto& b : work) send_batch(std::move(b));
      lk.lock();
    }
  }

  /// Hands one batch to the target; its completion (now or later, on any thread) completes
  /// the records and releases the batch. Runs on the sender thread without the producer lock.
  void send_batch(std::unique_ptr<batch> owned) {
    batch* b = owned.release();
    auto bytes = b->builder.finish();
    target_.produce(b->topic, b->pid, bytes, cfg_.acks, cfg_.request_timeout,
                    [this, b](const result<append_result>& r) { complete(std::unique_ptr<batch>(b), r); });
  }

  void complete(std::unique_ptr<batch> b, const result<append_result>& r) {
    complete_records(*b, r);
    std::lock_guard lk(mu_);
    buffered_ -= b->reserved;
    incomplete_.erase(incomplete_.find(b->first_seq));
    b->records.clear();
    if (spare_.size() < 16) spare_.push_back(std::move(b));
    if (space_waiters_ > 0) space_cv_.notify_all();
    if (done_waiters_ > 0) done_cv_.notify_all();
  }

  /// Completes a batch's records' callbacks, without the producer lock.
  void complete_records(batch& b, const result<append_result>& r) {
    const std::string& topic = b.topic;
    for (std::size_t i = 0; i < b.records.size(); ++i) {
      auto& p = b.records[i];
      if (!p.cb) continue;
      if (!r) {
        p.cb(result<record_metadata>(r.error()));
        continue;
      }
      record_metadata md;
      md.topic = topic;
      md.partition = b.pid;
      md.offset = cfg_.acks == acks_mode::none ? offset(-1) : r->base_offset + static_cast<std::int64_t>(i);
      md.timestamp = r->log_append_time >= 0 ? r->log_append_time : p.ts;
      p.cb(result<record_metadata>(std::move(md)));
    }
  }

  std::unique_ptr<produce_target> owned_target_;
  produce_target& target_;
  producer_config cfg_;
  std::mutex close_mu_;  // serialises close()
  std::mutex mu_;
  std::condition_variable cv_;        // sender: work or a deadline
  std::condition_variable space_cv_;  // send(): buffer space
  std::condition_variable done_cv_;   // flush(): completions
  std::map<std::string, topic_cache, std::less<>> topics_;
  std::deque<std::unique_ptr<batch>> ready_;
  std::vector<std::unique_ptr<batch>> spare_;
  std::size_t buffered_ = 0;
  std::uint64_t enqueued_seq_ = 0;
  std::multiset<std::uint64_t> incomplete_;  // first_seq of every batch not yet completed
  std::chrono::steady_clock::time_point next_deadline_{};
  bool has_deadline_ = false;
  bool sender_waiting_ = false;  // the sender is blocked on cv_
  int space_waiters_ = 0;        // send() calls waiting for buffer space
  int done_waiters_ = 0;         // flush() calls waiting for completions
  bool closing_ = false;
  bool closed_ = false;
  std::thread sender_;
};

}  // namespace brook

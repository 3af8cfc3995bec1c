// The producer: Kafka's KafkaProducer, in-process. send() picks a partition (keyed
// records by murmur2, others by the configured partitioner), adds the record to that
// partition's open batch in the accumulator, and returns at once; a sender thread owned
// by the producer appends closed batches to the partitions' logs and completes each
// record's callback or future with (topic, partition, offset, timestamp) or an error.
//
// A batch closes when the next record would take it past batch.size, when it has been
// open for linger.ms, on flush(), or on close(). With linger.ms = 0 a batch closes as soon
// as the sender thread is free, so records sent while it is busy still share batches.
// buffer.memory bounds the bytes held in batches not yet appended; a send() that would
// exceed it blocks up to max.block.ms and then fails with errc::timeout (while it waits,
// every open batch counts as ready, as in Kafka). A record larger than max.request.size or
// buffer.memory fails with record_too_large without being queued.
//
// Appending in the caller (brook's own; producer_config::append_in_caller, off by
// default). With it, linger.ms = 0 and a data directory, a send() that finds the producer
// idle appends itself instead of waking the sender thread (on a busy host a wake-up costs
// more than a small append): it takes every closed and open batch, its own record's
// included, and appends them in order before it returns, completing their callbacks on
// its thread. One thread appends at a time, the sender or one send(), so batches keep
// their order. Idle means nobody is appending and the caller has been idle between sends,
// on average over its last several sends (a pause counting as one append at most), for at
// least a quarter of what a batch costs to append (measured, also averaged): a steady
// stream of spaced sends pays one append each and no wake-up, while a tight loop goes to
// the sender thread, where records sent while it is busy share batches. Each send found
// idle banks one more (up to 256), which a burst of sends the average calls busy spends, so
// a steady stream keeps appending in its caller through a burst (a pacer catching up after
// a pause), and a tight loop, rarely found idle, rarely banks. A send() from a
// send callback never appends in its caller (no recursion). Off by default because success
// callbacks then run inside send(): a host turns it on when none of its callbacks takes a
// lock its send() callers hold.
//
// Errors are never swallowed: every send() completes its callback or future exactly
// once, with the record's metadata or the error. Callbacks never run while a producer lock
// is held. With a data directory they run on the sender thread, or on a thread calling
// send(), inside it (errors found in send(), and appends in the caller, which may complete
// other threads' records too): a callback must not take a lock a send() caller holds, and
// must not throw (that terminates, on any thread). A callback may call send() again.
// With a cluster they run on the thread that completed the request (a fetcher thread,
// the cluster's control thread, the thread calling cluster::step(), or the sender): such
// a callback must not block (no send() that could wait for buffer.memory), since the
// thread it holds may be the one that would complete what it waits for. flush() and
// close() called from a callback of the same producer fail with invalid_request rather
// than wait for themselves.
//
// Batches go to a produce_target (produce_target.hpp): a data directory (one replica:
// acks=1 and acks=all complete after the append; acks=0 completes after the append too but
// reports offset -1, as Kafka's producer does), or a replicated cluster's leaders, where
// acks=all completes once the ISR has the batch (replication/cluster.hpp) and
// request.timeout.ms bounds the wait. The cluster enforces that bound, so it must keep
// running (start(), or step() calls) until its producers are closed: flush() and close()
// wait for every batch. A failed batch is not retried (Kafka's retries=0): its records
// complete with the error, so a record is never written twice by the producer. The one
// exception is Kafka's too: a batch of several records that the log refuses as too large
// (MESSAGE_TOO_LARGE: the topic's max.message.bytes is below batch.size) is split, and each
// record is sent again on its own, so small records do not fail with a big neighbour.
//
// Thread-safety: send(), flush() and close() may be called from any number of threads; the
// producer must outlive every call in progress.
#pragma once

#include <algorithm>
#include <atomic>
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
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/client/partitioner.hpp>
#include <brook/client/produce_target.hpp>
#include <brook/compression/compression_codec.hpp>
#include <brook/compression/compression_type.hpp>
#include <brook/core/adaptive_mutex.hpp>
#include <brook/core/linkage.hpp>
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
  std::optional<timestamp_ms> timestamp{};  ///< CreateTime (>= 0); default: the producer's clock at send()
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
  /// compression.type: the codec each batch is compressed with, once, on the sending thread.
  /// Default none.
  compression_type compression = compression_type::none;
  /// compression.gzip.level: -1 (zlib's default, 6) or 1..9. Default -1.
  int compression_gzip_level = -1;
  /// compression.lz4.level: 1..17. Default 9.
  int compression_lz4_level = 9;
  /// compression.zstd.level: ZSTD_minCLevel()..22. Default 3.
  int compression_zstd_level = 3;
  /// brook only: lets an idle send() append the producer's batches itself when linger.ms
  /// is 0 and the target completes in the caller (a data directory); see the header
  /// comment. Default false: every batch goes through the sender thread, and success
  /// callbacks never run inside send(), as in Kafka.
  bool append_in_caller = false;
  /// The codecs `compression` is found in (compression/compression_codec.hpp). Left at `none`
  /// only, the producer takes its target's: a data directory's log_config::codecs. A codec
  /// not enabled, or a level out of its range, fails every send with the error
  /// (unsupported_compression_type, invalid_config) as Kafka's producer fails to construct.
  compression_codecs codecs{};
};

class producer {
 public:
  /// A producer appending to `dd`'s partitions.
  producer(data_dir& dd, producer_config cfg = {});
  /// A producer sending to `target` (e.g. a cluster_target), which must outlive it.
  producer(produce_target& target, producer_config cfg = {});
  producer(const producer&) = delete;
  producer& operator=(const producer&) = delete;
  ~producer();

  /// Sends a record; `cb` is called exactly once with the result. See the header comment.
  void send(const producer_record& rec, send_callback cb);

  /// Sends a record; the future yields its metadata or error.
  std::future<result<record_metadata>> send(const producer_record& rec);

  /// Closes every open batch and waits until everything sent before this call completed.
  /// From one of this producer's send callbacks it would wait for itself (callbacks run on
  /// the thread that completes batches; Kafka forbids it too): invalid_request, at once.
  result<void> flush();

  /// Flushes and stops the sender thread. Later sends fail with errc::closed. Concurrent
  /// calls all return once it is closed. From one of this producer's send callbacks:
  /// invalid_request, and the producer stays open. Destroying the producer from its own
  /// callback is a programmer error that aborts with a message (BROOK_ASSERT).
  result<void> close();

  const producer_config& config() const noexcept { return cfg_; }

 private:
  struct pending {
    // Built in place from the caller's callback (emplace_back; the callback moves once).
    pending(send_callback&& c, timestamp_ms t) noexcept : cb(std::move(c)), ts(t) {}
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
  // What enqueue() did with a record it took (a refusal is enqueue()'s error; the callback
  // then stays with the caller). Trivially destructible on purpose: one is made for every
  // record, and the batches an appending send() takes wait in in_caller_work_ instead.
  struct enqueue_result {
    bool wake_sender = false;  ///< send() notifies cv_, the lock released
    bool append_here = false;  ///< send() appends in_caller_work_ itself (it set appending_)
  };
  static_assert(std::is_trivially_destructible_v<enqueue_result>);

  void start();

  void finish_now(const brook::error& e, send_callback cb);

  /// The topic's state, its partitions re-read when the data directory's metadata changed.
  result<topic_cache*> topic_of(const std::string& topic);

  /// Takes the record into its partition's open batch, moving `cb` into it; on an error
  /// leaves `cb` as it was.
  result<enqueue_result> enqueue(const producer_record& rec, send_callback& cb);

  /// Would a record of rsize bytes for (topic, pid) start a new batch?
  bool needs_new_batch_locked(const topic_cache& tc, partition_id pid, std::size_t rsize) const;

  /// A batch for (topic, pid), its linger deadline set; `wake` is set when the sender
  /// must hear of that deadline.
  std::unique_ptr<batch> new_batch_locked(const std::string& topic, partition_id pid, bool& wake);

  /// Whether send(), at `now`, appends in its caller (see the header comment); if so, marks
  /// the producer as appending. Notes `now` as the latest send's return.
  bool append_in_caller_locked(std::chrono::steady_clock::time_point now);
  /// Moves every closed and open batch, in order, into `work`.
  void take_all_locked(std::vector<std::unique_ptr<batch>>& work);
  /// Appends in_caller_work_ on the calling thread, then lets the sender run again.
  /// noexcept: a callback that throws terminates, as it does on the sender thread.
  void append_here() noexcept;

  /// Moves `b` to the ready queue; the caller wakes the sender.
  void close_batch_locked(std::unique_ptr<batch>& b);

  /// Wakes the sender if it is waiting (a busy sender looks at everything before it waits
  /// again, so a notification then would only cost a futex call).
  void wake_sender_locked();
  /// Whether the sender is waiting for work, so that a caller that just gave it some must
  /// notify cv_ (send() does so once it has released mu_).
  bool sender_needs_wake_locked() const noexcept { return sender_waiting_ && !appending_; }

  /// Closes every open batch; the caller wakes the sender.
  void close_all_open_locked();

  void run_sender();

  /// Hands one batch to the target; its completion (now or later, on any thread) completes
  /// the records and releases the batch. Runs on the appending thread, without the lock.
  void send_batch(std::unique_ptr<batch> owned);
  /// send_batch() without noting what the batch cost (in_caller_cost_ns_).
  void send_batch_now(std::unique_ptr<batch> owned);
  /// Finishes a batch, compressed with codec_ when there is one.
  result<std::span<std::byte>> finish(record_batch_builder& builder) const;

  void complete(std::unique_ptr<batch> b, const result<append_result>& r);
  /// Sends each record of a refused batch again as a batch of its own, then completes `b`.
  void resend_split(std::unique_ptr<batch> b);
  /// Returns a completed batch's buffer.memory and wakes flush() and blocked send()s.
  void release(std::unique_ptr<batch> b);

  /// Completes a batch's records' callbacks, without the producer lock.
  void complete_records(batch& b, const result<append_result>& r);

  std::unique_ptr<produce_target> owned_target_;
  produce_target& target_;
  producer_config cfg_;
  const compression_codec* codec_ = nullptr;  ///< null: batches are not compressed
  int level_ = 0;
  std::optional<brook::error> config_error_;  ///< what every send fails with
  std::mutex close_mu_;                       // serialises close()
  adaptive_mutex mu_;                     // contended by send() and the sender on every batch (core/adaptive_mutex.hpp)
  std::condition_variable_any cv_;        // sender: work or a deadline
  std::condition_variable_any space_cv_;  // send(): buffer space
  std::condition_variable_any done_cv_;   // flush(): completions
  std::map<std::string, topic_cache, std::less<>> topics_;           // never erased from
  std::pair<const std::string, topic_cache>* last_topic_ = nullptr;  // the latest topic_of()'s
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
  // Appending in the caller. One thread at a time appends, in batch order: the sender
  // (sending_) or a send() (appending_); a send() appends only when neither does.
  bool in_caller_ = false;                               // append_in_caller applies (start())
  bool appending_ = false;                               // a send() is appending
  bool sending_ = false;                                 // the sender thread is appending
  std::chrono::steady_clock::time_point last_return_{};  // when the latest send() returned
  std::int64_t idle_avg_ns_ = -1;                        // caller time between sends, averaged
  int idle_sends_ = 0;                                   // sends banked for a burst
  static constexpr int burst_sends = 256;                // the most idle_sends_ holds
  std::atomic<std::int64_t> in_caller_cost_ns_{0};       // a batch's append, averaged
  // The batches the appending send() took (take_all_locked); only the thread that set
  // appending_ touches it, until it clears appending_. Its capacity is kept.
  std::vector<std::unique_ptr<batch>> in_caller_work_;
  std::thread sender_;
  // The producer whose send callbacks this thread is running now (nullptr: none), so that
  // flush(), close() and the destructor called from one fail instead of waiting for themselves.
  static inline thread_local const producer* callback_owner_ = nullptr;
};

}  // namespace brook

#if !defined(BROOK_SEPARATE_COMPILATION)
#include <brook/client/impl/producer.ipp>
#endif

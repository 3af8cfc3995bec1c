// The consumer: Kafka's KafkaConsumer with manual assignment, in-process.
//
// assign() the partitions to read; each has a position, the offset of the next record
// to return. poll(timeout) fetches from every assigned, unpaused partition (rotating
// which goes first, so none starves), up to max.poll.records in total and
// max.partition.fetch.bytes per partition, never past a partition's high watermark, and
// advances the positions past what it returns.
//
// Long poll: poll() returns as soon as fetch.min.bytes are available, otherwise it waits
// (on a condition variable, woken by appends: no polling, no sleeps) until fetch.max.wait.ms
// has passed with some data, or the poll timeout, or wakeup() from another thread (then
// it fails with errc::wakeup). A host that asks (consumer_config::poll_spin) has it watch
// for a bounded time without sleeping first.
//
// Positions move only with the records a poll returns: a poll that fails puts back any
// records it had fetched. A partition without a position takes one from auto.offset.reset (earliest:
// the log start; latest: the high watermark; none: offset_out_of_range). A position that
// falls outside the log (retention moved the log start past it) is reset the same way, or
// poll() fails with offset_out_of_range under none. Records are never skipped silently
// and never delivered twice by poll().
//
// Sources: a consumer reads a data_dir, or any fetch_source (client/fetch_source.hpp),
// such as a replicated cluster's current leaders (cluster_source). While a partition's
// leadership moves (leader_not_available, not_leader_or_follower, broker_not_available)
// poll() skips it and retries when the source's notifier moves, as Kafka's fetcher does;
// so it does for a partition whose topic was deleted (unknown_topic_or_partition). Other
// errors fail the poll.
//
// Zero copy: records are views into the mapped segments, valid as long as the
// consumer_records object that holds them (see client/consumer_record.hpp).
//
// Thread-safety: like KafkaConsumer, one thread uses a consumer at a time; only wakeup()
// may be called from another thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include <brook/client/consumer_record.hpp>
#include <brook/client/fetch_source.hpp>
#include <brook/compression/compression_codec.hpp>
#include <brook/core/linkage.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/batch_decompressor.hpp>
#include <brook/storage/data_dir.hpp>

namespace brook {

enum class offset_reset { earliest, latest, none };

struct consumer_config {
  /// fetch.min.bytes: poll returns once this many bytes are available. Default 1.
  std::size_t fetch_min_bytes = 1;
  /// fetch.max.wait.ms: how long to wait for fetch.min.bytes once some data is there. Default 500.
  std::chrono::milliseconds fetch_max_wait{500};
  /// max.poll.records: records one poll returns at most. Default 500.
  std::size_t max_poll_records = 500;
  /// max.partition.fetch.bytes: bytes fetched per partition per poll (one batch at least). Default 1 MiB.
  std::size_t max_partition_fetch_bytes = 1024 * 1024;
  /// fetch.max.bytes: bytes fetched per poll across partitions (one batch at least). Default 50 MiB.
  std::size_t fetch_max_bytes = 50 * 1024 * 1024;
  /// auto.offset.reset: where a partition without a valid position starts. Default latest.
  offset_reset auto_offset_reset = offset_reset::latest;
  /// check.crcs: verify each batch's CRC-32C before handing out its records. Default true.
  bool check_crcs = true;
  /// The codecs compressed batches are decompressed with (compression/compression_codec.hpp).
  /// Left at `none` only, a consumer takes its source's: a data directory's
  /// log_config::codecs, which a node's options set. A batch of a codec not enabled fails
  /// the poll with unsupported_compression_type naming it.
  compression_codecs codecs{};
  /// The most bytes one compressed batch may decompress to: more is record_too_large.
  /// brook's own bound against decompression bombs (Kafka's consumers have none); default
  /// 128 MiB.
  std::size_t max_decompressed_batch_bytes = default_max_decompressed_batch_bytes;
  /// brook only: before a poll() sleeps for records, it watches for them this long without
  /// sleeping (a CPU pause between looks, the clock read every 64 looks), never past the
  /// poll's own deadlines. For hosts that trade a core's time for latency: a wake-up from
  /// sleep can cost tens of microseconds. It holds a core while it lasts, which a producer
  /// on the same cores then lacks. Default 0: sleep at once.
  std::chrono::microseconds poll_spin{0};
};

class consumer {
 public:
  /// A consumer reading `dd`'s partitions.
  explicit consumer(data_dir& dd, consumer_config cfg = {});
  /// A consumer reading from `source` (e.g. a cluster_source), which must outlive it.
  explicit consumer(fetch_source& source, consumer_config cfg = {});
  consumer(const consumer&) = delete;
  consumer& operator=(const consumer&) = delete;

  /// Replaces the assignment. Positions of partitions that stay assigned are kept.
  /// unknown_topic_or_partition if any partition does not exist (nothing changes then).
  result<void> assign(const std::vector<topic_partition>& tps);
  std::vector<topic_partition> assignment() const;

  /// Sets the next offset poll() returns for tp. The offset is checked at the next fetch.
  result<void> seek(const topic_partition& tp, offset o);
  /// Moves to the log start (seekToBeginning) or the high watermark (seekToEnd). As in
  /// Kafka, the offset is looked up lazily, at the next poll() or position().
  result<void> seek_to_beginning(const std::vector<topic_partition>& tps);
  result<void> seek_to_end(const std::vector<topic_partition>& tps) { return seek_to(tps, offset_reset::latest); }

  /// Whether tp has a position or a pending seek (set by seek, seek_to_beginning, seek_to_end
  /// or an earlier poll), without resolving auto.offset.reset. false for a partition that is
  /// not assigned.
  bool has_position(const topic_partition& tp) const;
  /// Whether tp waits for a seek_to_beginning or seek_to_end that the next poll() or
  /// position() resolves (Kafka's isOffsetResetNeeded).
  bool awaiting_reset(const topic_partition& tp) const;

  /// The offset of the next record poll() will return for tp (resolving auto.offset.reset
  /// and seeks to the beginning or end). Errors: also the source's for tp (see
  /// fetch_source.hpp), such as not_leader_or_follower while its leadership moves.
  result<offset> position(const topic_partition& tp);

  void pause(const std::vector<topic_partition>& tps);
  void resume(const std::vector<topic_partition>& tps);
  std::vector<topic_partition> paused() const;

  /// Kafka's offsetsForTimes: per partition, the first offset whose timestamp is >= the
  /// given time (below the high watermark), or nullopt when there is none.
  result<std::map<topic_partition, std::optional<timestamp_offset>>> offsets_for_times(
      const std::map<topic_partition, timestamp_ms>& query);
  /// Log start offsets (Kafka's beginningOffsets) and high watermarks (endOffsets).
  result<std::map<topic_partition, offset>> beginning_offsets(const std::vector<topic_partition>& tps);
  result<std::map<topic_partition, offset>> end_offsets(const std::vector<topic_partition>& tps);

  /// Fetches records; see the header comment. Errors: offset_out_of_range (reset policy
  /// none), corrupt_message (a damaged batch, with file and byte), wakeup, and any other
  /// error the source reports (partitions whose leadership moves are skipped instead).
  result<consumer_records> poll(std::chrono::milliseconds timeout) { return poll(timeout, nullptr); }

  /// poll() that also returns (with what it has, possibly nothing) as soon as
  /// `return_early` is true. It is checked whenever the consumer wakes up: whoever makes
  /// it true must then call the source's notifier().notify(). The group consumer
  /// uses it to leave a long poll when its group starts a rebalance.
  template <typename Pred>
  result<consumer_records> poll(std::chrono::milliseconds timeout, const Pred& return_early) {
    using steady = std::chrono::steady_clock;
    const auto poll_deadline = steady::now() + timeout;
    auto fetch_deadline = steady::now() + cfg_.fetch_max_wait;
    consumer_records out;
    std::size_t bytes = 0;
    // Positions move only with records handed to the caller: a poll that fails (wakeup,
    // offset_out_of_range, corrupt_message) after fetching some records puts them back.
    std::vector<std::pair<state*, state>> start_states;
    start_states.reserve(parts_.size());
    for (auto& [tp, s] : parts_) start_states.emplace_back(&s, s);
    auto fail = [&](brook::error e) -> result<consumer_records> {
      for (auto& [s, before] : start_states) {
        s->position = before.position;
        s->reset = before.reset;
      }
      return e;
    };
    for (;;) {
      // Read the sequence before the flag: a wakeup() between the two is seen by one of them.
      const std::uint64_t seen = src_.notifier().sequence();
      if (wakeup_.exchange(false, std::memory_order_acq_rel))
        return fail(make_error(errc::wakeup, "poll() interrupted by wakeup()"));
      auto r = fetch_into(out, bytes);
      if (!r) return fail(r.error());
      if constexpr (!std::is_null_pointer_v<Pred>) {
        if (return_early()) return out;
      }
      const auto now = steady::now();
      if (out.size() >= cfg_.max_poll_records || bytes >= std::max<std::size_t>(cfg_.fetch_min_bytes, 1)) return out;
      if (now >= poll_deadline) return out;
      if (!out.empty() && now >= fetch_deadline) return out;
      if (out.empty() && now >= fetch_deadline) fetch_deadline = now + cfg_.fetch_max_wait;  // a new long poll
      const auto until = std::min(poll_deadline, fetch_deadline);
      if (cfg_.poll_spin.count() > 0 && watch(seen, std::min(until, now + cfg_.poll_spin))) continue;
      src_.notifier().wait(seen, until);
    }
  }

  /// Makes a blocked (or the next) poll() return errc::wakeup. Thread-safe.
  void wakeup();

  const consumer_config& config() const noexcept { return cfg_; }

 private:
  struct state {
    std::optional<offset> position;
    std::optional<offset_reset> reset;  ///< a seek to the beginning or end, resolved lazily
    bool paused = false;
  };

  state* find(const topic_partition& tp);
  /// The codecs: the config's, or the source's when the config names none; sets up dec_.
  void init_codecs();
  static brook::error not_assigned(const topic_partition& tp);

  result<void> seek_to(const std::vector<topic_partition>& tps, offset_reset where);

  template <typename F>
  result<std::map<topic_partition, offset>> offsets_of(const std::vector<topic_partition>& tps, F f) {
    std::map<topic_partition, offset> out;
    for (const auto& tp : tps) {
      BROOK_TRY_ASSIGN(const partition_bounds b, src_.bounds(tp));
      out[tp] = f(b);
    }
    return out;
  }

  /// Gives a partition without a position (or with one outside the log) a position from a
  /// pending seek to the beginning or end, or else from auto.offset.reset.
  result<void> ensure_position(const topic_partition& tp, state& s, bool out_of_range = false);

  /// Whether a partition's error leaves it out of this pass rather than failing the poll.
  static bool skip_for_now(const brook::error& e);

  /// Reads tp from its position, resetting an out-of-range position by policy.
  result<log_slice> read_from_position(const topic_partition& tp, state& s, const read_options& ro);

  /// One pass over the assigned partitions, adding what is available to `out`.
  result<void> fetch_into(consumer_records& out, std::size_t& bytes);

  /// Watches the source's notifier without sleeping until it moves past `seen` (true) or
  /// `end` passes (false): consumer_config::poll_spin.
  bool watch(std::uint64_t seen, std::chrono::steady_clock::time_point end) const;

  std::unique_ptr<fetch_source> owned_source_;  // set when constructed from a data_dir
  fetch_source& src_;
  consumer_config cfg_;
  batch_decompressor dec_;  ///< retaining: a poll's records live in its consumer_records
  std::map<topic_partition, state> parts_;
  std::size_t rotate_ = 0;
  std::atomic<bool> wakeup_{false};
};

}  // namespace brook

#if !defined(BROOK_SEPARATE_COMPILATION)
#include <brook/client/impl/consumer.ipp>
#endif

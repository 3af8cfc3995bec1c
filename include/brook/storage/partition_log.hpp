// A partition's log: a directory of segments (segment.hpp) plus Kafka's checkpoint
// files, as Kafka lays out `<log dir>/<topic>-<partition>/` (every file name, with a
// diagram of the directory, is in partition_files.hpp).
//
// Kafka keeps the checkpoints once per log dir; brook keeps them per
// partition directory (same text format, one entry) so that a partition log
// is a self-contained unit a host can open on its own.
//
// Compaction (cleanup.policy=compact, storage/log_cleaner.hpp) leaves offset gaps between
// batches, never between segments (each cleaned segment keeps its last batch, emptied if
// need be), so a gap between segments still means a lost tail.
//
// Offsets: [log_start_offset, log_end_offset) is readable. Appends assign
// offsets from log_end_offset (the broker's job in Kafka) or, for replicas,
// keep the offsets they carry.
//
// Recovery: every segment that may hold data past the recovery point (the
// offset up to which everything was flushed and checkpointed) is validated
// batch by batch; the first invalid byte and everything after it is cut, and
// indexes are rebuilt. Segments below the recovery point are checked cheaply
// (tail walk, index sanity) and fully validated only if that fails. A clean
// close() checkpoints the log end, so the next open scans nothing.
//
// A writable open takes an exclusive flock(2) on the partition directory itself (no lock
// file is created), so a second writer, in this process or another, fails with
// log_dir_locked instead of corrupting the log. Read-only opens take no lock.
//
// The log's parts live in their own headers: opening and recovery in log_loader.hpp, the
// segment list readers pin in segment_list.hpp, append validation in log_validator.hpp, reads
// and timestamp lookups in log_read.hpp, retention in log_retention.hpp, truncation in
// log_truncation.hpp, the checkpoints in log_checkpoints.hpp and compaction in log_cleaner.hpp.
// This class holds the positions (log start <= recovery point <= log end, asserted at every
// change) and the locking.
//
// Thread-safety: any number of threads may read (read, offset_for_timestamp, the accessors,
// wait_for_data) concurrently with each other and with one mutating call at a time; mutating
// calls (append, flush, roll, retention, truncation, close) are serialised by an internal
// writer mutex. compact() may run on another thread alongside appends and reads (one pass at a
// time); it takes the writer mutex only to swap each rewritten segment in. Readers never wait
// for the writer's appends: they take a short internal lock only to pin a segment, then read
// its mapping lock-free. (truncate_to, a rare replica operation, holds that lock while it cuts
// and rebuilds the last segment, so readers' lookups wait for it.)
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include <brook/core/adaptive_mutex.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/clock.hpp>
#include <brook/core/linkage.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/built_batch.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/log_checkpoints.hpp>
#include <brook/storage/log_cleaner.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/log_loader.hpp>
#include <brook/storage/log_read.hpp>
#include <brook/storage/log_retention.hpp>
#include <brook/storage/log_slice.hpp>
#include <brook/storage/log_truncation.hpp>
#include <brook/storage/log_validator.hpp>
#include <brook/storage/segment.hpp>
#include <brook/storage/segment_list.hpp>

namespace brook {

class partition_log {
 public:
  partition_log(const partition_log&) = delete;
  partition_log& operator=(const partition_log&) = delete;
  ~partition_log();

  /// Opens (creating when missing and writable) the partition directory and recovers it
  /// (storage/log_loader.hpp).
  static result<std::unique_ptr<partition_log>> open(const fs::path& dir, log_config config = {},
                                                     log_open_options opts = {});

  const fs::path& dir() const noexcept { return dir_; }
  const log_config& config() const noexcept { return config_; }
  bool read_only() const noexcept { return opts_.read_only; }
  const recovery_report& recovery() const noexcept { return report_; }

  offset log_start_offset() const noexcept { return offset(log_start_.load(std::memory_order_acquire)); }
  offset log_end_offset() const noexcept { return offset(log_end_.load(std::memory_order_acquire)); }
  /// Everything below this offset has been flushed to disk.
  offset recovery_point() const noexcept { return offset(recovery_point_.load(std::memory_order_acquire)); }

  std::vector<segment_info> segments() const { return segs_.describe(); }
  std::size_t segment_count() const { return segs_.size(); }
  std::uint64_t size_bytes() const { return segs_.size_bytes(); }

  // ------------------------------------------------------------------ writing

  /// Validates (storage/log_validator.hpp) and appends one or more concatenated batches.
  /// With assign_offsets the batches' baseOffset fields are rewritten in place (and, for
  /// LogAppendTime logs, the timestamp and CRC), so `batches` must be writable; a batch whose
  /// codec differs from the topic's compression.type is written recompressed from a buffer
  /// of the validator's instead (append_result::bytes counts what was written). Errors:
  /// those of validate_append, closed, invalid_request (read-only), OS errors.
  result<append_result> append(std::span<std::byte> batches, append_options ao = {});

  /// Appends one batch record_batch_builder finished in this process, as a producer's:
  /// validate_built_append checks the producer rules against what the builder knows, without
  /// the CRC or the walk of the records; a batch the builder does not vouch for, or one the
  /// topic's compression.type recompresses, takes append(b.bytes()). The same errors and the
  /// same bytes written as append(b.bytes()).
  result<append_result> append(const built_batch& b);

  /// fdatasyncs everything appended; the recovery point moves to the log end.
  result<void> flush();

  /// Time-driven duties: flush.ms, and segment.ms for a non-empty active segment that has
  /// existed longer than segment.ms (appends also roll by segment.ms the way Kafka does, by
  /// comparing the incoming batch's timestamp with the segment's first). Call it from a
  /// housekeeping thread or a test with a manual clock. Retention is enforce_retention().
  result<void> tick();

  /// Seals the active segment and starts a new one at the log end (no-op on an empty one).
  result<void> roll();

  /// Writes the recovery-point and log-start checkpoints now.
  result<void> checkpoint();

  /// Deletes the oldest segments that retention.ms, retention.bytes or the log start
  /// offset make eligible (storage/log_retention.hpp). Returns segments deleted.
  result<std::size_t> enforce_retention();

  /// Moves the log start offset to `o` (Kafka's DeleteRecords): offsets below it are no
  /// longer readable, and whole segments below it are deleted. offset_out_of_range if o is
  /// past the log end.
  result<void> delete_records_before(offset o);

  /// Removes every record and restarts the log, empty, at `o` (Kafka's
  /// truncateFullyAndStartAt): a follower whose log ends below its leader's log start.
  result<void> truncate_fully_and_start_at(offset o);

  /// Removes every record at or after `o`. As in Kafka, the batch containing `o` is removed
  /// whole, so the new log end is that batch's base offset (<= o). Readers holding slices of
  /// removed bytes keep valid (old) bytes (storage/log_truncation.hpp). Offsets below the
  /// log start reset the log to start empty at `o`.
  result<void> truncate_to(offset o);

  /// Flushes, seals the active segment's indexes, checkpoints so the next open is fast, and
  /// releases the directory lock. Further calls fail with errc::closed. Readers' slices
  /// stay valid. When a write fails (a full or failed disk), the log is closed all the
  /// same, with what reached the files, and the lock released: the error says what was not
  /// done, and nothing is retried later (the next open recovers from the recovery point).
  result<void> close();

  // ------------------------------------------------------------------ compaction

  /// Where the log stands for the cleaner: the first dirty offset, the cleanable segments
  /// below `upper_bound` (see compact_options) and their clean and dirty bytes, whose ratio
  /// housekeeping compares with min.cleanable.dirty.ratio. Thread-safe.
  result<cleanable_info> cleanable(std::optional<offset> upper_bound = {}) const;

  /// Runs one log-cleaner pass (storage/log_cleaner.hpp) over the sealed segments below
  /// the bound, whatever the dirty ratio (housekeeping runs it only once the ratio reached
  /// min.cleanable.dirty.ratio); returns what it did. Appends and
  /// reads go on meanwhile: the pass reads sealed segments without locks and takes the
  /// writer mutex only to swap each rewritten segment in; readers' slices of replaced
  /// segments keep their bytes. One pass at a time per log (callers wait). A truncation or
  /// close during the pass ends it early without error (the map may name records that are
  /// gone); stats then count what was done. Errors: closed, invalid_request (read-only, or
  /// cleanup.policy without compact: the cleaner drops keyless records, which a delete-policy
  /// log may hold), corrupt_message (a damaged batch in a cleanable segment), OS errors.
  result<compact_stats> compact(const compact_options& co = {});

  // ------------------------------------------------------------------ reading

  /// Whole batches starting with the one that holds `start`, up to max_bytes and below
  /// max_offset, from one segment (storage/log_read.hpp). Empty when start is at the bound.
  /// offset_out_of_range outside [log start, log end]. A closed log still reads what it holds.
  result<log_slice> read(offset start, read_options ro = {}) const;

  /// Kafka's offsetsForTimes: the first record whose timestamp is >= ts, below max_offset
  /// (default log end); nullopt if there is none.
  result<std::optional<timestamp_offset>> offset_for_timestamp(timestamp_ms ts,
                                                               std::optional<offset> max_offset = {}) const;

  /// Blocks until the log end passes `after` (some offset >= after was appended), the log
  /// is closed, or the deadline passes. Returns whether data is there. No polling: each
  /// change of the log end or close bumps a notifier this waits on.
  bool wait_for_data(offset after, std::chrono::steady_clock::time_point deadline) const;

 private:
  using seg_ptr = segment_list::seg_ptr;

  partition_log(fs::path dir, log_config cfg, log_open_options o);

  result<void> load();

  // ------------------------------------------------------------------ state and invariants

  result<void> check_open() const;
  result<void> check_writable() const;
  result<void> check_compactable();

  /// log start <= recovery point <= log end. REQUIRES: writer_mu_ (or the open).
  void assert_positions() const;

  /// Moves the log start; the recovery point follows it (Kafka's updateLogStartOffset):
  /// nothing below the log start is read again, so nothing below it needs recovering.
  void set_log_start(offset o);

  /// After a truncation to `end`: the log end, recovery point and first dirty offset fall back.
  void set_log_end_after_truncation(offset end);

  /// After the log end moved or the log closed: wakes wait_for_data (the notifier's bump
  /// follows the store, and a waiter reads the sequence before the log end: none is lost).
  void notify_waiters();

  result<seg_ptr> open_segment(offset base, segment::open_kind kind, bool active_seg,
                               recovery_report* report = nullptr);

  // ------------------------------------------------------------------ appending

  /// write_validated: writes what validate_append or validate_built_append passed (`batches`, or what
  /// the validator rebuilt), moves the log end, flushes by flush.messages; REQUIRES writer_mu_ held.
  /// Below it, write_batches: writes validated batches to the active segment, rolling first if due.
  result<append_result> write_validated(std::span<const std::byte> batches, const validated_append& v,
                                        timestamp_ms now);
  result<void> write_batches(std::span<const std::byte> batches, offset last, timestamp_ms max_ts, timestamp_ms now);

  result<void> flush_locked();

  /// Seals the active segment and starts one at `at` (default: the log end). A follower's
  /// batch far past the log end starts its own segment at its base offset, as Kafka rolls at
  /// the batch's first offset; an empty active segment is then replaced, not kept.
  result<void> roll_locked(std::optional<offset> at = std::nullopt);
  result<void> restart_active_at(offset base);

  // ------------------------------------------------------------------ deleting and truncating

  result<void> delete_oldest(std::size_t n);

  result<void> truncate_fully_locked(offset o);

  /// Removes every segment's files and creates an empty segment at `o`. On failure the
  /// list keeps its (now fileless) segments, which stay readable through their mappings.
  result<seg_ptr> open_segment_replacing_all(const segment_list::vector& segs, offset o);

  // ------------------------------------------------------------------ compaction

  result<cleanable_info> plan(const std::vector<seg_ptr>& segs, std::optional<offset> upper, timestamp_ms now) const;

  /// Rewrites one segment of a pass and swaps it in. false: a truncation or close ended the pass.
  result<bool> clean_one(const seg_ptr& s, const detail::record_filter& filter, std::uint64_t gen, compact_stats& st);

  // ------------------------------------------------------------------ reading

  result<std::optional<timestamp_offset>> offset_for_timestamp_once(timestamp_ms ts,
                                                                    std::optional<offset> max_offset) const;

  file_system& files() const noexcept { return *config_.files; }

  result<void> flush_seal_and_checkpoint();

  // ------------------------------------------------------------------ checkpoints

  result<void> write_checkpoints();

  const fs::path dir_;
  file_handle dir_lock_;  // holds the flock while the log is open for writing
  log_config config_;
  const log_open_options opts_;
  recovery_report report_;
  log_checkpoints checkpoints_;  // writer_mu_
  segment_list segs_;

  mutable adaptive_mutex writer_mu_;  // serialises mutating calls (and read()'s rare second look)
  bool closed_ = false;
  /// A flush (fsync) failed: what the page cache held may never reach the disk, and Linux
  /// may have dropped it already ("fsyncgate"). The log takes no more writes and never
  /// checkpoints again; reopening recovers from what the disk really has. Under writer_mu_.
  bool sync_failed_ = false;
  timestamp_ms active_created_ms_ = 0;  // when the active segment was created or opened
  std::int64_t unflushed_records_ = 0;
  timestamp_ms first_unflushed_ms_ = -1;

  std::atomic<std::int64_t> log_start_{0};
  std::atomic<std::int64_t> log_end_{0};
  std::atomic<std::int64_t> recovery_point_{0};

  std::mutex cleaner_mu_;                        // one compact() pass at a time; taken before writer_mu_
  std::atomic<std::uint64_t> structure_gen_{0};  // bumped by truncations (written under writer_mu_)
  std::atomic<std::int64_t> first_dirty_{0};     // the cleaner's first dirty offset

  mutable notifier changed_;  // bumped when the log end moves or the log closes (wait_for_data)
  std::atomic<bool> closed_flag_{false};
};

}  // namespace brook

#if !defined(BROOK_SEPARATE_COMPILATION)
#include <brook/storage/impl/partition_log.ipp>
#endif

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

#include <brook/core/assert.hpp>
#include <brook/core/clock.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
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
  ~partition_log() { (void)close(); }

  /// Opens (creating when missing and writable) the partition directory and recovers it
  /// (storage/log_loader.hpp).
  static result<std::unique_ptr<partition_log>> open(const fs::path& dir, log_config config = {},
                                                     log_open_options opts = {}) {
    BROOK_TRY(config.validate());
    if (!config.clock) config.clock = make_system_clock();
    if (!config.files) config.files = posix_file_system::shared();
    std::unique_ptr<partition_log> log(new partition_log(dir, std::move(config), opts));
    BROOK_TRY(log->load());
    return log;
  }

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
  /// LogAppendTime logs, the timestamp and CRC), so `batches` must be writable. Errors:
  /// those of validate_append, closed, invalid_request (read-only), OS errors.
  result<append_result> append(std::span<std::byte> batches, append_options ao = {}) {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_writable());
    if (batches.empty()) return make_error(errc::invalid_record, "{}: empty append", dir_.string());
    const timestamp_ms now = config_.clock->now_ms();
    BROOK_TRY_ASSIGN(validated_append v, validate_append(batches, ao, config_, log_end_offset(), now, dir_.string()));
    BROOK_TRY(write_batches(batches, v.result.last_offset, v.max_timestamp, now));
    log_end_.store((v.result.last_offset + 1).value(), std::memory_order_release);
    notify_waiters();

    unflushed_records_ += static_cast<std::int64_t>(v.result.records);
    if (first_unflushed_ms_ < 0) first_unflushed_ms_ = now;
    if (unflushed_records_ >= config_.flush_messages) BROOK_TRY(flush_locked());
    return v.result;
  }

  /// fdatasyncs everything appended; the recovery point moves to the log end.
  result<void> flush() {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_open());
    return flush_locked();
  }

  /// Time-driven duties: flush.ms, and segment.ms for a non-empty active segment that has
  /// existed longer than segment.ms (appends also roll by segment.ms the way Kafka does, by
  /// comparing the incoming batch's timestamp with the segment's first). Call it from a
  /// housekeeping thread or a test with a manual clock. Retention is enforce_retention().
  result<void> tick() {
    std::lock_guard wl(writer_mu_);
    if (closed_ || opts_.read_only) return ok();
    timestamp_ms now = config_.clock->now_ms();
    if (first_unflushed_ms_ >= 0 && now - first_unflushed_ms_ >= config_.flush_interval.count())
      BROOK_TRY(flush_locked());
    if (!segs_.active()->empty() && now - active_created_ms_ > config_.segment_time.count()) BROOK_TRY(roll_locked());
    return ok();
  }

  /// Seals the active segment and starts a new one at the log end (no-op on an empty one).
  result<void> roll() {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_open());
    if (segs_.active()->empty()) return ok();
    return roll_locked();
  }

  /// Writes the recovery-point and log-start checkpoints now.
  result<void> checkpoint() {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_open());
    return write_checkpoints();
  }

  /// Deletes the oldest segments that retention.ms, retention.bytes or the log start
  /// offset make eligible (storage/log_retention.hpp). Returns segments deleted.
  result<std::size_t> enforce_retention() {
    std::lock_guard wl(writer_mu_);
    if (closed_ || opts_.read_only) return std::size_t{0};
    const auto segs = segs_.snapshot();
    BROOK_TRY_ASSIGN(std::size_t n,
                     segments_past_retention(segs, log_start_offset(), config_, config_.clock->now_ms()));
    if (n == 0) return n;
    if (n == segs.size()) BROOK_TRY(roll_locked());  // never leave the log without a segment
    BROOK_TRY(delete_oldest(n));
    return n;
  }

  /// Moves the log start offset to `o` (Kafka's DeleteRecords): offsets below it are no
  /// longer readable, and whole segments below it are deleted. offset_out_of_range if o is
  /// past the log end.
  result<void> delete_records_before(offset o) {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_open());
    if (o > log_end_offset())
      return make_error(errc::offset_out_of_range, "{}: cannot delete records before {}, past the log end {}",
                        dir_.string(), o, log_end_offset());
    if (o <= log_start_offset()) return ok();
    set_log_start(o);
    if (const std::size_t n = segments_below(segs_.snapshot(), o); n > 0) BROOK_TRY(delete_oldest(n));
    return write_checkpoints();
  }

  /// Removes every record and restarts the log, empty, at `o` (Kafka's
  /// truncateFullyAndStartAt): a follower whose log ends below its leader's log start.
  result<void> truncate_fully_and_start_at(offset o) {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_writable());
    if (o.value() < 0) return make_error(errc::invalid_argument, "{}: negative start offset {}", dir_.string(), o);
    structure_gen_.fetch_add(1, std::memory_order_acq_rel);
    return truncate_fully_locked(o);
  }

  /// Removes every record at or after `o`. As in Kafka, the batch containing `o` is removed
  /// whole, so the new log end is that batch's base offset (<= o). Readers holding slices of
  /// removed bytes keep valid (old) bytes (storage/log_truncation.hpp). Offsets below the
  /// log start reset the log to start empty at `o`.
  result<void> truncate_to(offset o) {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_writable());
    if (o >= log_end_offset()) return ok();
    structure_gen_.fetch_add(1, std::memory_order_acq_rel);  // a cleaner pass running now must not swap
    if (o < log_start_offset()) return truncate_fully_locked(o);
    auto cut = segs_.modify([&](segment_list::vector& segs) -> result<void> {
      BROOK_TRY(cut_segments_at(files(), segs, o, dir_, [&](offset base, segment::open_kind kind) {
        return open_segment(base, kind, /*active=*/true);
      }));
      set_log_end_after_truncation(segs.back()->next_offset());
      return ok();
    });
    BROOK_TRY(std::move(cut));
    active_created_ms_ = config_.clock->now_ms();
    const offset end = log_end_offset();
    if (checkpoints_.cleaner_offset() && *checkpoints_.cleaner_offset() > end)
      BROOK_TRY(checkpoints_.write_cleaner_offset(end));  // Kafka's maybeTruncateCheckpoint
    return write_checkpoints();
  }

  /// Flushes, seals the active segment's indexes, checkpoints so the next open is fast, and
  /// releases the directory lock. Further calls fail with errc::closed. Readers' slices
  /// stay valid. When a write fails (a full or failed disk), the log is closed all the
  /// same, with what reached the files, and the lock released: the error says what was not
  /// done, and nothing is retried later (the next open recovers from the recovery point).
  result<void> close() {
    std::lock_guard wl(writer_mu_);
    if (closed_) return ok();
    closed_ = true;
    notify_waiters();
    if (opts_.read_only || segs_.size() == 0) return ok();  // read-only, or open() failed
    auto r = flush_seal_and_checkpoint();
    dir_lock_.reset();  // another writer may open the directory now
    return r;
  }

  // ------------------------------------------------------------------ compaction

  /// Where the log stands for the cleaner: the first dirty offset, the cleanable segments
  /// below `upper_bound` (see compact_options) and their clean and dirty bytes, whose ratio
  /// housekeeping compares with min.cleanable.dirty.ratio. Thread-safe.
  result<cleanable_info> cleanable(std::optional<offset> upper_bound = {}) const {
    return plan(segs_.snapshot(), upper_bound, config_.clock->now_ms());
  }

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
  result<compact_stats> compact(const compact_options& co = {}) {
    std::lock_guard cl(cleaner_mu_);
    BROOK_TRY(check_compactable());
    const std::uint64_t gen = structure_gen_.load(std::memory_order_acquire);
    const timestamp_ms now = config_.clock->now_ms();
    const auto segs = segs_.snapshot();  // pins every segment the map's keys point into
    BROOK_TRY_ASSIGN(cleanable_info p, plan(segs, co.upper_bound, now));
    compact_stats st = detail::stats_before_pass(p);
    if (p.segments == 0) return st;
    offset_map map;
    BROOK_TRY(detail::build_offset_map(segs, p, map));
    const detail::record_filter filter{&map, now, config_.delete_retention.count()};
    for (std::size_t i = 0; i < p.segments; ++i) {
      BROOK_TRY_ASSIGN(bool go_on, clean_one(segs[i], filter, gen, st));
      if (!go_on) return st;  // truncated or closed meanwhile: stop, the first dirty offset stays
    }
    std::lock_guard wl(writer_mu_);
    if (closed_ || structure_gen_.load(std::memory_order_acquire) != gen) return st;
    if (st.first_dirty_after.value() > first_dirty_.load(std::memory_order_acquire))
      first_dirty_.store(st.first_dirty_after.value(), std::memory_order_release);
    BROOK_TRY(checkpoints_.write_cleaner_offset(st.first_dirty_after));
    return st;
  }

  // ------------------------------------------------------------------ reading

  /// Whole batches starting with the one that holds `start`, up to max_bytes and below
  /// max_offset, from one segment (storage/log_read.hpp). Empty when start is at the bound.
  /// offset_out_of_range outside [log start, log end].
  result<log_slice> read(offset start, read_options ro = {}) const {
    const offset log_start = log_start_offset();
    const offset leo = log_end_offset();
    if (start < log_start || start > leo)
      return make_error(errc::offset_out_of_range, "{}: offset {} is outside [{}, {}]", dir_.string(), start, log_start,
                        leo);
    const offset bound = ro.max_offset ? std::min(*ro.max_offset, leo) : leo;
    if (start >= bound) return log_slice(nullptr, file_pos{0}, 0, start, start);
    return read_segments(segs_, start, bound, ro.max_bytes, dir_);
  }

  /// Kafka's offsetsForTimes: the first record whose timestamp is >= ts, below max_offset
  /// (default log end); nullopt if there is none.
  result<std::optional<timestamp_offset>> offset_for_timestamp(timestamp_ms ts,
                                                               std::optional<offset> max_offset = {}) const {
    // Retention may move the log start while the search runs; an answer below the new start
    // is stale, so search again (the log start only moves forward).
    for (;;) {
      auto r = offset_for_timestamp_once(ts, max_offset);
      if (!r || !*r || (*r)->off >= log_start_offset()) return r;
    }
  }

  /// Blocks until the log end passes `after` (some offset >= after was appended), the log
  /// is closed, or the deadline passes. Returns whether data is there. No polling: each
  /// change of the log end or close bumps a notifier this waits on.
  bool wait_for_data(offset after, std::chrono::steady_clock::time_point deadline) const {
    for (;;) {
      const std::uint64_t seen = changed_.sequence();
      if (log_end_offset() > after) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      if (closed_flag_.load(std::memory_order_acquire)) return false;
      if (!changed_.wait(seen, deadline)) return log_end_offset() > after;
    }
  }

 private:
  using seg_ptr = segment_list::seg_ptr;

  partition_log(fs::path dir, log_config cfg, log_open_options o)
      : dir_(std::move(dir)), config_(std::move(cfg)), opts_(o), checkpoints_(dir_, *config_.files) {}

  result<void> load() {
    BROOK_TRY_ASSIGN(loaded_log l, log_loader(dir_, config_, opts_, report_, checkpoints_).run());
    dir_lock_ = std::move(l.dir_lock);
    segs_.modify([&](segment_list::vector& v) { v = std::move(l.segments); });
    log_start_.store(l.log_start.value(), std::memory_order_release);
    log_end_.store(l.log_end.value(), std::memory_order_release);
    recovery_point_.store(l.recovery_point.value(), std::memory_order_release);
    first_dirty_.store(l.first_dirty.value(), std::memory_order_release);
    active_created_ms_ = config_.clock->now_ms();
    if (opts_.read_only) return ok();
    if (!l.created) BROOK_TRY(segs_.active()->flush());  // everything on disk now counts as flushed
    return write_checkpoints();
  }

  // ------------------------------------------------------------------ state and invariants

  result<void> check_open() const {
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
    return ok();
  }
  result<void> check_writable() const {
    BROOK_TRY(check_open());
    if (opts_.read_only) return make_error(errc::invalid_request, "{}: log was opened read-only", dir_.string());
    return ok();
  }
  result<void> check_compactable() {
    std::lock_guard wl(writer_mu_);
    BROOK_TRY(check_writable());
    if (!config_.compacts())
      return make_error(errc::invalid_request, "{}: cleanup.policy is {}; compaction needs compact", dir_.string(),
                        to_string(config_.cleanup));
    return ok();
  }

  /// log start <= recovery point <= log end. REQUIRES: writer_mu_ (or the open).
  void assert_positions() const {
    const offset ls = log_start_offset(), rp = recovery_point(), leo = log_end_offset();
    BROOK_ASSERT(ls <= rp && rp <= leo, "{}: log start {} <= recovery point {} <= log end {} does not hold",
                 dir_.string(), ls, rp, leo);
  }

  /// Moves the log start; the recovery point follows it (Kafka's updateLogStartOffset):
  /// nothing below the log start is read again, so nothing below it needs recovering.
  void set_log_start(offset o) {
    BROOK_ASSERT(o >= log_start_offset(), "{}: the log start moves only forward ({} -> {})", dir_.string(),
                 log_start_offset(), o);
    log_start_.store(o.value(), std::memory_order_release);
    if (recovery_point() < o) recovery_point_.store(o.value(), std::memory_order_release);
    assert_positions();
  }

  /// After a truncation to `end`: the log end, recovery point and first dirty offset fall back.
  void set_log_end_after_truncation(offset end) {
    log_end_.store(end.value(), std::memory_order_release);
    if (recovery_point() > end) recovery_point_.store(end.value(), std::memory_order_release);
    if (first_dirty_.load(std::memory_order_relaxed) > end.value())
      first_dirty_.store(end.value(), std::memory_order_release);
    assert_positions();
  }

  /// After the log end moved or the log closed: wakes wait_for_data (the notifier's bump
  /// follows the store, and a waiter reads the sequence before the log end: none is lost).
  void notify_waiters() {
    if (closed_) closed_flag_.store(true, std::memory_order_release);
    changed_.notify();
  }

  result<seg_ptr> open_segment(offset base, segment::open_kind kind, bool active_seg,
                               recovery_report* report = nullptr) {
    return segment::open(dir_, base, config_, kind, !opts_.read_only, active_seg, recovery_point(),
                         report ? *report : report_);
  }

  // ------------------------------------------------------------------ appending

  /// Writes validated batches to the active segment, rolling first by segment.ms or size.
  result<void> write_batches(std::span<const std::byte> batches, offset last, timestamp_ms max_ts, timestamp_ms now) {
    auto a = segs_.active();
    // segment.ms, Kafka's way: the incoming timestamp against the segment's first batch,
    // or wall time since the segment was created when timestamps are missing.
    if (!a->empty()) {
      const timestamp_ms first = a->first_batch_timestamp();
      const std::int64_t waited = first >= 0 && max_ts >= 0 ? max_ts - first : now - active_created_ms_;
      const bool full = !a->has_room_for(batches.size(), last);
      if (waited > config_.segment_time.count() || full) {
        BROOK_TRY(roll_locked());
        a = segs_.active();
      }
    }
    if (a->has_room_for(batches.size(), last)) return a->append(batches);
    // More than one segment's worth in one call: append batch by batch.
    for (std::size_t pos = 0; pos < batches.size();) {
      batch_header h = decode_batch_header_unchecked(batches.data() + pos);
      auto one = batches.subspan(pos, h.size_bytes());
      if (!segs_.active()->has_room_for(one.size(), h.last_offset())) BROOK_TRY(roll_locked());
      BROOK_TRY(segs_.active()->append(one));
      pos += h.size_bytes();
    }
    return ok();
  }

  result<void> flush_locked() {
    if (opts_.read_only) return ok();
    BROOK_TRY(segs_.active()->flush());
    recovery_point_.store(log_end_offset().value(), std::memory_order_release);
    unflushed_records_ = 0;
    first_unflushed_ms_ = -1;
    return ok();
  }

  result<void> roll_locked() {
    auto old = segs_.active();
    const offset base = log_end_offset();
    BROOK_TRY(old->seal());
    if (old->empty() && old->base_offset() == base) {
      // Re-open an empty sealed segment as active instead of creating a duplicate name.
      BROOK_TRY_ASSIGN(seg_ptr s, open_segment(base, segment::open_kind::trusted, true));
      segs_.replace_back(std::move(s));
      return ok();
    }
    BROOK_TRY_ASSIGN(seg_ptr s, open_segment(base, segment::open_kind::create, true));
    segs_.push_back(std::move(s));  // asserts base > the old active segment's base
    // Everything in the sealed segment is durable now.
    recovery_point_.store(std::max(recovery_point(), old->next_offset()).value(), std::memory_order_release);
    assert_positions();
    active_created_ms_ = config_.clock->now_ms();
    BROOK_TRY(files().sync_directory(dir_));
    return write_checkpoints();
  }

  // ------------------------------------------------------------------ deleting and truncating

  result<void> delete_oldest(std::size_t n) {
    // The log start moves under the list's lock: a reader that pins after the segments are
    // gone sees the new log start (read() reports offset_out_of_range against it).
    const auto gone = segs_.pop_front(n, [&](const seg_ptr& first) {
      if (log_start_offset() < first->base_offset()) set_log_start(first->base_offset());
    });
    for (const auto& s : gone) segment::remove_files(files(), dir_, s->base_offset());
    BROOK_TRY(files().sync_directory(dir_));
    return write_checkpoints();
  }

  result<void> truncate_fully_locked(offset o) {
    auto reset = segs_.modify([&](segment_list::vector& segs) -> result<void> {
      BROOK_TRY_ASSIGN(seg_ptr fresh, open_segment_replacing_all(segs, o));
      segs.assign(1, std::move(fresh));
      log_start_.store(o.value(), std::memory_order_release);
      log_end_.store(o.value(), std::memory_order_release);
      recovery_point_.store(o.value(), std::memory_order_release);
      first_dirty_.store(o.value(), std::memory_order_release);
      return ok();
    });
    BROOK_TRY(std::move(reset));
    notify_waiters();  // the log end may have moved forward (a follower restarting at its leader's log start)
    active_created_ms_ = config_.clock->now_ms();
    if (checkpoints_.cleaner_offset()) BROOK_TRY(checkpoints_.write_cleaner_offset(o));
    return write_checkpoints();
  }

  /// Removes every segment's files and creates an empty segment at `o`. On failure the
  /// list keeps its (now fileless) segments, which stay readable through their mappings.
  result<seg_ptr> open_segment_replacing_all(const segment_list::vector& segs, offset o) {
    for (const auto& s : segs) segment::remove_files(files(), dir_, s->base_offset());
    return open_segment(o, segment::open_kind::create, true);
  }

  // ------------------------------------------------------------------ compaction

  result<cleanable_info> plan(const std::vector<seg_ptr>& segs, std::optional<offset> upper, timestamp_ms now) const {
    return plan_cleaning(segs, offset(first_dirty_.load(std::memory_order_acquire)), log_start_offset(),
                         log_end_offset(), upper, config_, now);
  }

  /// Rewrites one segment of a pass and swaps it in. false: a truncation or close ended the pass.
  result<bool> clean_one(const seg_ptr& s, const detail::record_filter& filter, std::uint64_t gen, compact_stats& st) {
    const offset base = s->base_offset();
    st.bytes_before += s->size();
    detail::cleaned_segment_writer w(dir_, base, config_);
    BROOK_TRY_ASSIGN(bool changed, detail::clean_segment_into(*s, filter, w, st));
    if (!changed) {
      st.bytes_after += s->size();
      return true;
    }
    BROOK_TRY(w.finish());

    std::lock_guard wl(writer_mu_);
    if (closed_ || structure_gen_.load(std::memory_order_acquire) != gen) {
      w.discard();
      return false;
    }
    const auto pos = segs_.find(s);  // stable while writer_mu_ is held
    if (!pos) {                      // retention deleted it meanwhile
      w.discard();
      return true;
    }
    ++st.segments_cleaned;
    BROOK_TRY(detail::commit_cleaned_segment(files(), dir_, base));
    recovery_report quiet;  // the open's report belongs to open(); this one is not kept
    BROOK_TRY_ASSIGN(seg_ptr ns, open_segment(base, segment::open_kind::trusted, /*active=*/false, &quiet));
    segs_.replace_at(*pos, std::move(ns));
    st.bytes_after += w.size();
    return true;
  }

  // ------------------------------------------------------------------ reading

  result<std::optional<timestamp_offset>> offset_for_timestamp_once(timestamp_ms ts,
                                                                    std::optional<offset> max_offset) const {
    const offset bound = max_offset ? std::min(*max_offset, log_end_offset()) : log_end_offset();
    return find_offset_by_timestamp(segs_.snapshot(), ts, log_start_offset(), bound);
  }

  file_system& files() const noexcept { return *config_.files; }

  result<void> flush_seal_and_checkpoint() {
    BROOK_TRY(flush_locked());
    BROOK_TRY(segs_.active()->seal());
    return write_checkpoints();
  }

  // ------------------------------------------------------------------ checkpoints

  result<void> write_checkpoints() {
    if (opts_.read_only) return ok();
    BROOK_TRY(checkpoints_.write_recovery_point(recovery_point()));
    return checkpoints_.write_log_start(log_start_offset());
  }

  const fs::path dir_;
  file_handle dir_lock_;  // holds the flock while the log is open for writing
  log_config config_;
  const log_open_options opts_;
  recovery_report report_;
  log_checkpoints checkpoints_;  // writer_mu_
  segment_list segs_;

  std::mutex writer_mu_;  // serialises mutating calls
  bool closed_ = false;
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

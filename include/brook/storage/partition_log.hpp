// A partition's log: a directory of segments (segment.hpp) plus two Kafka
// checkpoint files, as Kafka lays out `<log dir>/<topic>-<partition>/`:
//
//   00000000000000000000.log / .index / .timeindex
//   00000000000000004096.log / .index / .timeindex      <- active segment
//   recovery-point-offset-checkpoint                    <- see below
//   log-start-offset-checkpoint
//   cleaner-offset-checkpoint                           <- once compacted (log_cleaner.hpp)
//   leader-epoch-checkpoint, replication-offset-checkpoint  <- a replica's (replication/),
//                                                          left alone here
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
// Thread-safety: any number of threads may read (read, offset_for_timestamp,
// the accessors, wait_for_data) concurrently with each other and with one
// mutating call at a time; mutating calls (append, flush, roll, retention,
// truncation, close) are serialised by an internal writer mutex. compact() may run on
// another thread alongside appends and reads (one pass at a time); it takes the writer
// mutex only to swap each rewritten segment in. Readers never
// wait for the writer's appends: they take a short internal lock only to pin a
// segment, then read its mapping lock-free. (truncate_to, a rare replica operation,
// holds that lock while it cuts and rebuilds the last segment, so readers' lookups
// wait for it.)
#pragma once

#include <sys/file.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/clock.hpp>
#include <brook/core/result.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/checkpoint_file.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/log_cleaner.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/log_slice.hpp>
#include <brook/storage/segment.hpp>
#include <brook/core/types.hpp>

namespace brook {

struct log_open_options {
  /// Open without modifying any file and without recovery writes: for tools reading a log
  /// another process owns. A torn tail is ignored (not cut); indexes live in memory. Takes
  /// no lock. (A read-only reader in another process is not protected from the writer
  /// cutting a file under it with truncate_to; in-process readers are.)
  bool read_only = false;
  /// Validate every batch of every segment (as if nothing had ever been checkpointed),
  /// instead of trusting segments below the recovery point after a tail check.
  bool full_recovery = false;
};

struct append_options {
  /// true: the log assigns offsets from log_end_offset (producers). false: keep the offsets
  /// the batches carry, which must start at or after log_end_offset (replicas).
  bool assign_offsets = true;
};

struct append_result {
  offset base_offset{0};        ///< first offset written
  offset last_offset{0};        ///< last offset written
  timestamp_ms log_append_time = -1;  ///< the stamped time for LogAppendTime logs, else -1
  std::size_t records = 0;
  std::size_t bytes = 0;
};

/// The completion of an append handed to someone else (a produce_target, a broker): called
/// exactly once with the append's outcome. The one name for that callback in every layer.
using append_callback = std::function<void(const result<append_result>&)>;

struct read_options {
  /// Stop adding batches once this many bytes are in the slice (the first batch is always
  /// returned whole, as in Kafka's fetch since KIP-74). Default 1 MiB (max.partition.fetch.bytes).
  std::size_t max_bytes = 1024 * 1024;
  /// Exclusive upper bound on offsets returned (the high watermark); default log end.
  std::optional<offset> max_offset{};
};

struct timestamp_offset {
  offset off;
  timestamp_ms timestamp;
};

struct segment_info {
  offset base_offset;
  offset next_offset;
  std::uint64_t size_bytes;
  timestamp_ms max_timestamp;
  fs::path path;
};

class partition_log {
 public:
  partition_log(const partition_log&) = delete;
  partition_log& operator=(const partition_log&) = delete;
  ~partition_log() { (void)close(); }

  /// Opens (creating when missing and writable) the partition directory and recovers it.
  static result<std::unique_ptr<partition_log>> open(const fs::path& dir, log_config config = {},
                                                     log_open_options opts = {}) {
    BROOK_TRY(config.validate());
    if (!config.clock) config.clock = make_system_clock();
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

  std::vector<segment_info> segments() const {
    std::vector<segment_info> out;
    for (const auto& s : snapshot()) {
      auto m = s->exact_max_timestamp();  // verified once per segment (the time index is a hint)
      out.push_back({s->base_offset(), s->next_offset(), s->size(), m ? *m : s->max_timestamp(), s->log_path()});
    }
    return out;
  }
  std::size_t segment_count() const {
    std::lock_guard lk(segs_mu_);
    return segs_.size();
  }
  std::uint64_t size_bytes() const {
    std::uint64_t n = 0;
    for (const auto& s : snapshot()) n += s->size();
    return n;
  }

  // ------------------------------------------------------------------ writing

  /// Validates and appends one or more concatenated batches. With assign_offsets the
  /// batches' baseOffset fields are rewritten in place (and, for LogAppendTime logs, the
  /// timestamp and CRC), so `batches` must be writable.
  /// Errors: corrupt_message, unsupported_compression_type, record_too_large,
  /// invalid_record (also: a record without a key, from a producer, on a compacted log, as
  /// Kafka refuses it), offset_out_of_range (replica batches below the log end), OS errors.
  result<append_result> append(std::span<std::byte> batches, append_options ao = {}) {
    std::lock_guard wl(writer_mu_);
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
    if (opts_.read_only) return make_error(errc::invalid_request, "{}: log was opened read-only", dir_.string());
    if (batches.empty()) return make_error(errc::invalid_record, "{}: empty append", dir_.string());

    const timestamp_ms now = config_.clock->now_ms();
    const bool log_append_time = config_.message_timestamp_type == timestamp_type::log_append_time;
    offset next = log_end_offset();
    append_result res;
    res.base_offset = next;
    std::size_t pos = 0;
    std::size_t batch_count = 0;
    while (pos < batches.size()) {
      auto rest = batches.subspan(pos);
      auto hr = check_batch_header(rest, "appended batch");
      if (!hr) return hr.error();
      if (hr->size_bytes() > config_.max_message_bytes)
        return make_error(errc::record_too_large, "{}: batch of {} bytes exceeds max.message.bytes {}", dir_.string(),
                          hr->size_bytes(), config_.max_message_bytes);
      auto v = record_batch_view::parse(rest, batch_check{}, "appended batch");
      if (!v) return v.error();
      const batch_header& h = v->header();
      auto one = rest.first(h.size_bytes());
      if (ao.assign_offsets) {
        if (h.is_control())
          return make_error(errc::invalid_record, "{}: producers may not append control batches", dir_.string());
        if (std::int64_t{h.records_count} != std::int64_t{h.last_offset_delta} + 1)
          return make_error(errc::invalid_record, "{}: batch has {} records but lastOffsetDelta {}", dir_.string(),
                            h.records_count, h.last_offset_delta);
        if (config_.compacts())
          for (const record_view& r : *v)
            if (r.key().is_null())
              return make_error(errc::invalid_record,
                                "{}: compacted topic cannot accept a record without a key (record {} of batch {})",
                                dir_.string(), r.offset() - h.base_offset, batch_count);
        set_batch_base_offset(one, next);
        if (log_append_time) set_batch_log_append_time(one, now);
        if (batch_count == 0) res.base_offset = next;
        next = next + (std::int64_t{h.last_offset_delta} + 1);
      } else {
        if (h.base_offset < next)
          return make_error(errc::offset_out_of_range, "{}: replica batch at offset {} is below the log end {}",
                            dir_.string(), h.base_offset, next);
        if (batch_count == 0) res.base_offset = h.base_offset;
        next = h.next_offset();
      }
      res.records += static_cast<std::size_t>(h.records_count);
      pos += h.size_bytes();
      ++batch_count;
    }
    res.last_offset = next - 1;
    res.bytes = batches.size();
    res.log_append_time = log_append_time ? now : -1;

    BROOK_TRY(write_batches(batches, now));
    log_end_.store(next.value(), std::memory_order_seq_cst);  // seq_cst: pairs with waiters_ (see wait_for_data)
    notify_waiters();

    unflushed_records_ += static_cast<std::int64_t>(res.records);
    if (first_unflushed_ms_ < 0) first_unflushed_ms_ = now;
    if (unflushed_records_ >= config_.flush_messages) BROOK_TRY(flush_locked());
    return res;
  }

  /// fdatasyncs everything appended; the recovery point moves to the log end.
  result<void> flush() {
    std::lock_guard wl(writer_mu_);
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
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
    if (first_unflushed_ms_ >= 0 && now - first_unflushed_ms_ >= config_.flush_interval.count()) BROOK_TRY(flush_locked());
    if (!active()->empty() && now - active_created_ms_ > config_.segment_time.count()) BROOK_TRY(roll_locked());
    return ok();
  }

  /// Seals the active segment and starts a new one at the log end (no-op on an empty one).
  result<void> roll() {
    std::lock_guard wl(writer_mu_);
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
    if (active()->empty()) return ok();
    return roll_locked();
  }

  /// Writes the recovery-point and log-start checkpoints now.
  result<void> checkpoint() {
    std::lock_guard wl(writer_mu_);
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
    return write_checkpoints();
  }

  /// Deletes the oldest segments that retention.ms (by each segment's largest timestamp),
  /// retention.bytes or the log start offset make eligible. Returns segments deleted.
  /// retention.ms and retention.bytes apply only when cleanup.policy contains delete.
  /// A segment whose largest timestamp lies in the future is kept until that time has passed
  /// (Kafka behaves the same way).
  result<std::size_t> enforce_retention() {
    std::lock_guard wl(writer_mu_);
    if (closed_ || opts_.read_only) return std::size_t{0};
    const timestamp_ms now = config_.clock->now_ms();
    const std::int64_t retention = config_.retention_time.count();
    auto segs = snapshot();
    std::int64_t total = 0;
    for (const auto& s : segs) total += static_cast<std::int64_t>(s->size());
    std::int64_t excess = config_.retention_bytes >= 0 ? total - config_.retention_bytes : 0;
    const offset log_start = log_start_offset();
    std::size_t n = 0;
    for (std::size_t i = 0; i < segs.size(); ++i) {
      const auto& s = segs[i];
      if (s->empty() && i + 1 == segs.size()) break;  // an empty active segment holds the log end
      const auto sz = static_cast<std::int64_t>(s->size());
      bool by_start = i + 1 < segs.size() ? segs[i + 1]->base_offset() <= log_start : s->next_offset() <= log_start;
      auto expired = [&](timestamp_ms m) { return retention >= 0 && m >= 0 && now - m > retention; };
      bool by_time = config_.deletes() && expired(s->max_timestamp());
      if (by_time) {
        // The hint says expired: confirm against the batches before deleting anything.
        auto exact = s->exact_max_timestamp();
        if (!exact) return exact.error();
        by_time = expired(*exact);
      }
      bool by_size = config_.deletes() && config_.retention_bytes >= 0 && excess - sz >= 0;
      if (!(by_start || by_time || by_size)) break;
      excess -= sz;
      ++n;
    }
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
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
    if (o > log_end_offset())
      return make_error(errc::offset_out_of_range, "{}: cannot delete records before {}, past the log end {}",
                        dir_.string(), o, log_end_offset());
    if (o <= log_start_offset()) return ok();
    log_start_.store(o.value(), std::memory_order_release);
    auto segs = snapshot();
    std::size_t n = 0;
    while (n + 1 < segs.size() && segs[n + 1]->base_offset() <= o) ++n;
    if (n > 0) BROOK_TRY(delete_oldest(n));
    return write_checkpoints();
  }

  /// Removes every record and restarts the log, empty, at `o` (Kafka's
  /// truncateFullyAndStartAt): a follower whose log ends below its leader's log start.
  result<void> truncate_fully_and_start_at(offset o) {
    std::lock_guard wl(writer_mu_);
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
    if (opts_.read_only) return make_error(errc::invalid_request, "{}: log was opened read-only", dir_.string());
    if (o.value() < 0) return make_error(errc::invalid_argument, "{}: negative start offset {}", dir_.string(), o);
    structure_gen_.fetch_add(1, std::memory_order_acq_rel);
    return truncate_fully_locked(o);
  }

  /// Removes every record at or after `o`. As in Kafka, the batch containing `o` is removed
  /// whole, so the new log end is that batch's base offset (<= o). Readers holding slices of
  /// removed bytes keep valid (old) bytes. Offsets below the log start reset the log to
  /// start empty at `o`.
  result<void> truncate_to(offset o) {
    std::lock_guard wl(writer_mu_);
    if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
    if (opts_.read_only) return make_error(errc::invalid_request, "{}: log was opened read-only", dir_.string());
    if (o >= log_end_offset()) return ok();
    structure_gen_.fetch_add(1, std::memory_order_acq_rel);  // a cleaner pass running now must not swap
    if (o < log_start_offset()) return truncate_fully_locked(o);
    std::lock_guard sl(segs_mu_);
    // Drop whole segments at or above o (but keep the first, which holds the log start).
    bool popped = false;
    while (segs_.size() > 1 && segs_.back()->base_offset() >= o) {
      segment::remove_files(dir_, segs_.back()->base_offset());
      segs_.pop_back();
      popped = true;
    }
    auto& last = segs_.back();
    std::uint64_t cut = last->size();
    auto pos = last->find_position(o, last->size());
    if (!pos) return pos.error();
    if (*pos) cut = **pos;
    if (cut < last->size()) {
      const offset base = last->base_offset();
      const bool shared = last.use_count() > 1;  // a reader holds a slice: keep its inode intact
      fs::path lp = last->log_path();
      if (shared) {
        BROOK_TRY(copy_prefix_and_swap(lp, cut));
      } else {
        last.reset();
        auto f = file_handle::open(lp, O_RDWR);
        if (!f) return f.error();
        BROOK_TRY(f->truncate(cut));
        BROOK_TRY(f->datasync());
      }
      // Rebuild the segment (and fresh index files) from the cut log.
      auto s = open_segment(base, segment::open_kind::recover, /*active=*/true);
      if (!s) return s.error();
      segs_.back() = std::move(*s);
    } else if (popped) {
      // A sealed segment becomes the active one again: reopen it with room to grow.
      auto s = open_segment(last->base_offset(), segment::open_kind::trusted, /*active=*/true);
      if (!s) return s.error();
      segs_.back() = std::move(*s);
    }
    active_created_ms_ = config_.clock->now_ms();
    offset end = segs_.back()->next_offset();
    log_end_.store(end.value(), std::memory_order_release);
    if (recovery_point() > end) recovery_point_.store(end.value(), std::memory_order_release);
    if (first_dirty_.load(std::memory_order_relaxed) > end.value())
      first_dirty_.store(end.value(), std::memory_order_release);
    if (cleaner_ckpt_ > end.value())
      BROOK_TRY(write_cleaner_checkpoint(end.value()));  // Kafka's maybeTruncateCheckpoint
    return write_checkpoints_unlocked_segs();
  }

  /// Flushes, seals the active segment's indexes, checkpoints so the next open is fast, and
  /// releases the directory lock. Further calls fail with errc::closed. Readers' slices
  /// stay valid.
  result<void> close() {
    std::lock_guard wl(writer_mu_);
    if (closed_) return ok();
    closed_ = true;
    notify_waiters();
    if (opts_.read_only || segment_count() == 0) return ok();  // read-only, or open() failed
    BROOK_TRY(flush_locked());
    BROOK_TRY(active()->seal());
    BROOK_TRY(write_checkpoints());
    dir_lock_.reset();  // another writer may open the directory now
    return ok();
  }

  /// A crash, for fault injection: closes without flushing, sealing or writing checkpoints
  /// and releases the directory lock. What was appended since the last flush is still in the
  /// files (the page cache survives a process crash); cut it to model a power loss. Further
  /// calls fail with errc::closed; readers' slices stay valid.
  void abandon() {
    std::lock_guard wl(writer_mu_);
    if (closed_) return;
    closed_ = true;
    notify_waiters();
    dir_lock_.reset();
  }

  // ------------------------------------------------------------------ compaction

  /// Where the log stands for the cleaner: the first dirty offset, the cleanable segments
  /// below `upper_bound` (see compact_options) and their clean and dirty bytes, whose ratio
  /// housekeeping compares with min.cleanable.dirty.ratio. Thread-safe.
  result<cleanable_info> cleanable(std::optional<offset> upper_bound = {}) const {
    return plan_cleaning(snapshot(), upper_bound, config_.clock->now_ms());
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
    {
      std::lock_guard wl(writer_mu_);
      if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
      if (opts_.read_only) return make_error(errc::invalid_request, "{}: log was opened read-only", dir_.string());
      if (!config_.compacts())
        return make_error(errc::invalid_request, "{}: cleanup.policy is {}; compaction needs compact", dir_.string(),
                          to_string(config_.cleanup));
    }
    const std::uint64_t gen = structure_gen_.load(std::memory_order_acquire);
    const timestamp_ms now = config_.clock->now_ms();
    const auto segs = snapshot();  // pins every segment the map's keys point into
    auto plan = plan_cleaning(segs, co.upper_bound, now);
    if (!plan) return plan.error();
    compact_stats st;
    st.segments_cleanable = plan->segments;
    st.first_dirty_before = plan->first_dirty;
    st.first_dirty_after =
        plan->segments == 0 ? plan->first_dirty : std::max(plan->first_dirty, plan->first_uncleanable);
    if (plan->segments == 0) return st;

    offset_map map;
    for (std::size_t i = 0; i < plan->segments; ++i)
      if (segs[i + 1]->base_offset() > plan->first_dirty)
        BROOK_TRY(detail::add_segment_to_map(*segs[i], plan->first_dirty, map));
    const detail::record_filter filter{&map, now, config_.delete_retention.count()};

    for (std::size_t i = 0; i < plan->segments; ++i) {
      const seg_ptr& s = segs[i];
      const offset base = s->base_offset();
      st.bytes_before += s->size();
      detail::cleaned_segment_writer w(dir_, base, config_);
      auto changed = detail::clean_segment_into(*s, filter, w, st);
      if (!changed) return changed.error();
      if (!*changed) {
        st.bytes_after += s->size();
        continue;
      }
      BROOK_TRY(w.finish());
      if (co.on_step) BROOK_TRY(co.on_step(clean_step::cleaned_written, base));

      std::lock_guard wl(writer_mu_);
      std::optional<std::size_t> pos;
      {
        std::lock_guard sl(segs_mu_);
        for (std::size_t k = 0; k < segs_.size(); ++k)
          if (segs_[k] == s) pos = k;
      }
      if (closed_ || structure_gen_.load(std::memory_order_acquire) != gen) {
        w.discard();
        return st;  // truncated or closed meanwhile: stop, the first dirty offset stays
      }
      if (!pos) {  // retention deleted it meanwhile
        w.discard();
        continue;
      }
      ++st.segments_cleaned;
      BROOK_TRY(detail::commit_cleaned_segment(dir_, base, co.on_step));
      recovery_report quiet;  // the open's report belongs to open(); this one is not kept
      auto ns = open_segment(base, segment::open_kind::trusted, /*active=*/false, &quiet);
      if (!ns) return ns.error();
      {
        std::lock_guard sl(segs_mu_);
        segs_[*pos] = std::move(*ns);
      }
      st.bytes_after += w.size();
    }
    std::lock_guard wl(writer_mu_);
    if (closed_ || structure_gen_.load(std::memory_order_acquire) != gen) return st;
    if (st.first_dirty_after.value() > first_dirty_.load(std::memory_order_acquire))
      first_dirty_.store(st.first_dirty_after.value(), std::memory_order_release);
    if (st.first_dirty_after.value() != cleaner_ckpt_)
      BROOK_TRY(write_cleaner_checkpoint(st.first_dirty_after.value()));
    return st;
  }

  // ------------------------------------------------------------------ reading

  /// Whole batches starting with the one that holds `start`, up to max_bytes and below
  /// max_offset, from one segment. Empty when start is at the bound.
  /// offset_out_of_range outside [log start, log end].
  result<log_slice> read(offset start, read_options ro = {}) const {
    const offset log_start = log_start_offset();
    const offset leo = log_end_offset();
    if (start < log_start || start > leo)
      return make_error(errc::offset_out_of_range, "{}: offset {} is outside [{}, {}]", dir_.string(), start, log_start, leo);
    const offset bound = ro.max_offset ? std::min(*ro.max_offset, leo) : leo;
    if (start >= bound) return log_slice(nullptr, 0, 0, start, start);
    auto seg = pin(start);
    // Retention or delete_records_before may have removed the segments holding `start`
    // since the bound check above: say so rather than hand out later records as if they followed.
    if (seg && start < seg->base_offset())
      return make_error(errc::offset_out_of_range, "{}: offset {} is below the log start {}", dir_.string(), start,
                        log_start_offset());
    while (seg) {
      const std::uint64_t limit = seg->size();
      auto pos = seg->find_position(start, limit);
      if (!pos) return pos.error();
      if (*pos) {
        std::uint64_t p = **pos, len = 0;
        offset next = start;
        while (p + len < limit && (len == 0 || len < ro.max_bytes)) {
          auto h = seg->header_at(p + len, limit);
          if (!h) return h.error();
          if (h->last_offset() >= bound) break;
          if (len > 0 && len + h->size_bytes() > ro.max_bytes) break;
          len += h->size_bytes();
          next = h->next_offset();
        }
        return log_slice(std::move(seg), p, len, start, std::max(next, start));
      }
      seg = pin_after(seg->base_offset());  // start lies past this segment's batches
    }
    return log_slice(nullptr, 0, 0, start, start);
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

 private:
  result<std::optional<timestamp_offset>> offset_for_timestamp_once(timestamp_ms ts,
                                                                    std::optional<offset> max_offset) const {
    const offset bound = max_offset ? std::min(*max_offset, log_end_offset()) : log_end_offset();
    const offset log_start = log_start_offset();
    for (const auto& s : snapshot()) {
      if (s->max_timestamp() < ts) {
        auto exact = s->exact_max_timestamp();  // never skip a segment on a stale hint
        if (!exact) return exact.error();
        if (*exact < ts) continue;
      }
      offset from = std::max(s->time_lookup(ts), log_start);
      const std::uint64_t limit = s->size();
      auto pos = s->find_position(from, limit);
      if (!pos) return pos.error();
      if (!*pos) continue;
      std::uint64_t p = **pos;
      while (p < limit) {
        auto v = record_batch_view::parse(s->bytes(p, limit - p), batch_check{}, [&] { return s->where(p); });
        if (!v) return v.error();
        if (v->base_offset() >= bound) return std::optional<timestamp_offset>();
        if (v->header().max_timestamp >= ts && !v->header().is_control()) {
          for (const record_view& r : *v)
            if (r.offset() >= log_start && r.offset() < bound && r.timestamp() >= ts)
              return std::optional<timestamp_offset>(timestamp_offset{r.offset(), r.timestamp()});
        }
        p += v->size_bytes();
      }
    }
    return std::optional<timestamp_offset>();
  }


 public:
  /// Blocks until the log end passes `after` (some offset >= after was appended), the log
  /// is closed, or the deadline passes. Returns whether data is there. No polling.
  bool wait_for_data(offset after, std::chrono::steady_clock::time_point deadline) const {
    if (log_end_offset() > after) return true;
    std::unique_lock lk(wait_mu_);
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    bool got = wait_cv_.wait_until(lk, deadline, [&] {
      return log_end_.load(std::memory_order_seq_cst) > after.value() || closed_flag_.load(std::memory_order_seq_cst);
    });
    waiters_.fetch_sub(1, std::memory_order_seq_cst);
    return got && log_end_offset() > after;
  }

 private:
  using seg_ptr = std::shared_ptr<segment>;

  partition_log(fs::path dir, log_config cfg, log_open_options o)
      : dir_(std::move(dir)), config_(std::move(cfg)), opts_(o) {}

  std::vector<seg_ptr> snapshot() const {
    std::lock_guard lk(segs_mu_);
    return segs_;
  }
  seg_ptr active() const {
    std::lock_guard lk(segs_mu_);
    return segs_.back();
  }
  /// The segment that would hold offset o.
  seg_ptr pin(offset o) const {
    std::lock_guard lk(segs_mu_);
    auto it = std::upper_bound(segs_.begin(), segs_.end(), o,
                               [](offset v, const seg_ptr& s) { return v < s->base_offset(); });
    if (it == segs_.begin()) return segs_.empty() ? nullptr : segs_.front();
    return *(it - 1);
  }
  seg_ptr pin_after(offset base) const {
    std::lock_guard lk(segs_mu_);
    for (const auto& s : segs_)
      if (s->base_offset() > base) return s;
    return nullptr;
  }

  void notify_waiters() {
    if (closed_) closed_flag_.store(true, std::memory_order_seq_cst);
    // The store of log_end_ (or closed_flag_) and this load, and the waiter's increment and
    // its load of log_end_, are all seq_cst: one side always sees the other, so no wakeup is lost.
    if (waiters_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard lk(wait_mu_); }
      wait_cv_.notify_all();
    }
  }

  result<seg_ptr> open_segment(offset base, segment::open_kind kind, bool active_seg,
                               recovery_report* report = nullptr) {
    segment::open_args a;
    a.dir = dir_;
    a.base = base;
    a.config = &config_;
    a.kind = kind;
    a.writable = !opts_.read_only;
    a.active = active_seg;
    a.recovery_point = recovery_point();
    return segment::open(a, report ? *report : report_);
  }

  /// The cleaning plan for `segs` (a snapshot; its last segment is the active one).
  result<cleanable_info> plan_cleaning(const std::vector<seg_ptr>& segs, std::optional<offset> upper,
                                       timestamp_ms now) const {
    cleanable_info info;
    const offset log_start = log_start_offset(), leo = log_end_offset();
    offset fd(first_dirty_.load(std::memory_order_acquire));
    if (fd < log_start || fd > leo) fd = log_start;  // as Kafka resets an out-of-range checkpoint
    info.first_dirty = fd;
    if (segs.empty()) return info;
    offset bound = segs.back()->base_offset();
    if (upper && *upper < bound) bound = *upper;
    std::size_t n = 0;
    while (n + 1 < segs.size() && segs[n + 1]->base_offset() <= bound) ++n;
    if (config_.min_compaction_lag.count() > 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if (segs[i + 1]->base_offset() <= fd) continue;  // wholly clean
        auto m = segs[i]->exact_max_timestamp();
        if (!m) return m.error();
        if (*m > now - config_.min_compaction_lag.count()) {
          n = i;
          break;
        }
      }
    }
    info.segments = n;
    info.first_uncleanable = segs[n]->base_offset();
    for (std::size_t i = 0; i < n; ++i)
      (segs[i + 1]->base_offset() <= fd ? info.clean_bytes : info.dirty_bytes) += segs[i]->size();
    return info;
  }

  result<void> write_cleaner_checkpoint(std::int64_t v) {
    auto [topic, part] = topic_partition_of(dir_);
    BROOK_TRY(write_checkpoint(dir_ / partition_files::cleaner_offset_checkpoint, {{topic, std::to_string(part), std::to_string(v)}}));
    cleaner_ckpt_ = v;
    return ok();
  }

  result<void> write_batches(std::span<const std::byte> batches, timestamp_ms now) {
    auto a = active();
    offset last = log_end_offset();
    timestamp_ms max_ts = -1;
    {
      // last offset of the set, for the int32-relative-offset rule
      std::size_t pos = 0;
      while (pos < batches.size()) {
        batch_header h = decode_batch_header_unchecked(batches.data() + pos);
        last = h.last_offset();
        max_ts = std::max(max_ts, h.max_timestamp);
        pos += h.size_bytes();
      }
    }
    // segment.ms, Kafka's way: the incoming timestamp against the segment's first batch,
    // or wall time since the segment was created when timestamps are missing.
    if (!a->empty()) {
      timestamp_ms first = a->first_batch_timestamp();
      std::int64_t waited = first >= 0 && max_ts >= 0 ? max_ts - first : now - active_created_ms_;
      if (waited > config_.segment_time.count()) {
        BROOK_TRY(roll_locked());
        a = active();
      }
    }
    if (!a->has_room_for(batches.size(), last)) {
      if (!a->empty()) {
        BROOK_TRY(roll_locked());
        a = active();
      }
      if (!a->has_room_for(batches.size(), last)) {
        // More than one segment's worth in one call: append batch by batch.
        std::size_t pos = 0;
        while (pos < batches.size()) {
          batch_header h = decode_batch_header_unchecked(batches.data() + pos);
          auto one = batches.subspan(pos, h.size_bytes());
          if (!active()->has_room_for(one.size(), h.last_offset())) BROOK_TRY(roll_locked());
          BROOK_TRY(active()->append(one));
          pos += h.size_bytes();
        }
        return ok();
      }
    }
    return a->append(batches);
  }

  result<void> flush_locked() {
    if (opts_.read_only) return ok();
    BROOK_TRY(active()->flush());
    recovery_point_.store(log_end_offset().value(), std::memory_order_release);
    unflushed_records_ = 0;
    first_unflushed_ms_ = -1;
    return ok();
  }

  result<void> roll_locked() {
    auto old = active();
    const offset base = log_end_offset();
    BROOK_TRY(old->seal());
    if (old->empty() && old->base_offset() == base) {
      // Re-open an empty sealed segment as active instead of creating a duplicate name.
      auto s = open_segment(base, segment::open_kind::trusted, true);
      if (!s) return s.error();
      std::lock_guard lk(segs_mu_);
      segs_.back() = std::move(*s);
      return ok();
    }
    auto s = open_segment(base, segment::open_kind::create, true);
    if (!s) return s.error();
    {
      std::lock_guard lk(segs_mu_);
      BROOK_ASSERT(segs_.back()->base_offset() < base, "{}: rolled segment {} does not follow {}", dir_.string(), base,
                   segs_.back()->base_offset());
      segs_.push_back(std::move(*s));
    }
    // Everything in the sealed segment is durable now.
    recovery_point_.store(std::max(recovery_point(), old->next_offset()).value(), std::memory_order_release);
    active_created_ms_ = config_.clock->now_ms();
    BROOK_TRY(sync_directory(dir_));
    return write_checkpoints();
  }

  result<void> delete_oldest(std::size_t n) {
    std::vector<seg_ptr> gone;
    {
      std::lock_guard lk(segs_mu_);
      n = std::min(n, segs_.size() - 1);
      gone.assign(segs_.begin(), segs_.begin() + static_cast<std::ptrdiff_t>(n));
      segs_.erase(segs_.begin(), segs_.begin() + static_cast<std::ptrdiff_t>(n));
      BROOK_ASSERT(!segs_.empty(), "{}: a log keeps at least its active segment", dir_.string());
      offset first = segs_.front()->base_offset();
      if (log_start_offset() < first) log_start_.store(first.value(), std::memory_order_release);
    }
    for (const auto& s : gone) segment::remove_files(dir_, s->base_offset());
    BROOK_TRY(sync_directory(dir_));
    return write_checkpoints();
  }

  result<void> truncate_fully_locked(offset o) {
    std::lock_guard sl(segs_mu_);
    for (const auto& s : segs_) segment::remove_files(dir_, s->base_offset());
    segs_.clear();
    auto s = open_segment(o, segment::open_kind::create, true);
    if (!s) return s.error();
    segs_.push_back(std::move(*s));
    active_created_ms_ = config_.clock->now_ms();
    log_start_.store(o.value(), std::memory_order_release);
    log_end_.store(o.value(), std::memory_order_release);
    recovery_point_.store(o.value(), std::memory_order_release);
    first_dirty_.store(o.value(), std::memory_order_release);
    if (cleaner_ckpt_ >= 0) BROOK_TRY(write_cleaner_checkpoint(o.value()));
    return write_checkpoints_unlocked_segs();
  }

  /// Copies the first `len` bytes of `path` into a new file and renames it over `path`,
  /// so readers mapping the old inode keep their bytes. REQUIRES: segs_mu_ held.
  result<void> copy_prefix_and_swap(const fs::path& path, std::uint64_t len) {
    fs::path tmp = path;
    // Recovery deletes .cleaned files (a .log.swap it may complete instead); the name differs
    // from the one a concurrent cleaner pass may be writing for this segment.
    tmp += ".truncate.cleaned";
    auto in = file_handle::open(path, O_RDONLY);
    if (!in) return in.error();
    auto out = file_handle::open(tmp, O_WRONLY | O_CREAT | O_TRUNC);
    if (!out) return out.error();
    loff_t ioff = 0, ooff = 0;
    std::uint64_t left = len;
    while (left > 0) {
      ssize_t n = ::copy_file_range(in->fd(), &ioff, out->fd(), &ooff, static_cast<std::size_t>(left), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_system_error(errno, "copy_file_range {} -> {}", path.string(), tmp.string());
      }
      if (n == 0) return make_error(errc::kafka_storage_error, "{}: shorter than {} bytes", path.string(), len);
      left -= static_cast<std::uint64_t>(n);
    }
    BROOK_TRY(out->datasync());
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) return error(ec, fmt::format("rename {} to {}", tmp.string(), path.string()));
    return sync_directory(dir_);
  }

  result<void> write_checkpoints() { return write_checkpoints_unlocked_segs(); }

  result<void> write_checkpoints_unlocked_segs() {
    if (opts_.read_only) return ok();
    auto [topic, part] = topic_partition_of(dir_);
    // A checkpoint that already holds the value is not rewritten: opening and closing an idle
    // log costs no fsync (a data directory with many idle partitions opens and closes fast).
    const std::int64_t rp = recovery_point().value();
    if (rp != rp_ckpt_) {
      BROOK_TRY(write_checkpoint(dir_ / partition_files::recovery_point_checkpoint, {{topic, std::to_string(part), std::to_string(rp)}}));
      rp_ckpt_ = rp;
    }
    const std::int64_t ls = log_start_offset().value();
    if (ls != ls_ckpt_) {
      BROOK_TRY(write_checkpoint(dir_ / partition_files::log_start_checkpoint, {{topic, std::to_string(part), std::to_string(ls)}}));
      ls_ckpt_ = ls;
    }
    return ok();
  }

  /// `<topic>-<partition>` from a directory name; a name without a numeric suffix is
  /// taken whole as the topic, partition 0.
  static std::pair<std::string, std::int32_t> topic_partition_of(const fs::path& dir) {
    std::string name = dir.filename().string();
    if (name.empty()) name = dir.parent_path().filename().string();
    auto dash = name.rfind('-');
    if (dash != std::string::npos && dash + 1 < name.size() && name.size() - dash - 1 <= 9 &&
        name.find_first_not_of("0123456789", dash + 1) == std::string::npos)
      return {name.substr(0, dash), std::stoi(name.substr(dash + 1))};
    return {name.empty() ? std::string("log") : name, 0};
  }

  static result<std::optional<offset>> read_offset_file(const fs::path& p) {
    auto r = read_checkpoint(p, 3);
    if (!r) return r.error();
    if (r->empty()) return std::optional<offset>();
    auto v = parse_checkpoint_int<std::int64_t>(p, r->front()[2]);
    if (!v) return v.error();
    return std::optional<offset>(offset(*v));
  }

  /// Lists, classifies and recovers the directory's segments.
  result<void> load() {
    std::error_code ec;
    if (!fs::exists(dir_, ec)) {
      if (opts_.read_only)
        return make_error(errc::log_dir_not_found, "{}: no such partition directory", dir_.string());
      fs::create_directories(dir_, ec);
      if (ec) return error(ec, fmt::format("create directory {}", dir_.string()));
    } else if (!fs::is_directory(dir_, ec)) {
      return make_error(errc::kafka_storage_error, "{}: not a directory", dir_.string());
    }
    if (!opts_.read_only) {
      auto d = file_handle::open(dir_, O_RDONLY | O_DIRECTORY);
      if (!d) return d.error();
      if (::flock(d->fd(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
          return make_error(errc::log_dir_locked, "{}: another writer has this partition log open", dir_.string());
        return make_system_error(errno, "flock {}", dir_.string());
      }
      dir_lock_ = std::move(*d);
    }

    std::vector<offset> bases;
    std::vector<fs::path> orphans;
    std::vector<std::pair<offset, fs::path>> log_swaps;
    for (const auto& de : fs::directory_iterator(dir_, ec)) {
      const fs::path& p = de.path();
      const std::string name = p.filename().string();
      const partition_file f = partition_files::classify(name);
      using kind = partition_file_kind;
      switch (f.kind) {
        case kind::segment_log:
          if (!de.is_regular_file()) break;  // a directory called <base>.log: foreign
          bases.push_back(*f.base);
          continue;
        case kind::segment_index:
        case kind::segment_time_index:
        case kind::kafka_only:
        case kind::checkpoint:
          continue;
        case kind::checkpoint_tmp:
          // A checkpoint write cut short: the checkpoint itself is intact (rename is atomic).
          if (!opts_.read_only) {
            report_.events.push_back(fmt::format("{}: removed leftover file", p.string()));
            fs::remove(p, ec);
          }
          continue;
        case kind::log_swap:
          log_swaps.emplace_back(*f.base, p);  // the cleaner's commit point: maybe completed below
          continue;
        case kind::leftover:
          orphans.push_back(p);  // leftovers of an interrupted swap or delete
          continue;
        case kind::foreign:
          break;
      }
      return make_error(errc::kafka_storage_error,
                        "{}: unexpected file '{}' in a partition directory (not a segment, index or checkpoint)",
                        dir_.string(), name);
    }
    if (ec) return error(ec, fmt::format("list {}", dir_.string()));
    std::sort(bases.begin(), bases.end());
    {
      auto left = detail::complete_log_swaps(dir_, bases, log_swaps, opts_.read_only, report_);
      if (!left) return left.error();
      orphans.insert(orphans.end(), left->begin(), left->end());
    }

    // Index files without a log are dropped; they would be rebuilt anyway.
    for (const auto& de : fs::directory_iterator(dir_, ec)) {
      const partition_file f = partition_files::classify(de.path().filename().string());
      if ((f.kind == partition_file_kind::segment_index || f.kind == partition_file_kind::segment_time_index) &&
          !std::binary_search(bases.begin(), bases.end(), *f.base))
        orphans.push_back(de.path());
    }
    for (const auto& p : orphans) {
      report_.events.push_back(fmt::format("{}: removed leftover file", p.string()));
      if (!opts_.read_only) fs::remove(p, ec);
    }

    auto rp = read_offset_file(dir_ / partition_files::recovery_point_checkpoint);
    if (!rp) return rp.error();
    auto ls = read_offset_file(dir_ / partition_files::log_start_checkpoint);
    if (!ls) return ls.error();
    rp_ckpt_ = rp->value_or(offset(-1)).value();
    ls_ckpt_ = ls->value_or(offset(-1)).value();
    auto cl = read_offset_file(dir_ / partition_files::cleaner_offset_checkpoint);
    if (!cl) return cl.error();
    cleaner_ckpt_ = cl->value_or(offset(-1)).value();
    first_dirty_.store(cl->value_or(offset(0)).value(), std::memory_order_release);
    recovery_point_.store(opts_.full_recovery ? 0 : rp->value_or(offset(0)).value(), std::memory_order_release);

    if (bases.empty()) {
      if (opts_.read_only) return make_error(errc::log_dir_not_found, "{}: holds no segments", dir_.string());
      offset start = ls->value_or(offset(0));
      auto s = open_segment(start, segment::open_kind::create, true);
      if (!s) return s.error();
      segs_.push_back(std::move(*s));
      log_start_.store(start.value(), std::memory_order_release);
      log_end_.store(start.value(), std::memory_order_release);
      recovery_point_.store(start.value(), std::memory_order_release);
      active_created_ms_ = config_.clock->now_ms();
      return write_checkpoints();
    }

    offset expected = bases.front();
    bool cut = false;
    for (std::size_t i = 0; i < bases.size(); ++i) {
      const offset base = bases[i];
      if (cut) {
        // Everything after a corrupt or truncated segment goes: the log has no holes.
        report_.clean = false;
        ++report_.segments_deleted;
        report_.events.push_back(
            fmt::format("{}: deleted, it follows a truncated segment", partition_files::log(dir_, base).string()));
        if (!opts_.read_only) segment::remove_files(dir_, base);
        continue;
      }
      if (i > 0 && base != expected) {
        // The previous segment ends before (a hole) or after (overlap) this one starts.
        cut = true;
        --i;
        report_.events.push_back(fmt::format("{}: previous segment ends at offset {}, not at its base {}",
                                             partition_files::log(dir_, base).string(), expected, base));
        continue;
      }
      const bool is_last = i + 1 == bases.size();
      auto s = open_segment(base, segment::open_kind::trusted, is_last);
      if (!s) return s.error();
      expected = (*s)->next_offset();
      if ((*s)->was_truncated() && !is_last) cut = true;
      segs_.push_back(std::move(*s));
    }
    // The last kept segment becomes the active one.
    if (!opts_.read_only && !segs_.empty() && segs_.size() < bases.size()) {
      offset b = segs_.back()->base_offset();
      segs_.pop_back();
      auto s = open_segment(b, segment::open_kind::trusted, true);
      if (!s) return s.error();
      segs_.push_back(std::move(*s));
    }
    active_created_ms_ = config_.clock->now_ms();
    offset end = segs_.back()->next_offset();
    log_end_.store(end.value(), std::memory_order_release);
    offset start = std::max(ls->value_or(segs_.front()->base_offset()), segs_.front()->base_offset());
    log_start_.store(std::min(start, end).value(), std::memory_order_release);
    // Everything now on disk has been validated or was flushed before.
    recovery_point_.store(end.value(), std::memory_order_release);
    if (!opts_.read_only) {
      BROOK_TRY(active()->flush());
      BROOK_TRY(write_checkpoints());
    }
    return ok();
  }

  const fs::path dir_;
  file_handle dir_lock_;  // holds the flock while the log is open for writing
  log_config config_;
  const log_open_options opts_;
  recovery_report report_;

  mutable std::mutex segs_mu_;  // guards segs_ (the vector, not the segments)
  std::vector<seg_ptr> segs_;

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
  std::int64_t cleaner_ckpt_ = -1;               // the cleaner checkpoint on disk (-1: none); writer_mu_
  std::int64_t rp_ckpt_ = -1;                    // the recovery point on disk (-1: none); writer_mu_
  std::int64_t ls_ckpt_ = -1;                    // the log start offset on disk (-1: none); writer_mu_

  mutable std::mutex wait_mu_;
  mutable std::condition_variable wait_cv_;
  mutable std::atomic<int> waiters_{0};
  std::atomic<bool> closed_flag_{false};
};

}  // namespace brook

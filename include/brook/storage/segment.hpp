// One segment of a partition log: `<base>.log`, `<base>.index`, `<base>.timeindex`
// in the partition directory, where <base> is the segment's first offset
// zero-padded to 20 digits (00000000000000000000.log), exactly as Kafka names
// them. The .log holds whole RecordBatch v2 batches back to back; the indexes
// are described in offset_index.hpp and time_index.hpp.
//
// Writes go through pwrite(2) at the end of the file; reads go through a
// shared mapping of the file. The active segment maps segment.bytes +
// max.message.bytes up front so the mapping never moves while it grows; a
// reader only touches bytes below the published size, which the writer stores
// with release semantics after the bytes are in the page cache.
//
// A segment is shared (std::shared_ptr) between the log and every reader
// holding a log_slice into it: closing, deleting or replacing the segment
// never unmaps bytes a reader still sees.
//
// Durability words used throughout brook: *appended* (in the page cache,
// visible to readers), *flushed* (fdatasync'd), *committed* (below the high
// watermark, replication's word).
//
// Thread-safety: one writer (append, seal, flush, close) at a time, any number
// of concurrent readers of the const interface.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/detail/index_file.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/offset_index.hpp>
#include <brook/storage/partition_files.hpp>
#include <brook/storage/record_marks.hpp>
#include <brook/storage/time_index.hpp>

namespace brook {

/// What opening or recovering a log did; recovery reports instead of failing.
struct recovery_report {
  bool clean = true;                  ///< nothing needed scanning beyond the tail check
  std::size_t segments_scanned = 0;   ///< segments fully validated batch by batch
  std::size_t indexes_rebuilt = 0;    ///< index files rebuilt from the log
  std::uint64_t bytes_truncated = 0;  ///< bytes cut from torn or corrupt tails
  /// Of those, bytes below the recovery point: data that had been flushed was damaged (not a
  /// torn tail from a crash). Non-zero means acknowledged data was lost to disk damage.
  std::uint64_t flushed_bytes_truncated = 0;
  std::size_t segments_deleted = 0;  ///< segments dropped after a corrupt one, or orphans
  /// A cut was for damage (a CRC mismatch, a bad header, ...), not for an incomplete batch at
  /// the end of a file (a crash, or a writer still writing): a reader stops early for it, and
  /// a tool reading a log says so rather than end quietly.
  bool damaged = false;
  std::uint64_t bytes_deleted = 0;  ///< the .log bytes of the segments dropped after a corrupt one
  /// Of those, bytes of segments that started below the recovery point: flushed data.
  std::uint64_t flushed_bytes_deleted = 0;
  /// The recovery point the checkpoint named at open (0 without one): everything below it had
  /// been flushed, so losses below it count as flushed, also under full_recovery.
  offset flushed_point{0};
  std::vector<std::string> events;  ///< one human line per action, with file and byte
};

/// A record's offset and timestamp: the answer to an offsetsForTimes lookup.
struct timestamp_offset {
  offset off;
  timestamp_ms timestamp;
};

namespace detail {

/// Kafka's LogSegment indexing rule, shared by segments and the log cleaner's writer: one
/// offset-index entry (the batch's last offset -> the batch's start) once more than
/// index.interval.bytes were appended since the previous entry, together with a time-index
/// entry for the largest timestamp so far. Sealing adds a final time-index entry.
/// Thread-safety: a value owned by one writer.
struct segment_indexer {
  explicit segment_indexer(offset base) : max_ts_offset(base - 1) {}

  std::uint64_t bytes_since_index = 0;
  timestamp_ms max_ts_seen = -1;
  offset max_ts_offset;

  /// kafka_storage_error when an index cannot grow (a full disk); the caller rolls back.
  result<void> add(const batch_header& h, file_pos pos, std::uint32_t interval, offset_index& oi, time_index& ti) {
    if (h.max_timestamp > max_ts_seen) {
      max_ts_seen = h.max_timestamp;
      max_ts_offset = h.last_offset();
    }
    if (bytes_since_index > interval && !oi.full() && !ti.full()) {
      BROOK_TRY(oi.append(h.last_offset(), pos));
      BROOK_TRY(ti.maybe_append(max_ts_seen, max_ts_offset));
      bytes_since_index = 0;
    }
    bytes_since_index += h.size_bytes();
    return ok();
  }
};

}  // namespace detail

class segment {
 public:
  /// How much to trust the files when opening.
  enum class open_kind {
    create,   ///< a new, empty segment (files are created)
    trusted,  ///< check the tail and the indexes; fall back to recover on any doubt
    recover,  ///< validate every batch, truncate a bad tail, rebuild the indexes
  };

  struct open_args {
    fs::path dir;
    offset base{0};
    const log_config* config = nullptr;
    open_kind kind = open_kind::trusted;
    bool writable = true;  ///< false: never modify a file (read-only tools on a live log)
    bool active = true;    ///< will be appended to (maps room to grow)
    /// For trusted opens: the segment may be trusted only if all its offsets are below this.
    offset recovery_point{std::numeric_limits<std::int64_t>::max()};
  };

  segment(const segment&) = delete;
  segment& operator=(const segment&) = delete;

  static result<std::shared_ptr<segment>> open(const open_args& a, recovery_report& report) {
    std::shared_ptr<segment> s(new segment(a));
    BROOK_TRY(s->do_open(report));
    return s;
  }
  /// open() for a partition log's segment at `base` in `dir`; `config` must outlive it.
  static result<std::shared_ptr<segment>> open(const fs::path& dir, offset base, const log_config& config,
                                               open_kind kind, bool writable, bool active, offset recovery_point,
                                               recovery_report& report) {
    open_args a;
    a.dir = dir;
    a.base = base;
    a.config = &config;
    a.kind = kind;
    a.writable = writable;
    a.active = active;
    a.recovery_point = recovery_point;
    return open(a, report);
  }

  // --- state, readable from any thread ---
  offset base_offset() const noexcept { return base_; }
  /// Offset after the last batch appended (== base when empty).
  offset next_offset() const noexcept { return offset(next_offset_.load(std::memory_order_acquire)); }
  /// Bytes of whole, appended batches.
  std::uint64_t size() const noexcept { return size_.load(std::memory_order_acquire); }
  bool empty() const noexcept { return size() == 0; }
  /// size() as a position: just past the last whole batch.
  file_pos end_pos() const noexcept { return file_pos(static_cast<std::int64_t>(size())); }
  /// Largest batch maxTimestamp in the segment (-1 when empty). For a segment opened on
  /// trust this comes from its time index, a hint; see exact_max_timestamp().
  timestamp_ms max_timestamp() const noexcept { return max_ts_.load(std::memory_order_acquire); }

  /// The largest timestamp, verified against the batch headers the first time it is asked
  /// for on a segment opened on trust (a damaged or short time index cannot make a segment
  /// look older than it is). Retention and time lookups use this. Thread-safe.
  result<timestamp_ms> exact_max_timestamp() const {
    if (max_ts_exact_.load(std::memory_order_acquire)) return max_timestamp();
    const file_pos limit = end_pos();
    timestamp_ms m = -1;
    for (file_pos p{0}; p < limit;) {
      BROOK_TRY_ASSIGN(auto h, header_at(p, limit));
      m = std::max(m, h.max_timestamp);
      p += h.size_bytes();
    }
    timestamp_ms cur = max_ts_.load(std::memory_order_relaxed);
    while (cur < m && !max_ts_.compare_exchange_weak(cur, m, std::memory_order_acq_rel)) {
    }
    max_ts_exact_.store(true, std::memory_order_release);
    return max_timestamp();
  }
  /// maxTimestamp of the first batch; segment.ms ages the segment from it.
  timestamp_ms first_batch_timestamp() const noexcept { return first_ts_.load(std::memory_order_acquire); }
  const fs::path& log_path() const noexcept { return log_path_; }
  int fd() const noexcept { return log_.fd(); }
  bool index_full() const noexcept { return oindex_.full() || tindex_.full(); }

  /// Would `bytes` more still fit within segment.bytes / the mapping / int32 offsets?
  bool has_room_for(std::uint64_t bytes, offset last_offset) const noexcept {
    std::uint64_t sz = size();
    if (last_offset - base_ > std::numeric_limits<std::int32_t>::max()) return false;
    if (sz + bytes > map_->size()) return false;
    if (sz > 0 && sz + bytes > config_->segment_bytes) return false;
    return !index_full();
  }

  /// Appends whole batches that the log has validated and stamped with offsets.
  /// Writes, then indexes, then publishes the new size and next offset. Writer only.
  result<void> append(std::span<const std::byte> batches) {
    BROOK_ASSERT(writable_ && active_, "append to a segment opened without write access");
    std::uint64_t pos = size_.load(std::memory_order_relaxed);
    if (auto w = log_.pwrite_all(batches, pos); !w) {
      (void)log_.truncate(pos);  // a short write (full disk) leaves no partial batch behind
      return w.error();
    }
    // Index each batch, as LogSegment.append does; then publish.
    const std::byte* p = batches.data();
    const std::byte* end = p + batches.size();
    offset next = offset(next_offset_.load(std::memory_order_relaxed));
    timestamp_ms max_ts = max_ts_.load(std::memory_order_relaxed);
    file_pos at(static_cast<std::int64_t>(pos));
    size_.store(pos + batches.size(), std::memory_order_release);
    const detail::segment_indexer indexer_before = indexer_;
    const offset next_before = next;
    while (p < end) {
      batch_header h = decode_batch_header_unchecked(p);
      // The log validated and stamped these batches: offsets only grow within a segment.
      BROOK_ASSERT(h.base_offset >= next, "{}: batch at offset {} overlaps the segment's end {}", log_path_.string(),
                   h.base_offset, next);
      if (auto r = index_batch(h, at); !r) {
        // A full disk while indexing: the append did not happen (the next one overwrites
        // its bytes), and no index entry may point at it.
        oindex_.truncate_to_position(file_pos(static_cast<std::int64_t>(pos)));
        tindex_.truncate_to_offset(next_before);
        indexer_ = indexer_before;
        size_.store(pos, std::memory_order_release);
        (void)log_.truncate(pos);
        return r.error();
      }
      if (first_ts_.load(std::memory_order_relaxed) < 0 && at == file_pos{0})
        first_ts_.store(h.max_timestamp, std::memory_order_release);
      max_ts = std::max(max_ts, h.max_timestamp);
      next = h.next_offset();
      at += h.size_bytes();
      p += h.size_bytes();
    }
    max_ts_.store(max_ts, std::memory_order_release);
    next_offset_.store(next.value(), std::memory_order_release);
    return ok();
  }

  /// fdatasync of the .log. Writer only.
  result<void> flush() const { return log_.datasync(); }

  /// The segment will take no more appends: add the final time-index entry, trim the
  /// indexes to their entries, sync everything. Writer only.
  result<void> seal() {
    if (!writable_) return ok();
    if (!oindex_.full() && indexer_.max_ts_offset >= base_ && size() > 0)
      BROOK_TRY(tindex_.maybe_append(indexer_.max_ts_seen, indexer_.max_ts_offset));
    BROOK_TRY(log_.datasync());
    BROOK_TRY(oindex_.trim_and_sync());
    BROOK_TRY(tindex_.trim_and_sync());
    active_ = false;
    return ok();
  }

  // --- reading, any thread ---

  /// Bytes [pos, pos + len) of the log. REQUIRES: pos + len <= an end_pos() the caller loaded.
  std::span<const std::byte> bytes(file_pos pos, std::uint64_t len) const noexcept {
    BROOK_ASSERT(pos.value() >= 0, "{}: negative position {}", log_path_.string(), pos);
    return {map_->data() + pos.value(), static_cast<std::size_t>(len)};
  }

  /// Header of the batch at pos, checked against the bytes below `limit`.
  result<batch_header> header_at(file_pos pos, file_pos limit) const {
    return check_batch_header(bytes(pos, static_cast<std::uint64_t>(limit - pos)), [&] { return where(pos); });
  }

  /// Asks the cache for the headers of up to `count` batches the offset index names after
  /// offset `after` (batches whose last offset is > after) that start below `to`, so that a
  /// walk of headers (log_slice::of_batches) finds them there instead of missing on each in
  /// turn: each header's position depends on the one before, and batches of several KiB put
  /// each header on a page of its own, which the hardware's prefetchers do not reach.
  /// Returns the position of the last header asked for, or `to` when the index names none
  /// below it. A hint only: an entry outside [0, to) (damage, or an append after `to` was
  /// loaded) ends the requests there.
  file_pos prefetch_headers(offset after, file_pos to, std::size_t count) const noexcept {
    const std::size_t n = oindex_.entries();
    file_pos last = to;
    for (std::size_t i = oindex_.first_above(after, n); i < n && count > 0; ++i, --count) {
      const file_pos p = oindex_.at(i).position;
      if (p.value() < 0 || p >= to) break;
      const std::byte* h = bytes(p, 0).data();
      __builtin_prefetch(h);
      __builtin_prefetch(h + batch_layout::header_size - 1);  // a header may straddle two lines
      last = p;
    }
    return last;
  }

  /// Position of the first batch whose last offset is >= target, scanning below `limit`
  /// (an end_pos() the caller loaded); nullopt if every batch ends before target.
  result<std::optional<file_pos>> find_position(offset target, file_pos limit) const {
    BROOK_TRY_ASSIGN(auto b, find_batch(target, limit, false));
    if (!b) return std::optional<file_pos>();
    return std::optional<file_pos>(b->position);
  }

  /// Where a read of `target` starts: the batch holding it, and where a record at or
  /// before target starts inside it when the batch has record marks (record_marks.hpp).
  struct batch_start {
    file_pos position;                    ///< the first batch whose last offset is >= target
    std::optional<record_position> hint;  ///< for record_batch_view::seek(target, hint)
  };

  /// find_position(target, limit); with `marks`, also the hint, and a target inside a batch
  /// that starts at an index entry makes that batch's record marks if it has none yet.
  result<std::optional<batch_start>> find_batch(offset target, file_pos limit, bool marks) const {
    const std::size_t n = oindex_.entries();
    const std::size_t slot = oindex_.first_above(target, n);  // the entry of the batch holding target, if any
    const offset_index::entry e = slot == 0 ? offset_index::entry{base_, file_pos(0)} : oindex_.at(slot - 1);
    std::optional<offset_index::entry> next;
    if (slot < n) next = oindex_.at(slot);
    // The batch holding target usually follows e's batch: with an index entry per batch it
    // is the next entry's. Ask for its header now, and with its record marks for the lines
    // up to the target's record too, so that their misses overlap instead of following each
    // other (a prefetch never faults, but stay inside the mapping anyway).
    if (next && next->position.value() >= 0 && next->position < limit) {
      __builtin_prefetch(bytes(next->position, 0).data());
      if (marks) prefetch_marked(slot, *next, target, limit);
    }
    // The next entry's batch holds target when its header says so: its last offset is the
    // entry's and its first lies in (e's offset, target]. Then e's batch need not be read
    // (nor the batches between e's and it, when an entry spans several: damage there is
    // reported to a read that starts in them, not to this one).
    if (next && next->position.value() >= 0 && next->position < limit) {
      auto h = header_at(next->position, limit);
      if (h && h->last_offset() == next->offset && h->base_offset <= target &&
          (slot == 0 ? h->base_offset >= base_ : h->base_offset > e.offset)) {
        batch_start b{next->position, std::nullopt};
        if (marks && target > h->base_offset) b.hint = mark_for(slot, next->position, *h, target);
        return std::optional<batch_start>(b);
      }
    }
    file_pos pos = e.position;
    // The index entry is a hint: use it only if it points at a batch ending exactly at its offset.
    if (e.position != file_pos{0} || e.offset != base_) {
      bool good = pos.value() >= 0 && pos < limit;  // a damaged entry may hold any 32 bits
      if (good) {
        auto h = header_at(pos, limit);
        good = h && h->last_offset() == e.offset;
      }
      if (!good) {
        index_suspect_.store(true, std::memory_order_relaxed);
        pos = file_pos{0};
      }
    }
    offset prev_last = base_ - 1;  // offsets only increase: a batch at or below its predecessor is damage
    while (pos < limit) {
      BROOK_TRY_ASSIGN(auto h, header_at(pos, limit));
      if (h.base_offset <= prev_last)
        return make_error(errc::corrupt_message,
                          "{}: batch claims offsets from {}, but the batch before it ends at {} (damaged baseOffset)",
                          where(pos), h.base_offset, prev_last);
      if (h.last_offset() >= target) {
        batch_start b{pos, std::nullopt};
        if (marks && target > h.base_offset) {  // the batch's index entry: next's, or e's when target ends e's batch
          if (next && pos == next->position)
            b.hint = mark_for(slot, pos, h, target);
          else if (slot > 0 && pos == e.position)
            b.hint = mark_for(slot - 1, pos, h, target);
        }
        return std::optional<batch_start>(b);
      }
      prev_last = h.last_offset();
      pos += h.size_bytes();
    }
    return std::optional<batch_start>();
  }

  /// Whether the batch holding o has record marks (a read with a hint made them).
  bool has_record_marks(offset o) const noexcept {
    const std::size_t n = oindex_.entries();
    const std::size_t above = oindex_.first_above(o, n);
    for (const std::size_t slot : {above, above - 1}) {  // o's batch's entry: the next, or the one o ends
      if (slot >= n) continue;                           // (above - 1 wraps when above is 0)
      const offset_index::entry e = oindex_.at(slot);
      const record_marks::batch_marks* m = marks_.marks_for(slot);
      if (m != nullptr && m->position == e.position && m->base_offset <= o && o <= e.offset) return true;
    }
    return false;
  }

  /// Time-index hint for offsetsForTimes: an offset at or before the first record with
  /// timestamp >= ts.
  offset time_lookup(timestamp_ms ts) const noexcept { return tindex_.lookup(ts).offset; }

  /// Kafka's offsetsForTimes within this segment: the first record at or after `from`, at or
  /// after `log_start` and below `bound`, whose timestamp is >= ts (control batches skipped).
  /// nullopt when the walk reaches the bound or the segment's end first.
  result<std::optional<timestamp_offset>> first_record_since(timestamp_ms ts, offset from, offset log_start,
                                                             offset bound) const {
    const file_pos limit = end_pos();
    BROOK_TRY_ASSIGN(auto pos, find_position(from, limit));
    if (!pos) return std::optional<timestamp_offset>();
    std::optional<batch_decompressor> dec;  // made at the first compressed batch to search
    for (file_pos p = *pos; p < limit;) {
      const auto here = bytes(p, static_cast<std::uint64_t>(limit - p));
      auto at = [&] { return where(p); };
      BROOK_TRY_ASSIGN(record_batch_view v, record_batch_view::parse(here, batch_check{true, false}, at));
      if (v.base_offset() >= bound) return std::optional<timestamp_offset>();
      if (v.header().max_timestamp < ts || v.header().is_control()) {
        p += v.size_bytes();
        continue;
      }
      if (v.compressed()) {
        if (!dec) dec.emplace(config_->codecs ? *config_->codecs : compression_codecs{});
        BROOK_TRY_ASSIGN(v, record_batch_view::parse(here, *dec, batch_check{false, true}, at));
      } else {
        BROOK_TRY_ASSIGN(v, record_batch_view::parse(here, batch_check{false, true}, at));
      }
      for (const record_view& r : v)
        if (r.offset() >= log_start && r.offset() < bound && r.timestamp() >= ts)
          return std::optional<timestamp_offset>(timestamp_offset{r.offset(), r.timestamp()});
      p += v.size_bytes();
    }
    return std::optional<timestamp_offset>();
  }

  /// True once a lookup found an index entry that did not match the log (it is then ignored).
  bool index_suspect() const noexcept { return index_suspect_.load(std::memory_order_relaxed); }

  /// The file system this segment's files go through (its log_config's).
  file_system& files() const noexcept { return files_or_posix(config_->files); }

  std::string where(file_pos pos) const { return fmt::format("{} at byte {}", log_path_.string(), pos); }

  /// Removes the segment's files (the log calls this for retention and truncation).
  /// Bytes stay readable through existing mappings until the last reader lets go.
  /// A file that cannot be removed is left for the next open, which deletes orphans.
  static void remove_files(file_system& files, const fs::path& dir, offset base) {
    (void)files.remove(partition_files::log(dir, base));
    (void)files.remove(partition_files::index(dir, base));
    (void)files.remove(partition_files::time_index(dir, base));
  }

 private:
  explicit segment(const open_args& a)
      : dir_(a.dir),
        base_(a.base),
        config_(a.config),
        writable_(a.writable),
        active_(a.active && a.writable),
        log_path_(partition_files::log(a.dir, a.base)),
        oindex_(a.base),
        tindex_(a.base),
        next_offset_(a.base.value()),
        indexer_(a.base),
        kind_(a.kind),
        recovery_point_(a.recovery_point) {}

  result<void> do_open(recovery_report& report) {
    int flags = writable_ ? (O_RDWR | (kind_ == open_kind::create ? O_CREAT | O_EXCL : 0)) : O_RDONLY;
    BROOK_TRY_ASSIGN(auto f, file_handle::open(files(), log_path_, flags));
    log_ = std::move(f);
    BROOK_TRY_ASSIGN(auto sz, log_.size());
    std::uint64_t file_size = sz;
    std::uint64_t cap = file_size;
    if (active_) cap = std::max<std::uint64_t>(file_size, config_->segment_bytes + config_->max_message_bytes);
    BROOK_TRY_ASSIGN(auto m, mapped_region::map_file(log_, round_up_to_page(static_cast<std::size_t>(cap)), false));
    map_ = std::move(m);

    if (kind_ == open_kind::create) {
      BROOK_TRY(open_indexes(detail::index_file::mode::fresh));
      return ok();
    }
    if (kind_ == open_kind::trusted && base_ <= recovery_point_) {
      BROOK_TRY_ASSIGN(auto t, try_trusted(file_size, report));
      if (t) return ok();
    }
    return recover(file_size, report);
  }

  result<void> open_indexes(detail::index_file::mode m) {
    std::size_t cap = active_ ? static_cast<std::size_t>(config_->segment_index_bytes) : 0;
    BROOK_TRY(oindex_.open(files(), partition_files::index(dir_, base_), cap, m));
    BROOK_TRY(tindex_.open(files(), partition_files::time_index(dir_, base_), cap, m));
    return ok();
  }

  /// Opens on the strength of the existing indexes: walks batch headers from the last
  /// offset-index entry to the end of the file. Returns false when anything is off.
  result<bool> try_trusted(std::uint64_t file_size, recovery_report& report) {
    if (!files().exists(partition_files::index(dir_, base_)).value_or(false) ||
        !files().exists(partition_files::time_index(dir_, base_)).value_or(false)) {
      report.events.push_back(fmt::format("{}: index file missing", log_path_.string()));
      return false;
    }
    using mode = detail::index_file::mode;
    auto ir = open_indexes(writable_ ? mode::keep : mode::read_only);
    if (!ir) {
      report.events.push_back(fmt::format("{}: index unusable: {}", log_path_.string(), ir.error().to_string()));
      return false;
    }
    const file_pos file_end(static_cast<std::int64_t>(file_size));
    file_pos pos{0};
    offset next = base_;
    timestamp_ms max_ts = tindex_.last().timestamp;
    offset max_ts_off = tindex_.last().offset;
    if (oindex_.entries() > 0) {
      auto e = oindex_.at(oindex_.entries() - 1);
      pos = e.position;
      if (pos.value() < 0 || pos >= file_end) return reject(report, "last index entry points outside the log");
      auto h = header_at(pos, file_end);
      if (!h || h->last_offset() != e.offset) return reject(report, "last index entry does not match the log");
    }
    // A segment that takes appends continues its time index from the largest timestamp so
    // far, so that must be the true one: a time index cut short (its last entries lost)
    // would otherwise get entries whose timestamps are below records before them, and
    // lookups would skip those records. Walk the headers before the last index entry too
    // (the check after the tail walk below then rejects a short time index). A sealed
    // segment needs no walk: a prefix of a valid time index still answers lookups right.
    if (writable_ && active_) {
      for (file_pos p{0}; p < pos;) {
        auto h = header_at(p, file_end);
        if (!h) return reject(report, h.error().message());
        if (h->max_timestamp > max_ts) {
          max_ts = h->max_timestamp;
          max_ts_off = h->last_offset();
        }
        p += h->size_bytes();
      }
    }
    timestamp_ms first_ts = -1;
    if (file_size > 0) {
      auto h0 = header_at(file_pos{0}, file_end);
      if (!h0) return reject(report, h0.error().message());
      first_ts = h0->max_timestamp;
    }
    // Kafka's rule adds an entry once more than index.interval.bytes were appended since the
    // last one, so all the batches after the last entry but the final one add up to at most
    // index.interval.bytes. More than that means entries are missing: a short index.
    std::uint64_t tail_bytes_before_last = 0, last_size = 0;
    while (pos < file_end) {
      auto h = header_at(pos, file_end);
      if (!h) return reject(report, h.error().message());
      tail_bytes_before_last += last_size;
      last_size = h->size_bytes();
      if (!oindex_.full() && tail_bytes_before_last > config_->index_interval_bytes)
        return reject(report, "the offset index ends early (entries are missing)");
      if (h->base_offset < base_ || h->last_offset() - base_ > std::numeric_limits<std::int32_t>::max())
        return reject(report, fmt::format("batch at byte {} has offsets outside the segment", pos));
      if (h->max_timestamp > max_ts) {
        max_ts = h->max_timestamp;
        max_ts_off = h->last_offset();
      }
      next = h->next_offset();
      pos += h->size_bytes();
    }
    if (next > recovery_point_)
      return reject(report, recovery_point_ < report.flushed_point ? "every batch is checked (full recovery)"
                                                                   : "data beyond the recovery point");
    if (tindex_.entries() > 0 && tindex_.last().timestamp < max_ts)
      return reject(report, "the time index ends early (its last entry is not the largest timestamp)");
    if (auto c = oindex_.sanity_check(file_size, next); !c) return reject(report, c.error().message());
    if (auto c = tindex_.sanity_check(next); !c) return reject(report, c.error().message());
    size_.store(file_size, std::memory_order_release);
    next_offset_.store(next.value(), std::memory_order_release);
    max_ts_.store(max_ts, std::memory_order_release);
    first_ts_.store(first_ts, std::memory_order_release);
    // Batches after the last index entry count towards the next entry, as if never reopened.
    indexer_.bytes_since_index =
        file_size -
        (oindex_.entries() > 0 ? static_cast<std::uint64_t>(oindex_.at(oindex_.entries() - 1).position.value()) : 0);
    max_ts_exact_.store(false, std::memory_order_release);  // the time index is only a hint
    indexer_.max_ts_seen = max_ts;
    indexer_.max_ts_offset = max_ts_off;
    return true;
  }

  /// The bytes at the end of a file hold the start of a batch and no more: what a crash or
  /// an append in progress leaves, not damage.
  static bool incomplete_at_end(std::span<const std::byte> b) noexcept {
    if (b.size() < batch_layout::log_overhead) return true;
    const std::int64_t blen = detail::load_be32(b.data() + batch_layout::batch_length);
    return blen >= static_cast<std::int64_t>(batch_layout::header_size - batch_layout::log_overhead) &&
           static_cast<std::int64_t>(batch_layout::log_overhead) + blen > static_cast<std::int64_t>(b.size());
  }

  result<bool> reject(recovery_report& report, const std::string& why) {
    report.events.push_back(fmt::format("{}: {}; recovering", log_path_.string(), why));
    return false;
  }

  /// Validates every batch from the start, rebuilding both indexes, and cuts the file at
  /// the first byte that is not part of a valid batch.
  result<void> recover(std::uint64_t file_size, recovery_report& report) {
    using mode = detail::index_file::mode;
    report.clean = false;
    ++report.segments_scanned;
    ++report.indexes_rebuilt;
    // Fresh index files are new inodes: remove first so no older mapping is truncated under a reader.
    if (writable_) {
      (void)files().remove(partition_files::index(dir_, base_));
      (void)files().remove(partition_files::time_index(dir_, base_));
    }
    std::size_t saved_cap = static_cast<std::size_t>(config_->segment_index_bytes);
    {
      // Size the rebuilt indexes for the file at hand (sealed segments are trimmed after).
      std::size_t est =
          static_cast<std::size_t>(file_size / std::max<std::uint32_t>(config_->index_interval_bytes, 1) + 2);
      std::size_t cap = std::max(saved_cap, est * time_index::entry_size);
      BROOK_TRY(
          oindex_.open(files(), partition_files::index(dir_, base_), cap, writable_ ? mode::fresh : mode::memory));
      BROOK_TRY(
          tindex_.open(files(), partition_files::time_index(dir_, base_), cap, writable_ ? mode::fresh : mode::memory));
    }
    const file_pos file_end(static_cast<std::int64_t>(file_size));
    file_pos pos{0};
    offset next = base_;
    std::string why;
    while (pos < file_end) {
      const auto here = bytes(pos, static_cast<std::uint64_t>(file_end - pos));
      auto v = record_batch_view::parse(here, batch_check{}, [&] { return where(pos); });
      // A compressed batch is checked by its header and CRC, as Kafka's recovery does
      // (LogSegment.recover decompresses nothing): its records are read when they are used.
      if (!v && v.error() == errc::unsupported_compression_type)
        v = record_batch_view::parse(here, batch_check{true, false}, [&] { return where(pos); });
      if (!v) {
        why = v.error().to_string();
        if (!incomplete_at_end(here)) report.damaged = true;
        break;
      }
      const batch_header h = v->header();
      if (h.base_offset < next) {
        why = fmt::format("{}: batch base offset {} is below the expected {}", where(pos), h.base_offset, next);
        report.damaged = true;
        break;
      }
      if (h.last_offset() - base_ > std::numeric_limits<std::int32_t>::max()) {
        why = fmt::format("{}: batch offset {} does not fit the segment", where(pos), h.last_offset());
        report.damaged = true;
        break;
      }
      if (pos == file_pos{0}) first_ts_.store(h.max_timestamp, std::memory_order_relaxed);
      BROOK_TRY(index_batch(h, pos));
      max_ts_.store(std::max(max_ts_.load(std::memory_order_relaxed), h.max_timestamp), std::memory_order_relaxed);
      next = h.next_offset();
      pos += h.size_bytes();
    }
    const auto kept = static_cast<std::uint64_t>(pos.value());
    if (next < std::max(recovery_point_, report.flushed_point) && kept < file_size) report.damaged = true;
    if (kept < file_size) {
      report.bytes_truncated += file_size - kept;
      if (next < std::max(recovery_point_, report.flushed_point)) report.flushed_bytes_truncated += file_size - kept;
      report.events.push_back(
          fmt::format("{}: truncated {} bytes at byte {} ({})", log_path_.string(), file_size - kept, pos, why));
      truncated_ = true;
      if (writable_) {
        BROOK_TRY(log_.truncate(kept));
        BROOK_TRY(log_.datasync());
      }
    }
    size_.store(kept, std::memory_order_release);
    next_offset_.store(next.value(), std::memory_order_release);
    if (writable_ && !active_) {
      if (indexer_.max_ts_offset >= base_)
        BROOK_TRY(tindex_.maybe_append(indexer_.max_ts_seen, indexer_.max_ts_offset));
      BROOK_TRY(oindex_.trim_and_sync());
      BROOK_TRY(tindex_.trim_and_sync());
    } else if (writable_) {
      BROOK_TRY(oindex_.sync());
      BROOK_TRY(tindex_.sync());
    }
    return ok();
  }

  /// Asks the cache for target's record and the records before it up to the mark before
  /// it, when slot's marks describe the batch the index entry `at` names (not yet checked:
  /// a prefetch only).
  void prefetch_marked(std::size_t slot, const offset_index::entry& at, offset target, file_pos limit) const noexcept {
    const record_marks::batch_marks* m = marks_.marks_for(slot);
    if (m == nullptr || m->position != at.position || target < m->base_offset || target > at.offset) return;
    const auto k = static_cast<std::size_t>((target - m->base_offset) / record_marks::stride);
    if (k >= m->size()) return;
    const std::int64_t from = at.position.value() + static_cast<std::int64_t>(batch_layout::records + m->start(k));
    // Up to target's record's end, at the mean size of the records between two marks.
    const std::int64_t between = k + 1 < m->size() ? std::int64_t{m->start(k + 1)} - m->start(k) : 4096;
    const std::int64_t steps = (target - m->base_offset) % record_marks::stride + 1;
    const std::int64_t to = std::min(from + between * steps / record_marks::stride + 64, limit.value());
    for (std::int64_t p = from; p < to; p += 64) __builtin_prefetch(map_->data() + p);
  }

  /// The mark at or before target in the batch h at pos (the batch index entry `slot`
  /// names), making the batch's marks first if it has none. nullopt without marks.
  std::optional<record_position> mark_for(std::size_t slot, file_pos pos, const batch_header& h, offset target) const {
    if (!record_marks::wanted(pos, h)) return std::nullopt;
    const record_marks::batch_marks* m = marks_.marks_for(slot);
    if (m == nullptr) {
      const auto records =
          bytes(pos + static_cast<std::int64_t>(batch_layout::records), h.size_bytes() - batch_layout::records);
      m = marks_.make(slot, pos, h, records);
    }
    if (m == nullptr || !m->describe(pos, h)) return std::nullopt;
    return m->at_or_before(target);
  }

  /// Kafka's indexing rule (detail::segment_indexer). Writer only.
  result<void> index_batch(const batch_header& h, file_pos pos) {
    return indexer_.add(h, pos, config_->index_interval_bytes, oindex_, tindex_);
  }

 public:
  /// True if opening cut a torn or corrupt tail off this segment.
  bool was_truncated() const noexcept { return truncated_; }

 private:
  fs::path dir_;
  offset base_;
  const log_config* config_;
  bool writable_;
  bool active_;
  fs::path log_path_;
  file_handle log_;
  std::shared_ptr<mapped_region> map_;
  offset_index oindex_;
  time_index tindex_;
  mutable record_marks marks_;  // filled by readers
  std::atomic<std::uint64_t> size_{0};
  std::atomic<std::int64_t> next_offset_;
  mutable std::atomic<timestamp_ms> max_ts_{-1};
  std::atomic<timestamp_ms> first_ts_{-1};
  mutable std::atomic<bool> index_suspect_{false};
  mutable std::atomic<bool> max_ts_exact_{true};
  // writer-only
  detail::segment_indexer indexer_;
  open_kind kind_;
  offset recovery_point_;
  bool truncated_ = false;
};

}  // namespace brook

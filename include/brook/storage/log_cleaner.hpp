// The log cleaner: Kafka's key-based log compaction (cleanup.policy=compact) for the
// sealed segments of one partition log. partition_log::compact() runs a pass with the
// pieces defined here; data_dir::tick() runs it when min.cleanable.dirty.ratio says so.
//
// A pass, as Kafka's Cleaner.doClean does it:
//
//   segments:  [ clean ........ | dirty ............ | uncleanable (active, >= bound) ]
//              log start     first dirty        first uncleanable
//
// 1. The *cleanable* segments are the sealed ones lying wholly below the upper bound (the
//    active segment's base by default; the high watermark for a partition), cut further
//    at the first dirty segment holding a record younger than min.compaction.lag.ms (by
//    its largest timestamp). The *first dirty offset* (`cleaner-offset-checkpoint`) splits
//    them into the clean part (cleaned before) and the dirty part.
// 2. An offset_map `key -> latest offset` is built over the dirty part only.
// 3. Every cleanable segment is rewritten, keeping a record iff it has a key, no later
//    record in the map has the same key, and it is not a tombstone past its delete
//    horizon (below). Control batches are kept as they are. A batch whose records are
//    all kept (and needs no horizon) is copied byte for byte; a batch that lost records
//    is rebuilt as Kafka's MemoryRecords.buildRetainedRecordsInto does: same baseOffset,
//    lastOffsetDelta, partitionLeaderEpoch, producer fields and attributes, recordsCount
//    the retained count, baseTimestamp the first retained record's timestamp (or the
//    delete horizon), maxTimestamp the largest retained one (the append time for
//    LogAppendTime batches), records re-encoded with their offset delta and new timestamp
//    delta, a new CRC; a compressed batch is rebuilt compressed with its own codec at that
//    codec's default level, as Kafka's buildRetainedRecordsInto does (an emptied batch is
//    written uncompressed, as Kafka's writeEmptyHeader does). Offsets therefore never change. A batch with no record
//    left is dropped, except the last batch of a segment, which stays as an empty batch (Kafka's RETAIN_EMPTY form,
//    DefaultRecordBatch.writeEmptyHeader: recordsCount 0, the original baseOffset, lastOffsetDelta, producer fields and
//    maxTimestamp, which is also its baseTimestamp). So every segment still ends at the same offset, segments never get
//    gaps between them, and recovery keeps telling a lost tail (a gap) from compaction.
//    A segment that needs no change is not rewritten.
// 4. The first dirty offset moves to the first uncleanable offset and is checkpointed in
//    `cleaner-offset-checkpoint` (Kafka's format, one entry) when the pass ends.
//
// Tombstones (KIP-534, byte-compatible with Kafka): the first time a pass keeps a tombstone
// from a batch that has no delete horizon yet, the batch is rebuilt with attribute bit 6
// (0x40, batch_attr::delete_horizon) set and baseTimestamp = now + delete.retention.ms (the
// records' timestamp deltas are re-based on it, so every record keeps its timestamp). A
// later pass drops the batch's tombstones once now >= that horizon. A consumer that reads
// the log from the start within delete.retention.ms of a tombstone being first cleaned
// therefore still sees it.
//
// Compressed batches are decompressed with log_config::codecs (a codec not enabled fails
// the pass with unsupported_compression_type, leaving the log as it was); keys from them are
// copied into the offset map, since their decompressed bytes do not stay.
//
// Deviations from Kafka, all deliberate:
// - Kafka keeps every record newer than the map's latest offset. brook's map always covers
//   the whole dirty part of the cleanable segments, so nothing in those segments is newer
//   than the map, except when there is no dirty data at all; a pass then still drops
//   tombstones past their horizon (Kafka would keep them until new data arrives).
// - Cleaning stops at segment boundaries (a segment straddling the upper bound is not
//   touched), so nothing at or after the bound is ever rewritten.
// - No grouping of small cleaned segments (Kafka's groupSegmentsBySize): each segment is
//   rewritten on its own under its own base offset, so the segment count never shrinks
//   (each keeps at least its last batch, empty if need be: 61 bytes).
// - Kafka keeps an empty batch only as the last batch of an idempotent producer; brook
//   keeps one as the last batch of a segment (see 3), whatever its producer fields.
// - Transactional data batches are treated as committed (brook has no transaction state);
//   control batches are never removed. Records without a key in a cleaned segment are
//   dropped, as in Kafka.
// - The offset map holds whole keys (viewed in place in the pinned segments' mappings),
//   not Kafka's 16-byte MD5 hashes: no collision can drop a record, and memory grows with
//   the distinct keys of the dirty part (there is no log.cleaner.dedupe.buffer.size).
//
// Crash safety, per rewritten segment `<b>` (Kafka's .cleaned / .swap suffixes):
//
//   1. write <b>.log.cleaned, <b>.index.cleaned, <b>.timeindex.cleaned; fdatasync each
//   2. rename <b>.index.cleaned -> <b>.index.swap, <b>.timeindex.cleaned -> .timeindex.swap,
//      then <b>.log.cleaned -> <b>.log.swap; fsync the directory     <- commit point
//   3. rename <b>.index.swap -> <b>.index, <b>.timeindex.swap -> <b>.timeindex,
//      then <b>.log.swap -> <b>.log (each rename atomically replaces the old file);
//      fsync the directory
//
// Recovery (partition_log::open, writable)
// deletes every `.cleaned` file; completes a `<b>.log.swap` (deleting <b>'s index files,
// which are then rebuilt, and renaming the swap over <b>.log) when <b>.log exists, <b> is
// not the last segment (the cleaner never touches the active one) and the swap file
// validates completely with offsets inside the segment; any other `.swap` is deleted. So a
// crash at any instant leaves either the old or the new file set of every segment, each
// holding every latest-per-key record. The cleaner checkpoint moves only after the pass,
// so a pass cut short by a crash is simply redone from the same first dirty offset.
// Readers holding slices of an old segment keep its bytes: the renames replace names, not
// the inodes mapped.
//
// Thread-safety: offset_map and cleaned_segment_writer are owned by the one thread running
// a pass; the free functions only read the (immutable, sealed) segments they are given.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <brook/core/byte_buffer.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/varint.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/offset_index.hpp>
#include <brook/storage/segment.hpp>
#include <brook/storage/segment_list.hpp>
#include <brook/storage/time_index.hpp>

namespace brook {

/// How to run a pass. A write that fails ends the pass at once with its error; the log in
/// memory still serves the old segment, and the files are as a crash at that instant leaves
/// them (the next open completes or drops the swap). Thread-safety: a value.
struct compact_options {
  /// Exclusive bound: a segment holding any offset at or after it is not cleaned (pass the
  /// high watermark once followers exist). Default (and at most): the active segment's base.
  std::optional<offset> upper_bound{};
};

/// What a pass did. Thread-safety: a value.
struct compact_stats {
  std::size_t segments_cleanable = 0;  ///< segments the pass looked at
  std::size_t segments_cleaned = 0;    ///< of those, rewritten
  std::uint64_t records_read = 0;
  std::uint64_t records_kept = 0;
  std::uint64_t records_removed = 0;     ///< superseded, keyless, or tombstones past the horizon
  std::uint64_t tombstones_removed = 0;  ///< of those, tombstones
  std::uint64_t bytes_before = 0;        ///< size of the cleanable segments before the pass
  std::uint64_t bytes_after = 0;         ///< and after
  offset first_dirty_before{0};          ///< the first dirty offset the pass started from
  offset first_dirty_after{0};           ///< and where it left it (the first uncleanable offset)
};

/// Where a log stands for the cleaner (partition_log::cleanable()). Thread-safety: a value.
struct cleanable_info {
  offset first_dirty{0};          ///< records below were cleaned by an earlier pass
  offset first_uncleanable{0};    ///< end of the cleanable segments (a segment base)
  std::size_t segments = 0;       ///< cleanable segments
  std::uint64_t clean_bytes = 0;  ///< bytes of cleanable segments wholly below first_dirty
  std::uint64_t dirty_bytes = 0;  ///< bytes of the other cleanable segments
  /// dirty / (clean + dirty); 0 when nothing is cleanable. Compared with min.cleanable.dirty.ratio.
  double dirty_ratio() const noexcept {
    auto total = clean_bytes + dirty_bytes;
    return total == 0 ? 0.0 : static_cast<double>(dirty_bytes) / static_cast<double>(total);
  }
};

/// The cleaning plan for `segs` (a log's segment list; the last one is active): which
/// sealed segments below `upper` (default: the active segment's base) may be cleaned now,
/// stopping at the first dirty segment younger than min.compaction.lag.ms, and how many of
/// their bytes are clean (wholly below the first dirty offset) and dirty. A first dirty
/// offset outside [log_start, log_end] restarts at the log start, as Kafka resets an
/// out-of-range cleaner checkpoint.
inline result<cleanable_info> plan_cleaning(const std::vector<std::shared_ptr<segment>>& segs, offset first_dirty,
                                            offset log_start, offset log_end, std::optional<offset> upper,
                                            const log_config& config, timestamp_ms now) {
  cleanable_info info;
  const offset fd = first_dirty < log_start || first_dirty > log_end ? log_start : first_dirty;
  info.first_dirty = fd;
  if (segs.empty()) return info;
  offset bound = segs.back()->base_offset();
  if (upper && *upper < bound) bound = *upper;
  std::size_t n = segments_below(segs, bound);
  if (config.min_compaction_lag.count() > 0) {
    for (std::size_t i = 0; i < n; ++i) {
      if (segs[i + 1]->base_offset() <= fd) continue;  // wholly clean
      BROOK_TRY_ASSIGN(timestamp_ms m, segs[i]->exact_max_timestamp());
      if (m > now - config.min_compaction_lag.count()) {
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

/// key -> offset of its latest record in the dirty part: an open-addressing table of
/// (64-bit hash, key view, offset) slots with linear probing, so a lookup touches one cache
/// line and compares key bytes only on a full hash match. Keys are views into the
/// segments' mappings: the caller keeps those segments pinned while the map lives.
/// Thread-safety: none; owned by the thread running the pass.
class offset_map {
 public:
  offset_map() { slots_.resize(initial_slots); }

  /// Records `key` at `o`. With `copy_key` a new key's bytes are copied into the map (a key
  /// from a compressed batch's decompressed records, which do not stay); else it is viewed.
  void put(std::string_view key, offset o, bool copy_key = false) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    slot& s = find(key, hash_of(key));
    if (s.hash == 0) {
      if (copy_key) key = owned_.emplace_back(key);
      s = slot{hash_of(key), key.data(), key.size(), o.value()};
      ++size_;
    } else if (s.offset < o.value()) {
      s.offset = o.value();
    }
    latest_ = std::max(latest_, o.value());
  }
  /// The latest offset of `key`, or -1 when the dirty part does not hold it.
  std::int64_t get(std::string_view key) const noexcept {
    if (size_ == 0) return -1;
    const slot& s = const_cast<offset_map*>(this)->find(key, hash_of(key));
    return s.hash == 0 ? -1 : s.offset;
  }
  std::size_t size() const noexcept { return size_; }
  /// Largest offset put, -1 when empty.
  std::int64_t latest_offset() const noexcept { return latest_; }

 private:
  static constexpr std::size_t initial_slots = 1024;  // a power of two
  struct slot {
    std::uint64_t hash = 0;  // 0 = empty (real hashes have the low bit set)
    const char* key = nullptr;
    std::size_t len = 0;
    std::int64_t offset = -1;
  };
  static std::uint64_t hash_of(std::string_view key) noexcept { return std::hash<std::string_view>{}(key) | 1u; }
  slot& find(std::string_view key, std::uint64_t h) noexcept {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(h) & mask;; i = (i + 1) & mask) {
      slot& s = slots_[i];
      if (s.hash == 0 || (s.hash == h && std::string_view(s.key, s.len) == key)) return s;
    }
  }
  void grow() {
    std::vector<slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const slot& s : old)
      if (s.hash != 0) find(std::string_view(s.key, s.len), s.hash) = s;
  }

  std::vector<slot> slots_;
  std::size_t size_ = 0;
  std::int64_t latest_ = -1;
  std::deque<std::string> owned_;  // copied keys (stable addresses)
};

namespace detail {

inline std::string_view key_view(const nullable_bytes& k) noexcept { return k.as_string_view(); }

/// The batch of segment `s` at `p`, validated (CRC and records); a compressed batch's records
/// decompressed into `d`.
inline result<record_batch_view> parse_for_cleaning(const segment& s, file_pos p, file_pos limit,
                                                    batch_decompressor& d) {
  const auto bytes = s.bytes(p, static_cast<std::uint64_t>(limit - p));
  auto where = [&] { return s.where(p); };
  BROOK_TRY_ASSIGN(auto v, record_batch_view::parse(bytes, batch_check{true, false}, where));
  if (v.compressed()) return record_batch_view::parse(bytes, d, batch_check{false, true}, where);
  return record_batch_view::parse(bytes, batch_check{false, true}, where);
}

/// Adds every keyed record at or after `from` of segment `s` to `map` (control batches are
/// skipped, as in Kafka's buildOffsetMap). Validates each batch (CRC included); a compressed
/// batch is decompressed with `d` and its keys copied into the map.
inline result<void> add_segment_to_map(const segment& s, offset from, offset_map& map, batch_decompressor& d) {
  const file_pos limit = s.end_pos();
  for (file_pos p{0}; p < limit;) {
    BROOK_TRY_ASSIGN(auto v, record_batch_view::parse(s.bytes(p, static_cast<std::uint64_t>(limit - p)),
                                                      batch_check{true, false}, [&] { return s.where(p); }));
    if (!v.header().is_control() && v.last_offset() >= from) {
      BROOK_TRY_ASSIGN(v, parse_for_cleaning(s, p, limit, d));
      for (const record_view& r : v)
        if (r.offset() >= from && !r.key().is_null()) map.put(key_view(r.key()), r.offset(), v.compressed());
    }
    p += v.size_bytes();
  }
  return ok();
}

/// Kafka's buildOffsetMap over a plan: the keys of every cleanable segment that is not
/// wholly clean. The map's keys are views into `segs` (or copies, for compressed batches):
/// keep the segments pinned while it lives. `codecs` reads compressed batches.
inline result<void> build_offset_map(const std::vector<std::shared_ptr<segment>>& segs, const cleanable_info& p,
                                     offset_map& map, const compression_codecs& codecs) {
  batch_decompressor d(codecs);
  for (std::size_t i = 0; i < p.segments; ++i)
    if (segs[i + 1]->base_offset() > p.first_dirty) BROOK_TRY(add_segment_to_map(*segs[i], p.first_dirty, map, d));
  return ok();
}

/// A pass's stats before it runs: what the plan covers, and where the first dirty offset
/// ends up (the first uncleanable offset, unless there is nothing to clean).
inline compact_stats stats_before_pass(const cleanable_info& p) {
  compact_stats st;
  st.segments_cleanable = p.segments;
  st.first_dirty_before = p.first_dirty;
  st.first_dirty_after = p.segments == 0 ? p.first_dirty : std::max(p.first_dirty, p.first_uncleanable);
  return st;
}

/// `<file>.cleaned` / `<file>.swap` next to `file`.
inline fs::path with_suffix(const fs::path& file, const char* suffix) {
  fs::path p = file;
  p += suffix;
  return p;
}

/// Writes one cleaned segment as `<base>.log.cleaned` plus its two indexes (built with the
/// segment's own indexing rule, so the result opens as a trusted segment). Batches are
/// gathered in a buffer and written in large pwrites.
/// Thread-safety: one thread.
class cleaned_segment_writer {
 public:
  cleaned_segment_writer(const fs::path& dir, offset base, const log_config& cfg)
      : dir_(dir), base_(base), cfg_(cfg), oindex_(base), tindex_(base), indexer_(base) {}
  cleaned_segment_writer(const cleaned_segment_writer&) = delete;
  cleaned_segment_writer& operator=(const cleaned_segment_writer&) = delete;
  ~cleaned_segment_writer() {
    if (open_) discard();  // opened, never finished: an error cut the segment short
  }

  /// Creates the files; `source_bytes` (the segment being cleaned) sizes the indexes.
  result<void> open(std::uint64_t source_bytes) {
    open_ = true;  // (leftovers of an earlier, failed pass are truncated below)
    BROOK_TRY_ASSIGN(auto f, file_handle::open(files(), log_path(), O_RDWR | O_CREAT | O_TRUNC));
    log_ = std::move(f);
    using mode = detail::index_file::mode;
    // Rebuilt batches may grow (re-based timestamp deltas): room for twice the entries.
    std::size_t est =
        static_cast<std::size_t>(2 * source_bytes / std::max<std::uint32_t>(cfg_.index_interval_bytes, 1) + 4);
    std::size_t cap = std::max(static_cast<std::size_t>(cfg_.segment_index_bytes), est * time_index::entry_size);
    BROOK_TRY(oindex_.open(files(), with_suffix(partition_files::index(dir_, base_), ".cleaned"), cap, mode::fresh));
    BROOK_TRY(
        tindex_.open(files(), with_suffix(partition_files::time_index(dir_, base_), ".cleaned"), cap, mode::fresh));
    buf_.reserve(buffer_bytes);
    return ok();
  }

  /// Appends one whole, valid batch. The bytes are copied.
  result<void> append(std::span<const std::byte> batch) {
    batch_header h = decode_batch_header_unchecked(batch.data());
    if (size_ + batch.size() > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
      return make_error(errc::kafka_storage_error, "{}: cleaned segment would exceed 2^31-1 bytes",
                        log_path().string());
    BROOK_TRY(indexer_.add(h, file_pos(static_cast<std::int64_t>(size_)), cfg_.index_interval_bytes, oindex_, tindex_));
    buf_.insert(buf_.end(), batch.begin(), batch.end());
    size_ += batch.size();
    if (buf_.size() >= buffer_bytes) BROOK_TRY(flush_buffer());
    return ok();
  }

  /// Writes what is buffered, seals the indexes as segment::seal does, syncs all three files.
  result<void> finish() {
    BROOK_TRY(flush_buffer());
    if (!oindex_.full() && indexer_.max_ts_offset >= base_ && size_ > 0)
      BROOK_TRY(tindex_.maybe_append(indexer_.max_ts_seen, indexer_.max_ts_offset));
    BROOK_TRY(log_.datasync());
    BROOK_TRY(oindex_.trim_and_sync());
    BROOK_TRY(tindex_.trim_and_sync());
    log_.reset();
    open_ = false;
    return ok();
  }

  /// Removes the .cleaned files (an unchanged segment, or an aborted pass).
  void discard() noexcept {
    log_.reset();
    (void)files().remove(log_path());
    (void)files().remove(with_suffix(partition_files::index(dir_, base_), ".cleaned"));
    (void)files().remove(with_suffix(partition_files::time_index(dir_, base_), ".cleaned"));
    open_ = false;
  }

  std::uint64_t size() const noexcept { return size_; }
  fs::path log_path() const { return with_suffix(partition_files::log(dir_, base_), ".cleaned"); }

 private:
  static constexpr std::size_t buffer_bytes = 1 << 20;

  file_system& files() const { return files_or_posix(cfg_.files); }

  result<void> flush_buffer() {
    if (buf_.empty()) return ok();
    BROOK_TRY(log_.pwrite_all(buf_, written_));
    written_ += buf_.size();
    buf_.clear();
    return ok();
  }

  fs::path dir_;
  offset base_;
  const log_config& cfg_;
  file_handle log_;
  offset_index oindex_;
  time_index tindex_;
  segment_indexer indexer_;
  std::vector<std::byte> buf_;
  std::uint64_t size_ = 0;
  std::uint64_t written_ = 0;
  bool open_ = false;  // files created and not yet finished
};

/// The retention decision of one pass. Thread-safety: a value (borrows the map).
struct record_filter {
  const offset_map* map = nullptr;
  timestamp_ms now = 0;
  std::int64_t delete_retention_ms = 0;
  /// Reads compressed batches and recompresses what is rebuilt of them (null: `none` only).
  const compression_codecs* codecs = nullptr;
};

/// Appends the record `r` (of a batch with base offset `base`) to `out` as Kafka's
/// DefaultRecord.writeTo encodes it, with timestamp delta relative to `base_ts`.
inline void encode_record(std::vector<std::byte>& out, const record_view& r, offset base, timestamp_ms base_ts) {
  const std::int64_t ts_delta = detail::sub_wrapping(r.timestamp(), base_ts);
  const auto off_delta = static_cast<std::int32_t>(r.offset() - base);
  auto field_size = [](const nullable_bytes& b) { return varint_size(b.wire_length()) + b.size(); };
  std::size_t body = 1 + varlong_size(ts_delta) + varint_size(off_delta) + field_size(r.key()) + field_size(r.value()) +
                     varint_size(static_cast<std::int32_t>(r.headers().size()));
  for (const record_header& h : r.headers())
    body += varint_size(static_cast<std::int32_t>(h.key.size())) + h.key.size() + field_size(h.value);
  const std::size_t at = out.size();
  out.resize(at + max_varint_size + body);
  std::byte* p = out.data() + at;
  p += encode_varint(static_cast<std::int32_t>(body), p);
  *p++ = std::byte{0};  // attributes (unused; Java writes 0)
  p += encode_varlong(ts_delta, p);
  p += encode_varint(off_delta, p);
  auto put = [&](const nullable_bytes& b) {
    p += encode_varint(b.wire_length(), p);
    if (b.size() > 0) std::memcpy(p, b.data(), b.size());
    p += b.size();
  };
  put(r.key());
  put(r.value());
  p += encode_varint(static_cast<std::int32_t>(r.headers().size()), p);
  for (const record_header& h : r.headers()) {
    put(nullable_bytes(h.key));
    put(h.value);
  }
  out.resize(static_cast<std::size_t>(p - out.data()));
}

/// Rebuilds `v` keeping only `kept` (Kafka's buildRetainedRecordsInto) into `out` (cleared
/// first). `horizon` is the delete horizon to stamp, or -1 for none. With nothing kept it
/// writes Kafka's empty batch (writeEmptyHeader): base and max timestamp the original's
/// maxTimestamp, no delete horizon.
inline void rebuild_batch(std::vector<std::byte>& out, const record_batch_view& v, std::span<const record_view> kept,
                          timestamp_ms horizon) {
  namespace L = batch_layout;
  const batch_header& h = v.header();
  const bool append_time = h.timestamp_type() == timestamp_type::log_append_time;
  if (kept.empty()) horizon = -1;
  const timestamp_ms base_ts = horizon >= 0 ? horizon : kept.empty() ? h.max_timestamp : kept.front().timestamp();
  timestamp_ms max_ts = -1;
  out.assign(L::header_size, std::byte{0});
  for (const record_view& r : kept) {
    encode_record(out, r, h.base_offset, base_ts);
    max_ts = std::max(max_ts, r.timestamp());
  }
  if (append_time || kept.empty()) max_ts = h.max_timestamp;
  std::int16_t attrs =
      static_cast<std::int16_t>(h.attributes & ~(batch_attr::compression_mask | batch_attr::delete_horizon));
  if (horizon >= 0) attrs = static_cast<std::int16_t>(attrs | batch_attr::delete_horizon);
  std::byte* b = out.data();
  store_be64(b + L::base_offset, h.base_offset.value());
  store_be32(b + L::batch_length, static_cast<std::int32_t>(out.size() - L::log_overhead));
  store_be32(b + L::partition_leader_epoch, h.partition_leader_epoch);
  b[L::magic] = static_cast<std::byte>(current_magic);
  store_be16(b + L::attributes, attrs);
  store_be32(b + L::last_offset_delta, h.last_offset_delta);
  store_be64(b + L::base_timestamp, base_ts);
  store_be64(b + L::max_timestamp, max_ts);
  store_be64(b + L::producer_id, h.producer_id);
  store_be16(b + L::producer_epoch, h.producer_epoch);
  store_be32(b + L::base_sequence, h.base_sequence);
  store_be32(b + L::records_count, static_cast<std::int32_t>(kept.size()));
  update_batch_crc(out);
}

/// Filters every batch of segment `s` into `out` by `f`, counting into `st`. Returns whether
/// anything differs from the source (false: nothing was written, the segment stays as it
/// is). `out` is opened at the first difference, when the unchanged batches before it are
/// copied in one go, so an unchanged segment costs no writes.
inline result<bool> clean_segment_into(const segment& s, const record_filter& f, cleaned_segment_writer& out,
                                       compact_stats& st) {
  const file_pos limit = s.end_pos();
  bool changed = false;
  std::vector<record_view> kept;
  std::vector<std::byte> scratch;
  byte_buffer packed;
  batch_decompressor d(f.codecs ? *f.codecs : compression_codecs{});
  // The first difference: open `out` and copy the unchanged batches before `upto`.
  auto start_writing = [&](file_pos upto) -> result<void> {
    changed = true;
    BROOK_TRY(out.open(static_cast<std::uint64_t>(limit.value())));
    for (file_pos q{0}; q < upto;) {
      const std::size_t n = decode_batch_header_unchecked(s.bytes(q, batch_layout::header_size).data()).size_bytes();
      BROOK_TRY(out.append(s.bytes(q, n)));
      q += n;
    }
    return ok();
  };
  // A batch kept as it is: copied once writing has started.
  auto keep_as_is = [&](std::span<const std::byte> b) -> result<void> { return changed ? out.append(b) : ok(); };
  for (file_pos p{0}; p < limit;) {
    const file_pos at = p;
    BROOK_TRY_ASSIGN(auto v, record_batch_view::parse(s.bytes(p, static_cast<std::uint64_t>(limit - p)),
                                                      batch_check{true, false}, [&] { return s.where(p); }));
    if (!v.header().is_control()) {
      BROOK_TRY_ASSIGN(v, parse_for_cleaning(s, p, limit, d));
    }
    p += v.size_bytes();
    const batch_header& h = v.header();
    if (h.is_control()) {
      BROOK_TRY(keep_as_is(v.bytes()));
      continue;
    }
    const bool has_horizon = (h.attributes & batch_attr::delete_horizon) != 0;
    kept.clear();
    bool kept_tombstone = false;
    for (const record_view& r : v) {
      ++st.records_read;
      const bool tombstone = r.value().is_null();
      bool keep = false;
      if (!r.key().is_null()) {
        const bool latest = r.offset().value() >= f.map->get(key_view(r.key()));
        keep = latest && (!tombstone || !has_horizon || f.now < h.base_timestamp);
      }
      if (keep) {
        kept.push_back(r);
        kept_tombstone = kept_tombstone || tombstone;
      } else {
        ++st.records_removed;
        if (tombstone) ++st.tombstones_removed;
      }
    }
    st.records_kept += kept.size();
    const bool set_horizon = kept_tombstone && !has_horizon;
    if (kept.size() == v.record_count() && !set_horizon) {  // (an empty batch stays as it is)
      BROOK_TRY(keep_as_is(v.bytes()));
      continue;
    }
    if (!changed) BROOK_TRY(start_writing(at));
    if (kept.empty() && p < limit) continue;  // the whole batch goes
    // (An emptied last batch stays, empty, so the segment still ends where it did.)
    timestamp_ms horizon = has_horizon ? h.base_timestamp : -1;
    if (set_horizon) {
      horizon = f.now;
      if (__builtin_add_overflow(f.now, f.delete_retention_ms, &horizon))
        horizon = std::numeric_limits<timestamp_ms>::max();
    }
    rebuild_batch(scratch, v, kept, horizon);
    if (v.compressed() && !kept.empty()) {  // Kafka: the batch's own codec at its default level
      BROOK_TRY_ASSIGN(const compression_codec* c, d.codecs().get(v.compression()));
      BROOK_TRY(compress_batch(scratch, *c, c->default_level(), packed));
      BROOK_TRY(out.append(packed));
      continue;
    }
    BROOK_TRY(out.append(scratch));
  }
  return changed;
}

/// Steps 2 and 3 of the swap protocol for segment `base` (step 1 is cleaned_segment_writer).
inline result<void> commit_cleaned_segment(file_system& fsys, const fs::path& dir, offset base) {
  const fs::path files[] = {partition_files::index(dir, base), partition_files::time_index(dir, base),
                            partition_files::log(dir, base)};  // the log last in both rounds
  for (const auto& f : files) BROOK_TRY(fsys.rename(with_suffix(f, ".cleaned"), with_suffix(f, ".swap")));
  BROOK_TRY(fsys.sync_directory(dir));  // committed: recovery completes the swap from here
  BROOK_TRY(fsys.rename(with_suffix(files[0], ".swap"), files[0]));
  BROOK_TRY(fsys.rename(with_suffix(files[1], ".swap"), files[1]));
  BROOK_TRY(fsys.rename(with_suffix(files[2], ".swap"), files[2]));
  return fsys.sync_directory(dir);
}

/// Whether the file at `path` is a complete cleaned segment for [base, end): whole valid
/// batches (CRC and records checked), offsets increasing from base, all below `end`.
inline bool is_complete_cleaned_log(file_system& files, const fs::path& path, offset base, offset end) {
  auto f = file_handle::open(files, path, O_RDONLY);
  if (!f) return false;
  auto sz = f->size();
  if (!sz) return false;
  auto m = mapped_region::map_file(*f, static_cast<std::size_t>(*sz), false);
  if (!m) return false;
  std::span<const std::byte> b((*m)->data(), static_cast<std::size_t>(*sz));
  offset next = base;
  for (std::size_t p = 0; p < b.size();) {
    auto v = record_batch_view::parse(b.subspan(p), batch_check{true, false}, std::string_view("swap"));
    if (!v || v->base_offset() < next || v->last_offset() >= end) return false;
    // Records are checked too, except a compressed batch's (the CRC covers its payload).
    if (!v->compressed() && !record_batch_view::parse(b.subspan(p), batch_check{}, std::string_view("swap")))
      return false;
    next = v->header().next_offset();
    p += v->size_bytes();
  }
  return true;
}

/// Recovery of interrupted swaps (see the header comment). `swaps` are the `<b>.log.swap`
/// files found, `bases` the sorted bases of the `.log` files. Completes what can be
/// completed (reporting it) and returns the swap files to delete as leftovers.
inline result<std::vector<fs::path>> complete_log_swaps(file_system& files, const fs::path& dir,
                                                        const std::vector<offset>& bases,
                                                        const std::vector<std::pair<offset, fs::path>>& swaps,
                                                        bool read_only, recovery_report& report) {
  std::vector<fs::path> leftovers;
  for (const auto& [base, path] : swaps) {
    auto it = std::lower_bound(bases.begin(), bases.end(), base);
    const bool completable = !read_only && it != bases.end() && *it == base && it + 1 != bases.end() &&
                             is_complete_cleaned_log(files, path, base, *(it + 1));
    if (!completable) {
      leftovers.push_back(path);
      continue;
    }
    (void)files.remove(partition_files::index(dir, base));  // old or new: rebuilt from the log either way
    (void)files.remove(partition_files::time_index(dir, base));
    BROOK_TRY(files.rename(path, partition_files::log(dir, base)));
    BROOK_TRY(files.sync_directory(dir));
    report.clean = false;
    report.events.push_back(fmt::format("{}: completed an interrupted log-cleaner swap", path.string()));
  }
  return leftovers;
}

}  // namespace detail
}  // namespace brook

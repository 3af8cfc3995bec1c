// Kafka's leader epoch cache for one partition replica (LeaderEpochFileCache.java) and its file
// (LeaderEpochCheckpointFile.java): for every leader epoch that wrote to the log, the offset of
// its first record. Followers use it to answer "where did epoch E end?" (OffsetsForLeaderEpoch,
// KIP-101/KIP-279) and truncate their log to that point before fetching, so logs never diverge.
//
// File: `<partition dir>/leader-epoch-checkpoint`, text, every line ending in '\n':
//
//   0          <- version, always 0
//   3          <- number of entries
//   0 0        <- leader_epoch (int32) ' ' start_offset (int64), one entry per line
//   2 120
//   5 4031
//
// Entries are sorted with epochs strictly increasing and start offsets strictly increasing
// (Kafka keeps both by construction); brook refuses a file that breaks that, or has a negative
// epoch or offset, or any other malformation, with kafka_storage_error naming the file and line
// (Kafka would replay such entries through assign() and silently drop some; a file Kafka wrote
// never has them). The file is replaced atomically: `leader-epoch-checkpoint.tmp`, fsync,
// rename, fsync(dir) (storage/checkpoint_file.hpp); a leftover .tmp is ignored. A missing file
// is an empty cache.
//
// Durability: every call that changes the cache rewrites the file before it returns (Kafka does
// that for assign and flushes truncations in the background; brook flushes both at once, since
// they are rare: leader changes, log truncation, log start moves). If the write fails the call
// returns the error and the change stays in memory; the next successful write (flush() or any
// later change) writes the whole state. in_memory() caches have no file.
//
// Thread-safety: internally synchronised (like Kafka's read-write lock): queries take a shared
// lock and may run from any thread; changes are serialised and hold the exclusive lock only
// while they edit memory, never across the file write, so readers do not wait for an fsync.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/checkpoint_file.hpp>
#include <brook/storage/partition_files.hpp>

namespace brook {

/// OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH: "no epoch" in requests and answers.
inline constexpr leader_epoch undefined_epoch{-1};
/// OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET: "no end offset" in answers.
inline constexpr offset undefined_epoch_offset{-1};

/// One line of the checkpoint: leader `epoch` wrote its first record at `start_offset`.
struct epoch_entry {
  leader_epoch epoch;
  offset start_offset;
  friend constexpr bool operator==(const epoch_entry&, const epoch_entry&) = default;
};

/// An answer to OffsetsForLeaderEpoch: the largest known epoch <= the requested one (or the
/// requested one itself, see end_offset_for) and where it ended.
struct epoch_end_offset {
  leader_epoch epoch;
  offset end_offset;
  friend constexpr bool operator==(const epoch_end_offset&, const epoch_end_offset&) = default;
};

class leader_epoch_cache {
 public:
  /// Kafka's LEADER_EPOCH_CHECKPOINT_FILENAME, inside the partition directory.

  /// Loads `<partition_dir>/leader-epoch-checkpoint` (missing -> empty cache). The directory
  /// is not created; writes fail while it does not exist. Errors: kafka_storage_error with the
  /// file and line for a malformed or non-monotonic file. `files` (the I/O seam) must outlive
  /// the cache.
  static result<std::unique_ptr<leader_epoch_cache>> open(const fs::path& partition_dir, file_system& files) {
    fs::path path = partition_dir / partition_files::leader_epoch_checkpoint;
    BROOK_TRY_ASSIGN(auto lines, read_checkpoint(files, path, 2));
    std::vector<epoch_entry> entries;
    entries.reserve(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::size_t lineno = 3 + i;  // after the version and count lines
      const auto& toks = lines[i];
      auto bad = [&](std::string_view why) {
        return make_error(errc::kafka_storage_error, "{} line {}: {}", path.string(), lineno, why);
      };
      auto epoch = parse_int<std::int32_t>(toks[0]);
      if (!epoch) return bad(fmt::format("leader epoch '{}' is not an int32", toks[0]));
      auto start = parse_int<std::int64_t>(toks[1]);
      if (!start) return bad(fmt::format("start offset '{}' is not an int64", toks[1]));
      if (*epoch < 0 || *start < 0) return bad(fmt::format("negative entry '{} {}'", *epoch, *start));
      epoch_entry e{leader_epoch{*epoch}, offset{*start}};
      if (!entries.empty() && (e.epoch <= entries.back().epoch || e.start_offset <= entries.back().start_offset))
        return bad(fmt::format("entry '{} {}' does not follow '{} {}' (epochs and start offsets must increase)",
                               e.epoch, e.start_offset, entries.back().epoch, entries.back().start_offset));
      entries.push_back(e);
    }
    std::unique_ptr<leader_epoch_cache> c(new leader_epoch_cache(std::move(path), &files));
    c->entries_ = std::move(entries);
    return c;
  }

  /// A cache with no file (tests, models, a replica that does not persist). Never fails.
  static std::unique_ptr<leader_epoch_cache> in_memory() {
    return std::unique_ptr<leader_epoch_cache>(new leader_epoch_cache(fs::path{}, nullptr));
  }

  leader_epoch_cache(const leader_epoch_cache&) = delete;
  leader_epoch_cache& operator=(const leader_epoch_cache&) = delete;

  /// The checkpoint file, empty for in_memory(). Thread-safe.
  const fs::path& path() const noexcept { return path_; }

  /// Records that `epoch` starts at `start_offset` (Kafka: assign). Exactly Kafka's rules:
  ///  - the latest epoch again with a start offset >= its recorded one: ignored (an epoch's start
  ///    never moves forward once assigned);
  ///  - anything else first removes, from the newest end, every entry whose epoch >= `epoch` or
  ///    whose start offset >= `start_offset`, then appends {epoch, start_offset}. So a lower
  ///    epoch than the latest drops all newer epochs (assign(1,5), (2,6), (1,7) leaves [(1,7)]),
  ///    the latest epoch with an earlier start replaces it, and a new epoch at an offset already
  ///    covered truncates the entries it overlaps (assign(2,9), (3,9) leaves [(3,9)]).
  /// Returns whether the cache changed (and was written). Errors: invalid_argument for a
  /// negative epoch or offset (Kafka: IllegalArgumentException); file write errors.
  /// Thread-safe.
  result<bool> assign(leader_epoch epoch, offset start_offset) {
    epoch_entry e{epoch, start_offset};
    return assign(std::span<const epoch_entry>(&e, 1));
  }

  /// assign() of each entry in turn, writing the file once at the end (Kafka: assign(List)).
  /// All entries are validated before any is applied. Thread-safe.
  result<bool> assign(std::span<const epoch_entry> entries) {
    for (const auto& e : entries)
      if (e.epoch.value() < 0 || e.start_offset.value() < 0)
        return make_error(errc::invalid_argument, "invalid partition leader epoch entry (epoch {}, start offset {})",
                          e.epoch, e.start_offset);
    return mutate([&](std::vector<epoch_entry>& v) {
      bool changed = false;
      for (const auto& e : entries) changed |= assign_one(v, e);
      return changed;
    });
  }

  /// Removes every entry whose start offset >= `end_offset`, after the log was truncated to end
  /// there (Kafka: truncateFromEnd). A negative `end_offset` (UNDEFINED_EPOCH_OFFSET) is a
  /// no-op. Returns whether the cache changed. Thread-safe.
  result<bool> truncate_from_end(offset end_offset) {
    return mutate([&](std::vector<epoch_entry>& v) { return truncate_end(v, end_offset); });
  }

  /// After the log start moved to `start_offset` (retention, DeleteRecords): drops entries that
  /// lie wholly before it and moves the start of the epoch containing it up to `start_offset`;
  /// an entry starting exactly at `start_offset` is kept (Kafka: truncateFromStart, "exclusive").
  /// Past the last entry's start, only the last entry remains, starting at `start_offset`.
  /// A negative `start_offset` is a no-op. Returns whether the cache changed. Thread-safe.
  result<bool> truncate_from_start(offset start_offset) {
    return mutate([&](std::vector<epoch_entry>& v) { return truncate_start(v, start_offset); });
  }

  /// Removes every entry and writes the empty file (Kafka: clearAndFlush). Thread-safe.
  result<void> clear() {
    BROOK_TRY(mutate([](std::vector<epoch_entry>& v) {
      v.clear();
      return true;  // always write, as Kafka does
    }));
    return ok();
  }

  /// Writes the current entries to the file (a retry after a failed write). Thread-safe.
  result<void> flush() {
    std::lock_guard w(write_mu_);
    std::vector<std::vector<std::string>> lines;
    {
      std::shared_lock l(mu_);
      lines = to_lines(entries_);
    }
    return write(lines);
  }

  /// The answer to OffsetsForLeaderEpoch for `requested`, given the log end offset; exactly
  /// Kafka's endOffsetFor:
  ///  - requested == undefined_epoch (-1)             -> {-1, -1}
  ///  - requested == the latest epoch                 -> {requested, log_end_offset}
  ///  - no epoch > requested (incl. an empty cache)   -> {-1, -1}
  ///  - requested below the first epoch               -> {requested, first entry's start offset}
  ///    (the requested epoch itself is echoed: the log no longer holds anything before that)
  ///  - otherwise                                     -> {largest epoch <= requested,
  ///                                                      start offset of the smallest epoch > requested}
  /// Other negative epochs are not special-cased (Kafka neither): they fall under "below the
  /// first epoch". Thread-safe.
  epoch_end_offset end_offset_for(leader_epoch requested, offset log_end_offset) const {
    std::shared_lock l(mu_);
    if (requested == undefined_epoch) return {undefined_epoch, undefined_epoch_offset};
    if (!entries_.empty() && entries_.back().epoch == requested) return {requested, log_end_offset};
    auto higher = upper_bound_epoch(requested);
    if (higher == entries_.end()) return {undefined_epoch, undefined_epoch_offset};
    if (higher == entries_.begin()) return {requested, higher->start_offset};
    return {std::prev(higher)->epoch, higher->start_offset};
  }

  /// The epoch of the record at `o`: the entry with the largest start offset <= o; nullopt when
  /// `o` is before the first entry or the cache is empty (Kafka: epochForOffset). Thread-safe.
  std::optional<leader_epoch> epoch_for_offset(offset o) const {
    std::shared_lock l(mu_);
    auto it = std::upper_bound(entries_.begin(), entries_.end(), o,
                               [](offset x, const epoch_entry& e) { return x < e.start_offset; });
    if (it == entries_.begin()) return std::nullopt;
    return std::prev(it)->epoch;
  }

  /// The newest epoch, if any (Kafka: latestEpoch). Thread-safe.
  std::optional<leader_epoch> latest_epoch() const {
    auto e = latest_entry();
    if (!e) return std::nullopt;
    return e->epoch;
  }
  /// Thread-safe.
  std::optional<epoch_entry> latest_entry() const {
    std::shared_lock l(mu_);
    if (entries_.empty()) return std::nullopt;
    return entries_.back();
  }
  /// Thread-safe.
  std::optional<epoch_entry> earliest_entry() const {
    std::shared_lock l(mu_);
    if (entries_.empty()) return std::nullopt;
    return entries_.front();
  }
  /// The epoch before the latest one (Kafka: previousEpoch()). Thread-safe.
  std::optional<leader_epoch> previous_epoch() const {
    std::shared_lock l(mu_);
    if (entries_.size() < 2) return std::nullopt;
    return entries_[entries_.size() - 2].epoch;
  }
  /// The largest known epoch < `e` (Kafka: previousEpoch(int)). Thread-safe.
  std::optional<leader_epoch> previous_epoch(leader_epoch e) const {
    auto p = previous_entry(e);
    if (!p) return std::nullopt;
    return p->epoch;
  }
  /// The entry of the largest known epoch < `e` (Kafka: previousEntry). Thread-safe.
  std::optional<epoch_entry> previous_entry(leader_epoch e) const {
    std::shared_lock l(mu_);
    auto it = lower_bound_epoch(e);
    if (it == entries_.begin()) return std::nullopt;
    return *std::prev(it);
  }
  /// The smallest known epoch > `e` (Kafka: nextEpoch). Thread-safe.
  std::optional<leader_epoch> next_epoch(leader_epoch e) const {
    std::shared_lock l(mu_);
    auto it = upper_bound_epoch(e);
    if (it == entries_.end()) return std::nullopt;
    return it->epoch;
  }
  /// The entry of exactly epoch `e` (Kafka: epochEntry). Thread-safe.
  std::optional<epoch_entry> entry_for(leader_epoch e) const {
    std::shared_lock l(mu_);
    auto it = lower_bound_epoch(e);
    if (it == entries_.end() || it->epoch != e) return std::nullopt;
    return *it;
  }
  /// Thread-safe.
  bool empty() const {
    std::shared_lock l(mu_);
    return entries_.empty();
  }
  /// A copy of all entries, oldest first (Kafka: epochEntries). Thread-safe.
  std::vector<epoch_entry> entries() const {
    std::shared_lock l(mu_);
    return entries_;
  }
  /// The entries as they would be after truncate_from_start(start) (skipped when start < 0) and
  /// truncate_from_end(end), without changing the cache (Kafka: epochEntriesInRange).
  /// Thread-safe.
  std::vector<epoch_entry> entries_in_range(offset start, offset end) const {
    std::vector<epoch_entry> v = entries();
    if (start.value() >= 0) truncate_start(v, start);
    truncate_end(v, end);
    return v;
  }

 private:
  leader_epoch_cache(fs::path path, file_system* files) : path_(std::move(path)), files_(files) {}

  template <typename Int>
  static std::optional<Int> parse_int(const std::string& tok) {
    Int v{};
    auto [p, e] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (e != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
    return v;
  }

  std::vector<epoch_entry>::const_iterator upper_bound_epoch(leader_epoch e) const {
    return std::upper_bound(entries_.begin(), entries_.end(), e,
                            [](leader_epoch x, const epoch_entry& y) { return x < y.epoch; });
  }
  std::vector<epoch_entry>::const_iterator lower_bound_epoch(leader_epoch e) const {
    return std::lower_bound(entries_.begin(), entries_.end(), e,
                            [](const epoch_entry& y, leader_epoch x) { return y.epoch < x; });
  }

  static bool assign_one(std::vector<epoch_entry>& v, const epoch_entry& e) {
    // Kafka's isUpdateNeeded: a new epoch, or the latest epoch with an earlier start.
    if (!v.empty() && v.back().epoch == e.epoch && e.start_offset >= v.back().start_offset) return false;
    // Kafka's maybeTruncateNonMonotonicEntries.
    while (!v.empty() && (v.back().epoch >= e.epoch || v.back().start_offset >= e.start_offset)) v.pop_back();
    v.push_back(e);
    return true;
  }

  static bool truncate_end(std::vector<epoch_entry>& v, offset end_offset) {
    if (end_offset.value() < 0 || v.empty() || v.back().start_offset < end_offset) return false;
    while (!v.empty() && v.back().start_offset >= end_offset) v.pop_back();
    return true;
  }

  static bool truncate_start(std::vector<epoch_entry>& v, offset start_offset) {
    auto keep = std::find_if(v.begin(), v.end(), [&](const epoch_entry& e) { return e.start_offset > start_offset; });
    if (keep == v.begin()) return false;  // nothing starts at or before start_offset
    epoch_entry moved{std::prev(keep)->epoch, start_offset};
    const bool changed = keep - v.begin() > 1 || v.front() != moved;
    v.erase(v.begin(), std::prev(keep));
    v.front() = moved;
    return changed;
  }

  static std::vector<std::vector<std::string>> to_lines(const std::vector<epoch_entry>& v) {
    std::vector<std::vector<std::string>> lines;
    lines.reserve(v.size());
    for (const auto& e : v) lines.push_back({std::to_string(e.epoch.value()), std::to_string(e.start_offset.value())});
    return lines;
  }

  result<void> write(const std::vector<std::vector<std::string>>& lines) {
    if (path_.empty()) return ok();
    return write_checkpoint(*files_, path_, lines);
  }

  // Applies `f` to the entries under the exclusive lock; when it reports a change, writes the
  // resulting state while still serialised against other changes (write_mu_) but with readers
  // free to proceed.
  template <typename F>
  result<bool> mutate(F&& f) {
    std::lock_guard w(write_mu_);
    std::vector<std::vector<std::string>> lines;
    {
      std::unique_lock l(mu_);
      if (!f(entries_)) return false;
      if (!path_.empty()) lines = to_lines(entries_);
    }
    BROOK_TRY(write(lines));
    return true;
  }

  const fs::path path_;
  file_system* const files_;          // null with no file
  mutable std::shared_mutex mu_;      // guards entries_
  std::mutex write_mu_;               // serialises changes and file writes, taken before mu_
  std::vector<epoch_entry> entries_;  // epochs and start offsets strictly increasing
};

}  // namespace brook

template <>
struct fmt::formatter<brook::epoch_entry> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const brook::epoch_entry& e, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "EpochEntry(epoch={}, startOffset={})", e.epoch, e.start_offset);
  }
};

template <>
struct fmt::formatter<brook::epoch_end_offset> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const brook::epoch_end_offset& e, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "(epoch={}, endOffset={})", e.epoch, e.end_offset);
  }
};

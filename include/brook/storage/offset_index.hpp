// The sparse offset index of one segment: `<base offset>.index`, Kafka's
// OffsetIndex format.
//
//   entry (8 bytes, big-endian):  int32 relativeOffset | int32 position
//
//   relativeOffset = (last offset of the indexed batch) - segment base offset
//   position       = byte position of that batch's start in the .log
//
// One entry is added when more than index.interval.bytes of log were appended
// since the previous one. lookup(target) returns the greatest entry whose
// offset is <= target (or the segment start); the reader then scans batch
// headers forward from its position. The file carries no checksum: it is a
// hint, sanity-checked on open and rebuilt by recovery.
//
// Thread-safety: one writer, any number of concurrent readers (see index_file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/bytes.hpp>
#include <brook/storage/detail/index_file.hpp>

namespace brook {

class offset_index {
 public:
  static constexpr std::size_t entry_size = 4 + 4;

  struct entry {
    brook::offset offset;  ///< absolute offset (last offset of the indexed batch)
    file_pos position;     ///< start of that batch in the .log
  };

  explicit offset_index(brook::offset base) : base_(base) {}

  result<void> open(file_system& files, const fs::path& path, std::size_t capacity, detail::index_file::mode m) {
    return file_.open(files, path, entry_size, capacity, m);
  }

  brook::offset base_offset() const noexcept { return base_; }
  std::size_t entries() const noexcept { return file_.entries(); }
  bool full() const noexcept { return file_.full(); }

  entry at(std::size_t i) const noexcept {
    const std::byte* p = file_.entry(i);
    return {base_ + detail::load_be32(p), file_pos(detail::load_be32(p + 4))};
  }

  /// Appends (offset -> position); kafka_storage_error when the disk is full (nothing is
  /// added). REQUIRES: !full(), offset - base fits int32, both increasing.
  result<void> append(brook::offset off, file_pos pos) {
    BROOK_TRY_ASSIGN(std::byte * p, file_.prepare());
    detail::store_be32(p, static_cast<std::int32_t>(off - base_));
    detail::store_be32(p + 4, static_cast<std::int32_t>(pos.value()));
    file_.commit();
    return ok();
  }

  /// Greatest entry with offset <= target; {base, 0} when there is none.
  entry lookup(brook::offset target) const noexcept { return lookup_with_next(target).at_or_below; }

  /// lookup(target), and the entry after it: the batch it names ends past target, so when
  /// the index holds an entry per batch it is the batch holding target.
  struct bracket {
    entry at_or_below;
    std::optional<entry> next;  ///< none when at_or_below is the last entry
  };
  bracket lookup_with_next(brook::offset target) const noexcept {
    const std::size_t n = entries();
    const std::size_t lo = first_above(target, n);
    bracket b{lo == 0 ? entry{base_, file_pos(0)} : at(lo - 1), std::nullopt};
    if (lo < n) b.next = at(lo);
    return b;
  }

  /// The number of the first of the first `n` entries (n: an entries() the caller loaded)
  /// whose offset is > target; n when there is none.
  std::size_t first_above(brook::offset target, std::size_t n) const noexcept {
    auto at_or_below = [&](std::size_t i) { return at(i).offset <= target; };
    if (n < 16) return file_.count_at_or_below(n, at_or_below);
    // Batches of like size spread the entries evenly over the offsets: guess the answer
    // from the first and last entries and read the entries 4 either side of the guess
    // (one or two lines, at once) instead of following log2(n) dependent reads through the
    // index. When the answer lies outside them, the search goes on over the side it is on.
    const brook::offset first = at(0).offset, last = at(n - 1).offset;
    if (target < first) return 0;
    if (target >= last) return n;              // first <= target < last: the answer is in [1, n - 1]
    const auto guess = std::min<std::size_t>(  // the min only guards an index too large to exist
        n - 2, 1 + static_cast<std::size_t>((target - first) * static_cast<std::int64_t>(n - 2) / (last - first)));
    std::size_t lo = guess > 4 ? guess - 4 : 1, hi = std::min(guess + 4, n - 1);
    const bool lo_below = at_or_below(lo), hi_below = at_or_below(hi);
    if (lo_below && hi_below) return hi + 1 + count_at_or_below(hi + 1, n - 1, at_or_below);
    if (!lo_below) return 1 + count_at_or_below(1, lo, at_or_below);
    return lo + 1 + count_at_or_below(lo + 1, hi, at_or_below);
  }

  /// The number of entries in [from, to) for which at_or_below holds (they lead). A binary search.
  template <typename Pred>
  static std::size_t count_at_or_below(std::size_t from, std::size_t to, Pred at_or_below) noexcept {
    std::size_t lo = from, hi = to;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (at_or_below(mid))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo - from;
  }

  /// Drops every entry whose position is >= pos (the log was cut there).
  void truncate_to_position(file_pos pos) noexcept {
    std::size_t n = entries();
    while (n > 0 && at(n - 1).position >= pos) --n;
    file_.truncate_entries(n);
  }

  /// Checks entries increase strictly in offset and position, lie inside [base, next_offset)
  /// and point inside a log of log_size bytes.
  result<void> sanity_check(std::uint64_t log_size, brook::offset next_offset) const {
    std::size_t n = entries();
    for (std::size_t i = 0; i < n; ++i) {
      entry e = at(i);
      if (e.offset < base_ || e.offset >= next_offset || e.position.value() < 0 ||
          static_cast<std::uint64_t>(e.position.value()) >= log_size)
        return make_error(errc::corrupt_message, "{}: entry {} ({} -> byte {}) lies outside the log",
                          file_.path().string(), i, e.offset, e.position);
      if (i > 0) {
        entry p = at(i - 1);
        if (e.offset <= p.offset || e.position <= p.position)
          return make_error(errc::corrupt_message, "{}: entry {} does not increase", file_.path().string(), i);
      }
    }
    return ok();
  }

  result<void> trim_and_sync() { return file_.trim_and_sync(); }
  result<void> sync() const { return file_.sync(); }
  const fs::path& path() const noexcept { return file_.path(); }

 private:
  brook::offset base_;
  detail::index_file file_;
};

}  // namespace brook

// The sparse time index of one segment: `<base offset>.timeindex`, Kafka's
// TimeIndex format.
//
//   entry (12 bytes, big-endian):  int64 timestamp | int32 relativeOffset
//
// Entries record "the largest timestamp seen so far in this segment, and the
// offset of the record that carries it". Timestamps never decrease; an entry
// is added next to each offset-index entry when the maximum grew, and once
// more when the segment is sealed so the segment's largest timestamp can be
// read back without a scan.
//
// lookup(ts) returns the greatest entry with timestamp <= ts; the reader then
// scans forward for the first record whose timestamp is >= ts.
//
// Thread-safety: one writer, any number of concurrent readers (see index_file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/bytes.hpp>
#include <brook/storage/detail/index_file.hpp>

namespace brook {

class time_index {
 public:
  static constexpr std::size_t entry_size = 8 + 4;

  struct entry {
    timestamp_ms timestamp;
    brook::offset offset;
  };

  explicit time_index(brook::offset base) : base_(base) {}

  result<void> open(file_system& files, const fs::path& path, std::size_t capacity, detail::index_file::mode m) {
    return file_.open(files, path, entry_size, capacity, m);
  }

  std::size_t entries() const noexcept { return file_.entries(); }
  bool full() const noexcept { return file_.full(); }

  entry at(std::size_t i) const noexcept {
    const std::byte* p = file_.entry(i);
    return {detail::load_be64(p), base_ + detail::load_be32(p + 8)};
  }
  /// The last entry, or {-1, base} when empty.
  entry last() const noexcept {
    std::size_t n = entries();
    return n == 0 ? entry{-1, base_} : at(n - 1);
  }

  /// Appends (timestamp -> offset) when timestamp is larger than the last entry's, and
  /// the index is not full; kafka_storage_error when the disk is full (nothing is added).
  result<void> maybe_append(timestamp_ms ts, brook::offset off) {
    if (file_.full()) return ok();
    entry l = last();
    if (entries() > 0 && (ts <= l.timestamp || off < l.offset)) return ok();
    BROOK_TRY_ASSIGN(std::byte * p, file_.prepare());
    detail::store_be64(p, ts);
    detail::store_be32(p + 8, static_cast<std::int32_t>(off - base_));
    file_.commit();
    return ok();
  }

  /// Greatest entry with timestamp <= ts; {-1, base} when there is none.
  entry lookup(timestamp_ms ts) const noexcept {
    std::size_t lo = file_.count_at_or_below(entries(), [&](std::size_t i) { return at(i).timestamp <= ts; });
    if (lo == 0) return {-1, base_};
    return at(lo - 1);
  }

  /// Drops every entry whose offset is >= off.
  void truncate_to_offset(brook::offset off) noexcept {
    std::size_t n = entries();
    while (n > 0 && at(n - 1).offset >= off) --n;
    file_.truncate_entries(n);
  }

  /// Checks timestamps and offsets never decrease and offsets lie in [base, next_offset).
  result<void> sanity_check(brook::offset next_offset) const {
    std::size_t n = entries();
    for (std::size_t i = 0; i < n; ++i) {
      entry e = at(i);
      if (e.offset < base_ || e.offset >= next_offset)
        return make_error(errc::corrupt_message, "{}: entry {} points at offset {} outside the segment",
                          file_.path().string(), i, e.offset);
      if (i > 0) {
        entry p = at(i - 1);
        if (e.timestamp < p.timestamp || e.offset < p.offset)
          return make_error(errc::corrupt_message, "{}: entry {} goes backwards", file_.path().string(), i);
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

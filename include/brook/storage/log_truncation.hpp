// Truncating a partition log's segments for partition_log::truncate_to (a replica dropping
// a divergent tail), and cutting a segment's .log file. A file nobody else maps is truncated in place and synced. A
// file a reader still maps (it holds a log_slice) is never cut under it: its first `len` bytes are copied to
// `<name>.truncate.cleaned`, synced, and renamed over the old name, so the reader keeps the old inode and its bytes.
// Recovery deletes a leftover `.cleaned` file, and the name differs from the one a concurrent cleaner pass may be
// writing for the same segment.
//
// Thread-safety: free functions; the caller serialises writers of one file.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include <brook/core/result.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/segment.hpp>

namespace brook {

/// Copies the first `len` bytes of `path` into a new file and renames it over `path`.
inline result<void> copy_prefix_and_swap(file_system& files, const std::filesystem::path& path, std::uint64_t len) {
  std::filesystem::path tmp = path;
  tmp += ".truncate.cleaned";
  BROOK_TRY_ASSIGN(file_handle in, file_handle::open(files, path, O_RDONLY));
  BROOK_TRY_ASSIGN(file_handle out, file_handle::open(files, tmp, O_WRONLY | O_CREAT | O_TRUNC));
  BROOK_TRY(files.copy(in.fd(), out.fd(), len, path, tmp));
  BROOK_TRY(out.datasync());
  BROOK_TRY(files.rename(tmp, path));
  return files.sync_directory(path.parent_path());
}

/// Cuts the segment file at `path` to `len` bytes: in place, or through a copy when
/// `mapped_by_readers` (see above).
inline result<void> cut_segment_file(file_system& files, const std::filesystem::path& path, std::uint64_t len,
                                     bool mapped_by_readers) {
  if (mapped_by_readers) return copy_prefix_and_swap(files, path, len);
  BROOK_TRY_ASSIGN(file_handle f, file_handle::open(files, path, O_RDWR));
  BROOK_TRY(f.truncate(len));
  return f.datasync();
}

/// Truncates a log's segment list `segs` (oldest first) at offset `o`: drops the segments
/// at or above `o` (never the first), cuts the last remaining one at the batch holding `o`
/// (removed whole, as in Kafka), and reopens it as the active segment through
/// `reopen(base, kind)`. The list holds each segment while its file is cut, so a segment
/// only the list holds (use_count 1) has no reader to protect. REQUIRES: the caller holds
/// the list's lock (segment_list::modify) and serialises writers.
template <class Reopen>
result<void> cut_segments_at(file_system& files, std::vector<std::shared_ptr<segment>>& segs, offset o,
                             const std::filesystem::path& dir, Reopen&& reopen) {
  bool popped = false;
  while (segs.size() > 1 && segs.back()->base_offset() >= o) {
    segment::remove_files(files, dir, segs.back()->base_offset());
    segs.pop_back();
    popped = true;
  }
  std::shared_ptr<segment>& last = segs.back();
  BROOK_TRY_ASSIGN(auto pos, last->find_position(o, last->end_pos()));
  const file_pos cut = pos ? *pos : last->end_pos();
  if (cut < last->end_pos()) {
    BROOK_TRY(cut_segment_file(files, last->log_path(), static_cast<std::uint64_t>(cut.value()),
                               /*mapped_by_readers=*/last.use_count() > 1));
    BROOK_TRY_ASSIGN(last, reopen(last->base_offset(), segment::open_kind::recover));
  } else if (popped) {
    // A sealed segment becomes the active one again: reopen it with room to grow.
    BROOK_TRY_ASSIGN(last, reopen(last->base_offset(), segment::open_kind::trusted));
  }
  return ok();
}

}  // namespace brook

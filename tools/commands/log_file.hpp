// Reading segment files directly, without partition_log: the .log batch by
// batch from byte 0, and the .index / .timeindex checked against it. dump-log
// and verify use this so they see a torn or corrupt tail exactly as it is on
// disk (a read-only partition_log open would quietly stop before it).
//
// Files are opened O_RDONLY and read with pread(2): nothing is modified, no
// lock is taken, and a writer truncating the file meanwhile cannot SIGBUS us.
//
// Thread-safety: none; one reader per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/segment.hpp>

#include "commands/cli_codecs.hpp"

namespace brook::cli {

/// Where one valid batch sits in a .log, for checking index entries against.
struct batch_location {
  std::uint64_t position = 0;
  brook::offset base{0};
  brook::offset last{0};
  timestamp_ms max_record_timestamp = -1;  ///< largest record timestamp (Kafka's DumpLogSegments check)
  timestamp_ms header_max_timestamp = -1;  ///< the batch's maxTimestamp field, which recovery indexes
};

/// Walks the batches of one .log file from byte 0.
class log_file_reader {
 public:
  /// Opens `path` read-only. The segment base offset comes from a 20-digit file stem, if any.
  static result<log_file_reader> open(const fs::path& path);

  const fs::path& path() const noexcept { return path_; }
  std::uint64_t file_size() const noexcept { return size_; }
  /// Byte position of the next batch (== the valid prefix once next() failed).
  std::uint64_t position() const noexcept { return pos_; }
  std::optional<brook::offset> segment_base() const noexcept { return base_; }

  /// Reads and validates the next batch (record_batch_view::parse: header, CRC, records,
  /// a compressed batch's records decompressed with the tool's codecs, cli_codecs.hpp), plus
  /// the segment's offset rules (base offsets never go back, offsets fit the segment).
  /// nullopt at the end of the file. The view and its records are valid until the next call.
  /// Errors (corrupt_message, unsupported_compression_type for a codec the tool was built
  /// without, record_too_large past 128 MiB of decompressed records) name the file and byte.
  result<std::optional<record_batch_view>> next();

  /// The valid batches seen so far.
  const std::vector<batch_location>& batches() const noexcept { return seen_; }
  /// Offset after the last valid batch (the segment base, or -1 if unknown, before any).
  brook::offset next_offset() const noexcept { return next_; }

 private:
  log_file_reader() = default;
  std::string where(std::uint64_t pos) const;

  fs::path path_;
  file_handle file_;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
  std::optional<brook::offset> base_;
  brook::offset next_{-1};
  std::vector<std::byte> buf_;
  batch_decompressor decompressor_ = cli_decompressor();  // a compressed batch's records
  std::vector<batch_location> seen_;
};

/// Result of checking one index file.
struct index_check {
  fs::path path;
  bool present = false;
  std::size_t entries = 0;            ///< entries in use (before the unused zero tail)
  std::size_t unused_entries = 0;     ///< all-zero preallocated entries after them
  std::vector<std::string> problems;  ///< one line each, naming the file and entry
};

/// Checks `<stem>.index` against the batches of its log, as Kafka's DumpLogSegments
/// --verify-index-only does: every entry in use must point at the start of a valid batch
/// whose last offset is the entry's offset, offsets and positions strictly increasing.
/// `valid_bytes` is where the valid batches end. A missing file is a problem.
///
/// Unused entries: a live (untrimmed) index is preallocated with zeros. Kafka stops at the
/// first entry after entry 0 whose relative offset is 0, since entries strictly increase
/// and only entry 0 could legitimately have relative offset 0. Here the region from that
/// entry on is accepted as unused only if it is all zero bytes to the end of the file;
/// non-zero bytes after it are reported.
index_check check_offset_index(const fs::path& path, brook::offset base, const std::vector<batch_location>& batches,
                               std::uint64_t valid_bytes);

/// Checks `<stem>.timeindex` the same way: every entry in use must name the last offset of
/// a valid batch whose largest record timestamp is the entry's timestamp, timestamps
/// strictly increasing and offsets increasing. Same unused-tail rule as the offset index.
index_check check_time_index(const fs::path& path, brook::offset base, const std::vector<batch_location>& batches);

/// The recovery event that names the damage a reader stopped at (the first cut, with its
/// file, byte and reason), else the first event. REQUIRES: some event.
inline const std::string& damage_event(const recovery_report& r) {
  for (const auto& e : r.events)
    if (e.find(": truncated ") != std::string::npos) return e;
  return r.events.front();
}

}  // namespace brook::cli

// Every file name a partition directory may hold, named once: the segment files, the
// checkpoints of every layer that keeps one there, and the leftovers of interrupted writes.
// Opening a partition log classifies each directory entry with classify(); a name it does
// not know fails the open (a foreign file is never deleted or guessed about).
//
//   <data dir>/<topic>-<partition>/
//     00000000000000000000.log          a segment: batches from base offset 0 (segment.hpp);
//                                       the stem is the base offset, 20 digits
//     00000000000000000000.index        its offset index (offset_index.hpp)
//     00000000000000000000.timeindex    its time index (time_index.hpp)
//     00000000000000000000.txnindex     Kafka's transaction index and producer snapshots:
//     00000000000000000000.snapshot     brook writes neither and leaves them alone
//     recovery-point-offset-checkpoint  partition_log: where recovery starts
//     log-start-offset-checkpoint       partition_log: the log start offset
//     cleaner-offset-checkpoint         log_cleaner: how far compaction got
//     leader-epoch-checkpoint           replication/leader_epoch_cache.hpp
//     replication-offset-checkpoint     replication/broker.hpp: the high watermark
//     partition.metadata                the topic id, Kafka's file (partition_metadata.hpp),
//                                       written and read by data_dir
//     <checkpoint>.tmp                  a checkpoint write cut short (checkpoint_file.hpp);
//                                       the checkpoint itself is intact: removed on open
//     <segment file>.cleaned            the cleaner's rewrite in progress: removed on open
//     <segment file>.swap               the cleaner's commit point: a whole .log.swap is
//                                       completed on open, anything else removed
//     <segment file>.deleted            a delete cut short: removed on open
//
// Thread-safety: stateless functions and constants.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <brook/core/types.hpp>

namespace brook {

/// What a name in a partition directory is (see the layout above).
enum class partition_file_kind {
  segment_log,         ///< <base>.log
  segment_index,       ///< <base>.index
  segment_time_index,  ///< <base>.timeindex
  kafka_only,          ///< <base>.txnindex, <base>.snapshot: left alone
  checkpoint,          ///< one of partition_files::checkpoints (partition.metadata included)
  checkpoint_tmp,      ///< <checkpoint>.tmp
  log_swap,            ///< <base>.log.swap: the cleaner's commit point
  leftover,            ///< any other .swap, .cleaned or .deleted file
  foreign,             ///< none of the above
};

/// A classified directory entry: its kind and, for segment files and swaps, the base offset.
struct partition_file {
  partition_file_kind kind = partition_file_kind::foreign;
  std::optional<offset> base;
};

/// The names and their parsing. All members are static.
struct partition_files {
  static constexpr std::string_view log_suffix = ".log";
  static constexpr std::string_view index_suffix = ".index";
  static constexpr std::string_view time_index_suffix = ".timeindex";
  static constexpr std::string_view cleaned_suffix = ".cleaned";
  static constexpr std::string_view swap_suffix = ".swap";
  static constexpr std::string_view deleted_suffix = ".deleted";
  static constexpr std::string_view tmp_suffix = ".tmp";

  static constexpr std::string_view recovery_point_checkpoint = "recovery-point-offset-checkpoint";
  static constexpr std::string_view log_start_checkpoint = "log-start-offset-checkpoint";
  static constexpr std::string_view cleaner_offset_checkpoint = "cleaner-offset-checkpoint";
  static constexpr std::string_view leader_epoch_checkpoint = "leader-epoch-checkpoint";
  static constexpr std::string_view replication_offset_checkpoint = "replication-offset-checkpoint";
  /// Kafka keeps it with its checkpoint classes, and it is written as they are (temp file,
  /// fsync, rename), so a cut-short write leaves the same `.tmp`.
  static constexpr std::string_view partition_metadata = "partition.metadata";
  static constexpr std::array<std::string_view, 6> checkpoints{recovery_point_checkpoint,     log_start_checkpoint,
                                                               cleaner_offset_checkpoint,     leader_epoch_checkpoint,
                                                               replication_offset_checkpoint, partition_metadata};

  /// The 20-digit stem of a segment's files ("00000000000000000042").
  static std::string base_name(offset base) { return fmt::format("{:020d}", base.value()); }
  static std::filesystem::path log(const std::filesystem::path& dir, offset base) {
    return dir / (base_name(base) + std::string(log_suffix));
  }
  static std::filesystem::path index(const std::filesystem::path& dir, offset base) {
    return dir / (base_name(base) + std::string(index_suffix));
  }
  static std::filesystem::path time_index(const std::filesystem::path& dir, offset base) {
    return dir / (base_name(base) + std::string(time_index_suffix));
  }
  /// `path` with `suffix` appended to its file name ("x.log" -> "x.log.cleaned").
  static std::filesystem::path with_suffix(const std::filesystem::path& path, std::string_view suffix) {
    std::filesystem::path p = path;
    p += std::string(suffix);
    return p;
  }

  /// The base offset named by a 20-digit file stem, if it is one.
  static std::optional<offset> parse_base(std::string_view stem) {
    if (stem.size() != 20) return std::nullopt;
    std::int64_t v = 0;
    for (char c : stem) {
      if (c < '0' || c > '9') return std::nullopt;
      if (v > (std::numeric_limits<std::int64_t>::max() - (c - '0')) / 10) return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return offset(v);
  }

  /// What the directory entry called `name` is.
  static partition_file classify(std::string_view name) {
    using k = partition_file_kind;
    for (std::string_view c : checkpoints) {
      if (name == c) return {k::checkpoint, std::nullopt};
      if (name.size() == c.size() + tmp_suffix.size() && name.starts_with(c) && name.ends_with(tmp_suffix))
        return {k::checkpoint_tmp, std::nullopt};
    }
    const std::size_t dot = name.find('.');
    if (dot == std::string_view::npos) return {};
    const auto base = parse_base(name.substr(0, dot));
    const std::string_view ext = name.substr(dot);  // everything from the first dot: ".log.swap"
    if (base) {
      if (ext == log_suffix) return {k::segment_log, base};
      if (ext == index_suffix) return {k::segment_index, base};
      if (ext == time_index_suffix) return {k::segment_time_index, base};
      if (ext == ".txnindex" || ext == ".snapshot") return {k::kafka_only, base};
      if (ext == std::string(log_suffix) + std::string(swap_suffix)) return {k::log_swap, base};
    }
    if (name.ends_with(swap_suffix) || name.ends_with(cleaned_suffix) || name.ends_with(deleted_suffix))
      return {k::leftover, base};
    return {};
  }
};

}  // namespace brook

// Per-log settings, named and defaulted as Kafka's topic configs are.
//
// Thread-safety: a value; a partition_log copies it at open.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <brook/compression/compression_codec.hpp>
#include <brook/compression/compression_type.hpp>
#include <brook/core/clock.hpp>
#include <brook/core/printable.hpp>
#include <brook/core/result.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/file_system.hpp>

namespace brook {

/// cleanup.policy: what removes old data. `delete` drops whole segments by retention.ms /
/// retention.bytes; `compact` runs the log cleaner (storage/log_cleaner.hpp), which keeps the
/// latest record per key; `compact,delete` does both.
enum class cleanup_policy : std::uint8_t { delete_ = 1, compact = 2, compact_delete = 3 };

/// Parses Kafka's list syntax: "delete", "compact", "compact,delete" or "delete,compact"
/// (spaces around items allowed, an item may repeat). invalid_config otherwise.
inline result<cleanup_policy> parse_cleanup_policy(std::string_view text) {
  unsigned bits = 0;
  std::string_view rest = text;
  for (;;) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "delete")
      bits |= 1;
    else if (item == "compact")
      bits |= 2;
    else
      return make_error(errc::invalid_config,
                        "cleanup.policy '{}' is not a list of 'delete' and 'compact' (bad item '{}')",
                        detail::printable(text), detail::printable(item));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return static_cast<cleanup_policy>(bits);
}

/// Kafka's spelling of a policy: "delete", "compact" or "compact,delete".
inline std::string_view to_string(cleanup_policy p) noexcept {
  switch (p) {
    case cleanup_policy::delete_: return "delete";
    case cleanup_policy::compact: return "compact";
    case cleanup_policy::compact_delete: return "compact,delete";
  }
  return "?";
}

/// Every setting of one partition log, each named after its Kafka topic config (durations as
/// std::chrono::milliseconds; Kafka's `*.ms` name and default in the comment).
struct log_config {
  /// retention.ms = -1: keep segments however old they are.
  static constexpr std::chrono::milliseconds keep_forever{-1};

  /// segment.bytes: roll when the next append would take the segment past this. Default 1 GiB.
  std::uint64_t segment_bytes = 1024ull * 1024 * 1024;
  /// segment.ms: roll a non-empty segment whose first batch's timestamp is older than this. Default 7 days.
  std::chrono::milliseconds segment_time{std::chrono::hours{7 * 24}};
  /// segment.index.bytes: preallocated size of each index file; a full index rolls the segment. Default 10 MiB.
  std::uint64_t segment_index_bytes = 10ull * 1024 * 1024;
  /// index.interval.bytes: bytes of log between two offset-index entries. Default 4096.
  std::uint32_t index_interval_bytes = 4096;
  /// max.message.bytes: largest batch accepted, in bytes. Default 1 MiB + 12.
  std::uint32_t max_message_bytes = 1024 * 1024 + 12;
  /// retention.ms: delete segments whose largest timestamp is older than this; keep_forever (-1 ms)
  /// keeps them. Default 7 days.
  std::chrono::milliseconds retention_time{std::chrono::hours{7 * 24}};
  /// retention.bytes: delete oldest segments while the log is larger than this; -1 = no limit. Default -1.
  std::int64_t retention_bytes = -1;
  /// flush.messages: fdatasync after this many unflushed records. Default never (Long.MAX).
  std::int64_t flush_messages = std::numeric_limits<std::int64_t>::max();
  /// flush.ms: fdatasync when the oldest unflushed append is older than this. Default never (Long.MAX).
  std::chrono::milliseconds flush_interval{std::chrono::milliseconds::max()};
  /// message.timestamp.type: CreateTime keeps producer timestamps, LogAppendTime stamps the append time.
  timestamp_type message_timestamp_type = timestamp_type::create_time;
  /// message.timestamp.before.max.ms: a CreateTime record may be at most this much older than
  /// the append time. Default Long.MAX_VALUE (no limit), as in Kafka.
  std::chrono::milliseconds message_timestamp_before_max{std::chrono::milliseconds::max()};
  /// message.timestamp.after.max.ms: a CreateTime record may be at most this much newer than
  /// the append time. Default 3600000 (1 hour), Kafka 4.0's (KIP-1030; before 4.0 no limit).
  std::chrono::milliseconds message_timestamp_after_max{std::chrono::hours{1}};
  /// cleanup.policy: delete (retention), compact (the log cleaner) or both. Default delete.
  cleanup_policy cleanup = cleanup_policy::delete_;
  /// delete.retention.ms: how long the cleaner keeps a tombstone (null value) after it first
  /// cleaned the batch holding it (KIP-534's delete horizon). Default 1 day (86400000).
  std::chrono::milliseconds delete_retention{std::chrono::hours{24}};
  /// min.cleanable.dirty.ratio: housekeeping cleans a compacted log once the dirty (not yet
  /// cleaned) bytes are at least this share of the cleanable bytes. Default 0.5.
  double min_cleanable_dirty_ratio = 0.5;
  /// min.compaction.lag.ms: a segment holding a record younger than this (by its largest
  /// timestamp) and everything after it are not cleaned yet. Default 0.
  std::chrono::milliseconds min_compaction_lag{0};
  /// compression.type: the codec a producer's batches are stored with. nullopt is Kafka's
  /// `producer` (the default): kept as the producer compressed them; `none` is Kafka's
  /// `uncompressed`. A batch of another codec is recompressed on append (LogValidator's
  /// rebuild: new CRC, offsets and timestamps assigned as for any append), which needs the
  /// codecs of both in `codecs`.
  std::optional<compression_type> compression{};
  /// compression.gzip.level / compression.lz4.level / compression.zstd.level: the level a
  /// recompression uses (KIP-390's defaults -1, 9, 3 and ranges).
  int compression_gzip_level = -1;
  int compression_lz4_level = 9;
  int compression_zstd_level = 3;
  /// Where time comes from (rolling, retention, flush.ms, LogAppendTime). Null = system clock.
  std::shared_ptr<const brook::clock> clock{};
  /// Where file operations go (storage/file_system.hpp, the I/O seam). Null = the kernel's
  /// (posix_file_system::shared()).
  std::shared_ptr<file_system> files{};
  /// The codecs compressed batches are read with (compression/compression_codec.hpp, the
  /// codec seam): validating a producer's compressed batch, ListOffsets by time. Null = `none`
  /// only: a compressed batch from a producer is then unsupported_compression_type.
  std::shared_ptr<const compression_codecs> codecs{};

  /// The level compression.<codec>.level sets for `t` (0 for none and snappy).
  int compression_level(compression_type t) const noexcept {
    switch (t) {
      case compression_type::gzip: return compression_gzip_level;
      case compression_type::lz4: return compression_lz4_level;
      case compression_type::zstd: return compression_zstd_level;
      case compression_type::none:
      case compression_type::snappy: break;
    }
    return 0;
  }

  /// Checks every value is in its domain; invalid_config names the first one that is not.
  result<void> validate() const {
    for (auto t : {compression_type::gzip, compression_type::lz4, compression_type::zstd}) {
      if (!valid_kafka_compression_level(t, compression_level(t))) {
        const auto r = kafka_compression_levels(t);
        return make_error(errc::invalid_config, "compression.{}.level {} is not in {}..{}", compression_name(t),
                          compression_level(t), r.min, r.max);
      }
    }
    if (segment_bytes < 14) return make_error(errc::invalid_config, "segment.bytes {} is below 14", segment_bytes);
    if (segment_bytes > std::uint64_t{std::numeric_limits<std::int32_t>::max()})
      return make_error(errc::invalid_config, "segment.bytes {} exceeds 2^31-1 (positions are int32)", segment_bytes);
    if (segment_time.count() < 1)
      return make_error(errc::invalid_config, "segment.ms {} is below 1", segment_time.count());
    constexpr std::uint64_t int_max = std::numeric_limits<std::int32_t>::max();  // Kafka's type: int
    if (segment_index_bytes < 4 * 12)
      return make_error(errc::invalid_config, "segment.index.bytes {} is below 48", segment_index_bytes);
    if (segment_index_bytes > int_max)
      return make_error(errc::invalid_config, "segment.index.bytes {} exceeds 2^31-1", segment_index_bytes);
    if (index_interval_bytes < 1) return make_error(errc::invalid_config, "index.interval.bytes must be >= 1");
    if (index_interval_bytes > int_max)
      return make_error(errc::invalid_config, "index.interval.bytes {} exceeds 2^31-1", index_interval_bytes);
    if (max_message_bytes < batch_layout::header_size)
      return make_error(errc::invalid_config, "max.message.bytes {} is smaller than a batch header", max_message_bytes);
    if (max_message_bytes > int_max)
      return make_error(errc::invalid_config, "max.message.bytes {} exceeds 2^31-1", max_message_bytes);
    if (message_timestamp_before_max.count() < 0)
      return make_error(errc::invalid_config, "message.timestamp.before.max.ms {} is negative",
                        message_timestamp_before_max.count());
    if (message_timestamp_after_max.count() < 0)
      return make_error(errc::invalid_config, "message.timestamp.after.max.ms {} is negative",
                        message_timestamp_after_max.count());
    if (retention_time.count() < -1)
      return make_error(errc::invalid_config, "retention.ms {} is below -1", retention_time.count());
    if (retention_bytes < -1)
      return make_error(errc::invalid_config, "retention.bytes {} is below -1", retention_bytes);
    if (flush_messages < 1) return make_error(errc::invalid_config, "flush.messages {} is below 1", flush_messages);
    if (flush_interval.count() < 0)
      return make_error(errc::invalid_config, "flush.ms {} is negative", flush_interval.count());
    if (cleanup != cleanup_policy::delete_ && cleanup != cleanup_policy::compact &&
        cleanup != cleanup_policy::compact_delete)
      return make_error(errc::invalid_config, "cleanup.policy {} is not delete, compact or compact,delete",
                        static_cast<int>(cleanup));
    if (delete_retention.count() < 0)
      return make_error(errc::invalid_config, "delete.retention.ms {} is negative", delete_retention.count());
    if (!(min_cleanable_dirty_ratio >= 0.0 && min_cleanable_dirty_ratio <= 1.0))
      return make_error(errc::invalid_config, "min.cleanable.dirty.ratio {} is not in [0, 1]",
                        min_cleanable_dirty_ratio);
    if (min_compaction_lag.count() < 0)
      return make_error(errc::invalid_config, "min.compaction.lag.ms {} is negative", min_compaction_lag.count());
    return ok();
  }

  /// The cleaner runs on this log (cleanup.policy contains compact).
  bool compacts() const noexcept { return static_cast<unsigned>(cleanup) & 2u; }
  /// retention.ms / retention.bytes delete segments (cleanup.policy contains delete).
  bool deletes() const noexcept { return static_cast<unsigned>(cleanup) & 1u; }
};

}  // namespace brook

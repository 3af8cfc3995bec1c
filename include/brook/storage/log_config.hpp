// Per-log settings, named and defaulted as Kafka's topic configs are.
//
// Thread-safety: a value; a partition_log copies it at open.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include <brook/clock.hpp>
#include <brook/error.hpp>
#include <brook/format/record_batch.hpp>

namespace brook {

struct log_config {
  /// segment.bytes: roll when the next append would take the segment past this. Default 1 GiB.
  std::uint64_t segment_bytes = 1024ull * 1024 * 1024;
  /// segment.ms: roll a non-empty segment whose first batch's timestamp is older than this. Default 7 days.
  std::int64_t segment_ms = 7ll * 24 * 3600 * 1000;
  /// segment.index.bytes: preallocated size of each index file; a full index rolls the segment. Default 10 MiB.
  std::uint64_t segment_index_bytes = 10ull * 1024 * 1024;
  /// index.interval.bytes: bytes of log between two offset-index entries. Default 4096.
  std::uint32_t index_interval_bytes = 4096;
  /// max.message.bytes: largest batch accepted, in bytes. Default 1 MiB + 12.
  std::uint32_t max_message_bytes = 1024 * 1024 + 12;
  /// retention.ms: delete segments whose largest timestamp is older than this; -1 keeps forever. Default 7 days.
  std::int64_t retention_ms = 7ll * 24 * 3600 * 1000;
  /// retention.bytes: delete oldest segments while the log is larger than this; -1 = no limit. Default -1.
  std::int64_t retention_bytes = -1;
  /// flush.messages: fdatasync after this many unflushed records. Default never (Long.MAX).
  std::int64_t flush_messages = std::numeric_limits<std::int64_t>::max();
  /// flush.ms: fdatasync when the oldest unflushed append is older than this. Default never (Long.MAX).
  std::int64_t flush_ms = std::numeric_limits<std::int64_t>::max();
  /// message.timestamp.type: CreateTime keeps producer timestamps, LogAppendTime stamps the append time.
  timestamp_type message_timestamp_type = timestamp_type::create_time;
  /// Where time comes from (rolling, retention, flush.ms, LogAppendTime). Null = system clock.
  std::shared_ptr<const brook::clock> clock;

  /// Checks every value is in its domain; invalid_config names the first one that is not.
  result<void> validate() const {
    if (segment_bytes < 14) return make_error(errc::invalid_config, "segment.bytes {} is below 14", segment_bytes);
    if (segment_bytes > std::uint64_t{std::numeric_limits<std::int32_t>::max()})
      return make_error(errc::invalid_config, "segment.bytes {} exceeds 2^31-1 (positions are int32)", segment_bytes);
    if (segment_ms < 1) return make_error(errc::invalid_config, "segment.ms {} is below 1", segment_ms);
    if (segment_index_bytes < 4 * 12)
      return make_error(errc::invalid_config, "segment.index.bytes {} is below 48", segment_index_bytes);
    if (index_interval_bytes < 1) return make_error(errc::invalid_config, "index.interval.bytes must be >= 1");
    if (max_message_bytes < batch_layout::header_size)
      return make_error(errc::invalid_config, "max.message.bytes {} is smaller than a batch header", max_message_bytes);
    if (retention_ms < -1) return make_error(errc::invalid_config, "retention.ms {} is below -1", retention_ms);
    if (retention_bytes < -1) return make_error(errc::invalid_config, "retention.bytes {} is below -1", retention_bytes);
    if (flush_messages < 1) return make_error(errc::invalid_config, "flush.messages {} is below 1", flush_messages);
    if (flush_ms < 0) return make_error(errc::invalid_config, "flush.ms {} is negative", flush_ms);
    return ok();
  }
};

}  // namespace brook

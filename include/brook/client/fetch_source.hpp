// Where a consumer's records come from (Kafka: the partition leaders a KafkaConsumer's
// fetcher talks to). The mirror of produce_target.hpp:
//   data_dir_source  one data directory, one replica: reads the partition's log up to its
//                    high watermark;
//   cluster_source   a replicated in-process cluster (replication/cluster.hpp): reads the
//                    current leader's log up to its high watermark, following leadership
//                    changes with Kafka's errors.
// Both are partition_sources: they find the brook::partition that leads a topic-partition
// and read it; a source over a network would implement fetch_source directly.
//
// A consumer asks for a partition's bounds (log start, high watermark), reads slices of
// whole batches from a position, and waits on the source's notifier until something moved.
// Every read is bounded by the high watermark: a consumer never sees a record that a
// leader change could still take back.
//
// Errors a source reports for one partition, and what a consumer does with them:
//   unknown_topic_or_partition      no such partition (deleted, or never created)
//   leader_not_available,           no leader right now, or the leader is down, isolated
//   not_leader_or_follower,         or not leading yet: a leader change is under way. The
//   broker_not_available            consumer skips the partition and retries when the
//                                   notifier moves (Kafka's Fetcher refreshes its metadata
//                                   and retries). See is_leader_change().
//   offset_out_of_range             the position is outside [log start, log end]
//   corrupt_message                 a damaged batch, with file and byte
//
// Thread-safety: implementations must be thread-safe; both here are.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>

#include <brook/compression/compression_codec.hpp>
#include <brook/core/error.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/log_read.hpp>
#include <brook/storage/log_slice.hpp>

namespace brook {

/// Where a partition's readable records start and end (Kafka's beginningOffsets and
/// endOffsets): [log_start, high_watermark); and the leader's log end, which the high
/// watermark reaches once the in-sync replicas have everything.
struct partition_bounds {
  offset log_start{0};
  offset high_watermark{0};
  offset log_end{0};
};

/// Errors that mean the partition's leadership is moving: worth retrying, not worth
/// failing a poll for.
inline bool is_leader_change(const error& e) noexcept {
  return e == errc::leader_not_available || e == errc::not_leader_or_follower || e == errc::broker_not_available;
}

class fetch_source {
 public:
  virtual ~fetch_source() = default;
  /// Changes whenever partition counts may have changed.
  virtual std::uint64_t metadata_version() const = 0;
  /// Partitions of `topic`. Errors: unknown_topic_or_partition.
  virtual result<std::int32_t> partition_count(const std::string& topic) const = 0;
  /// tp's log start and high watermark, as its leader has them. Errors: see the header.
  virtual result<partition_bounds> bounds(const topic_partition& tp) const = 0;
  /// Whole batches of tp from `start`, never at or past the high watermark (ro.max_offset
  /// is lowered to it); empty when nothing is committed at or after `start` yet.
  virtual result<log_slice> fetch(const topic_partition& tp, offset start, read_options ro) const = 0;
  /// Kafka's offsetsForTimes for one partition: the first record at or after `ts` below
  /// the high watermark, or nullopt when there is none.
  virtual result<std::optional<timestamp_offset>> offset_for_timestamp(const topic_partition& tp,
                                                                       timestamp_ms ts) const = 0;
  /// Moves whenever a high watermark, a leadership or a topic may have changed: waiting
  /// consumers wake, then ask again.
  virtual brook::notifier& notifier() const = 0;
  /// The codecs the source's compressed batches are read with unless a consumer names its
  /// own (a data directory's log_config::codecs). Null: `none` only.
  virtual std::shared_ptr<const compression_codecs> codecs() const { return nullptr; }
};

/// A source whose partitions are brook::partition objects of this process (a data
/// directory's, or a cluster leader's): bounds, reads and timestamp lookups go to the
/// partition find() returns, bounded by its high watermark.
class partition_source : public fetch_source {
 public:
  result<partition_bounds> bounds(const topic_partition& tp) const final {
    BROOK_TRY_ASSIGN(auto p, find(tp));
    return partition_bounds{p->log_start_offset(), p->high_watermark(), p->log_end_offset()};
  }
  result<log_slice> fetch(const topic_partition& tp, offset start, read_options ro) const final {
    BROOK_TRY_ASSIGN(auto p, find(tp));
    return p->read(start, ro);
  }
  result<std::optional<timestamp_offset>> offset_for_timestamp(const topic_partition& tp, timestamp_ms ts) const final {
    BROOK_TRY_ASSIGN(auto p, find(tp));
    return p->log().offset_for_timestamp(ts, p->high_watermark());
  }

 private:
  /// The partition that leads tp now. Errors: see the header.
  virtual result<std::shared_ptr<partition>> find(const topic_partition& tp) const = 0;
};

/// A data directory as the source: each partition is its own leader. It holds the
/// directory's anchor, not the directory: once the data_dir is closed or destroyed, every
/// call reports errc::closed (a poll blocked on it wakes and learns why).
class data_dir_source final : public partition_source {
 public:
  explicit data_dir_source(data_dir& dd) : anchor_(dd.anchor()), codecs_(dd.codecs()) {}
  std::uint64_t metadata_version() const override { return anchor_->metadata_version(); }
  result<std::int32_t> partition_count(const std::string& topic) const override {
    return anchor_->partition_count(topic);
  }
  brook::notifier& notifier() const override { return *anchor_->notify; }
  std::shared_ptr<const compression_codecs> codecs() const override { return codecs_; }

 private:
  result<std::shared_ptr<partition>> find(const topic_partition& tp) const override {
    return anchor_->get_partition(tp.topic, tp.partition);
  }

  std::shared_ptr<data_dir_anchor> anchor_;
  std::shared_ptr<const compression_codecs> codecs_;
};

}  // namespace brook

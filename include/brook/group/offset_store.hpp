// Committed offsets and group metadata, kept durably in the internal topic
// `__consumer_offsets` of a data directory, the way Kafka keeps them:
//
//   - one record per committed offset: key = (group, topic, partition), value = (offset,
//     leader epoch, metadata, commit time) in Kafka's bytes (group/offsets_topic_records.hpp);
//   - one record per group state change: key = group, value = protocol type, generation,
//     protocol, leader and members with their subscriptions and assignments;
//   - a null value (tombstone) deletes a key: expired offsets, deleted groups.
//
// A group's records all go to partition offsets_topic_partition_for(group, N) (Kafka's
// `abs(group.hashCode) % offsets.topic.num.partitions`), so one group's history is in one
// log, in order. The topic is compacted (cleanup.policy=compact, storage/log_cleaner.hpp):
// cleaning keeps the latest value per key and drops tombstones after delete.retention.ms, so
// replaying the log from its start always yields exactly the current state. load() does that
// replay; a process that restarts resumes every group from it.
//
// Thread-safety: load() may run concurrently with anything; appends for one group must be
// serialised by the caller (the group coordinator holds its lock around them).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/group/offset_and_metadata.hpp>
#include <brook/group/offsets_topic_records.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/partition.hpp>

namespace brook {

/// What the internal topic says about one group.
struct stored_group {
  std::optional<group_metadata_value> metadata;            ///< latest group metadata, if any
  std::map<topic_partition, offset_and_metadata> offsets;  ///< committed offsets
};

class offset_store {
 public:
  static constexpr const char* topic_name = "__consumer_offsets";
  /// offsets.topic.num.partitions. Default 50 (Kafka's).
  static constexpr std::int32_t default_partitions = 50;
  /// offsets.topic.segment.bytes. Default 100 MiB (Kafka's).
  static constexpr std::int64_t default_segment_bytes = 100 * 1024 * 1024;

  /// Opens the internal topic of `dd`, creating it (compacted) with `num_partitions` when the
  /// directory is writable and has none. An existing topic keeps its partition count: the
  /// group-to-partition mapping depends on it, as in Kafka. A read-only directory without
  /// the topic yields an empty store.
  static result<std::unique_ptr<offset_store>> open(data_dir& dd, std::int32_t num_partitions = default_partitions) {
    if (num_partitions < 1)
      return make_error(errc::invalid_partitions, "offsets.topic.num.partitions {} must be at least 1", num_partitions);
    auto count = dd.partition_count(topic_name);
    if (!count) {
      if (count.error() != errc::unknown_topic_or_partition) return count.error();
      if (dd.read_only()) return std::unique_ptr<offset_store>(new offset_store(dd, 0));
      topic_config tc;
      tc.partitions = num_partitions;
      tc.overrides["cleanup.policy"] = "compact";
      tc.overrides["segment.bytes"] = std::to_string(default_segment_bytes);
      BROOK_TRY(dd.create_topic(topic_name, std::move(tc)));
      return std::unique_ptr<offset_store>(new offset_store(dd, num_partitions));
    }
    return std::unique_ptr<offset_store>(new offset_store(dd, *count));
  }

  std::int32_t partitions() const noexcept { return partitions_; }
  std::int32_t partition_for(std::string_view group) const { return offsets_topic_partition_for(group, partitions_); }

  /// Replays every partition of the topic from its log start to its high watermark: the
  /// latest value per key wins, tombstones delete. corrupt_message names the partition and
  /// offset of a key or value that does not decode.
  result<std::map<std::string, stored_group>> load() const {
    std::map<std::string, stored_group> out;
    for (std::int32_t p = 0; p < partitions_; ++p) {
      auto part = dd_.get_partition(topic_name, partition_id(p));
      if (!part) return part.error();
      offset pos = (*part)->log_start_offset();
      const offset hw = (*part)->high_watermark();
      while (pos < hw) {
        auto slice = (*part)->read(pos);
        if (!slice) return slice.error();
        if (slice->empty() && slice->next_offset() <= pos) break;
        result<void> bad = ok();
        auto r = slice->for_each_record([&](const record_view& rv) {
          auto a = apply(out, rv);
          if (!a) {
            bad = make_error(errc::corrupt_message, "{}-{} offset {}: {}", topic_name, p, rv.offset(),
                             a.error().message());
            return false;
          }
          return true;
        });
        if (!r) return r.error();
        if (!bad) return bad.error();
        pos = slice->next_offset();
      }
    }
    return out;
  }

  /// Appends committed offsets of one group as one batch (all or nothing).
  result<void> append_offsets(const std::string& group,
                              const std::vector<std::pair<topic_partition, offset_and_metadata>>& offsets,
                              timestamp_ms now) {
    if (offsets.empty()) return ok();
    record_batch_builder b;
    for (const auto& [tp, v] : offsets) {
      auto k = encode(offset_commit_key{group, tp.topic, tp.partition.value()});
      auto val = encode(to_record(v));
      b.append(now, nullable_bytes(std::span<const std::byte>(k)), nullable_bytes(std::span<const std::byte>(val)));
    }
    return append(group, b);
  }

  /// Appends the group's metadata record.
  result<void> append_group_metadata(const std::string& group, const group_metadata_value& v, timestamp_ms now) {
    record_batch_builder b;
    auto k = encode(group_metadata_key{group});
    auto val = encode(v);
    b.append(now, nullable_bytes(std::span<const std::byte>(k)), nullable_bytes(std::span<const std::byte>(val)));
    return append(group, b);
  }

  /// Appends tombstones for the given offsets and, when `metadata` is set, the group metadata.
  result<void> append_tombstones(const std::string& group, const std::vector<topic_partition>& tps, bool metadata,
                                 timestamp_ms now) {
    if (tps.empty() && !metadata) return ok();
    record_batch_builder b;
    for (const auto& tp : tps) {
      auto k = encode(offset_commit_key{group, tp.topic, tp.partition.value()});
      b.append(now, nullable_bytes(std::span<const std::byte>(k)), nullable_bytes::null());
    }
    if (metadata) {
      auto k = encode(group_metadata_key{group});
      b.append(now, nullable_bytes(std::span<const std::byte>(k)), nullable_bytes::null());
    }
    return append(group, b);
  }

 private:
  static offset_commit_value to_record(const offset_and_metadata& o) {
    offset_commit_value v;
    v.offset = o.off.value();
    v.leader_epoch = o.leader_epoch;
    v.metadata = o.metadata;
    v.commit_timestamp = o.commit_timestamp;
    return v;
  }
  static offset_and_metadata from_record(offset_commit_value v) {
    return offset_and_metadata{offset(v.offset), v.leader_epoch, std::move(v.metadata), v.commit_timestamp};
  }

  offset_store(data_dir& dd, std::int32_t partitions) : dd_(dd), partitions_(partitions) {}

  result<void> append(const std::string& group, record_batch_builder& b) {
    if (partitions_ == 0) return make_error(errc::coordinator_not_available, "{} does not exist", topic_name);
    auto part = dd_.get_partition(topic_name, partition_id(partition_for(group)));
    if (!part) return part.error();
    auto r = (*part)->append(b.finish());
    if (!r) return r.error();
    return ok();
  }

  static result<void> apply(std::map<std::string, stored_group>& out, const record_view& rv) {
    if (rv.key().is_null()) return make_error(errc::corrupt_message, "record without a key");
    auto key = decode_offsets_topic_key(rv.key().span());
    if (!key) return key.error();
    if (auto* ok_key = std::get_if<offset_commit_key>(&*key)) {
      topic_partition tp{ok_key->topic, partition_id(ok_key->partition)};
      if (rv.value().is_null()) {
        auto it = out.find(ok_key->group);
        if (it != out.end()) {
          it->second.offsets.erase(tp);
          if (it->second.offsets.empty() && !it->second.metadata) out.erase(it);
        }
        return ok();
      }
      BROOK_TRY_ASSIGN(offset_commit_value v, decode_offset_commit_value(rv.value().span()));
      out[ok_key->group].offsets[tp] = from_record(std::move(v));
      return ok();
    }
    const auto& gk = std::get<group_metadata_key>(*key);
    if (rv.value().is_null()) {
      auto it = out.find(gk.group);
      if (it != out.end()) {
        it->second.metadata.reset();
        if (it->second.offsets.empty()) out.erase(it);
      }
      return ok();
    }
    auto v = decode_group_metadata_value(rv.value().span());
    if (!v) return v.error();
    out[gk.group].metadata = std::move(*v);
    return ok();
  }

  data_dir& dd_;
  std::int32_t partitions_;
};

}  // namespace brook

// Committed offsets and group metadata, kept durably in the internal topic
// `__consumer_offsets` of the coordinator's backend (group/coordinator_backend.hpp: a data
// directory, or a replicated cluster), the way Kafka keeps them:
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
// replay, up to each partition's high watermark; a process that restarts resumes every group
// from it.
//
// Appends go with acks=all and return once the backend completed them (at once for a data
// directory; when the ISR has the batch for a cluster), or after the backend's
// append_timeout() plus append_margin. Their errors come back as Kafka's classic
// coordinator answers an OffsetCommit whose append failed
// (GroupMetadataManager.storeOffsets): too few in-sync replicas or a missing partition are
// coordinator_not_available; a broker that no longer leads, or a storage error, is
// not_coordinator; a batch too large is invalid_commit_offset_size; anything else
// (request_timed_out) as it is. brook adds: no leader or an unreachable one (what a Kafka
// client sees as a lost connection to its coordinator) is coordinator_not_available too.
// Group metadata writes fail the same way; the group then rebalances (classic_group.hpp),
// so members never see those codes.
//
// Thread-safety: load() may run concurrently with anything; appends for one group must be
// serialised by the caller (the group coordinator holds its lock around them).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/batch_decompressor.hpp>
#include <brook/format/record.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/group/coordinator_backend.hpp>
#include <brook/group/offset_and_metadata.hpp>
#include <brook/group/offsets_topic_records.hpp>
#include <brook/storage/data_dir.hpp>

namespace brook {

/// What the internal topic says about one group.
struct stored_group {
  std::optional<group_metadata_value> metadata;            ///< latest group metadata, if any
  std::map<topic_partition, offset_and_metadata> offsets;  ///< committed offsets
};

class offset_store {
 public:
  static constexpr const char* topic_name = offsets_topic_spec::name;
  /// offsets.topic.num.partitions. Default 50 (Kafka's).
  static constexpr std::int32_t default_partitions = offsets_topic_spec{}.partitions;
  /// offsets.topic.segment.bytes. Default 100 MiB (Kafka's).
  static constexpr std::int64_t default_segment_bytes = offsets_topic_spec{}.segment_bytes;
  /// How long load() waits for the offsets partitions to have readable leaders whose high
  /// watermarks reach their log ends (all partitions together).
  static constexpr std::chrono::milliseconds load_wait{60000};
  /// How long an append waits beyond the backend's append_timeout() for its answer before
  /// giving up with request_timed_out (the backend's answer may still come, and is dropped).
  static constexpr std::chrono::milliseconds append_margin{5000};

  /// Opens the internal topic of `backend` (which must outlive the store), creating it
  /// (compacted) with `num_partitions` when the backend is writable and has none. An
  /// existing topic keeps its partition count: the group-to-partition mapping depends on
  /// it, as in Kafka. A read-only backend without the topic yields an empty store.
  static result<std::unique_ptr<offset_store>> open(coordinator_backend& backend,
                                                    std::int32_t num_partitions = default_partitions) {
    return open_with(nullptr, backend, num_partitions);
  }
  /// The same on a data directory.
  static result<std::unique_ptr<offset_store>> open(data_dir& dd, std::int32_t num_partitions = default_partitions) {
    auto owned = std::make_unique<data_dir_backend>(dd);
    auto& backend = *owned;
    return open_with(std::move(owned), backend, num_partitions);
  }

  std::int32_t partitions() const noexcept { return partitions_; }
  std::int32_t partition_for(std::string_view group) const { return offsets_topic_partition_for(group, partitions_); }

  /// Replays every partition of the topic from its log start to its high watermark: the
  /// latest value per key wins, tombstones delete. A key or value that does not decode is
  /// corrupt_message naming the partition and offset: the load fails with it, or, given
  /// `skipped`, it is added there and the record ignored (Kafka's loader skips what it
  /// cannot read, so one bad record does not take every group of the topic down).
  result<std::map<std::string, stored_group>> load(std::vector<brook::error>* skipped = nullptr) const {
    std::map<std::string, stored_group> out;
    fetch_source& src = backend_.source();
    // Batches a topic or broker compression.type recompressed are read with the source's codecs.
    const auto codecs = src.codecs();
    batch_decompressor dec(codecs ? *codecs : compression_codecs{});
    const auto deadline = std::chrono::steady_clock::now() + load_wait;
    for (std::int32_t p = 0; p < partitions_; ++p) {
      const topic_partition tp{topic_name, partition_id(p)};
      BROOK_TRY_ASSIGN(partition_bounds bounds, committed_bounds(tp, deadline));
      offset pos = bounds.log_start;
      while (pos < bounds.high_watermark) {
        read_options ro;
        ro.max_offset = bounds.high_watermark;
        auto slice = src.fetch(tp, pos, ro);
        if (!slice && is_leader_change(slice.error())) {
          // The leader moved mid-replay: the next one has every record below the old high
          // watermark; go on from here once it is readable.
          BROOK_TRY_ASSIGN(bounds, committed_bounds(tp, deadline));
          continue;
        }
        if (!slice) return slice.error();
        if (slice->empty() && slice->next_offset() <= pos) break;
        result<void> bad = ok();
        auto r = slice->for_each_record(
            [&](const record_view& rv) {
              auto a = apply(out, rv);
              if (!a) {
                bad = make_error(errc::corrupt_message, "{}-{} offset {}: {}", topic_name, p, rv.offset(),
                                 a.error().message());
                if (!skipped) return false;
                skipped->push_back(std::move(bad.error()));
                bad = ok();
              }
              return true;
            },
            batch_check{}, &dec);
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

  offset_store(std::unique_ptr<coordinator_backend> owned, coordinator_backend& backend, std::int32_t partitions)
      : owned_(std::move(owned)), backend_(backend), partitions_(partitions) {}

  static result<std::unique_ptr<offset_store>> open_with(std::unique_ptr<coordinator_backend> owned,
                                                         coordinator_backend& backend, std::int32_t num_partitions) {
    if (num_partitions < 1)
      return make_error(errc::invalid_partitions, "offsets.topic.num.partitions {} must be at least 1", num_partitions);
    offsets_topic_spec spec;
    spec.partitions = num_partitions;
    BROOK_TRY_ASSIGN(const std::int32_t n, backend.open_offsets_topic(spec));
    return std::unique_ptr<offset_store>(new offset_store(std::move(owned), backend, n));
  }

  /// tp's bounds once its high watermark covers the leader's log end as it was first seen.
  /// Kafka's loader reads a new leader's log to its end; brook reads committed records only,
  /// so it waits until the followers have confirmed what the leader has (right after a
  /// failover the new leader's high watermark can trail its log end by a fetch). It also
  /// waits while the partition has no reachable leader. A log end below the one first seen
  /// (another leader, without the uncommitted tail) becomes the target. After load_wait:
  /// coordinator_load_in_progress.
  result<partition_bounds> committed_bounds(const topic_partition& tp,
                                            std::chrono::steady_clock::time_point deadline) const {
    fetch_source& src = backend_.source();
    std::optional<offset> target;
    for (;;) {
      const std::uint64_t seen = src.notifier().sequence();
      auto b = src.bounds(tp);
      if (!b && !is_leader_change(b.error())) return b.error();
      if (b) {
        if (!target || b->log_end < *target) target = b->log_end;
        if (b->high_watermark >= *target) return *b;
      }
      if (std::chrono::steady_clock::now() >= deadline)
        return make_error(errc::coordinator_load_in_progress, "{}-{}: not loaded after {} ms: {}", tp.topic,
                          tp.partition, load_wait.count(),
                          b ? fmt::format("the high watermark {} is below the log end {}", b->high_watermark, *target)
                            : b.error().to_string());
      src.notifier().wait(seen, deadline);
    }
  }

  /// Appends the batch to the group's partition and waits for the backend's acks=all.
  result<void> append(const std::string& group, record_batch_builder& b) {
    if (partitions_ == 0) return make_error(errc::coordinator_not_available, "{} does not exist", topic_name);
    struct outcome {
      std::mutex mu;
      std::condition_variable cv;
      std::optional<result<append_result>> r;
    };
    auto o = std::make_shared<outcome>();
    backend_.append_offsets(partition_id(partition_for(group)), b.finish(), [o](const result<append_result>& r) {
      {
        std::lock_guard l(o->mu);
        o->r = r;
      }
      o->cv.notify_all();
    });
    std::unique_lock l(o->mu);
    const auto limit = backend_.append_timeout() + append_margin;
    if (!o->cv.wait_for(l, limit, [&] { return o->r.has_value(); }))
      return make_error(errc::request_timed_out, "{}: no answer to an append within {} ms", topic_name, limit.count());
    if (!*o->r) return commit_error(o->r->error());
    return ok();
  }

  static error commit_error(const error& e) {
    auto as = [&](errc code) { return error(code, fmt::format("{}: {}", topic_name, e.to_string())); };
    if (e == errc::leader_not_available || e == errc::broker_not_available || e == errc::not_enough_replicas ||
        e == errc::not_enough_replicas_after_append || e == errc::unknown_topic_or_partition)
      return as(errc::coordinator_not_available);
    if (e == errc::not_leader_or_follower || e == errc::kafka_storage_error) return as(errc::not_coordinator);
    if (e == errc::record_too_large || e == errc::record_list_too_large) return as(errc::invalid_commit_offset_size);
    return e;
  }

  static result<void> apply(std::map<std::string, stored_group>& out, const record_view& rv) {
    if (rv.key().is_null()) return make_error(errc::corrupt_message, "record without a key");
    BROOK_TRY_ASSIGN(auto key, decode_offsets_topic_key(rv.key().span()));
    if (auto* ok_key = std::get_if<offset_commit_key>(&key)) {
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
    const auto& gk = std::get<group_metadata_key>(key);
    if (rv.value().is_null()) {
      auto it = out.find(gk.group);
      if (it != out.end()) {
        it->second.metadata.reset();
        if (it->second.offsets.empty()) out.erase(it);
      }
      return ok();
    }
    BROOK_TRY_ASSIGN(auto v, decode_group_metadata_value(rv.value().span()));
    out[gk.group].metadata = std::move(v);
    return ok();
  }

  std::unique_ptr<coordinator_backend> owned_;  // set when opened on a data_dir
  coordinator_backend& backend_;
  std::int32_t partitions_;
};

}  // namespace brook

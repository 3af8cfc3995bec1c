// What a group coordinator runs on (Kafka: the broker around its GroupCoordinator, whose
// ReplicaManager appends to and reads `__consumer_offsets` and whose metadata cache knows
// the topics):
//   - a fetch_source (client/fetch_source.hpp): partition counts and the metadata version
//     of the topics groups subscribe to, the notifier that wakes polling members, the
//     bounds of a partition (lag), and reads of `__consumer_offsets` to replay it;
//   - the internal topic itself: created when missing (compacted), appended to with
//     acks=all;
//   - the clock every group timeout runs on.
//
//   data_dir_backend  one data directory: appends complete at once, on the caller's thread;
//   cluster_backend   a replicated in-process cluster (replication/cluster.hpp): appends go
//                     to the partition's leader and complete when the ISR has them.
//
// Thread-safety: implementations must be thread-safe; data_dir_backend is.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include <brook/client/fetch_source.hpp>
#include <brook/core/clock.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/log_validator.hpp>
#include <brook/storage/topic_config.hpp>

namespace brook {

/// How `__consumer_offsets` is created when missing (Kafka's offsets.topic.* settings).
struct offsets_topic_spec {
  static constexpr const char* name = "__consumer_offsets";
  /// offsets.topic.num.partitions.
  std::int32_t partitions = 50;
  /// offsets.topic.segment.bytes. Default 100 MiB.
  std::int64_t segment_bytes = 100 * 1024 * 1024;

  /// The topic's configs: compacted, with the segment size above, and compression.type
  /// `producer`, so a broker-wide compression.type does not recompress the coordinator's
  /// batches (Kafka's GroupCoordinator.offsetsTopicConfigs).
  std::map<std::string, std::string> configs() const {
    return {{"cleanup.policy", "compact"},
            {"segment.bytes", std::to_string(segment_bytes)},
            {"compression.type", "producer"}};
  }
};

class coordinator_backend {
 public:
  virtual ~coordinator_backend() = default;
  /// Metadata, wake-ups and reads (see the header comment).
  virtual fetch_source& source() = 0;
  virtual std::shared_ptr<const brook::clock> clock() const = 0;
  /// A read-only backend (a tool on a live directory) neither creates nor appends.
  virtual bool read_only() const = 0;
  /// The partition count of `__consumer_offsets`, creating the topic as `spec` says when it
  /// is missing; 0 when it is missing and the backend is read-only. An existing topic keeps
  /// its count: the group-to-partition mapping depends on it, as in Kafka.
  virtual result<std::int32_t> open_offsets_topic(const offsets_topic_spec& spec) = 0;
  /// Appends one batch to partition `p` of `__consumer_offsets` with acks=all and calls
  /// `done` exactly once: maybe before returning, on this thread, maybe later on another;
  /// `done` must not take the caller's locks.
  virtual void append_offsets(partition_id p, std::span<std::byte> batch, append_callback done) = 0;
  /// How long append_offsets may take to call back (offsets.commit.timeout.ms).
  virtual std::chrono::milliseconds append_timeout() const = 0;
};

/// A data directory as the backend.
class data_dir_backend final : public coordinator_backend {
 public:
  explicit data_dir_backend(data_dir& dd) : dd_(dd), source_(dd) {}
  fetch_source& source() override { return source_; }
  std::shared_ptr<const brook::clock> clock() const override { return dd_.clock(); }
  bool read_only() const override { return dd_.read_only(); }
  result<std::int32_t> open_offsets_topic(const offsets_topic_spec& spec) override {
    auto count = dd_.partition_count(offsets_topic_spec::name);
    if (count || count.error() != errc::unknown_topic_or_partition) return count;
    if (dd_.read_only()) return 0;
    topic_config tc;
    tc.partitions = spec.partitions;
    tc.overrides = spec.configs();
    auto created = dd_.create_internal_topic(offsets_topic_spec::name, std::move(tc));
    if (!created && created.error() == errc::topic_already_exists)  // another coordinator was first
      return dd_.partition_count(offsets_topic_spec::name);
    if (!created) return created.error();
    return spec.partitions;
  }
  void append_offsets(partition_id p, std::span<std::byte> batch, append_callback done) override {
    auto part = dd_.get_partition(offsets_topic_spec::name, p);
    if (!part) {
      done(part.error());
      return;
    }
    done((*part)->append(batch));
  }
  std::chrono::milliseconds append_timeout() const override { return std::chrono::milliseconds(0); }

 private:
  data_dir& dd_;
  data_dir_source source_;
};

}  // namespace brook

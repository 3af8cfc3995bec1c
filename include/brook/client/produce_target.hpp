// Where a producer's batches go (Kafka: the brokers behind a KafkaProducer's sender).
//
// A producer (producer.hpp) builds batches and hands each closed batch to a produce_target:
//   data_dir_target  one data directory, one replica: the batch is appended to the partition
//                    and completes at once (acks=0/1/all are the same with one replica);
//   cluster_target   a replicated in-process cluster (replication/cluster.hpp): the batch goes
//                    to the partition's leader and completes as acks and min.insync.replicas
//                    say, possibly later and on another thread.
// Both refuse Kafka's internal topics (__consumer_offsets, ...) with invalid_topic, as
// Kafka refuses client produce requests to them.
//
// Thread-safety: implementations must be thread-safe; data_dir_target is.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <span>
#include <string>

#include <brook/compression/compression_codec.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/built_batch.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/topic_config.hpp>

namespace brook {

class produce_target {
 public:
  virtual ~produce_target() = default;
  /// Changes whenever partition counts may have changed.
  virtual std::uint64_t metadata_version() const = 0;
  /// Partitions of `topic`. Errors: unknown_topic_or_partition.
  virtual result<std::int32_t> partition_count(const std::string& topic) const = 0;
  /// The time records are stamped with when the sender gives none.
  virtual timestamp_ms now_ms() const = 0;
  /// Appends one batch (offsets are assigned by the log; the bytes may be rewritten) and
  /// calls `done` exactly once, on this thread or another, never under a lock of the caller.
  virtual void produce(const std::string& topic, partition_id p, std::span<std::byte> batch, acks_mode acks,
                       std::chrono::milliseconds request_timeout, append_callback done) = 0;
  /// The same for a batch record_batch_builder finished in this process (the producer's
  /// uncompressed batches): a target whose log trusts such batches appends it without
  /// walking its records again. By default, produce(topic, p, batch.bytes(), ...).
  virtual void produce_built(const std::string& topic, partition_id p, const built_batch& batch, acks_mode acks,
                             std::chrono::milliseconds request_timeout, append_callback done) {
    produce(topic, p, batch.bytes(), acks, request_timeout, std::move(done));
  }
  /// The codecs a producer compresses with unless it names its own (a data directory's
  /// log_config::codecs). Null: `none` only.
  virtual std::shared_ptr<const compression_codecs> codecs() const { return nullptr; }
  /// Whether produce() appends and calls `done` before it returns, on the caller's thread
  /// (a log in this process): a producer may then append from the thread calling send()
  /// (producer_config::append_in_caller). Default false.
  virtual bool completes_in_caller() const noexcept { return false; }
};

/// A data directory as the target: appends complete at once.
class data_dir_target final : public produce_target {
 public:
  /// Holds the directory's anchor, not the directory: once the data_dir is destroyed,
  /// produce() reports errc::closed.
  explicit data_dir_target(data_dir& dd) : anchor_(dd.anchor()), clock_(dd.clock()), codecs_(dd.codecs()) {}
  std::shared_ptr<const compression_codecs> codecs() const override { return codecs_; }
  std::uint64_t metadata_version() const override { return anchor_->metadata_version(); }
  result<std::int32_t> partition_count(const std::string& topic) const override {
    return anchor_->partition_count(topic);
  }
  timestamp_ms now_ms() const override { return clock_->now_ms(); }
  bool completes_in_caller() const noexcept override { return true; }
  void produce(const std::string& topic, partition_id p, std::span<std::byte> batch, acks_mode,
               std::chrono::milliseconds, append_callback done) override {
    append_to(topic, p, batch, done);
  }
  void produce_built(const std::string& topic, partition_id p, const built_batch& batch, acks_mode,
                     std::chrono::milliseconds, append_callback done) override {
    append_to(topic, p, batch, done);
  }

 private:
  template <typename Batch>
  void append_to(const std::string& topic, partition_id p, const Batch& batch, const append_callback& done) {
    if (is_internal_topic(topic)) {  // Kafka's ReplicaManager refuses client appends to them
      done(make_error(errc::invalid_topic, "cannot append to internal topic {}", topic));
      return;
    }
    auto part = anchor_->get_partition(topic, p);
    if (!part) {
      done(part.error());
      return;
    }
    done((*part)->append(batch));
  }

  std::shared_ptr<data_dir_anchor> anchor_;
  std::shared_ptr<const brook::clock> clock_;
  std::shared_ptr<const compression_codecs> codecs_;
};

}  // namespace brook

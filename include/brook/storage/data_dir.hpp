// A data directory: Kafka's log dir, holding one `<topic>-<partition>` directory per
// partition (storage/partition_log.hpp, with the topic's id in its partition.metadata:
// storage/partition_metadata.hpp), plus:
//
//   .lock           flock(2)ed while a process has the directory open for writing
//   topic-configs   partition counts and per-topic overrides (storage/topic_config.hpp)
//
// It creates, lists, describes, grows and deletes topics, hands out partitions to
// producers and consumers, and runs housekeeping (retention, flush.ms, segment.ms, the log
// cleaner for cleanup.policy=compact) from tick(): call it yourself (deterministic tests
// drive it with a testing::manual_clock) or let start_housekeeping() run it on a thread the data_dir
// owns.
//
// Every topic has a topic id (Kafka's, KIP-516): a random uuid drawn when the topic is
// created and written into each of its partition directories, so it survives restarts and a
// topic deleted and created again has a new one. Opening a partition directory without the
// file (brook before topic ids, Kafka before 2.8) writes the topic's id into it: the id its
// other partitions hold, or a new one. Partitions of one topic that hold different ids fail
// the open (inconsistent_topic_id); a malformed file fails it too (kafka_storage_error):
// neither is ever replaced.
//
// A second process that opens the same directory for writing gets log_dir_locked and
// changes nothing. A read-only open takes no lock and writes nothing: tools use it on a
// live directory.
//
// Thread-safety: all members are thread-safe. Topic changes take an exclusive lock;
// looking up a partition takes a shared one. Partitions are shared_ptrs: a deleted
// topic's partitions stay readable for whoever still holds them.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/core/clock.hpp>
#include <brook/core/linkage.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/storage/detail/lock_holder.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/partition.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/storage/partition_metadata.hpp>
#include <brook/storage/topic_config.hpp>

namespace brook {

struct data_dir_options {
  /// Defaults for every topic's log; topic_config overrides apply on top.
  log_config defaults{};
  /// Open without the lock and without writing anything (tools on a live directory).
  bool read_only = false;
  /// What appends, high-watermark moves and topic changes bump. A cluster gives all its
  /// brokers one, so a consumer of the cluster waits on one notifier. Null: the directory
  /// makes its own.
  std::shared_ptr<brook::notifier> notifier{};
};

struct partition_description {
  partition_id id{0};
  offset log_start{0};
  offset log_end{0};
  offset high_watermark{0};
  std::uint64_t size_bytes = 0;
  std::size_t segments = 0;
};

struct topic_description {
  std::string name;
  /// The topic's id; zero only in a read-only open of a directory whose partitions hold
  /// none yet (a read-only open writes nothing, so it invents none).
  uuid topic_id{};
  topic_config config;
  std::vector<partition_description> partitions;
};

class data_dir;

/// What outlives a data_dir for the clients built on it (data_dir_source, data_dir_target):
/// the directory's address, which its destructor clears under `mu` (waiting for calls in
/// flight), and its notifier, which a blocked poll still waits on. The members answer for
/// the directory while it lives and report errc::closed once it is closed or destroyed, so
/// destroying a data_dir while a consumer polls is safe.
/// Thread-safety: thread-safe; `dir` only under `mu` (shared to use it, exclusive to clear it);
/// `version` is atomic.
struct data_dir_anchor {
  mutable std::shared_mutex mu;
  data_dir* dir = nullptr;
  std::shared_ptr<brook::notifier> notify;
  fs::path path;
  /// data_dir::metadata_version()'s counter, here so that it is read without `mu` (a producer
  /// reads it on every send, and a shared lock is a write to a line every client shares).
  /// The destructor bumps it once more after clearing `dir`: a client that compares it with
  /// the version of its cached answers asks again, and learns that the directory is gone.
  std::atomic<std::uint64_t> version{0};

  /// data_dir::metadata_version(); it moves once more when the directory is destroyed.
  std::uint64_t metadata_version() const noexcept { return version.load(std::memory_order_acquire); }
  result<std::int32_t> partition_count(const std::string& topic) const;
  /// data_dir::get_partition(), or closed once close() has begun: a poll woken by close()
  /// learns why, instead of finding nothing until its timeout.
  result<std::shared_ptr<partition>> get_partition(const std::string& topic, partition_id p) const;

 private:
  error gone() const { return make_error(errc::closed, "{}: data directory is closed", path.string()); }
};

class data_dir {
 public:
  static constexpr const char* lock_file = ".lock";
  static constexpr const char* configs_file = "topic-configs";

  data_dir(const data_dir&) = delete;
  data_dir& operator=(const data_dir&) = delete;
  ~data_dir();

  /// Opens (creating when writable) the directory, takes its lock, and opens every partition.
  static result<std::unique_ptr<data_dir>> open(const fs::path& dir, data_dir_options opts = {});

  const fs::path& path() const noexcept { return dir_; }
  bool read_only() const noexcept { return opts_.read_only; }
  /// close() has begun: consumers reading through a data_dir_source get errc::closed.
  bool closed() const {
    std::shared_lock lk(mu_);
    return closed_;
  }
  const std::shared_ptr<const brook::clock>& clock() const noexcept { return opts_.defaults.clock; }
  /// The codecs its compressed batches are read with (data_dir_options::defaults.codecs;
  /// null = `none` only).
  const std::shared_ptr<const compression_codecs>& codecs() const noexcept { return opts_.defaults.codecs; }
  /// The file system its files go through (data_dir_options::defaults.files).
  file_system& files() const noexcept { return *opts_.defaults.files; }
  /// Bumped on every append that moves a high watermark, and on topic changes (shared
  /// when data_dir_options::notifier was given).
  brook::notifier& notifier() noexcept { return *notify_; }
  /// What producers and consumers built on this directory hold instead of a reference: it
  /// outlives the directory, and tells them it is gone (data_dir_anchor).
  const std::shared_ptr<data_dir_anchor>& anchor() const noexcept { return anchor_; }
  /// Bumped on every topic change (create, grow, delete): clients re-read metadata when it moves.
  std::uint64_t metadata_version() const noexcept { return anchor_->metadata_version(); }

  // ---------------------------------------------------------------- topics

  /// Errors: invalid_topic (also for Kafka's internal topic names, which only brook
  /// creates: create_internal_topic), invalid_partitions, invalid_config,
  /// topic_already_exists, kafka_storage_error (an I/O error: the topic is not in this
  /// data_dir, and a reopen finds it whole, with all its partitions and configs, or not
  /// at all; a later create_topic of the name is allowed).
  /// `topic_id`: the id to give the topic (a replica takes its controller's); zero (the
  /// default) draws a new random one. REQUIRES: topic_id is not reserved (uuid::is_reserved)
  /// unless zero.
  result<void> create_topic(const std::string& name, topic_config tc = {}, const uuid& topic_id = {});
  /// create_topic for one of Kafka's internal topics (is_internal_topic), for the group
  /// coordinator and replicas. REQUIRES: is_internal_topic(name).
  result<void> create_internal_topic(const std::string& name, topic_config tc, const uuid& topic_id = {});

  std::vector<std::string> list_topics() const;

  result<topic_description> describe_topic(const std::string& name) const;

  /// Grows a topic to `total` partitions (Kafka's CreatePartitions). invalid_partitions if
  /// total is not larger than the current count. On an I/O error (kafka_storage_error) the
  /// topic keeps its count here, and a reopen finds the old count or `total`, never between.
  result<void> create_partitions(const std::string& name, std::int32_t total);

  /// Closes and removes every partition of the topic. Holders of its partitions keep
  /// reading what they have; new lookups get unknown_topic_or_partition. On an I/O error
  /// (kafka_storage_error) the topic is gone from this data_dir all the same, and a reopen
  /// finds it whole or finishes deleting it.
  result<void> delete_topic(const std::string& name);

  result<std::int32_t> partition_count(const std::string& name) const;

  /// The topic's id (its partitions' partition.metadata). unknown_topic_or_partition when
  /// there is no such topic; zero as in topic_description::topic_id.
  result<uuid> topic_id(const std::string& name) const;

  /// The name of the topic whose id is `id`. unknown_topic_id when no topic has it (the
  /// zero id included).
  result<std::string> topic_name(const uuid& id) const;

  /// The partition, shared. unknown_topic_or_partition when there is no such partition.
  result<std::shared_ptr<partition>> get_partition(const std::string& name, partition_id p) const;

  // ---------------------------------------------------------------- housekeeping

  /// One housekeeping pass over every partition: retention, flush.ms, segment.ms, and the
  /// log cleaner for compacted partitions whose dirty ratio (below the high watermark) has
  /// reached min.cleanable.dirty.ratio.
  /// Returns the first error met (the pass still visits every partition).
  result<void> tick();

  /// Runs tick() every `interval` on a thread owned by this data_dir until
  /// stop_housekeeping() or close(). The last error a pass met is kept for inspection.
  void start_housekeeping(std::chrono::milliseconds interval);
  void stop_housekeeping();
  /// The last error a background housekeeping pass met, if any.
  std::optional<error> last_housekeeping_error() const;

  /// Stops housekeeping, closes every partition (partition_log::close: flush, checkpoints),
  /// releases the lock. A partition whose close fails is closed all the same; the first
  /// error is returned.
  result<void> close();

 private:
  struct topic_state {
    topic_config config;
    brook::log_config log_config;
    std::vector<std::shared_ptr<partition>> partitions;
    uuid topic_id{};
  };

  data_dir(fs::path dir, data_dir_options opts);

  /// Marks a topic whose deletion (or creation) is under way in the topic-configs file: the
  /// next open removes its directories.
  static constexpr const char* deleting_key = "brook.deleting";
  /// Marks a topic whose growth is under way in the topic-configs file: the next open
  /// removes its directories past its partition count.
  static constexpr const char* growing_key = "brook.growing";

  /// Runs a cleaner pass on a compacted partition whose dirty ratio calls for one.
  static result<void> maybe_compact(partition& p);

  /// create_topic without the internal-name check.
  result<void> create_any_topic(const std::string& name, topic_config tc, const uuid& topic_id);
  /// Closes the partitions of a topic change that failed and removes the topic's
  /// directories from partition `keep` on; once they are gone the change is finished.
  void undo_partitions(const std::string& name, std::int32_t keep,
                       const std::vector<std::shared_ptr<partition>>& parts);
  /// Removes what an earlier failed change of the topic left (unfinished_), if anything.
  result<void> finish_unfinished(const std::string& name);

  /// Removes every `<name>-<n>` directory of a topic with n >= from.
  result<void> remove_partition_dirs(const std::string& name, std::int32_t from = 0);

  static brook::error unknown_topic(const std::string& name);
  result<void> writable() const;
  void bump_metadata();

  fs::path partition_dir(const std::string& topic, partition_id p) const {
    return dir_ / fmt::format("{}-{}", topic, p.value());
  }
  result<std::shared_ptr<partition>> open_partition(const std::string& topic, partition_id p, const log_config& cfg);
  /// open_partition for a partition the topic does not have yet: its directory is created
  /// and gets the topic's id. On an error the log is closed; the caller removes the directory.
  result<std::shared_ptr<partition>> create_partition(const std::string& topic, partition_id p, const log_config& cfg,
                                                      const uuid& topic_id);
  /// A new random topic id (Uuid.randomUuid: never reserved, never text starting with '-').
  /// REQUIRES: mu_ held exclusively, or the directory still opening.
  uuid new_topic_id() { return uuid::random(id_rng_); }
  /// The id the opened partitions of `topic` hold, written into those without one (a new
  /// id if none has one; nothing written and zero returned by a read-only open).
  /// Errors: inconsistent_topic_id, kafka_storage_error.
  result<uuid> load_topic_id(const std::string& topic, std::size_t partitions);

  result<void> save_configs_locked();

  /// `<topic>-<n>` split at the last '-', if n is a partition number.
  static std::optional<std::pair<std::string, std::int32_t>> parse_partition_dir(const std::string& name);

  /// Creates a missing directory (writable opens) and takes its .lock.
  result<void> prepare_directory();

  result<void> load();

  const fs::path dir_;
  const data_dir_options opts_;
  std::shared_ptr<brook::notifier> notify_;
  std::shared_ptr<data_dir_anchor> anchor_;
  file_handle lock_;
  mutable std::shared_mutex mu_;  // guards topics_, unfinished_ and closed_
  std::map<std::string, topic_state> topics_;
  // Topic changes that failed part-way and may have left directories: topic -> partitions to
  // keep (0: the whole topic goes). Every save of topic-configs records them (deleting_key,
  // growing_key), so that the next open removes what they left, never adopts it.
  std::map<std::string, std::int32_t> unfinished_;
  bool closed_ = false;
  std::mt19937_64 id_rng_;  // new_topic_id; under mu_ (exclusive), seeded from std::random_device

  mutable std::mutex hk_mu_;
  std::condition_variable hk_cv_;
  std::thread hk_thread_;
  bool hk_stop_ = false;
  std::optional<error> hk_last_error_;
};

inline result<std::int32_t> data_dir_anchor::partition_count(const std::string& topic) const {
  std::shared_lock l(mu);
  if (!dir) return gone();
  return dir->partition_count(topic);
}

inline result<std::shared_ptr<partition>> data_dir_anchor::get_partition(const std::string& topic,
                                                                         partition_id p) const {
  std::shared_lock l(mu);
  if (!dir || dir->closed()) return gone();
  return dir->get_partition(topic, p);
}

}  // namespace brook

#if !defined(BROOK_SEPARATE_COMPILATION)
#include <brook/storage/impl/data_dir.ipp>
#endif

// A data directory: Kafka's log dir, holding one `<topic>-<partition>` directory per
// partition (storage/partition_log.hpp), plus:
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
// A second process that opens the same directory for writing gets log_dir_locked and
// changes nothing. A read-only open takes no lock and writes nothing: tools use it on a
// live directory.
//
// Thread-safety: all members are thread-safe. Topic changes take an exclusive lock;
// looking up a partition takes a shared one. Partitions are shared_ptrs: a deleted
// topic's partitions stay readable for whoever still holds them.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/core/clock.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/partition.hpp>
#include <brook/storage/partition_log.hpp>
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
  topic_config config;
  std::vector<partition_description> partitions;
};

class data_dir {
 public:
  static constexpr const char* lock_file = ".lock";
  static constexpr const char* configs_file = "topic-configs";

  data_dir(const data_dir&) = delete;
  data_dir& operator=(const data_dir&) = delete;
  ~data_dir() { (void)close(); }

  /// Opens (creating when writable) the directory, takes its lock, and opens every partition.
  static result<std::unique_ptr<data_dir>> open(const fs::path& dir, data_dir_options opts = {}) {
    if (!opts.defaults.clock) opts.defaults.clock = make_system_clock();
    if (!opts.defaults.files) opts.defaults.files = posix_file_system::shared();
    BROOK_TRY(opts.defaults.validate());
    std::unique_ptr<data_dir> d(new data_dir(dir, std::move(opts)));
    BROOK_TRY(d->load());
    return d;
  }

  const fs::path& path() const noexcept { return dir_; }
  bool read_only() const noexcept { return opts_.read_only; }
  const std::shared_ptr<const brook::clock>& clock() const noexcept { return opts_.defaults.clock; }
  /// The file system its files go through (data_dir_options::defaults.files).
  file_system& files() const noexcept { return *opts_.defaults.files; }
  /// Bumped on every append that moves a high watermark, and on topic changes (shared
  /// when data_dir_options::notifier was given).
  brook::notifier& notifier() noexcept { return *notify_; }
  /// Bumped on every topic change (create, grow, delete): clients re-read metadata when it moves.
  std::uint64_t metadata_version() const noexcept { return meta_version_.load(std::memory_order_acquire); }

  // ---------------------------------------------------------------- topics

  /// Errors: invalid_topic, invalid_partitions, invalid_config, topic_already_exists.
  result<void> create_topic(const std::string& name, topic_config tc = {}) {
    BROOK_TRY(validate_topic_name(name));
    if (tc.partitions < 1)
      return make_error(errc::invalid_partitions, "topic '{}': partition count {} must be at least 1", name,
                        tc.partitions);
    BROOK_TRY_ASSIGN(auto cfg, tc.apply(opts_.defaults));
    std::unique_lock lk(mu_);
    BROOK_TRY(writable());
    if (topics_.count(name)) return make_error(errc::topic_already_exists, "topic '{}' already exists", name);
    // Partition directories of another topic with a '-' could collide only with a topic of the
    // same name, which is refused above.
    topic_state ts;
    ts.config = std::move(tc);
    ts.log_config = cfg;
    for (std::int32_t p = 0; p < ts.config.partitions; ++p) {
      auto part = open_partition(name, partition_id(p), ts.log_config);
      if (!part) {
        remove_partitions(ts.partitions);  // leave no directory behind to be adopted later
        return part.error();
      }
      ts.partitions.push_back(std::move(*part));
    }
    topics_.emplace(name, std::move(ts));
    if (auto r = save_configs_locked(); !r) {
      remove_partitions(topics_[name].partitions);
      topics_.erase(name);
      return r;
    }
    bump_metadata();
    return ok();
  }

  std::vector<std::string> list_topics() const {
    std::shared_lock lk(mu_);
    std::vector<std::string> out;
    for (const auto& [n, _] : topics_) out.push_back(n);
    return out;
  }

  result<topic_description> describe_topic(const std::string& name) const {
    std::shared_lock lk(mu_);
    auto it = topics_.find(name);
    if (it == topics_.end()) return unknown_topic(name);
    topic_description d;
    d.name = name;
    d.config = it->second.config;
    for (const auto& p : it->second.partitions) {
      partition_description pd;
      pd.id = p->id();
      pd.log_start = p->log_start_offset();
      pd.log_end = p->log_end_offset();
      pd.high_watermark = p->high_watermark();
      pd.size_bytes = p->log().size_bytes();
      pd.segments = p->log().segment_count();
      d.partitions.push_back(pd);
    }
    return d;
  }

  /// Grows a topic to `total` partitions (Kafka's CreatePartitions). invalid_partitions if
  /// total is not larger than the current count.
  result<void> create_partitions(const std::string& name, std::int32_t total) {
    std::unique_lock lk(mu_);
    BROOK_TRY(writable());
    auto it = topics_.find(name);
    if (it == topics_.end()) return unknown_topic(name);
    auto& ts = it->second;
    if (total <= ts.config.partitions)
      return make_error(errc::invalid_partitions, "topic '{}' has {} partitions; the new count {} must be larger", name,
                        ts.config.partitions, total);
    std::vector<std::shared_ptr<partition>> parts = ts.partitions;
    for (std::int32_t p = ts.config.partitions; p < total; ++p) {
      BROOK_TRY_ASSIGN(auto part, open_partition(name, partition_id(p), ts.log_config));
      parts.push_back(std::move(part));
    }
    ts.partitions = std::move(parts);
    ts.config.partitions = total;
    BROOK_TRY(save_configs_locked());
    bump_metadata();
    return ok();
  }

  /// Closes and removes every partition of the topic. Holders of its partitions keep
  /// reading what they have; new lookups get unknown_topic_or_partition.
  result<void> delete_topic(const std::string& name) {
    std::unique_lock lk(mu_);
    BROOK_TRY(writable());
    auto it = topics_.find(name);
    if (it == topics_.end()) return unknown_topic(name);
    // Record the intent first: a crash part-way leaves a topic marked for deletion, which the
    // next open finishes deleting, never orphan directories that would be adopted as a topic.
    it->second.config.overrides[deleting_key] = "true";
    BROOK_TRY(save_configs_locked());
    auto parts = std::move(it->second.partitions);
    topics_.erase(it);
    for (const auto& p : parts) BROOK_TRY(p->log().close());
    BROOK_TRY(remove_partition_dirs(name));
    BROOK_TRY(save_configs_locked());
    bump_metadata();
    return ok();
  }

  result<std::int32_t> partition_count(const std::string& name) const {
    std::shared_lock lk(mu_);
    auto it = topics_.find(name);
    if (it == topics_.end()) return unknown_topic(name);
    return it->second.config.partitions;
  }

  /// The partition, shared. unknown_topic_or_partition when there is no such partition.
  result<std::shared_ptr<partition>> get_partition(const std::string& name, partition_id p) const {
    std::shared_lock lk(mu_);
    auto it = topics_.find(name);
    if (it == topics_.end()) return unknown_topic(name);
    if (p.value() < 0 || p.value() >= static_cast<std::int32_t>(it->second.partitions.size()))
      return make_error(errc::unknown_topic_or_partition, "topic '{}' has no partition {}", name, p);
    return it->second.partitions[static_cast<std::size_t>(p.value())];
  }

  // ---------------------------------------------------------------- housekeeping

  /// One housekeeping pass over every partition: retention, flush.ms, segment.ms, and the
  /// log cleaner for compacted partitions whose dirty ratio (below the high watermark) has
  /// reached min.cleanable.dirty.ratio.
  /// Returns the first error met (the pass still visits every partition).
  result<void> tick() {
    if (opts_.read_only) return ok();
    std::vector<std::shared_ptr<partition>> all;
    {
      std::shared_lock lk(mu_);
      for (const auto& [_, ts] : topics_) all.insert(all.end(), ts.partitions.begin(), ts.partitions.end());
    }
    result<void> first = ok();
    for (const auto& p : all) {
      auto r = p->log().enforce_retention();
      if (!r && first) first = r.error();
      auto t = p->log().tick();
      if (!t && first) first = t.error();
      auto c = maybe_compact(*p);
      if (!c && first) first = c.error();
    }
    return first;
  }

  /// Runs tick() every `interval` on a thread owned by this data_dir until
  /// stop_housekeeping() or close(). The last error a pass met is kept for inspection.
  void start_housekeeping(std::chrono::milliseconds interval) {
    stop_housekeeping();
    std::lock_guard lk(hk_mu_);
    hk_stop_ = false;
    hk_thread_ = std::thread([this, interval] {
      std::unique_lock l(hk_mu_);
      while (!hk_stop_) {
        if (hk_cv_.wait_for(l, interval, [&] { return hk_stop_; })) break;
        l.unlock();
        auto r = tick();
        l.lock();
        if (!r) hk_last_error_ = r.error();
      }
    });
  }
  void stop_housekeeping() {
    {
      std::lock_guard lk(hk_mu_);
      hk_stop_ = true;
    }
    hk_cv_.notify_all();
    if (hk_thread_.joinable()) hk_thread_.join();
  }
  /// The last error a background housekeeping pass met, if any.
  std::optional<error> last_housekeeping_error() const {
    std::lock_guard lk(hk_mu_);
    return hk_last_error_;
  }

  /// Stops housekeeping, closes every partition (partition_log::close: flush, checkpoints),
  /// releases the lock. A partition whose close fails is closed all the same; the first
  /// error is returned.
  result<void> close() {
    stop_housekeeping();
    std::unique_lock lk(mu_);
    if (closed_) return ok();
    closed_ = true;
    result<void> first = ok();
    for (auto& [_, ts] : topics_)
      for (auto& p : ts.partitions)
        if (auto r = p->log().close(); !r && first) first = r.error();
    lock_.reset();
    notify_->notify();
    return first;
  }

 private:
  struct topic_state {
    topic_config config;
    brook::log_config log_config;
    std::vector<std::shared_ptr<partition>> partitions;
  };

  data_dir(fs::path dir, data_dir_options opts)
      : dir_(std::move(dir)),
        opts_(std::move(opts)),
        notify_(opts_.notifier ? opts_.notifier : std::make_shared<brook::notifier>()) {}

  /// Marks a topic whose deletion is under way in the topic-configs file.
  static constexpr const char* deleting_key = "brook.deleting";

  /// Runs a cleaner pass on a compacted partition whose dirty ratio calls for one.
  static result<void> maybe_compact(partition& p) {
    const log_config& cfg = p.log().config();
    if (!cfg.compacts()) return ok();
    compact_options co;
    co.upper_bound = p.high_watermark();
    BROOK_TRY_ASSIGN(auto info, p.log().cleanable(co.upper_bound));
    if (info.dirty_bytes == 0 || info.dirty_ratio() < cfg.min_cleanable_dirty_ratio) return ok();
    BROOK_TRY(p.log().compact(co));
    return ok();
  }

  /// Closes and removes partitions created by a create_topic that then failed.
  void remove_partitions(const std::vector<std::shared_ptr<partition>>& parts) {
    for (const auto& p : parts) {
      (void)p->log().close();
      (void)files().remove_all(p->log().dir());
    }
  }

  /// Removes every `<name>-<n>` directory of a topic.
  result<void> remove_partition_dirs(const std::string& name) {
    BROOK_TRY_ASSIGN(const auto entries, files().list(dir_));
    for (const auto& de : entries) {
      auto tp = parse_partition_dir(de.path.filename().string());
      if (de.kind == file_kind::directory && tp && tp->first == name) BROOK_TRY(files().remove_all(de.path));
    }
    return files().sync_directory(dir_);
  }

  static brook::error unknown_topic(const std::string& name) {
    return make_error(errc::unknown_topic_or_partition, "unknown topic '{}'", name);
  }
  result<void> writable() const {
    if (closed_) return make_error(errc::closed, "{}: data directory is closed", dir_.string());
    if (opts_.read_only)
      return make_error(errc::invalid_request, "{}: data directory was opened read-only", dir_.string());
    return ok();
  }
  void bump_metadata() {
    meta_version_.fetch_add(1, std::memory_order_acq_rel);
    notify_->notify();
  }

  result<std::shared_ptr<partition>> open_partition(const std::string& topic, partition_id p, const log_config& cfg) {
    log_open_options lo;
    lo.read_only = opts_.read_only;
    BROOK_TRY_ASSIGN(auto log, partition_log::open(dir_ / fmt::format("{}-{}", topic, p.value()), cfg, lo));
    return std::make_shared<partition>(topic, p, std::move(log), notify_);
  }

  result<void> save_configs_locked() {
    std::map<std::string, topic_config> all;
    for (const auto& [n, ts] : topics_) all[n] = ts.config;
    return replace_file(files(), dir_ / configs_file, detail::format_topic_configs(all));
  }

  /// `<topic>-<n>` split at the last '-', if n is a partition number.
  static std::optional<std::pair<std::string, std::int32_t>> parse_partition_dir(const std::string& name) {
    auto dash = name.rfind('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 >= name.size() || name.size() - dash - 1 > 9)
      return std::nullopt;
    if (name.find_first_not_of("0123456789", dash + 1) != std::string::npos) return std::nullopt;
    return std::make_pair(name.substr(0, dash), std::stoi(name.substr(dash + 1)));
  }

  /// Creates a missing directory (writable opens) and takes its .lock.
  result<void> prepare_directory() {
    const file_kind k = files().kind(dir_).value_or(file_kind::none);
    if (k == file_kind::none) {
      if (opts_.read_only) return make_error(errc::log_dir_not_found, "{}: no such data directory", dir_.string());
      BROOK_TRY(files().create_directories(dir_));
    } else if (k != file_kind::directory) {
      return make_error(errc::kafka_storage_error, "{}: not a directory", dir_.string());
    }
    if (opts_.read_only) return ok();
    BROOK_TRY_ASSIGN(file_handle f, file_handle::open(files(), dir_ / lock_file, O_RDWR | O_CREAT));
    BROOK_TRY_ASSIGN(const bool locked, f.try_lock());
    if (!locked)
      return make_error(errc::log_dir_locked, "{}: the data directory is in use by another process (its .lock is held)",
                        dir_.string());
    lock_ = std::move(f);
    return ok();
  }

  result<void> load() {
    BROOK_TRY(prepare_directory());
    // Topic configs.
    std::map<std::string, topic_config> configs;
    fs::path cfgp = dir_ / configs_file;
    if (files().exists(cfgp).value_or(false)) {
      BROOK_TRY_ASSIGN(const std::string text, read_small_file(files(), cfgp));
      BROOK_TRY_ASSIGN(configs, detail::parse_topic_configs(text, cfgp.string()));
    }

    // Partition directories: every one must belong to a topic; topics found only on disk
    // (a copied Kafka log dir) are adopted with default settings.
    std::map<std::string, std::int32_t> seen;  // topic -> highest partition + 1
    BROOK_TRY_ASSIGN(const auto entries, files().list(dir_));
    for (const auto& de : entries) {
      std::string name = de.path.filename().string();
      if (de.kind != file_kind::directory) continue;               // .lock, topic-configs, Kafka's checkpoint files
      if (name.size() > 7 && name.ends_with("-delete")) continue;  // Kafka's pending deletions
      auto tp = parse_partition_dir(name);
      if (!tp || !validate_topic_name(tp->first))
        return make_error(errc::kafka_storage_error, "{}: directory '{}' is not a <topic>-<partition> directory",
                          dir_.string(), name);
      seen[tp->first] = std::max(seen[tp->first], tp->second + 1);
    }
    bool adopted = false;
    for (const auto& [t, n] : seen) {
      auto& tc = configs[t];
      if (tc.partitions < n) {
        tc.partitions = n;
        adopted = true;
      }
    }
    bool finished_deletes = false;
    for (auto it = configs.begin(); it != configs.end();) {
      if (it->second.overrides.count(deleting_key)) {
        if (!opts_.read_only) BROOK_TRY(remove_partition_dirs(it->first));
        it = configs.erase(it);
        finished_deletes = true;
      } else {
        ++it;
      }
    }
    for (auto& [name, tc] : configs) {
      auto cfg = tc.apply(opts_.defaults);
      if (!cfg)
        return make_error(errc::invalid_config, "{}: topic '{}': {}", cfgp.string(), name, cfg.error().message());
      topic_state ts;
      ts.config = tc;
      ts.log_config = *cfg;
      for (std::int32_t p = 0; p < tc.partitions; ++p) {
        fs::path pd = dir_ / fmt::format("{}-{}", name, p);
        if (opts_.read_only && !files().exists(pd).value_or(false)) {
          // A read-only view of a topic the owner is still creating: show the partitions
          // that exist so far (partition n is always at index n).
          ts.config.partitions = p;
          break;
        }
        BROOK_TRY_ASSIGN(auto part, open_partition(name, partition_id(p), ts.log_config));
        ts.partitions.push_back(std::move(part));
      }
      topics_.emplace(name, std::move(ts));
    }
    if ((adopted || finished_deletes) && !opts_.read_only) BROOK_TRY(save_configs_locked());
    return ok();
  }

  const fs::path dir_;
  const data_dir_options opts_;
  std::shared_ptr<brook::notifier> notify_;
  file_handle lock_;
  mutable std::shared_mutex mu_;  // guards topics_ and closed_
  std::map<std::string, topic_state> topics_;
  bool closed_ = false;
  std::atomic<std::uint64_t> meta_version_{0};

  mutable std::mutex hk_mu_;
  std::condition_variable hk_cv_;
  std::thread hk_thread_;
  bool hk_stop_ = false;
  std::optional<error> hk_last_error_;
};

}  // namespace brook

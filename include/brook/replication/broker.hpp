// A broker: one node of an in-process cluster (cluster.hpp). It owns a data directory
// (data_dir.hpp) and, for every partition the controller placed on it, a partition_replica
// (partition_replica.hpp) that it makes leader or follower as the cluster image says.
//
//   <broker dir>/
//     topic-configs, .lock                         the data directory's (data_dir.hpp)
//     <topic>-<p>/                                 every partition of a topic with a replica here
//       *.log *.index *.timeindex, checkpoints     the partition log's (partition_log.hpp)
//       leader-epoch-checkpoint                    leader_epoch_cache.hpp
//       replication-offset-checkpoint              the high watermark, Kafka's offset checkpoint
//                                                  format with one `topic partition hw` entry
//
// As leader it takes produce requests (acks 0/1/all, with min.insync.replicas checked before
// the append and again when acks=all completes: Kafka's DelayedProduce), answers followers'
// fetches and OffsetsForLeaderEpoch, and proposes ISR changes. As follower it is driven by a
// replica_fetcher (replica_fetcher.hpp). The high watermark is checkpointed every
// replica.high.watermark.checkpoint.interval.ms (5000) by tick() and on close(); on open each
// partition's high watermark starts from that checkpoint (never above its log end), so a
// restarted broker exposes nothing its previous life had not committed.
//
// brook choices: the data directory holds every partition of a topic that has any replica
// here (data_dir's topics are dense); partitions without a replica here stay empty and are
// never written. Checkpoints live in the partition directories, as the other checkpoints of
// brook do (Kafka keeps one file per log dir). A crash is modelled outside the broker: its
// file system stops (brook/testing/faulty_file_system.hpp) and it closes uncontrolled, so
// nothing more reaches its files.
//
// Thread-safety: all members are thread-safe. Produce callbacks run on the thread whose call
// completed them (produce, fetch, tick, apply, close), never under a broker lock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/replication/cluster_image.hpp>
#include <brook/replication/partition_replica.hpp>
#include <brook/storage/checkpoint_file.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/partition_files.hpp>

namespace brook {

/// How a broker stops (Kafka's controlled.shutdown.enable).
enum class shutdown_mode {
  /// The controller moves the broker's leaderships away first (cluster::stop_broker does).
  controlled,
  /// Nobody is told: the controller finds out by the broker's session timeout.
  uncontrolled,
};

struct broker_config {
  broker_id id{0};
  /// replica.lag.time.max.ms and the other per-replica settings.
  replica_config replica{};
  /// min.insync.replicas: with acks=all, the ISR size below which appends are refused
  /// (not_enough_replicas). Default 1.
  std::int32_t min_insync_replicas = 1;
  /// replica.high.watermark.checkpoint.interval.ms. Default 5000.
  std::chrono::milliseconds high_watermark_checkpoint_interval{5000};
  /// The data directory's options: log defaults (and the clock every broker part uses).
  data_dir_options dir{};
};

/// A change of ISR the leader asks the controller for (Kafka: AlterPartition request).
struct isr_proposal {
  std::string topic;
  partition_id partition{0};
  brook::leader_epoch leader_epoch{0};
  std::int32_t partition_epoch = 0;
  std::vector<broker_id> isr;
};

/// A partition this broker follows, and from whom.
struct followed_partition {
  std::string topic;
  partition_id partition{0};
  broker_id leader{-1};
  std::shared_ptr<partition_replica> replica;
  bool needs_truncation = true;  ///< run the OffsetsForLeaderEpoch loop before fetching
};

class broker {
 public:
  broker(const broker&) = delete;
  broker& operator=(const broker&) = delete;
  ~broker() { (void)close(); }

  /// Opens (creating when missing) the broker's data directory and restores each existing
  /// partition's high watermark from its checkpoint (0 without one). Roles come with the
  /// first apply(). Errors: the data directory's, kafka_storage_error (a bad checkpoint).
  static result<std::unique_ptr<broker>> open(const std::filesystem::path& dir, broker_config cfg) {
    if (cfg.id.value() < 0) return make_error(errc::invalid_argument, "broker id {} is negative", cfg.id);
    if (cfg.min_insync_replicas < 1)
      return make_error(errc::invalid_config, "min.insync.replicas must be at least 1, not {}",
                        cfg.min_insync_replicas);
    if (!cfg.dir.defaults.clock) cfg.dir.defaults.clock = make_system_clock();
    BROOK_TRY_ASSIGN(auto dd, data_dir::open(dir, cfg.dir));
    std::unique_ptr<broker> b(new broker(std::move(dd), std::move(cfg)));
    for (const auto& t : b->dd_->list_topics()) {
      BROOK_TRY_ASSIGN(auto n, b->dd_->partition_count(t));
      for (std::int32_t p = 0; p < n; ++p) {
        BROOK_TRY_ASSIGN(auto part, b->dd_->get_partition(t, partition_id(p)));
        BROOK_TRY_ASSIGN(auto hw, read_high_watermark(*part));
        part->reset_high_watermark(hw);
      }
    }
    b->last_hw_checkpoint_ = b->now();
    return b;
  }

  broker_id id() const noexcept { return cfg_.id; }
  const broker_config& config() const noexcept { return cfg_; }
  /// The broker's data directory: consumers read a partition here up to its high watermark.
  data_dir& dir() noexcept { return *dd_; }
  timestamp_ms now() const { return cfg_.dir.defaults.clock->now_ms(); }

  /// The replica of topic-p on this broker, or null.
  std::shared_ptr<partition_replica> replica(const std::string& topic, partition_id p) const {
    std::lock_guard l(mu_);
    auto it = replicas_.find({topic, p});
    return it == replicas_.end() ? nullptr : it->second.replica;
  }
  std::optional<offset> log_end_offset(const std::string& topic, partition_id p) const {
    auto r = replica(topic, p);
    if (!r) return std::nullopt;
    return r->log_end_offset();
  }

  // ------------------------------------------------------------------ metadata

  /// Brings this broker in line with `img`: creates local partitions for new assignments,
  /// makes replicas leader or follower for newer leader epochs (Kafka's
  /// applyDelta/makeLeaders/makeFollowers), applies ISR changes of partitions it leads, and
  /// fails delayed produces of partitions it no longer leads. `version` orders images (the
  /// metadata log offset it was read at, or lower): an image older than one applied is a
  /// no-op, so concurrent deliveries cannot go back in time.
  /// A partition that fails to apply (a storage error) does not stop the others; the first
  /// error is returned and the version is not recorded, so the same image may be applied again.
  result<void> apply(const cluster_image& img, std::uint64_t version) {
    completions done;
    result<void> first = ok();
    {
      std::lock_guard l(mu_);
      if (closed_) return make_error(errc::closed, "broker {} is closed", cfg_.id);
      if (version < applied_version_) return ok();
      const timestamp_ms t = now();
      for (const auto& [name, ts] : img.topics()) {
        auto r = apply_topic_locked(img, name, ts, t);
        if (!r && first) first = r.error();
      }
      if (first) applied_version_ = version;
      collect_completed_locked(done, t);
    }
    run(done);
    return first;
  }

 private:
  // One topic of apply(): creates its local partitions, then each replica's role. A partition
  // that fails does not stop the others. REQUIRES: mu_ held.
  result<void> apply_topic_locked(const cluster_image& img, const std::string& name, const topic_state& ts,
                                  timestamp_ms t) {
    bool mine = false;
    for (const auto& ps : ts.partitions)
      mine = mine || std::find(ps.replicas.begin(), ps.replicas.end(), cfg_.id) != ps.replicas.end();
    if (!mine) return ok();
    const auto n = static_cast<std::int32_t>(ts.partitions.size());
    auto have = dd_->partition_count(name);
    if (!have) {
      topic_config tc;
      tc.partitions = n;
      tc.overrides = img.topic_configs(name);
      // The controller's topic id, so every replica's partition.metadata holds the same one.
      BROOK_TRY(is_internal_topic(name) ? dd_->create_internal_topic(name, tc, ts.id)
                                        : dd_->create_topic(name, tc, ts.id));
    } else if (*have < n) {
      BROOK_TRY(dd_->create_partitions(name, n));
    }
    result<void> first = ok();
    for (std::int32_t p = 0; p < n; ++p) {
      const auto& ps = ts.partitions[static_cast<std::size_t>(p)];
      if (std::find(ps.replicas.begin(), ps.replicas.end(), cfg_.id) == ps.replicas.end()) continue;
      auto r = apply_partition_locked(img, name, partition_id(p), ps, t);
      if (!r && first) first = r.error();
    }
    return first;
  }

  result<void> apply_partition_locked(const cluster_image& img, const std::string& name, partition_id p,
                                      const partition_state& ps, timestamp_ms t) {
    auto& sl = replicas_[{name, p}];
    if (!sl.replica) {
      BROOK_TRY_ASSIGN(auto part, dd_->get_partition(name, p));
      BROOK_TRY_ASSIGN(auto r, partition_replica::open(cfg_.id, std::move(part), cfg_.replica));
      sl.replica = std::shared_ptr<partition_replica>(std::move(r));
    }
    auto& rep = *sl.replica;
    const leader_epoch epoch = ps.leader_epoch;
    if (ps.leader == cfg_.id) {
      if (rep.role() != replica_role::leader || rep.current_leader_epoch() < epoch) {
        BROOK_TRY(rep.become_leader(epoch, ps.isr, ps.replicas, t));
      } else if (ps.partition_epoch > sl.partition_epoch && rep.isr() != ps.isr) {
        BROOK_TRY(rep.set_isr(ps.isr, t));
      }
      std::vector<broker_id> fenced;
      for (auto r : ps.replicas) {
        const auto* b = img.broker(r);
        if (!b || b->fenced) fenced.push_back(r);
        // A new broker epoch is a new incarnation: what the old one fetched says nothing
        // about the restarted log (KAFKA-14139 / KIP-903).
        const std::int64_t be = b ? b->epoch : -1;
        auto [it, fresh] = sl.broker_epochs.try_emplace(r, be);
        if (!fresh && it->second != be) {
          rep.reset_follower(r);
          it->second = be;
        }
      }
      rep.set_ineligible(std::move(fenced), t);
    } else if (rep.current_leader_epoch() < epoch || rep.role() == replica_role::none) {
      BROOK_TRY(rep.become_follower(ps.leader, epoch));
      sl.needs_truncation = true;
      sl.broker_epochs.clear();
    }
    sl.leader = ps.leader;
    sl.leader_epoch = ps.leader_epoch;
    sl.partition_epoch = ps.partition_epoch;
    sl.isr_size = static_cast<std::int32_t>(ps.isr.size());
    return ok();
  }

 public:
  // ------------------------------------------------------------------ leader side

  /// A produce request for topic-p: checks acks and, for acks=all, min.insync.replicas
  /// against the ISR (not_enough_replicas, nothing appended), appends as leader, and
  /// completes `cb` at once for acks 0/1, or once the high watermark passes the batch for
  /// acks=all (not_enough_replicas_after_append if the ISR is then below
  /// min.insync.replicas; request_timed_out after `timeout`; not_leader_or_follower if
  /// leadership moves first). Errors through cb: not_leader_or_follower,
  /// unknown_topic_or_partition, the log's (corrupt_message, record_too_large, ...).
  void produce(const std::string& topic, partition_id p, std::span<std::byte> batches, acks_mode acks,
               std::chrono::milliseconds timeout, append_callback cb) {
    auto rep = replica(topic, p);
    if (!rep) {
      cb(make_error(errc::unknown_topic_or_partition, "broker {} has no replica of {}-{}", cfg_.id, topic, p));
      return;
    }
    if (acks == acks_mode::all) {
      const auto isr = rep->isr();
      if (rep->role() == replica_role::leader && static_cast<std::int32_t>(isr.size()) < cfg_.min_insync_replicas) {
        cb(make_error(errc::not_enough_replicas, "{}-{}: the ISR [{}] is smaller than min.insync.replicas {}", topic, p,
                      fmt::join(isr, ","), cfg_.min_insync_replicas));
        return;
      }
    }
    const timestamp_ms t = now();
    auto r = rep->append_as_leader(batches, t);
    if (!r || acks != acks_mode::all) {
      cb(r);
      return;
    }
    // The epoch the batch was written in: the replica's epoch can only have moved on since,
    // and then the request fails (the log may have been truncated and refilled meanwhile).
    // (append_as_leader stamped it into the batches' headers, in place.)
    auto h = check_batch_header(std::span<const std::byte>(batches), "appended batch");
    const leader_epoch epoch = h ? leader_epoch{h->partition_leader_epoch} : undefined_epoch;
    completions done;
    {
      std::lock_guard l(mu_);
      // close() may have failed every delayed produce between the append and
      // here; this one would then wait for a tick that never comes (nothing ticks a stopped
      // broker), so it fails the way the ones before it did.
      if (stopped_) {
        done.emplace_back(std::move(cb), *stopped_);
      } else {
        delayed_.push_back(delayed_produce{topic, p, rep, *r, epoch, t + timeout.count(), std::move(cb)});
        collect_completed_locked(done, t);
      }
    }
    run(done);
  }

  /// A follower's fetch (partition_replica::fetch_as_leader); completes delayed produces the
  /// moved high watermark satisfies. Errors: unknown_topic_or_partition, the replica's.
  result<replica_fetch_response> fetch(const std::string& topic, partition_id p, const replica_fetch_request& req) {
    auto rep = replica(topic, p);
    if (!rep)
      return make_error(errc::unknown_topic_or_partition, "broker {} has no replica of {}-{}", cfg_.id, topic, p);
    const timestamp_ms t = now();
    auto resp = rep->fetch_as_leader(req, t);
    if (resp) complete_delayed(t);
    return resp;
  }

  /// OffsetsForLeaderEpoch on this broker as leader of topic-p.
  result<epoch_end_offset> offsets_for_leader_epoch(const std::string& topic, partition_id p, leader_epoch current,
                                                    leader_epoch requested) const {
    auto rep = replica(topic, p);
    if (!rep)
      return make_error(errc::unknown_topic_or_partition, "broker {} has no replica of {}-{}", cfg_.id, topic, p);
    return rep->end_offset_for_epoch(current, requested);
  }

  /// ISR changes to ask the controller for, for every partition this broker leads: out of
  /// sync members removed (Kafka's maybeShrinkIsr, run every replica.lag.time.max.ms / 2)
  /// when `shrink`, caught-up replicas added (maybeExpandIsr, run on fetches) always.
  std::vector<isr_proposal> isr_proposals(bool shrink) const {
    std::vector<isr_proposal> out;
    std::lock_guard l(mu_);
    const timestamp_ms t = now();
    for (const auto& [key, s] : replicas_) {
      if (!s.replica || s.leader != cfg_.id || s.replica->role() != replica_role::leader) continue;
      auto isr = s.replica->isr();
      auto next = isr;
      if (shrink)
        for (auto id : s.replica->maybe_shrink_isr(t)) next.erase(std::find(next.begin(), next.end(), id));
      for (auto id : s.replica->maybe_expand_isr()) next.push_back(id);
      std::sort(next.begin(), next.end());
      std::sort(isr.begin(), isr.end());
      if (next != isr) out.push_back({key.topic, key.partition, s.leader_epoch, s.partition_epoch, std::move(next)});
    }
    return out;
  }

  // ------------------------------------------------------------------ follower side

  /// The partitions this broker follows, with their leader (-1 when offline).
  std::vector<followed_partition> following() const {
    std::vector<followed_partition> out;
    std::lock_guard l(mu_);
    for (const auto& [key, s] : replicas_)
      if (s.replica && s.replica->role() == replica_role::follower)
        out.push_back({key.topic, key.partition, s.leader, s.replica, s.needs_truncation});
    return out;
  }

  /// The fetcher finished the truncation step of topic-p for the epoch it fetched in.
  void truncation_done(const std::string& topic, partition_id p, leader_epoch epoch) {
    std::lock_guard l(mu_);
    auto it = replicas_.find({topic, p});
    if (it != replicas_.end() && it->second.replica && it->second.replica->current_leader_epoch() == epoch)
      it->second.needs_truncation = false;
  }

  // ------------------------------------------------------------------ housekeeping

  /// Expires delayed produces, checkpoints high watermarks when the interval passed, and
  /// runs the data directory's housekeeping (retention, flush.ms, compaction).
  result<void> tick() {
    const timestamp_ms t = now();
    {
      std::lock_guard l(mu_);
      for (auto& [_, sl] : replicas_)
        if (sl.replica) sl.replica->maybe_increment_high_watermark(t);
    }
    complete_delayed(t);
    bool ckpt = false;
    {
      std::lock_guard l(mu_);
      if (closed_) return ok();
      if (t - last_hw_checkpoint_ >= cfg_.high_watermark_checkpoint_interval.count()) {
        last_hw_checkpoint_ = t;
        ckpt = true;
      }
    }
    if (ckpt) BROOK_TRY(checkpoint_high_watermarks());
    return dd_->tick();
  }

  /// Writes every replica's replication-offset-checkpoint whose value changed.
  result<void> checkpoint_high_watermarks() {
    std::vector<std::shared_ptr<partition_replica>> reps;
    {
      std::lock_guard l(mu_);
      if (closed_) return make_error(errc::closed, "broker {} is closed", cfg_.id);
      for (auto& [_, s] : replicas_)
        if (s.replica) reps.push_back(s.replica);
    }
    std::lock_guard cl(ckpt_mu_);
    for (const auto& r : reps) {
      const auto& part = *r->part();
      const std::int64_t hw = part.high_watermark().value();
      auto key = topic_partition{part.topic(), part.id()};
      auto it = written_hw_.find(key);
      if (it != written_hw_.end() && it->second == hw) continue;
      BROOK_TRY(write_checkpoint(*part.log().config().files,
                                 part.log().dir() / partition_files::replication_offset_checkpoint,
                                 {{part.topic(), std::to_string(part.id().value()), std::to_string(hw)}}));
      written_hw_[key] = hw;
    }
    return ok();
  }

  /// Stops: fails delayed produces, checkpoints high watermarks, closes the data directory
  /// (flush + checkpoints). Delayed produces fail with not_leader_or_follower after a
  /// controlled shutdown (their clients retry on the new leader), with request_timed_out after
  /// an uncontrolled one (as a client whose broker went away without answering sees them).
  /// A write that fails (a dead disk) does not stop the rest: everything is closed, the
  /// first error returned.
  result<void> close(shutdown_mode mode = shutdown_mode::controlled) {
    completions done;
    {
      std::lock_guard l(mu_);
      if (closed_ || stopped_) return ok();
      stopped_ = mode == shutdown_mode::controlled
                     ? make_error(errc::not_leader_or_follower, "broker {} is shutting down", cfg_.id)
                     : make_error(errc::request_timed_out, "broker {} stopped without a controlled shutdown", cfg_.id);
      fail_all_locked(done, *stopped_);
    }
    run(done);
    auto c = checkpoint_high_watermarks();
    {
      std::lock_guard l(mu_);
      closed_ = true;
    }
    auto d = dd_->close();
    if (!c) return c.error();
    return d;
  }

  /// Reads a partition's replication-offset-checkpoint: its high watermark, clamped to the
  /// log end; 0 without a checkpoint. Errors: kafka_storage_error (malformed).
  static result<offset> read_high_watermark(const partition& part) {
    const auto path = part.log().dir() / partition_files::replication_offset_checkpoint;
    BROOK_TRY_ASSIGN(auto lines, read_checkpoint(*part.log().config().files, path, 3));
    if (lines.empty()) return offset(0);
    BROOK_TRY_ASSIGN(auto v, parse_checkpoint_int<std::int64_t>(path, lines.front()[2]));
    if (v < 0) return make_error(errc::kafka_storage_error, "{}: negative high watermark {}", path.string(), v);
    return std::min(offset(v), part.log_end_offset());
  }

 private:
  struct slot {
    std::shared_ptr<partition_replica> replica;
    broker_id leader{-1};
    brook::leader_epoch leader_epoch{-1};
    std::int32_t partition_epoch = -1;
    std::int32_t isr_size = 0;
    bool needs_truncation = true;
    std::map<broker_id, std::int64_t> broker_epochs;  // leader: the replicas' broker epochs last seen
  };
  struct delayed_produce {
    std::string topic;
    partition_id partition;
    std::shared_ptr<partition_replica> replica;
    append_result appended;
    leader_epoch epoch;  // the leader epoch the batch was appended in
    timestamp_ms deadline;
    append_callback cb;
  };
  using completions = std::vector<std::pair<append_callback, result<append_result>>>;

  broker(std::unique_ptr<data_dir> dd, broker_config cfg) : dd_(std::move(dd)), cfg_(std::move(cfg)) {}

  static void run(completions& done) {
    for (auto& [cb, r] : done)
      if (cb) cb(r);
  }

  void complete_delayed(timestamp_ms t) {
    completions done;
    {
      std::lock_guard l(mu_);
      collect_completed_locked(done, t);
    }
    run(done);
  }

  // DelayedProduce.tryComplete + Partition.checkEnoughReplicasReachOffset + onExpiration.
  void collect_completed_locked(completions& done, timestamp_ms t) {
    for (auto it = delayed_.begin(); it != delayed_.end();) {
      auto& d = *it;
      const auto& rep = *d.replica;
      std::optional<result<append_result>> outcome;
      if (rep.role() != replica_role::leader || rep.leader_id() != cfg_.id || rep.current_leader_epoch() != d.epoch) {
        outcome = make_error(errc::not_leader_or_follower, "{}-{}: broker {} is no longer the leader", d.topic,
                             d.partition, cfg_.id);
      } else if (rep.high_watermark() > d.appended.last_offset) {
        const auto isr = rep.isr();
        if (static_cast<std::int32_t>(isr.size()) >= cfg_.min_insync_replicas)
          outcome = d.appended;
        else
          outcome = make_error(errc::not_enough_replicas_after_append,
                               "{}-{}: offsets {}..{} were written but the ISR [{}] is below min.insync.replicas {}",
                               d.topic, d.partition, d.appended.base_offset, d.appended.last_offset,
                               fmt::join(isr, ","), cfg_.min_insync_replicas);
      } else if (t >= d.deadline) {
        outcome = make_error(errc::request_timed_out, "{}-{}: offsets {}..{} not replicated to the ISR in time",
                             d.topic, d.partition, d.appended.base_offset, d.appended.last_offset);
      }
      if (!outcome) {
        ++it;
        continue;
      }
      done.emplace_back(std::move(d.cb), std::move(*outcome));
      it = delayed_.erase(it);
    }
  }

  void fail_all_locked(completions& done, const brook::error& e) {
    for (auto& d : delayed_) done.emplace_back(std::move(d.cb), e);
    delayed_.clear();
  }

  std::unique_ptr<data_dir> dd_;
  const broker_config cfg_;
  mutable std::mutex mu_;  // guards replicas_, delayed_, closed_, stopped_, last_hw_checkpoint_
  std::map<topic_partition, slot> replicas_;
  std::vector<delayed_produce> delayed_;
  timestamp_ms last_hw_checkpoint_ = 0;
  std::uint64_t applied_version_ = 0;
  bool closed_ = false;
  // Set by close() when they fail the delayed produces: what a produce whose
  // append raced them completes with instead of waiting (see produce()).
  std::optional<brook::error> stopped_;
  std::mutex ckpt_mu_;  // serialises checkpoint writers; guards written_hw_
  std::map<topic_partition, std::int64_t> written_hw_;
};

}  // namespace brook

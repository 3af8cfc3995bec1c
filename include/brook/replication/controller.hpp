// The cluster controller: the one writer of the metadata log (metadata_log.hpp), in the role
// of KRaft's active controller (QuorumController + ClusterControlManager +
// ReplicationControlManager), in-process and without a quorum.
//
//   brokers     register_broker -> a new broker epoch, fenced; heartbeat -> unfenced (the
//               broker is alive and may lead); no heartbeat for broker.session.timeout.ms, a
//               controlled stop or fence_broker -> fenced. Fencing a broker removes it from
//               every ISR (but never empties one: the last member stays, as KRaft keeps it)
//               and moves the leadership of the partitions it led.
//   topics      create_topic: replicas by Kafka's rack-unaware placement over the unfenced
//               brokers (replica_placement.hpp); ISR = every replica; leader = the first.
//   ISR         alter_partition (Kafka's AlterPartition): the leader proposes a new ISR for
//               its leader epoch and partition epoch; the controller checks and commits it.
//   elections   clean (automatic, when a leader is fenced or an offline partition gets an
//               unfenced ISR member back): among the unfenced ISR members, the one with the
//               highest log end offset, ties going to the earlier replica (the preferred
//               leader first). unclean.leader.election.enable=true: when no ISR member is
//               unfenced, any unfenced replica (highest log end offset first) leads with
//               ISR = {itself} and leader recovery state RECOVERING, and records it lacks are
//               lost. Otherwise the partition stays offline (leader -1) until an ISR member
//               returns. elect_leaders(preferred | unclean) on demand, as kafka-leader-election.sh.
//
// Every change is one PartitionChangeRecord (or Fence/Unfence/Register record) appended,
// fsynced and published by the metadata log before the call returns; a restarted controller
// replays the log and carries on from the same image (broker liveness restarts from the
// image: brokers must heartbeat again within a session timeout).
//
// Log end offsets for the "highest LEO" rule come from a probe the host installs
// (set_log_end_probe; the cluster asks its brokers). Without one, or when the probe does
// not know, candidates are taken in replica order, as Kafka's controller does.
//
// Thread-safety: all members are thread-safe; calls are serialised by one mutex. The log
// end probe and metadata-log watchers run under it, so they must not call the controller.
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
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <brook/core/clock.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/replication/cluster_image.hpp>
#include <brook/replication/metadata_log.hpp>
#include <brook/replication/metadata_records.hpp>
#include <brook/replication/replica_placement.hpp>
#include <brook/storage/topic_config.hpp>

namespace brook {

struct controller_config {
  /// broker.session.timeout.ms: a broker that has not heartbeaten for this long is fenced.
  /// Default 9000 (KRaft).
  std::chrono::milliseconds broker_session_timeout{9000};
  /// unclean.leader.election.enable. Default false.
  bool unclean_leader_election_enable = false;
  /// Where placement starts (Kafka draws it at random; brook defaults to a fixed start so
  /// a cluster is reproducible; use placement_start::random for Kafka's spread).
  placement_start placement{};
  /// Seeds topic ids. 0 = from std::random_device.
  std::uint64_t seed = 0;
  /// Clock for session timeouts and record timestamps. Null = system clock.
  std::shared_ptr<const brook::clock> clock{};
};

/// kafka-leader-election.sh --election-type.
enum class election_type { preferred, unclean };

class controller {
 public:
  using log_end_probe =
      std::function<std::optional<offset>(broker_id broker, const std::string& topic, partition_id p)>;

  controller(const controller&) = delete;
  controller& operator=(const controller&) = delete;

  /// Opens (creating when missing) the metadata log under `dir` and replays it. Errors: the
  /// metadata log's (corrupt_message, log_dir_locked, OS errors).
  static result<std::unique_ptr<controller>> open(const std::filesystem::path& dir, controller_config cfg = {}) {
    if (!cfg.clock) cfg.clock = make_system_clock();
    metadata_log_options mo;
    mo.clock = cfg.clock;
    BROOK_TRY_ASSIGN(auto log, metadata_log::open(dir, mo));
    return std::unique_ptr<controller>(new controller(std::move(log), std::move(cfg)));
  }

  const controller_config& config() const noexcept { return cfg_; }
  std::shared_ptr<const cluster_image> image() const { return log_->image(); }
  metadata_log& log() noexcept { return *log_; }

  void set_log_end_probe(log_end_probe p) {
    std::lock_guard l(mu_);
    probe_ = std::move(p);
  }

  // ------------------------------------------------------------------ brokers

  /// Registers (or re-registers after a restart) broker `id`: a new broker epoch (the
  /// offset of its registration record, as KRaft), fenced until its first heartbeat.
  /// Re-registering fences the old incarnation first (moving its leaderships).
  result<std::int64_t> register_broker(broker_id id) {
    std::lock_guard l(mu_);
    if (id.value() < 0) return make_error(errc::invalid_argument, "broker id {} is negative", id);
    auto img = log_->image();
    if (const auto* b = img->broker(id); b && !b->fenced) BROOK_TRY(fence_locked(id, "re-registration"));
    metadata::register_broker_record r;
    r.broker_id = id;
    r.incarnation_id = uuid::random(rng_);
    r.broker_epoch = log_->end_offset().value();
    r.fenced = true;
    if (const auto* b = log_->image()->broker(id); b && b->epoch >= r.broker_epoch) r.broker_epoch = b->epoch + 1;
    const auto epoch = r.broker_epoch;
    BROOK_TRY(append_locked({r}));
    last_heartbeat_[id] = cfg_.clock->now_ms();
    return epoch;
  }

  /// A broker's heartbeat: keeps its session; the first one after registration (or after
  /// being fenced) unfences it and elects it where an offline partition has it in the ISR.
  /// Errors: stale_broker_epoch (not the registered epoch: a fenced old incarnation),
  /// broker_not_available (unknown id).
  result<void> heartbeat(broker_id id, std::int64_t broker_epoch) {
    std::lock_guard l(mu_);
    auto img = log_->image();
    const auto* b = img->broker(id);
    if (!b) return make_error(errc::broker_not_available, "broker {} is not registered", id);
    if (b->epoch != broker_epoch)
      return make_error(errc::stale_broker_epoch, "broker {}: epoch {} is not the registered {}", id, broker_epoch,
                        b->epoch);
    last_heartbeat_[id] = cfg_.clock->now_ms();
    if (!b->fenced) return ok();
    BROOK_TRY(append_locked({metadata::unfence_broker_record{id, broker_epoch}}));
    return elect_offline_locked();
  }

  /// Fences broker `id` now (a controlled shutdown, or the host knows it is gone). No-op when
  /// already fenced. Errors: broker_not_available.
  result<void> fence_broker(broker_id id) {
    std::lock_guard l(mu_);
    const auto* b = log_->image()->broker(id);
    if (!b) return make_error(errc::broker_not_available, "broker {} is not registered", id);
    if (b->fenced) return ok();
    return fence_locked(id, "fence_broker");
  }

  /// Fences every unfenced broker whose last heartbeat is older than the session timeout.
  /// Returns the ids fenced.
  result<std::vector<broker_id>> tick() {
    std::lock_guard l(mu_);
    const timestamp_ms now = cfg_.clock->now_ms();
    std::vector<broker_id> out;
    auto img = log_->image();
    for (const auto& [id, b] : img->brokers()) {
      if (b.fenced) continue;
      auto it = last_heartbeat_.find(id);
      if (it == last_heartbeat_.end()) {
        last_heartbeat_[id] = now;  // replayed image: the session starts now
        continue;
      }
      if (now - it->second > cfg_.broker_session_timeout.count()) {
        BROOK_TRY(fence_locked(id, "session timeout"));
        out.push_back(id);
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ topics

  /// Creates a topic of `partitions` partitions with `replication_factor` replicas each,
  /// placed over the unfenced brokers in id order, with the config overrides in `configs`
  /// (topic_config's keys: one ConfigRecord each, after the TopicRecord and before the
  /// PartitionRecords, as Kafka's ReplicationControlManager writes them). Errors: topic_already_exists, invalid_topic,
  /// invalid_partitions, invalid_replication_factor (more than the unfenced brokers, with Kafka's message),
  /// invalid_config (an unknown key or a bad value).
  result<void> create_topic(const std::string& name, std::int32_t partitions, std::int32_t replication_factor,
                            const std::map<std::string, std::string>& configs = {}) {
    std::lock_guard l(mu_);
    auto img = log_->image();
    if (img->topic(name)) return make_error(errc::topic_already_exists, "Topic '{}' already exists.", name);
    BROOK_TRY(validate_topic_name(name));
    topic_config tc;
    tc.overrides = configs;
    BROOK_TRY(tc.apply(log_config{}));  // checks every key and value
    auto alive = img->alive_brokers();
    std::sort(alive.begin(), alive.end());
    BROOK_TRY_ASSIGN(auto plan, assign_replicas_rack_unaware(alive, partitions, replication_factor, cfg_.placement));
    std::vector<metadata::metadata_record> recs;
    metadata::topic_record t;
    t.name = name;
    // A reopened controller with a fixed seed replays its engine from the start: skip ids in use.
    do t.topic_id = uuid::random(rng_);
    while (img->topic(t.topic_id) != nullptr);
    recs.push_back(t);
    for (const auto& [key, value] : configs) {
      metadata::config_record cr;
      cr.resource_name = name;
      cr.name = key;
      cr.value = value;
      recs.push_back(std::move(cr));
    }
    for (const auto& [pid, reps] : plan) {
      metadata::partition_record pr;
      pr.partition_id = pid;
      pr.topic_id = t.topic_id;
      pr.replicas = reps;
      pr.isr = reps;
      pr.leader = reps.front();
      pr.leader_epoch = leader_epoch(0);
      pr.partition_epoch = 0;
      recs.push_back(pr);
    }
    return append_locked(std::move(recs));
  }

  // ------------------------------------------------------------------ ISR and elections

  /// Kafka's AlterPartition: `leader` (in leader epoch `epoch`, having seen `partition_epoch`)
  /// asks for `isr`. Errors: unknown_topic_or_partition; not_leader_or_follower (not the
  /// leader); fenced_leader_epoch / unknown_leader_epoch (older / newer epoch);
  /// invalid_update_version (the partition changed since: a stale proposal);
  /// invalid_request (ISR without the leader, or with a non-replica); ineligible_replica (a
  /// fenced broker added). Returns the committed state.
  result<partition_state> alter_partition(const std::string& topic, partition_id p, broker_id leader,
                                          leader_epoch epoch, std::int32_t partition_epoch,
                                          std::vector<broker_id> isr) {
    std::lock_guard l(mu_);
    auto img = log_->image();
    const auto* t = img->topic(topic);
    const auto* ps = img->partition(topic, p);
    if (!t || !ps) return make_error(errc::unknown_topic_or_partition, "no partition {}-{}", topic, p);
    if (ps->leader != leader)
      return make_error(errc::not_leader_or_follower, "{}-{}: broker {} is not the leader ({})", topic, p, leader,
                        ps->leader);
    if (epoch < ps->leader_epoch)
      return make_error(errc::fenced_leader_epoch, "{}-{}: leader epoch {} is older than {}", topic, p, epoch,
                        ps->leader_epoch);
    if (epoch > ps->leader_epoch)
      return make_error(errc::unknown_leader_epoch, "{}-{}: leader epoch {} is newer than {}", topic, p, epoch,
                        ps->leader_epoch);
    if (partition_epoch != ps->partition_epoch)
      return make_error(errc::invalid_update_version, "{}-{}: partition epoch {} is not the current {}", topic, p,
                        partition_epoch, ps->partition_epoch);
    std::sort(isr.begin(), isr.end());
    isr.erase(std::unique(isr.begin(), isr.end()), isr.end());
    if (std::find(isr.begin(), isr.end(), leader) == isr.end())
      return make_error(errc::invalid_request, "{}-{}: ISR [{}] leaves out the leader {}", topic, p,
                        fmt::join(isr, ","), leader);
    for (auto id : isr) {
      if (std::find(ps->replicas.begin(), ps->replicas.end(), id) == ps->replicas.end())
        return make_error(errc::invalid_request, "{}-{}: ISR member {} is not a replica", topic, p, id);
      const bool added = std::find(ps->isr.begin(), ps->isr.end(), id) == ps->isr.end();
      const auto* b = img->broker(id);
      if (added && (!b || b->fenced))
        return make_error(errc::ineligible_replica, "{}-{}: broker {} is fenced and cannot join the ISR", topic, p, id);
    }
    metadata::partition_change_record c;
    c.topic_id = t->id;
    c.partition_id = p;
    c.isr = in_replica_order(ps->replicas, isr);
    if (ps->leader_recovery_state == 1) c.leader_recovery_state = 0;  // the leader has recovered
    BROOK_TRY(append_locked({c}));
    return *log_->image()->partition(topic, p);
  }

  /// kafka-leader-election.sh: for each partition (all when `which` is empty), a preferred
  /// election moves leadership to the first replica when it is unfenced and in the ISR
  /// (election_not_needed when it leads already, preferred_leader_not_available otherwise); an
  /// unclean election elects any unfenced replica for a partition with no leader
  /// (election_not_needed when it has one, eligible_leaders_not_available when none is
  /// unfenced). Per-partition results; the call fails only on a storage error.
  result<std::map<topic_partition, result<void>>> elect_leaders(election_type type,
                                                                const std::vector<topic_partition>& which = {}) {
    std::lock_guard l(mu_);
    std::map<topic_partition, result<void>> out;
    auto targets = which;
    if (targets.empty()) {
      auto img = log_->image();
      for (const auto& [name, t] : img->topics())
        for (std::size_t i = 0; i < t.partitions.size(); ++i)
          targets.push_back({name, partition_id(static_cast<std::int32_t>(i))});
    }
    for (const auto& [topic, p] : targets) {
      auto img = log_->image();
      const auto* t = img->topic(topic);
      const auto* ps = img->partition(topic, p);
      if (!t || !ps) {
        out.emplace(topic_partition{topic, p},
                    make_error(errc::unknown_topic_or_partition, "no partition {}-{}", topic, p));
        continue;
      }
      std::optional<broker_id> chosen;
      if (type == election_type::preferred) {
        const auto pref = ps->replicas.front();
        if (ps->leader == pref) {
          out.emplace(topic_partition{topic, p},
                      make_error(errc::election_not_needed, "{}-{}: {} leads already", topic, p, pref));
          continue;
        }
        if (!alive(*img, pref) || std::find(ps->isr.begin(), ps->isr.end(), pref) == ps->isr.end()) {
          out.emplace(topic_partition{topic, p},
                      make_error(errc::preferred_leader_not_available,
                                 "{}-{}: preferred leader {} is fenced or not in the ISR [{}]", topic, p, pref,
                                 fmt::join(ps->isr, ",")));
          continue;
        }
        chosen = pref;
        metadata::partition_change_record c;
        c.topic_id = t->id;
        c.partition_id = p;
        c.leader = *chosen;
        BROOK_TRY(append_locked({c}));
        out.emplace(topic_partition{topic, p}, ok());
      } else {
        if (ps->has_leader()) {
          out.emplace(topic_partition{topic, p},
                      make_error(errc::election_not_needed, "{}-{}: {} leads", topic, p, ps->leader));
          continue;
        }
        BROOK_TRY_ASSIGN(auto r, elect_locked(*img, topic, p, /*unclean=*/true));
        if (!r)
          out.emplace(topic_partition{topic, p},
                      make_error(errc::eligible_leaders_not_available, "{}-{}: no replica of [{}] is unfenced", topic,
                                 p, fmt::join(ps->replicas, ",")));
        else
          out.emplace(topic_partition{topic, p}, ok());
      }
    }
    return out;
  }

  result<void> close() {
    std::lock_guard l(mu_);
    return log_->close();
  }

 private:
  controller(std::unique_ptr<metadata_log> log, controller_config cfg) : log_(std::move(log)), cfg_(std::move(cfg)) {
    rng_.seed(cfg_.seed != 0 ? cfg_.seed
                             : (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}());
  }

  static bool alive(const cluster_image& img, broker_id id) {
    const auto* b = img.broker(id);
    return b && !b->fenced;
  }

  static std::vector<broker_id> in_replica_order(const std::vector<broker_id>& replicas,
                                                 const std::vector<broker_id>& members) {
    std::vector<broker_id> out;
    for (auto r : replicas)
      if (std::find(members.begin(), members.end(), r) != members.end()) out.push_back(r);
    return out;
  }

  result<void> append_locked(std::vector<metadata::metadata_record> recs) {
    BROOK_TRY(log_->append(std::move(recs)));
    return ok();
  }

  /// Picks among `candidates` (replica order): the highest known log end offset, ties to the
  /// earlier one.
  broker_id pick_locked(const std::string& topic, partition_id p, const std::vector<broker_id>& candidates) {
    broker_id best = candidates.front();
    std::optional<offset> best_leo;
    for (auto id : candidates) {
      std::optional<offset> leo = probe_ ? probe_(id, topic, p) : std::nullopt;
      if (leo && (!best_leo || *leo > *best_leo)) {
        best = id;
        best_leo = leo;
      }
    }
    return best;
  }

  /// Elects a leader for a partition without one (or whose leader is being fenced): clean
  /// from the unfenced ISR members, else (when `unclean`) from the unfenced replicas.
  /// Returns whether a leader was elected; writes nothing when none can be.
  result<bool> elect_locked(const cluster_image& img, const std::string& topic, partition_id p, bool unclean,
                            std::optional<std::vector<broker_id>> isr_override = std::nullopt) {
    const auto* t = img.topic(topic);
    const auto& ps = *img.partition(topic, p);
    const auto isr = isr_override ? *isr_override : ps.isr;
    std::vector<broker_id> clean;
    for (auto id : ps.replicas)
      if (std::find(isr.begin(), isr.end(), id) != isr.end() && alive(img, id)) clean.push_back(id);
    metadata::partition_change_record c;
    c.topic_id = t->id;
    c.partition_id = p;
    if (!clean.empty()) {
      c.leader = pick_locked(topic, p, clean);
      if (isr_override) c.isr = *isr_override;
    } else if (unclean) {
      std::vector<broker_id> any;
      for (auto id : ps.replicas)
        if (alive(img, id)) any.push_back(id);
      if (any.empty()) return false;
      c.leader = pick_locked(topic, p, any);
      c.isr = std::vector<broker_id>{c.leader};
      c.leader_recovery_state = 1;  // RECOVERING: records the new leader lacks are gone
    } else {
      return false;
    }
    BROOK_TRY(append_locked({c}));
    return true;
  }

  /// KRaft's handleBrokerFenced: fence, then for every partition with the broker in its ISR
  /// drop it from the ISR (unless it is the last member) and re-elect where it led.
  result<void> fence_locked(broker_id id, const char* /*why*/) {
    const auto* b = log_->image()->broker(id);
    BROOK_TRY(append_locked({metadata::fence_broker_record{id, b->epoch}}));
    auto img = log_->image();
    for (const auto& [name, t] : img->topics()) {
      for (std::size_t i = 0; i < t.partitions.size(); ++i) {
        const auto p = partition_id(static_cast<std::int32_t>(i));
        auto cur = log_->image();
        const auto& ps = *cur->partition(name, p);
        const bool in_isr = std::find(ps.isr.begin(), ps.isr.end(), id) != ps.isr.end();
        if (!in_isr && ps.leader != id) continue;
        std::vector<broker_id> isr;
        for (auto m : ps.isr)
          if (m != id) isr.push_back(m);
        if (isr.empty()) isr = ps.isr;  // the last member stays (KRaft), so it can lead again
        if (ps.leader == id) {
          BROOK_TRY_ASSIGN(auto elected, elect_locked(*cur, name, p, cfg_.unclean_leader_election_enable, isr));
          if (elected) continue;
          metadata::partition_change_record c;  // offline: no eligible leader
          c.topic_id = t.id;
          c.partition_id = p;
          c.leader = metadata::no_leader;
          c.isr = isr;
          BROOK_TRY(append_locked({c}));
        } else if (isr != ps.isr) {
          metadata::partition_change_record c;
          c.topic_id = t.id;
          c.partition_id = p;
          c.isr = isr;
          BROOK_TRY(append_locked({c}));
        }
      }
    }
    return ok();
  }

  /// Elects leaders for offline partitions that now have an eligible replica.
  result<void> elect_offline_locked() {
    auto img = log_->image();
    for (const auto& [name, t] : img->topics())
      for (std::size_t i = 0; i < t.partitions.size(); ++i) {
        if (t.partitions[i].has_leader()) continue;
        auto cur = log_->image();
        BROOK_TRY(
            elect_locked(*cur, name, partition_id(static_cast<std::int32_t>(i)), cfg_.unclean_leader_election_enable));
      }
    return ok();
  }

  mutable std::mutex mu_;
  std::unique_ptr<metadata_log> log_;
  controller_config cfg_;
  log_end_probe probe_;
  std::map<broker_id, timestamp_ms> last_heartbeat_;
  std::mt19937_64 rng_;
};

}  // namespace brook

// The group coordinator: Kafka's classic consumer-group protocol, in-process.
//
// Members join a group, the coordinator collects them (PreparingRebalance), picks a
// protocol every member supports and a leader, and answers every join with a new
// generation; the leader computes the assignment and hands it over in its sync, which
// the coordinator passes to every member (CompletingRebalance -> Stable). Heartbeats keep
// a member's session; a member that misses them for session.timeout.ms, leaves, changes
// its subscription, or whose subscribed topics gain partitions causes a new rebalance.
// Offset commits and heartbeats carrying a stale generation or an unknown member are
// refused (illegal_generation, unknown_member_id, rebalance_in_progress), so nothing a
// fenced member sends can overwrite the work of the member that replaced it.
//
// The requests mirror Kafka's JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
// OffsetFetch, DescribeGroups, ListGroups, DeleteGroups and OffsetDelete/AlterOffsets, with
// protocol metadata and assignments as opaque bytes (a custom broker passes them through
// from the wire; group/group_consumer.hpp encodes them with Kafka's consumer protocol).
// join_group and sync_group answer through a callback: immediately, or later from another
// member's request or from tick(). Callbacks run on the thread that completes them, never
// under the coordinator's lock, and may call back into the coordinator.
//
// Liveness, two ways:
//   - remote members (a custom broker's clients) heartbeat; a member whose last heartbeat
//     is older than its session timeout is removed (unless it waits in a join or sync);
//   - in-process members (group_consumer) pass a member_liveness instead of running a
//     heartbeat thread: while `alive` is set, tick() counts as their heartbeat, and a
//     member that has not been inside poll() for max.poll.interval.ms (the rebalance
//     timeout) is removed, as Kafka's client leaves the group when its poll timer expires.
//     The member learns it on its next call (unknown_member_id).
//
// Time comes from the injected brook::clock: every timeout (sessions, poll interval,
// rebalance, initial delay, offsets retention) is driven by tick(), so tests use a
// testing::manual_clock and call tick(); start() runs tick() on a thread the coordinator owns, waking
// at the next deadline (no polling loop).
//
// The coordinator runs on a backend (group/coordinator_backend.hpp): a data directory, or a
// replicated cluster. Committed offsets and group metadata are stored through
// group/offset_store.hpp in the backend's `__consumer_offsets` and replayed on open: a
// restarted process resumes every group from its committed offsets.
// Groups whose members belonged to the previous process come back Empty, keeping their
// generation.
//
// One group's state machine is group/classic_group.hpp (with the decisions where Kafka
// leaves room); this class validates requests, routes them, owns the groups' storage
// (group/offset_store.hpp), their replay, the timer and offsets retention. An offset
// commit is all-or-nothing (Kafka answers per partition).
//
// Thread-safety: all members are thread-safe (one mutex per coordinator).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/clock.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/group/classic_group.hpp>
#include <brook/group/coordinator_backend.hpp>
#include <brook/group/coordinator_config.hpp>
#include <brook/group/group_requests.hpp>
#include <brook/group/group_state.hpp>
#include <brook/group/offset_and_metadata.hpp>
#include <brook/group/offset_store.hpp>
#include <brook/storage/data_dir.hpp>

namespace brook {

static_assert(coordinator_config{}.offsets_topic_num_partitions == offset_store::default_partitions);

class group_coordinator {
 public:
  group_coordinator(const group_coordinator&) = delete;
  group_coordinator& operator=(const group_coordinator&) = delete;
  ~group_coordinator() { stop(); }

  /// Opens the coordinator of `dd`: the internal offsets topic is created if missing and
  /// replayed. The clock is the data directory's.
  static result<std::unique_ptr<group_coordinator>> open(data_dir& dd, coordinator_config cfg = {}) {
    auto owned = std::make_unique<data_dir_backend>(dd);
    auto& backend = *owned;
    return open_with(std::move(owned), backend, cfg);
  }
  /// Opens the coordinator on `backend` (which must outlive it), e.g. a cluster_backend.
  static result<std::unique_ptr<group_coordinator>> open(coordinator_backend& backend, coordinator_config cfg = {}) {
    return open_with(nullptr, backend, cfg);
  }

  const coordinator_config& config() const noexcept { return cfg_; }
  /// What the coordinator's topics are read through; group consumers of this coordinator
  /// read their partitions through it too (its notifier wakes them for rebalances).
  fetch_source& source() noexcept { return backend_.source(); }
  const std::shared_ptr<const brook::clock>& clock() const noexcept { return clock_; }

  // ------------------------------------------------------------------ membership

  using join_callback = brook::join_callback;
  using sync_callback = brook::sync_callback;

  /// JoinGroup. `done` runs once: at once on an error or when the join phase can complete
  /// now, otherwise when the last member joins or the rebalance timeout passes (tick()).
  /// Returns the member id the member has from now on (empty if the request was refused),
  /// so a member can leave before its join completes (the role of KIP-394's early id).
  /// Errors: invalid_group_id, invalid_session_timeout, inconsistent_group_protocol,
  /// unknown_member_id, fenced_instance_id, group_max_size_reached.
  std::string join_group(join_group_request req, join_callback done) {
    group_completions out;
    std::string id;
    {
      std::lock_guard lk(mu_);
      if (auto r = check_join(req); !r) {
        out.add([done, e = r.error()] { done(e); });
      } else if (classic_group* g = find_group(req.group_id)) {
        id = g->join(std::move(req), std::move(done), out);
      } else if (!req.member_id.empty()) {
        out.add([done, e = unknown_member(req.group_id, req.member_id)] { done(e); });
      } else {
        id = create_group(req.group_id).join(std::move(req), std::move(done), out);
      }
    }
    out.run();
    wake_timer();
    return id;
  }

  /// SyncGroup. The leader's call carries the assignment and completes every member's sync.
  /// Errors: unknown_member_id, illegal_generation, rebalance_in_progress, fenced_instance_id.
  void sync_group(sync_group_request req, sync_callback done) {
    group_completions out;
    {
      std::lock_guard lk(mu_);
      if (classic_group* g = find_group(req.group_id))
        g->sync(std::move(req), std::move(done), out);
      else
        out.add([done, e = unknown_member(req.group_id, req.member_id)] { done(e); });
    }
    out.run();
  }

  /// Heartbeat. rebalance_in_progress tells the member to rejoin.
  result<void> heartbeat(const std::string& group_id, generation_id generation, const std::string& member_id,
                         const std::optional<std::string>& group_instance_id = std::nullopt) {
    std::lock_guard lk(mu_);
    classic_group* g = find_group(group_id);
    if (!g) return unknown_member(group_id, member_id);
    return g->heartbeat(generation, member_id, group_instance_id);
  }

  /// LeaveGroup for one member (by member id, or by group.instance.id when member_id is empty).
  result<void> leave_group(const std::string& group_id, const std::string& member_id,
                           const std::optional<std::string>& group_instance_id = std::nullopt) {
    group_completions out;
    result<void> r = ok();
    {
      std::lock_guard lk(mu_);
      classic_group* g = find_group(group_id);
      r = g ? g->leave(member_id, group_instance_id, out) : unknown_member(group_id, member_id);
    }
    out.run();
    return r;
  }

  // ------------------------------------------------------------------ offsets

  /// OffsetCommit. Refused when the member or generation is stale (illegal_generation,
  /// unknown_member_id, fenced_instance_id), while the group awaits the leader's assignment
  /// (rebalance_in_progress), for partitions that do not exist (unknown_topic_or_partition),
  /// negative offsets (invalid_argument) or oversized metadata (offset_metadata_too_large).
  /// A commit with generation -1 and no member id is accepted only while the group has no
  /// members (Kafka's "simple" commit). Nothing is written unless everything is valid.
  result<void> commit_offsets(const offset_commit_request& req) {
    std::lock_guard lk(mu_);
    BROOK_TRY(validate_group_id(req.group_id));
    BROOK_TRY(check_offsets(req.offsets));
    BROOK_TRY_ASSIGN(classic_group * g, group_for_commit(req));
    if (req.offsets.empty()) return ok();
    const timestamp_ms t = now();
    std::vector<std::pair<topic_partition, offset_and_metadata>> values;
    for (const auto& [tp, om] : req.offsets) {
      offset_and_metadata v = om;
      v.commit_timestamp = t;
      values.emplace_back(tp, std::move(v));
    }
    BROOK_TRY(store_->append_offsets(req.group_id, values, t));
    for (auto& [tp, v] : values) g->offsets()[tp] = std::move(v);
    return ok();
  }

  /// OffsetFetch: the committed offsets of the group (of `tps`, or all of them). Partitions
  /// without a commit are absent. An unknown group has none.
  std::map<topic_partition, offset_and_metadata> fetch_offsets(
      const std::string& group_id, const std::optional<std::vector<topic_partition>>& tps = std::nullopt) const {
    std::lock_guard lk(mu_);
    auto it = groups_.find(group_id);
    if (it == groups_.end()) return {};
    const auto& all = it->second->offsets();
    if (!tps) return all;
    std::map<topic_partition, offset_and_metadata> out;
    for (const auto& tp : *tps)
      if (auto o = all.find(tp); o != all.end()) out.insert(*o);
    return out;
  }

  /// Per partition: committed offset, high watermark and lag, for every partition the group
  /// has committed or is assigned (assignments decoded for the consumer protocol).
  result<std::vector<partition_lag>> lag(const std::string& group_id) const {
    std::set<topic_partition> tps;
    std::map<topic_partition, offset_and_metadata> committed;
    {
      std::lock_guard lk(mu_);
      auto it = groups_.find(group_id);
      if (it == groups_.end()) return make_error(errc::group_id_not_found, "group '{}' does not exist", group_id);
      committed = it->second->offsets();
      for (const auto& [tp, _] : committed) tps.insert(tp);
      for (auto& tp : it->second->assigned_partitions()) tps.insert(tp);
    }
    std::vector<partition_lag> out;
    for (const auto& tp : tps) {
      auto bounds = backend_.source().bounds(tp);
      if (!bounds) continue;  // the topic was deleted (its commits stay until they expire), or no leader
      partition_lag l;
      l.tp = tp;
      l.log_end = bounds->high_watermark;
      if (auto c = committed.find(tp); c != committed.end()) {
        l.committed = c->second.off;
        l.lag = std::max<std::int64_t>(0, l.log_end - c->second.off);
      } else {
        l.lag = l.log_end - bounds->log_start;
      }
      out.push_back(std::move(l));
    }
    return out;
  }

  // ------------------------------------------------------------------ administration

  result<group_description> describe_group(const std::string& group_id) const {
    std::lock_guard lk(mu_);
    auto it = groups_.find(group_id);
    if (it == groups_.end()) return make_error(errc::group_id_not_found, "group '{}' does not exist", group_id);
    return it->second->describe();
  }

  std::vector<group_listing> list_groups() const {
    std::lock_guard lk(mu_);
    std::vector<group_listing> out;
    for (const auto& [id, g] : groups_) out.push_back({id, g->state(), g->protocol_type()});
    return out;
  }

  /// Sets committed offsets of a group without members (kafka-consumer-groups --reset-offsets).
  /// non_empty_group while the group has members.
  result<void> alter_offsets(const std::string& group_id,
                             const std::map<topic_partition, offset_and_metadata>& offsets) {
    {
      std::lock_guard lk(mu_);
      if (auto* g = find_group(group_id); g && g->member_count() > 0)
        return make_error(errc::non_empty_group,
                          "group '{}' has {} active member(s) ({}); offsets can be reset only when it has none",
                          group_id, g->member_count(), group_state_name(g->state()));
    }
    offset_commit_request req;
    req.group_id = group_id;
    req.offsets = offsets;
    return commit_offsets(req);
  }

  /// Deletes a group without members and its committed offsets (tombstones).
  /// group_id_not_found, non_empty_group.
  result<void> delete_group(const std::string& group_id) {
    std::lock_guard lk(mu_);
    auto it = groups_.find(group_id);
    if (it == groups_.end()) return make_error(errc::group_id_not_found, "group '{}' does not exist", group_id);
    if (it->second->member_count() > 0)
      return make_error(errc::non_empty_group, "group '{}' has {} active member(s)", group_id,
                        it->second->member_count());
    std::vector<topic_partition> tps;
    for (const auto& [tp, _] : it->second->offsets()) tps.push_back(tp);
    BROOK_TRY(store_->append_tombstones(group_id, tps, true, now()));
    groups_.erase(it);
    return ok();
  }

  // ------------------------------------------------------------------ time

  /// Applies every timeout that is due at the clock's current time: in-process liveness
  /// and poll intervals, session expiry, the end of a join phase (rebalance timeout or
  /// initial delay), topic metadata changes of subscribed topics, offsets retention.
  /// Returns the first storage error met (the pass still completes).
  result<void> tick() {
    group_completions out;
    result<void> first = ok();
    {
      std::lock_guard lk(mu_);
      const timestamp_ms t = now();
      const std::uint64_t mv = backend_.source().metadata_version();
      const bool metadata_changed = mv != seen_metadata_version_;
      seen_metadata_version_ = mv;
      for (auto& [_, g] : groups_) g->tick(t, metadata_changed, out);
      if (t >= next_retention_check_) {
        next_retention_check_ = t + cfg_.offsets_retention_check_interval.count();
        if (auto r = expire_offsets(t); !r && first) first = r.error();
      }
    }
    out.run();
    return first;
  }

  /// Runs tick() on a thread owned by the coordinator, at each next deadline (and at least
  /// every metadata_check_interval) until stop().
  void start() {
    stop();
    std::lock_guard lk(timer_mu_);
    timer_stop_ = false;
    timer_ = std::thread([this] { run_timer(); });
  }
  void stop() {
    {
      std::lock_guard lk(timer_mu_);
      timer_stop_ = true;
    }
    timer_cv_.notify_all();
    if (timer_.joinable()) timer_.join();
  }

 private:
  group_coordinator(std::unique_ptr<coordinator_backend> owned, coordinator_backend& backend, coordinator_config cfg,
                    std::unique_ptr<offset_store> store)
      : owned_backend_(std::move(owned)),
        backend_(backend),
        cfg_(cfg),
        clock_(backend.clock()),
        store_(std::move(store)),
        services_{cfg_, *clock_, backend.source(), *store_, ids_} {
    seen_metadata_version_ = backend_.source().metadata_version();
    next_retention_check_ = now() + cfg_.offsets_retention_check_interval.count();
  }

  static result<std::unique_ptr<group_coordinator>> open_with(std::unique_ptr<coordinator_backend> owned,
                                                              coordinator_backend& backend, coordinator_config cfg) {
    if (cfg.group_min_session_timeout > cfg.group_max_session_timeout)
      return make_error(errc::invalid_config, "group.min.session.timeout.ms {} exceeds group.max.session.timeout.ms {}",
                        cfg.group_min_session_timeout.count(), cfg.group_max_session_timeout.count());
    BROOK_TRY_ASSIGN(auto store, offset_store::open(backend, cfg.offsets_topic_num_partitions));
    std::unique_ptr<group_coordinator> c(new group_coordinator(std::move(owned), backend, cfg, std::move(store)));
    BROOK_TRY(c->load());
    return c;
  }

  timestamp_ms now() const { return clock_->now_ms(); }

  void run_timer() {
    std::unique_lock l(timer_mu_);
    while (!timer_stop_) {
      l.unlock();
      (void)tick();
      const std::int64_t wait_ms =
          std::clamp<std::int64_t>(next_deadline() - now(), 1, cfg_.metadata_check_interval.count());
      l.lock();
      if (timer_stop_) break;
      timer_cv_.wait_for(l, std::chrono::milliseconds(wait_ms), [&] { return timer_stop_ || timer_poke_; });
      timer_poke_ = false;
    }
  }

  void wake_timer() {
    {
      std::lock_guard lk(timer_mu_);
      timer_poke_ = true;
    }
    timer_cv_.notify_all();
  }

  /// The earliest time tick() has something to do.
  timestamp_ms next_deadline() const {
    std::lock_guard lk(mu_);
    timestamp_ms next = next_retention_check_;
    for (const auto& [_, g] : groups_) next = g->next_deadline(next);
    return next;
  }

  result<void> load() {
    BROOK_TRY_ASSIGN(auto stored, store_->load());
    for (auto& [id, sg] : stored) {
      classic_group& g = create_group(id);
      g.offsets() = std::move(sg.offsets);
      // Members of a previous process cannot come back: the group restarts Empty. Say so
      // in the stored metadata too, so tools reading the directory see no stale members.
      if (sg.metadata && g.restore(*sg.metadata) && !backend_.read_only()) BROOK_TRY(g.store());
    }
    return ok();
  }

  static result<void> validate_group_id(const std::string& id) {
    if (id.empty()) return make_error(errc::invalid_group_id, "the group id is empty");
    return ok();
  }

  static error unknown_member(const std::string& group_id, const std::string& member_id) {
    return make_error(errc::unknown_member_id, "group '{}' has no member '{}'", group_id, member_id);
  }

  /// A join's checks that do not depend on the group.
  result<void> check_join(const join_group_request& req) const {
    BROOK_TRY(validate_group_id(req.group_id));
    if (req.session_timeout < cfg_.group_min_session_timeout || req.session_timeout > cfg_.group_max_session_timeout)
      return make_error(errc::invalid_session_timeout, "session.timeout.ms {} is outside [{}, {}]",
                        req.session_timeout.count(), cfg_.group_min_session_timeout.count(),
                        cfg_.group_max_session_timeout.count());
    if (req.protocol_type.empty() || req.protocols.empty())
      return make_error(errc::inconsistent_group_protocol, "a join needs a protocol type and protocols");
    if (req.group_instance_id && req.group_instance_id->empty())
      return make_error(errc::invalid_argument, "group.instance.id is empty");
    return ok();
  }

  /// A commit's offsets, each checked before anything is written.
  result<void> check_offsets(const std::map<topic_partition, offset_and_metadata>& offsets) const {
    for (const auto& [tp, om] : offsets) {
      if (om.off.value() < 0)
        return make_error(errc::invalid_argument, "{}-{}: offset {} is negative", tp.topic, tp.partition, om.off);
      if (om.metadata.size() > cfg_.offset_metadata_max_bytes)
        return make_error(errc::offset_metadata_too_large, "{}-{}: metadata of {} bytes exceeds {}", tp.topic,
                          tp.partition, om.metadata.size(), cfg_.offset_metadata_max_bytes);
      BROOK_TRY_ASSIGN(const std::int32_t n, backend_.source().partition_count(tp.topic));
      if (tp.partition.value() < 0 || tp.partition.value() >= n)
        return make_error(errc::unknown_topic_or_partition, "no partition {}-{}: the topic has {}", tp.topic,
                          tp.partition, n);
    }
    return ok();
  }

  /// The group a commit goes to, after its fencing checks (created for a simple commit).
  result<classic_group*> group_for_commit(const offset_commit_request& req) {
    const bool simple = req.generation.value() < 0 && req.member_id.empty();
    classic_group* g = find_group(req.group_id);
    if (!g) {
      if (!simple)
        return make_error(errc::illegal_generation, "group '{}' does not exist; generation {} is stale", req.group_id,
                          req.generation.value());
      return &create_group(req.group_id);
    }
    if (simple && g->state() == group_state::empty) return g;  // a commit outside group management
    BROOK_TRY(g->check_commit(req.generation, req.member_id, req.group_instance_id));
    return g;
  }

  classic_group* find_group(const std::string& id) {
    auto it = groups_.find(id);
    return it == groups_.end() ? nullptr : it->second.get();
  }

  classic_group& create_group(const std::string& id) {
    auto& slot = groups_[id];
    if (!slot) slot = std::make_unique<classic_group>(id, services_);
    return *slot;
  }

  /// offsets.retention.minutes (KIP-211): offsets of a consumer group expire once it has
  /// been Empty for the retention period; offsets committed outside group management expire
  /// by their commit time; a Stable consumer group's offsets of topics it no longer
  /// subscribes to expire by commit time. A group left with nothing is forgotten.
  result<void> expire_offsets(timestamp_ms t) {
    const std::int64_t retention =
        std::chrono::duration_cast<std::chrono::milliseconds>(cfg_.offsets_retention).count();
    std::vector<std::string> dead;
    for (auto& [id, g] : groups_) {
      std::vector<topic_partition> expired = expired_offsets(*g, t, retention);
      const bool forget =
          g->state() == group_state::empty && g->member_count() == 0 && expired.size() == g->offsets().size();
      if (expired.empty() && !forget) continue;
      BROOK_TRY(store_->append_tombstones(id, expired, forget, t));
      for (const auto& tp : expired) g->offsets().erase(tp);
      if (forget) dead.push_back(id);
    }
    for (const auto& id : dead) groups_.erase(id);
    return ok();
  }

  static std::vector<topic_partition> expired_offsets(const classic_group& g, timestamp_ms t, std::int64_t retention) {
    std::vector<topic_partition> expired;
    if (g.state() == group_state::empty) {
      for (const auto& [tp, v] : g.offsets()) {
        const timestamp_ms base = g.protocol_type().empty() ? v.commit_timestamp : g.state_timestamp();
        if (t - base >= retention) expired.push_back(tp);
      }
    } else if (g.state() == group_state::stable && g.protocol_type() == "consumer") {
      auto subscribed = g.subscribed_partition_counts();
      for (const auto& [tp, v] : g.offsets())
        if (!subscribed.count(tp.topic) && t - v.commit_timestamp >= retention) expired.push_back(tp);
    }
    return expired;
  }

  std::unique_ptr<coordinator_backend> owned_backend_;  // set when opened on a data_dir
  coordinator_backend& backend_;
  const coordinator_config cfg_;
  std::shared_ptr<const brook::clock> clock_;
  std::unique_ptr<offset_store> store_;
  member_id_source ids_;
  group_services services_;  // refers to the members above
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<classic_group>> groups_;
  std::uint64_t seen_metadata_version_ = 0;
  timestamp_ms next_retention_check_ = 0;

  std::mutex timer_mu_;
  std::condition_variable timer_cv_;
  std::thread timer_;
  bool timer_stop_ = true;
  bool timer_poke_ = false;
};

}  // namespace brook

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
// manual_clock and call tick(); start() runs tick() on a thread the coordinator owns, waking
// at the next deadline (no polling loop).
//
// Committed offsets and group metadata are stored through group/offset_store.hpp and
// replayed on open: a restarted process resumes every group from its committed offsets.
// Groups whose members belonged to the previous process come back Empty, keeping their
// generation.
//
// Decisions where Kafka leaves room (see docs/groups.md):
//   - the protocol is chosen as Kafka does: among the protocols every member supports,
//     each member votes for the first in its own preference list; most votes wins, ties go
//     to the candidate that comes first in the leader's list;
//   - the first member to join is the leader; when it leaves, the earliest-joined member that
//     rejoined takes over;
//   - static members (group.instance.id) that do not rejoin a rebalance stay in the group
//     until their session expires (KIP-345); a static member that rejoins while the group
//     is Stable gets its previous assignment without a rebalance (unless the protocol the
//     group would choose changes), and its old member id is fenced (fenced_instance_id);
//   - no MEMBER_ID_REQUIRED round trip (KIP-394): in-process joins cannot be retried blindly;
//   - an offset commit is all-or-nothing (Kafka answers per partition).
//
// Thread-safety: all members are thread-safe (one mutex per coordinator).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/clock.hpp>
#include <brook/core/types.hpp>
#include <brook/core/result.hpp>
#include <brook/group/consumer_protocol.hpp>
#include <brook/group/group_state.hpp>
#include <brook/group/offset_store.hpp>
#include <brook/group/offsets_topic_records.hpp>
#include <brook/storage/data_dir.hpp>

namespace brook {

struct coordinator_config {
  /// offsets.topic.num.partitions (used when the internal topic is created). Default 50.
  std::int32_t offsets_topic_num_partitions = offset_store::default_partitions;
  /// group.initial.rebalance.delay.ms: how long a new (Empty) group waits for more members. Default 3000.
  std::chrono::milliseconds group_initial_rebalance_delay{3000};
  /// group.min.session.timeout.ms / group.max.session.timeout.ms. Defaults 6000 / 1800000.
  std::chrono::milliseconds group_min_session_timeout{6000};
  std::chrono::milliseconds group_max_session_timeout{1800000};
  /// group.max.size. Default: unbounded (Kafka's default is Integer.MAX_VALUE).
  std::size_t group_max_size = static_cast<std::size_t>(INT32_MAX);
  /// offsets.retention.minutes. Default 10080 (7 days).
  std::chrono::minutes offsets_retention{10080};
  /// offsets.retention.check.interval.ms. Default 600000.
  std::chrono::milliseconds offsets_retention_check_interval{600000};
  /// offset.metadata.max.bytes. Default 4096.
  std::size_t offset_metadata_max_bytes = 4096;
  /// How often tick() looks for topic metadata changes when start() drives it. Default 1000.
  std::chrono::milliseconds metadata_check_interval{1000};
};

/// An in-process member's liveness, shared between the member and the coordinator.
/// Thread-safety: atomics; any thread.
struct member_liveness {
  std::atomic<bool> alive{true};            ///< cleared when the member stops (or simulates a crash)
  std::atomic<bool> in_poll{false};         ///< the member is inside poll()
  std::atomic<std::int64_t> last_poll_ms{0};  ///< clock time the member last entered or left poll()
  std::atomic<bool> rejoin_needed{false};   ///< set by the coordinator: a rebalance began or the member was removed
};

struct group_protocol {
  std::string name;                 ///< e.g. "range"
  std::vector<std::byte> metadata;  ///< e.g. a consumer-protocol subscription
};

struct join_group_request {
  std::string group_id{};
  std::string member_id{};                          ///< empty for a new member
  std::optional<std::string> group_instance_id{};   ///< static membership
  std::string client_id = "brook";
  std::chrono::milliseconds session_timeout{45000};
  std::chrono::milliseconds rebalance_timeout{300000};  ///< the consumer's max.poll.interval.ms
  std::string protocol_type = "consumer";
  std::vector<group_protocol> protocols{};          ///< in preference order
  std::shared_ptr<member_liveness> liveness{};      ///< in-process members; null: the member heartbeats
};

struct join_group_member {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::vector<std::byte> metadata;  ///< the member's metadata for the chosen protocol
};

struct join_group_response {
  std::int32_t generation = -1;
  std::string protocol_type;
  std::string protocol_name;
  std::string leader;
  std::string member_id;
  std::vector<join_group_member> members;  ///< filled for the leader only
};

struct sync_group_request {
  std::string group_id{};
  std::int32_t generation = -1;
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::map<std::string, std::vector<std::byte>> assignments{};  ///< the leader's: member id -> assignment
};

struct offset_and_metadata {
  offset off{0};
  std::int32_t leader_epoch = -1;
  std::string metadata;
};

struct offset_commit_request {
  std::string group_id{};
  std::int32_t generation = -1;  ///< -1 with an empty member id: a commit outside group management
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::map<topic_partition, offset_and_metadata> offsets{};
};

struct committed_offset {
  offset off{0};
  std::int32_t leader_epoch = -1;
  std::string metadata;
  timestamp_ms commit_timestamp = -1;
};

struct member_description {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::vector<std::byte> metadata;    ///< for the chosen protocol
  std::vector<std::byte> assignment;  ///< from the last completed rebalance
};

struct group_description {
  std::string group_id;
  group_state state = group_state::dead;
  std::string protocol_type;
  std::string protocol_name;
  std::int32_t generation = 0;
  std::string leader;
  std::vector<member_description> members;
};

struct group_listing {
  std::string group_id;
  group_state state;
  std::string protocol_type;
};

struct partition_lag {
  topic_partition tp;
  std::optional<offset> committed;
  offset log_end{0};  ///< the high watermark: what a consumer can read
  std::int64_t lag = 0;  ///< log_end - committed (log_end - log start without a commit)
};

class group_coordinator {
 public:
  group_coordinator(const group_coordinator&) = delete;
  group_coordinator& operator=(const group_coordinator&) = delete;
  ~group_coordinator() { stop(); }

  /// Opens the coordinator of `dd`: the internal offsets topic is created if missing and
  /// replayed. The clock is the data directory's.
  static result<std::unique_ptr<group_coordinator>> open(data_dir& dd, coordinator_config cfg = {}) {
    if (cfg.group_min_session_timeout > cfg.group_max_session_timeout)
      return make_error(errc::invalid_config, "group.min.session.timeout.ms {} exceeds group.max.session.timeout.ms {}",
                        cfg.group_min_session_timeout.count(), cfg.group_max_session_timeout.count());
    auto store = offset_store::open(dd, cfg.offsets_topic_num_partitions);
    if (!store) return store.error();
    std::unique_ptr<group_coordinator> c(new group_coordinator(dd, cfg, std::move(*store)));
    BROOK_TRY(c->load());
    return c;
  }

  data_dir& dir() noexcept { return dd_; }
  const coordinator_config& config() const noexcept { return cfg_; }
  const std::shared_ptr<const brook::clock>& clock() const noexcept { return clock_; }

  // ------------------------------------------------------------------ membership

  using join_callback = std::function<void(result<join_group_response>)>;
  using sync_callback = std::function<void(result<std::vector<std::byte>>)>;

  /// JoinGroup. `done` runs once: at once on an error or when the join phase can complete
  /// now, otherwise when the last member joins or the rebalance timeout passes (tick()).
  /// Returns the member id the member has from now on (empty if the request was refused),
  /// so a member can leave before its join completes (the role of KIP-394's early id).
  /// Errors: invalid_group_id, invalid_session_timeout, inconsistent_group_protocol,
  /// unknown_member_id, fenced_instance_id, group_max_size_reached.
  std::string join_group(join_group_request req, join_callback done) {
    completions out;
    std::string id;
    {
      std::lock_guard lk(mu_);
      id = handle_join(std::move(req), std::move(done), out);
    }
    out.run();
    wake_timer();
    return id;
  }

  /// SyncGroup. The leader's call carries the assignment and completes every member's sync.
  /// Errors: unknown_member_id, illegal_generation, rebalance_in_progress, fenced_instance_id.
  void sync_group(sync_group_request req, sync_callback done) {
    completions out;
    {
      std::lock_guard lk(mu_);
      handle_sync(std::move(req), std::move(done), out);
    }
    out.run();
  }

  /// Heartbeat. rebalance_in_progress tells the member to rejoin.
  result<void> heartbeat(const std::string& group_id, std::int32_t generation, const std::string& member_id,
                         const std::optional<std::string>& group_instance_id = std::nullopt) {
    std::lock_guard lk(mu_);
    auto* g = find_group(group_id);
    if (!g) return make_error(errc::unknown_member_id, "group '{}' has no member '{}'", group_id, member_id);
    BROOK_TRY(check_member(*g, member_id, group_instance_id));
    member& m = g->members.at(member_id);
    m.last_heartbeat = now();
    switch (g->state) {
      case group_state::empty:
      case group_state::dead:
        return make_error(errc::unknown_member_id, "group '{}' has no member '{}'", group_id, member_id);
      case group_state::preparing_rebalance:
        return make_error(errc::rebalance_in_progress, "group '{}' is rebalancing; rejoin", group_id);
      case group_state::completing_rebalance:
      case group_state::stable:
        if (generation != g->generation)
          return make_error(errc::illegal_generation, "group '{}' is at generation {}, not {}", group_id,
                            g->generation, generation);
        return ok();
    }
    return ok();
  }

  /// LeaveGroup for one member (by member id, or by group.instance.id when member_id is empty).
  result<void> leave_group(const std::string& group_id, const std::string& member_id,
                           const std::optional<std::string>& group_instance_id = std::nullopt) {
    completions out;
    result<void> r = ok();
    {
      std::lock_guard lk(mu_);
      r = handle_leave(group_id, member_id, group_instance_id, out);
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
    for (const auto& [tp, om] : req.offsets) {
      if (om.off.value() < 0)
        return make_error(errc::invalid_argument, "{}-{}: offset {} is negative", tp.topic, tp.partition, om.off);
      if (om.metadata.size() > cfg_.offset_metadata_max_bytes)
        return make_error(errc::offset_metadata_too_large, "{}-{}: metadata of {} bytes exceeds {}", tp.topic,
                          tp.partition, om.metadata.size(), cfg_.offset_metadata_max_bytes);
      auto part = dd_.get_partition(tp.topic, tp.partition);
      if (!part) return part.error();
    }
    group* g = find_group(req.group_id);
    if (!g) {
      if (req.generation >= 0 || !req.member_id.empty())
        return make_error(errc::illegal_generation, "group '{}' does not exist; generation {} is stale",
                          req.group_id, req.generation);
      g = &create_group(req.group_id);
    } else if (req.generation < 0 && req.member_id.empty() && g->state == group_state::empty) {
      // a commit outside group management
    } else {
      // Fencing first: a removed member or an old generation is told so, even mid-rebalance.
      BROOK_TRY(check_member(*g, req.member_id, req.group_instance_id));
      if (req.generation != g->generation)
        return make_error(errc::illegal_generation, "group '{}' is at generation {}, the commit carries {}",
                          req.group_id, g->generation, req.generation);
      g->members.at(req.member_id).last_heartbeat = now();
      if (g->state == group_state::completing_rebalance)
        return make_error(errc::rebalance_in_progress, "group '{}' is completing a rebalance", req.group_id);
    }
    if (req.offsets.empty()) return ok();
    const timestamp_ms t = now();
    std::vector<std::pair<topic_partition, offset_commit_value>> values;
    for (const auto& [tp, om] : req.offsets) {
      offset_commit_value v;
      v.offset = om.off.value();
      v.leader_epoch = om.leader_epoch;
      v.metadata = om.metadata;
      v.commit_timestamp = t;
      values.emplace_back(tp, std::move(v));
    }
    BROOK_TRY(store_->append_offsets(req.group_id, values, t));
    for (auto& [tp, v] : values) g->offsets[tp] = std::move(v);
    return ok();
  }

  /// OffsetFetch: the committed offsets of the group (of `tps`, or all of them). Partitions
  /// without a commit are absent. An unknown group has none.
  std::map<topic_partition, committed_offset> fetch_offsets(
      const std::string& group_id, const std::optional<std::vector<topic_partition>>& tps = std::nullopt) const {
    std::lock_guard lk(mu_);
    std::map<topic_partition, committed_offset> out;
    auto it = groups_.find(group_id);
    if (it == groups_.end()) return out;
    auto add = [&](const topic_partition& tp, const offset_commit_value& v) {
      out[tp] = committed_offset{offset(v.offset), v.leader_epoch, v.metadata, v.commit_timestamp};
    };
    if (!tps) {
      for (const auto& [tp, v] : it->second.offsets) add(tp, v);
    } else {
      for (const auto& tp : *tps)
        if (auto o = it->second.offsets.find(tp); o != it->second.offsets.end()) add(tp, o->second);
    }
    return out;
  }

  /// Per partition: committed offset, high watermark and lag, for every partition the group
  /// has committed or is assigned (assignments decoded for the consumer protocol).
  result<std::vector<partition_lag>> lag(const std::string& group_id) const {
    std::set<topic_partition> tps;
    std::map<topic_partition, committed_offset> committed;
    {
      std::lock_guard lk(mu_);
      auto it = groups_.find(group_id);
      if (it == groups_.end()) return make_error(errc::group_id_not_found, "group '{}' does not exist", group_id);
      for (const auto& [tp, v] : it->second.offsets) {
        tps.insert(tp);
        committed[tp] = committed_offset{offset(v.offset), v.leader_epoch, v.metadata, v.commit_timestamp};
      }
      if (it->second.protocol_type == "consumer")
        for (const auto& [_, m] : it->second.members)
          if (auto a = decode_assignment(m.assignment); a)
            for (auto& tp : *a) tps.insert(tp);
    }
    std::vector<partition_lag> out;
    for (const auto& tp : tps) {
      partition_lag l;
      l.tp = tp;
      auto part = dd_.get_partition(tp.topic, tp.partition);
      if (!part) continue;  // the topic was deleted; its commits stay until they expire
      l.log_end = (*part)->high_watermark();
      if (auto c = committed.find(tp); c != committed.end()) {
        l.committed = c->second.off;
        l.lag = std::max<std::int64_t>(0, l.log_end.value() - c->second.off.value());
      } else {
        l.lag = l.log_end.value() - (*part)->log_start_offset().value();
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
    const group& g = it->second;
    group_description d;
    d.group_id = g.id;
    d.state = g.state;
    d.protocol_type = g.protocol_type;
    d.protocol_name = g.protocol_name.value_or("");
    d.generation = g.generation;
    d.leader = g.leader.value_or("");
    for (const auto& [_, m] : g.members) {
      member_description md;
      md.member_id = m.id;
      md.group_instance_id = m.instance_id;
      md.client_id = m.client_id;
      if (g.protocol_name) md.metadata = m.metadata_for(*g.protocol_name);
      md.assignment = m.assignment;
      d.members.push_back(std::move(md));
    }
    return d;
  }

  std::vector<group_listing> list_groups() const {
    std::lock_guard lk(mu_);
    std::vector<group_listing> out;
    for (const auto& [id, g] : groups_) out.push_back({id, g.state, g.protocol_type});
    return out;
  }

  /// Sets committed offsets of a group without members (kafka-consumer-groups --reset-offsets).
  /// non_empty_group while the group has members.
  result<void> alter_offsets(const std::string& group_id, const std::map<topic_partition, offset_and_metadata>& offsets) {
    {
      std::lock_guard lk(mu_);
      if (auto* g = find_group(group_id); g && !g->members.empty())
        return make_error(errc::non_empty_group,
                          "group '{}' has {} active member(s) ({}); offsets can be reset only when it has none",
                          group_id, g->members.size(), group_state_name(g->state));
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
    if (!it->second.members.empty())
      return make_error(errc::non_empty_group, "group '{}' has {} active member(s)", group_id,
                        it->second.members.size());
    std::vector<topic_partition> tps;
    for (const auto& [tp, _] : it->second.offsets) tps.push_back(tp);
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
    completions out;
    result<void> first = ok();
    {
      std::lock_guard lk(mu_);
      const timestamp_ms t = now();
      const std::uint64_t mv = dd_.metadata_version();
      const bool metadata_changed = mv != seen_metadata_version_;
      seen_metadata_version_ = mv;
      std::vector<std::string> ids;
      for (const auto& [id, _] : groups_) ids.push_back(id);
      for (const auto& id : ids) {
        auto it = groups_.find(id);
        if (it == groups_.end()) continue;
        group& g = it->second;
        expire_members(g, t, out);
        if (g.state == group_state::preparing_rebalance) {
          if (g.initial_delay_end && t >= *g.initial_delay_end) end_initial_delay(g, t);
          if (!g.initial_delay_end && t >= g.join_deadline) complete_join(g, out);
          else try_complete_join(g, out);
        }
        if (metadata_changed && (g.state == group_state::stable || g.state == group_state::completing_rebalance) &&
            subscribed_partition_counts(g) != g.subscribed_counts)
          prepare_rebalance(g, "subscribed topic metadata changed", out);
      }
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
    timer_ = std::thread([this] {
      std::unique_lock l(timer_mu_);
      while (!timer_stop_) {
        l.unlock();
        (void)tick();
        const std::int64_t wait_ms = std::clamp<std::int64_t>(next_deadline() - now(), 1,
                                                              cfg_.metadata_check_interval.count());
        l.lock();
        if (timer_stop_) break;
        timer_cv_.wait_for(l, std::chrono::milliseconds(wait_ms), [&] { return timer_stop_ || timer_poke_; });
        timer_poke_ = false;
      }
    });
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
  struct member {
    std::string id;
    std::optional<std::string> instance_id;
    std::string client_id;
    std::int64_t session_timeout_ms = 45000;
    std::int64_t rebalance_timeout_ms = 300000;
    std::vector<group_protocol> protocols;
    std::vector<std::byte> assignment;
    join_callback awaiting_join;
    sync_callback awaiting_sync;
    timestamp_ms last_heartbeat = 0;
    std::shared_ptr<member_liveness> liveness;
    std::uint64_t join_order = 0;

    std::vector<std::byte> metadata_for(const std::string& protocol) const {
      for (const auto& p : protocols)
        if (p.name == protocol) return p.metadata;
      return {};
    }
    bool same_protocols(const std::vector<group_protocol>& other) const {
      if (other.size() != protocols.size()) return false;
      for (std::size_t i = 0; i < other.size(); ++i)
        if (other[i].name != protocols[i].name || other[i].metadata != protocols[i].metadata) return false;
      return true;
    }
  };

  struct group {
    std::string id;
    group_state state = group_state::empty;
    std::int32_t generation = 0;
    std::string protocol_type;
    std::optional<std::string> protocol_name;
    std::optional<std::string> leader;
    std::map<std::string, member> members;
    std::map<std::string, std::string> static_members;  // instance id -> member id
    timestamp_ms state_timestamp = 0;
    timestamp_ms join_deadline = 0;
    std::optional<timestamp_ms> initial_delay_end;
    timestamp_ms initial_delay_budget_end = 0;
    std::size_t members_at_delay_start = 0;
    std::map<std::string, std::int32_t> subscribed_counts;
    std::map<topic_partition, offset_commit_value> offsets;
  };

  /// Callbacks to run after the lock is released.
  struct completions {
    std::vector<std::function<void()>> fns;
    void add(std::function<void()> f) { fns.push_back(std::move(f)); }
    void run() {
      for (auto& f : fns) f();
      fns.clear();
    }
  };

  group_coordinator(data_dir& dd, coordinator_config cfg, std::unique_ptr<offset_store> store)
      : dd_(dd), cfg_(cfg), clock_(dd.clock()), store_(std::move(store)), rng_(std::random_device{}()) {
    seen_metadata_version_ = dd_.metadata_version();
    next_retention_check_ = now() + cfg_.offsets_retention_check_interval.count();
  }

  timestamp_ms now() const { return clock_->now_ms(); }

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
    for (const auto& [_, g] : groups_) {
      if (g.state == group_state::preparing_rebalance)
        next = std::min(next, g.initial_delay_end ? *g.initial_delay_end : g.join_deadline);
      for (const auto& [__, m] : g.members) {
        // The same exemptions as expire_members(): a waiting member cannot expire.
        const bool waiting = (m.awaiting_join && g.state == group_state::preparing_rebalance) ||
                             static_cast<bool>(m.awaiting_sync);
        if (waiting) continue;
        if (m.liveness && m.liveness->alive.load()) {
          if (!m.liveness->in_poll.load()) next = std::min(next, m.liveness->last_poll_ms.load() + m.rebalance_timeout_ms);
        } else {
          next = std::min(next, m.last_heartbeat + m.session_timeout_ms);
        }
      }
    }
    return next;
  }

  result<void> load() {
    auto stored = store_->load();
    if (!stored) return stored.error();
    const timestamp_ms t = now();
    for (auto& [id, sg] : *stored) {
      group& g = create_group(id);
      g.offsets = std::move(sg.offsets);
      if (sg.metadata) {
        g.generation = sg.metadata->generation;
        g.protocol_type = sg.metadata->protocol_type;
        g.state_timestamp = sg.metadata->members.empty() && sg.metadata->current_state_timestamp >= 0
                                ? sg.metadata->current_state_timestamp
                                : t;
        // Members of a previous process cannot come back: the group restarts Empty. Say so
        // in the stored metadata too, so tools reading the directory see no stale members.
        if (!sg.metadata->members.empty() && !dd_.read_only()) BROOK_TRY(store_group(g));
      } else {
        g.state_timestamp = t;
      }
    }
    return ok();
  }

  static result<void> validate_group_id(const std::string& id) {
    if (id.empty()) return make_error(errc::invalid_group_id, "the group id is empty");
    return ok();
  }

  group* find_group(const std::string& id) {
    auto it = groups_.find(id);
    return it == groups_.end() ? nullptr : &it->second;
  }

  group& create_group(const std::string& id) {
    group& g = groups_[id];
    g.id = id;
    g.state = group_state::empty;
    g.state_timestamp = now();
    return g;
  }

  void set_state(group& g, group_state s) {
    g.state = s;
    g.state_timestamp = now();
  }

  /// Checks a request's member id (and instance id) against the group.
  result<void> check_member(const group& g, const std::string& member_id,
                            const std::optional<std::string>& instance_id) const {
    if (instance_id) {
      auto s = g.static_members.find(*instance_id);
      if (s != g.static_members.end() && s->second != member_id)
        return make_error(errc::fenced_instance_id, "group '{}': instance '{}' is now member '{}', not '{}'", g.id,
                          *instance_id, s->second, member_id);
    }
    if (!g.members.count(member_id))
      return make_error(errc::unknown_member_id, "group '{}' has no member '{}'", g.id, member_id);
    return ok();
  }

  std::string new_member_id(const std::string& client_id) {
    std::uniform_int_distribution<std::uint64_t> d;
    // Kafka's ids are clientId-UUID; brook puts a sequence number first so members sort in
    // join order (range and roundrobin order members by id), then random bits.
    return fmt::format("{}-{:06}-{:016x}", client_id.empty() ? "member" : client_id, ++member_seq_, d(rng_));
  }

  /// The protocols every member supports (in the order of `leader_first`'s list).
  static std::vector<std::string> candidate_protocols(const group& g, const member* leader_first) {
    std::vector<std::string> out;
    if (g.members.empty()) return out;
    const member& ref = leader_first ? *leader_first : g.members.begin()->second;
    for (const auto& p : ref.protocols) {
      bool all = true;
      for (const auto& [_, m] : g.members) {
        bool has = std::any_of(m.protocols.begin(), m.protocols.end(), [&](const auto& q) { return q.name == p.name; });
        if (!has) {
          all = false;
          break;
        }
      }
      if (all) out.push_back(p.name);
    }
    return out;
  }

  std::string select_protocol(const group& g, const member* leader) const {
    auto candidates = candidate_protocols(g, leader);
    std::map<std::string, int> votes;
    for (const auto& [_, m] : g.members)
      for (const auto& p : m.protocols)
        if (std::find(candidates.begin(), candidates.end(), p.name) != candidates.end()) {
          ++votes[p.name];
          break;
        }
    std::string best = candidates.front();
    for (const auto& c : candidates)
      if (votes[c] > votes[best]) best = c;
    return best;
  }

  std::string handle_join(join_group_request req, join_callback done, completions& out) {
    auto fail = [&](brook::error e) {
      out.add([done, e] { done(e); });
      return std::string();
    };
    if (auto r = validate_group_id(req.group_id); !r) return fail(r.error());
    if (req.session_timeout < cfg_.group_min_session_timeout || req.session_timeout > cfg_.group_max_session_timeout)
      return fail(make_error(errc::invalid_session_timeout, "session.timeout.ms {} is outside [{}, {}]",
                             req.session_timeout.count(), cfg_.group_min_session_timeout.count(),
                             cfg_.group_max_session_timeout.count()));
    if (req.protocol_type.empty() || req.protocols.empty())
      return fail(make_error(errc::inconsistent_group_protocol, "a join needs a protocol type and protocols"));
    if (req.group_instance_id && req.group_instance_id->empty())
      return fail(make_error(errc::invalid_argument, "group.instance.id is empty"));
    group* gp = find_group(req.group_id);
    if (!gp) {
      if (!req.member_id.empty())
        return fail(make_error(errc::unknown_member_id, "group '{}' has no member '{}'", req.group_id, req.member_id));
      gp = &create_group(req.group_id);
    }
    group& g = *gp;
    // Protocol compatibility with the members already there.
    if (!g.members.empty()) {
      if (g.protocol_type != req.protocol_type)
        return fail(make_error(errc::inconsistent_group_protocol, "group '{}' uses protocol type '{}', not '{}'",
                               g.id, g.protocol_type, req.protocol_type));
      auto cands = candidate_protocols(g, nullptr);
      // A known member re-joining may change its protocols; check against the others.
      bool common = false;
      for (const auto& p : req.protocols)
        if (std::find(cands.begin(), cands.end(), p.name) != cands.end()) common = true;
      if (!common && !(g.members.size() == 1 && g.members.count(req.member_id)))
        return fail(make_error(errc::inconsistent_group_protocol,
                               "group '{}': none of the member's protocols is supported by every member", g.id));
    }

    if (req.member_id.empty()) {
      if (req.group_instance_id) {
        auto s = g.static_members.find(*req.group_instance_id);
        if (s != g.static_members.end()) return rejoin_static(g, s->second, std::move(req), std::move(done), out);
      }
      if (g.members.size() >= cfg_.group_max_size)
        return fail(make_error(errc::group_max_size_reached, "group '{}' has reached group.max.size {}", g.id,
                               cfg_.group_max_size));
      member m;
      m.id = new_member_id(req.client_id);
      fill_member(m, req);
      m.awaiting_join = std::move(done);
      m.join_order = ++join_seq_;
      m.last_heartbeat = now();
      const std::string id = m.id;
      if (m.instance_id) g.static_members[*m.instance_id] = id;
      if (g.members.empty()) g.protocol_type = req.protocol_type;
      if (!g.leader) g.leader = id;
      g.members.emplace(id, std::move(m));
      if (g.state == group_state::preparing_rebalance) {
        try_complete_join(g, out);
      } else {
        prepare_rebalance(g, fmt::format("member {} joined", id), out);
      }
      return id;
    }

    if (auto r = check_member(g, req.member_id, req.group_instance_id); !r) return fail(r.error());
    member& m = g.members.at(req.member_id);
    const std::string id = m.id;
    m.last_heartbeat = now();
    switch (g.state) {
      case group_state::empty:
      case group_state::dead:
        return fail(make_error(errc::unknown_member_id, "group '{}' has no member '{}'", g.id, req.member_id));
      case group_state::preparing_rebalance:
        fill_member(m, req);
        replace_join_callback(m, std::move(done), out);
        try_complete_join(g, out);
        return id;
      case group_state::completing_rebalance:
        if (m.same_protocols(req.protocols)) {
          // The member lost our answer: give it again.
          m.awaiting_join = std::move(done);
          answer_join(g, m, out);
          return id;
        }
        fill_member(m, req);
        m.awaiting_join = std::move(done);
        prepare_rebalance(g, fmt::format("member {} changed its protocols", m.id), out);
        return id;
      case group_state::stable:
        if (g.leader != m.id && m.same_protocols(req.protocols)) {
          m.awaiting_join = std::move(done);
          answer_join(g, m, out);
          return id;
        }
        fill_member(m, req);
        m.awaiting_join = std::move(done);
        prepare_rebalance(g, fmt::format("member {} rejoined{}", m.id,
                                         g.leader == m.id ? " as the leader" : " with new protocols"),
                          out);
        return id;
    }
    return id;
  }

  static void fill_member(member& m, const join_group_request& req) {
    m.instance_id = req.group_instance_id;
    m.client_id = req.client_id;
    m.session_timeout_ms = req.session_timeout.count();
    m.rebalance_timeout_ms = req.rebalance_timeout.count();
    m.protocols = req.protocols;
    if (req.liveness) m.liveness = req.liveness;
  }

  void replace_join_callback(member& m, join_callback done, completions& out) {
    if (m.awaiting_join) {
      auto old = std::move(m.awaiting_join);
      out.add([old] { old(make_error(errc::unknown_member_id, "superseded by a newer join of the same member")); });
    }
    m.awaiting_join = std::move(done);
  }

  /// A static member comes back with a new member id: the old id is fenced.
  std::string rejoin_static(group& g, std::string old_id, join_group_request req, join_callback done,
                            completions& out) {
    member m = std::move(g.members.at(old_id));
    g.members.erase(old_id);
    if (m.awaiting_join) {
      auto cb = std::exchange(m.awaiting_join, nullptr);
      out.add([cb] { cb(make_error(errc::fenced_instance_id, "a newer instance with the same group.instance.id joined")); });
    }
    if (m.awaiting_sync) {
      auto cb = std::exchange(m.awaiting_sync, nullptr);
      out.add([cb] { cb(make_error(errc::fenced_instance_id, "a newer instance with the same group.instance.id joined")); });
    }
    if (m.liveness) m.liveness->rejoin_needed.store(true);
    m.id = new_member_id(req.client_id);
    fill_member(m, req);
    m.liveness = req.liveness;
    m.last_heartbeat = now();
    g.static_members[*m.instance_id] = m.id;
    if (g.leader == old_id) g.leader = m.id;
    const std::string id = m.id;
    auto [it, _] = g.members.emplace(id, std::move(m));
    member& nm = it->second;
    nm.awaiting_join = std::move(done);
    // As Kafka: no rebalance unless the protocol the group would choose changes.
    const member* leader = g.leader ? &g.members.at(*g.leader) : nullptr;
    const bool same = g.protocol_name && !candidate_protocols(g, leader).empty() &&
                      select_protocol(g, leader) == *g.protocol_name;
    if (g.state == group_state::stable && same) {
      // KIP-345: same member back within its session, nothing changed: no rebalance. It
      // syncs with the current generation and gets its previous assignment.
      (void)store_group(g);
      answer_join(g, nm, out, /*as_follower=*/true);
      return id;
    }
    if (g.state == group_state::preparing_rebalance) try_complete_join(g, out);
    else prepare_rebalance(g, fmt::format("static member {} rejoined with new protocols", *nm.instance_id), out);
    return id;
  }

  void prepare_rebalance(group& g, const std::string& /*reason*/, completions& out) {
    if (g.state == group_state::completing_rebalance) {
      for (auto& [_, m] : g.members)
        if (m.awaiting_sync) {
          auto cb = std::move(m.awaiting_sync);
          m.awaiting_sync = nullptr;
          out.add([cb] { cb(make_error(errc::rebalance_in_progress, "the group began another rebalance")); });
        }
    }
    const bool was_empty = g.state == group_state::empty;
    set_state(g, group_state::preparing_rebalance);
    const timestamp_ms t = now();
    std::int64_t max_rebalance = 0;
    for (const auto& [_, m] : g.members) max_rebalance = std::max(max_rebalance, m.rebalance_timeout_ms);
    g.join_deadline = t + max_rebalance;
    g.initial_delay_end.reset();
    if (was_empty && cfg_.group_initial_rebalance_delay.count() > 0) {
      g.initial_delay_end = t + std::min<std::int64_t>(cfg_.group_initial_rebalance_delay.count(), max_rebalance);
      g.initial_delay_budget_end = t + max_rebalance;
      g.members_at_delay_start = g.members.size();
    }
    for (auto& [_, m] : g.members)
      if (!m.awaiting_join && m.liveness) m.liveness->rejoin_needed.store(true);
    dd_.notifier().notify();
    try_complete_join(g, out);
  }

  /// group.initial.rebalance.delay.ms as Kafka's InitialDelayedJoin: when the delay ends and
  /// members kept arriving, wait another delay, within the rebalance timeout.
  void end_initial_delay(group& g, timestamp_ms t) {
    if (g.members.size() > g.members_at_delay_start && t < g.initial_delay_budget_end) {
      g.initial_delay_end = std::min(t + cfg_.group_initial_rebalance_delay.count(), g.initial_delay_budget_end);
      g.members_at_delay_start = g.members.size();
      return;
    }
    g.initial_delay_end.reset();
  }

  void try_complete_join(group& g, completions& out) {
    if (g.state != group_state::preparing_rebalance || g.initial_delay_end) return;
    for (const auto& [_, m] : g.members)
      if (!m.awaiting_join) return;
    complete_join(g, out);
  }

  /// Ends the join phase: members that did not rejoin are removed (static ones stay until
  /// their session expires), a new generation starts.
  void complete_join(group& g, completions& out) {
    g.initial_delay_end.reset();
    std::vector<std::string> gone;
    for (const auto& [id, m] : g.members)
      if (!m.awaiting_join && !m.instance_id) gone.push_back(id);
    for (const auto& id : gone) remove_member(g, id, out);
    bool any_joined = false;
    for (const auto& [_, m] : g.members) any_joined |= static_cast<bool>(m.awaiting_join);
    if (!any_joined) {
      if (g.members.empty()) {
        ++g.generation;
        g.protocol_name.reset();
        g.leader.reset();
        set_state(g, group_state::empty);
        (void)store_group(g);
        return;
      }
      // Only absent static members are left: wait for them (or their session expiry).
      std::int64_t max_rebalance = 0;
      for (const auto& [_, m] : g.members) max_rebalance = std::max(max_rebalance, m.rebalance_timeout_ms);
      g.join_deadline = now() + max_rebalance;
      return;
    }
    ++g.generation;
    // The leader: kept if it rejoined, else the earliest-joined member that did.
    const member* leader = nullptr;
    if (g.leader) {
      auto it = g.members.find(*g.leader);
      if (it != g.members.end() && it->second.awaiting_join) leader = &it->second;
    }
    if (!leader)
      for (const auto& [_, m] : g.members)
        if (m.awaiting_join && (!leader || m.join_order < leader->join_order)) leader = &m;
    g.leader = leader->id;
    g.protocol_name = select_protocol(g, leader);
    g.subscribed_counts = subscribed_partition_counts(g);
    set_state(g, group_state::completing_rebalance);
    const timestamp_ms t = now();
    for (auto& [_, m] : g.members) {
      m.last_heartbeat = t;
      if (m.awaiting_join) answer_join(g, m, out);
    }
  }

  void answer_join(group& g, member& m, completions& out, bool as_follower = false) {
    join_group_response r;
    r.generation = g.generation;
    r.protocol_type = g.protocol_type;
    r.protocol_name = g.protocol_name.value_or("");
    r.leader = g.leader.value_or("");
    r.member_id = m.id;
    if (g.leader == m.id && !as_follower)
      for (const auto& [_, o] : g.members)
        r.members.push_back({o.id, o.instance_id, o.metadata_for(r.protocol_name)});
    auto cb = std::move(m.awaiting_join);
    m.awaiting_join = nullptr;
    out.add([cb, r = std::move(r)]() mutable { cb(std::move(r)); });
  }

  void handle_sync(sync_group_request req, sync_callback done, completions& out) {
    auto fail = [&](brook::error e) { out.add([done, e] { done(e); }); };
    group* g = find_group(req.group_id);
    if (!g) return fail(make_error(errc::unknown_member_id, "group '{}' has no member '{}'", req.group_id, req.member_id));
    if (auto r = check_member(*g, req.member_id, req.group_instance_id); !r) return fail(r.error());
    if (req.generation != g->generation)
      return fail(make_error(errc::illegal_generation, "group '{}' is at generation {}, not {}", g->id, g->generation,
                             req.generation));
    member& m = g->members.at(req.member_id);
    m.last_heartbeat = now();
    switch (g->state) {
      case group_state::empty:
      case group_state::dead:
        return fail(make_error(errc::unknown_member_id, "group '{}' has no member '{}'", g->id, req.member_id));
      case group_state::preparing_rebalance:
        return fail(make_error(errc::rebalance_in_progress, "group '{}' is rebalancing; rejoin", g->id));
      case group_state::stable: {
        auto a = m.assignment;
        out.add([done, a = std::move(a)]() mutable { done(std::move(a)); });
        return;
      }
      case group_state::completing_rebalance:
        if (m.awaiting_sync) {
          auto old = std::move(m.awaiting_sync);
          out.add([old] { old(make_error(errc::unknown_member_id, "superseded by a newer sync of the same member")); });
        }
        m.awaiting_sync = std::move(done);
        if (g->leader == m.id) {
          for (auto& [id, o] : g->members) {
            auto it = req.assignments.find(id);
            o.assignment = it == req.assignments.end() ? std::vector<std::byte>{} : it->second;
          }
          if (auto r = store_group(*g); !r) {
            // The assignment could not be stored: every member rejoins (Kafka resets the group).
            for (auto& [_, o] : g->members) o.assignment.clear();
            prepare_rebalance(*g, "storing the group metadata failed", out);
            return;
          }
          set_state(*g, group_state::stable);
          for (auto& [_, o] : g->members)
            if (o.awaiting_sync) {
              auto cb = std::move(o.awaiting_sync);
              o.awaiting_sync = nullptr;
              out.add([cb, a = o.assignment]() mutable { cb(std::move(a)); });
            }
        }
        return;
    }
  }

  result<void> handle_leave(const std::string& group_id, const std::string& member_id,
                            const std::optional<std::string>& instance_id, completions& out) {
    group* g = find_group(group_id);
    if (!g) return make_error(errc::unknown_member_id, "group '{}' has no member '{}'", group_id, member_id);
    std::string id = member_id;
    if (id.empty() && instance_id) {
      auto s = g->static_members.find(*instance_id);
      if (s == g->static_members.end())
        return make_error(errc::unknown_member_id, "group '{}' has no member with instance id '{}'", group_id,
                          *instance_id);
      id = s->second;
    }
    BROOK_TRY(check_member(*g, id, instance_id));
    remove_member(*g, id, out);
    member_left(*g, fmt::format("member {} left", id), out);
    return ok();
  }

  /// After a member is removed outside a join phase: the others rebalance.
  void member_left(group& g, const std::string& reason, completions& out) {
    switch (g.state) {
      case group_state::stable:
      case group_state::completing_rebalance: prepare_rebalance(g, reason, out); break;
      case group_state::preparing_rebalance: try_complete_join(g, out); break;
      default: break;
    }
    if (g.state == group_state::preparing_rebalance && g.members.empty()) complete_join(g, out);
  }

  void remove_member(group& g, const std::string& id, completions& out) {
    auto it = g.members.find(id);
    if (it == g.members.end()) return;
    member& m = it->second;
    if (m.awaiting_join) {
      auto cb = std::move(m.awaiting_join);
      out.add([cb] { cb(make_error(errc::unknown_member_id, "the member was removed from the group")); });
    }
    if (m.awaiting_sync) {
      auto cb = std::move(m.awaiting_sync);
      out.add([cb] { cb(make_error(errc::unknown_member_id, "the member was removed from the group")); });
    }
    if (m.liveness) m.liveness->rejoin_needed.store(true);
    if (m.instance_id) g.static_members.erase(*m.instance_id);
    if (g.leader == id) g.leader.reset();
    g.members.erase(it);
    if (!g.leader && !g.members.empty()) {
      const member* first = nullptr;
      for (const auto& [_, o] : g.members)
        if (!first || o.join_order < first->join_order) first = &o;
      g.leader = first->id;
    }
    dd_.notifier().notify();
  }

  /// Session and poll-interval expiry.
  void expire_members(group& g, timestamp_ms t, completions& out) {
    std::vector<std::pair<std::string, std::string>> gone;
    for (auto& [id, m] : g.members) {
      if (m.liveness && m.liveness->alive.load()) {
        m.last_heartbeat = t;
        const bool waiting = m.awaiting_join || m.awaiting_sync;
        if (!waiting && !m.liveness->in_poll.load() && t - m.liveness->last_poll_ms.load() > m.rebalance_timeout_ms)
          gone.emplace_back(id, "did not poll within max.poll.interval.ms");
        continue;
      }
      const bool kept_alive = (m.awaiting_join && g.state == group_state::preparing_rebalance) || m.awaiting_sync;
      if (!kept_alive && t - m.last_heartbeat >= m.session_timeout_ms)
        gone.emplace_back(id, "session timed out");
    }
    for (const auto& [id, why] : gone) {
      remove_member(g, id, out);
      member_left(g, fmt::format("member {} {}", id, why), out);
    }
  }

  /// Partition counts of the topics the group's members subscribe to (consumer protocol).
  std::map<std::string, std::int32_t> subscribed_partition_counts(const group& g) const {
    std::map<std::string, std::int32_t> out;
    if (g.protocol_type != "consumer" || !g.protocol_name) return out;
    for (const auto& [_, m] : g.members) {
      auto sub = decode_subscription(m.metadata_for(*g.protocol_name));
      if (!sub) continue;
      for (const auto& t : sub->topics) {
        auto n = dd_.partition_count(t);
        out[t] = n ? *n : -1;
      }
    }
    return out;
  }

  group_metadata_value metadata_of(const group& g) const {
    group_metadata_value v;
    v.protocol_type = g.protocol_type;
    v.generation = g.generation;
    v.protocol = g.protocol_name;
    v.leader = g.leader;
    v.current_state_timestamp = g.state_timestamp;
    for (const auto& [_, m] : g.members) {
      group_member_metadata mm;
      mm.member_id = m.id;
      mm.group_instance_id = m.instance_id;
      mm.client_id = m.client_id;
      mm.client_host = "in-process";
      mm.rebalance_timeout_ms = static_cast<std::int32_t>(std::min<std::int64_t>(m.rebalance_timeout_ms, INT32_MAX));
      mm.session_timeout_ms = static_cast<std::int32_t>(std::min<std::int64_t>(m.session_timeout_ms, INT32_MAX));
      if (g.protocol_name) mm.subscription = m.metadata_for(*g.protocol_name);
      mm.assignment = m.assignment;
      v.members.push_back(std::move(mm));
    }
    return v;
  }

  result<void> store_group(const group& g) { return store_->append_group_metadata(g.id, metadata_of(g), now()); }

  /// offsets.retention.minutes (KIP-211): offsets of a consumer group expire once it has
  /// been Empty for the retention period; offsets committed outside group management expire
  /// by their commit time; a Stable consumer group's offsets of topics it no longer
  /// subscribes to expire by commit time. A group left with nothing is forgotten.
  result<void> expire_offsets(timestamp_ms t) {
    const std::int64_t retention = std::chrono::duration_cast<std::chrono::milliseconds>(cfg_.offsets_retention).count();
    std::vector<std::string> dead;
    for (auto& [id, g] : groups_) {
      std::vector<topic_partition> expired;
      if (g.state == group_state::empty) {
        for (const auto& [tp, v] : g.offsets) {
          const timestamp_ms base = g.protocol_type.empty() ? v.commit_timestamp : g.state_timestamp;
          if (t - base >= retention) expired.push_back(tp);
        }
      } else if (g.state == group_state::stable && g.protocol_type == "consumer") {
        auto subscribed = subscribed_partition_counts(g);
        for (const auto& [tp, v] : g.offsets)
          if (!subscribed.count(tp.topic) && t - v.commit_timestamp >= retention) expired.push_back(tp);
      }
      const bool forget = g.state == group_state::empty && g.members.empty() && expired.size() == g.offsets.size();
      if (expired.empty() && !forget) continue;
      BROOK_TRY(store_->append_tombstones(id, expired, forget, t));
      for (const auto& tp : expired) g.offsets.erase(tp);
      if (forget) dead.push_back(id);
    }
    for (const auto& id : dead) groups_.erase(id);
    return ok();
  }

  data_dir& dd_;
  coordinator_config cfg_;
  std::shared_ptr<const brook::clock> clock_;
  std::unique_ptr<offset_store> store_;
  mutable std::mutex mu_;
  std::map<std::string, group> groups_;
  std::mt19937_64 rng_;
  std::uint64_t member_seq_ = 0;
  std::uint64_t join_seq_ = 0;
  std::uint64_t seen_metadata_version_ = 0;
  timestamp_ms next_retention_check_ = 0;

  std::mutex timer_mu_;
  std::condition_variable timer_cv_;
  std::thread timer_;
  bool timer_stop_ = true;
  bool timer_poke_ = false;
};

}  // namespace brook

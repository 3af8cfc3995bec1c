// One consumer group under Kafka's classic rebalance protocol (Kafka's ClassicGroup and
// the parts of GroupCoordinator that act on one group): its members, its state
// (group/group_state.hpp), the join and sync phases, heartbeats, leaves, session and
// poll-interval expiry, static membership (KIP-345), and the group's committed offsets.
// group/group_coordinator.hpp routes requests to it, validates what does not depend on
// the group, and owns time, storage and offset retention.
//
// Invariants (asserted after every request): the generation never decreases; a leader,
// when set, is a member; every static member's instance id maps to it; a group in
// CompletingRebalance or Stable has a protocol and a leader.
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
//   - the MEMBER_ID_REQUIRED round trip (KIP-394) only when the join asks for it
//     (join_group_request::require_known_member_id, JoinGroup v4+ on the wire): in-process
//     members get their id at once, since join_group() returns it; a pending id is no member
//     yet (it is not described, cannot heartbeat or commit), but the join phase waits for it,
//     as Kafka's does, until it joins again, leaves, or its session timeout passes;
//   - a member's group.instance.id cannot change: a rejoin with another (or none) is
//     refused with fenced_instance_id.
//
// Thread-safety: none; the coordinator calls every member under its lock. Answers go into
// a group_completions the coordinator runs after releasing the lock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/client/fetch_source.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/clock.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/group/consumer_protocol.hpp>
#include <brook/group/coordinator_config.hpp>
#include <brook/group/group_requests.hpp>
#include <brook/group/group_state.hpp>
#include <brook/group/offset_and_metadata.hpp>
#include <brook/group/offset_store.hpp>
#include <brook/group/offsets_topic_records.hpp>

namespace brook {

/// Answers to run after the coordinator's lock is released (callbacks may call back in).
/// Thread-safety: none; one per request.
struct group_completions {
  std::vector<std::function<void()>> fns;
  void add(std::function<void()> f) { fns.push_back(std::move(f)); }
  void run() {
    for (auto& f : fns) f();
    fns.clear();
  }
};

/// Member ids and join order for every group of a coordinator. Thread-safety: none (the
/// coordinator's lock).
class member_id_source {
 public:
  member_id_source() : rng_(std::random_device{}()) {}
  /// Kafka's ids are clientId-UUID; brook puts a sequence number first so members sort in
  /// join order (range and roundrobin order members by id), then random bits.
  std::string next(const std::string& client_id) {
    std::uniform_int_distribution<std::uint64_t> d;
    return fmt::format("{}-{:06}-{:016x}", client_id.empty() ? "member" : client_id, ++member_seq_, d(rng_));
  }
  std::uint64_t next_join_order() { return ++join_seq_; }

 private:
  std::mt19937_64 rng_;
  std::uint64_t member_seq_ = 0;
  std::uint64_t join_seq_ = 0;
};

/// What a group uses of its coordinator. Thread-safety: the coordinator's lock.
struct group_services {
  const coordinator_config& config;
  const clock& clk;
  fetch_source& source;  ///< partition counts of subscribed topics; its notifier wakes polling members
  offset_store& store;
  member_id_source& ids;
};

class classic_group {
 public:
  classic_group(std::string id, group_services& s) : id_(std::move(id)), s_(s), state_timestamp_(now()) {}

  const std::string& id() const noexcept { return id_; }
  group_state state() const noexcept { return state_; }
  generation_id generation() const noexcept { return generation_; }
  const std::string& protocol_type() const noexcept { return protocol_type_; }
  std::size_t member_count() const noexcept { return members_.size(); }
  /// Whether KIP-394 member ids were handed out that have not joined again yet.
  bool has_pending_members() const noexcept { return !pending_.empty(); }
  /// When the group entered its current state.
  timestamp_ms state_timestamp() const noexcept { return state_timestamp_; }
  /// The group's committed offsets (the coordinator commits, fetches and expires them).
  std::map<topic_partition, offset_and_metadata>& offsets() noexcept { return offsets_; }
  const std::map<topic_partition, offset_and_metadata>& offsets() const noexcept { return offsets_; }

  // ------------------------------------------------------------------ requests

  /// JoinGroup, after the coordinator's checks (group id, session timeout, protocols).
  /// Returns the member id (empty if refused; `done` then carries the error).
  std::string join(join_group_request req, join_callback done, group_completions& out) {
    auto id = handle_join(std::move(req), std::move(done), out);
    assert_invariants();
    return id;
  }

  void sync(sync_group_request req, sync_callback done, group_completions& out) {
    handle_sync(std::move(req), std::move(done), out);
    assert_invariants();
  }

  /// Heartbeat. rebalance_in_progress tells the member to rejoin. As Kafka's
  /// classicGroupHeartbeat: the generation is checked before the state (a member of an older
  /// generation is told ILLEGAL_GENERATION even while the group rebalances), and only a
  /// heartbeat that passes both checks keeps the member's session alive.
  result<void> heartbeat(generation_id generation, const std::string& member_id,
                         const std::optional<std::string>& instance_id) {
    BROOK_TRY(check_member(member_id, instance_id));
    if (state_ == group_state::empty || state_ == group_state::dead) return unknown_member(member_id);
    BROOK_TRY(check_generation(generation));
    members_.at(member_id).last_heartbeat = now();
    if (state_ == group_state::preparing_rebalance)
      return make_error(errc::rebalance_in_progress, "group '{}' is rebalancing; rejoin", id_);
    return ok();
  }

  /// LeaveGroup (by member id, or by group.instance.id when member_id is empty).
  result<void> leave(const std::string& member_id, const std::optional<std::string>& instance_id,
                     group_completions& out) {
    if (!member_id.empty() && pending_.erase(member_id) > 0) {  // a KIP-394 id that never joined
      try_complete_join(out);
      assert_invariants();
      return ok();
    }
    std::string id = member_id;
    if (id.empty() && instance_id) {
      auto s = static_members_.find(*instance_id);
      if (s == static_members_.end())
        return make_error(errc::unknown_member_id, "group '{}' has no member with instance id '{}'", id_, *instance_id);
      id = s->second;
    }
    BROOK_TRY(check_member(id, instance_id));
    remove_member(id, out);
    member_left(fmt::format("member {} left", id), out);
    assert_invariants();
    return ok();
  }

  /// OffsetCommit's fencing for a member of this group: the member and its generation must
  /// be current, and the group must not await the leader's assignment. Counts as a heartbeat.
  result<void> check_commit(generation_id generation, const std::string& member_id,
                            const std::optional<std::string>& instance_id) {
    // Fencing first: a removed member or an old generation is told so, even mid-rebalance.
    BROOK_TRY(check_member(member_id, instance_id));
    if (generation != generation_)
      return make_error(errc::illegal_generation, "group '{}' is at generation {}, the commit carries {}", id_,
                        generation_.value(), generation.value());
    members_.at(member_id).last_heartbeat = now();
    if (state_ == group_state::completing_rebalance)
      return make_error(errc::rebalance_in_progress, "group '{}' is completing a rebalance", id_);
    return ok();
  }

  // ------------------------------------------------------------------ time

  /// Applies what is due at `t`: expiry, the end of a join phase, a change in the partition
  /// counts of subscribed topics (when `metadata_changed`).
  void tick(timestamp_ms t, bool metadata_changed, group_completions& out) {
    expire_members(t, out);
    expire_pending(t);
    if (state_ == group_state::preparing_rebalance) {
      if (initial_delay_end_ && t >= *initial_delay_end_) end_initial_delay(t);
      if (!initial_delay_end_ && t >= join_deadline_)
        complete_join(out);
      else
        try_complete_join(out);
    }
    if (metadata_changed && (state_ == group_state::stable || state_ == group_state::completing_rebalance) &&
        subscribed_partition_counts() != subscribed_counts_)
      prepare_rebalance(out);
    assert_invariants();
  }

  /// The earliest time tick() has something to do for this group (or `limit`).
  timestamp_ms next_deadline(timestamp_ms limit) const {
    timestamp_ms next = limit;
    if (state_ == group_state::preparing_rebalance)
      next = std::min(next, initial_delay_end_ ? *initial_delay_end_ : join_deadline_);
    for (const auto& [_, expiry] : pending_) next = std::min(next, expiry);
    for (const auto& [_, m] : members_) {
      if (waiting(m)) continue;  // the same exemptions as expire_members(): a waiting member cannot expire
      if (m.liveness && m.liveness->alive.load()) {
        if (!m.liveness->in_poll.load())
          next = std::min(next, m.liveness->last_poll_ms.load() + m.rebalance_timeout_ms);
      } else {
        next = std::min(next, m.last_heartbeat + m.session_timeout_ms);
      }
    }
    return next;
  }

  // ------------------------------------------------------------------ views and storage

  group_description describe() const {
    group_description d;
    d.group_id = id_;
    d.state = state_;
    d.protocol_type = protocol_type_;
    d.protocol_name = protocol_name_.value_or("");
    d.generation = generation_;
    d.leader = leader_.value_or("");
    for (const auto& [_, m] : members_) {
      member_description md;
      md.member_id = m.id;
      md.group_instance_id = m.instance_id;
      md.client_id = m.client_id;
      if (protocol_name_) md.metadata = m.metadata_for(*protocol_name_);
      md.assignment = m.assignment;
      d.members.push_back(std::move(md));
    }
    return d;
  }

  /// The partitions assigned to members, decoded with the consumer protocol (none for
  /// other protocol types).
  std::vector<topic_partition> assigned_partitions() const {
    std::vector<topic_partition> out;
    if (protocol_type_ != "consumer") return out;
    for (const auto& [_, m] : members_)
      if (auto a = decode_assignment(m.assignment); a) out.insert(out.end(), a->begin(), a->end());
    return out;
  }

  /// Partition counts of the topics the members subscribe to (consumer protocol; -1 for a
  /// topic that does not exist).
  std::map<std::string, std::int32_t> subscribed_partition_counts() const {
    std::map<std::string, std::int32_t> out;
    if (protocol_type_ != "consumer" || !protocol_name_) return out;
    for (const auto& [_, m] : members_) {
      auto sub = decode_subscription(m.metadata_for(*protocol_name_));
      if (!sub) continue;
      for (const auto& t : sub->topics) {
        auto n = s_.source.partition_count(t);
        out[t] = n ? *n : -1;
      }
    }
    return out;
  }

  /// The group's metadata record (`__consumer_offsets`).
  group_metadata_value metadata() const {
    group_metadata_value v;
    v.protocol_type = protocol_type_;
    v.generation = generation_.value();
    v.protocol = protocol_name_;
    v.leader = leader_;
    v.current_state_timestamp = state_timestamp_;
    for (const auto& [_, m] : members_) v.members.push_back(member_metadata(m));
    return v;
  }

  result<void> store() { return s_.store.append_group_metadata(id_, metadata(), now()); }

  /// Replay: the group as a previous process left it. Its members cannot come back, so it
  /// restarts Empty, keeping its generation; returns whether the stored record named
  /// members (the caller then stores the Empty group, so tools see no stale members).
  bool restore(const group_metadata_value& v) {
    generation_ = generation_id(v.generation);
    protocol_type_ = v.protocol_type;
    state_timestamp_ = v.members.empty() && v.current_state_timestamp >= 0 ? v.current_state_timestamp : now();
    return !v.members.empty();
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

  timestamp_ms now() const { return s_.clk.now_ms(); }

  void assert_invariants() const {
    BROOK_ASSERT(generation_ >= max_generation_seen_, "group '{}': generation went back from {} to {}", id_,
                 max_generation_seen_.value(), generation_.value());
    max_generation_seen_ = generation_;
    BROOK_ASSERT(!leader_ || members_.count(*leader_), "group '{}': leader '{}' is not a member", id_, *leader_);
    for (const auto& [instance, member_id] : static_members_)
      BROOK_ASSERT(members_.count(member_id) && members_.at(member_id).instance_id == instance,
                   "group '{}': static member '{}' maps to '{}', which does not hold it", id_, instance, member_id);
    if (state_ == group_state::completing_rebalance || state_ == group_state::stable)
      BROOK_ASSERT(protocol_name_ && leader_, "group '{}' is {} without a protocol or a leader", id_,
                   group_state_name(state_));
    for (const auto& [id, _] : pending_)
      BROOK_ASSERT(!members_.count(id), "group '{}': pending member '{}' is also a member", id_, id);
  }

  static bool waiting_in_join(const member& m, group_state s) {
    return m.awaiting_join && s == group_state::preparing_rebalance;
  }
  bool waiting(const member& m) const { return waiting_in_join(m, state_) || static_cast<bool>(m.awaiting_sync); }

  result<void> unknown_member(const std::string& member_id) const {
    return make_error(errc::unknown_member_id, "group '{}' has no member '{}'", id_, member_id);
  }
  result<void> check_generation(generation_id g) const {
    if (g != generation_)
      return make_error(errc::illegal_generation, "group '{}' is at generation {}, not {}", id_, generation_.value(),
                        g.value());
    return ok();
  }

  /// Checks a request's member id (and instance id) against the group.
  result<void> check_member(const std::string& member_id, const std::optional<std::string>& instance_id) const {
    if (instance_id) {  // Kafka's validateMember: an instance id the group does not know is an unknown member
      auto s = static_members_.find(*instance_id);
      if (s == static_members_.end())
        return make_error(errc::unknown_member_id, "group '{}' has no member with instance id '{}'", id_, *instance_id);
      if (s->second != member_id)
        return make_error(errc::fenced_instance_id, "group '{}': instance '{}' is now member '{}', not '{}'", id_,
                          *instance_id, s->second, member_id);
    }
    if (!members_.count(member_id)) return unknown_member(member_id);
    return ok();
  }

  void set_state(group_state s) {
    state_ = s;
    state_timestamp_ = now();
  }

  void next_generation() { generation_ = generation_ + 1; }

  static std::int64_t max_rebalance_timeout(const std::map<std::string, member>& members) {
    std::int64_t out = 0;
    for (const auto& [_, m] : members) out = std::max(out, m.rebalance_timeout_ms);
    return out;
  }

  /// The protocols every member supports (in the order of `leader_first`'s list).
  std::vector<std::string> candidate_protocols(const member* leader_first) const {
    std::vector<std::string> out;
    if (members_.empty()) return out;
    const member& ref = leader_first ? *leader_first : members_.begin()->second;
    for (const auto& p : ref.protocols) {
      const bool all = std::all_of(members_.begin(), members_.end(), [&](const auto& kv) {
        const auto& ps = kv.second.protocols;
        return std::any_of(ps.begin(), ps.end(), [&](const auto& q) { return q.name == p.name; });
      });
      if (all) out.push_back(p.name);
    }
    return out;
  }

  std::string select_protocol(const member* leader) const {
    auto candidates = candidate_protocols(leader);
    std::map<std::string, int> votes;
    for (const auto& [_, m] : members_)
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

  // ------------------------------------------------------------------ join

  std::string handle_join(join_group_request req, join_callback done, group_completions& out) {
    auto fail = [&](brook::error e) {
      out.add([done, e] { done(e); });
      return std::string();
    };
    if (auto r = check_protocols_compatible(req); !r) return fail(r.error());
    if (req.member_id.empty()) {
      if (req.group_instance_id)
        if (auto s = static_members_.find(*req.group_instance_id); s != static_members_.end())
          return rejoin_static(s->second, std::move(req), std::move(done), out);
      if (members_.size() >= s_.config.group_max_size)
        return fail(make_error(errc::group_max_size_reached, "group '{}' has reached group.max.size {}", id_,
                               s_.config.group_max_size));
      if (req.require_known_member_id && !req.group_instance_id) return add_pending(req, std::move(done), out);
      return add_member(std::move(req), std::move(done), out);
    }
    if (!req.group_instance_id && pending_.count(req.member_id)) {
      if (members_.size() >= s_.config.group_max_size)
        return fail(make_error(errc::group_max_size_reached, "group '{}' has reached group.max.size {}", id_,
                               s_.config.group_max_size));
      std::string id = req.member_id;
      pending_.erase(id);
      return add_member(std::move(req), std::move(done), out, std::move(id));
    }
    // A member's group.instance.id cannot change (checked first: another instance id is
    // fenced, not an unknown member).
    if (auto it = members_.find(req.member_id); it != members_.end() && it->second.instance_id != req.group_instance_id)
      return fail(make_error(errc::fenced_instance_id,
                             "group '{}': member '{}' joined with group.instance.id '{}', not '{}'", id_, req.member_id,
                             it->second.instance_id.value_or(""), req.group_instance_id.value_or("")));
    if (auto r = check_member(req.member_id, req.group_instance_id); !r) return fail(r.error());
    if (state_ == group_state::empty || state_ == group_state::dead) return fail(unknown_member(req.member_id).error());
    return rejoin_member(std::move(req), std::move(done), out);
  }

  /// Protocol compatibility with the members already there.
  result<void> check_protocols_compatible(const join_group_request& req) const {
    if (members_.empty()) return ok();
    if (protocol_type_ != req.protocol_type)
      return make_error(errc::inconsistent_group_protocol, "group '{}' uses protocol type '{}', not '{}'", id_,
                        protocol_type_, req.protocol_type);
    auto cands = candidate_protocols(nullptr);
    // A known member re-joining may change its protocols; check against the others.
    const bool common = std::any_of(req.protocols.begin(), req.protocols.end(), [&](const group_protocol& p) {
      return std::find(cands.begin(), cands.end(), p.name) != cands.end();
    });
    if (!common && !(members_.size() == 1 && members_.count(req.member_id)))
      return make_error(errc::inconsistent_group_protocol,
                        "group '{}': none of the member's protocols is supported by every member", id_);
    return ok();
  }

  /// KIP-394: the member gets its id now and joins with it in a second request.
  std::string add_pending(const join_group_request& req, join_callback done, group_completions& out) {
    std::string id = s_.ids.next(req.client_id);
    pending_[id] = now() + req.session_timeout.count();
    out.add([done, e = make_error(errc::member_id_required, "group '{}': join again with member id '{}'", id_, id)] {
      done(e);
    });
    return id;
  }

  /// A new member (with the id a KIP-394 round trip gave it, or a fresh one).
  std::string add_member(join_group_request req, join_callback done, group_completions& out,
                         std::string given_id = {}) {
    member m;
    m.id = given_id.empty() ? s_.ids.next(req.client_id) : std::move(given_id);
    fill_member(m, req);
    m.awaiting_join = std::move(done);
    m.join_order = s_.ids.next_join_order();
    m.last_heartbeat = now();
    const std::string id = m.id;
    if (m.instance_id) static_members_[*m.instance_id] = id;
    if (members_.empty()) protocol_type_ = req.protocol_type;
    if (!leader_) leader_ = id;
    members_.emplace(id, std::move(m));
    if (state_ == group_state::preparing_rebalance)
      try_complete_join(out);
    else
      prepare_rebalance(out);
    return id;
  }

  /// A known member joins again.
  std::string rejoin_member(join_group_request req, join_callback done, group_completions& out) {
    member& m = members_.at(req.member_id);
    const std::string id = m.id;
    m.last_heartbeat = now();
    if (state_ == group_state::preparing_rebalance) {
      fill_member(m, req);
      replace_join_callback(m, std::move(done), out);
      try_complete_join(out);
      return id;
    }
    // CompletingRebalance or Stable: a member that lost our answer gets it again (a Stable
    // group's leader rejoining starts a rebalance, as in Kafka); new protocols rebalance.
    const bool same = m.same_protocols(req.protocols);
    m.awaiting_join = std::move(done);
    if (same && (state_ == group_state::completing_rebalance || leader_ != m.id)) {
      answer_join(m, out);
      return id;
    }
    fill_member(m, req);
    prepare_rebalance(out);
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

  /// Completes a pending join or sync callback with `code` (once: the callback is taken).
  template <typename Callback>
  static void fail_callback(Callback& cb, errc code, const char* why, group_completions& out) {
    if (!cb) return;
    auto f = std::exchange(cb, nullptr);
    out.add([f, code, why] { f(make_error(code, "{}", why)); });
  }

  void replace_join_callback(member& m, join_callback done, group_completions& out) {
    fail_callback(m.awaiting_join, errc::unknown_member_id, "superseded by a newer join of the same member", out);
    m.awaiting_join = std::move(done);
  }

  /// A static member comes back with a new member id: the old id is fenced.
  std::string rejoin_static(std::string old_id, join_group_request req, join_callback done, group_completions& out) {
    member m = std::move(members_.at(old_id));
    members_.erase(old_id);
    const char* fenced = "a newer instance with the same group.instance.id joined";
    fail_callback(m.awaiting_join, errc::fenced_instance_id, fenced, out);
    fail_callback(m.awaiting_sync, errc::fenced_instance_id, fenced, out);
    if (m.liveness) m.liveness->rejoin_needed.store(true);
    m.id = s_.ids.next(req.client_id);
    fill_member(m, req);
    m.liveness = req.liveness;
    m.last_heartbeat = now();
    static_members_[*m.instance_id] = m.id;
    if (leader_ == old_id) leader_ = m.id;
    const std::string id = m.id;
    member& nm = members_.emplace(id, std::move(m)).first->second;
    nm.awaiting_join = std::move(done);
    // As Kafka: no rebalance unless the protocol the group would choose changes.
    const member* leader = leader_ ? &members_.at(*leader_) : nullptr;
    const bool same =
        protocol_name_ && !candidate_protocols(leader).empty() && select_protocol(leader) == *protocol_name_;
    if (state_ == group_state::stable && same) {
      // KIP-345: same member back within its session, nothing changed: no rebalance. It
      // syncs with the current generation and gets its previous assignment.
      (void)store();
      answer_join(nm, out, /*as_follower=*/true);
      return id;
    }
    if (state_ == group_state::preparing_rebalance)
      try_complete_join(out);
    else
      prepare_rebalance(out);
    return id;
  }

  void prepare_rebalance(group_completions& out) {
    if (state_ == group_state::completing_rebalance)
      for (auto& [_, m] : members_)
        fail_callback(m.awaiting_sync, errc::rebalance_in_progress, "the group began another rebalance", out);
    const bool was_empty = state_ == group_state::empty;
    set_state(group_state::preparing_rebalance);
    const timestamp_ms t = now();
    const std::int64_t max_rebalance = max_rebalance_timeout(members_);
    join_deadline_ = t + max_rebalance;
    initial_delay_end_.reset();
    const std::int64_t delay = s_.config.group_initial_rebalance_delay.count();
    if (was_empty && delay > 0) {
      initial_delay_end_ = t + std::min<std::int64_t>(delay, max_rebalance);
      initial_delay_budget_end_ = t + max_rebalance;
      members_at_delay_start_ = members_.size();
    }
    for (auto& [_, m] : members_)
      if (!m.awaiting_join && m.liveness) m.liveness->rejoin_needed.store(true);
    s_.source.notifier().notify();
    try_complete_join(out);
  }

  /// group.initial.rebalance.delay.ms as Kafka's InitialDelayedJoin: when the delay ends and
  /// members kept arriving, wait another delay, within the rebalance timeout.
  void end_initial_delay(timestamp_ms t) {
    if (members_.size() > members_at_delay_start_ && t < initial_delay_budget_end_) {
      initial_delay_end_ = std::min(t + s_.config.group_initial_rebalance_delay.count(), initial_delay_budget_end_);
      members_at_delay_start_ = members_.size();
      return;
    }
    initial_delay_end_.reset();
  }

  void try_complete_join(group_completions& out) {
    // Kafka's hasAllMembersJoined: KIP-394 ids handed out are expected back in this rebalance.
    if (state_ != group_state::preparing_rebalance || initial_delay_end_ || !pending_.empty()) return;
    for (const auto& [_, m] : members_)
      if (!m.awaiting_join) return;
    complete_join(out);
  }

  /// Ends the join phase: members that did not rejoin are removed (static ones stay until
  /// their session expires), a new generation starts.
  void complete_join(group_completions& out) {
    initial_delay_end_.reset();
    std::vector<std::string> gone;
    for (const auto& [id, m] : members_)
      if (!m.awaiting_join && !m.instance_id) gone.push_back(id);
    for (const auto& id : gone) remove_member(id, out);
    const bool any_joined =
        std::any_of(members_.begin(), members_.end(), [](const auto& kv) { return bool(kv.second.awaiting_join); });
    if (!any_joined) {
      if (members_.empty()) {
        next_generation();
        protocol_name_.reset();
        leader_.reset();
        set_state(group_state::empty);
        (void)store();
        return;
      }
      // Only absent static members are left: wait for them (or their session expiry).
      join_deadline_ = now() + max_rebalance_timeout(members_);
      return;
    }
    next_generation();
    const member* leader = choose_leader();
    leader_ = leader->id;
    protocol_name_ = select_protocol(leader);
    subscribed_counts_ = subscribed_partition_counts();
    set_state(group_state::completing_rebalance);
    const timestamp_ms t = now();
    for (auto& [_, m] : members_) {
      m.last_heartbeat = t;
      if (m.awaiting_join) answer_join(m, out);
    }
  }

  /// The leader of a new generation: kept if it rejoined, else the earliest-joined member
  /// that did. REQUIRES: some member rejoined.
  const member* choose_leader() const {
    if (leader_)
      if (auto it = members_.find(*leader_); it != members_.end() && it->second.awaiting_join) return &it->second;
    const member* out = nullptr;
    for (const auto& [_, m] : members_)
      if (m.awaiting_join && (!out || m.join_order < out->join_order)) out = &m;
    BROOK_ASSERT(out, "group '{}': no member rejoined", id_);
    return out;
  }

  void answer_join(member& m, group_completions& out, bool as_follower = false) {
    join_group_response r;
    r.generation = generation_;
    r.protocol_type = protocol_type_;
    r.protocol_name = protocol_name_.value_or("");
    r.leader = leader_.value_or("");
    r.member_id = m.id;
    if (leader_ == m.id && !as_follower)
      for (const auto& [_, o] : members_) r.members.push_back({o.id, o.instance_id, o.metadata_for(r.protocol_name)});
    auto cb = std::exchange(m.awaiting_join, nullptr);
    out.add([cb, r = std::move(r)]() mutable { cb(std::move(r)); });
  }

  // ------------------------------------------------------------------ sync

  void handle_sync(sync_group_request req, sync_callback done, group_completions& out) {
    auto fail = [&](brook::error e) { out.add([done, e] { done(e); }); };
    if (auto r = check_member(req.member_id, req.group_instance_id); !r) return fail(r.error());
    if (auto r = check_generation(req.generation); !r) return fail(r.error());
    if (auto r = check_sync_protocol(req); !r) return fail(r.error());
    member& m = members_.at(req.member_id);
    m.last_heartbeat = now();
    switch (state_) {
      case group_state::empty:
      case group_state::dead: return fail(unknown_member(req.member_id).error());
      case group_state::preparing_rebalance:
        return fail(make_error(errc::rebalance_in_progress, "group '{}' is rebalancing; rejoin", id_));
      case group_state::stable: out.add([done, a = m.assignment]() mutable { done(std::move(a)); }); return;
      case group_state::completing_rebalance:
        fail_callback(m.awaiting_sync, errc::unknown_member_id, "superseded by a newer sync of the same member", out);
        m.awaiting_sync = std::move(done);
        if (leader_ == m.id) complete_sync(req.assignments, out);
        return;
    }
  }

  /// SyncGroup v5+ names the protocol type and name the member was given: they must be the group's.
  result<void> check_sync_protocol(const sync_group_request& req) const {
    if (req.protocol_type && !protocol_type_.empty() && *req.protocol_type != protocol_type_)
      return make_error(errc::inconsistent_group_protocol, "group '{}' uses protocol type '{}', not '{}'", id_,
                        protocol_type_, *req.protocol_type);
    if (req.protocol_name && protocol_name_ && *req.protocol_name != *protocol_name_)
      return make_error(errc::inconsistent_group_protocol, "group '{}' uses protocol '{}', not '{}'", id_,
                        *protocol_name_, *req.protocol_name);
    return ok();
  }

  /// The leader's assignment: stored, then handed to every member waiting in its sync.
  void complete_sync(const std::map<std::string, std::vector<std::byte>>& assignments, group_completions& out) {
    for (auto& [id, o] : members_) {
      auto it = assignments.find(id);
      o.assignment = it == assignments.end() ? std::vector<std::byte>{} : it->second;
    }
    if (auto r = store(); !r) {
      // The assignment could not be stored: every member rejoins (Kafka resets the group).
      for (auto& [_, o] : members_) o.assignment.clear();
      prepare_rebalance(out);
      return;
    }
    set_state(group_state::stable);
    for (auto& [_, o] : members_)
      if (o.awaiting_sync) {
        auto cb = std::exchange(o.awaiting_sync, nullptr);
        out.add([cb, a = o.assignment]() mutable { cb(std::move(a)); });
      }
  }

  // ------------------------------------------------------------------ leaving and expiry

  /// After a member is removed outside a join phase: the others rebalance.
  void member_left(const std::string& /*reason*/, group_completions& out) {
    switch (state_) {
      case group_state::stable:
      case group_state::completing_rebalance: prepare_rebalance(out); break;
      case group_state::preparing_rebalance: try_complete_join(out); break;
      default: break;
    }
    if (state_ == group_state::preparing_rebalance && members_.empty()) complete_join(out);
  }

  void remove_member(const std::string& id, group_completions& out) {
    auto it = members_.find(id);
    if (it == members_.end()) return;
    member& m = it->second;
    fail_callback(m.awaiting_join, errc::unknown_member_id, "the member was removed from the group", out);
    fail_callback(m.awaiting_sync, errc::unknown_member_id, "the member was removed from the group", out);
    if (m.liveness) m.liveness->rejoin_needed.store(true);
    if (m.instance_id) static_members_.erase(*m.instance_id);
    if (leader_ == id) leader_.reset();
    members_.erase(it);
    if (!leader_ && !members_.empty()) {
      const member* first = nullptr;
      for (const auto& [_, o] : members_)
        if (!first || o.join_order < first->join_order) first = &o;
      leader_ = first->id;
    }
    s_.source.notifier().notify();
  }

  /// Session and poll-interval expiry.
  void expire_members(timestamp_ms t, group_completions& out) {
    std::vector<std::pair<std::string, std::string>> gone;
    for (auto& [id, m] : members_) {
      if (m.liveness && m.liveness->alive.load()) {
        m.last_heartbeat = t;
        const bool in_join_or_sync = m.awaiting_join || m.awaiting_sync;
        if (!in_join_or_sync && !m.liveness->in_poll.load() &&
            t - m.liveness->last_poll_ms.load() > m.rebalance_timeout_ms)
          gone.emplace_back(id, "did not poll within max.poll.interval.ms");
        continue;
      }
      if (!waiting(m) && t - m.last_heartbeat >= m.session_timeout_ms) gone.emplace_back(id, "session timed out");
    }
    for (const auto& [id, why] : gone) {
      remove_member(id, out);
      member_left(fmt::format("member {} {}", id, why), out);
    }
  }

  /// KIP-394 ids not used again within their session timeout are dropped.
  void expire_pending(timestamp_ms t) {
    std::erase_if(pending_, [t](const auto& kv) { return t >= kv.second; });
  }

  /// A member as the group's __consumer_offsets record lists it.
  group_member_metadata member_metadata(const member& m) const {
    group_member_metadata mm;
    mm.member_id = m.id;
    mm.group_instance_id = m.instance_id;
    mm.client_id = m.client_id;
    mm.client_host = "in-process";
    mm.rebalance_timeout_ms = static_cast<std::int32_t>(std::min<std::int64_t>(m.rebalance_timeout_ms, INT32_MAX));
    mm.session_timeout_ms = static_cast<std::int32_t>(std::min<std::int64_t>(m.session_timeout_ms, INT32_MAX));
    if (protocol_name_) mm.subscription = m.metadata_for(*protocol_name_);
    mm.assignment = m.assignment;
    return mm;
  }

  const std::string id_;
  group_services& s_;
  group_state state_ = group_state::empty;
  generation_id generation_{0};
  mutable generation_id max_generation_seen_{0};
  std::string protocol_type_;
  std::optional<std::string> protocol_name_;
  std::optional<std::string> leader_;
  std::map<std::string, member> members_;
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  std::map<std::string, timestamp_ms> pending_;        // KIP-394 member id -> when it expires
  timestamp_ms state_timestamp_ = 0;
  timestamp_ms join_deadline_ = 0;
  std::optional<timestamp_ms> initial_delay_end_;
  timestamp_ms initial_delay_budget_end_ = 0;
  std::size_t members_at_delay_start_ = 0;
  std::map<std::string, std::int32_t> subscribed_counts_;
  std::map<topic_partition, offset_and_metadata> offsets_;
};

}  // namespace brook

// A consumer that shares its topics with the other members of a group: Kafka's
// KafkaConsumer with subscribe(), in-process.
//
//   group_consumer c(dd, coordinator, {.group_id = "billing"});
//   c.subscribe({"orders"});
//   for (;;) {
//     auto records = c.poll(100ms);          // joins, rebalances, heartbeats, auto-commits
//     for (const auto& r : *records) process(r);
//   }                                        // the next poll commits what this one returned
//
// poll() drives the membership (join, sync, heartbeat, rejoin when the group rebalances,
// rebalance_listener callbacks), then fetches like brook::consumer from the partitions the
// group assigned to this member, starting from the group's committed offsets (or
// auto.offset.reset where there are none). A long poll returns early when the group
// starts a rebalance.
//
// Offsets: with enable.auto.commit (default), each poll first commits the positions
// reached by the previous ones (every auto.commit.interval.ms), as do a rebalance that
// revokes partitions and close(): records are processed at least once. commit_sync() /
// commit_async() commit positions or explicit offsets. A commit from a member that the
// group has replaced is refused (illegal_generation, unknown_member_id,
// rebalance_in_progress): its partitions are the new owner's, whose progress stands.
//
// Liveness: the member shares a member_liveness with the coordinator instead of running a
// heartbeat thread: it stays in the group while it exists (until close()),
// and is removed when it stays out of poll() longer than max.poll.interval.ms. It then
// learns on its next poll (on_partitions_lost, rejoin) or commit (refused).
//
// Protocol: every assignor in partition.assignment.strategy is offered (default range,
// then cooperative-sticky, Kafka's default). The group is cooperative (KIP-429: only
// partitions that move are revoked) when every offered assignor is, eager otherwise.
//
// Thread-safety: one thread uses a group_consumer at a time, like KafkaConsumer; only
// wakeup() may be called from another thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <brook/client/consumer.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/group/assignor.hpp>
#include <brook/group/consumer_protocol.hpp>
#include <brook/group/cooperative_sticky_assignor.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/group/range_assignor.hpp>
#include <brook/group/rebalance_listener.hpp>
#include <brook/storage/topic_config.hpp>

namespace brook {

struct group_consumer_config {
  /// group.id. Required.
  std::string group_id{};
  /// group.instance.id: static membership (KIP-345). A static member does not leave the
  /// group on close(): an instance that comes back within session.timeout.ms keeps its
  /// partitions without a rebalance.
  std::optional<std::string> group_instance_id{};
  /// client.id: the prefix of the member id the coordinator gives this member.
  std::string client_id = "consumer";
  /// partition.assignment.strategy, in preference order. Empty: range, cooperative-sticky.
  std::vector<std::shared_ptr<assignor>> assignors{};
  /// session.timeout.ms. Default 45000.
  std::chrono::milliseconds session_timeout{45000};
  /// max.poll.interval.ms. Default 300000.
  std::chrono::milliseconds max_poll_interval{300000};
  /// heartbeat.interval.ms. Default 3000.
  std::chrono::milliseconds heartbeat_interval{3000};
  /// enable.auto.commit. Default true.
  bool enable_auto_commit = true;
  /// auto.commit.interval.ms. Default 5000.
  std::chrono::milliseconds auto_commit_interval{5000};
  /// Fetch settings and auto.offset.reset (which applies only where the group has no commit).
  consumer_config consumer{};
};

/// Kafka's ConsumerGroupMetadata: who this member is in which generation.
struct consumer_group_metadata {
  std::string group_id;
  generation_id generation{-1};
  std::string member_id;
  std::optional<std::string> group_instance_id;
};

/// What group_consumer::close() does besides stopping (Kafka's CloseOptions, KIP-1092).
struct close_options {
  /// true: a dynamic member leaves the group, which rebalances at once (Kafka's default).
  /// false: it keeps its place until session.timeout.ms passes without it (KIP-1092's
  /// REMAIN_IN_GROUP; what a static member always does).
  bool leave_group = true;
  /// true: the owned partitions are revoked through the rebalance listener, after an
  /// auto-commit when enable.auto.commit is set (Kafka's close). false: neither, so nothing
  /// polled since the last commit counts as processed: a host stopping because it could not
  /// process, or a test's crashed process.
  bool commit_and_revoke = true;
};

class group_consumer {
 public:
  /// A member of `coordinator`'s groups reading through the coordinator's source (its data
  /// directory, or its cluster's leaders).
  group_consumer(group_coordinator& coordinator, group_consumer_config cfg)
      : group_consumer(nullptr, coordinator, std::move(cfg)) {}
  /// A member of `coordinator`'s groups reading `dd`, the data directory the coordinator
  /// runs on (so the coordinator's wake-ups reach this consumer's long polls).
  group_consumer(data_dir& dd, group_coordinator& coordinator, group_consumer_config cfg)
      : group_consumer(std::make_unique<data_dir_source>(dd), coordinator, std::move(cfg)) {}
  group_consumer(const group_consumer&) = delete;
  group_consumer& operator=(const group_consumer&) = delete;
  ~group_consumer() { (void)close(); }

 private:
  group_consumer(std::unique_ptr<fetch_source> owned, group_coordinator& coordinator, group_consumer_config cfg)
      : owned_source_(std::move(owned)),
        src_(owned_source_ ? *owned_source_ : coordinator.source()),
        coord_(coordinator),
        cfg_(std::move(cfg)),
        inner_(src_, cfg_.consumer),
        live_(std::make_shared<member_liveness>()),
        replies_(std::make_shared<replies>()) {
    if (cfg_.assignors.empty())
      cfg_.assignors = {std::make_shared<range_assignor>(), std::make_shared<cooperative_sticky_assignor>()};
    cooperative_ = std::all_of(cfg_.assignors.begin(), cfg_.assignors.end(),
                               [](const auto& a) { return a->protocol() == rebalance_protocol::cooperative; });
    live_->last_poll_ms.store(now());
  }

 public:
  /// Subscribes to `topics` (replacing the previous subscription); takes effect at the next
  /// poll. Topics need not exist yet. invalid_topic for an illegal name, invalid_group_id
  /// without a group id.
  result<void> subscribe(std::vector<std::string> topics, rebalance_listener* listener = nullptr) {
    BROOK_TRY(check_open());
    if (cfg_.group_id.empty()) return make_error(errc::invalid_group_id, "subscribe() needs a group.id");
    for (const auto& t : topics) BROOK_TRY(validate_topic_name(t));
    std::sort(topics.begin(), topics.end());
    topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
    listener_ = listener;
    if (topics != subscription_) {
      subscription_ = std::move(topics);
      if (phase_ != phase::unjoined || !member_id_.empty()) subscription_changed_ = true;
    }
    return ok();
  }
  const std::vector<std::string>& subscription() const noexcept { return subscription_; }

  /// Leaves the group (revoking everything) and drops the subscription.
  result<void> unsubscribe() {
    BROOK_TRY(check_open());
    auto r = leave(close_options{});
    subscription_.clear();
    subscription_changed_ = false;
    return r;
  }

  /// Takes part in the group and fetches; see the header comment. Errors: the consumer's
  /// (offset_out_of_range, corrupt_message, wakeup), fenced_instance_id (another instance
  /// with this group.instance.id took over: fatal), inconsistent_group_protocol,
  /// invalid_session_timeout, group_max_size_reached, closed.
  result<consumer_records> poll(std::chrono::milliseconds timeout) {
    BROOK_TRY(check_open());
    if (subscription_.empty()) return make_error(errc::invalid_argument, "poll() before subscribe()");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    live_->last_poll_ms.store(now());
    live_->in_poll.store(true);
    struct leave_poll {
      group_consumer& c;
      ~leave_poll() {
        c.live_->last_poll_ms.store(c.now());
        c.live_->in_poll.store(false);
      }
    } guard{*this};
    maybe_auto_commit();
    for (;;) {
      BROOK_TRY_ASSIGN(auto active, ensure_active(deadline));
      if (!active) return consumer_records{};  // the rebalance is still under way
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      BROOK_TRY_ASSIGN(auto recs, inner_.poll(std::max(left, std::chrono::milliseconds(0)),
                                              [this] { return live_->rejoin_needed.load() || woken(); }));
      // Records already taken are returned; a wakeup then fails the next poll instead.
      if (!recs.empty()) return recs;
      if (take_wakeup()) return make_error(errc::wakeup, "poll() interrupted by wakeup()");
      if (std::chrono::steady_clock::now() >= deadline) return recs;
    }
  }

  /// Commits the current positions of every owned partition and waits for the answer.
  result<void> commit_sync() { return commit(positions()); }
  /// Commits the given offsets (the offset of the next record to read, as in Kafka).
  result<void> commit_sync(const std::map<topic_partition, offset_and_metadata>& offsets) { return commit(offsets); }
  /// Commits without waiting for other members; in-process the commit is an append to the
  /// coordinator's backend (a data directory at once; a cluster once the ISR has it), so
  /// `done` (optional) runs before commit_async returns, on this thread.
  void commit_async(std::function<void(const result<void>&)> done = {}) {
    auto r = commit(positions());
    if (done) done(r);
  }
  void commit_async(const std::map<topic_partition, offset_and_metadata>& offsets,
                    std::function<void(const result<void>&)> done = {}) {
    auto r = commit(offsets);
    if (done) done(r);
  }

  /// The group's committed offsets for `tps` (absent: nothing committed).
  std::map<topic_partition, offset_and_metadata> committed(const std::vector<topic_partition>& tps) const {
    return coord_.fetch_offsets(cfg_.group_id, tps);
  }

  std::vector<topic_partition> assignment() const { return std::vector<topic_partition>(owned_.begin(), owned_.end()); }
  result<offset> position(const topic_partition& tp) { return inner_.position(tp); }
  result<void> seek(const topic_partition& tp, offset o) { return inner_.seek(tp, o); }
  result<void> seek_to_beginning(const std::vector<topic_partition>& tps) { return inner_.seek_to_beginning(tps); }
  result<void> seek_to_end(const std::vector<topic_partition>& tps) { return inner_.seek_to_end(tps); }
  void pause(const std::vector<topic_partition>& tps) { inner_.pause(tps); }
  void resume(const std::vector<topic_partition>& tps) { inner_.resume(tps); }
  result<std::map<topic_partition, offset>> end_offsets(const std::vector<topic_partition>& tps) {
    return inner_.end_offsets(tps);
  }

  consumer_group_metadata group_metadata() const {
    return {cfg_.group_id, generation_, member_id_, cfg_.group_instance_id};
  }
  /// The error of the last automatic commit, if it failed.
  const std::optional<error>& last_auto_commit_error() const noexcept { return auto_commit_error_; }

  /// Makes a blocked (or the next) poll() fail with errc::wakeup (once). Thread-safe.
  void wakeup() {
    {
      std::lock_guard lk(replies_->mu);
      replies_->woken = true;
    }
    replies_->cv.notify_all();
    src_.notifier().notify();
  }

  /// Commits (with auto-commit), revokes the partitions (listener) and leaves the group; a
  /// static member does not leave (its session keeps its place, KIP-345). `o` can keep the
  /// member in the group and skip the commit and callbacks: close({false, false}) stops as a
  /// crashed process does, and the coordinator removes the member once its session times
  /// out. Idempotent.
  result<void> close(close_options o = {}) {
    if (closed_) return ok();
    result<void> r = ok();
    if (!subscription_.empty() || !member_id_.empty()) r = leave(o);
    closed_ = true;
    live_->alive.store(false);
    return r;
  }

 private:
  enum class phase { unjoined, joining, syncing, stable };

  /// Where the coordinator's answers land; shared so a late answer never outlives it.
  struct replies {
    std::mutex mu;
    std::condition_variable cv;
    std::uint64_t seq = 0;
    std::optional<result<join_group_response>> join;
    std::optional<result<std::vector<std::byte>>> sync;
    bool woken = false;
  };

  timestamp_ms now() const { return coord_.clock()->now_ms(); }

  /// Whether tp exists in the source's metadata.
  bool exists(const topic_partition& tp) const {
    auto n = src_.partition_count(tp.topic);
    return n && tp.partition.value() >= 0 && tp.partition.value() < *n;
  }

  result<void> check_open() const {
    if (closed_) return make_error(errc::closed, "the group consumer is closed");
    return ok();
  }

  /// Positions to commit: as Kafka's allConsumed(), not of partitions still waiting for a
  /// seek to the beginning or end.
  std::map<topic_partition, offset_and_metadata> positions() {
    std::map<topic_partition, offset_and_metadata> out;
    for (const auto& tp : owned_)
      if (inner_.has_position(tp) && !inner_.awaiting_reset(tp))
        if (auto p = inner_.position(tp); p) out[tp] = offset_and_metadata{*p, -1, {}};
    return out;
  }

  result<void> commit(const std::map<topic_partition, offset_and_metadata>& offsets) {
    BROOK_TRY(check_open());
    if (offsets.empty()) return ok();
    // As Kafka's client: only a member of a stable generation commits; the refusal is local
    // and asks for no extra rebalance.
    if (phase_ == phase::joining || phase_ == phase::syncing)
      return make_error(errc::rebalance_in_progress, "group '{}' is rebalancing; commit after it completes",
                        cfg_.group_id);
    if (phase_ == phase::unjoined && !subscription_.empty())
      return make_error(errc::illegal_generation, "this consumer is not a member of a generation of group '{}'",
                        cfg_.group_id);
    offset_commit_request req;
    req.group_id = cfg_.group_id;
    req.generation = generation_;
    req.member_id = member_id_;
    req.group_instance_id = cfg_.group_instance_id;
    req.offsets = offsets;
    auto r = coord_.commit_offsets(req);
    if (!r) note_group_error(r.error());
    return r;
  }

  void maybe_auto_commit() {
    if (!cfg_.enable_auto_commit || phase_ != phase::stable) return;
    const timestamp_ms t = now();
    if (t < next_auto_commit_) return;
    next_auto_commit_ = t + cfg_.auto_commit_interval.count();
    auto r = commit(positions());
    if (!r)
      auto_commit_error_ = r.error();
    else
      auto_commit_error_.reset();
  }

  /// Remembers what a refusal from the coordinator means for the membership.
  void note_group_error(const error& e) {
    if (e == errc::unknown_member_id || e == errc::illegal_generation)
      fenced_ = true;
    else if (e == errc::rebalance_in_progress)
      need_rejoin_ = true;
  }

  void call_listener(void (rebalance_listener::*fn)(const std::vector<topic_partition>&),
                     const std::vector<topic_partition>& tps) {
    if (listener_) (listener_->*fn)(tps);
  }

  /// The member is no longer in the group (or its generation is over): its partitions are lost.
  void lose_partitions() {
    std::vector<topic_partition> lost(owned_.begin(), owned_.end());
    owned_.clear();
    (void)inner_.assign({});
    if (!lost.empty()) call_listener(&rebalance_listener::on_partitions_lost, lost);
    member_id_.clear();
    generation_ = generation_id(-1);
    fenced_ = false;
    need_rejoin_ = true;
  }

  void revoke(const std::vector<topic_partition>& tps, bool commit_first) {
    if (tps.empty()) return;
    if (commit_first) {
      std::map<topic_partition, offset_and_metadata> offs;
      auto all = positions();
      for (const auto& tp : tps)
        if (auto it = all.find(tp); it != all.end()) offs.insert(*it);
      if (auto r = commit(offs); !r) auto_commit_error_ = r.error();
    }
    call_listener(&rebalance_listener::on_partitions_revoked, tps);
    for (const auto& tp : tps) owned_.erase(tp);
    (void)assign_inner();  // fails only if a topic is deleted meanwhile; its partitions are dropped next time
  }

  /// Points the inner consumer at the owned partitions, dropping those whose topic is gone.
  result<void> assign_inner() {
    std::erase_if(owned_, [&](const topic_partition& tp) { return !exists(tp); });
    return inner_.assign(std::vector<topic_partition>(owned_.begin(), owned_.end()));
  }

  result<void> leave(close_options o) {
    if (o.commit_and_revoke) {
      if (fenced_) lose_partitions();
      if (!owned_.empty()) revoke(std::vector<topic_partition>(owned_.begin(), owned_.end()), cfg_.enable_auto_commit);
    }
    result<void> r = ok();
    if (o.leave_group && !member_id_.empty() && !cfg_.group_instance_id) {
      r = coord_.leave_group(cfg_.group_id, member_id_);
      if (!r && (r.error() == errc::unknown_member_id || r.error() == errc::illegal_generation)) r = ok();
    }
    member_id_.clear();
    generation_ = generation_id(-1);
    phase_ = phase::unjoined;
    {
      std::lock_guard lk(replies_->mu);
      ++replies_->seq;  // answers to requests still in flight are ignored
      replies_->join.reset();
      replies_->sync.reset();
    }
    return r;
  }

  /// Before a rejoin: eager groups revoke everything (after committing); cooperative ones
  /// revoke only the partitions of topics no longer subscribed.
  void prepare_rejoin() {
    if (fenced_) lose_partitions();
    if (!cooperative_) {
      revoke(std::vector<topic_partition>(owned_.begin(), owned_.end()), cfg_.enable_auto_commit);
    } else if (subscription_changed_) {
      std::vector<topic_partition> gone;
      for (const auto& tp : owned_)
        if (!std::binary_search(subscription_.begin(), subscription_.end(), tp.topic)) gone.push_back(tp);
      revoke(gone, cfg_.enable_auto_commit);
    }
    subscription_changed_ = false;
    need_rejoin_ = false;
    phase_ = phase::unjoined;
  }

  result<void> heartbeat() {
    last_heartbeat_ = now();
    auto r = coord_.heartbeat(cfg_.group_id, generation_, member_id_, cfg_.group_instance_id);
    if (!r) {
      if (r.error() == errc::fenced_instance_id) return r.error();
      note_group_error(r.error());
    }
    return ok();
  }

  void send_join() {
    join_group_request req;
    req.group_id = cfg_.group_id;
    req.member_id = member_id_;
    req.group_instance_id = cfg_.group_instance_id;
    req.client_id = cfg_.client_id;
    req.session_timeout = cfg_.session_timeout;
    req.rebalance_timeout = cfg_.max_poll_interval;
    req.protocol_type = std::string(consumer_protocol_type);
    req.liveness = live_;
    member_subscription sub;
    sub.topics = subscription_;
    sub.owned_partitions.assign(owned_.begin(), owned_.end());
    sub.generation = generation_.value();
    sub.group_instance_id = cfg_.group_instance_id;
    for (const auto& a : cfg_.assignors)
      req.protocols.push_back(group_protocol{std::string(a->name()), encode_subscription(sub)});
    std::uint64_t seq;
    {
      std::lock_guard lk(replies_->mu);
      seq = ++replies_->seq;
      replies_->join.reset();
      replies_->sync.reset();
    }
    live_->rejoin_needed.store(false);
    need_rejoin_ = false;
    subscription_changed_ = false;  // this join carries the current subscription
    phase_ = phase::joining;
    auto id = coord_.join_group(std::move(req), [rep = replies_, seq](result<join_group_response> r) {
      {
        std::lock_guard lk(rep->mu);
        if (rep->seq != seq) return;
        rep->join = std::move(r);
      }
      rep->cv.notify_all();
    });
    if (member_id_.empty()) member_id_ = std::move(id);  // lets close() leave before the join completes
  }

  void send_sync(std::map<std::string, std::vector<std::byte>> assignments) {
    sync_group_request req;
    req.group_id = cfg_.group_id;
    req.generation = generation_;
    req.member_id = member_id_;
    req.group_instance_id = cfg_.group_instance_id;
    req.assignments = std::move(assignments);
    std::uint64_t seq;
    {
      std::lock_guard lk(replies_->mu);
      seq = ++replies_->seq;
      replies_->sync.reset();
    }
    phase_ = phase::syncing;
    coord_.sync_group(std::move(req), [rep = replies_, seq](result<std::vector<std::byte>> r) {
      {
        std::lock_guard lk(rep->mu);
        if (rep->seq != seq) return;
        rep->sync = std::move(r);
      }
      rep->cv.notify_all();
    });
  }

  bool woken() const {
    std::lock_guard lk(replies_->mu);
    return replies_->woken;
  }
  bool take_wakeup() {
    std::lock_guard lk(replies_->mu);
    return std::exchange(replies_->woken, false);
  }

  /// Waits (until the deadline) for the answer `slot` selects. nullopt: not yet.
  template <typename T>
  result<std::optional<T>> wait_reply(std::optional<T> replies::*slot, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lk(replies_->mu);
    auto ready = [&] { return (*replies_).*slot || replies_->woken; };
    // An elapsed deadline (poll(0ms)) must not enter the kernel: a timed futex wait sleeps
    // for the timer slack (~50-100 us) even when its time has passed.
    if (!ready() && std::chrono::steady_clock::now() < deadline) replies_->cv.wait_until(lk, deadline, ready);
    if (replies_->woken) {
      replies_->woken = false;
      return make_error(errc::wakeup, "poll() interrupted by wakeup()");
    }
    std::optional<T> out = std::move((*replies_).*slot);
    ((*replies_).*slot).reset();
    return out;
  }

  /// Runs the membership state machine. true: the member is in a stable group and may fetch.
  result<bool> ensure_active(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      switch (phase_) {
        case phase::stable: {
          if (fenced_) {
            lose_partitions();
            phase_ = phase::unjoined;
            continue;
          }
          if (live_->rejoin_needed.exchange(false) || now() - last_heartbeat_ >= cfg_.heartbeat_interval.count())
            BROOK_TRY(heartbeat());
          if (fenced_ || need_rejoin_ || subscription_changed_) {
            prepare_rejoin();
            continue;
          }
          return true;
        }
        case phase::unjoined:
          if (fenced_) lose_partitions();
          send_join();
          continue;
        case phase::joining: {
          BROOK_TRY_ASSIGN(auto reply, wait_reply(&replies::join, deadline));
          if (!reply) return false;
          auto& jr = *reply;
          if (!jr) {
            auto e = jr.error();
            if (e == errc::unknown_member_id || e == errc::illegal_generation) {
              lose_partitions();
              phase_ = phase::unjoined;
              if (std::chrono::steady_clock::now() >= deadline) return false;
              continue;
            }
            phase_ = phase::unjoined;
            return e;
          }
          member_id_ = jr->member_id;
          // Generations only grow (a static member's rejoin may keep the current one).
          BROOK_ASSERT(jr->generation >= generation_, "group {}: generation {} after {}", cfg_.group_id, jr->generation,
                       generation_);
          generation_ = jr->generation;
          std::map<std::string, std::vector<std::byte>> assignments;
          if (jr->leader == member_id_ && !jr->members.empty()) {
            auto a = compute_assignment(*jr);
            if (!a) {
              phase_ = phase::unjoined;
              return a.error();
            }
            assignments = std::move(*a);
          }
          send_sync(std::move(assignments));
          continue;
        }
        case phase::syncing: {
          BROOK_TRY_ASSIGN(auto reply, wait_reply(&replies::sync, deadline));
          if (!reply) return false;
          auto& sr = *reply;
          if (!sr) {
            auto e = sr.error();
            if (e == errc::fenced_instance_id) {
              phase_ = phase::unjoined;
              return e;
            }
            if (e == errc::unknown_member_id || e == errc::illegal_generation) lose_partitions();
            phase_ = phase::unjoined;
            if (std::chrono::steady_clock::now() >= deadline) return false;
            continue;
          }
          auto assigned = decode_assignment(*sr);
          if (!assigned) {
            phase_ = phase::unjoined;
            return assigned.error();
          }
          phase_ = phase::stable;  // the group is Stable at this generation: commits are accepted
          if (auto applied = apply_assignment(*assigned); !applied) {
            // Never stay half-assigned: give everything up and rejoin on the next poll.
            lose_partitions();
            phase_ = phase::unjoined;
            return applied.error();
          }
          last_heartbeat_ = now();
          if (next_auto_commit_ == 0) next_auto_commit_ = now() + cfg_.auto_commit_interval.count();
          continue;
        }
      }
    }
  }

  result<std::map<std::string, std::vector<std::byte>>> compute_assignment(const join_group_response& jr) {
    std::shared_ptr<assignor> chosen;
    for (const auto& a : cfg_.assignors)
      if (a->name() == jr.protocol_name) chosen = a;
    if (!chosen)
      return make_error(errc::inconsistent_group_protocol, "the group chose '{}', which this member does not offer",
                        jr.protocol_name);
    std::vector<member_subscription> subs;
    std::map<std::string, std::int32_t> counts;
    for (const auto& m : jr.members) {
      BROOK_TRY_ASSIGN(auto s, decode_subscription(m.metadata));
      s.member_id = m.member_id;
      s.group_instance_id = m.group_instance_id;
      for (const auto& t : s.topics)
        if (auto n = src_.partition_count(t); n) counts[t] = *n;
      subs.push_back(std::move(s));
    }
    auto plan = chosen->assign(counts, subs);
    std::map<std::string, std::vector<std::byte>> out;
    for (const auto& m : jr.members) out[m.member_id] = encode_assignment(plan[m.member_id]);
    return out;
  }

  result<void> apply_assignment(const std::vector<topic_partition>& assigned) {
    std::set<topic_partition> next(assigned.begin(), assigned.end());
    std::vector<topic_partition> revoked, added;
    for (const auto& tp : owned_)
      if (!next.count(tp)) revoked.push_back(tp);
    for (const auto& tp : next)
      if (!owned_.count(tp)) added.push_back(tp);
    // Partitions of topics deleted since the leader computed the plan are skipped.
    std::erase_if(added, [&](const topic_partition& tp) { return !exists(tp); });
    if (!revoked.empty()) {
      revoke(revoked, cfg_.enable_auto_commit);
      need_rejoin_ = true;  // KIP-429: the revoked partitions go to their new owner in a follow-up rebalance
    }
    for (const auto& tp : added) owned_.insert(tp);
    BROOK_TRY(assign_inner());
    call_listener(&rebalance_listener::on_partitions_assigned, added);
    // Positions: the listener's seeks win; otherwise the committed offset; otherwise
    // auto.offset.reset at the first fetch.
    std::vector<topic_partition> need;
    for (const auto& tp : added)
      if (!inner_.has_position(tp)) need.push_back(tp);
    if (!need.empty())
      for (const auto& [tp, c] : coord_.fetch_offsets(cfg_.group_id, need)) BROOK_TRY(inner_.seek(tp, c.off));
    return ok();
  }

  std::unique_ptr<fetch_source> owned_source_;  // set when constructed on a data_dir
  fetch_source& src_;
  group_coordinator& coord_;
  group_consumer_config cfg_;
  consumer inner_;
  std::shared_ptr<member_liveness> live_;
  std::shared_ptr<replies> replies_;
  rebalance_listener* listener_ = nullptr;
  bool cooperative_ = false;
  std::vector<std::string> subscription_;
  bool subscription_changed_ = false;
  phase phase_ = phase::unjoined;
  std::string member_id_;
  generation_id generation_{-1};
  std::set<topic_partition> owned_;
  bool fenced_ = false;
  bool need_rejoin_ = false;
  bool closed_ = false;
  timestamp_ms last_heartbeat_ = 0;
  timestamp_ms next_auto_commit_ = 0;
  std::optional<error> auto_commit_error_;
};

}  // namespace brook

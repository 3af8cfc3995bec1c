// The definitions of group_consumer's members; <brook/group/group_consumer.hpp> says what each does.
// BROOK_DECL (core/linkage.hpp) makes them inline, the header-only default, or external,
// compiled once in <brook/src.hpp> under BROOK_SEPARATE_COMPILATION.
#pragma once

#include <brook/group/group_consumer.hpp>

namespace brook {

BROOK_DECL group_consumer::group_consumer(group_coordinator& coordinator, group_consumer_config cfg)
    : group_consumer(nullptr, coordinator, std::move(cfg)) {}

BROOK_DECL group_consumer::group_consumer(data_dir& dd, group_coordinator& coordinator, group_consumer_config cfg)
    : group_consumer(std::make_unique<data_dir_source>(dd), coordinator, std::move(cfg)) {}

BROOK_DECL group_consumer::~group_consumer() { (void)close(); }

BROOK_DECL group_consumer::group_consumer(std::unique_ptr<fetch_source> owned, group_coordinator& coordinator,
                                          group_consumer_config cfg)
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

BROOK_DECL result<void> group_consumer::subscribe(std::vector<std::string> topics, rebalance_listener* listener) {
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

BROOK_DECL result<void> group_consumer::unsubscribe() {
  BROOK_TRY(check_open());
  auto r = leave(close_options{});
  subscription_.clear();
  subscription_changed_ = false;
  return r;
}

BROOK_DECL result<consumer_records> group_consumer::poll(std::chrono::milliseconds timeout) {
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

BROOK_DECL void group_consumer::commit_async(std::function<void(const result<void>&)> done) {
  auto r = commit(positions());
  if (done) done(r);
}

BROOK_DECL void group_consumer::commit_async(const std::map<topic_partition, offset_and_metadata>& offsets,
                                             std::function<void(const result<void>&)> done) {
  auto r = commit(offsets);
  if (done) done(r);
}

BROOK_DECL std::map<topic_partition, offset_and_metadata> group_consumer::committed(
    const std::vector<topic_partition>& tps) const {
  return coord_.fetch_offsets(cfg_.group_id, tps);
}

BROOK_DECL result<std::map<topic_partition, offset>> group_consumer::end_offsets(
    const std::vector<topic_partition>& tps) {
  return inner_.end_offsets(tps);
}

BROOK_DECL consumer_group_metadata group_consumer::group_metadata() const {
  return {cfg_.group_id, generation_, member_id_, cfg_.group_instance_id};
}

BROOK_DECL void group_consumer::wakeup() {
  {
    std::lock_guard lk(replies_->mu);
    replies_->woken = true;
  }
  replies_->cv.notify_all();
  src_.notifier().notify();
}

BROOK_DECL result<void> group_consumer::close(close_options o) {
  if (closed_) return ok();
  result<void> r = ok();
  if (!subscription_.empty() || !member_id_.empty()) r = leave(o);
  closed_ = true;
  live_->alive.store(false);
  return r;
}

BROOK_DECL bool group_consumer::exists(const topic_partition& tp) const {
  auto n = src_.partition_count(tp.topic);
  return n && tp.partition.value() >= 0 && tp.partition.value() < *n;
}

BROOK_DECL result<void> group_consumer::check_open() const {
  if (closed_) return make_error(errc::closed, "the group consumer is closed");
  return ok();
}

BROOK_DECL std::map<topic_partition, offset_and_metadata> group_consumer::positions() {
  std::map<topic_partition, offset_and_metadata> out;
  for (const auto& tp : owned_)
    if (inner_.has_position(tp) && !inner_.awaiting_reset(tp))
      if (auto p = inner_.position(tp); p) out[tp] = offset_and_metadata{*p, -1, {}};
  return out;
}

BROOK_DECL result<void> group_consumer::commit(const std::map<topic_partition, offset_and_metadata>& offsets) {
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

BROOK_DECL void group_consumer::maybe_auto_commit() {
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

BROOK_DECL void group_consumer::note_group_error(const error& e) {
  if (e == errc::unknown_member_id || e == errc::illegal_generation)
    fenced_ = true;
  else if (e == errc::rebalance_in_progress)
    need_rejoin_ = true;
}

BROOK_DECL void group_consumer::call_listener(void (rebalance_listener::*fn)(const std::vector<topic_partition>&),
                                              const std::vector<topic_partition>& tps) {
  if (listener_) (listener_->*fn)(tps);
}

BROOK_DECL void group_consumer::lose_partitions() {
  std::vector<topic_partition> lost(owned_.begin(), owned_.end());
  owned_.clear();
  (void)inner_.assign({});
  if (!lost.empty()) call_listener(&rebalance_listener::on_partitions_lost, lost);
  member_id_.clear();
  generation_ = generation_id(-1);
  fenced_ = false;
  need_rejoin_ = true;
}

BROOK_DECL void group_consumer::revoke(const std::vector<topic_partition>& tps, bool commit_first) {
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

BROOK_DECL result<void> group_consumer::assign_inner() {
  std::erase_if(owned_, [&](const topic_partition& tp) { return !exists(tp); });
  return inner_.assign(std::vector<topic_partition>(owned_.begin(), owned_.end()));
}

BROOK_DECL result<void> group_consumer::leave(close_options o) {
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

BROOK_DECL void group_consumer::prepare_rejoin() {
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

BROOK_DECL result<void> group_consumer::heartbeat() {
  last_heartbeat_ = now();
  auto r = coord_.heartbeat(cfg_.group_id, generation_, member_id_, cfg_.group_instance_id);
  if (!r) {
    if (r.error() == errc::fenced_instance_id) return r.error();
    note_group_error(r.error());
  }
  return ok();
}

BROOK_DECL void group_consumer::send_join() {
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

BROOK_DECL void group_consumer::send_sync(std::map<std::string, std::vector<std::byte>> assignments) {
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

BROOK_DECL bool group_consumer::woken() const {
  std::lock_guard lk(replies_->mu);
  return replies_->woken;
}

BROOK_DECL bool group_consumer::take_wakeup() {
  std::lock_guard lk(replies_->mu);
  return std::exchange(replies_->woken, false);
}

BROOK_DECL result<bool> group_consumer::ensure_active(std::chrono::steady_clock::time_point deadline) {
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

BROOK_DECL result<std::map<std::string, std::vector<std::byte>>> group_consumer::compute_assignment(
    const join_group_response& jr) {
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

BROOK_DECL result<void> group_consumer::apply_assignment(const std::vector<topic_partition>& assigned) {
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

}  // namespace brook

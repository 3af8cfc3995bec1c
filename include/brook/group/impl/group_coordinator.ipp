// The definitions of group_coordinator's members; <brook/group/group_coordinator.hpp> says what each does.
// BROOK_DECL (core/linkage.hpp) makes them inline, the header-only default, or external,
// compiled once in <brook/src.hpp> under BROOK_SEPARATE_COMPILATION.
#pragma once

#include <brook/group/group_coordinator.hpp>

namespace brook {

BROOK_DECL group_coordinator::~group_coordinator() { stop(); }

BROOK_DECL result<std::unique_ptr<group_coordinator>> group_coordinator::open(data_dir& dd, coordinator_config cfg) {
  auto owned = std::make_unique<data_dir_backend>(dd);
  auto& backend = *owned;
  return open_with(std::move(owned), backend, cfg);
}

BROOK_DECL result<std::unique_ptr<group_coordinator>> group_coordinator::open(coordinator_backend& backend,
                                                                              coordinator_config cfg) {
  return open_with(nullptr, backend, cfg);
}

BROOK_DECL std::string group_coordinator::join_group(join_group_request req, join_callback done) {
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

BROOK_DECL void group_coordinator::sync_group(sync_group_request req, sync_callback done) {
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

BROOK_DECL result<void> group_coordinator::heartbeat(const std::string& group_id, generation_id generation,
                                                     const std::string& member_id,
                                                     const std::optional<std::string>& group_instance_id) {
  std::lock_guard lk(mu_);
  classic_group* g = find_group(group_id);
  if (!g) return unknown_member(group_id, member_id);
  return g->heartbeat(generation, member_id, group_instance_id);
}

BROOK_DECL result<void> group_coordinator::leave_group(const std::string& group_id, const std::string& member_id,
                                                       const std::optional<std::string>& group_instance_id) {
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

BROOK_DECL result<void> group_coordinator::commit_offsets(const offset_commit_request& req) {
  std::lock_guard lk(mu_);
  BROOK_TRY(validate_group_id(req.group_id));
  BROOK_TRY(check_offsets(req.offsets));
  BROOK_TRY_ASSIGN(classic_group * g, group_for_commit(req));
  if (req.offsets.empty()) return ok();
  const timestamp_ms t = now();
  std::vector<std::pair<topic_partition, offset_and_metadata>> values;
  for (const auto& [tp, om] : req.offsets) {
    offset_and_metadata v = om;
    if (v.commit_timestamp < 0) v.commit_timestamp = t;  // OffsetCommit v1 may carry the client's time
    values.emplace_back(tp, std::move(v));
  }
  BROOK_TRY(store_->append_offsets(req.group_id, values, t));
  for (auto& [tp, v] : values) g->offsets()[tp] = std::move(v);
  return ok();
}

BROOK_DECL std::map<topic_partition, offset_and_metadata> group_coordinator::fetch_offsets(
    const std::string& group_id, const std::optional<std::vector<topic_partition>>& tps) const {
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

BROOK_DECL result<std::vector<partition_lag>> group_coordinator::lag(const std::string& group_id) const {
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

BROOK_DECL result<group_description> group_coordinator::describe_group(const std::string& group_id) const {
  std::lock_guard lk(mu_);
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return make_error(errc::group_id_not_found, "group '{}' does not exist", group_id);
  return it->second->describe();
}

BROOK_DECL std::vector<group_listing> group_coordinator::list_groups() const {
  std::lock_guard lk(mu_);
  std::vector<group_listing> out;
  for (const auto& [id, g] : groups_) out.push_back({id, g->state(), g->protocol_type()});
  return out;
}

BROOK_DECL result<void> group_coordinator::alter_offsets(
    const std::string& group_id, const std::map<topic_partition, offset_and_metadata>& offsets) {
  {
    std::lock_guard lk(mu_);
    if (auto* g = find_group(group_id); g && g->member_count() > 0)
      return make_error(errc::non_empty_group,
                        "group '{}' has {} active member(s) ({}); offsets can be reset only when it has none", group_id,
                        g->member_count(), group_state_name(g->state()));
  }
  offset_commit_request req;
  req.group_id = group_id;
  req.offsets = offsets;
  return commit_offsets(req);
}

BROOK_DECL result<void> group_coordinator::delete_group(const std::string& group_id) {
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

BROOK_DECL result<void> group_coordinator::tick() {
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

BROOK_DECL void group_coordinator::start() {
  stop();
  std::lock_guard lk(timer_mu_);
  timer_stop_ = false;
  timer_ = std::thread([this] { run_timer(); });
}

BROOK_DECL void group_coordinator::stop() {
  {
    std::lock_guard lk(timer_mu_);
    timer_stop_ = true;
  }
  timer_cv_.notify_all();
  if (timer_.joinable()) timer_.join();
}

BROOK_DECL group_coordinator::group_coordinator(std::unique_ptr<coordinator_backend> owned,
                                                coordinator_backend& backend, coordinator_config cfg,
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

BROOK_DECL result<std::unique_ptr<group_coordinator>> group_coordinator::open_with(
    std::unique_ptr<coordinator_backend> owned, coordinator_backend& backend, coordinator_config cfg) {
  if (cfg.group_min_session_timeout > cfg.group_max_session_timeout)
    return make_error(errc::invalid_config, "group.min.session.timeout.ms {} exceeds group.max.session.timeout.ms {}",
                      cfg.group_min_session_timeout.count(), cfg.group_max_session_timeout.count());
  BROOK_TRY_ASSIGN(auto store, offset_store::open(backend, cfg.offsets_topic_num_partitions));
  std::unique_ptr<group_coordinator> c(new group_coordinator(std::move(owned), backend, cfg, std::move(store)));
  BROOK_TRY(c->load());
  return c;
}

BROOK_DECL void group_coordinator::run_timer() {
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

BROOK_DECL void group_coordinator::wake_timer() {
  {
    std::lock_guard lk(timer_mu_);
    timer_poke_ = true;
  }
  timer_cv_.notify_all();
}

BROOK_DECL timestamp_ms group_coordinator::next_deadline() const {
  std::lock_guard lk(mu_);
  timestamp_ms next = next_retention_check_;
  for (const auto& [_, g] : groups_) next = g->next_deadline(next);
  return next;
}

BROOK_DECL result<void> group_coordinator::load() {
  BROOK_TRY_ASSIGN(auto stored, store_->load(&skipped_records_));
  for (auto& [id, sg] : stored) {
    classic_group& g = create_group(id);
    g.offsets() = std::move(sg.offsets);
    // Members of a previous process cannot come back: the group restarts Empty. Say so
    // in the stored metadata too, so tools reading the directory see no stale members.
    if (sg.metadata && g.restore(*sg.metadata) && !backend_.read_only()) BROOK_TRY(g.store());
  }
  return ok();
}

BROOK_DECL result<void> group_coordinator::validate_group_id(const std::string& id) {
  if (id.empty()) return make_error(errc::invalid_group_id, "the group id is empty");
  return ok();
}

BROOK_DECL error group_coordinator::unknown_member(const std::string& group_id, const std::string& member_id) {
  return make_error(errc::unknown_member_id, "group '{}' has no member '{}'", group_id, member_id);
}

BROOK_DECL result<void> group_coordinator::check_join(const join_group_request& req) const {
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

BROOK_DECL result<void> group_coordinator::check_offsets(
    const std::map<topic_partition, offset_and_metadata>& offsets) const {
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

BROOK_DECL result<classic_group*> group_coordinator::group_for_commit(const offset_commit_request& req) {
  // Kafka's OffsetMetadataManager and ClassicGroup.validateOffsetCommit: a negative generation
  // is a commit outside group management (an admin client, an assign() consumer), accepted on
  // a group that is missing (created) or Empty whatever member id it carries.
  const bool simple = req.generation.value() < 0;
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

BROOK_DECL classic_group* group_coordinator::find_group(const std::string& id) {
  auto it = groups_.find(id);
  return it == groups_.end() ? nullptr : it->second.get();
}

BROOK_DECL classic_group& group_coordinator::create_group(const std::string& id) {
  auto& slot = groups_[id];
  if (!slot) slot = std::make_unique<classic_group>(id, services_);
  return *slot;
}

BROOK_DECL result<void> group_coordinator::expire_offsets(timestamp_ms t) {
  const std::int64_t retention = std::chrono::duration_cast<std::chrono::milliseconds>(cfg_.offsets_retention).count();
  std::vector<std::string> dead;
  for (auto& [id, g] : groups_) {
    std::vector<topic_partition> expired = expired_offsets(*g, t, retention);
    const bool forget = g->state() == group_state::empty && g->member_count() == 0 && !g->has_pending_members() &&
                        expired.size() == g->offsets().size();
    if (expired.empty() && !forget) continue;
    BROOK_TRY(store_->append_tombstones(id, expired, forget, t));
    for (const auto& tp : expired) g->offsets().erase(tp);
    if (forget) dead.push_back(id);
  }
  for (const auto& id : dead) groups_.erase(id);
  return ok();
}

BROOK_DECL std::vector<topic_partition> group_coordinator::expired_offsets(const classic_group& g, timestamp_ms t,
                                                                           std::int64_t retention) {
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

}  // namespace brook

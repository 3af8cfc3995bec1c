// The definitions of data_dir's members; <brook/storage/data_dir.hpp> says what each does.
// BROOK_DECL (core/linkage.hpp) makes them inline, the header-only default, or external,
// compiled once in <brook/src.hpp> under BROOK_SEPARATE_COMPILATION.
#pragma once

#include <brook/storage/data_dir.hpp>

namespace brook {

BROOK_DECL data_dir::~data_dir() {
  {
    std::unique_lock l(anchor_->mu);  // waits for clients' calls in flight
    anchor_->dir = nullptr;
  }
  anchor_->version.fetch_add(1, std::memory_order_acq_rel);  // cached answers are asked again: gone
  (void)close();                                             // wakes blocked polls: they find the directory gone
}

BROOK_DECL result<std::unique_ptr<data_dir>> data_dir::open(const fs::path& dir, data_dir_options opts) {
  if (!opts.defaults.clock) opts.defaults.clock = make_system_clock();
  if (!opts.defaults.files) opts.defaults.files = posix_file_system::shared();
  BROOK_TRY(opts.defaults.validate());
  std::unique_ptr<data_dir> d(new data_dir(dir, std::move(opts)));
  BROOK_TRY(d->load());
  return d;
}

BROOK_DECL result<void> data_dir::create_topic(const std::string& name, topic_config tc, const uuid& topic_id) {
  if (is_internal_topic(name))
    return make_error(errc::invalid_topic, "'{}' is an internal topic: brook creates it when it needs it", name);
  return create_any_topic(name, std::move(tc), topic_id);
}

BROOK_DECL result<void> data_dir::create_internal_topic(const std::string& name, topic_config tc,
                                                        const uuid& topic_id) {
  BROOK_ASSERT(is_internal_topic(name), "create_internal_topic('{}'): not an internal topic", name);
  return create_any_topic(name, std::move(tc), topic_id);
}

BROOK_DECL result<void> data_dir::create_any_topic(const std::string& name, topic_config tc, const uuid& topic_id) {
  BROOK_ASSERT(topic_id.is_zero() || !topic_id.is_reserved(), "topic '{}' created with the reserved id {}", name,
               topic_id.to_string());
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
  BROOK_TRY(finish_unfinished(name));
  // Recorded as a deletion until its partitions exist: an error or a crash part-way leaves
  // directories for the next open to remove, never to adopt as a topic.
  unfinished_[name] = 0;
  BROOK_TRY(save_configs_locked());
  topic_state ts;
  ts.config = std::move(tc);
  ts.log_config = cfg;
  ts.topic_id = topic_id.is_zero() ? new_topic_id() : topic_id;
  for (std::int32_t p = 0; p < ts.config.partitions; ++p) {
    auto part = create_partition(name, partition_id(p), ts.log_config, ts.topic_id);
    if (!part) {
      undo_partitions(name, 0, ts.partitions);
      return part.error();
    }
    ts.partitions.push_back(std::move(*part));
  }
  topics_.emplace(name, std::move(ts));
  unfinished_.erase(name);
  if (auto r = save_configs_locked(); !r) {
    // The file holds the topic or still its deletion: leave the directories to the next open.
    for (const auto& p : topics_[name].partitions) (void)p->log().close();
    topics_.erase(name);
    unfinished_[name] = 0;
    return r;
  }
  bump_metadata();
  return ok();
}

BROOK_DECL std::vector<std::string> data_dir::list_topics() const {
  std::shared_lock lk(mu_);
  std::vector<std::string> out;
  for (const auto& [n, _] : topics_) out.push_back(n);
  return out;
}

BROOK_DECL result<topic_description> data_dir::describe_topic(const std::string& name) const {
  std::shared_lock lk(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) return unknown_topic(name);
  topic_description d;
  d.name = name;
  d.topic_id = it->second.topic_id;
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

BROOK_DECL result<void> data_dir::create_partitions(const std::string& name, std::int32_t total) {
  std::unique_lock lk(mu_);
  BROOK_TRY(writable());
  auto it = topics_.find(name);
  if (it == topics_.end()) return unknown_topic(name);
  auto& ts = it->second;
  if (total <= ts.config.partitions)
    return make_error(errc::invalid_partitions, "topic '{}' has {} partitions; the new count {} must be larger", name,
                      ts.config.partitions, total);
  const std::int32_t before = ts.config.partitions;
  BROOK_TRY(finish_unfinished(name));
  // Until the new count is saved, the file says that directories past `before` are strays.
  unfinished_[name] = before;
  BROOK_TRY(save_configs_locked());
  std::vector<std::shared_ptr<partition>> added;
  for (std::int32_t p = before; p < total; ++p) {
    auto part = create_partition(name, partition_id(p), ts.log_config, ts.topic_id);
    if (!part) {
      undo_partitions(name, before, added);
      return part.error();
    }
    added.push_back(std::move(*part));
  }
  ts.config.partitions = total;
  unfinished_.erase(name);
  if (auto r = save_configs_locked(); !r) {
    // The file holds either count: leave the directories to the next open.
    ts.config.partitions = before;
    unfinished_[name] = before;
    for (const auto& p : added) (void)p->log().close();
    return r;
  }
  ts.partitions.insert(ts.partitions.end(), added.begin(), added.end());
  bump_metadata();
  return ok();
}

BROOK_DECL result<void> data_dir::delete_topic(const std::string& name) {
  std::unique_lock lk(mu_);
  BROOK_TRY(writable());
  auto it = topics_.find(name);
  if (it == topics_.end()) return unknown_topic(name);
  // From here the topic is gone from this data_dir, and every save of topic-configs records
  // its deletion until its directories are gone: an error or a crash part-way leaves a
  // deletion the next open finishes, never orphan directories adopted as a topic.
  auto parts = std::move(it->second.partitions);
  topics_.erase(it);
  unfinished_[name] = 0;
  bump_metadata();
  // Its records are being deleted: a failed flush loses nothing anyone reads again.
  for (const auto& p : parts) (void)p->log().close();
  BROOK_TRY(save_configs_locked());
  BROOK_TRY(remove_partition_dirs(name));
  unfinished_.erase(name);
  // A deletion mark that names no directory is harmless (the next open drops it), so the
  // deletion is done even if this save fails.
  (void)save_configs_locked();
  return ok();
}

BROOK_DECL result<std::int32_t> data_dir::partition_count(const std::string& name) const {
  std::shared_lock lk(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) return unknown_topic(name);
  return it->second.config.partitions;
}

BROOK_DECL result<uuid> data_dir::topic_id(const std::string& name) const {
  std::shared_lock lk(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) return unknown_topic(name);
  return it->second.topic_id;
}

BROOK_DECL result<std::string> data_dir::topic_name(const uuid& id) const {
  std::shared_lock lk(mu_);
  if (!id.is_zero())
    for (const auto& [name, ts] : topics_)
      if (ts.topic_id == id) return name;
  return make_error(errc::unknown_topic_id, "no topic has id {}", id.to_string());
}

BROOK_DECL result<std::shared_ptr<partition>> data_dir::get_partition(const std::string& name, partition_id p) const {
  std::shared_lock lk(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) return unknown_topic(name);
  if (p.value() < 0 || p.value() >= static_cast<std::int32_t>(it->second.partitions.size()))
    return make_error(errc::unknown_topic_or_partition, "topic '{}' has no partition {}", name, p);
  return it->second.partitions[static_cast<std::size_t>(p.value())];
}

BROOK_DECL result<void> data_dir::tick() {
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

BROOK_DECL void data_dir::start_housekeeping(std::chrono::milliseconds interval) {
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

BROOK_DECL void data_dir::stop_housekeeping() {
  {
    std::lock_guard lk(hk_mu_);
    hk_stop_ = true;
  }
  hk_cv_.notify_all();
  if (hk_thread_.joinable()) hk_thread_.join();
}

BROOK_DECL std::optional<error> data_dir::last_housekeeping_error() const {
  std::lock_guard lk(hk_mu_);
  return hk_last_error_;
}

BROOK_DECL result<void> data_dir::close() {
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

BROOK_DECL data_dir::data_dir(fs::path dir, data_dir_options opts)
    : dir_(std::move(dir)),
      opts_(std::move(opts)),
      notify_(opts_.notifier ? opts_.notifier : std::make_shared<brook::notifier>()),
      anchor_(std::make_shared<data_dir_anchor>()) {
  anchor_->dir = this;
  anchor_->notify = notify_;
  anchor_->path = dir_;
  std::random_device rd;
  std::seed_seq seed{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
  id_rng_.seed(seed);
}

BROOK_DECL result<void> data_dir::maybe_compact(partition& p) {
  const log_config& cfg = p.log().config();
  if (!cfg.compacts()) return ok();
  compact_options co;
  co.upper_bound = p.high_watermark();
  BROOK_TRY_ASSIGN(auto info, p.log().cleanable(co.upper_bound));
  if (info.dirty_bytes == 0 || info.dirty_ratio() < cfg.min_cleanable_dirty_ratio) return ok();
  BROOK_TRY(p.log().compact(co));
  return ok();
}

BROOK_DECL void data_dir::undo_partitions(const std::string& name, std::int32_t keep,
                                          const std::vector<std::shared_ptr<partition>>& parts) {
  for (const auto& p : parts) (void)p->log().close();
  if (remove_partition_dirs(name, keep)) unfinished_.erase(name);
}

BROOK_DECL result<void> data_dir::finish_unfinished(const std::string& name) {
  auto it = unfinished_.find(name);
  if (it == unfinished_.end()) return ok();
  // The file may still name the directories (the save that marked them failed): mark first.
  BROOK_TRY(save_configs_locked());
  BROOK_TRY(remove_partition_dirs(name, it->second));
  unfinished_.erase(it);
  return ok();
}

BROOK_DECL result<void> data_dir::remove_partition_dirs(const std::string& name, std::int32_t from) {
  BROOK_TRY_ASSIGN(const auto entries, files().list(dir_));
  for (const auto& de : entries) {
    auto tp = parse_partition_dir(de.path.filename().string());
    if (de.kind == file_kind::directory && tp && tp->first == name && tp->second >= from)
      BROOK_TRY(files().remove_all(de.path));
  }
  return files().sync_directory(dir_);
}

BROOK_DECL brook::error data_dir::unknown_topic(const std::string& name) {
  return make_error(errc::unknown_topic_or_partition, "unknown topic '{}'", name);
}

BROOK_DECL result<void> data_dir::writable() const {
  if (closed_) return make_error(errc::closed, "{}: data directory is closed", dir_.string());
  if (opts_.read_only)
    return make_error(errc::invalid_request, "{}: data directory was opened read-only", dir_.string());
  return ok();
}

BROOK_DECL void data_dir::bump_metadata() {
  anchor_->version.fetch_add(1, std::memory_order_acq_rel);
  notify_->notify();
}

BROOK_DECL result<std::shared_ptr<partition>> data_dir::open_partition(const std::string& topic, partition_id p,
                                                                       const log_config& cfg) {
  log_open_options lo;
  lo.read_only = opts_.read_only;
  BROOK_TRY_ASSIGN(auto log, partition_log::open(partition_dir(topic, p), cfg, lo));
  return std::make_shared<partition>(topic, p, std::move(log), notify_);
}

BROOK_DECL result<std::shared_ptr<partition>> data_dir::create_partition(const std::string& topic, partition_id p,
                                                                         const log_config& cfg, const uuid& topic_id) {
  BROOK_ASSERT(!opts_.read_only && !topic_id.is_zero(), "creating {}-{} without a topic id or read-only", topic, p);
  BROOK_TRY_ASSIGN(auto part, open_partition(topic, p, cfg));
  if (auto w = write_partition_metadata(files(), partition_dir(topic, p), topic_id); !w) {
    (void)part->log().close();
    return w.error();
  }
  return part;
}

BROOK_DECL result<uuid> data_dir::load_topic_id(const std::string& topic, std::size_t partitions) {
  std::vector<std::optional<uuid>> held(partitions);
  std::optional<std::size_t> first;  // the first partition that holds an id
  for (std::size_t p = 0; p < partitions; ++p) {
    const fs::path pd = partition_dir(topic, partition_id(static_cast<std::int32_t>(p)));
    BROOK_TRY_ASSIGN(held[p], read_partition_metadata(files(), pd));
    if (!held[p]) continue;
    if (!first) first = p;
    if (*held[p] != *held[*first])
      return make_error(errc::inconsistent_topic_id,
                        "{}: topic '{}' has id {} in partition {} but {} in partition {}: the partitions belong to "
                        "different topics (a partition.metadata decides which; nothing was changed)",
                        dir_.string(), topic, held[*first]->to_string(), *first, held[p]->to_string(), p);
  }
  if (opts_.read_only) return first ? *held[*first] : uuid{};
  const uuid id = first ? *held[*first] : new_topic_id();
  for (std::size_t p = 0; p < partitions; ++p)
    if (!held[p])
      BROOK_TRY(
          write_partition_metadata(files(), partition_dir(topic, partition_id(static_cast<std::int32_t>(p))), id));
  BROOK_ASSERT(!id.is_zero(), "topic '{}' loaded without an id", topic);
  return id;
}

BROOK_DECL result<void> data_dir::save_configs_locked() {
  std::map<std::string, topic_config> all;
  for (const auto& [n, ts] : topics_) all[n] = ts.config;
  for (const auto& [n, keep] : unfinished_) {
    BROOK_ASSERT(keep == 0 ? !topics_.count(n) : all[n].partitions == keep,
                 "{}: unfinished change of topic '{}' keeps {} partitions", dir_.string(), n, keep);
    all[n].overrides[keep == 0 ? deleting_key : growing_key] = "true";
  }
  return replace_file(files(), dir_ / configs_file, detail::format_topic_configs(all));
}

BROOK_DECL std::optional<std::pair<std::string, std::int32_t>> data_dir::parse_partition_dir(const std::string& name) {
  auto dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 >= name.size() || name.size() - dash - 1 > 9)
    return std::nullopt;
  if (name.find_first_not_of("0123456789", dash + 1) != std::string::npos) return std::nullopt;
  return std::make_pair(name.substr(0, dash), std::stoi(name.substr(dash + 1)));
}

BROOK_DECL result<void> data_dir::prepare_directory() {
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
    return make_error(errc::log_dir_locked, "{}: the data directory is in use by {} (its .lock is held)", dir_.string(),
                      detail::flock_holder_name(f.fd()));
  lock_ = std::move(f);
  return ok();
}

BROOK_DECL result<void> data_dir::load() {
  BROOK_TRY(prepare_directory());
  // Topic configs.
  std::map<std::string, topic_config> configs;
  fs::path cfgp = dir_ / configs_file;
  if (files().exists(cfgp).value_or(false)) {
    BROOK_TRY_ASSIGN(const std::string text, read_small_file(files(), cfgp));
    BROOK_TRY_ASSIGN(configs, detail::parse_topic_configs(text, cfgp.string()));
  }

  // Partition directories: every one must belong to a topic; topics found only on disk
  // (a copied Kafka log dir) are adopted with default settings. Open never creates a
  // partition: a topic is adopted only when its directories are exactly 0..n-1, and a
  // configured topic must have all of its directories (checked below).
  // A growth under way (create_partitions failed or crashed part-way): directories past the
  // saved count are strays, removed below rather than adopted.
  std::map<std::string, std::int32_t> growing;  // topic -> partitions to keep
  for (auto& [t, tc] : configs)
    if (tc.overrides.erase(growing_key) > 0) growing[t] = tc.partitions;
  std::vector<fs::path> strays;
  std::map<std::string, std::int32_t> seen;   // topic -> highest partition + 1
  std::map<std::string, std::int32_t> count;  // topic -> partition directories
  BROOK_TRY_ASSIGN(const auto entries, files().list(dir_));
  for (const auto& de : entries) {
    std::string name = de.path.filename().string();
    if (de.kind != file_kind::directory) continue;               // .lock, topic-configs, Kafka's checkpoint files
    if (name.size() > 7 && name.ends_with("-delete")) continue;  // Kafka's pending deletions
    auto tp = parse_partition_dir(name);
    if (!tp || !validate_topic_name(tp->first))
      return make_error(errc::kafka_storage_error, "{}: directory '{}' is not a <topic>-<partition> directory",
                        dir_.string(), name);
    if (auto g = growing.find(tp->first); g != growing.end() && tp->second >= g->second) {
      strays.push_back(de.path);
      continue;
    }
    seen[tp->first] = std::max(seen[tp->first], tp->second + 1);
    ++count[tp->first];
  }
  if (!strays.empty() && !opts_.read_only) {
    for (const auto& p : strays) BROOK_TRY(files().remove_all(p));
    BROOK_TRY(files().sync_directory(dir_));
  }
  for (const auto& [t, n] : seen)
    if (count[t] != n && !configs.count(t))
      return make_error(errc::kafka_storage_error,
                        "{}: topic '{}' has partition directories up to {}-{} but only {} of them: not adopted "
                        "(a topic holds partitions 0..n-1, and opening never creates one)",
                        dir_.string(), t, t, n - 1, count[t]);
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
    if (!cfg) return make_error(errc::invalid_config, "{}: topic '{}': {}", cfgp.string(), name, cfg.error().message());
    topic_state ts;
    ts.config = tc;
    ts.log_config = *cfg;
    for (std::int32_t p = 0; p < tc.partitions; ++p) {
      const fs::path pd = partition_dir(name, partition_id(p));
      if (!files().exists(pd).value_or(false)) {
        // A read-only view of a topic whose directories the owner is still creating (or
        // someone removed): show the partitions that exist so far (partition n is always at
        // index n).
        if (opts_.read_only) {
          ts.config.partitions = p;
          break;
        }
        return make_error(errc::kafka_storage_error,
                          "{}: topic '{}' has {} partitions in {} but no directory {}: restore it or correct the "
                          "count (opening never creates a partition)",
                          dir_.string(), name, tc.partitions, configs_file, pd.filename().string());
      }
      BROOK_TRY_ASSIGN(auto part, open_partition(name, partition_id(p), ts.log_config));
      ts.partitions.push_back(std::move(part));
    }
    BROOK_TRY_ASSIGN(ts.topic_id, load_topic_id(name, ts.partitions.size()));
    topics_.emplace(name, std::move(ts));
  }
  if ((adopted || finished_deletes || !growing.empty()) && !opts_.read_only) BROOK_TRY(save_configs_locked());
  return ok();
}

}  // namespace brook

// An in-process Kafka cluster: a controller, N brokers each with its own data directory, a
// replica fetcher per broker, and the network between them, with the failures a test or a
// host can inflict.
//
//   <root>/controller/__cluster_metadata-0/     the metadata log (controller.hpp)
//   <root>/broker-<id>/                         each broker's data directory (broker.hpp)
//
// Driving it: step() runs one deterministic round at the clock's time: heartbeats, the
// controller's session check, metadata to the brokers, one fetch round per broker, ISR
// changes (shrink checks every replica.lag.time.max.ms / 2), brokers' housekeeping. Tests
// run it with a testing::manual_clock and advance time between steps. start() runs the same work on
// threads instead: one fetcher thread per broker (replica.fetch.wait.max.ms long polls on
// the cluster's data notifier) and one control thread; stop() ends them.
//
// Clients: produce() sends a batch to the partition's leader (the current image's) with
// acks 0/1/all; fetch() reads from the leader up to its high watermark; cluster_target lets
// a brook::producer send here and cluster_source lets a brook::consumer read from here,
// following leadership changes.
//
// Failures:
//   stop_broker(id)      shutdown: flush, checkpoints; controlled by default (the controller
//                        fences the broker first, its leaderships move at once), or
//                        shutdown_mode::uncontrolled (the controller notices by the session
//                        timeout). A crash is an uncontrolled stop whose file system died
//                        first (cluster_config::broker_files): brook/testing/crash.hpp.
//   restart_broker(id)   reopens the directory (recovery truncates torn tails, rebuilds
//                        indexes), registers with a new broker epoch, catches up.
//   isolate(id)/heal(id) cuts a broker off from everyone (controller, other brokers,
//                        clients) and back.
//   set_fetch_delay(id)  a slow follower: fetches at most once per the given time.
//
// Thread-safety: all members are thread-safe. Produce callbacks run on the thread that
// completed them (a fetcher or control thread, or the stepping thread), never under a
// cluster lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/client/fetch_source.hpp>
#include <brook/client/produce_target.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/group/coordinator_backend.hpp>
#include <brook/replication/broker.hpp>
#include <brook/replication/controller.hpp>
#include <brook/replication/replica_fetcher.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/segment.hpp>

namespace brook {

struct cluster_config {
  /// Broker ids, in the order placement uses them. Default 1, 2, 3.
  std::vector<broker_id> broker_ids{broker_id{1}, broker_id{2}, broker_id{3}};
  /// The settings every broker gets (its id is filled in): min.insync.replicas,
  /// replica.lag.time.max.ms, log defaults and the clock (dir.defaults.clock).
  broker_config broker{};
  /// Controller settings (unclean.leader.election.enable, broker.session.timeout.ms). Its
  /// clock is the brokers'.
  controller_config controller{};
  fetcher_config fetcher{};
  /// broker.heartbeat.interval.ms. Default 2000.
  std::chrono::milliseconds broker_heartbeat_interval{2000};
  /// Threads (start()): how often the control thread runs when nothing wakes it.
  std::chrono::milliseconds control_interval{50};
  /// The file system of each broker's data directory (storage/file_system.hpp), asked at
  /// every (re)start; null: broker.dir.defaults.files for all. Tests give each broker its
  /// own, to fail or stop one broker's disk (brook/testing/crash.hpp).
  std::function<std::shared_ptr<file_system>(broker_id)> broker_files{};
};

/// One partition as describe() reports it.
struct partition_view {
  std::string topic;
  partition_id partition{0};
  partition_state state;
  std::optional<offset> high_watermark;  ///< the leader's; none when offline or unreachable
  std::optional<offset> log_end_offset;  ///< the leader's
};

class cluster {
 public:
  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;
  ~cluster() { (void)close(); }

  /// Opens (creating when missing) the controller and every broker under `root`, registers
  /// and unfences the brokers and gives them the current metadata. Errors: the
  /// controller's and brokers' open errors, invalid_argument (no or duplicate broker ids).
  static result<std::unique_ptr<cluster>> open(const std::filesystem::path& root, cluster_config cfg = {}) {
    if (cfg.broker_ids.empty()) return make_error(errc::invalid_argument, "a cluster needs at least one broker");
    auto ids = cfg.broker_ids;
    std::sort(ids.begin(), ids.end());
    if (std::adjacent_find(ids.begin(), ids.end()) != ids.end())
      return make_error(errc::invalid_argument, "broker ids are not distinct");
    if (cfg.broker_heartbeat_interval.count() <= 0 ||
        cfg.broker_heartbeat_interval >= cfg.controller.broker_session_timeout)
      return make_error(errc::invalid_config,
                        "broker.heartbeat.interval.ms {} must be positive and below broker.session.timeout.ms {}",
                        cfg.broker_heartbeat_interval.count(), cfg.controller.broker_session_timeout.count());
    if (!cfg.broker.dir.defaults.clock) cfg.broker.dir.defaults.clock = make_system_clock();
    cfg.controller.clock = cfg.broker.dir.defaults.clock;
    BROOK_TRY_ASSIGN(auto ctl, controller::open(root / "controller", cfg.controller));
    std::unique_ptr<cluster> c(new cluster(root, std::move(cfg), std::move(ctl)));
    for (auto id : c->cfg_.broker_ids) c->nodes_.emplace(id, node{});
    for (auto id : c->cfg_.broker_ids) BROOK_TRY(c->restart_broker(id));
    return c;
  }

  const cluster_config& config() const noexcept { return cfg_; }
  brook::controller& controller() noexcept { return *ctl_; }
  std::shared_ptr<const cluster_image> image() const { return ctl_->image(); }
  const std::filesystem::path& root() const noexcept { return root_; }
  static std::filesystem::path broker_dir(const std::filesystem::path& root, broker_id id) {
    return root / fmt::format("broker-{}", id);
  }
  timestamp_ms now() const { return clock().now_ms(); }
  /// Bumped on every append, high-watermark move and topic change of every broker (their
  /// data directories share it) and on every metadata change: fetchers and consumers
  /// wait on it.
  notifier& data_notifier() const noexcept { return *data_; }

  /// The broker `id` when it runs (null when stopped or crashed).
  std::shared_ptr<brook::broker> broker(broker_id id) const {
    std::lock_guard l(mu_);
    auto it = nodes_.find(id);
    return it == nodes_.end() ? nullptr : it->second.b;
  }
  bool running(broker_id id) const { return broker(id) != nullptr; }
  bool isolated(broker_id id) const {
    std::lock_guard l(mu_);
    auto it = nodes_.find(id);
    return it != nodes_.end() && it->second.isolated;
  }

  // ------------------------------------------------------------------ admin

  /// Creates a replicated topic (controller::create_topic), with config overrides such as
  /// cleanup.policy=compact, and gives the brokers the news.
  result<void> create_topic(const std::string& name, std::int32_t partitions, std::int32_t replication_factor,
                            const std::map<std::string, std::string>& configs = {}) {
    BROOK_TRY(ctl_->create_topic(name, partitions, replication_factor, configs));
    return propagate();
  }

  /// kafka-leader-election.sh, then the brokers are told.
  result<std::map<topic_partition, result<void>>> elect_leaders(election_type type,
                                                                const std::vector<topic_partition>& which = {}) {
    auto r = ctl_->elect_leaders(type, which);
    if (!r) return r;
    BROOK_TRY(propagate());
    return r;
  }

  /// Every partition with its state and the leader's high watermark and log end.
  std::vector<partition_view> describe() const {
    std::vector<partition_view> out;
    auto img = ctl_->image();
    for (const auto& [name, t] : img->topics())
      for (std::size_t i = 0; i < t.partitions.size(); ++i) {
        partition_view v;
        v.topic = name;
        v.partition = partition_id(static_cast<std::int32_t>(i));
        v.state = t.partitions[i];
        if (auto b = v.state.has_leader() ? broker(v.state.leader) : nullptr)
          if (auto r = b->replica(name, v.partition)) {
            v.high_watermark = r->high_watermark();
            v.log_end_offset = r->log_end_offset();
          }
        out.push_back(std::move(v));
      }
    return out;
  }

  // ------------------------------------------------------------------ clients

  /// Sends one batch to topic-p's leader; `done` gets the append's offsets or an error:
  /// unknown_topic_or_partition, leader_not_available (offline), broker_not_available
  /// (the leader is down or isolated), the leader's (not_enough_replicas, ...).
  void produce(const std::string& topic, partition_id p, std::span<std::byte> batch, acks_mode acks,
               std::chrono::milliseconds timeout, append_callback done) {
    auto img = ctl_->image();
    const auto* ps = img->partition(topic, p);
    if (!ps) {
      done(make_error(errc::unknown_topic_or_partition, "no partition {}-{}", topic, p));
      return;
    }
    if (!ps->has_leader()) {
      done(make_error(errc::leader_not_available, "{}-{} is offline: no replica of the ISR [{}] is available", topic, p,
                      fmt::join(ps->isr, ",")));
      return;
    }
    auto b = reachable(ps->leader);
    if (!b) {
      done(make_error(errc::broker_not_available, "{}-{}: leader {} is not reachable", topic, p, ps->leader));
      return;
    }
    b->produce(topic, p, batch, acks, timeout, std::move(done));
    data_->notify();
  }

  /// Reads topic-p from its leader, from `start`, up to the high watermark: what a consumer
  /// may see. Errors: as leader_partition(), and the log's (offset_out_of_range).
  result<log_slice> fetch(const std::string& topic, partition_id p, offset start,
                          std::size_t max_bytes = 1 << 20) const {
    read_options ro;
    ro.max_bytes = max_bytes;
    BROOK_TRY_ASSIGN(auto part, leader_partition(topic, p));
    return part->read(start, ro);
  }

  /// topic-p as its current leader has it (reads through it stop at the high watermark).
  /// Errors: unknown_topic_or_partition, leader_not_available (offline),
  /// broker_not_available (the leader is down or isolated), not_leader_or_follower (the
  /// leader has not taken the news yet).
  result<std::shared_ptr<partition>> leader_partition(const std::string& topic, partition_id p) const {
    auto img = ctl_->image();
    const auto* ps = img->partition(topic, p);
    if (!ps) return make_error(errc::unknown_topic_or_partition, "no partition {}-{}", topic, p);
    if (!ps->has_leader()) return make_error(errc::leader_not_available, "{}-{} is offline", topic, p);
    auto b = reachable(ps->leader);
    if (!b) return make_error(errc::broker_not_available, "{}-{}: leader {} is not reachable", topic, p, ps->leader);
    auto r = b->replica(topic, p);
    if (!r || r->role() != replica_role::leader)
      return make_error(errc::not_leader_or_follower, "{}-{}: broker {} does not lead it yet", topic, p, ps->leader);
    return r->part();
  }

  /// Partitions of `topic` in the current image. Errors: unknown_topic_or_partition.
  result<std::int32_t> partition_count(const std::string& topic) const {
    auto img = ctl_->image();
    const auto* t = img->topic(topic);
    if (!t) return make_error(errc::unknown_topic_or_partition, "unknown topic '{}'", topic);
    return static_cast<std::int32_t>(t->partitions.size());
  }
  /// Moves with every metadata change (the metadata log's end).
  std::uint64_t metadata_version() const { return static_cast<std::uint64_t>(ctl_->log().end_offset().value()); }

  // ------------------------------------------------------------------ failures

  /// Stops a broker (broker::close: flush, checkpoints). Controlled: the controller fences it
  /// first, so its leaderships move at once. Uncontrolled (Kafka's
  /// controlled.shutdown.enable=false, or a process that dies): nobody is told, the
  /// controller notices by the session timeout or a restart's re-registration.
  result<void> stop_broker(broker_id id, shutdown_mode mode = shutdown_mode::controlled) {
    auto b = take(id);
    if (!b) return make_error(errc::broker_not_available, "broker {} is not running", id);
    if (mode == shutdown_mode::uncontrolled) return b->close(mode);
    auto f = ctl_->fence_broker(id);
    auto p = propagate();  // leaderships move before the broker spends time flushing
    auto c = b->close();
    BROOK_TRY(p);
    if (!f) return f.error();
    return c;
  }

  /// Starts a stopped or crashed broker (or restarts a running one after a clean stop).
  result<void> restart_broker(broker_id id) {
    {
      std::lock_guard l(mu_);
      auto it = nodes_.find(id);
      if (it == nodes_.end()) return make_error(errc::broker_not_available, "broker {} is not in the cluster", id);
      if (it->second.b) return make_error(errc::invalid_request, "broker {} is running", id);
    }
    broker_config bc = cfg_.broker;
    bc.id = id;
    bc.dir.notifier = data_;
    if (cfg_.broker_files) bc.dir.defaults.files = cfg_.broker_files(id);
    BROOK_TRY_ASSIGN(auto b, brook::broker::open(broker_dir(root_, id), bc));
    std::shared_ptr<brook::broker> sb(std::move(b));
    bool register_now = false;
    {
      std::lock_guard l(mu_);
      auto& n = nodes_.at(id);
      n.b = sb;
      n.epoch = -1;  // registers below, or once it can reach the controller
      register_now = !n.isolated;
      n.pending_registration = n.isolated;
      n.last_heartbeat = now();
      n.applied = 0;
      n.fetcher = std::make_shared<replica_fetcher>(sb, connector(), cfg_.fetcher);
    }
    if (register_now) {
      if (auto r = register_node(id); !r) {
        (void)take(id);
        (void)sb->close();  // the registration's error is the one to report
        return r.error();
      }
    }
    start_fetcher_thread(id);
    return ok();
  }

  /// Cuts broker `id` off from the controller, the other brokers and clients.
  void isolate(broker_id id) { set_isolated(id, true); }
  /// Ends an isolation.
  void heal(broker_id id) { set_isolated(id, false); }

  /// A slow follower: broker `id` fetches at most once per `delay` (0 = normal).
  void set_fetch_delay(broker_id id, std::chrono::milliseconds delay) {
    std::lock_guard l(mu_);
    if (auto it = nodes_.find(id); it != nodes_.end()) it->second.fetch_delay_ms = delay.count();
  }

  // ------------------------------------------------------------------ driving

  /// One deterministic round at the clock's time (see the header comment). Returns the
  /// first error of a step that failed (the round carries on with the rest).
  result<void> step() {
    std::lock_guard sl(step_mu_);
    result<void> first = ok();
    auto keep = [&](result<void> r) {
      if (!r && first) first = r.error();
    };
    keep(control_round());
    for (auto id : cfg_.broker_ids) {
      std::shared_ptr<replica_fetcher> f;
      {
        std::lock_guard l(mu_);
        auto& n = nodes_.at(id);
        if (!n.b || n.isolated) continue;
        if (n.fetch_delay_ms > 0 && now() < n.next_fetch) continue;
        n.next_fetch = now() + n.fetch_delay_ms;
        f = n.fetcher;
      }
      f->step();
    }
    keep(isr_round());
    return first;
  }

  /// Runs the cluster on threads until stop() (see the header comment).
  void start() {
    std::lock_guard sl(step_mu_);
    if (running_.exchange(true)) return;
    stop_.store(false);
    control_ = std::thread([this] { run_control(); });
    for (auto id : cfg_.broker_ids) start_fetcher_thread_locked(id);
  }

  /// Whether start() runs the cluster on its threads (until stop()).
  bool threads_running() const noexcept { return running_.load(); }

  /// Stops the threads started by start().
  void stop() {
    std::vector<std::thread> ts;
    {
      std::lock_guard sl(step_mu_);
      if (!running_.exchange(false)) return;
      stop_.store(true);
      data_->notify();
      { std::lock_guard l(control_mu_); }
      control_cv_.notify_all();
      ts.push_back(std::move(control_));
      std::lock_guard l(mu_);
      for (auto& [_, n] : nodes_)
        if (n.thread.joinable()) ts.push_back(std::move(n.thread));
    }
    for (auto& t : ts) t.join();
  }

  /// Stops the threads and closes every broker cleanly, then the controller.
  result<void> close() {
    stop();
    result<void> first = ok();
    for (auto id : cfg_.broker_ids)
      if (auto b = take(id))
        if (auto r = b->close(); !r && first) first = r.error();
    if (auto r = ctl_->close(); !r && first) first = r.error();
    return first;
  }

  /// The last error the control thread met (start()): step() returns its errors instead.
  std::optional<brook::error> last_error() const {
    std::lock_guard l(mu_);
    return last_error_;
  }

  /// Every broker's metadata brought up to the controller's image (reachable brokers only).
  result<void> propagate() {
    // The version is read first: it never exceeds the image's, so a newer image is never
    // skipped as already applied.
    const auto version = static_cast<std::uint64_t>(ctl_->log().end_offset().value());
    auto img = ctl_->image();
    result<void> first = ok();
    bool applied = false;
    for (auto id : cfg_.broker_ids) {
      std::shared_ptr<brook::broker> b;
      {
        std::lock_guard l(mu_);
        auto& n = nodes_.at(id);
        if (!n.b || n.isolated || n.applied >= version) continue;
        n.applied = version;
        b = n.b;
      }
      applied = true;
      if (auto r = b->apply(*img, version); !r) {
        if (first) first = r.error();
        std::lock_guard l(mu_);
        nodes_.at(id).applied = 0;  // applied again by the next propagate()
      }
    }
    if (applied) data_->notify();  // leaderships may have moved; nothing to wake for otherwise
    return first;
  }

 private:
  struct node {
    std::shared_ptr<brook::broker> b;
    std::shared_ptr<replica_fetcher> fetcher;
    std::int64_t epoch = -1;
    timestamp_ms last_heartbeat = 0;
    std::uint64_t applied = 0;
    bool isolated = false;
    bool pending_registration = false;  // restarted while isolated: the control round registers it
    std::int64_t fetch_delay_ms = 0;
    timestamp_ms next_fetch = 0;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> stop_fetcher;
  };

  cluster(std::filesystem::path root, cluster_config cfg, std::unique_ptr<brook::controller> ctl)
      : root_(std::move(root)), cfg_(std::move(cfg)), ctl_(std::move(ctl)) {
    ctl_->set_log_end_probe([this](broker_id id, const std::string& topic, partition_id p) -> std::optional<offset> {
      auto b = reachable(id);
      if (!b) return std::nullopt;
      return b->log_end_offset(topic, p);
    });
    next_shrink_check_ = now();
  }

  const brook::clock& clock() const { return *cfg_.broker.dir.defaults.clock; }

  std::shared_ptr<brook::broker> reachable(broker_id id) const {
    std::lock_guard l(mu_);
    auto it = nodes_.find(id);
    if (it == nodes_.end() || it->second.isolated) return nullptr;
    return it->second.b;
  }

  replica_fetcher::connect_fn connector() {
    return [this](broker_id from, broker_id to) -> result<std::shared_ptr<brook::broker>> {
      if (isolated(from)) return make_error(errc::broker_not_available, "broker {} is isolated", from);
      auto b = reachable(to);
      if (!b) return make_error(errc::broker_not_available, "broker {} is not reachable from {}", to, from);
      return b;
    };
  }

  std::shared_ptr<brook::broker> take(broker_id id) {
    std::shared_ptr<brook::broker> b;
    std::thread t;
    {
      std::lock_guard l(mu_);
      auto it = nodes_.find(id);
      if (it == nodes_.end()) return nullptr;
      b = std::move(it->second.b);
      it->second.b.reset();
      it->second.fetcher.reset();
      if (it->second.stop_fetcher) it->second.stop_fetcher->store(true);
      t = std::move(it->second.thread);
    }
    data_->notify();
    if (t.joinable()) t.join();
    return b;
  }

  void set_isolated(broker_id id, bool v) {
    {
      std::lock_guard l(mu_);
      if (auto it = nodes_.find(id); it != nodes_.end()) it->second.isolated = v;
    }
    data_->notify();
  }

  /// Registers a running broker (a new broker epoch), gives it the metadata so its replicas
  /// exist before it can lead, then heartbeats to unfence it.
  result<void> register_node(broker_id id) {
    BROOK_TRY_ASSIGN(auto epoch, ctl_->register_broker(id));
    {
      std::lock_guard l(mu_);
      auto& n = nodes_.at(id);
      n.epoch = epoch;
      n.last_heartbeat = now();
    }
    BROOK_TRY(propagate());
    if (auto h = ctl_->heartbeat(id, epoch); !h) return h.error();
    return propagate();
  }

  void record_error(const brook::error& e) {
    std::lock_guard l(mu_);
    last_error_ = e;
  }

  /// Heartbeats, the controller's session check, metadata, brokers' housekeeping.
  result<void> control_round() {
    result<void> first = ok();
    auto keep = [&](result<void> r) {
      if (!r && first) first = r.error();
    };
    const timestamp_ms t = now();
    std::vector<std::pair<broker_id, std::int64_t>> beats;
    std::vector<broker_id> unregistered;
    {
      std::lock_guard l(mu_);
      for (auto& [id, n] : nodes_) {
        if (!n.b || n.isolated) continue;
        if (n.pending_registration) {
          n.pending_registration = false;
          unregistered.push_back(id);  // restarted while isolated: registers now
        } else if (n.epoch < 0) {
          continue;  // restart_broker is registering it
        } else if (t - n.last_heartbeat >= cfg_.broker_heartbeat_interval.count()) {
          n.last_heartbeat = t;
          beats.emplace_back(id, n.epoch);
        }
      }
    }
    for (auto id : unregistered) keep(register_node(id));
    for (auto [id, epoch] : beats) {
      auto h = ctl_->heartbeat(id, epoch);
      // stale_broker_epoch: an incarnation the controller has replaced; anything else is real.
      if (!h && !(h.error() == errc::stale_broker_epoch)) keep(h.error());
    }
    if (auto fenced = ctl_->tick(); !fenced) keep(fenced.error());
    keep(propagate());
    for (auto id : cfg_.broker_ids)
      if (auto b = broker(id)) keep(b->tick());
    return first;
  }

  /// ISR changes the leaders ask for, committed by the controller.
  result<void> isr_round() {
    const timestamp_ms t = now();
    bool shrink = false;
    {
      std::lock_guard l(mu_);
      if (t >= next_shrink_check_) {
        shrink = true;
        next_shrink_check_ = t + std::max<std::int64_t>(1, cfg_.broker.replica.replica_lag_time_max.count() / 2);
      }
    }
    bool changed = false;
    std::optional<brook::error> first_err;
    for (auto id : cfg_.broker_ids) {
      auto b = reachable(id);
      if (!b) continue;
      for (auto& prop : b->isr_proposals(shrink)) {
        auto r =
            ctl_->alter_partition(prop.topic, prop.partition, id, prop.leader_epoch, prop.partition_epoch, prop.isr);
        changed = changed || r.has_value();
        // A proposal overtaken by another change is refused with one of these, as Kafka's are;
        // the leader proposes again from the new state. Anything else (storage) is reported.
        if (!r && !(r.error() == errc::fenced_leader_epoch || r.error() == errc::unknown_leader_epoch ||
                    r.error() == errc::invalid_update_version || r.error() == errc::not_leader_or_follower ||
                    r.error() == errc::ineligible_replica))
          first_err = r.error();
      }
    }
    if (changed) BROOK_TRY(propagate());
    if (first_err) return *first_err;
    return ok();
  }

  void start_fetcher_thread(broker_id id) {
    std::lock_guard sl(step_mu_);
    if (running_.load()) start_fetcher_thread_locked(id);
  }

  // REQUIRES: step_mu_ held and running_.
  void start_fetcher_thread_locked(broker_id id) {
    std::lock_guard l(mu_);
    auto& n = nodes_.at(id);
    if (!n.b || n.thread.joinable()) return;
    auto stop = std::make_shared<std::atomic<bool>>(false);
    n.stop_fetcher = stop;
    auto f = n.fetcher;
    n.thread = std::thread([this, f, stop, id] {
      while (!stop->load() && !stop_.load()) {
        std::int64_t delay = 0;
        {
          std::lock_guard l2(mu_);
          delay = nodes_.at(id).fetch_delay_ms;
        }
        if (delay > 0) {
          std::unique_lock cl(control_mu_);
          control_cv_.wait_for(cl, std::chrono::milliseconds(delay), [&] { return stop->load() || stop_.load(); });
        }
        const auto seen = data_->sequence();
        auto r = f->step();
        if (r.bytes < cfg_.fetcher.min_bytes && !stop->load() && !stop_.load())
          data_->wait(seen, std::chrono::steady_clock::now() + cfg_.fetcher.wait_max);
        if (r.bytes > 0) data_->notify();  // leaders' high watermarks may have moved
      }
    });
  }

  void run_control() {
    std::unique_lock cl(control_mu_);
    while (!stop_.load()) {
      cl.unlock();
      {
        std::lock_guard sl(step_mu_);
        if (auto r = control_round(); !r) record_error(r.error());
        if (auto r = isr_round(); !r) record_error(r.error());
      }
      cl.lock();
      control_cv_.wait_for(cl, cfg_.control_interval, [&] { return stop_.load(); });
    }
  }

  const std::filesystem::path root_;
  const cluster_config cfg_;
  std::unique_ptr<brook::controller> ctl_;
  mutable std::mutex mu_;  // guards nodes_ and next_shrink_check_; never held while calling the controller or a broker
  std::map<broker_id, node> nodes_;
  timestamp_ms next_shrink_check_ = 0;
  std::optional<brook::error> last_error_;
  const std::shared_ptr<notifier> data_ = std::make_shared<notifier>();
  std::mutex step_mu_;  // serialises step(), the control thread's rounds, start() and stop()
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::thread control_;
  std::mutex control_mu_;
  std::condition_variable control_cv_;
};

/// A cluster as a producer's target (produce_target.hpp): brook::producer(target, cfg)
/// sends each batch to its partition's leader with the producer's acks and
/// request.timeout.ms. Thread-safe.
class cluster_target final : public produce_target {
 public:
  explicit cluster_target(cluster& c) : c_(c) {}
  std::uint64_t metadata_version() const override { return c_.metadata_version(); }
  result<std::int32_t> partition_count(const std::string& topic) const override { return c_.partition_count(topic); }
  timestamp_ms now_ms() const override { return c_.now(); }
  void produce(const std::string& topic, partition_id p, std::span<std::byte> batch, acks_mode acks,
               std::chrono::milliseconds request_timeout, append_callback done) override {
    if (is_internal_topic(topic)) {  // clients never append to them (the coordinator does, not through here)
      done(make_error(errc::invalid_topic, "cannot append to internal topic {}", topic));
      return;
    }
    c_.produce(topic, p, batch, acks, request_timeout, std::move(done));
  }

 private:
  cluster& c_;
};

/// A cluster as a consumer's source (fetch_source.hpp): brook::consumer(source, cfg) reads
/// each partition from its current leader, up to the high watermark, and follows
/// leadership changes. Thread-safe.
class cluster_source final : public partition_source {
 public:
  explicit cluster_source(cluster& c) : c_(c) {}
  std::uint64_t metadata_version() const override { return c_.metadata_version(); }
  result<std::int32_t> partition_count(const std::string& topic) const override { return c_.partition_count(topic); }
  brook::notifier& notifier() const override { return c_.data_notifier(); }
  /// The brokers' codecs (cluster_config::broker.dir.defaults.codecs).
  std::shared_ptr<const compression_codecs> codecs() const override { return c_.config().broker.dir.defaults.codecs; }

 private:
  result<std::shared_ptr<partition>> find(const topic_partition& tp) const override {
    return c_.leader_partition(tp.topic, tp.partition);
  }

  cluster& c_;
};

/// Settings of a cluster_backend (Kafka's offsets.* broker configs).
struct cluster_backend_options {
  /// offsets.topic.replication.factor. Default 3 (Kafka's); creating the topic fails with
  /// invalid_replication_factor while fewer brokers are unfenced.
  std::int32_t replication_factor = 3;
  /// offsets.commit.timeout.ms: how long an append waits for the ISR. Default 5000.
  std::chrono::milliseconds commit_timeout{5000};
};

/// A cluster as a group coordinator's backend (group/coordinator_backend.hpp):
/// `group_coordinator::open(backend)` keeps `__consumer_offsets` as a replicated, compacted
/// topic of the cluster and commits with acks=all, so committed offsets survive the loss of
/// a broker; group consumers of that coordinator read the cluster's leaders.
///
/// The coordinator waits for each append, so the cluster must run on its threads (start());
/// on a stepped cluster, or after stop(), appends fail at once with coordinator_not_available
/// (nothing would complete them). Thread-safe.
class cluster_backend final : public coordinator_backend {
 public:
  explicit cluster_backend(cluster& c, cluster_backend_options o = {}) : c_(c), source_(c), opts_(o) {}
  fetch_source& source() override { return source_; }
  std::shared_ptr<const brook::clock> clock() const override { return c_.config().broker.dir.defaults.clock; }
  bool read_only() const override { return false; }
  result<std::int32_t> open_offsets_topic(const offsets_topic_spec& spec) override {
    auto count = c_.partition_count(offsets_topic_spec::name);
    if (count || count.error() != errc::unknown_topic_or_partition) return count;
    auto created = c_.create_topic(offsets_topic_spec::name, spec.partitions, opts_.replication_factor, spec.configs());
    if (!created && created.error() == errc::topic_already_exists)  // another coordinator was first
      return c_.partition_count(offsets_topic_spec::name);
    if (!created) return created.error();
    return spec.partitions;
  }
  void append_offsets(partition_id p, std::span<std::byte> batch, append_callback done) override {
    if (!c_.threads_running()) {
      done(make_error(errc::coordinator_not_available, "the cluster's threads are not running (cluster::start())"));
      return;
    }
    c_.produce(offsets_topic_spec::name, p, batch, acks_mode::all, opts_.commit_timeout, std::move(done));
  }
  std::chrono::milliseconds append_timeout() const override { return opts_.commit_timeout; }

 private:
  cluster& c_;
  cluster_source source_;
  cluster_backend_options opts_;
};

}  // namespace brook

// The cluster metadata the records of metadata_records.hpp build: brokers,
// topics and their partitions, and the controller epoch. A much smaller cousin
// of Kafka's MetadataImage (metadata/src/main/java/org/apache/kafka/image/):
// ClusterImage + TopicsImage, replayed the way ClusterControlManager.replay,
// ReplicationControlManager.replay and PartitionRegistration.merge do.
//
// apply(record) validates the record against the image first and changes
// nothing when it is refused (errc::invalid_request, a message naming the
// record and what it contradicts). The image only enforces what must hold for
// the image to make sense; the controller's policies (which broker leads, when
// a fenced broker leaves an ISR) live in whoever writes the records: fencing a
// broker here does not touch any ISR, exactly as in Kafka, where the
// controller writes the PartitionChangeRecords itself.
//
// Semantics (Kafka's, with brook's extra checks marked "brook"):
//   RegisterBrokerRecord    adds or replaces broker id's registration (a re-registration
//                           carries a new epoch). brook: id >= 0, and a re-registration's
//                           epoch must be greater than the registered one.
//   UnregisterBrokerRecord  removes it; the broker must be registered with that epoch.
//   Fence/UnfenceBrokerRecord, BrokerRegistrationChangeRecord
//                           set fenced (and in_controlled_shutdown); the broker must be
//                           registered with that epoch. Fenced -1/0/1 = unfence/none/fence;
//                           other values are refused.
//   TopicRecord             adds a topic with no partitions. Refused: a name already used,
//                           an id already used, a reserved id (00..00, 00..01), a name
//                           Kafka would refuse (empty, "." / "..", over 249 chars, chars
//                           outside [a-zA-Z0-9._-]).
//   PartitionRecord         adds a partition to a known topic. brook: partition ids are
//                           dense, the record for partition n must follow partition n-1;
//                           replicas non-empty, distinct, >= 0; isr, removing and adding
//                           replicas distinct subsets of replicas; leader -1 or in the isr;
//                           epochs >= 0; leader recovery state 0 or 1.
//   PartitionChangeRecord   PartitionRegistration.merge: absent fields keep their value
//                           (null arrays, Leader -2, LeaderRecoveryState -1); a Leader
//                           other than -2 (even the current leader) sets the leader and
//                           bumps the leader epoch by one; every record bumps the
//                           partition epoch by one. The result must pass the same checks
//                           as a PartitionRecord (brook). ELR and directories: not modelled.
//   RemoveTopicRecord       removes a known topic, its partitions and its configs.
//   ConfigRecord            for a topic (ResourceType 2): sets the config key, or deletes it
//                           when the value is null; kept by topic name, also before the
//                           topic exists (Kafka 3.0-3.3 wrote a new topic's configs before
//                           its TopicRecord; later ones after it). Refused: a name Kafka would refuse as
//                           a topic name, an empty key. Other resource types (brokers,
//                           client metrics) are accepted and not kept: brook has no use
//                           for them.
//   NoOpRecord              nothing.
//
// Controller epoch: KRaft's controller epoch is the leader epoch of the
// metadata partition, stamped on each batch (partitionLeaderEpoch).
// set_controller_epoch refuses to go backwards; each partition remembers the
// controller epoch that created or last changed it (the controllerEpoch of
// ZooKeeper-mode LeaderAndIsr state).
//
// Thread-safety: a value type; const members may be called from any number of
// threads, a mutating call needs exclusive access. metadata_log hands out
// immutable snapshots (shared_ptr<const cluster_image>).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <brook/core/result.hpp>
#include <brook/replication/metadata_records.hpp>

namespace brook {

/// A registered broker. Alive = registered and not fenced.
struct broker_registration {
  broker_id id{0};
  std::int64_t epoch = 0;
  uuid incarnation_id;
  bool fenced = true;
  bool in_controlled_shutdown = false;
  std::optional<std::string> rack;

  bool alive() const noexcept { return !fenced; }
  friend bool operator==(const broker_registration&, const broker_registration&) = default;
};

/// One partition's replication state (Kafka's PartitionRegistration, without ELR/directories).
struct partition_state {
  std::vector<broker_id> replicas;  ///< preferred order: replicas[0] is the preferred leader
  std::vector<broker_id> isr;
  std::vector<broker_id> removing_replicas;
  std::vector<broker_id> adding_replicas;
  broker_id leader = metadata::no_leader;
  brook::leader_epoch leader_epoch{0};
  std::int32_t partition_epoch = 0;
  std::int8_t leader_recovery_state = 0;  ///< 1 while recovering from an unclean election
  std::int32_t controller_epoch = -1;     ///< controller epoch that created or last changed it

  bool has_leader() const noexcept { return leader != metadata::no_leader; }
  /// No leader: the partition can neither be produced to nor consumed from.
  bool offline() const noexcept { return !has_leader(); }
  /// Fewer in-sync replicas than replicas.
  bool under_replicated() const noexcept { return isr.size() < replicas.size(); }
  /// The leader is the first replica (Kafka's preferred leader).
  bool has_preferred_leader() const noexcept { return !replicas.empty() && leader == replicas.front(); }
  friend bool operator==(const partition_state&, const partition_state&) = default;
};

struct topic_state {
  std::string name;
  uuid id;
  std::vector<partition_state> partitions;  ///< index = partition id
  friend bool operator==(const topic_state&, const topic_state&) = default;
};

class cluster_image {
 public:
  /// Applies one record; on error the image is unchanged.
  result<void> apply(const metadata::metadata_record& rec) {
    return std::visit([&](const auto& r) { return apply_one(r); }, rec);
  }

  /// Applies records in order, all or nothing (on error the image is unchanged).
  result<void> apply_all(std::span<const metadata::metadata_record> recs) {
    cluster_image next = *this;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      if (auto r = next.apply(recs[i]); !r)
        return error(r.error().code(), fmt::format("record {} of {}: {}", i, recs.size(), r.error().message()));
    }
    *this = std::move(next);
    return ok();
  }

  /// Starts a new controller epoch (or stays in the current one). invalid_request if it would go back.
  result<void> set_controller_epoch(std::int32_t e) {
    if (e < controller_epoch_)
      return make_error(errc::invalid_request, "controller epoch {} is older than the current {}", e,
                        controller_epoch_);
    controller_epoch_ = e;
    return ok();
  }
  /// -1 until the first batch.
  std::int32_t controller_epoch() const noexcept { return controller_epoch_; }

  const std::map<broker_id, broker_registration>& brokers() const noexcept { return brokers_; }
  const broker_registration* broker(broker_id id) const {
    auto it = brokers_.find(id);
    return it == brokers_.end() ? nullptr : &it->second;
  }
  /// Ids of registered, unfenced brokers, ascending.
  std::vector<broker_id> alive_brokers() const {
    std::vector<broker_id> out;
    for (const auto& [id, b] : brokers_)
      if (b.alive()) out.push_back(id);
    return out;
  }

  /// Topics by name.
  const std::map<std::string, topic_state, std::less<>>& topics() const noexcept { return topics_; }
  const topic_state* topic(std::string_view name) const {
    auto it = topics_.find(name);
    return it == topics_.end() ? nullptr : &it->second;
  }
  const topic_state* topic(const uuid& id) const {
    auto it = names_.find(id);
    return it == names_.end() ? nullptr : topic(it->second);
  }
  const partition_state* partition(std::string_view topic_name, partition_id p) const {
    const topic_state* t = topic(topic_name);
    if (t == nullptr || p.value() < 0 || static_cast<std::size_t>(p.value()) >= t->partitions.size()) return nullptr;
    return &t->partitions[static_cast<std::size_t>(p.value())];
  }

  /// A topic's config overrides (ConfigRecords); empty when it has none.
  const std::map<std::string, std::string>& topic_configs(std::string_view name) const {
    static const std::map<std::string, std::string> none;
    auto it = topic_configs_.find(name);
    return it == topic_configs_.end() ? none : it->second;
  }

  std::vector<topic_partition> offline_partitions() const {
    return select([](const partition_state& p) { return p.offline(); });
  }
  std::vector<topic_partition> under_replicated_partitions() const {
    return select([](const partition_state& p) { return p.under_replicated(); });
  }

  friend bool operator==(const cluster_image&, const cluster_image&) = default;

 private:
  template <typename... Args>
  static brook::error refuse(fmt::format_string<Args...> f, Args&&... args) {
    return make_error(errc::invalid_request, f, std::forward<Args>(args)...);
  }

  template <typename Pred>
  std::vector<topic_partition> select(Pred pred) const {
    std::vector<topic_partition> out;
    for (const auto& [name, t] : topics_)
      for (std::size_t i = 0; i < t.partitions.size(); ++i)
        if (pred(t.partitions[i])) out.push_back({name, partition_id(static_cast<std::int32_t>(i))});
    return out;
  }

  result<broker_registration*> registered(std::string_view what, broker_id id, std::int64_t epoch) {
    auto it = brokers_.find(id);
    if (it == brokers_.end()) return refuse("{}: no broker {} is registered", what, id);
    if (it->second.epoch != epoch)
      return refuse("{}: broker {} is registered with epoch {}, not {}", what, id, it->second.epoch, epoch);
    return &it->second;
  }

  static bool valid_topic_name(std::string_view n) {
    if (n.empty() || n.size() > 249 || n == "." || n == "..") return false;
    return std::all_of(n.begin(), n.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
             c == '-';
    });
  }

  static bool distinct(const std::vector<broker_id>& v) {
    std::set<broker_id> s(v.begin(), v.end());
    return s.size() == v.size();
  }
  static bool subset(const std::vector<broker_id>& a, const std::vector<broker_id>& of) {
    return std::all_of(a.begin(), a.end(), [&](broker_id x) { return std::find(of.begin(), of.end(), x) != of.end(); });
  }

  /// The invariants every partition state must satisfy (brook's checks).
  static result<void> check_partition(std::string_view what, const partition_state& p) {
    if (p.replicas.empty()) return refuse("{}: no replicas", what);
    if (!distinct(p.replicas) ||
        std::any_of(p.replicas.begin(), p.replicas.end(), [](broker_id r) { return r.value() < 0; }))
      return refuse("{}: replicas {} must be distinct broker ids >= 0", what, p.replicas);
    if (!distinct(p.isr) || !subset(p.isr, p.replicas))
      return refuse("{}: isr {} must be distinct replicas of {}", what, p.isr, p.replicas);
    if (!distinct(p.removing_replicas) || !subset(p.removing_replicas, p.replicas))
      return refuse("{}: removing replicas {} must be distinct replicas of {}", what, p.removing_replicas, p.replicas);
    if (!distinct(p.adding_replicas) || !subset(p.adding_replicas, p.replicas))
      return refuse("{}: adding replicas {} must be distinct replicas of {}", what, p.adding_replicas, p.replicas);
    if (p.leader != metadata::no_leader && std::find(p.isr.begin(), p.isr.end(), p.leader) == p.isr.end())
      return refuse("{}: leader {} is not in the isr {}", what, p.leader, p.isr);
    if (p.leader_epoch.value() < 0 || p.partition_epoch < 0)
      return refuse("{}: negative epoch (leader epoch {}, partition epoch {})", what, p.leader_epoch,
                    p.partition_epoch);
    if (p.leader_recovery_state != 0 && p.leader_recovery_state != 1)
      return refuse("{}: leader recovery state {} is neither 0 nor 1", what, p.leader_recovery_state);
    return ok();
  }

  // ---------------------------------------------------------------- brokers

  result<void> apply_one(const metadata::register_broker_record& r) {
    if (r.broker_id.value() < 0) return refuse("RegisterBrokerRecord: broker id {} is negative", r.broker_id);
    // Strings must stay encodable (Kafka's generated writers refuse more than 32767 bytes).
    auto too_long = [](const std::string& s) { return s.size() > 0x7fff; };
    if ((r.rack && too_long(*r.rack)) ||
        std::any_of(r.endpoints.begin(), r.endpoints.end(),
                    [&](const auto& e) { return too_long(e.name) || too_long(e.host); }) ||
        std::any_of(r.features.begin(), r.features.end(), [&](const auto& f) { return too_long(f.name); }))
      return refuse("RegisterBrokerRecord: broker {} has a string longer than 32767 bytes", r.broker_id);
    if (auto it = brokers_.find(r.broker_id); it != brokers_.end() && r.broker_epoch <= it->second.epoch)
      return refuse("RegisterBrokerRecord: broker {} re-registers with epoch {}, not above its epoch {}", r.broker_id,
                    r.broker_epoch, it->second.epoch);
    brokers_[r.broker_id] =
        broker_registration{r.broker_id, r.broker_epoch, r.incarnation_id, r.fenced, r.in_controlled_shutdown, r.rack};
    return ok();
  }
  result<void> apply_one(const metadata::unregister_broker_record& r) {
    BROOK_TRY(registered("UnregisterBrokerRecord", r.broker_id, r.broker_epoch));
    brokers_.erase(r.broker_id);
    return ok();
  }
  result<void> apply_one(const metadata::fence_broker_record& r) {
    BROOK_TRY_ASSIGN(auto b, registered("FenceBrokerRecord", r.id, r.epoch));
    b->fenced = true;
    return ok();
  }
  result<void> apply_one(const metadata::unfence_broker_record& r) {
    BROOK_TRY_ASSIGN(auto b, registered("UnfenceBrokerRecord", r.id, r.epoch));
    b->fenced = false;
    return ok();
  }
  result<void> apply_one(const metadata::broker_registration_change_record& r) {
    if (r.fenced < -1 || r.fenced > 1)
      return refuse("BrokerRegistrationChangeRecord: Fenced {} is not -1, 0 or 1", r.fenced);
    if (r.in_controlled_shutdown < 0 || r.in_controlled_shutdown > 1)
      return refuse("BrokerRegistrationChangeRecord: InControlledShutdown {} is not 0 or 1", r.in_controlled_shutdown);
    BROOK_TRY_ASSIGN(auto b, registered("BrokerRegistrationChangeRecord", r.broker_id, r.broker_epoch));
    if (r.fenced != 0) b->fenced = r.fenced == 1;
    if (r.in_controlled_shutdown == 1) b->in_controlled_shutdown = true;
    return ok();
  }

  // ---------------------------------------------------------------- topics

  result<void> apply_one(const metadata::topic_record& r) {
    if (!valid_topic_name(r.name)) return refuse("TopicRecord: '{}' is not a legal topic name", r.name);
    if (r.topic_id.is_reserved()) return refuse("TopicRecord '{}': topic id {} is reserved", r.name, r.topic_id);
    if (topics_.count(r.name) != 0) return refuse("TopicRecord: topic '{}' already exists", r.name);
    if (auto it = names_.find(r.topic_id); it != names_.end())
      return refuse("TopicRecord '{}': topic id {} already belongs to '{}'", r.name, r.topic_id, it->second);
    topics_.emplace(r.name, topic_state{r.name, r.topic_id, {}});
    names_.emplace(r.topic_id, r.name);
    return ok();
  }
  result<void> apply_one(const metadata::remove_topic_record& r) {
    auto it = names_.find(r.topic_id);
    if (it == names_.end()) return refuse("RemoveTopicRecord: no topic has id {}", r.topic_id);
    topic_configs_.erase(it->second);
    topics_.erase(it->second);
    names_.erase(it);
    return ok();
  }

  result<void> apply_one(const metadata::config_record& r) {
    if (r.resource_type != metadata::config_resource_topic) return ok();
    if (!valid_topic_name(r.resource_name))
      return refuse("ConfigRecord: '{}' is not a legal topic name", r.resource_name);
    if (r.name.empty()) return refuse("ConfigRecord for topic '{}': the config name is empty", r.resource_name);
    if (r.value) {
      topic_configs_[r.resource_name][r.name] = *r.value;
      return ok();
    }
    auto it = topic_configs_.find(r.resource_name);
    if (it != topic_configs_.end()) {
      it->second.erase(r.name);
      if (it->second.empty()) topic_configs_.erase(it);
    }
    return ok();
  }

  result<void> apply_one(const metadata::partition_record& r) {
    auto it = names_.find(r.topic_id);
    if (it == names_.end()) return refuse("PartitionRecord {}: no topic has id {}", r.partition_id, r.topic_id);
    topic_state& t = topics_.find(it->second)->second;
    const std::string what = fmt::format("PartitionRecord {}-{}", t.name, r.partition_id);
    if (r.partition_id.value() < 0 || static_cast<std::size_t>(r.partition_id.value()) != t.partitions.size())
      return refuse("{}: topic '{}' has {} partitions, the next must be {}", what, t.name, t.partitions.size(),
                    t.partitions.size());
    partition_state p{r.replicas,       r.isr,          r.removing_replicas, r.adding_replicas,
                      r.leader,         r.leader_epoch, r.partition_epoch,   r.leader_recovery_state,
                      controller_epoch_};
    BROOK_TRY(check_partition(what, p));
    t.partitions.push_back(std::move(p));
    return ok();
  }

  result<void> apply_one(const metadata::partition_change_record& r) {
    auto it = names_.find(r.topic_id);
    if (it == names_.end()) return refuse("PartitionChangeRecord {}: no topic has id {}", r.partition_id, r.topic_id);
    topic_state& t = topics_.find(it->second)->second;
    const std::string what = fmt::format("PartitionChangeRecord {}-{}", t.name, r.partition_id);
    if (r.partition_id.value() < 0 || static_cast<std::size_t>(r.partition_id.value()) >= t.partitions.size())
      return refuse("{}: topic '{}' has {} partitions", what, t.name, t.partitions.size());
    partition_state& cur = t.partitions[static_cast<std::size_t>(r.partition_id.value())];
    if (r.leader < metadata::no_leader_change)
      return refuse("{}: Leader {} is neither a broker id, -1 nor -2", what, r.leader);
    if (r.leader_recovery_state < -1 || r.leader_recovery_state > 1)
      return refuse("{}: LeaderRecoveryState {} is not -1, 0 or 1", what, r.leader_recovery_state);
    if (cur.partition_epoch == INT32_MAX ||
        (r.leader != metadata::no_leader_change && cur.leader_epoch.value() == INT32_MAX))
      return refuse("{}: an epoch would overflow (leader epoch {}, partition epoch {})", what, cur.leader_epoch,
                    cur.partition_epoch);
    partition_state next = cur;
    if (r.replicas) next.replicas = *r.replicas;
    if (r.isr) next.isr = *r.isr;
    if (r.removing_replicas) next.removing_replicas = *r.removing_replicas;
    if (r.adding_replicas) next.adding_replicas = *r.adding_replicas;
    if (r.leader != metadata::no_leader_change) {
      next.leader = r.leader;
      next.leader_epoch = cur.leader_epoch + 1;
    }
    if (r.leader_recovery_state != -1) next.leader_recovery_state = r.leader_recovery_state;
    next.partition_epoch = cur.partition_epoch + 1;
    next.controller_epoch = controller_epoch_;
    BROOK_TRY(check_partition(what, next));
    cur = std::move(next);
    return ok();
  }

  result<void> apply_one(const metadata::no_op_record&) { return ok(); }

  std::map<broker_id, broker_registration> brokers_;
  std::map<std::string, topic_state, std::less<>> topics_;
  std::map<uuid, std::string> names_;
  std::map<std::string, std::map<std::string, std::string>, std::less<>> topic_configs_;
  std::int32_t controller_epoch_ = -1;
};

}  // namespace brook

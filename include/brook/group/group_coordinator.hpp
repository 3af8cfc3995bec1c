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
#include <brook/core/linkage.hpp>
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
  ~group_coordinator();

  /// Opens the coordinator of `dd`: the internal offsets topic is created if missing and
  /// replayed. The clock is the data directory's.
  static result<std::unique_ptr<group_coordinator>> open(data_dir& dd, coordinator_config cfg = {});
  /// Opens the coordinator on `backend` (which must outlive it), e.g. a cluster_backend.
  static result<std::unique_ptr<group_coordinator>> open(coordinator_backend& backend, coordinator_config cfg = {});

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
  /// With `req.require_known_member_id` (JoinGroup v4+), a new dynamic member is refused at
  /// once with member_id_required and the returned id is the one to join again with.
  /// Errors: invalid_group_id, invalid_session_timeout, inconsistent_group_protocol,
  /// unknown_member_id, fenced_instance_id, group_max_size_reached, member_id_required.
  std::string join_group(join_group_request req, join_callback done);

  /// SyncGroup. The leader's call carries the assignment and completes every member's sync.
  /// Errors: unknown_member_id, illegal_generation, rebalance_in_progress, fenced_instance_id,
  /// inconsistent_group_protocol (a protocol type or name that is not the group's).
  void sync_group(sync_group_request req, sync_callback done);

  /// Heartbeat. rebalance_in_progress tells the member to rejoin.
  result<void> heartbeat(const std::string& group_id, generation_id generation, const std::string& member_id,
                         const std::optional<std::string>& group_instance_id = std::nullopt);

  /// LeaveGroup for one member (by member id, or by group.instance.id when member_id is empty).
  result<void> leave_group(const std::string& group_id, const std::string& member_id,
                           const std::optional<std::string>& group_instance_id = std::nullopt);

  // ------------------------------------------------------------------ offsets

  /// OffsetCommit. Refused when the member or generation is stale (illegal_generation,
  /// unknown_member_id, fenced_instance_id), while the group awaits the leader's assignment
  /// (rebalance_in_progress), for partitions that do not exist (unknown_topic_or_partition),
  /// negative offsets (invalid_argument) or oversized metadata (offset_metadata_too_large).
  /// A commit with generation -1 and no member id is accepted only while the group has no
  /// members (Kafka's "simple" commit). Nothing is written unless everything is valid. A
  /// commit_timestamp of -1 is the clock's time (OffsetCommit v1 may carry the client's).
  result<void> commit_offsets(const offset_commit_request& req);

  /// OffsetFetch: the committed offsets of the group (of `tps`, or all of them). Partitions
  /// without a commit are absent. An unknown group has none.
  std::map<topic_partition, offset_and_metadata> fetch_offsets(
      const std::string& group_id, const std::optional<std::vector<topic_partition>>& tps = std::nullopt) const;

  /// Per partition: committed offset, high watermark and lag, for every partition the group
  /// has committed or is assigned (assignments decoded for the consumer protocol).
  result<std::vector<partition_lag>> lag(const std::string& group_id) const;

  // ------------------------------------------------------------------ administration

  result<group_description> describe_group(const std::string& group_id) const;

  std::vector<group_listing> list_groups() const;

  /// Sets committed offsets of a group without members (kafka-consumer-groups --reset-offsets).
  /// non_empty_group while the group has members.
  result<void> alter_offsets(const std::string& group_id,
                             const std::map<topic_partition, offset_and_metadata>& offsets);

  /// Deletes a group without members and its committed offsets (tombstones).
  /// group_id_not_found, non_empty_group.
  result<void> delete_group(const std::string& group_id);

  /// The records of __consumer_offsets that open() could not decode and skipped (each
  /// corrupt_message naming its partition and offset): empty on a healthy topic.
  const std::vector<error>& skipped_records() const noexcept { return skipped_records_; }

  // ------------------------------------------------------------------ time

  /// Applies every timeout that is due at the clock's current time: in-process liveness
  /// and poll intervals, session expiry, the end of a join phase (rebalance timeout or
  /// initial delay), topic metadata changes of subscribed topics, offsets retention.
  /// Returns the first storage error met (the pass still completes).
  result<void> tick();

  /// Runs tick() on a thread owned by the coordinator, at each next deadline (and at least
  /// every metadata_check_interval) until stop().
  void start();
  void stop();

 private:
  group_coordinator(std::unique_ptr<coordinator_backend> owned, coordinator_backend& backend, coordinator_config cfg,
                    std::unique_ptr<offset_store> store);

  static result<std::unique_ptr<group_coordinator>> open_with(std::unique_ptr<coordinator_backend> owned,
                                                              coordinator_backend& backend, coordinator_config cfg);

  timestamp_ms now() const { return clock_->now_ms(); }

  void run_timer();

  void wake_timer();

  /// The earliest time tick() has something to do.
  timestamp_ms next_deadline() const;

  result<void> load();

  static result<void> validate_group_id(const std::string& id);

  static error unknown_member(const std::string& group_id, const std::string& member_id);

  /// A join's checks that do not depend on the group.
  result<void> check_join(const join_group_request& req) const;

  /// A commit's offsets, each checked before anything is written.
  result<void> check_offsets(const std::map<topic_partition, offset_and_metadata>& offsets) const;

  /// The group a commit goes to, after its fencing checks (created for a simple commit).
  result<classic_group*> group_for_commit(const offset_commit_request& req);

  classic_group* find_group(const std::string& id);

  classic_group& create_group(const std::string& id);

  /// offsets.retention.minutes (KIP-211): offsets of a consumer group expire once it has
  /// been Empty for the retention period; offsets committed outside group management expire
  /// by their commit time; a Stable consumer group's offsets of topics it no longer
  /// subscribes to expire by commit time. A group left with nothing is forgotten.
  result<void> expire_offsets(timestamp_ms t);

  static std::vector<topic_partition> expired_offsets(const classic_group& g, timestamp_ms t, std::int64_t retention);

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
  std::vector<error> skipped_records_;  // written by load() in open(), then only read

  std::mutex timer_mu_;
  std::condition_variable timer_cv_;
  std::thread timer_;
  bool timer_stop_ = true;
  bool timer_poke_ = false;
};

}  // namespace brook

#if !defined(BROOK_SEPARATE_COMPILATION)
#include <brook/group/impl/group_coordinator.ipp>
#endif

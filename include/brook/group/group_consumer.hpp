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
#include <brook/core/linkage.hpp>
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
  group_consumer(group_coordinator& coordinator, group_consumer_config cfg);
  /// A member of `coordinator`'s groups reading `dd`, the data directory the coordinator
  /// runs on (so the coordinator's wake-ups reach this consumer's long polls).
  group_consumer(data_dir& dd, group_coordinator& coordinator, group_consumer_config cfg);
  group_consumer(const group_consumer&) = delete;
  group_consumer& operator=(const group_consumer&) = delete;
  ~group_consumer();

 private:
  group_consumer(std::unique_ptr<fetch_source> owned, group_coordinator& coordinator, group_consumer_config cfg);

 public:
  /// Subscribes to `topics` (replacing the previous subscription); takes effect at the next
  /// poll. Topics need not exist yet. invalid_topic for an illegal name, invalid_group_id
  /// without a group id.
  result<void> subscribe(std::vector<std::string> topics, rebalance_listener* listener = nullptr);
  const std::vector<std::string>& subscription() const noexcept { return subscription_; }

  /// Leaves the group (revoking everything) and drops the subscription.
  result<void> unsubscribe();

  /// Takes part in the group and fetches; see the header comment. Errors: the consumer's
  /// (offset_out_of_range, corrupt_message, wakeup), fenced_instance_id (another instance
  /// with this group.instance.id took over: fatal), inconsistent_group_protocol,
  /// invalid_session_timeout, group_max_size_reached, closed.
  result<consumer_records> poll(std::chrono::milliseconds timeout);

  /// Commits the current positions of every owned partition and waits for the answer.
  result<void> commit_sync() { return commit(positions()); }
  /// Commits the given offsets (the offset of the next record to read, as in Kafka).
  result<void> commit_sync(const std::map<topic_partition, offset_and_metadata>& offsets) { return commit(offsets); }
  /// Commits without waiting for other members; in-process the commit is an append to the
  /// coordinator's backend (a data directory at once; a cluster once the ISR has it), so
  /// `done` (optional) runs before commit_async returns, on this thread.
  void commit_async(std::function<void(const result<void>&)> done = {});
  void commit_async(const std::map<topic_partition, offset_and_metadata>& offsets,
                    std::function<void(const result<void>&)> done = {});

  /// The group's committed offsets for `tps` (absent: nothing committed).
  std::map<topic_partition, offset_and_metadata> committed(const std::vector<topic_partition>& tps) const;

  std::vector<topic_partition> assignment() const { return std::vector<topic_partition>(owned_.begin(), owned_.end()); }
  result<offset> position(const topic_partition& tp) { return inner_.position(tp); }
  result<void> seek(const topic_partition& tp, offset o) { return inner_.seek(tp, o); }
  result<void> seek_to_beginning(const std::vector<topic_partition>& tps) { return inner_.seek_to_beginning(tps); }
  result<void> seek_to_end(const std::vector<topic_partition>& tps) { return inner_.seek_to_end(tps); }
  void pause(const std::vector<topic_partition>& tps) { inner_.pause(tps); }
  void resume(const std::vector<topic_partition>& tps) { inner_.resume(tps); }
  result<std::map<topic_partition, offset>> end_offsets(const std::vector<topic_partition>& tps);

  consumer_group_metadata group_metadata() const;
  /// The error of the last automatic commit, if it failed.
  const std::optional<error>& last_auto_commit_error() const noexcept { return auto_commit_error_; }

  /// Makes a blocked (or the next) poll() fail with errc::wakeup (once). Thread-safe.
  void wakeup();

  /// Commits (with auto-commit), revokes the partitions (listener) and leaves the group; a
  /// static member does not leave (its session keeps its place, KIP-345). `o` can keep the
  /// member in the group and skip the commit and callbacks: close({false, false}) stops as a
  /// crashed process does, and the coordinator removes the member once its session times
  /// out. Idempotent.
  result<void> close(close_options o = {});

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
  bool exists(const topic_partition& tp) const;

  result<void> check_open() const;

  /// Positions to commit: as Kafka's allConsumed(), not of partitions still waiting for a
  /// seek to the beginning or end.
  std::map<topic_partition, offset_and_metadata> positions();

  result<void> commit(const std::map<topic_partition, offset_and_metadata>& offsets);

  void maybe_auto_commit();

  /// Remembers what a refusal from the coordinator means for the membership.
  void note_group_error(const error& e);

  void call_listener(void (rebalance_listener::*fn)(const std::vector<topic_partition>&),
                     const std::vector<topic_partition>& tps);

  /// The member is no longer in the group (or its generation is over): its partitions are lost.
  void lose_partitions();

  void revoke(const std::vector<topic_partition>& tps, bool commit_first);

  /// Points the inner consumer at the owned partitions, dropping those whose topic is gone.
  result<void> assign_inner();

  result<void> leave(close_options o);

  /// Before a rejoin: eager groups revoke everything (after committing); cooperative ones
  /// revoke only the partitions of topics no longer subscribed.
  void prepare_rejoin();

  result<void> heartbeat();

  void send_join();

  void send_sync(std::map<std::string, std::vector<std::byte>> assignments);

  bool woken() const;
  bool take_wakeup();

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
  result<bool> ensure_active(std::chrono::steady_clock::time_point deadline);

  result<std::map<std::string, std::vector<std::byte>>> compute_assignment(const join_group_response& jr);

  result<void> apply_assignment(const std::vector<topic_partition>& assigned);

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

#if !defined(BROOK_SEPARATE_COMPILATION)
#include <brook/group/impl/group_consumer.ipp>
#endif

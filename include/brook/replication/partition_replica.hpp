// One replica of one partition on one broker, and the state machine Kafka runs for it in
// Partition.scala (leader side) and AbstractFetcherThread/ReplicaFetcherThread (follower side),
// without brokers, threads or a controller: every step is an explicit call with an explicit
// `now`, so a test (or the next layer) drives it deterministically.
//
//   leader   become_leader(epoch, isr, replicas, now)  -> epoch starts at the log end (cache)
//            append_as_leader(batches, now)             -> stamps partitionLeaderEpoch, appends
//            fetch_as_leader(request, now)              -> bytes + HW, or the diverging epoch;
//                                                          updates the follower's LEO and
//                                                          lastCaughtUpTimeMs, moves the HW
//            end_offset_for_epoch(current, requested)   -> OffsetsForLeaderEpoch (KIP-101/279)
//            maybe_shrink_isr(now) / maybe_expand_isr() -> proposals for the controller
//            set_isr(isr, now)                          -> after the controller committed
//   follower become_follower(leader, epoch)
//            truncate_before_fetch(ask_leader)          -> OffsetsForLeaderEpoch loop (KIP-279)
//            make_fetch_request(max_bytes)              -> {LEO, latest epoch, leader epoch}
//            apply_fetch_response(response)             -> truncate on divergence (KIP-320) or
//                                                          append_as_follower(bytes, leader HW)
//
// Kafka's rules, kept exactly (sources: Partition.scala makeLeader/makeFollower,
// maybeIncrementLeaderHW, isFollowerInSync, getOutOfSyncReplicas, readRecords; Replica.scala
// updateFetchStateOrThrow/resetReplicaState/isCaughtUp; AbstractFetcherThread
// getOffsetTruncationState):
//  - high watermark = min LEO over the ISR and over followers "caught up" by time (Kafka waits
//    for those too, as they may be joining the ISR); it never moves back. A follower whose LEO
//    is unknown (no fetch since this replica became leader) holds it where it is.
//  - a follower is caught up when its LEO equals the leader's or it last caught up within
//    replica.lag.time.max.ms; lastCaughtUpTimeMs = the fetch time when the fetch offset reaches
//    the leader's LEO at that fetch, else the previous fetch time when it reaches the LEO of the
//    previous fetch. Out of sync (shrink) = not caught up. Joins the ISR (expand) when its LEO
//    >= HW and >= the start offset of the leader's epoch.
//  - the HW a fetch returns is the one before the fetch moved it (a follower learns of a new HW
//    one fetch later, the KIP-101 window that epochs make harmless).
//  - a fetch with last_fetched_epoch whose epoch or offset the leader's log contradicts returns
//    the diverging epoch instead of records, and the follower's state is not updated.
//
// brook choices: fetch and OffsetsForLeaderEpoch must come from replicas of the assignment
// (NOT_LEADER_OR_FOLLOWER otherwise); the ISR has no "in-flight" states (maybe_* only propose;
// set_isr applies). A follower truncating below its high watermark (possible only after an
// unclean election, or after losing unflushed data) lowers it to the new log end, as Kafka's
// UnifiedLog.truncateTo does; truncation_state::below_high_watermark says so.
//
// Thread-safety: all members are thread-safe (one mutex per replica); consumers read through
// part() (brook::partition, bounded by the high watermark) without that mutex.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/replication/leader_epoch_cache.hpp>
#include <brook/storage/log_slice.hpp>
#include <brook/storage/partition.hpp>
#include <brook/storage/partition_log.hpp>

namespace brook {

/// Replication tunables, with Kafka's broker config names and defaults.
struct replica_config {
  /// replica.lag.time.max.ms: a follower that has not caught up with the leader's log end for
  /// longer than this is out of sync. Default 30000.
  std::chrono::milliseconds replica_lag_time_max{30000};
};

enum class replica_role { none, leader, follower };

/// What a leader knows about one follower (Kafka: ReplicaState).
struct follower_state {
  brook::broker_id broker_id{-1};
  offset log_start_offset{-1};                  ///< from its last fetch; -1 unknown
  offset log_end_offset{-1};                    ///< its last fetch offset; -1 unknown
  offset last_fetch_leader_log_end_offset{-1};  ///< leader LEO at its last fetch
  timestamp_ms last_fetch_time_ms = 0;
  timestamp_ms last_caught_up_time_ms = 0;

  /// Kafka's isCaughtUp: same LEO as the leader, or caught up within max_lag_ms.
  bool is_caught_up(offset leader_end, timestamp_ms now, std::int64_t max_lag_ms) const noexcept {
    return leader_end == log_end_offset || now - last_caught_up_time_ms <= max_lag_ms;
  }
};

/// A follower's fetch of this partition (the replica part of Kafka's FetchRequest).
struct replica_fetch_request {
  brook::broker_id replica_id{-1};
  /// The leader epoch the follower believes current; undefined_epoch skips the check.
  leader_epoch current_leader_epoch = undefined_epoch;
  offset fetch_offset{0};
  /// The epoch of the follower's last record (KIP-320); undefined_epoch skips the check.
  leader_epoch last_fetched_epoch = undefined_epoch;
  offset log_start_offset{-1};
  /// replica.fetch.max.bytes (per partition here). Default 1 MiB.
  std::size_t max_bytes = 1024 * 1024;
};

/// The leader's answer to a replica_fetch_request.
struct replica_fetch_response {
  log_slice records;  ///< whole batches from fetch_offset; empty when diverging
  offset high_watermark{0};
  offset log_start_offset{0};
  offset log_end_offset{0};
  /// Set when the follower's log diverges: truncate (truncate_to_epoch_end) and fetch again.
  std::optional<epoch_end_offset> diverging_epoch;
};

/// One truncation step of a follower (Kafka: OffsetTruncationState).
struct truncation_state {
  offset log_end_offset{0};           ///< the follower's log end after the step
  bool completed = true;              ///< false: ask the leader again for latest_epoch()
  bool below_high_watermark = false;  ///< the cut went below the HW, which was lowered to the log end
};

class partition_replica {
 public:
  /// A replica of `part` on broker `id`, with its leader-epoch-checkpoint in the log's
  /// directory. Entries at or past the log end are dropped, as Kafka does on load. Starts with
  /// no role. Errors: the cache's (kafka_storage_error for a malformed file, OS errors).
  static result<std::unique_ptr<partition_replica>> open(brook::broker_id id, std::shared_ptr<partition> part,
                                                         replica_config cfg = {}) {
    BROOK_TRY_ASSIGN(auto cache, leader_epoch_cache::open(part->log().dir(), *part->log().config().files));
    return open(id, std::move(part), std::move(cache), cfg);
  }

  /// Same with a given cache (e.g. leader_epoch_cache::in_memory()).
  static result<std::unique_ptr<partition_replica>> open(brook::broker_id id, std::shared_ptr<partition> part,
                                                         std::unique_ptr<leader_epoch_cache> cache,
                                                         replica_config cfg = {}) {
    BROOK_TRY(cache->truncate_from_end(part->log_end_offset()));
    return std::unique_ptr<partition_replica>(new partition_replica(id, std::move(part), std::move(cache), cfg));
  }

  partition_replica(const partition_replica&) = delete;
  partition_replica& operator=(const partition_replica&) = delete;

  // ------------------------------------------------------------------ state (thread-safe)

  brook::broker_id broker_id() const noexcept { return broker_id_; }
  /// The partition consumers read (bounded by the high watermark).
  const std::shared_ptr<partition>& part() const noexcept { return part_; }
  leader_epoch_cache& epoch_cache() noexcept { return *cache_; }
  const leader_epoch_cache& epoch_cache() const noexcept { return *cache_; }
  const replica_config& config() const noexcept { return cfg_; }

  replica_role role() const {
    std::lock_guard l(mu_);
    return role_;
  }
  /// The leader epoch this replica last accepted; undefined_epoch before any.
  leader_epoch current_leader_epoch() const {
    std::lock_guard l(mu_);
    return epoch_;
  }
  /// The leader's broker id; -1 when unknown.
  brook::broker_id leader_id() const {
    std::lock_guard l(mu_);
    return leader_id_;
  }
  /// The ISR as the leader knows it (empty on a follower).
  std::vector<brook::broker_id> isr() const {
    std::lock_guard l(mu_);
    return isr_;
  }
  std::vector<brook::broker_id> replicas() const {
    std::lock_guard l(mu_);
    return replicas_;
  }
  /// Where the current leader epoch starts in the log (leader only).
  std::optional<offset> leader_epoch_start_offset() const {
    std::lock_guard l(mu_);
    return epoch_start_;
  }
  /// What this leader knows about follower `id`.
  std::optional<follower_state> follower(brook::broker_id id) const {
    std::lock_guard l(mu_);
    auto it = followers_.find(id);
    if (it == followers_.end()) return std::nullopt;
    return it->second;
  }
  offset high_watermark() const noexcept { return part_->high_watermark(); }
  offset log_end_offset() const noexcept { return part_->log_end_offset(); }
  offset log_start_offset() const noexcept { return part_->log_start_offset(); }
  /// The epoch of this replica's last record (Kafka: latestEpoch).
  std::optional<leader_epoch> latest_epoch() const { return cache_->latest_epoch(); }

  // ------------------------------------------------------------------ role changes

  /// Kafka's makeLeader. `epoch` must be newer than any accepted (else fenced_leader_epoch);
  /// `isr` must contain this broker and `replicas` must contain every ISR member
  /// (invalid_request otherwise). Records that the epoch starts at the log end, resets what it
  /// knows of followers (Kafka's resetReplicaState: log ends unknown, ISR members count as
  /// caught up at `now`), and moves the high watermark if it can. Returns whether this broker
  /// was not leader before. Follower state is reset even when this replica led the previous
  /// epoch it knows of: an epoch only moves with leadership here, so it missed the epochs in
  /// between, in which other leaders may have made its followers truncate (Kafka keeps the
  /// state when only the epoch changes; its epochs also move without a leader change).
  result<bool> become_leader(leader_epoch epoch, std::vector<brook::broker_id> isr,
                             std::vector<brook::broker_id> replicas, timestamp_ms now) {
    std::lock_guard l(mu_);
    BROOK_TRY(check_newer_epoch(epoch));
    if (!contains(isr, broker_id_))
      return make_error(errc::invalid_request, "{}: broker {} is not in the ISR [{}] it leads", name(), broker_id_,
                        fmt::join(isr, ","));
    for (auto id : isr)
      if (!contains(replicas, id))
        return make_error(errc::invalid_request, "{}: ISR member {} is not a replica [{}]", name(), id,
                          fmt::join(replicas, ","));
    const offset leo = part_->log_end_offset();
    BROOK_TRY(cache_->assign(epoch, leo));
    const bool new_leader = role_ != replica_role::leader;
    std::map<brook::broker_id, follower_state> next;
    for (auto id : replicas) {
      if (id == broker_id_) continue;
      const bool in_sync = contains(isr, id);
      follower_state s;
      s.broker_id = id;
      s.last_caught_up_time_ms = in_sync ? now : 0;
      next.emplace(id, s);
    }
    followers_ = std::move(next);
    role_ = replica_role::leader;
    epoch_ = epoch;
    leader_id_ = broker_id_;
    epoch_start_ = leo;
    isr_ = std::move(isr);
    replicas_ = std::move(replicas);
    maybe_increment_hw_locked(now);
    return new_leader;
  }

  /// Kafka's makeFollower: follow `leader` in `epoch` (newer than any accepted, else
  /// fenced_leader_epoch). The log is not touched: truncate_before_fetch (or a diverging
  /// fetch) does that. Returns whether the leader changed.
  result<bool> become_follower(brook::broker_id leader, leader_epoch epoch) {
    std::lock_guard l(mu_);
    BROOK_TRY(check_newer_epoch(epoch));
    const bool changed = role_ != replica_role::follower || leader_id_ != leader;
    role_ = replica_role::follower;
    epoch_ = epoch;
    leader_id_ = leader;
    epoch_start_.reset();
    followers_.clear();
    isr_.clear();
    return changed;
  }

  // ------------------------------------------------------------------ leader side

  /// Appends producer batches: stamps each batch's partitionLeaderEpoch with the current epoch
  /// (not covered by the CRC), assigns offsets (the log rewrites baseOffset in `batches`) and
  /// moves the high watermark if the ISR allows. Errors: not_leader_or_follower, the log's.
  result<append_result> append_as_leader(std::span<std::byte> batches, timestamp_ms now) {
    std::lock_guard l(mu_);
    if (role_ != replica_role::leader)
      return make_error(errc::not_leader_or_follower, "{}: broker {} is not the leader", name(), broker_id_);
    for (std::size_t pos = 0; pos < batches.size();) {
      BROOK_TRY_ASSIGN(auto h, check_batch_header(std::span<const std::byte>(batches.subspan(pos)), "appended batch"));
      set_batch_leader_epoch(batches.subspan(pos, h.size_bytes()), epoch_.value());
      pos += h.size_bytes();
    }
    BROOK_TRY(cache_->assign(epoch_, part_->log_end_offset()));  // no-op unless the log was truncated
    BROOK_TRY_ASSIGN(auto r, part_->log().append(batches, append_options{}));
    maybe_increment_hw_locked(now);
    return r;
  }

  /// Kafka's fetch from a follower (Partition.fetchRecords/readRecords + updateFollowerFetchState).
  /// Errors: not_leader_or_follower (not leader, or not a replica), fenced_leader_epoch /
  /// unknown_leader_epoch (request's current epoch older / newer), offset_out_of_range (fetch
  /// offset outside [log start, log end], or last_fetched_epoch unknown to the leader).
  result<replica_fetch_response> fetch_as_leader(const replica_fetch_request& req, timestamp_ms now) {
    std::lock_guard l(mu_);
    BROOK_TRY(check_leader_request(req.current_leader_epoch, req.replica_id));
    replica_fetch_response resp;
    resp.high_watermark = part_->high_watermark();
    resp.log_start_offset = part_->log_start_offset();
    resp.log_end_offset = part_->log_end_offset();
    if (req.last_fetched_epoch != undefined_epoch) {
      auto ee = cache_->end_offset_for(req.last_fetched_epoch, resp.log_end_offset);
      if (ee.end_offset == undefined_epoch_offset || ee.epoch == undefined_epoch)
        return make_error(errc::offset_out_of_range, "{}: cannot determine the end offset of last fetched epoch {}",
                          name(), req.last_fetched_epoch);
      if (ee.epoch < req.last_fetched_epoch || ee.end_offset < req.fetch_offset) {
        resp.records = log_slice(nullptr, file_pos{0}, 0, req.fetch_offset, req.fetch_offset);
        resp.diverging_epoch = ee;
        return resp;
      }
    }
    read_options ro;
    ro.max_bytes = req.max_bytes;
    BROOK_TRY_ASSIGN(auto slice, part_->log().read(req.fetch_offset, ro));
    resp.records = std::move(slice);
    follower_state& s = followers_[req.replica_id];
    // Replica.updateFetchStateOrThrow, with the leader's LEO from before the read.
    if (req.fetch_offset >= resp.log_end_offset)
      s.last_caught_up_time_ms = std::max(s.last_caught_up_time_ms, now);
    else if (req.fetch_offset >= s.last_fetch_leader_log_end_offset)
      s.last_caught_up_time_ms = std::max(s.last_caught_up_time_ms, s.last_fetch_time_ms);
    s.log_start_offset = req.log_start_offset;
    s.log_end_offset = req.fetch_offset;
    s.last_fetch_leader_log_end_offset = std::max(resp.log_end_offset, s.last_fetch_leader_log_end_offset);
    s.last_fetch_time_ms = now;
    maybe_increment_hw_locked(now);
    return resp;
  }

  /// OffsetsForLeaderEpoch on the leader (Partition.lastOffsetForLeaderEpoch with
  /// fetchOnlyFromLeader): where `requested` ended in this log, per leader_epoch_cache::
  /// end_offset_for; {-1, -1} when unknown. Errors as fetch_as_leader (replica id not checked).
  result<epoch_end_offset> end_offset_for_epoch(leader_epoch current, leader_epoch requested) const {
    std::lock_guard l(mu_);
    BROOK_TRY(check_leader_request(current, std::nullopt));
    return cache_->end_offset_for(requested, part_->log_end_offset());
  }

  /// ISR members (other than this leader) that are out of sync at `now` (Kafka:
  /// getOutOfSyncReplicas), for the controller to remove. Empty unless leader.
  std::vector<brook::broker_id> maybe_shrink_isr(timestamp_ms now) const {
    std::lock_guard l(mu_);
    std::vector<brook::broker_id> out;
    if (role_ != replica_role::leader) return out;
    const offset leo = part_->log_end_offset();
    for (auto id : isr_) {
      if (id == broker_id_) continue;
      auto it = followers_.find(id);
      if (it == followers_.end() || !it->second.is_caught_up(leo, now, cfg_.replica_lag_time_max.count()))
        out.push_back(id);
    }
    return out;
  }

  /// Replicas outside the ISR that may join it (Kafka: isFollowerInSync): LEO >= high
  /// watermark and >= the start of this leader's epoch, and not ineligible. Empty unless leader.
  std::vector<brook::broker_id> maybe_expand_isr() const {
    std::lock_guard l(mu_);
    std::vector<brook::broker_id> out;
    if (role_ != replica_role::leader || !epoch_start_) return out;
    const offset hw = part_->high_watermark();
    for (const auto& [id, s] : followers_)
      if (!contains(isr_, id) && !contains(ineligible_, id) && s.log_end_offset >= hw &&
          s.log_end_offset >= *epoch_start_)
        out.push_back(id);
    return out;
  }

  /// Forgets what this leader knows of follower `id` (a new incarnation of its broker: what
  /// the previous one fetched says nothing about the restarted log, KIP-903): its log end is
  /// unknown until it fetches again, so it cannot rejoin the ISR or hold the HW on stale data.
  void reset_follower(brook::broker_id id) {
    std::lock_guard l(mu_);
    auto it = followers_.find(id);
    if (it == followers_.end()) return;
    it->second = follower_state{};
    it->second.broker_id = id;
  }

  /// Replicas on brokers the controller has fenced (Kafka: isReplicaIsrEligible is false):
  /// the high watermark does not wait for them even while they count as caught up by time,
  /// and they cannot join the ISR. Moves the high watermark if it now can.
  void set_ineligible(std::vector<brook::broker_id> ids, timestamp_ms now) {
    std::lock_guard l(mu_);
    ineligible_ = std::move(ids);
    if (role_ == replica_role::leader) maybe_increment_hw_locked(now);
  }

  /// Moves the high watermark if time alone allows it (a follower outside the ISR stopped
  /// counting as caught up). Leader only; a no-op otherwise.
  void maybe_increment_high_watermark(timestamp_ms now) {
    std::lock_guard l(mu_);
    if (role_ == replica_role::leader) maybe_increment_hw_locked(now);
  }

  /// Applies the ISR the controller committed (leader only: not_leader_or_follower; the ISR
  /// must hold this broker and only replicas: invalid_request), then moves the HW if it can.
  result<void> set_isr(std::vector<brook::broker_id> isr, timestamp_ms now) {
    std::lock_guard l(mu_);
    if (role_ != replica_role::leader)
      return make_error(errc::not_leader_or_follower, "{}: broker {} is not the leader", name(), broker_id_);
    if (!contains(isr, broker_id_))
      return make_error(errc::invalid_request, "{}: new ISR [{}] leaves out the leader {}", name(), fmt::join(isr, ","),
                        broker_id_);
    for (auto id : isr)
      if (!contains(replicas_, id))
        return make_error(errc::invalid_request, "{}: ISR member {} is not a replica", name(), id);
    isr_ = std::move(isr);
    maybe_increment_hw_locked(now);
    return ok();
  }

  // ------------------------------------------------------------------ follower side

  /// The next fetch: from the log end, with the epoch of the last record and the leader epoch
  /// this follower knows.
  replica_fetch_request make_fetch_request(std::size_t max_bytes = 1024 * 1024) const {
    std::lock_guard l(mu_);
    replica_fetch_request r;
    r.replica_id = broker_id_;
    r.current_leader_epoch = epoch_;
    r.fetch_offset = part_->log_end_offset();
    r.last_fetched_epoch = cache_->latest_epoch().value_or(undefined_epoch);
    r.log_start_offset = part_->log_start_offset();
    r.max_bytes = max_bytes;
    return r;
  }

  /// One step of KIP-101/KIP-279 truncation given the leader's answer for (or the diverging
  /// epoch of) this follower's latest epoch (AbstractFetcherThread.getOffsetTruncationState):
  ///  - answer end offset unknown          -> truncate to the high watermark, completed;
  ///  - answer epoch unknown to this cache -> truncate to min(LEO, answer end), completed;
  ///  - this cache ends answer.epoch with another epoch (it never saw that epoch) -> truncate
  ///    to where its largest epoch below ended, not completed: ask again with latest_epoch();
  ///  - else -> truncate to min(own end of that epoch, answer end, LEO), completed.
  /// The log loses whole batches (partition_log::truncate_to); the cache drops epochs that
  /// start at or past the new end, even when the log was not cut (Kafka: truncateTo).
  /// Errors: not_leader_or_follower (not a follower), the log's.
  result<truncation_state> truncate_to_epoch_end(epoch_end_offset answer) {
    std::lock_guard l(mu_);
    if (role_ != replica_role::follower)
      return make_error(errc::not_leader_or_follower, "{}: broker {} is not a follower", name(), broker_id_);
    const offset leo = part_->log_end_offset();
    offset target = leo;
    bool completed = true;
    if (answer.end_offset == undefined_epoch_offset) {
      target = std::min(part_->high_watermark(), leo);
    } else if (answer.epoch == undefined_epoch) {
      target = std::min(answer.end_offset, leo);
    } else {
      auto mine = cache_->end_offset_for(answer.epoch, leo);
      if (mine.end_offset == undefined_epoch_offset) {
        target = std::min(answer.end_offset, leo);
      } else if (mine.epoch != answer.epoch) {
        target = std::min(mine.end_offset, leo);
        completed = false;
      } else {
        target = std::min({mine.end_offset, answer.end_offset, leo});
      }
    }
    truncation_state st;
    st.completed = completed;
    if (target < leo) BROOK_TRY(part_->log().truncate_to(target));
    // Always, as Kafka's truncateTo does even when the log is not cut: a broker that led an
    // epoch without appending has that epoch's entry at its log end, and would otherwise keep
    // sending it as last_fetched_epoch and diverge forever.
    BROOK_TRY(cache_->truncate_from_end(part_->log_end_offset()));
    st.log_end_offset = part_->log_end_offset();
    st.below_high_watermark = st.log_end_offset < part_->high_watermark();
    if (st.below_high_watermark) part_->reset_high_watermark(st.log_end_offset);  // UnifiedLog.truncateTo
    return st;
  }

  /// The OffsetsForLeaderEpoch loop before fetching: asks `ask_leader(latest epoch)` (a
  /// callable returning result<epoch_end_offset>, e.g. the leader's end_offset_for_epoch with
  /// this follower's current_leader_epoch()) and truncates until a step completes. With no
  /// epoch in the cache the log is truncated to the high watermark (Kafka does the same for
  /// replicas without epochs). Returns the log end afterwards.
  template <typename AskLeader>
  result<offset> truncate_before_fetch(AskLeader&& ask_leader) {
    // Each incomplete step drops every epoch above the answer's (< the one asked), so this ends
    // within (epochs in the cache + 1) steps.
    for (std::size_t steps = cache_->entries().size() + 2; steps > 0; --steps) {
      auto latest = cache_->latest_epoch();
      result<epoch_end_offset> answer = latest ? result<epoch_end_offset>(ask_leader(*latest))
                                               : epoch_end_offset{undefined_epoch, undefined_epoch_offset};
      if (!answer) return answer.error();
      BROOK_TRY_ASSIGN(auto st, truncate_to_epoch_end(*answer));
      if (st.completed) return st.log_end_offset;
    }
    return make_error(errc::unknown_server_error, "{}: truncation did not converge", name());
  }

  /// Appends what the leader sent, keeping its offsets, records each batch's epoch in the
  /// cache (before writing, as Kafka does: a crash leaves the cache ahead, trimmed on open),
  /// then sets the high watermark to min(leader HW, own LEO) if that is higher. The first
  /// batch must start at the log end (offset_out_of_range otherwise: fetch from
  /// make_fetch_request().fetch_offset). Errors: not_leader_or_follower, the log's.
  result<offset> append_as_follower(std::span<const std::byte> records, offset leader_hw) {
    std::lock_guard l(mu_);
    if (role_ != replica_role::follower)
      return make_error(errc::not_leader_or_follower, "{}: broker {} is not a follower", name(), broker_id_);
    if (!records.empty()) {
      std::vector<epoch_entry> epochs;
      for (std::size_t pos = 0; pos < records.size();) {
        BROOK_TRY_ASSIGN(auto h, check_batch_header(records.subspan(pos), "fetched batch"));
        if (pos == 0 && h.base_offset != part_->log_end_offset()) {
          // Kafka (Partition.appendRecordsToFollowerOrFutureReplica): the leader's log start lies
          // inside this batch and this log is empty: restart it at the batch's base offset.
          const offset leo = part_->log_end_offset();
          if (leo == part_->log_start_offset() && h.base_offset < leo && h.last_offset() >= leo) {
            BROOK_TRY(cache_->clear());
            BROOK_TRY(part_->log().truncate_fully_and_start_at(h.base_offset));
            part_->reset_high_watermark(h.base_offset);
          }
        }
        if (pos == 0 && h.base_offset != part_->log_end_offset())
          return make_error(errc::offset_out_of_range,
                            "{}: fetched batch at offset {} does not start at the log end {}", name(), h.base_offset,
                            part_->log_end_offset());
        if (h.partition_leader_epoch >= 0) epochs.push_back({leader_epoch{h.partition_leader_epoch}, h.base_offset});
        pos += h.size_bytes();
      }
      buf_.assign(records.begin(), records.end());
      BROOK_TRY(cache_->assign(std::span<const epoch_entry>(epochs)));
      append_options ao;
      ao.assign_offsets = false;
      auto r = part_->log().append(buf_, ao);
      if (!r) {
        (void)cache_->truncate_from_end(part_->log_end_offset());  // undo; the append's error wins
        return r.error();
      }
    }
    const offset hw = std::min(leader_hw, part_->log_end_offset());
    if (hw > part_->high_watermark()) part_->advance_high_watermark(hw);
    return part_->log_end_offset();
  }

  /// Empties the log and restarts it at `start` (Kafka's truncateFullyAndStartAt), with no
  /// epochs: a follower whose log end is below the leader's log start. The high watermark
  /// moves to `start`. Errors: not_leader_or_follower (not a follower), the log's.
  result<void> truncate_fully_and_start_at(offset start) {
    std::lock_guard l(mu_);
    if (role_ != replica_role::follower)
      return make_error(errc::not_leader_or_follower, "{}: broker {} is not a follower", name(), broker_id_);
    BROOK_TRY(cache_->clear());
    BROOK_TRY(part_->log().truncate_fully_and_start_at(start));
    part_->reset_high_watermark(start);
    return ok();
  }

  /// Moves this follower's log start up to the leader's (Kafka: maybeIncrementLogStartOffset
  /// with the fetch response's logStartOffset), never past its own high watermark.
  result<void> follow_log_start(offset leader_log_start) {
    std::lock_guard l(mu_);
    const offset target = std::min(leader_log_start, part_->high_watermark());
    if (target <= part_->log_start_offset()) return ok();
    BROOK_TRY(part_->log().delete_records_before(target));
    BROOK_TRY(cache_->truncate_from_start(target));
    return ok();
  }

  /// A fetch response, as the follower's fetcher handles it: truncation on a diverging epoch
  /// (completed or not, the next make_fetch_request fetches from the right place), else
  /// append_as_follower. Returns the log end afterwards.
  result<offset> apply_fetch_response(const replica_fetch_response& resp) {
    if (resp.diverging_epoch) {
      BROOK_TRY_ASSIGN(auto st, truncate_to_epoch_end(*resp.diverging_epoch));
      return st.log_end_offset;
    }
    return append_as_follower(resp.records.bytes(), resp.high_watermark);
  }

 private:
  partition_replica(brook::broker_id id, std::shared_ptr<partition> part, std::unique_ptr<leader_epoch_cache> cache,
                    replica_config cfg)
      : broker_id_(id), part_(std::move(part)), cache_(std::move(cache)), cfg_(cfg) {}

  static bool contains(const std::vector<brook::broker_id>& v, brook::broker_id x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }

  std::string name() const { return fmt::format("{}-{}", part_->topic(), part_->id()); }

  result<void> check_newer_epoch(leader_epoch epoch) const {
    if (epoch.value() < 0) return make_error(errc::invalid_argument, "{}: negative leader epoch {}", name(), epoch);
    if (epoch <= epoch_)
      return make_error(errc::fenced_leader_epoch, "{}: leader epoch {} is not newer than the current {}", name(),
                        epoch, epoch_);
    return ok();
  }

  // Partition.localLogWithEpochOrThrow(requireLeader = true) + followerReplicaOrThrow.
  result<void> check_leader_request(leader_epoch current, std::optional<brook::broker_id> replica_id) const {
    if (role_ != replica_role::leader)
      return make_error(errc::not_leader_or_follower, "{}: broker {} is not the leader", name(), broker_id_);
    if (current != undefined_epoch && current < epoch_)
      return make_error(errc::fenced_leader_epoch, "{}: request epoch {} is older than the leader's {}", name(),
                        current, epoch_);
    if (current != undefined_epoch && current > epoch_)
      return make_error(errc::unknown_leader_epoch, "{}: request epoch {} is newer than the leader's {}", name(),
                        current, epoch_);
    if (replica_id && (*replica_id == broker_id_ || !followers_.contains(*replica_id)))
      return make_error(errc::not_leader_or_follower, "{}: replica {} is not a follower in the assignment [{}]", name(),
                        *replica_id, fmt::join(replicas_, ","));
    return ok();
  }

  // Partition.maybeIncrementLeaderHW: min LEO over the ISR and the eligible followers caught up by time.
  void maybe_increment_hw_locked(timestamp_ms now) {
    const offset leo = part_->log_end_offset();
    offset hw = leo;
    for (const auto& [id, s] : followers_) {
      if (s.log_end_offset >= hw) continue;
      if (contains(isr_, id) ||
          (!contains(ineligible_, id) && s.is_caught_up(leo, now, cfg_.replica_lag_time_max.count())))
        hw = s.log_end_offset;
    }
    if (hw > part_->high_watermark()) part_->advance_high_watermark(hw);
  }

  const brook::broker_id broker_id_;
  const std::shared_ptr<partition> part_;
  const std::unique_ptr<leader_epoch_cache> cache_;
  const replica_config cfg_;

  mutable std::mutex mu_;  // guards everything below, and serialises log writes through this replica
  replica_role role_ = replica_role::none;
  leader_epoch epoch_ = undefined_epoch;
  brook::broker_id leader_id_{-1};
  std::optional<offset> epoch_start_;                     // leader only (Kafka: leaderEpochStartOffsetOpt)
  std::vector<brook::broker_id> isr_;                     // leader only
  std::vector<brook::broker_id> replicas_;                // leader only
  std::map<brook::broker_id, follower_state> followers_;  // leader only: every replica but this one
  std::vector<brook::broker_id> ineligible_;              // leader only: replicas on fenced brokers
  std::vector<std::byte> buf_;                            // follower: writable copy of fetched bytes
};

}  // namespace brook

// The follower side of replication for one broker (Kafka: ReplicaFetcherThread, one per
// source broker; brook runs one per follower broker over all its leaders).
//
// step() is one fetch round over every partition the broker follows:
//   1. leader unknown (offline partition) or unreachable -> skip it this round;
//   2. after a leader change: the OffsetsForLeaderEpoch loop (KIP-101/279) truncates the
//      log to where it agrees with the leader (partition_replica::truncate_before_fetch);
//   3. fetch from the log end with the last fetched epoch (KIP-320), up to
//      replica.fetch.max.bytes per partition and replica.fetch.response.max.bytes per round;
//      a diverging epoch in the answer truncates instead; a fetch offset below the leader's
//      log start restarts the log there (truncateFullyAndStartAt); records and the leader's
//      high watermark are applied, then its log start (log start propagation).
// run() repeats step() until stopped; a round that brought fewer than replica.fetch.min.bytes
// waits on the cluster's data notifier up to replica.fetch.wait.max.ms, the way a leader
// holds a follower's fetch until data arrives. Tests call step() instead, deterministically.
//
// Connectivity comes from a function the host provides (connect(from, to)), which is how a
// cluster isolates brokers: an unreachable leader answers broker_not_available.
//
// Thread-safety: step() and run() of one fetcher must not run concurrently; stats() is
// thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/replication/broker.hpp>
#include <brook/replication/partition_replica.hpp>

namespace brook {

struct fetcher_config {
  /// replica.fetch.min.bytes: a round with fewer bytes waits for more. Default 1.
  std::size_t min_bytes = 1;
  /// replica.fetch.max.bytes: per partition and fetch. Default 1048576.
  std::size_t max_bytes = 1024 * 1024;
  /// replica.fetch.response.max.bytes: per round. Default 10485760.
  std::size_t response_max_bytes = 10 * 1024 * 1024;
  /// replica.fetch.wait.max.ms: the longest a round waits for min_bytes. Default 500.
  std::chrono::milliseconds wait_max{500};
};

/// What one step() did.
struct fetch_round {
  std::size_t bytes = 0;        ///< record bytes appended
  std::size_t fetches = 0;      ///< partitions fetched from
  std::size_t truncations = 0;  ///< truncation loops that ran
  std::size_t errors = 0;       ///< partitions skipped on an error (unreachable, stale epoch, ...)
};

class replica_fetcher {
 public:
  /// The leader `to` as seen from broker `from`, or an error (broker_not_available when down
  /// or cut off).
  using connect_fn = std::function<result<std::shared_ptr<broker>>(broker_id from, broker_id to)>;

  replica_fetcher(std::shared_ptr<broker> follower, connect_fn connect, fetcher_config cfg = {})
      : follower_(std::move(follower)), connect_(std::move(connect)), cfg_(cfg) {}

  const std::shared_ptr<broker>& follower() const noexcept { return follower_; }

  /// One round; see the header comment.
  fetch_round step() {
    fetch_round round;
    std::size_t budget = cfg_.response_max_bytes;
    // Each round starts one partition further, so a partition whose backlog fills the budget
    // cannot starve the ones after it (Kafka: PartitionStates.updateAndMoveToEnd).
    auto parts = follower_->following();
    if (!parts.empty())
      std::rotate(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(start_++ % parts.size()), parts.end());
    for (auto& f : parts) {
      if (f.leader.value() < 0) continue;
      auto leader = connect_(follower_->id(), f.leader);
      if (!leader) {
        ++round.errors;
        continue;
      }
      auto& rep = *f.replica;
      const leader_epoch epoch = rep.current_leader_epoch();
      if (f.needs_truncation) {
        ++round.truncations;
        auto t = rep.truncate_before_fetch([&](leader_epoch asked) {
          return (*leader)->offsets_for_leader_epoch(f.topic, f.partition, epoch, asked);
        });
        if (!t) {
          ++round.errors;
          continue;
        }
        follower_->truncation_done(f.topic, f.partition, epoch);
      }
      if (budget == 0) break;
      auto req = rep.make_fetch_request(std::min(cfg_.max_bytes, budget));
      auto resp = (*leader)->fetch(f.topic, f.partition, req);
      if (!resp && resp.error() == errc::offset_out_of_range) {
        if (!handle_out_of_range(**leader, f, req.fetch_offset)) ++round.errors;
        continue;
      }
      if (!resp) {
        ++round.errors;
        continue;
      }
      ++round.fetches;
      const std::size_t n = resp->records.size_bytes();
      auto applied = rep.apply_fetch_response(*resp);
      if (!applied) {
        ++round.errors;
        continue;
      }
      if (!resp->diverging_epoch) {
        if (!rep.follow_log_start(resp->log_start_offset)) ++round.errors;
        round.bytes += n;
        budget = n >= budget ? 0 : budget - n;
      }
    }
    bytes_.fetch_add(round.bytes, std::memory_order_relaxed);
    rounds_.fetch_add(1, std::memory_order_relaxed);
    return round;
  }

  /// Runs rounds until `stop` is set (then wake `data` so it notices). A round with fewer
  /// than min_bytes waits for `data` to move, up to wait_max.
  void run(const std::atomic<bool>& stop, notifier& data) {
    while (!stop.load(std::memory_order_acquire)) {
      const auto seen = data.sequence();
      auto r = step();
      if (r.bytes < cfg_.min_bytes && !stop.load(std::memory_order_acquire))
        data.wait(seen, std::chrono::steady_clock::now() + cfg_.wait_max);
    }
  }

  /// Bytes fetched and rounds run so far.
  std::uint64_t bytes_fetched() const noexcept { return bytes_.load(std::memory_order_relaxed); }
  std::uint64_t rounds() const noexcept { return rounds_.load(std::memory_order_relaxed); }

 private:
  // Kafka's fetchOffsetAndTruncate: the leader's log ends below ours -> truncate to its end;
  // else our log ends below its start (retention) -> restart ours at its start. Otherwise
  // (our last epoch is unknown to the leader's cache, e.g. it fell off with old segments)
  // restart at its start too: what we hold cannot be matched to its history, and refetching
  // is always safe.
  static bool handle_out_of_range(broker& leader, const followed_partition& f, offset fetch_offset) {
    auto lr = leader.replica(f.topic, f.partition);
    if (!lr) return false;
    const offset leader_end = lr->log_end_offset();
    if (leader_end < fetch_offset)
      return static_cast<bool>(f.replica->truncate_to_epoch_end({undefined_epoch, leader_end}));
    return static_cast<bool>(f.replica->truncate_fully_and_start_at(lr->log_start_offset()));
  }

  std::shared_ptr<broker> follower_;
  connect_fn connect_;
  fetcher_config cfg_;
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> rounds_{0};
  std::size_t start_ = 0;  // only step() touches it
};

}  // namespace brook

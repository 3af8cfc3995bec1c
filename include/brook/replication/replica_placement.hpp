// Kafka's rack-unaware replica placement: which brokers hold each partition of a new topic,
// in order, the first being the preferred leader. Kafka: AdminUtils.assignReplicasToBrokers
// -> assignReplicasToBrokersRackUnaware (server-common/src/main/java/org/apache/kafka/admin/
// AdminUtils.java, formerly core/src/main/scala/kafka/admin/AdminUtils.scala), used by
// `kafka-reassign-partitions.sh --generate` and by ZooKeeper-mode topic creation. (A KRaft
// controller places new topics with StripedReplicaPlacer instead; brook follows AdminUtils.)
//
// The formula. N brokers, the broker list taken in the order given (Kafka does not sort it),
// partition p (p = start_partition, start_partition + 1, ...):
//
//   shift(p)            = replica_shift + (number of q in [start_partition, p] with q > 0 and q % N == 0)
//   first(p)            = (p + start_index) % N                      -> replica 0 (preferred leader)
//   follower(p, j)      = (first(p) + 1 + (shift(p) + j) % (N - 1)) % N,   j = 0 .. rf - 2
//                                                                    -> replica j + 1
//   replicas(p)         = brokers[first(p)], brokers[follower(p, 0)], ..., brokers[follower(p, rf-2)]
//
// With start_index = 0, replica_shift = 0 and start_partition = 0, shift(p) = p / N, so for the
// first round of partitions (p < N) replica j of partition p is broker index (p + j) % N; from
// p = N on the followers move one further step each round so that the same replica sets do not
// repeat: N = 5, rf = 3 gives
//
//   p0 [0,1,2]  p1 [1,2,3]  p2 [2,3,4]  p3 [3,4,0]  p4 [4,0,1]      (shift 0)
//   p5 [0,2,3]  p6 [1,3,4]  p7 [2,4,0]  p8 [3,0,1]  p9 [4,1,2]      (shift 1)
//
// (Kafka's AdminTest.testReplicaAssignment vector and the AdminUtils Javadoc table.) The
// followers of p are always rf - 1 distinct brokers other than the leader, because
// 1 + (shift + j) % (N - 1) takes rf - 1 distinct values in [1, N - 1].
//
// Kafka quirks kept as they are: shift(p) counts round boundaries from start_partition, not
// from 0, so placing partitions 10.. of a 5-broker topic in a second call uses shift + 1 where
// one call for all of them would use shift + 2; and Kafka's fixedStartIndex sets *both*
// start_index and replica_shift (placement_start::fixed). Without a fixed start Kafka draws
// start_index and then replica_shift independently, each uniform in [0, N)
// (placement_start::random, from a caller-provided engine: brook has no hidden global RNG).
//
// Errors, checked in Kafka's order: partitions < 1 -> invalid_partitions; replication factor
// < 1 or > number of brokers -> invalid_replication_factor (Kafka's messages); then a negative
// or duplicate broker id, a negative start_index / replica_shift / start_partition ->
// invalid_argument; start_partition + partitions beyond int32 -> invalid_partitions.
//
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <unordered_set>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>

namespace brook {

/// Partition -> the broker ids (Kafka int32 node ids, >= 0) of its replicas in order; the
/// first is the preferred leader.
using replica_assignment = std::map<partition_id, std::vector<broker_id>>;

/// Where the round robin starts: index into the broker list of partition 0's leader, and the
/// initial follower shift. Both may be any non-negative value (they are used modulo N and
/// modulo N - 1); Kafka's random draws lie in [0, N).
struct placement_start {
  std::int32_t start_index = 0;
  std::int32_t replica_shift = 0;

  /// Kafka's fixedStartIndex: start_index = replica_shift = i.
  static constexpr placement_start fixed(std::int32_t i) noexcept { return {i, i}; }

  /// Kafka's default: start_index, then replica_shift, each uniform in [0, brokers) drawn from
  /// `rng` (Kafka: RAND.nextInt(n) twice). With brokers <= 0 returns {0, 0}, and placement then
  /// reports the real error. Same engine state -> same result (for one standard library).
  template <std::uniform_random_bit_generator G>
  static placement_start random(G& rng, std::size_t brokers) {
    if (brokers == 0 || brokers > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) return {};
    std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(brokers) - 1);
    placement_start s;
    s.start_index = pick(rng);
    s.replica_shift = pick(rng);
    return s;
  }

  friend constexpr bool operator==(const placement_start&, const placement_start&) = default;
};

/// Places `partitions` partitions, numbered start_partition, start_partition + 1, ..., with
/// `replication_factor` replicas each on `brokers` (in the given order) by Kafka's rack-unaware
/// round robin; see the top of this header for the exact formula and the errors.
/// Thread-safe (pure).
[[nodiscard]] inline result<replica_assignment> assign_replicas_rack_unaware(
    std::span<const broker_id> brokers, std::int32_t partitions, std::int32_t replication_factor,
    placement_start start = {}, partition_id start_partition = partition_id{0}) {
  if (partitions <= 0) return make_error(errc::invalid_partitions, "Number of partitions must be larger than 0.");
  if (replication_factor <= 0)
    return make_error(errc::invalid_replication_factor, "Replication factor must be larger than 0.");
  if (static_cast<std::size_t>(replication_factor) > brokers.size())
    return make_error(errc::invalid_replication_factor, "Replication factor: {} larger than available brokers: {}.",
                      replication_factor, brokers.size());
  std::unordered_set<broker_id> seen;
  for (broker_id b : brokers) {
    if (b.value() < 0) return make_error(errc::invalid_argument, "broker id {} is negative", b);
    if (!seen.insert(b).second) return make_error(errc::invalid_argument, "broker id {} is listed twice", b);
  }
  if (start.start_index < 0 || start.replica_shift < 0)
    return make_error(errc::invalid_argument, "start index {} and replica shift {} must not be negative",
                      start.start_index, start.replica_shift);
  if (start_partition.value() < 0)
    return make_error(errc::invalid_argument, "start partition {} must not be negative", start_partition);
  if (static_cast<std::int64_t>(start_partition.value()) + partitions >
      static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::max()) + 1)
    return make_error(errc::invalid_partitions, "partitions {}..{} do not fit in int32 partition ids", start_partition,
                      static_cast<std::int64_t>(start_partition.value()) + partitions - 1);

  // 64-bit arithmetic: Kafka's int arithmetic cannot overflow for any input it accepts in
  // practice; here no accepted input overflows at all.
  const auto n = static_cast<std::int64_t>(brokers.size());
  std::int64_t shift = start.replica_shift;
  replica_assignment out;
  for (std::int64_t p = start_partition.value(), end = p + partitions; p < end; ++p) {
    if (p > 0 && p % n == 0) ++shift;
    const std::int64_t first = (p + start.start_index) % n;
    std::vector<broker_id> replicas;
    replicas.reserve(static_cast<std::size_t>(replication_factor));
    replicas.push_back(brokers[static_cast<std::size_t>(first)]);
    // rf >= 2 implies n >= 2, so n - 1 is never 0 here.
    for (std::int64_t j = 0; j < replication_factor - 1; ++j)
      replicas.push_back(brokers[static_cast<std::size_t>((first + 1 + (shift + j) % (n - 1)) % n)]);
    out.emplace(partition_id{static_cast<std::int32_t>(p)}, std::move(replicas));
  }
  return out;
}

}  // namespace brook

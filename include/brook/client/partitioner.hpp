// The producer's partitioners: which partition of a topic a record goes to.
//
// Same choices as Apache Kafka's Java client, so a brook producer and a Java
// (or librdkafka/kafkajs "Java compatible") producer put a given key in the
// same partition:
//
//   keyed record:   to_positive(murmur2(key bytes)) % num_partitions
//                   (BuiltInPartitioner.partitionForKey; Utils.murmur2/toPositive)
//   null key:       sticky: one randomly chosen partition per topic, kept until
//                   the batch being filled for it is closed, then another one
//                   (KIP-480 StickyPartitionCache, Kafka 2.4+)
//
// An empty key (non-null, zero bytes) is a key: it is hashed, never sticky.
//
// murmur2 is MurmurHash2 (Austin Appleby), 32-bit, as Kafka's Utils.murmur2
// computes it with Java int arithmetic (wrapping; done here in uint32_t):
//
//   m = 0x5bd1e995, r = 24, h = 0x9747b28c ^ length
//   for each whole 4-byte block b0 b1 b2 b3 (little-endian: k = b0 | b1<<8 | b2<<16 | b3<<24):
//       k *= m; k ^= k >> r; k *= m; h *= m; h ^= k
//   tail of length % 4 bytes t0 [t1 [t2]] (switch with fall-through):
//       3: h ^= t2 << 16;  2: h ^= t1 << 8;  1: h ^= t0; h *= m
//   final mix: h ^= h >> 13; h *= m; h ^= h >> 15
//   result: the 32 bits as a signed int32 (Java int)
//
// Worked example (Kafka's UtilsTest.testMurmur2): murmur2("21") = -973932308,
// to_positive(-973932308) = 1173551340, so with 10 partitions key "21" goes to
// partition 1173551340 % 10 = 0.
//
// Not modelled: Kafka 3.3+'s adaptive switching (KIP-794) that leaves a sticky
// partition after batch.size bytes and weights the next pick by queue sizes;
// here the sticky partition moves when the host calls on_new_batch, as
// KafkaProducer did with Partitioner.onNewBatch from 2.4 to 3.2. Partitions
// without a leader are not skipped: the partitioner only knows num_partitions.
//
// Thread-safety: murmur2, to_positive and partition_for_key are pure. Every
// partitioner's partition() and on_new_batch() may be called from many threads
// at once (see each class).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include <brook/core/assert.hpp>
#include <brook/core/types.hpp>
#include <brook/format/bytes.hpp>

namespace brook {

/// Kafka's Utils.murmur2 of `data` (algorithm in the header comment). Pure; thread-safe.
constexpr std::int32_t murmur2(std::span<const std::byte> data) noexcept {
  constexpr std::uint32_t seed = 0x9747b28c;
  constexpr std::uint32_t m = 0x5bd1e995;
  constexpr int r = 24;

  const std::size_t length = data.size();
  // Java's length is an int; a key can't reach 2 GiB in Kafka (max.request.size), so the
  // truncation to 32 bits below never changes the value in practice.
  std::uint32_t h = seed ^ static_cast<std::uint32_t>(length);

  const std::size_t length4 = length / 4;
  for (std::size_t i = 0; i < length4; ++i) {
    const std::size_t i4 = i * 4;
    std::uint32_t k =
        std::to_integer<std::uint32_t>(data[i4 + 0]) | (std::to_integer<std::uint32_t>(data[i4 + 1]) << 8) |
        (std::to_integer<std::uint32_t>(data[i4 + 2]) << 16) | (std::to_integer<std::uint32_t>(data[i4 + 3]) << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }

  const std::size_t tail = length & ~std::size_t{3};
  switch (length % 4) {
    case 3: h ^= std::to_integer<std::uint32_t>(data[tail + 2]) << 16; [[fallthrough]];
    case 2: h ^= std::to_integer<std::uint32_t>(data[tail + 1]) << 8; [[fallthrough]];
    case 1:
      h ^= std::to_integer<std::uint32_t>(data[tail]);
      h *= m;
      break;
    default: break;
  }

  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<std::int32_t>(h);  // two's complement, like Java's int
}

/// Kafka's Utils.toPositive: clears the sign bit (not the absolute value). Pure; thread-safe.
constexpr std::int32_t to_positive(std::int32_t x) noexcept { return x & 0x7fffffff; }

/// The partition Kafka's producer picks for a keyed record:
/// to_positive(murmur2(key)) % num_partitions (BuiltInPartitioner.partitionForKey).
/// REQUIRES: !key.is_null(), num_partitions > 0. Pure; thread-safe.
inline partition_id partition_for_key(nullable_bytes key, std::int32_t num_partitions) {
  BROOK_ASSERT(!key.is_null(), "partition_for_key: the key is null (null keys are not hashed)");
  BROOK_ASSERT(num_partitions > 0, "partition_for_key: num_partitions is {}, must be > 0", num_partitions);
  return partition_id(to_positive(murmur2(key.span())) % num_partitions);
}

/// Chooses a partition for each record; the host may implement its own.
/// The producer calls partition() for each record that has no explicit partition, twice
/// when the record would start a new batch on the first answer's partition (none open there,
/// or the open one full: Kafka's abortOnNewBatch), and on_new_batch() in between, when the
/// batch it was filling for (topic, previous) was closed (full or sent), which is when sticky
/// partitioners move on.
///
/// Thread-safety: implementations must allow partition() and on_new_batch() to be called
/// from many threads at once; brook's own do.
class partitioner {
 public:
  virtual ~partitioner() = default;

  /// The partition for a record of `topic` with `key` and `value` (either may be null);
  /// returns a value in [0, num_partitions). The views are only valid during the call.
  /// REQUIRES: num_partitions > 0 (the topic's current partition count).
  virtual partition_id partition(std::string_view topic, nullable_bytes key, nullable_bytes value,
                                 std::int32_t num_partitions) = 0;

  /// A batch for `topic` on partition `previous` was closed, so sticky partitioners can
  /// switch. Default: nothing.
  virtual void on_new_batch(std::string_view /*topic*/, std::int32_t /*num_partitions*/, partition_id /*previous*/) {}

  /// True when partition() and on_new_batch() never block for long and never call a
  /// producer: the producer then calls them while holding its own lock, which saves it
  /// releasing and retaking that lock for every record. Default false (a host's partitioner
  /// may be slow); brook's own return true.
  virtual bool runs_under_producer_lock() const noexcept { return false; }
};

namespace detail {

/// Per-topic state that is created on first use and never removed (as Kafka's per-topic
/// maps). A reference returned by get() stays valid for the table's lifetime: unordered_map
/// never moves its nodes. State must be default-constructible; it need not be movable.
///
/// Each thread remembers its last lookup, (table, topic), among the tables of one State type,
/// so a producer thread sending to one topic through one partitioner finds its state without
/// touching the lock's shared cache line (a reader lock taken per record by several threads
/// made them contend for that line). A thread that alternates between topics or tables takes
/// the reader lock as before. A table's id is unique among the tables of its State type for
/// the process's lifetime, so a thread's memory of a destroyed table never matches a new one.
///
/// Thread-safety: get() is thread-safe (a thread's repeated lookup of one topic takes no
/// lock, other lookups share a reader lock, the first use of a topic takes the writer lock);
/// the State itself synchronises its own members.
template <typename State>
class per_topic {
 public:
  per_topic() : id_(next_id()) {}

  State& get(std::string_view topic) {
    last_lookup& last = last_lookup_of_thread();
    if (last.table == id_ && *last.key == topic) return *last.state;
    auto* found = find_or_add(topic);
    last = {id_, &found->first, &found->second};
    return found->second;
  }

 private:
  using entry = std::pair<const std::string, State>;
  struct last_lookup {
    std::uint64_t table = 0;  // 0: none (ids start at 1)
    const std::string* key = nullptr;
    State* state = nullptr;
  };
  static last_lookup& last_lookup_of_thread() {
    thread_local last_lookup last;  // one per thread and State type; matched by table id
    return last;
  }
  static std::uint64_t next_id() {
    static std::atomic<std::uint64_t> ids{0};
    return ids.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  entry* find_or_add(std::string_view topic) {
    {
      std::shared_lock lock(mu_);
      if (auto it = map_.find(topic); it != map_.end()) return &*it;
    }
    std::unique_lock lock(mu_);
    return &*map_.try_emplace(std::string(topic)).first;
  }

  const std::uint64_t id_;
  struct string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::shared_mutex mu_;
  std::unordered_map<std::string, State, string_hash, std::equal_to<>> map_;
};

/// A seeded random source shared by a partitioner's topics.
/// draw(n) = to_positive(next 32 bits) % n, as Kafka's toPositive(ThreadLocalRandom.nextInt()) % n.
///
/// Thread-safety: draw() is thread-safe (a mutex; it runs only when a sticky partition is
/// first chosen or switched, never per keyed record).
class partition_random {
 public:
  explicit partition_random(std::uint32_t seed) : rng_(seed) {}

  /// REQUIRES: n > 0.
  std::int32_t draw(std::int32_t n) {
    std::uint32_t bits;
    {
      std::lock_guard lock(mu_);
      bits = static_cast<std::uint32_t>(rng_());
    }
    return to_positive(static_cast<std::int32_t>(bits)) % n;
  }

 private:
  std::mutex mu_;
  std::mt19937 rng_;
};

/// One random seed from the OS, for partitioners constructed without one.
inline std::uint32_t random_seed() {
  std::random_device rd;
  return rd();
}

/// The sticky partition per topic (Kafka's StickyPartitionCache, KIP-480):
///   current(topic): the topic's sticky partition; picks one at random on first use.
///   next(topic, previous): if the sticky partition is unset or equals `previous`, move to
///     a random partition different from it (the same one when num_partitions == 1);
///     otherwise (another thread already moved on, or the closed batch was a keyed record's
///     on another partition) keep it. Returns the sticky partition after the call.
/// A sticky partition >= num_partitions (the caller passed a smaller count than before;
/// Kafka topics only grow) is treated as unset.
///
/// Thread-safety: thread-safe. Each topic's partition is one atomic replaced by
/// compare-and-swap, like Kafka's ConcurrentMap.replace(topic, prev, new): when several
/// threads report the same closed batch, exactly one switch happens.
class sticky_partition_cache {
 public:
  explicit sticky_partition_cache(std::uint32_t seed) : random_(seed) {}

  partition_id current(std::string_view topic, std::int32_t num_partitions) {
    BROOK_ASSERT(num_partitions > 0, "partitioner: num_partitions is {} for topic '{}', must be > 0", num_partitions,
                 topic);
    auto& slot = topics_.get(topic);
    const std::int32_t p = slot.load(std::memory_order_acquire);
    if (p >= 0 && p < num_partitions) return partition_id(p);
    return partition_id(switch_from(slot, p, num_partitions));
  }

  partition_id next(std::string_view topic, std::int32_t num_partitions, partition_id previous) {
    BROOK_ASSERT(num_partitions > 0, "partitioner: num_partitions is {} for topic '{}', must be > 0", num_partitions,
                 topic);
    auto& slot = topics_.get(topic);
    const std::int32_t p = slot.load(std::memory_order_acquire);
    if (p >= 0 && p < num_partitions && p != previous.value()) return partition_id(p);
    return partition_id(switch_from(slot, p, num_partitions));
  }

 private:
  static constexpr std::int32_t unset = -1;
  // Tries to replace `old` by a random partition other than `old`; returns what the slot
  // holds afterwards (ours, or the one a racing thread installed).
  std::int32_t switch_from(std::atomic<std::int32_t>& slot, std::int32_t old, std::int32_t num_partitions) {
    std::int32_t chosen;
    if (old < 0 || old >= num_partitions) {
      chosen = random_.draw(num_partitions);
    } else if (num_partitions == 1) {
      chosen = 0;
    } else {
      // Uniform over the other num_partitions - 1 partitions (Kafka redraws until it differs;
      // same distribution, bounded time).
      chosen = random_.draw(num_partitions - 1);
      if (chosen >= old) ++chosen;
    }
    std::int32_t expected = old;
    if (slot.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel, std::memory_order_acquire)) {
      return chosen;
    }
    return expected;  // another thread switched first: keep its choice (Kafka's replace() fails alike)
  }

  struct slot_type : std::atomic<std::int32_t> {
    slot_type() : std::atomic<std::int32_t>(unset) {}
  };
  partition_random random_;
  per_topic<slot_type> topics_;
};

}  // namespace detail

/// Kafka's default partitioner: keyed records by partition_for_key (murmur2), null keys
/// sticky per topic until on_new_batch reports the sticky partition's batch closed
/// (DefaultPartitioner 2.4-3.2 / BuiltInPartitioner without adaptive load stats).
///
/// Thread-safety: partition() and on_new_batch() may be called from many threads at once;
/// keyed records touch no shared state, null keys read one atomic per topic after a map
/// lookup (without a lock for a thread's repeated topic, see detail::per_topic).
class default_partitioner final : public partitioner {
 public:
  /// Seeded from std::random_device.
  default_partitioner() : default_partitioner(detail::random_seed()) {}
  /// Deterministic choice of sticky partitions (tests).
  explicit default_partitioner(std::uint32_t seed) : sticky_(seed) {}

  partition_id partition(std::string_view topic, nullable_bytes key, nullable_bytes /*value*/,
                         std::int32_t num_partitions) override {
    if (!key.is_null()) return partition_for_key(key, num_partitions);
    return sticky_.current(topic, num_partitions);
  }

  void on_new_batch(std::string_view topic, std::int32_t num_partitions, partition_id previous) override {
    (void)sticky_.next(topic, num_partitions, previous);
  }

  bool runs_under_producer_lock() const noexcept override { return true; }

 private:
  detail::sticky_partition_cache sticky_;
};

/// Kafka's UniformStickyPartitioner (KIP-480): ignores keys, every record goes to the
/// topic's sticky partition, which moves when on_new_batch reports its batch closed.
/// Records with the same key may land in different partitions.
///
/// Thread-safety: as default_partitioner's null-key path.
class uniform_sticky_partitioner final : public partitioner {
 public:
  /// Seeded from std::random_device.
  uniform_sticky_partitioner() : uniform_sticky_partitioner(detail::random_seed()) {}
  /// Deterministic choice of sticky partitions (tests).
  explicit uniform_sticky_partitioner(std::uint32_t seed) : sticky_(seed) {}

  partition_id partition(std::string_view topic, nullable_bytes /*key*/, nullable_bytes /*value*/,
                         std::int32_t num_partitions) override {
    return sticky_.current(topic, num_partitions);
  }

  void on_new_batch(std::string_view topic, std::int32_t num_partitions, partition_id previous) override {
    (void)sticky_.next(topic, num_partitions, previous);
  }

  bool runs_under_producer_lock() const noexcept override { return true; }

 private:
  detail::sticky_partition_cache sticky_;
};

/// Kafka's RoundRobinPartitioner: a counter per topic starting at 0; every record, keyed or
/// not, goes to to_positive(counter++) % num_partitions. The counter is per topic, not per
/// partition count, so after the topic grows the sequence continues from where it was.
/// on_new_batch does nothing (no aborted-append retry here, so none of Kafka's KAFKA-9965
/// skipping).
///
/// Thread-safety: partition() may be called from many threads at once; each topic's counter
/// is an atomic incremented once per call, so concurrent callers get distinct counter values
/// and over k * num_partitions calls every partition is chosen exactly k times.
class round_robin_partitioner final : public partitioner {
 public:
  partition_id partition(std::string_view topic, nullable_bytes /*key*/, nullable_bytes /*value*/,
                         std::int32_t num_partitions) override {
    BROOK_ASSERT(num_partitions > 0, "round_robin_partitioner: num_partitions is {} for topic '{}', must be > 0",
                 num_partitions, topic);
    // Java's AtomicInteger wraps to negative after 2^31 - 1; to_positive of the same 32 bits
    // gives the same partition as this unsigned counter.
    const std::uint32_t next = counters_.get(topic).fetch_add(1, std::memory_order_relaxed);
    return partition_id(to_positive(static_cast<std::int32_t>(next)) % num_partitions);
  }

  bool runs_under_producer_lock() const noexcept override { return true; }

 private:
  struct counter : std::atomic<std::uint32_t> {
    counter() : std::atomic<std::uint32_t>(0) {}
  };
  detail::per_topic<counter> counters_;
};

}  // namespace brook

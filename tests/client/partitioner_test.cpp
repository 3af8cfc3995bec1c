// Tests for brook/client/partitioner.hpp: murmur2 against Kafka's own vectors, key ->
// partition, sticky switching, round-robin order, concurrent callers.
// The cross-implementation check against kafkajs is tests/compat/kafkajs_partitioner.js.
#include <brook/client/partitioner.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "support/seeds.hpp"

namespace {

using brook::nullable_bytes;
using brook::partition_id;

std::int32_t murmur2_of(std::string_view s) { return brook::murmur2(brook::as_bytes(s)); }

std::vector<std::byte> bytes_of(std::initializer_list<int> xs) {
  std::vector<std::byte> out;
  for (int x : xs) out.push_back(static_cast<std::byte>(x));
  return out;
}

// Runs f in a child process; true when the child died of SIGABRT (BROOK_ASSERT).
template <typename F>
bool aborts(F f) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stderr);
    f();
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

// A compile-time check: murmur2 is constexpr.
constexpr std::array<std::byte, 3> abc{std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
static_assert(brook::murmur2(abc) == 479470107);

}  // namespace

TEST_CASE("murmur2 matches Kafka's UtilsTest.testMurmur2 vectors", "[client][partitioner][murmur2]") {
  // apache/kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java, testMurmur2.
  CHECK(murmur2_of("21") == -973932308);
  CHECK(murmur2_of("foobar") == -790332482);
  CHECK(murmur2_of("a-little-bit-long-string") == -985981536);
  CHECK(murmur2_of("a-little-bit-longer-string") == -1486304829);
  CHECK(murmur2_of("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == -58897971);
  const auto abc_bytes = bytes_of({'a', 'b', 'c'});
  CHECK(brook::murmur2(abc_bytes) == 479470107);
}

TEST_CASE("murmur2 on every tail length and high bytes", "[client][partitioner][murmur2]") {
  // Values from kafkajs 2.2.4's Java-compatible murmur2 (default/murmur2.js), an
  // independent implementation; covers the empty input, each tail length 1..3 and bytes
  // >= 0x80 (Java sign-extends bytes, so "& 0xff" matters there).
  CHECK(murmur2_of("") == 275646681);
  const auto b1 = bytes_of({0xff});
  const auto b2 = bytes_of({0xff, 0xfe});
  const auto b3 = bytes_of({0xff, 0xfe, 0xfd});
  const auto b4 = bytes_of({0x00, 0xff, 0x80, 0x7f});
  CHECK(brook::murmur2(b1) == -311467685);
  CHECK(brook::murmur2(b2) == 1717632651);
  CHECK(brook::murmur2(b3) == 998637092);
  CHECK(brook::murmur2(b4) == 578742699);
}

TEST_CASE("to_positive clears the sign bit", "[client][partitioner]") {
  CHECK(brook::to_positive(0) == 0);
  CHECK(brook::to_positive(5) == 5);
  CHECK(brook::to_positive(-1) == 0x7fffffff);
  CHECK(brook::to_positive(INT32_MIN) == 0);  // not an absolute value
  CHECK(brook::to_positive(-973932308) == 1173551340);
}

TEST_CASE("partition_for_key", "[client][partitioner]") {
  SECTION("Kafka's formula on the known vectors") {
    // Expected partitions also agree with kafkajs's DefaultPartitioner for these keys.
    CHECK(brook::partition_for_key("21", 10) == partition_id(0));
    CHECK(brook::partition_for_key("21", 100) == partition_id(40));
    CHECK(brook::partition_for_key("foobar", 10) == partition_id(6));
    CHECK(brook::partition_for_key("foobar", 100) == partition_id(66));
    CHECK(brook::partition_for_key("a-little-bit-long-string", 12) == partition_id(8));
    CHECK(brook::partition_for_key("a-little-bit-longer-string", 12) == partition_id(11));
    CHECK(brook::partition_for_key("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", 100) == partition_id(77));
    CHECK(brook::partition_for_key("abc", 12) == partition_id(3));
  }
  SECTION("an empty key is hashed, not treated as null") {
    const std::string empty;
    CHECK(brook::partition_for_key(empty, 100) == partition_id(81));
  }
  SECTION("always in range and equal to the formula") {
    const std::uint32_t seed = static_cast<std::uint32_t>(brook::test::property_seed(1));
    INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 1: rerun with the same base)");
    std::mt19937 rng(seed);
    for (int i = 0; i < 2000; ++i) {
      std::vector<std::byte> key(rng() % 65);
      for (auto& b : key) b = static_cast<std::byte>(rng());
      const auto n = static_cast<std::int32_t>(1 + rng() % 1000);
      const auto p = brook::partition_for_key(std::span<const std::byte>(key), n);
      REQUIRE(p.value() >= 0);
      REQUIRE(p.value() < n);
      REQUIRE(p.value() == brook::to_positive(brook::murmur2(key)) % n);
    }
  }
  SECTION("a null key or no partitions is a programmer error") {
    CHECK(aborts([] { (void)brook::partition_for_key(nullable_bytes::null(), 3); }));
    CHECK(aborts([] { (void)brook::partition_for_key("k", 0); }));
    CHECK_FALSE(aborts([] { (void)brook::partition_for_key("k", 1); }));
  }
}

TEST_CASE("default_partitioner hashes keys like partition_for_key", "[client][partitioner][default]") {
  brook::default_partitioner p(7);
  for (const char* key : {"21", "foobar", "abc", "", "order-42"}) {
    for (std::int32_t n : {1, 3, 10, 100}) {
      CHECK(p.partition("t", key, "v", n) == brook::partition_for_key(key, n));
    }
  }
  // The value plays no part.
  CHECK(p.partition("t", "k", nullable_bytes::null(), 10) == p.partition("t", "k", "other value", 10));
}

TEST_CASE("sticky partition for null keys", "[client][partitioner][sticky]") {
  const std::uint32_t seed = static_cast<std::uint32_t>(brook::test::property_seed(2));
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 2: rerun with the same base)");
  brook::default_partitioner dp(seed);
  brook::uniform_sticky_partitioner up(seed);

  auto check_sticky = [](brook::partitioner& p, nullable_bytes key) {
    const std::int32_t n = 10;
    const partition_id first = p.partition("t", key, "v", n);
    REQUIRE(first.value() >= 0);
    REQUIRE(first.value() < n);
    for (int i = 0; i < 100; ++i) REQUIRE(p.partition("t", key, "v", n) == first);

    // A closed batch on another partition (e.g. a keyed record's) does not move it.
    p.on_new_batch("t", n, partition_id((first.value() + 1) % n));
    REQUIRE(p.partition("t", key, "v", n) == first);

    // Closing the sticky partition's batch moves it, always to a different partition,
    // and over many switches every partition is visited.
    std::set<std::int32_t> seen{first.value()};
    partition_id cur = first;
    for (int i = 0; i < 500; ++i) {
      p.on_new_batch("t", n, cur);
      const partition_id next = p.partition("t", key, "v", n);
      REQUIRE(next != cur);
      REQUIRE(next.value() >= 0);
      REQUIRE(next.value() < n);
      for (int j = 0; j < 5; ++j) REQUIRE(p.partition("t", key, "v", n) == next);
      seen.insert(next.value());
      cur = next;
    }
    CHECK(seen.size() == static_cast<std::size_t>(n));

    // Reporting the same closed batch twice switches once (Kafka's replace(topic, prev, new)).
    p.on_new_batch("t", n, cur);
    const partition_id after = p.partition("t", key, "v", n);
    p.on_new_batch("t", n, cur);
    CHECK(p.partition("t", key, "v", n) == after);
  };

  SECTION("default_partitioner, null key") { check_sticky(dp, nullable_bytes::null()); }
  SECTION("uniform_sticky_partitioner ignores keys") {
    check_sticky(up, "some key");
    // Different keys, same partition.
    const auto p1 = up.partition("u", "a", "v", 50);
    for (const char* k : {"b", "c", "21", "foobar"}) CHECK(up.partition("u", k, "v", 50) == p1);
    CHECK(up.partition("u", nullable_bytes::null(), "v", 50) == p1);
  }
  SECTION("keyed records do not disturb the sticky partition") {
    const auto sticky = dp.partition("t", nullable_bytes::null(), "v", 10);
    for (int i = 0; i < 50; ++i) (void)dp.partition("t", std::to_string(i), "v", 10);
    CHECK(dp.partition("t", nullable_bytes::null(), "v", 10) == sticky);
  }
  SECTION("topics are independent") {
    const auto a = dp.partition("a", nullable_bytes::null(), "v", 1000);
    const auto b = dp.partition("b", nullable_bytes::null(), "v", 1000);
    dp.on_new_batch("b", 1000, b);
    CHECK(dp.partition("a", nullable_bytes::null(), "v", 1000) == a);
    CHECK(dp.partition("b", nullable_bytes::null(), "v", 1000) != b);
  }
  SECTION("one partition: always 0, switching keeps 0") {
    CHECK(dp.partition("one", nullable_bytes::null(), "v", 1) == partition_id(0));
    dp.on_new_batch("one", 1, partition_id(0));
    CHECK(dp.partition("one", nullable_bytes::null(), "v", 1) == partition_id(0));
  }
  SECTION("on_new_batch before any record picks a partition") {
    dp.on_new_batch("fresh", 10, partition_id(3));
    const auto p = dp.partition("fresh", nullable_bytes::null(), "v", 10);
    CHECK(p.value() >= 0);
    CHECK(p.value() < 10);
  }
  SECTION("a sticky partition beyond a smaller count is re-picked in range") {
    // Kafka topics only grow; a caller passing a smaller count still gets a valid partition.
    (void)dp.partition("shrink", nullable_bytes::null(), "v", 1000);
    for (int i = 0; i < 20; ++i) {
      const auto p = dp.partition("shrink", nullable_bytes::null(), "v", 2);
      CHECK(p.value() >= 0);
      CHECK(p.value() < 2);
    }
  }
}

TEST_CASE("sticky choices are deterministic for a seed", "[client][partitioner][sticky]") {
  auto sequence = [](std::uint32_t seed) {
    brook::uniform_sticky_partitioner p(seed);
    std::vector<std::int32_t> out;
    for (int i = 0; i < 50; ++i) {
      const auto cur = p.partition("t", nullable_bytes::null(), "v", 97);
      out.push_back(cur.value());
      p.on_new_batch("t", 97, cur);
    }
    return out;
  };
  CHECK(sequence(42) == sequence(42));
  CHECK(sequence(42) != sequence(43));
}

TEST_CASE("round_robin_partitioner", "[client][partitioner][round_robin]") {
  brook::round_robin_partitioner p;
  SECTION("starts at 0 and cycles, keyed or not") {
    std::vector<std::int32_t> got;
    const std::array<nullable_bytes, 3> keys{nullable_bytes::null(), "k", "21"};
    for (int i = 0; i < 7; ++i) got.push_back(p.partition("t", keys[i % 3], "v", 3).value());
    CHECK(got == std::vector<std::int32_t>{0, 1, 2, 0, 1, 2, 0});
  }
  SECTION("a counter per topic") {
    CHECK(p.partition("a", "k", "v", 4) == partition_id(0));
    CHECK(p.partition("a", "k", "v", 4) == partition_id(1));
    CHECK(p.partition("b", "k", "v", 4) == partition_id(0));
    CHECK(p.partition("a", "k", "v", 4) == partition_id(2));
  }
  SECTION("the counter continues when the partition count changes") {
    for (int i = 0; i < 3; ++i) (void)p.partition("g", "k", "v", 3);
    CHECK(p.partition("g", "k", "v", 5) == partition_id(3));  // counter 3 % 5
    CHECK(p.partition("g", "k", "v", 5) == partition_id(4));
    CHECK(p.partition("g", "k", "v", 5) == partition_id(0));
  }
  SECTION("on_new_batch does not skip partitions") {
    CHECK(p.partition("t", "k", "v", 3) == partition_id(0));
    p.on_new_batch("t", 3, partition_id(0));
    CHECK(p.partition("t", "k", "v", 3) == partition_id(1));
  }
}

TEST_CASE("brook's partitioners run under the producer's lock, a host's by default not", "[client][partitioner]") {
  struct host final : brook::partitioner {
    partition_id partition(std::string_view, nullable_bytes, nullable_bytes, std::int32_t) override {
      return partition_id(0);
    }
  };
  CHECK_FALSE(host{}.runs_under_producer_lock());
  CHECK(brook::default_partitioner{}.runs_under_producer_lock());
  CHECK(brook::uniform_sticky_partitioner{}.runs_under_producer_lock());
  CHECK(brook::round_robin_partitioner{}.runs_under_producer_lock());
}

TEST_CASE("per-topic state belongs to its partitioner, not to the thread's last lookup",
          "[client][partitioner][round_robin]") {
  // A thread remembers its last lookup per table (partitioner.hpp): two partitioners used in
  // turn, and a new one where a destroyed one was, each keep their own counters.
  brook::round_robin_partitioner a, b;
  CHECK(a.partition("t", "k", "v", 10) == partition_id(0));
  CHECK(b.partition("t", "k", "v", 10) == partition_id(0));
  CHECK(a.partition("t", "k", "v", 10) == partition_id(1));
  CHECK(b.partition("t", "k", "v", 10) == partition_id(1));
  CHECK(a.partition("u", "k", "v", 10) == partition_id(0));
  CHECK(a.partition("t", "k", "v", 10) == partition_id(2));
  for (int round = 0; round < 3; ++round) {  // often at the same address as the one before
    auto fresh = std::make_unique<brook::round_robin_partitioner>();
    CHECK(fresh->partition("t", "k", "v", 10) == partition_id(0));
    CHECK(fresh->partition("t", "k", "v", 10) == partition_id(1));
  }
  std::thread other([&] { CHECK(a.partition("t", "k", "v", 10) == partition_id(3)); });
  other.join();
  CHECK(a.partition("t", "k", "v", 10) == partition_id(4));  // the other thread's call counted
}

TEST_CASE("partitioners under concurrent callers", "[client][partitioner][threads]") {
  constexpr int threads = 4;
  constexpr int per_thread = 5000;
  constexpr std::int32_t n = 7;

  SECTION("round robin: every partition chosen equally often across threads") {
    brook::round_robin_partitioner p;
    // Several topics, first used concurrently (exercises the table's insert path).
    const std::array<std::string, 3> topics{"x", "y", "z"};
    std::vector<std::map<std::string, std::array<int, n>>> counts(threads);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (int i = 0; i < per_thread * 3; ++i) {
          const auto& topic = topics[i % 3];
          ++counts[t][topic][p.partition(topic, "k", "v", n).value()];
        }
      });
    }
    for (auto& th : ts) th.join();
    for (const auto& topic : topics) {
      std::array<int, n> total{};
      for (int t = 0; t < threads; ++t) {
        for (int k = 0; k < n; ++k) total[k] += counts[t][topic][k];
      }
      // threads * per_thread calls per topic = 20000 = 2857 * 7 + 1: counter values
      // 0..19999, so partition 0 gets one more.
      INFO("topic " << topic);
      CHECK(total[0] == 2858);
      for (int k = 1; k < n; ++k) CHECK(total[k] == 2857);
    }
  }

  SECTION("sticky: concurrent partition() and on_new_batch() stay consistent") {
    const std::uint32_t seed = static_cast<std::uint32_t>(brook::test::property_seed(3));
    INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 3: rerun with the same base)");
    brook::default_partitioner p(seed);
    std::atomic<bool> bad{false};
    std::atomic<int> switches_reported{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i) {
          const std::string topic = (i % 2 == 0) ? "s" : "s" + std::to_string(t);
          const auto cur = p.partition(topic, nullable_bytes::null(), "v", n);
          if (cur.value() < 0 || cur.value() >= n) bad = true;
          const auto keyed = p.partition(topic, std::to_string(i), "v", n);
          if (keyed != brook::partition_for_key(std::to_string(i), n)) bad = true;
          if (i % 10 == 0) {
            p.on_new_batch(topic, n, cur);
            ++switches_reported;
          }
        }
      });
    }
    for (auto& th : ts) th.join();
    CHECK_FALSE(bad);
    CHECK(switches_reported == threads * per_thread / 10);
    // After the storm, the state is still sticky and switchable.
    const auto s = p.partition("s", nullable_bytes::null(), "v", n);
    CHECK(p.partition("s", nullable_bytes::null(), "v", n) == s);
    p.on_new_batch("s", n, s);
    CHECK(p.partition("s", nullable_bytes::null(), "v", n) != s);
  }

  SECTION("sticky: racing reports of the same closed batch switch once") {
    for (int round = 0; round < 50; ++round) {
      brook::uniform_sticky_partitioner p(static_cast<std::uint32_t>(round));
      const auto first = p.partition("t", "k", "v", 1000);
      std::atomic<bool> go{false};
      std::vector<std::thread> ts;
      std::array<partition_id, threads> seen{};
      for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
          while (!go) std::this_thread::yield();
          p.on_new_batch("t", 1000, first);
          seen[t] = p.partition("t", "k", "v", 1000);
        });
      }
      go = true;
      for (auto& th : ts) th.join();
      // Exactly one switch: everyone sees the same new partition.
      for (int t = 0; t < threads; ++t) {
        CHECK(seen[t] != first);
        CHECK(seen[t] == seen[0]);
      }
    }
  }
}

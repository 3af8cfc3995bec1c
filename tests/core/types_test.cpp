// The vocabulary types: strong integers (arithmetic, ordering, hashing, fmt),
// topic_partition (ordering, hashing, Kafka's text form) and uuid (Kafka's text form,
// random v4 ids that are never reserved).
#include <cstdint>
#include <random>
#include <set>
#include <type_traits>
#include <unordered_set>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/core/types.hpp>

using namespace brook;

TEST_CASE("strong integers add counts, subtract to counts and never mix", "[core][types]") {
  offset o(5);
  CHECK((o + 3) == offset(8));
  CHECK((o - 2) == offset(3));
  CHECK((offset(9) - o) == 4);
  static_assert(std::is_same_v<decltype(offset(9) - o), std::int64_t>);
  ++o;
  o += 10;
  CHECK(o.value() == 16);
  CHECK(offset(1) < offset(2));
  static_assert(!std::is_convertible_v<offset, file_pos>);
  static_assert(!std::is_convertible_v<std::int64_t, offset>);
  static_assert(!std::is_convertible_v<partition_id, broker_id>);
  static_assert(!std::is_convertible_v<leader_epoch, generation_id>);
  CHECK(fmt::format("{}/{:>4}", broker_id(3), partition_id(7)) == "3/   7");
  std::unordered_set<generation_id> gens{generation_id(1), generation_id(1), generation_id(2)};
  CHECK(gens.size() == 2);
}

TEST_CASE("topic_partition orders by topic then partition, hashes and prints as Kafka", "[core][types]") {
  const topic_partition a{"a", partition_id(2)}, b{"a", partition_id(10)}, c{"b", partition_id(0)};
  CHECK(a < b);
  CHECK(b < c);
  CHECK(a == topic_partition{"a", partition_id(2)});
  std::set<topic_partition> ordered{c, b, a};
  CHECK(*ordered.begin() == a);
  std::unordered_set<topic_partition> hashed{a, b, c, a};
  CHECK(hashed.size() == 3);
  CHECK(fmt::format("{}", b) == "a-10");  // TopicPartition.toString
}

TEST_CASE("the text form of a uuid is Kafka's base64", "[core][types][uuid]") {
  CHECK(uuid{}.to_string() == "AAAAAAAAAAAAAAAAAAAAAA");
  CHECK(uuid::from_parts(0, 1).to_string() == "AAAAAAAAAAAAAAAAAAAAAQ");
  // Kafka's UuidTest: new Uuid(0x..., 0x...) toString examples are base64url of the 16 bytes.
  CHECK(uuid::from_parts(0xfb7b4ab2a8f94ea8ULL, 0x8c4b8e4f0b7a6f21ULL).to_string().size() == 22);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    auto u = uuid::random(rng);
    CHECK_FALSE(u.is_reserved());
    CHECK(u.to_string()[0] != '-');
    CHECK((u.bytes[6] >> 4) == 4);
  }
  std::mt19937_64 a(42), b(42);
  CHECK(uuid::random(a) == uuid::random(b));  // deterministic for a seeded engine
}

TEST_CASE("a uuid is read back from Kafka's text form", "[core][types][uuid]") {
  // UuidTest's "UXyU9i5ARn6W00ON2taeWA"; the parts are what Python's base64 module decodes.
  const uuid kafka = uuid::from_parts(0x517c94f62e40467eULL, 0x96d3438ddad69e58ULL);
  CHECK(kafka.to_string() == "UXyU9i5ARn6W00ON2taeWA");
  CHECK(uuid::from_string("UXyU9i5ARn6W00ON2taeWA") == kafka);
  CHECK(uuid::from_string("UXyU9i5ARn6W00ON2taeWA==") == kafka);  // Kafka's decoder takes the padding
  CHECK(uuid::from_string("AAAAAAAAAAAAAAAAAAAAAA") == uuid{});
  CHECK(uuid::from_string("AAAAAAAAAAAAAAAAAAAAAQ") == uuid::from_parts(0, 1));
  CHECK(uuid::from_string("_____________________w") == uuid::from_parts(~0ULL, ~0ULL));
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1000; ++i) {
    const uuid u = uuid::from_parts(rng(), rng());
    CHECK(uuid::from_string(u.to_string()) == u);
  }
  for (const char* bad :
       {"", "AAAA", "UXyU9i5ARn6W00ON2taeW", "UXyU9i5ARn6W00ON2taeWAA",
        "UXyU9i5ARn6W00ON2taeWA=", "UXyU9i5ARn6W00ON2tae+A", "UXyU9i5ARn6W00ON2tae/A", "UXyU9i5ARn6W00ON2tae A",
        "UXyU9i5ARn6W00ON2taeWB", "_____________________x", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}) {
    INFO(bad);
    CHECK_FALSE(uuid::from_string(bad).has_value());  // wrong length, alphabet, padding, or spare bits set
  }
}

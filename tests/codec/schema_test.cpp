// The declarative field tables: one table, every version, classic and flexible. A test
// message shaped like Kafka's FetchRequest (nested arrays of structs, fields added and
// removed across versions, nullable versions, tagged fields, ignorable fields) is checked
// against hand-assembled bytes at a classic and a flexible version, round-tripped at every
// version, and fed hostile input.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/codec/schema.hpp>

#include "support/checks.hpp"
#include "support/format_helpers.hpp"
#include "support/seeds.hpp"

using namespace brook;
using brook::test::cspan;
using brook::test::from_hex;
using brook::test::to_hex;

namespace {

struct fetch_partition {
  partition_id index{0};
  offset fetch_offset{0};
  std::int32_t current_leader_epoch = -1;  // v2+, ignorable
  std::optional<std::string> note{};       // nullable from v1, default null
  friend bool operator==(const fetch_partition&, const fetch_partition&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using p = fetch_partition;
    return structure<p>(field("Partition", &p::index), field("FetchOffset", &p::fetch_offset),
                        field("CurrentLeaderEpoch", &p::current_leader_epoch).in(since(2)).ignorable(),
                        field("Note", &p::note).nullable_in(since(1)));
  }
};

struct fetch_topic {
  std::string name{};  // v0-2
  uuid topic_id{};     // v3+
  std::vector<fetch_partition> partitions{};
  friend bool operator==(const fetch_topic&, const fetch_topic&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using t = fetch_topic;
    return structure<t>(field("Topic", &t::name).in(between(0, 2)), field("TopicId", &t::topic_id).in(since(3)),
                        field("Partitions", &t::partitions));
  }
};

struct test_fetch {
  broker_id replica_id{-1};
  std::vector<fetch_topic> topics{};
  std::optional<std::string> rack{};        // v2+, nullable, ignorable
  std::optional<std::string> cluster_id{};  // tag 0, v2+
  std::int64_t replica_epoch = -1;          // tag 1, v3+
  friend bool operator==(const test_fetch&, const test_fetch&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using f = test_fetch;
    return message<f>({.name = "TestFetch", .valid = between(0, 3), .flexible = since(2), .api_key = 1},
                      field("ReplicaId", &f::replica_id), field("Topics", &f::topics),
                      field("RackId", &f::rack).in(since(2)).ignorable(),
                      field("ClusterId", &f::cluster_id).tagged(0, since(2)),
                      field("ReplicaEpoch", &f::replica_epoch).tagged(1, since(3)));
  }
};

std::string hex_of(const test_fetch& m, std::int16_t v) {
  auto b = codec::encode(m, v);
  REQUIRE(b.has_value());
  return to_hex(*b);
}

test_fetch sample() {
  test_fetch m;
  m.replica_id = broker_id(-1);
  m.topics.push_back({"t", uuid{}, {{partition_id(3), offset(5), -1, std::nullopt}}});
  return m;
}

}  // namespace

// clang-format off
TEST_CASE("one table writes the classic and the flexible layout", "[codec][schema]") {
  test_fetch m = sample();
  SECTION("v0: int32 counts, int16 string lengths, no tags") {
    m.topics[0].partitions[0].note = "";  // not nullable in v0
    CHECK(hex_of(m, 0) ==
          "ffffffff"                          // ReplicaId
          "00000001" "0001" "74"              // Topics [1], Topic "t"
          "00000001" "00000003" "0000000000000005" "0000");  // Partitions [1]: 3, 5, Note ""
  }
  SECTION("v3: compact counts and strings, uuid instead of the name, tagged sections") {
    m.topics[0].name.clear();  // v0-2 only
    m.topics[0].topic_id = uuid::from_parts(0, 2);
    m.replica_epoch = 7;
    m.rack = "r";
    CHECK(hex_of(m, 3) ==
          "ffffffff"
          "02" "00000000000000000000000000000002"   // Topics [1], TopicId
          "02" "00000003" "0000000000000005" "ffffffff" "00" "00"  // Partitions [1]: ..., epoch -1, Note null, no tags
          "00"                                       // topic's tagged fields
          "02" "72"                                  // RackId "r"
          "01" "01" "08" "0000000000000007");        // tags: ReplicaEpoch (ClusterId is default: not written)
  }
}
// clang-format on

TEST_CASE("every version round-trips what it carries", "[codec][schema]") {
  const auto seed = brook::test::property_seed(41);
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  auto maybe_string = [&]() -> std::optional<std::string> {
    if (rng() % 3 == 0) return std::nullopt;
    return std::string(rng() % 5, static_cast<char>('a' + rng() % 26));
  };
  for (int i = 0; i < 500; ++i) {
    test_fetch m;
    m.replica_id = broker_id(static_cast<std::int32_t>(rng()));
    for (auto n = rng() % 3; n > 0; --n) {
      fetch_topic t;
      t.name = std::string(rng() % 6, 'x');
      t.topic_id = uuid::from_parts(rng(), rng());
      for (auto k = rng() % 3; k > 0; --k)
        t.partitions.push_back({partition_id(static_cast<std::int32_t>(rng())),
                                offset(static_cast<std::int64_t>(rng())), static_cast<std::int32_t>(rng()),
                                maybe_string()});
      m.topics.push_back(t);
    }
    m.rack = maybe_string();
    m.cluster_id = maybe_string();
    m.replica_epoch = rng() % 2 ? -1 : static_cast<std::int64_t>(rng() >> 1);
    for (std::int16_t v = 0; v <= 3; ++v) {
      INFO("version " << v);
      // What version v carries: the fields it lacks back at their defaults.
      test_fetch expect = m;
      for (auto& t : expect.topics) {
        if (v > 2) t.name.clear();
        if (v < 3) t.topic_id = uuid{};
        for (auto& p : t.partitions) {
          if (v < 2) p.current_leader_epoch = -1;
          if (v < 1 && !p.note) p.note = "";  // not nullable in v0
        }
      }
      if (v < 2) expect.rack.reset();
      if (v < 2) expect.cluster_id.reset();
      if (v < 3) expect.replica_epoch = -1;
      auto b = codec::encode(expect, v);
      REQUIRE(b.has_value());
      auto back = codec::decode<test_fetch>(cspan(*b), v);
      REQUIRE(back.has_value());
      CHECK(*back == expect);
      for (std::size_t cut = 0; cut < b->size(); ++cut)
        CHECK_FALSE(codec::decode<test_fetch>(std::span(b->data(), cut), v).has_value());
    }
  }
}

TEST_CASE("writing what a version cannot carry is an error, as in Kafka's generated code", "[codec][schema]") {
  test_fetch m = sample();
  SECTION("a non-ignorable field set outside its versions: unsupported_version naming the path") {
    auto b = codec::encode(m, 3);  // Topic "t" exists in v0-2 only
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error() == errc::unsupported_version);
    CHECK(b.error().message().find("'Topics.Topic'") != std::string::npos);
    m.topics[0].name.clear();
    m.replica_epoch = 4;  // tagged from v3
    auto c = codec::encode(m, 2);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().message().find("'ReplicaEpoch'") != std::string::npos);
  }
  SECTION("an ignorable field outside its versions is dropped") {
    m.rack = "r";
    m.topics[0].partitions[0].current_leader_epoch = 9;
    auto b = codec::encode(m, 1);
    REQUIRE(b.has_value());
    auto back = codec::decode<test_fetch>(cspan(*b), 1);
    REQUIRE(back.has_value());
    CHECK_FALSE(back->rack.has_value());
    CHECK(back->topics[0].partitions[0].current_leader_epoch == -1);
  }
  SECTION("null where the version does not allow it: invalid_request on write, corrupt_message on read") {
    auto b = codec::encode(m, 0);  // Note is nullable from v1 only
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error() == errc::invalid_request);
    CHECK(b.error().message().find("'Topics.Partitions.Note'") != std::string::npos);
    const auto wire = from_hex("ffffffff 00000001 0001 74 00000001 00000003 0000000000000005 ffff");
    auto d = codec::decode<test_fetch>(cspan(wire), 0);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error() == errc::corrupt_message);
    CHECK(d.error().message().find("TestFetch v0: field 'Topics.Partitions.Note' at byte 27") != std::string::npos);
  }
  SECTION("a version the message does not have") {
    auto b = codec::encode(m, 4);
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error() == errc::unsupported_version);
    auto d = codec::decode<test_fetch>(cspan(from_hex("ffffffff")), -1);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error() == errc::unsupported_version);
  }
  SECTION("a string over 32767 bytes") {
    m.topics[0].name = std::string(40000, 'x');
    auto b = codec::encode(m, 0);
    REQUIRE_FALSE(b.has_value());
    CHECK(b.error() == errc::invalid_request);
  }
}

TEST_CASE("reading: unknown tags skipped, known tags bounded, hostile counts refused", "[codec][schema]") {
  const std::string body =
      "ffffffff"
      "01"
      "00";  // ReplicaId -1, no topics, RackId null
  SECTION("an unknown tag is skipped, a known one read") {
    auto d = codec::decode<test_fetch>(cspan(from_hex(body + "02"
                                                             "05"
                                                             "02"
                                                             "abcd"
                                                             "00"
                                                             "02"
                                                             "02"
                                                             "78")),
                                       2);
    REQUIRE(d.has_value());
    CHECK(d->cluster_id == std::optional<std::string>("x"));
  }
  SECTION("a tag of a later version is unknown at this one") {
    auto d = codec::decode<test_fetch>(cspan(from_hex(body + "01"
                                                             "01"
                                                             "08"
                                                             "0000000000000007")),
                                       2);
    REQUIRE(d.has_value());
    CHECK(d->replica_epoch == -1);
  }
  SECTION("a topic count that cannot fit is refused before allocating") {
    auto d = codec::decode<test_fetch>(cspan(from_hex("ffffffff 7fffffff")), 0);
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().message().find("cannot fit") != std::string::npos);
    // v3's smallest topic is 16 (uuid) + 1 (partitions) + 1 (tags) bytes
    auto e = codec::decode<test_fetch>(cspan(from_hex("ffffffff 03" + std::string(34, '0'))), 3);
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message().find("2 elements of at least 18 bytes") != std::string::npos);
  }
  SECTION("random bytes at every version never crash") {
    const auto seed = brook::test::property_seed(42);
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 20000; ++i) {
      std::vector<std::byte> b(rng() % 64);
      for (auto& x : b) x = static_cast<std::byte>(rng() % 4 == 0 ? 0 : rng());
      (void)codec::decode<test_fetch>(cspan(b), static_cast<std::int16_t>(rng() % 4));
    }
  }
}

namespace {

enum class level : std::int8_t { low = 0, high = 1 };

/// A field type that encodes itself (codec::self_encoding): a count of bytes written as an
/// int16, refused on read when odd. Nullability is passed in by the table.
struct even_count {
  std::int16_t n = 0;
  friend bool operator==(const even_count&, const even_count&) = default;
  static std::size_t kafka_min_size(const codec::context&) { return 2; }
  static result<void> kafka_write(codec::message_writer& w, const even_count& v, const codec::context&,
                                  const codec::field_ref&, bool) {
    w.int16(v.n);
    return ok();
  }
  static result<void> kafka_read(codec::message_reader& r, even_count& v, const codec::context&,
                                 const codec::field_ref& f, bool) {
    const std::size_t at = r.position();
    BROOK_TRY(r.int16(f, v.n));
    if (v.n % 2 != 0) return r.fail_at(at, f, "odd count {}", v.n);
    return ok();
  }
};

struct with_custom_types {
  level l = level::low;
  std::vector<even_count> counts{};
  friend bool operator==(const with_custom_types&, const with_custom_types&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using m = with_custom_types;
    return message<m>({.name = "Custom", .valid = between(0, 1), .flexible = since(1)}, field("Level", &m::l),
                      field("Counts", &m::counts));
  }
};

}  // namespace

TEST_CASE("enums and self-encoding types take part in a table like any field", "[codec][schema]") {
  const with_custom_types m{level::high, {{2}, {4}}};
  auto v0 = codec::encode(m, 0);
  REQUIRE_OK(v0);
  CHECK(to_hex(*v0) ==
        "01"
        "00000002"
        "0002"
        "0004");
  auto v1 = codec::encode(m, 1);
  REQUIRE_OK(v1);
  CHECK(to_hex(*v1) ==
        "01"
        "03"
        "0002"
        "0004"
        "00");
  for (std::int16_t v : {std::int16_t{0}, std::int16_t{1}}) {
    auto b = codec::encode(m, v);
    REQUIRE_OK(b);
    auto back = codec::decode<with_custom_types>(cspan(*b), v);
    REQUIRE_OK(back);
    CHECK(*back == m);
  }
  // The type's own check runs on read and names the field; its minimum size bounds the count.
  auto odd = codec::decode<with_custom_types>(cspan(from_hex("01 00000001 0003")), 0);
  REQUIRE_FALSE(odd);
  CHECK(odd.error().message().find("'Counts'") != std::string::npos);
  CHECK(odd.error().message().find("odd count 3") != std::string::npos);
  auto many = codec::decode<with_custom_types>(cspan(from_hex("01 00000003 0002 0002")), 0);
  REQUIRE_FALSE(many);
  CHECK(many.error().message().find("3 elements of at least 2 bytes") != std::string::npos);
  // An enum value outside its names is read as is: whoever acts on it checks it.
  auto other = codec::decode<with_custom_types>(cspan(from_hex("07 00000000")), 0);
  REQUIRE_OK(other);
  CHECK(static_cast<int>(other->l) == 7);
}

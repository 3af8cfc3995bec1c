// __consumer_offsets keys and values: golden bytes written out by hand from
// Kafka's message schemas (OffsetCommitKey/Value.json, GroupMetadataKey/Value.json),
// seeded round trips at every version, every truncation rejected, random
// garbage and mutations never crash, and the partition of a group computed
// with Java's String.hashCode (values checked against an independent UTF-16
// implementation, Python's str.encode("utf-16-be")).
#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include <brook/group/offsets_topic_records.hpp>

#include "support/format_helpers.hpp"

using namespace brook;
using brook::test::bytes;
using brook::test::cspan;
using brook::test::from_hex;
using brook::test::to_hex;

namespace {

std::string random_string(std::mt19937& rng, std::size_t max_len) {
  static const std::string alphabet = "abcXYZ019-_.";
  static const std::vector<std::string> wide = {"é", "я", "鍵", "😀"};
  std::string s;
  const auto n = std::uniform_int_distribution<std::size_t>(0, max_len)(rng);
  for (std::size_t i = 0; i < n; ++i) {
    if (rng() % 5 == 0)
      s += wide[rng() % wide.size()];
    else
      s += alphabet[rng() % alphabet.size()];
  }
  return s;
}

std::optional<std::string> random_opt_string(std::mt19937& rng, std::size_t max_len) {
  if (rng() % 4 == 0) return std::nullopt;
  return random_string(rng, max_len);
}

bytes random_bytes(std::mt19937& rng, std::size_t max_len) {
  bytes b(std::uniform_int_distribution<std::size_t>(0, max_len)(rng));
  for (auto& x : b) x = static_cast<std::byte>(rng());
  return b;
}

std::int64_t random_i64(std::mt19937& rng) {
  switch (rng() % 4) {
    case 0: return -1;
    case 1: return static_cast<std::int64_t>(rng() % 1000);
    case 2: return std::numeric_limits<std::int64_t>::max();
    default: return static_cast<std::int64_t>((static_cast<std::uint64_t>(rng()) << 32) | rng());
  }
}
std::int32_t random_i32(std::mt19937& rng) { return rng() % 3 == 0 ? -1 : static_cast<std::int32_t>(rng()); }

offset_commit_value random_offset_value(std::mt19937& rng) {
  offset_commit_value v;
  v.offset = random_i64(rng);
  v.leader_epoch = random_i32(rng);
  v.metadata = random_string(rng, 40);
  v.commit_timestamp = random_i64(rng);
  if (rng() % 3 == 0) {
    v.expire_timestamp = random_i64(rng);
    if (v.expire_timestamp == -1) v.expire_timestamp = 5;  // -1 is "none"
  }
  return v;
}

group_metadata_value random_group_value(std::mt19937& rng) {
  group_metadata_value g;
  g.protocol_type = rng() % 4 == 0 ? "" : "consumer";
  g.generation = random_i32(rng);
  g.protocol = random_opt_string(rng, 20);
  g.leader = random_opt_string(rng, 20);
  g.current_state_timestamp = random_i64(rng);
  const auto members = rng() % 5;
  for (std::uint32_t i = 0; i < members; ++i) {
    group_member_metadata m;
    m.member_id = random_string(rng, 30);
    m.group_instance_id = random_opt_string(rng, 10);
    m.client_id = random_string(rng, 10);
    m.client_host = random_string(rng, 15);
    m.rebalance_timeout_ms = random_i32(rng);
    m.session_timeout_ms = random_i32(rng);
    m.subscription = random_bytes(rng, 40);
    m.assignment = random_bytes(rng, 40);
    g.members.push_back(std::move(m));
  }
  return g;
}

/// What decoding the encoding at `version` must give: the fields the version lacks at their defaults.
offset_commit_value as_seen_at(offset_commit_value v, std::int16_t version) {
  if (version < 3) v.leader_epoch = -1;
  if (version != 1) v.expire_timestamp = -1;
  return v;
}
group_metadata_value as_seen_at(group_metadata_value g, std::int16_t version) {
  if (version < 2) g.current_state_timestamp = -1;
  for (auto& m : g.members) {
    if (version < 3) m.group_instance_id.reset();
    if (version < 1) m.rebalance_timeout_ms = m.session_timeout_ms;
  }
  return g;
}

template <typename Decode>
void check_every_truncation_rejected(const bytes& full, Decode decode) {
  for (std::size_t n = 0; n < full.size(); ++n) {
    INFO("truncated to " << n << " of " << full.size() << " bytes: " << to_hex(full));
    const bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = decode(cspan(cut));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == errc::corrupt_message);
  }
}

}  // namespace

TEST_CASE("offset commit key: golden bytes", "[group][offsets_topic]") {
  // type 1 | group "g" | topic "t" | partition 3
  const bytes golden = from_hex("0001 0001 67 0001 74 00000003");
  CHECK(to_hex(encode(offset_commit_key{"g", "t", 3})) == to_hex(golden));

  auto k = decode_offsets_topic_key(cspan(golden));
  REQUIRE(k.has_value());
  REQUIRE(std::holds_alternative<offset_commit_key>(*k));
  CHECK(std::get<offset_commit_key>(*k) == offset_commit_key{"g", "t", 3});

  SECTION("record type 0 (LegacyOffsetCommitKey, Kafka 0.8.2) has the same layout") {
    const bytes legacy = from_hex("0000 0005 6772 6f75 70 0007 746f 7069 632d 31 7fffffff");  // "group", "topic-1"
    auto l = decode_offsets_topic_key(cspan(legacy));
    REQUIRE(l.has_value());
    CHECK(std::get<offset_commit_key>(*l) == offset_commit_key{"group", "topic-1", INT32_MAX});
  }
  SECTION("empty names and a non-ASCII group") {
    const offset_commit_key nk{"grüße", "", 0};
    const bytes b = from_hex("0001 0007 6772 c3bc c39f 65 0000 00000000");
    CHECK(to_hex(encode(nk)) == to_hex(b));
    CHECK(std::get<offset_commit_key>(*decode_offsets_topic_key(cspan(b))) == nk);
  }
}

TEST_CASE("group metadata key: golden bytes", "[group][offsets_topic]") {
  const bytes golden = from_hex("0002 0008 6d79 2d67 726f 7570");  // "my-group"
  CHECK(to_hex(encode(group_metadata_key{"my-group"})) == to_hex(golden));
  auto k = decode_offsets_topic_key(cspan(golden));
  REQUIRE(k.has_value());
  REQUIRE(std::holds_alternative<group_metadata_key>(*k));
  CHECK(std::get<group_metadata_key>(*k).group == "my-group");
}

TEST_CASE("offset commit value: golden bytes at every version", "[group][offsets_topic]") {
  offset_commit_value v;
  v.offset = 5;
  v.leader_epoch = 2;
  v.metadata = "m";
  v.commit_timestamp = 1000;

  SECTION("v3 is what Kafka writes without an expire timestamp") {
    const bytes golden = from_hex("0003 0000000000000005 00000002 0001 6d 00000000000003e8");
    CHECK(offset_commit_value_version_for(v) == 3);
    CHECK(to_hex(encode(v)) == to_hex(golden));
    CHECK(*decode_offset_commit_value(cspan(golden)) == v);
  }
  SECTION("v1 is what Kafka writes with an expire timestamp; it has no leader epoch") {
    v.expire_timestamp = 2000;
    const bytes golden = from_hex("0001 0000000000000005 0001 6d 00000000000003e8 00000000000007d0");
    CHECK(offset_commit_value_version_for(v) == 1);
    CHECK(to_hex(encode(v)) == to_hex(golden));
    auto d = decode_offset_commit_value(cspan(golden));
    REQUIRE(d.has_value());
    CHECK(d->leader_epoch == -1);
    CHECK(d->expire_timestamp == 2000);
    CHECK(d->metadata == "m");
  }
  SECTION("v1 with expireTimestamp -1 reads back as no expiry") {
    const bytes b = from_hex("0001 0000000000000005 0000 00000000000003e8 ffffffffffffffff");
    auto d = decode_offset_commit_value(cspan(b));
    REQUIRE(d.has_value());
    CHECK(d->expire_timestamp == -1);
    CHECK(d->metadata.empty());
  }
  SECTION("v0 and v2: offset, metadata, commit timestamp") {
    for (const char* hex :
         {"0000 0000000000000005 0001 6d 00000000000003e8", "0002 0000000000000005 0001 6d 00000000000003e8"}) {
      const bytes b = from_hex(hex);
      auto d = decode_offset_commit_value(cspan(b));
      REQUIRE(d.has_value());
      CHECK(*d == as_seen_at(v, 0));
      CHECK(to_hex(encode(v, static_cast<std::int16_t>(b[1]))) == to_hex(b));
    }
  }
  SECTION("v4 (flexible): compact metadata and a tagged-field section") {
    const bytes plain = from_hex("0004 0000000000000005 00000002 02 6d 00000000000003e8 00");
    CHECK(to_hex(encode(v, 4)) == to_hex(plain));
    CHECK(*decode_offset_commit_value(cspan(plain)) == v);
    // Two unknown tagged fields (tag 0: 2 bytes, tag 200: 1 byte) are skipped.
    const bytes tagged = from_hex("0004 0000000000000005 00000002 02 6d 00000000000003e8 02 00 02 abcd c801 01 ff");
    auto d = decode_offset_commit_value(cspan(tagged));
    REQUIRE(d.has_value());
    CHECK(*d == v);
    // Null compact metadata (length 0) in a non-nullable field.
    const bytes null_meta = from_hex("0004 0000000000000005 00000002 00 00000000000003e8 00");
    auto e = decode_offset_commit_value(cspan(null_meta));
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().message().find("metadata") != std::string::npos);
  }
}

TEST_CASE("group metadata value: golden bytes", "[group][offsets_topic]") {
  group_metadata_value g;
  g.protocol_type = "consumer";
  g.generation = 1;
  g.protocol = "range";
  g.leader = "m";
  g.current_state_timestamp = 7;
  group_member_metadata m;
  m.member_id = "m";
  m.client_id = "c";
  m.client_host = "h";
  m.rebalance_timeout_ms = 300000;
  m.session_timeout_ms = 45000;
  m.subscription = from_hex("01");
  m.assignment = from_hex("02");
  g.members.push_back(m);

  // Field by field from GroupMetadataValue.json.
  const std::string consumer = "0008 636f6e73756d6572";  // "consumer"
  const std::string range = "0005 72616e6765";           // "range"
  const std::string member_v3 = "0001 6d ffff 0001 63 0001 68 000493e0 0000afc8 00000001 01 00000001 02";

  SECTION("v3 is what Kafka writes") {
    const bytes golden =
        from_hex("0003" + consumer + "00000001" + range + "0001 6d 0000000000000007 00000001" + member_v3);
    CHECK(to_hex(encode(g)) == to_hex(golden));
    CHECK(*decode_group_metadata_value(cspan(golden)) == g);
  }
  SECTION("v3 with a static member") {
    g.members[0].group_instance_id = "i";
    const bytes golden = from_hex("0003" + consumer + "00000001" + range + "0001 6d 0000000000000007 00000001" +
                                  "0001 6d 0001 69 0001 63 0001 68 000493e0 0000afc8 00000001 01 00000001 02");
    CHECK(to_hex(encode(g)) == to_hex(golden));
    CHECK(*decode_group_metadata_value(cspan(golden)) == g);
  }
  SECTION("v0: no timestamp, no instance id, no rebalance timeout (reads back as the session timeout)") {
    const bytes golden = from_hex("0000" + consumer + "00000001" + range + "0001 6d 00000001" +
                                  "0001 6d 0001 63 0001 68 0000afc8 00000001 01 00000001 02");
    CHECK(to_hex(encode(g, 0)) == to_hex(golden));
    auto d = decode_group_metadata_value(cspan(golden));
    REQUIRE(d.has_value());
    CHECK(d->current_state_timestamp == -1);
    CHECK(d->members.at(0).rebalance_timeout_ms == 45000);
    CHECK(*d == as_seen_at(g, 0));
  }
  SECTION("v1 adds the rebalance timeout, v2 the state timestamp") {
    const bytes v1 = from_hex("0001" + consumer + "00000001" + range + "0001 6d 00000001" +
                              "0001 6d 0001 63 0001 68 000493e0 0000afc8 00000001 01 00000001 02");
    const bytes v2 = from_hex("0002" + consumer + "00000001" + range + "0001 6d 0000000000000007 00000001" +
                              "0001 6d 0001 63 0001 68 000493e0 0000afc8 00000001 01 00000001 02");
    CHECK(to_hex(encode(g, 1)) == to_hex(v1));
    CHECK(to_hex(encode(g, 2)) == to_hex(v2));
    CHECK(*decode_group_metadata_value(cspan(v1)) == as_seen_at(g, 1));
    CHECK(*decode_group_metadata_value(cspan(v2)) == as_seen_at(g, 2));
  }
  SECTION("an empty group: empty protocol type, null protocol and leader, no members") {
    group_metadata_value e;
    e.current_state_timestamp = 1700000000000;
    const bytes golden = from_hex("0003 0000 00000000 ffff ffff 0000018bcfe56800 00000000");
    CHECK(to_hex(encode(e)) == to_hex(golden));
    CHECK(*decode_group_metadata_value(cspan(golden)) == e);
  }
  SECTION("v4 (flexible): compact strings, arrays and bytes, tagged fields after each member and at the end") {
    const bytes plain = from_hex(
        "0004 09 636f6e73756d6572 00000001 06 72616e6765 02 6d 0000000000000007 02"
        "02 6d 00 02 63 02 68 000493e0 0000afc8 02 01 02 02 00"
        "00");
    CHECK(to_hex(encode(g, 4)) == to_hex(plain));
    CHECK(*decode_group_metadata_value(cspan(plain)) == g);
    const bytes tagged = from_hex(
        "0004 09 636f6e73756d6572 00000001 06 72616e6765 02 6d 0000000000000007 02"
        "02 6d 00 02 63 02 68 000493e0 0000afc8 02 01 02 02 01 07 03 aabbcc"
        "01 8001 00");  // member: tag 7 (3 bytes); top level: tag 128 (empty)
    auto d = decode_group_metadata_value(cspan(tagged));
    REQUIRE(d.has_value());
    CHECK(*d == g);
  }
}

TEST_CASE("offsets topic records: malformed input is corrupt_message naming field and byte", "[group][offsets_topic]") {
  auto err = [](auto r) {
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == errc::corrupt_message);
    return r.error().message();
  };
  SECTION("unknown key record type (e.g. a KIP-848 ConsumerGroupMetadataKey, type 3)") {
    const bytes b = from_hex("0003 0001 67");
    auto msg = err(decode_offsets_topic_key(cspan(b)));
    CHECK(msg.find("record type 3") != std::string::npos);
  }
  SECTION("unknown value versions") {
    CHECK(err(decode_offset_commit_value(cspan(from_hex("0005 0000000000000005 00000002 02 6d 00000000000003e8 00"))))
              .find("version 5") != std::string::npos);
    CHECK(err(decode_offset_commit_value(cspan(from_hex("ffff")))).find("version -1") != std::string::npos);
    CHECK(err(decode_group_metadata_value(cspan(from_hex("0005 0000")))).find("version 5") != std::string::npos);
  }
  SECTION("negative lengths other than -1, and null in non-nullable fields") {
    auto msg = err(decode_offset_commit_value(cspan(from_hex("0003 0000000000000005 00000002 fffe 00000000000003e8"))));
    CHECK(msg.find("'metadata'") != std::string::npos);
    CHECK(msg.find("byte 14") != std::string::npos);
    CHECK(msg.find("-2") != std::string::npos);
    err(decode_offset_commit_value(cspan(from_hex("0003 0000000000000005 00000002 ffff 00000000000003e8"))));
    err(decode_offsets_topic_key(cspan(from_hex("0002 ffff"))));
    // members count -1 (null array) and -2
    err(decode_group_metadata_value(cspan(from_hex("0003 0000 00000000 ffff ffff 0000000000000000 ffffffff"))));
    err(decode_group_metadata_value(cspan(from_hex("0003 0000 00000000 ffff ffff 0000000000000000 fffffffe"))));
    // a member whose subscription is null (-1) or -5
    const std::string head =
        "0003 0000 00000000 ffff ffff 0000000000000000 00000001 0000 ffff 0000 0000 00000000 00000000";
    err(decode_group_metadata_value(cspan(from_hex(head + "ffffffff 00000000"))));
    err(decode_group_metadata_value(cspan(from_hex(head + "fffffffb 00000000"))));
    CHECK(decode_group_metadata_value(cspan(from_hex(head + "00000000 00000000"))).has_value());
  }
  SECTION("a member count that cannot fit is rejected before allocating") {
    auto msg =
        err(decode_group_metadata_value(cspan(from_hex("0003 0000 00000000 ffff ffff 0000000000000000 7fffffff"))));
    CHECK(msg.find("members") != std::string::npos);
  }
  SECTION("string length past the end names the field and position") {
    auto msg = err(decode_offsets_topic_key(cspan(from_hex("0001 0001 67 0009 74 00000003"))));
    CHECK(msg.find("'topic' at byte 5") != std::string::npos);
  }
  SECTION("trailing bytes") {
    CHECK(err(decode_offsets_topic_key(cspan(from_hex("0002 0001 67 00")))).find("trailing") != std::string::npos);
    err(decode_offset_commit_value(cspan(from_hex("0003 0000000000000005 00000002 0001 6d 00000000000003e8 00"))));
  }
  SECTION("flexible: overlong varint and a tagged field running past the end") {
    err(decode_offset_commit_value(cspan(from_hex("0004 0000000000000005 00000002 ffffffffff 00000000000003e8 00"))));
    err(decode_offset_commit_value(
        cspan(from_hex("0004 0000000000000005 00000002 02 6d 00000000000003e8 01 00 05 ab"))));
    err(decode_offset_commit_value(
        cspan(from_hex("0004 0000000000000005 00000002 02 6d 00000000000003e8 ffffffff0f"))));
  }
}

TEST_CASE("offsets topic records: seeded round trips at every version", "[group][offsets_topic]") {
  const std::uint32_t seed = 0x0ff5e7;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  for (int i = 0; i < 300; ++i) {
    INFO("iteration " << i);
    offset_commit_key k{random_string(rng, 50), random_string(rng, 50), random_i32(rng)};
    auto kd = decode_offsets_topic_key(cspan(encode(k)));
    REQUIRE(kd.has_value());
    CHECK(std::get<offset_commit_key>(*kd) == k);
    group_metadata_key gk{random_string(rng, 50)};
    auto gkd = decode_offsets_topic_key(cspan(encode(gk)));
    REQUIRE(gkd.has_value());
    CHECK(std::get<group_metadata_key>(*gkd) == gk);

    const auto v = random_offset_value(rng);
    auto vd = decode_offset_commit_value(cspan(encode(v)));
    REQUIRE(vd.has_value());
    CHECK(*vd == as_seen_at(v, offset_commit_value_version_for(v)));
    for (std::int16_t ver = 0; ver <= offset_commit_value_max_version; ++ver) {
      auto d = decode_offset_commit_value(cspan(encode(v, ver)));
      REQUIRE(d.has_value());
      CHECK(*d == as_seen_at(v, ver));
    }

    const auto g = random_group_value(rng);
    for (std::int16_t ver = 0; ver <= group_metadata_value_max_version; ++ver) {
      INFO("GroupMetadataValue v" << ver);
      auto d = decode_group_metadata_value(cspan(encode(g, ver)));
      REQUIRE(d.has_value());
      CHECK(*d == as_seen_at(g, ver));
    }
  }
}

TEST_CASE("offsets topic records: every truncation is rejected", "[group][offsets_topic]") {
  std::mt19937 rng(0x7256c8);
  for (int i = 0; i < 20; ++i) {
    check_every_truncation_rejected(encode(offset_commit_key{random_string(rng, 8), random_string(rng, 8), 1}),
                                    decode_offsets_topic_key);
    check_every_truncation_rejected(encode(group_metadata_key{random_string(rng, 8)}), decode_offsets_topic_key);
    const auto v = random_offset_value(rng);
    for (std::int16_t ver = 0; ver <= offset_commit_value_max_version; ++ver)
      check_every_truncation_rejected(encode(v, ver), decode_offset_commit_value);
    auto g = random_group_value(rng);
    if (g.members.size() > 2) g.members.resize(2);
    for (std::int16_t ver = 0; ver <= group_metadata_value_max_version; ++ver)
      check_every_truncation_rejected(encode(g, ver), decode_group_metadata_value);
  }
}

TEST_CASE("offsets topic records: random garbage and mutations never crash", "[group][offsets_topic]") {
  const std::uint32_t seed = 0x6a7ba6e;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  auto check = [](const bytes& b) {
    auto k = decode_offsets_topic_key(cspan(b));
    if (!k) CHECK(k.error() == errc::corrupt_message);
    auto v = decode_offset_commit_value(cspan(b));
    if (!v) CHECK(v.error() == errc::corrupt_message);
    auto g = decode_group_metadata_value(cspan(b));
    if (!g) CHECK(g.error() == errc::corrupt_message);
  };
  std::vector<bytes> valid;
  for (int i = 0; i < 10; ++i) {
    const auto g = random_group_value(rng);
    for (std::int16_t ver = 0; ver <= 4; ++ver) valid.push_back(encode(g, ver));
    const auto v = random_offset_value(rng);
    for (std::int16_t ver = 0; ver <= 4; ++ver) valid.push_back(encode(v, ver));
  }
  for (int i = 0; i < 20000; ++i) {
    bytes b;
    if (i % 2 == 0) {
      b = random_bytes(rng, 64);
      if (b.size() >= 2 && rng() % 2) {  // a plausible version so the body gets parsed
        b[0] = std::byte{0};
        b[1] = static_cast<std::byte>(rng() % 6);
      }
    } else {
      b = valid[rng() % valid.size()];
      const auto flips = 1 + rng() % 4;
      for (std::uint32_t f = 0; f < flips && !b.empty(); ++f) b[rng() % b.size()] = static_cast<std::byte>(rng());
    }
    check(b);
  }
}

TEST_CASE("offsets topic partition: Java String.hashCode over UTF-16", "[group][offsets_topic]") {
  // The formula, written independently over explicit UTF-16 code units.
  auto java_hash_units = [](std::initializer_list<std::uint16_t> units) {
    std::int64_t h = 0;
    for (auto u : units) h = (h * 31 + u) % (std::int64_t{1} << 32);
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(h));
  };
  SECTION("known values") {
    CHECK(java_string_hash("") == 0);
    CHECK(java_string_hash("a") == 97);
    CHECK(java_string_hash("hello") == 99162322);
    CHECK(java_string_hash("hello") == java_hash_units({'h', 'e', 'l', 'l', 'o'}));
    CHECK(java_string_hash("test-group") == 627841412);
    CHECK(java_string_hash("my-consumer-group") == 1513705513);
    CHECK(java_string_hash("console-consumer-12345") == 158455506);
  }
  SECTION("non-ASCII: 2-byte UTF-8 is one unit, a non-BMP character is a surrogate pair") {
    CHECK(java_string_hash("\xc3\xa9") == 233);                                        // é U+00E9
    CHECK(java_string_hash("\xf0\x9f\x98\x80") == java_hash_units({0xD83D, 0xDE00}));  // 😀 U+1F600
    CHECK(java_string_hash("\xf0\x9f\x98\x80") == 1772899);
    CHECK(java_string_hash("gr\xc3\xbc\xc3\x9f"
                           "e-\xf0\x9f\x9a\x80-\xd0\xb3\xd1\x80\xd1\x83\xd0\xbf\xd0\xbf\xd0\xb0") ==
          -467280242);  // "grüße-🚀-группа"
  }
  SECTION("ill-formed UTF-8 hashes as U+FFFD replacements") {
    CHECK(java_string_hash("\xff") == 0xFFFD);
    CHECK(java_string_hash("a\xe2\x82") == java_hash_units({'a', 0xFFFD}));  // truncated €
    CHECK(java_string_hash("\x80z") == java_hash_units({0xFFFD, 'z'}));
  }
  SECTION("partition = Utils.abs(hash) % n, with abs(INT_MIN) = 0") {
    CHECK(java_string_hash("polygenelubricants") == INT_MIN);
    CHECK(offsets_topic_partition_for("polygenelubricants", 50) == 0);
    CHECK(offsets_topic_partition_for("polygenelubricants", 7) == 0);
    CHECK(offsets_topic_partition_for("", 50) == 0);
    CHECK(offsets_topic_partition_for("a", 50) == 47);
    CHECK(offsets_topic_partition_for("hello", 50) == 22);
    CHECK(offsets_topic_partition_for("test-group", 50) == 12);
    CHECK(offsets_topic_partition_for("my-consumer-group", offsets_topic_default_partitions) == 13);
    CHECK(offsets_topic_partition_for("\xf0\x9f\x98\x80", 50) == 49);
    // negative hash: |−467280242| % 50 = 42
    CHECK(offsets_topic_partition_for("gr\xc3\xbc\xc3\x9f"
                                      "e-\xf0\x9f\x9a\x80-\xd0\xb3\xd1\x80\xd1\x83\xd0\xbf\xd0\xbf\xd0\xb0",
                                      50) == 42);
    CHECK(offsets_topic_partition_for("anything", 1) == 0);
  }
}

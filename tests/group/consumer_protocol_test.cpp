// Consumer protocol subscription and assignment: golden bytes written out by
// hand from ConsumerProtocolSubscription.json / ConsumerProtocolAssignment.json,
// Java's ordering rules (ConsumerProtocol.java), seeded round trips at every
// version, every truncation rejected, garbage never crashes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <brook/group/consumer_protocol.hpp>

#include "support/format_helpers.hpp"

using namespace brook;
using brook::test::bytes;
using brook::test::cspan;
using brook::test::from_hex;
using brook::test::to_hex;

namespace {

topic_partition tp(std::string t, std::int32_t p) { return topic_partition{std::move(t), partition_id{p}}; }

std::string random_topic(std::mt19937& rng) {
  static const std::vector<std::string> names = {"a", "b", "orders", "payments-eu", "t\xc3\xa9st", ""};
  return names[rng() % names.size()];
}

std::vector<topic_partition> random_partitions(std::mt19937& rng) {
  std::vector<topic_partition> out;
  const auto n = rng() % 8;
  for (std::uint32_t i = 0; i < n; ++i) out.push_back(tp(random_topic(rng), static_cast<std::int32_t>(rng() % 100)));
  return out;
}

std::optional<bytes> random_user_data(std::mt19937& rng) {
  if (rng() % 3 == 0) return std::nullopt;
  bytes b(rng() % 12);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  return b;
}

consumer_protocol_subscription random_subscription(std::mt19937& rng, std::int16_t version) {
  consumer_protocol_subscription s;
  s.version = version;
  for (auto n = rng() % 5; n > 0; --n) s.topics.push_back(random_topic(rng));
  s.user_data = random_user_data(rng);
  if (version >= 1) s.owned_partitions = random_partitions(rng);
  if (version >= 2) s.generation = rng() % 3 == 0 ? -1 : static_cast<std::int32_t>(rng());
  if (version >= 3 && rng() % 2) s.rack_id = random_topic(rng);
  return s;
}

/// Flattening loses how runs were grouped only when a topic repeats non-adjacently; the
/// decoded list is the encoded list with each topic's partitions gathered at its first run
/// for assignments, and unchanged for subscriptions (runs are kept as they are).
std::vector<topic_partition> gathered_by_first_appearance(const std::vector<topic_partition>& in) {
  std::vector<topic_partition> out;
  std::vector<std::string> order;
  for (const auto& x : in)
    if (std::find(order.begin(), order.end(), x.topic) == order.end()) order.push_back(x.topic);
  for (const auto& t : order)
    for (const auto& x : in)
      if (x.topic == t) out.push_back(x);
  return out;
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

TEST_CASE("consumer protocol subscription: golden bytes at every version", "[group][consumer_protocol]") {
  SECTION("encode_subscription writes v3 as the Java client does: topics sorted, owned partitions sorted and grouped") {
    member_subscription m;
    m.member_id = "ignored";
    m.topics = {"b", "a"};
    m.owned_partitions = {tp("b", 1), tp("a", 2), tp("a", 0)};
    m.generation = 4;
    const bytes golden = from_hex(
        "0003"
        "00000002 0001 61 0001 62"                                               // topics ["a", "b"]
        "ffffffff"                                                               // userData null
        "00000002 0001 61 00000002 00000000 00000002 0001 62 00000001 00000001"  // a:[0,2] b:[1]
        "00000004"                                                               // generationId
        "ffff");                                                                 // rackId null
    CHECK(to_hex(encode_subscription(m)) == to_hex(golden));
    auto d = decode_subscription(cspan(golden));
    REQUIRE(d.has_value());
    CHECK(d->member_id.empty());
    CHECK_FALSE(d->group_instance_id.has_value());
    CHECK(d->topics == std::vector<std::string>{"a", "b"});
    CHECK(d->owned_partitions == std::vector<topic_partition>{tp("a", 0), tp("a", 2), tp("b", 1)});
    CHECK(d->generation == 4);
  }
  SECTION("v3 with a rack and user data") {
    consumer_protocol_subscription s;
    s.topics = {"t"};
    s.user_data = from_hex("cafe");
    s.generation = -1;
    s.rack_id = "r1";
    const bytes golden = from_hex("0003 00000001 0001 74 00000002 cafe 00000000 ffffffff 0002 7231");
    CHECK(to_hex(encode(s)) == to_hex(golden));
    CHECK(*decode_consumer_protocol_subscription(cspan(golden)) == s);
  }
  SECTION("v0: topics and user data (what kafkajs's MemberMetadata.encode writes)") {
    // kafkajs: writeInt16(version) writeArray(topics) writeBytes(userData = Buffer.alloc(0))
    const bytes golden = from_hex("0000 00000001 0001 74 00000000");
    auto d = decode_consumer_protocol_subscription(cspan(golden));
    REQUIRE(d.has_value());
    CHECK(d->version == 0);
    CHECK(d->topics == std::vector<std::string>{"t"});
    CHECK(d->user_data == std::optional<bytes>(bytes{}));
    CHECK(d->owned_partitions.empty());
    CHECK(d->generation == -1);
    consumer_protocol_subscription s = *d;
    CHECK(to_hex(encode(s)) == to_hex(golden));
  }
  SECTION("v1 adds owned partitions, v2 the generation") {
    const bytes v1 = from_hex("0001 00000001 0001 74 ffffffff 00000001 0001 74 00000001 00000003");
    auto d1 = decode_consumer_protocol_subscription(cspan(v1));
    REQUIRE(d1.has_value());
    CHECK(d1->owned_partitions == std::vector<topic_partition>{tp("t", 3)});
    CHECK(d1->generation == -1);
    CHECK(to_hex(encode(*d1)) == to_hex(v1));
    const bytes v2 = from_hex("0002 00000001 0001 74 ffffffff 00000000 0000000c");
    auto d2 = decode_consumer_protocol_subscription(cspan(v2));
    REQUIRE(d2.has_value());
    CHECK(d2->generation == 12);
    CHECK(to_hex(encode(*d2)) == to_hex(v2));
  }
  SECTION("a version above 3 is parsed as 3 and its extra fields ignored (ConsumerProtocol.java)") {
    const bytes v7 = from_hex("0007 00000001 0001 74 ffffffff 00000000 00000001 ffff 0102030405");
    auto d = decode_consumer_protocol_subscription(cspan(v7));
    REQUIRE(d.has_value());
    CHECK(d->version == 7);
    CHECK(d->topics == std::vector<std::string>{"t"});
    CHECK(d->generation == 1);
  }
}

TEST_CASE("consumer protocol assignment: golden bytes", "[group][consumer_protocol]") {
  SECTION("encode_assignment writes v3, grouped by topic in order of first appearance") {
    const bytes golden = from_hex(
        "0003 00000002"
        "0001 62 00000002 00000001 00000000"  // b:[1,0]
        "0001 61 00000001 00000000"           // a:[0]
        "ffffffff");
    CHECK(to_hex(encode_assignment({tp("b", 1), tp("a", 0), tp("b", 0)})) == to_hex(golden));
    auto d = decode_assignment(cspan(golden));
    REQUIRE(d.has_value());
    CHECK(*d == std::vector<topic_partition>{tp("b", 1), tp("b", 0), tp("a", 0)});
  }
  SECTION("the empty assignment") {
    const bytes golden = from_hex("0003 00000000 ffffffff");
    CHECK(to_hex(encode_assignment({})) == to_hex(golden));
    CHECK(decode_assignment(cspan(golden))->empty());
  }
  SECTION("every version 0..3 has the same layout; user data kept") {
    for (std::int16_t v = 0; v <= 3; ++v) {
      const bytes b = from_hex(fmt::format("{:04x} 00000001 0001 74 00000001 00000009 00000001 ee", v));
      auto d = decode_consumer_protocol_assignment(cspan(b));
      REQUIRE(d.has_value());
      CHECK(d->version == v);
      CHECK(d->partitions == std::vector<topic_partition>{tp("t", 9)});
      CHECK(d->user_data == std::optional<bytes>(from_hex("ee")));
      CHECK(to_hex(encode(*d)) == to_hex(b));
    }
  }
}

TEST_CASE("consumer protocol: malformed input is corrupt_message naming field and byte", "[group][consumer_protocol]") {
  auto err = [](auto r) {
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == errc::corrupt_message);
    return r.error().message();
  };
  CHECK(err(decode_subscription(cspan(from_hex("ffff 00000000 ffffffff")))).find("version -1") != std::string::npos);
  CHECK(err(decode_assignment(cspan(from_hex("8000 00000000 ffffffff")))).find("version") != std::string::npos);
  // topics count -1 (null) and -2
  err(decode_subscription(cspan(from_hex("0000 ffffffff ffffffff"))));
  err(decode_subscription(cspan(from_hex("0000 fffffffe ffffffff"))));
  // userData length -2
  auto msg = err(decode_subscription(cspan(from_hex("0000 00000000 fffffffe"))));
  CHECK(msg.find("'UserData' at byte 6") != std::string::npos);
  // a null topic name in the assignment
  msg = err(decode_assignment(cspan(from_hex("0000 00000001 ffff 00000000 ffffffff"))));
  CHECK(msg.find("'AssignedPartitions.Topic'") != std::string::npos);
  // partition count that cannot fit
  msg = err(decode_assignment(cspan(from_hex("0000 00000001 0001 74 7fffffff"))));
  CHECK(msg.find("'AssignedPartitions.Partitions'") != std::string::npos);
}

TEST_CASE("consumer protocol: seeded round trips at every version", "[group][consumer_protocol]") {
  const std::uint32_t seed = 0xc0de;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  for (int i = 0; i < 500; ++i) {
    INFO("iteration " << i);
    for (std::int16_t v = 0; v <= 3; ++v) {
      const auto s = random_subscription(rng, v);
      auto d = decode_consumer_protocol_subscription(cspan(encode(s)));
      REQUIRE(d.has_value());
      CHECK(*d == s);

      consumer_protocol_assignment a;
      a.version = v;
      a.partitions = random_partitions(rng);
      a.user_data = random_user_data(rng);
      auto da = decode_consumer_protocol_assignment(cspan(encode(a)));
      REQUIRE(da.has_value());
      CHECK(da->user_data == a.user_data);
      CHECK(da->partitions == gathered_by_first_appearance(a.partitions));
    }
    member_subscription m;
    for (auto n = rng() % 4; n > 0; --n) m.topics.push_back(random_topic(rng));
    m.owned_partitions = random_partitions(rng);
    m.generation = static_cast<std::int32_t>(rng());
    auto dm = decode_subscription(cspan(encode_subscription(m)));
    REQUIRE(dm.has_value());
    auto topics = m.topics;
    std::sort(topics.begin(), topics.end());
    auto owned = m.owned_partitions;
    std::sort(owned.begin(), owned.end());
    CHECK(dm->topics == topics);
    CHECK(dm->owned_partitions == owned);
    CHECK(dm->generation == m.generation);
  }
}

TEST_CASE("consumer protocol: every truncation is rejected", "[group][consumer_protocol]") {
  std::mt19937 rng(0x7c);
  for (int i = 0; i < 30; ++i) {
    for (std::int16_t v = 0; v <= 3; ++v) {
      check_every_truncation_rejected(encode(random_subscription(rng, v)), decode_consumer_protocol_subscription);
      consumer_protocol_assignment a;
      a.version = v;
      a.partitions = random_partitions(rng);
      a.user_data = random_user_data(rng);
      check_every_truncation_rejected(encode(a), decode_consumer_protocol_assignment);
    }
  }
}

TEST_CASE("consumer protocol: random garbage and mutations never crash", "[group][consumer_protocol]") {
  const std::uint32_t seed = 0x9a7ba6e;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  std::vector<bytes> valid;
  for (int i = 0; i < 10; ++i)
    for (std::int16_t v = 0; v <= 3; ++v) {
      valid.push_back(encode(random_subscription(rng, v)));
      valid.push_back(encode_assignment(random_partitions(rng)));
    }
  for (int i = 0; i < 20000; ++i) {
    bytes b;
    if (i % 2 == 0) {
      b.resize(rng() % 48);
      for (auto& x : b) x = static_cast<std::byte>(rng() % 4 == 0 ? 0 : rng());
    } else {
      b = valid[rng() % valid.size()];
      for (auto f = 1 + rng() % 4; f > 0 && !b.empty(); --f) b[rng() % b.size()] = static_cast<std::byte>(rng());
    }
    auto s = decode_consumer_protocol_subscription(cspan(b));
    if (!s) CHECK(s.error() == errc::corrupt_message);
    auto a = decode_consumer_protocol_assignment(cspan(b));
    if (!a) CHECK(a.error() == errc::corrupt_message);
  }
}

// KRaft metadata records: golden bytes written out by hand from Kafka's JSON
// schemas (metadata/src/main/resources/common/metadata/*.json) and the
// ApiMessageAndVersion frame (AbstractApiMessageSerde), seeded round trips at
// every version, every truncation rejected, unknown tagged fields skipped,
// random garbage and mutations never crash (run under ASan/UBSan).
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <brook/replication/metadata_records.hpp>

#include "support/format_helpers.hpp"
#include "support/replication_helpers.hpp"
#include "support/seeds.hpp"

using namespace brook;
using brook::test::ids;
using namespace brook::metadata;
using brook::test::bytes;
using brook::test::from_hex;
using brook::test::to_hex;

namespace {

const uuid topic_one = uuid::from_parts(0, 1);
const std::string topic_one_hex = "00000000000000000000000000000001";

metadata_record decode_ok(const bytes& b) {
  auto d = decode_metadata_record(b);
  INFO(to_hex(b));
  REQUIRE(d.has_value());
  return d->record;
}

std::vector<broker_id> random_ids(std::mt19937_64& rng, std::size_t max) {
  std::vector<broker_id> v(rng() % (max + 1));
  for (auto& x : v) x = broker_id(static_cast<std::int32_t>(rng() % 5 == 0 ? rng() : rng() % 10));
  return v;
}
std::optional<std::vector<broker_id>> random_opt_ids(std::mt19937_64& rng) {
  if (rng() % 3 == 0) return std::nullopt;
  return random_ids(rng, 4);
}
std::string random_name(std::mt19937_64& rng) {
  std::string s(rng() % 12, 'x');
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

/// A random record of a random type, valid at `version` (fields that version lacks at defaults).
metadata_record random_record(std::mt19937_64& rng, std::int16_t& version) {
  switch (rng() % 11) {
    case 0: {
      register_broker_record r;
      version = static_cast<std::int16_t>(rng() % 4);
      r.broker_id = broker_id(static_cast<std::int32_t>(rng()));
      r.is_migrating_zk_broker = version >= 2 && rng() % 2;
      r.incarnation_id = uuid::random(rng);
      r.broker_epoch = static_cast<std::int64_t>(rng());
      for (auto n = rng() % 3; n > 0; --n)
        r.endpoints.push_back({random_name(rng), random_name(rng), static_cast<std::uint16_t>(rng()),
                               static_cast<std::int16_t>(rng() % 4)});
      for (auto n = rng() % 3; n > 0; --n)
        r.features.push_back(
            {random_name(rng), static_cast<std::int16_t>(rng() % 5), static_cast<std::int16_t>(rng() % 20)});
      if (rng() % 2) r.rack = random_name(rng);
      r.fenced = rng() % 2;
      r.in_controlled_shutdown = version >= 1 && rng() % 2;
      return r;
    }
    case 1:
      version = 0;
      return unregister_broker_record{broker_id(static_cast<std::int32_t>(rng())), static_cast<std::int64_t>(rng())};
    case 2: version = 0; return topic_record{random_name(rng), uuid::random(rng)};
    case 3: {
      partition_record r;
      version = static_cast<std::int16_t>(rng() % 3);
      r.partition_id = partition_id(static_cast<std::int32_t>(rng() % 100));
      r.topic_id = uuid::random(rng);
      r.replicas = random_ids(rng, 5);
      r.isr = random_ids(rng, 5);
      r.removing_replicas = random_ids(rng, 2);
      r.adding_replicas = random_ids(rng, 2);
      r.leader = broker_id(static_cast<std::int32_t>(rng() % 6) - 1);
      r.leader_recovery_state = static_cast<std::int8_t>(rng() % 2);
      r.leader_epoch = leader_epoch(static_cast<std::int32_t>(rng() % 1000));
      r.partition_epoch = static_cast<std::int32_t>(rng() % 1000);
      if (version >= 1)
        for (std::size_t i = 0; i < r.replicas.size(); ++i) r.directories.push_back(uuid::random(rng));
      if (version >= 2) {
        r.eligible_leader_replicas = random_opt_ids(rng);
        r.last_known_elr = random_opt_ids(rng);
      }
      return r;
    }
    case 4: {
      partition_change_record r;
      version = static_cast<std::int16_t>(rng() % 3);
      r.partition_id = partition_id(static_cast<std::int32_t>(rng() % 100));
      r.topic_id = uuid::random(rng);
      r.isr = random_opt_ids(rng);
      r.leader = broker_id(static_cast<std::int32_t>(rng() % 7) - 2);
      r.replicas = random_opt_ids(rng);
      r.removing_replicas = random_opt_ids(rng);
      r.adding_replicas = random_opt_ids(rng);
      r.leader_recovery_state = static_cast<std::int8_t>(static_cast<int>(rng() % 3) - 1);
      if (version >= 2) {
        r.eligible_leader_replicas = random_opt_ids(rng);
        r.last_known_elr = random_opt_ids(rng);
      }
      if (version >= 1 && rng() % 2) r.directories = std::vector<uuid>{uuid::random(rng), uuid::random(rng)};
      return r;
    }
    case 5:
      version = 0;
      return fence_broker_record{broker_id(static_cast<std::int32_t>(rng())), static_cast<std::int64_t>(rng())};
    case 6:
      version = 0;
      return unfence_broker_record{broker_id(static_cast<std::int32_t>(rng())), static_cast<std::int64_t>(rng())};
    case 7: version = 0; return remove_topic_record{uuid::random(rng)};
    case 8: {
      version = static_cast<std::int16_t>(rng() % 3);
      broker_registration_change_record r{broker_id(static_cast<std::int32_t>(rng())), static_cast<std::int64_t>(rng()),
                                          static_cast<std::int8_t>(static_cast<int>(rng() % 3) - 1), 0};
      if (version >= 1) r.in_controlled_shutdown = static_cast<std::int8_t>(rng() % 2);
      return r;
    }
    case 9: {
      version = 0;
      config_record r;
      r.resource_type = static_cast<std::int8_t>(rng() % 3 == 0 ? rng() % 20 : 2);
      r.resource_name = random_name(rng);
      r.name = random_name(rng);
      if (rng() % 4 != 0) r.value = random_name(rng);
      return r;
    }
    default: version = 0; return no_op_record{};
  }
}

}  // namespace

// Golden bytes are laid out field by field: keep clang-format from joining or splitting them.
// clang-format off
TEST_CASE("PartitionRecord v0 golden bytes", "[replication][metadata_records]") {
  partition_record r;
  r.partition_id = partition_id(0);
  r.topic_id = topic_one;
  r.replicas = ids{1, 2};
  r.isr = ids{1, 2};
  r.leader = broker_id{1};
  r.leader_epoch = leader_epoch(0);
  r.partition_epoch = 0;
  // frame 1, apiKey 3, version 0 | PartitionId | TopicId | Replicas [1,2] | Isr [1,2] |
  // RemovingReplicas [] | AddingReplicas [] | Leader 1 | LeaderEpoch 0 | PartitionEpoch 0 | no tags
  const std::string hex = "010300" "00000000" + topic_one_hex + "03" "00000001" "00000002" "03" "00000001" "00000002" +
                          "01" "01" "00000001" "00000000" "00000000" "00";
  CHECK(to_hex(encode_metadata_record(r)) == hex);
  CHECK(decode_ok(from_hex(hex)) == metadata_record(r));

  SECTION("a non-default LeaderRecoveryState is tag 0") {
    r.leader_recovery_state = 1;
    const std::string tagged = hex.substr(0, hex.size() - 2) + "01" "00" "01" "01";
    CHECK(to_hex(encode_metadata_record(r)) == tagged);
    CHECK(decode_ok(from_hex(tagged)) == metadata_record(r));
  }
  SECTION("v1 adds Directories after PartitionEpoch") {
    r.directories = {topic_one, topic_one};
    const std::string v1 = "010301" + hex.substr(6, hex.size() - 8) + "03" + topic_one_hex + topic_one_hex + "00";
    CHECK(to_hex(encode_metadata_record(r, 1)) == v1);
    CHECK(decode_ok(from_hex(v1)) == metadata_record(r));
  }
}

TEST_CASE("PartitionChangeRecord v0 golden bytes", "[replication][metadata_records]") {
  partition_change_record r;
  r.partition_id = partition_id(2);
  r.topic_id = topic_one;
  SECTION("nothing changed: no tagged fields") {
    const std::string hex = "010500" "00000002" + topic_one_hex + "00";
    CHECK(to_hex(encode_metadata_record(r)) == hex);
    CHECK(decode_ok(from_hex(hex)) == metadata_record(r));
  }
  SECTION("new isr [1] (tag 0) and leader 1 (tag 1)") {
    r.isr = ids{1};
    r.leader = broker_id{1};
    const std::string hex = "010500" "00000002" + topic_one_hex + "02" "00" "05" "02" "00000001" "01" "04" "00000001";
    CHECK(to_hex(encode_metadata_record(r)) == hex);
    CHECK(decode_ok(from_hex(hex)) == metadata_record(r));
  }
  SECTION("no leader (-1), empty removing replicas, recovery state 0: tags in ascending order") {
    r.leader = broker_id{-1};
    r.removing_replicas = ids{};
    r.leader_recovery_state = 0;
    const std::string hex = "010500" "00000002" + topic_one_hex + "03" "01" "04" "ffffffff" "03" "01" "01" "05" "01" "00";
    CHECK(to_hex(encode_metadata_record(r)) == hex);
    CHECK(decode_ok(from_hex(hex)) == metadata_record(r));
  }
}

TEST_CASE("other records' golden bytes", "[replication][metadata_records]") {
  CHECK(to_hex(encode_metadata_record(topic_record{"t", topic_one})) == "010200" "0274" + topic_one_hex + "00");
  CHECK(to_hex(encode_metadata_record(fence_broker_record{broker_id{3}, 9})) == "010700" "00000003" "0000000000000009" "00");
  CHECK(to_hex(encode_metadata_record(unfence_broker_record{broker_id{3}, 9})) == "010800" "00000003" "0000000000000009" "00");
  CHECK(to_hex(encode_metadata_record(unregister_broker_record{broker_id{3}, 9})) == "010100" "00000003" "0000000000000009" "00");
  CHECK(to_hex(encode_metadata_record(remove_topic_record{topic_one})) == "010900" + topic_one_hex + "00");
  CHECK(to_hex(encode_metadata_record(no_op_record{})) == "011400" "00");
  // ConfigRecord: ResourceType 2 (topic) | "t" | "cleanup.policy" | "compact" | tags; a null value is 00.
  const config_record cr{2, "t", "cleanup.policy", "compact"};
  const std::string cr_hex = "010400" "02" "0274" "0f" "636c65616e75702e706f6c696379" "08" "636f6d70616374" "00";
  CHECK(to_hex(encode_metadata_record(cr)) == cr_hex);
  CHECK(decode_ok(from_hex(cr_hex)) == metadata_record(cr));
  CHECK(to_hex(encode_metadata_record(config_record{2, "t", "cleanup.policy", std::nullopt})) ==
        "010400" "02" "0274" "0f" "636c65616e75702e706f6c696379" "00" "00");
  CHECK(to_hex(encode_metadata_record(broker_registration_change_record{broker_id{3}, 9, 1, 0})) ==
        "011100" "00000003" "0000000000000009" "01" "00" "01" "01");

  register_broker_record rb;
  rb.broker_id = broker_id(1);
  rb.broker_epoch = 7;
  // v2: BrokerId | IsMigratingZkBroker | IncarnationId | BrokerEpoch | EndPoints [] | Features [] |
  // Rack null | Fenced | InControlledShutdown | tags
  CHECK(to_hex(encode_metadata_record(rb)) ==
        "010002" "00000001" "00" + std::string(32, '0') + "0000000000000007" "01" "01" "00" "01" "00" "00");
  rb.endpoints.push_back({"PLAINTEXT", "h", 9092, 0});
  rb.rack = "r";
  CHECK(to_hex(encode_metadata_record(rb, 0)) ==
        "010000" "00000001" + std::string(32, '0') + "0000000000000007" +
            "02" "0a" "504c41494e54455854" "02" "68" "2384" "0000" "00" + "01" "02" "72" "01" "00");
}

// clang-format on

TEST_CASE("round trips at every version, every truncation is rejected", "[replication][metadata_records]") {
  const auto seed = brook::test::property_seed(1);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 1: rerun with the same base)");
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    std::int16_t v = 0;
    const metadata_record r = random_record(rng, v);
    const bytes b = encode_metadata_record(r, v);
    auto d = decode_metadata_record(b);
    INFO(to_hex(b));
    REQUIRE(d.has_value());
    CHECK(d->record == r);
    CHECK(d->version == v);
    for (std::size_t cut = 0; cut < b.size(); ++cut) {
      auto t = decode_metadata_record(std::span<const std::byte>(b.data(), cut));
      REQUIRE_FALSE(t.has_value());
      CHECK(t.error() == errc::corrupt_message);
    }
    bytes longer = b;
    longer.push_back(std::byte{0});
    auto g = decode_metadata_record(longer);
    REQUIRE_FALSE(g.has_value());
    CHECK(g.error().message().find("garbage") != std::string::npos);
  }
}

// clang-format off
TEST_CASE("unknown tagged fields are skipped, known ones checked", "[replication][metadata_records]") {
  const std::string head = "010500" "00000002" + topic_one_hex;
  SECTION("unknown tag 9 with 3 bytes, then leader") {
    auto d = decode_ok(from_hex(head + "02" "09" "03" "aabbcc" "01" "04" "00000005"));
    CHECK(std::get<partition_change_record>(d).leader == broker_id{5});
  }
  SECTION("v0 does not know tag 8 (Directories): skipped") {
    auto d = decode_ok(from_hex(head + "01" "08" "02" "01" "00"));
    CHECK_FALSE(std::get<partition_change_record>(d).directories.has_value());
  }
  SECTION("a known tag whose size does not match its value") {
    auto d = decode_metadata_record(from_hex(head + "01" "01" "05" "00000005" "00"));
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error().message().find("declares 5 bytes") != std::string::npos);
  }
  SECTION("a known tag whose value runs past its size") {
    auto d = decode_metadata_record(from_hex(head + "01" "01" "03" "000000" "05"));
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error() == errc::corrupt_message);
  }
}

TEST_CASE("frame errors name the field and the byte", "[replication][metadata_records]") {
  auto check = [](const std::string& hex, const std::string& needle) {
    auto d = decode_metadata_record(from_hex(hex));
    REQUIRE_FALSE(d.has_value());
    CHECK(d.error() == errc::corrupt_message);
    INFO(d.error().message());
    CHECK(d.error().message().find(needle) != std::string::npos);
  };
  check("000300", "frame version 0");
  check("020300", "frame version 2");
  check("010c00", "type 12 is not one brook reads");
  check("01ffff03", "exceeds 32767");
  check("010301", "PartitionRecord v1: field 'PartitionId' at byte 3");
  check("010303", "version 3 is not one brook reads");
  check("010200" "0574", "field 'Name' at byte 3");
  check("0103", "field 'version' at byte 2");
}

// clang-format on

TEST_CASE("random garbage and mutations never crash", "[replication][metadata_records]") {
  const auto seed = brook::test::property_seed(2);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 2: rerun with the same base)");
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    bytes b(rng() % 64);
    for (auto& x : b) x = static_cast<std::byte>(rng());
    if (!b.empty() && rng() % 2) b[0] = std::byte{1};
    if (b.size() > 1 && rng() % 2) b[1] = static_cast<std::byte>(rng() % 21);
    if (b.size() > 2 && rng() % 2) b[2] = static_cast<std::byte>(rng() % 3);
    (void)decode_metadata_record(b);
  }
  for (int i = 0; i < 3000; ++i) {
    std::int16_t v = 0;
    const metadata_record r = random_record(rng, v);  // sets v: not in the same call as its use
    bytes b = encode_metadata_record(r, v);
    for (int k = 0; k < 4; ++k) b[rng() % b.size()] = static_cast<std::byte>(rng());
    auto d = decode_metadata_record(b);
    if (d) {  // a mutation that still decodes must re-encode to something that decodes equal
      auto again = decode_metadata_record(encode_metadata_record(d->record, d->version));
      REQUIRE(again.has_value());
      CHECK(again->record == d->record);
    }
  }
}

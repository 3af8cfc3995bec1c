#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include <brook/protocol/metadata.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::encoded;

namespace {
metadata_request request_for(std::initializer_list<const char*> names) {
  metadata_request r;
  r.topics.emplace();
  for (const char* n : names) r.topics->push_back({uuid{}, std::string(n)});
  return r;
}

/// A response with random values in the fields version v has (the others at their defaults).
metadata_response random_response(std::mt19937_64& g, std::int16_t v) {
  metadata_response r;
  auto small = [&](int n) { return static_cast<std::int32_t>(g() % static_cast<std::uint64_t>(n)); };
  if (v >= 3) r.throttle_time_ms = small(1000);
  for (int b = small(4); b > 0; --b)
    r.brokers.push_back({broker_id{small(10)}, std::string(static_cast<std::size_t>(small(20)), 'h'), small(65536),
                         v >= 1 && g() % 2 ? std::optional<std::string>("rack") : std::nullopt});
  if (v >= 2 && g() % 2) r.cluster_id = "brook-cluster";
  if (v >= 1) r.controller_id = broker_id{small(10)};
  for (int t = small(4); t > 0; --t) {
    metadata_response_topic mt;
    mt.error_code = static_cast<std::int16_t>(small(3));
    mt.name = v >= 12 && g() % 4 == 0 ? std::nullopt : std::optional<std::string>("topic-" + std::to_string(t));
    if (v >= 10) mt.topic_id = uuid::from_parts(g(), g());
    if (v >= 1) mt.is_internal = g() % 2 == 0;
    if (v >= 8) mt.topic_authorized_operations = small(100);
    for (int p = small(4); p > 0; --p) {
      metadata_response_partition mp;
      mp.partition_index = partition_id{p};
      mp.leader_id = broker_id{small(5)};
      if (v >= 7) mp.leader_epoch_value = leader_epoch{small(100)};
      for (int k = small(4); k > 0; --k) mp.replica_nodes.push_back(broker_id{k});
      mp.isr_nodes = mp.replica_nodes;
      if (v >= 5 && g() % 3 == 0) mp.offline_replicas.push_back(broker_id{9});
      mt.partitions.push_back(std::move(mp));
    }
    r.topics.push_back(std::move(mt));
  }
  if (v >= 8 && v <= 10) r.cluster_authorized_operations = small(100);
  return r;
}
}  // namespace

TEST_CASE("Metadata requests byte for byte across the versions", "[protocol][metadata]") {
  CHECK(encoded(request_for({"a"}), 0) == bytes_of({0, 0, 0, 1, 0, 1, 'a'}));
  metadata_request all;
  all.topics.reset();
  CHECK(encoded(all, 1) == bytes_of({0xff, 0xff, 0xff, 0xff}));
  all.allow_auto_topic_creation = false;
  CHECK(encoded(all, 4) == bytes_of({0xff, 0xff, 0xff, 0xff, 0}));
  // v9: compact array and string, tagged sections; IncludeCluster... (v8-10) and
  // IncludeTopic... (v8+) follow AllowAutoTopicCreation.
  CHECK(encoded(request_for({"a"}), 9) == bytes_of({2, 2, 'a', 0, 1, 0, 0, 0}));
  // v10: each topic carries its id first; v11 drops IncludeClusterAuthorizedOperations.
  CHECK(encoded(request_for({"a"}), 10) ==
        bytes_of({2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 'a', 0, 1, 0, 0, 0}));
  CHECK(encoded(request_for({"a"}), 11).size() == encoded(request_for({"a"}), 10).size() - 1);
}

TEST_CASE("Metadata: what a version cannot carry is refused, not dropped", "[protocol][metadata]") {
  metadata_request all;
  all.topics.reset();
  auto v0 = codec::encode(all, 0);  // null topics only from v1
  REQUIRE_FALSE(v0);
  CHECK(v0.error() == errc::invalid_request);
  auto no_auto = request_for({"a"});
  no_auto.allow_auto_topic_creation = false;  // not ignorable: v0-3 cannot say it
  auto v3 = codec::encode(no_auto, 3);
  REQUIRE_FALSE(v3);
  CHECK(v3.error() == errc::unsupported_version);
  metadata_request null_name = request_for({});
  null_name.topics->push_back({uuid{}, std::nullopt});
  CHECK_FALSE(codec::encode(null_name, 9));  // a null topic name from v10 (topic ids)
  CHECK(codec::encode(null_name, 10));
}

TEST_CASE("Metadata responses byte for byte at v0", "[protocol][metadata]") {
  metadata_response r;
  r.brokers.push_back({broker_id{1}, "h", 9092, std::nullopt});
  metadata_response_topic t;
  t.name = "a";
  t.partitions.push_back({0, partition_id{0}, broker_id{1}, leader_epoch{-1}, {broker_id{1}}, {broker_id{1}}, {}});
  r.topics.push_back(t);
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 1, 0, 0, 0, 1, 0,   1, 'h', 0, 0, 0x23, 0x84,  // brokers
                                   0, 0, 0, 1, 0, 0, 0, 1, 'a',                            // topic "a", no error
                                   0, 0, 0, 1, 0, 0, 0, 0, 0,   0, 0,   0, 0, 1,           // partition 0, leader 1
                                   0, 0, 0, 1, 0, 0, 0, 1, 0,   0, 0,   1, 0, 0,    0,    1}));  // replicas, isr
}

TEST_CASE("Metadata round-trips at every version and names damage", "[protocol][metadata]") {
  std::mt19937_64 g(3);
  for (std::int16_t v = 0; v <= 12; ++v) {
    INFO("v" << v);
    for (int trial = 0; trial < 30; ++trial) {
      const metadata_response r = random_response(g, v);
      const auto b = encoded(r, v);
      auto back = codec::decode<metadata_response>(b, v);
      REQUIRE_OK(back);
      CHECK(*back == r);
      CHECK(encoded(*back, v) == b);
      for (std::size_t n = 0; n < b.size(); n += 1 + b.size() / 64) {
        auto cut = codec::decode<metadata_response>(std::span<const std::byte>(b.data(), n), v);
        REQUIRE_FALSE(cut);
        CHECK(cut.error() == errc::corrupt_message);
      }
      metadata_request q = request_for({"x", "y"});
      if (v >= 10) q.topics->push_back({uuid::from_parts(1, 2), std::nullopt});
      if (v >= 4) q.allow_auto_topic_creation = g() % 2 == 0;
      if (v >= 8) q.include_topic_authorized_operations = true;
      auto qb = encoded(q, v);
      auto qback = codec::decode<metadata_request>(qb, v);
      REQUIRE_OK(qback);
      CHECK(*qback == q);
    }
  }
}

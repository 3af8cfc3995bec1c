// cluster_image: Kafka's replay semantics (PartitionRegistration.merge, the
// broker registration checks of ClusterControlManager.replay), contradicting
// records refused with the image unchanged, derived helpers.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <brook/replication/cluster_image.hpp>

#include "support/replication_helpers.hpp"

using namespace brook;
using brook::test::ids;
using namespace brook::metadata;

namespace {

const uuid tid = uuid::from_parts(0x1234, 0x5678);

register_broker_record broker(std::int32_t id, std::int64_t epoch, bool fenced = false) {
  register_broker_record r;
  r.broker_id = broker_id(id);
  r.broker_epoch = epoch;
  r.fenced = fenced;
  return r;
}

partition_record part(std::int32_t p, ids replicas, ids isr, std::int32_t leader) {
  partition_record r;
  r.partition_id = partition_id(p);
  r.topic_id = tid;
  r.replicas = std::move(replicas);
  r.isr = std::move(isr);
  r.leader = broker_id(leader);
  r.leader_epoch = leader_epoch(0);
  r.partition_epoch = 0;
  return r;
}

partition_change_record change(std::int32_t p) {
  partition_change_record c;
  c.partition_id = partition_id(p);
  c.topic_id = tid;
  return c;
}

cluster_image base_image() {
  cluster_image img;
  std::vector<metadata_record> recs = {broker(1, 10),
                                       broker(2, 11),
                                       broker(3, 12),
                                       topic_record{"orders", tid},
                                       part(0, {1, 2, 3}, {1, 2, 3}, 1),
                                       part(1, {2, 3, 1}, {2, 3}, 2)};
  REQUIRE(img.apply_all(recs).has_value());
  return img;
}

/// apply must fail with invalid_request, mention `needle`, and leave the image unchanged.
void refused(cluster_image& img, const metadata_record& r, const std::string& needle) {
  const cluster_image before = img;
  auto res = img.apply(r);
  REQUIRE_FALSE(res.has_value());
  CHECK(res.error() == errc::invalid_request);
  INFO(res.error().message());
  CHECK(res.error().message().find(needle) != std::string::npos);
  CHECK(img == before);
}

}  // namespace

TEST_CASE("brokers register, fence, unfence and unregister", "[replication][cluster_image]") {
  cluster_image img;
  REQUIRE(img.apply(broker(1, 5, /*fenced=*/true)).has_value());
  REQUIRE(img.broker(broker_id{1}) != nullptr);
  CHECK(img.broker(broker_id{1})->fenced);
  CHECK(img.alive_brokers().empty());
  REQUIRE(img.apply(unfence_broker_record{broker_id{1}, 5}).has_value());
  CHECK(img.alive_brokers() == ids{1});
  REQUIRE(img.apply(fence_broker_record{broker_id{1}, 5}).has_value());
  CHECK_FALSE(img.broker(broker_id{1})->alive());
  REQUIRE(img.apply(broker_registration_change_record{broker_id{1}, 5, -1, 0}).has_value());
  CHECK(img.broker(broker_id{1})->alive());
  REQUIRE(img.apply(broker_registration_change_record{broker_id{1}, 5, 0, 1}).has_value());
  CHECK(img.broker(broker_id{1})->alive());
  CHECK(img.broker(broker_id{1})->in_controlled_shutdown);
  REQUIRE(img.apply(broker_registration_change_record{broker_id{1}, 5, 1, 0}).has_value());
  CHECK(img.broker(broker_id{1})->fenced);

  SECTION("re-registration needs a newer epoch") {
    refused(img, broker(1, 5), "not above its epoch 5");
    REQUIRE(img.apply(broker(1, 6)).has_value());
    CHECK(img.broker(broker_id{1})->epoch == 6);
    CHECK(img.broker(broker_id{1})->alive());
  }
  SECTION("records for another epoch or an unknown broker are refused") {
    refused(img, fence_broker_record{broker_id{1}, 4}, "registered with epoch 5, not 4");
    refused(img, unfence_broker_record{broker_id{2}, 5}, "no broker 2 is registered");
    refused(img, unregister_broker_record{broker_id{1}, 6}, "epoch 5, not 6");
    refused(img, broker_registration_change_record{broker_id{1}, 5, 2, 0}, "Fenced 2");
    refused(img, broker(-1, 1), "negative");
  }
  SECTION("unregister removes the broker") {
    REQUIRE(img.apply(unregister_broker_record{broker_id{1}, 5}).has_value());
    CHECK(img.broker(broker_id{1}) == nullptr);
    CHECK(img.brokers().empty());
  }
}

TEST_CASE("topics and partitions", "[replication][cluster_image]") {
  cluster_image img = base_image();
  const topic_state* t = img.topic("orders");
  REQUIRE(t != nullptr);
  CHECK(img.topic(tid) == t);
  CHECK(t->partitions.size() == 2);
  const partition_state* p1 = img.partition("orders", partition_id{1});
  REQUIRE(p1 != nullptr);
  CHECK(p1->leader == broker_id{2});
  CHECK(p1->under_replicated());
  CHECK_FALSE(p1->offline());
  CHECK(p1->has_preferred_leader());
  CHECK(img.under_replicated_partitions() == std::vector<topic_partition>{{"orders", partition_id{1}}});
  CHECK(img.offline_partitions().empty());
  CHECK(img.partition("orders", partition_id{2}) == nullptr);
  CHECK(img.partition("nope", partition_id{0}) == nullptr);

  SECTION("contradicting topic and partition records are refused") {
    refused(img, topic_record{"orders", uuid::from_parts(9, 9)}, "already exists");
    refused(img, topic_record{"other", tid}, "already belongs to 'orders'");
    refused(img, topic_record{"bad/name", uuid::from_parts(9, 9)}, "not a legal topic name");
    refused(img, topic_record{"", uuid::from_parts(9, 9)}, "not a legal topic name");
    refused(img, topic_record{"x", uuid::from_parts(0, 1)}, "reserved");
    auto unknown = part(2, {1}, {1}, 1);
    unknown.topic_id = uuid::from_parts(7, 7);
    refused(img, unknown, "no topic has id");
    refused(img, part(1, {1}, {1}, 1), "the next must be 2");
    refused(img, part(3, {1}, {1}, 1), "the next must be 2");
    refused(img, part(2, {}, {}, -1), "no replicas");
    refused(img, part(2, {1, 1}, {1}, 1), "distinct");
    refused(img, part(2, {1, 2}, {3}, 1), "isr [3]");
    refused(img, part(2, {1, 2}, {2}, 1), "leader 1 is not in the isr");
    refused(img, remove_topic_record{uuid::from_parts(7, 7)}, "no topic has id");
    auto c = change(5);
    refused(img, c, "has 2 partitions");
  }
  SECTION("a partition with no leader is offline") {
    REQUIRE(img.apply(part(2, {1, 2}, {1, 2}, -1)).has_value());
    CHECK(img.offline_partitions() == std::vector<topic_partition>{{"orders", partition_id{2}}});
  }
  SECTION("remove topic removes its partitions and frees name and id") {
    REQUIRE(img.apply(remove_topic_record{tid}).has_value());
    CHECK(img.topic("orders") == nullptr);
    CHECK(img.topic(tid) == nullptr);
    CHECK(img.under_replicated_partitions().empty());
    REQUIRE(img.apply(topic_record{"orders", tid}).has_value());
    CHECK(img.topic("orders")->partitions.empty());
  }
}

TEST_CASE("PartitionChangeRecord follows PartitionRegistration.merge", "[replication][cluster_image]") {
  cluster_image img = base_image();
  auto p0 = [&] { return *img.partition("orders", partition_id{0}); };

  SECTION("absent fields are unchanged, but the partition epoch still moves") {
    REQUIRE(img.apply(change(0)).has_value());
    CHECK(p0().leader == broker_id{1});
    CHECK(p0().leader_epoch == leader_epoch{0});
    CHECK(p0().partition_epoch == 1);
    CHECK(p0().isr == ids{1, 2, 3});
  }
  SECTION("an isr change keeps the leader and its epoch") {
    auto c = change(0);
    c.isr = ids{1, 3};
    REQUIRE(img.apply(c).has_value());
    CHECK(p0().isr == ids{1, 3});
    CHECK(p0().leader_epoch == leader_epoch{0});
    CHECK(p0().partition_epoch == 1);
    CHECK(p0().under_replicated());
  }
  SECTION("a leader change bumps the leader epoch; -1 means no leader; the same leader still bumps") {
    auto c = change(0);
    c.leader = broker_id{2};
    REQUIRE(img.apply(c).has_value());
    CHECK(p0().leader == broker_id{2});
    CHECK(p0().leader_epoch == leader_epoch{1});
    CHECK(p0().partition_epoch == 1);
    CHECK_FALSE(p0().has_preferred_leader());
    c.leader = broker_id{2};
    REQUIRE(img.apply(c).has_value());
    CHECK(p0().leader_epoch == leader_epoch{2});
    c.leader = broker_id{-1};
    REQUIRE(img.apply(c).has_value());
    CHECK(p0().offline());
    CHECK(p0().leader_epoch == leader_epoch{3});
    CHECK(p0().partition_epoch == 3);
  }
  SECTION("replicas, adding/removing replicas and recovery state") {
    auto c = change(0);
    c.replicas = ids{1, 2, 3, 4};
    c.adding_replicas = ids{4};
    REQUIRE(img.apply(c).has_value());
    CHECK(p0().replicas.size() == 4);
    CHECK(p0().adding_replicas == ids{4});
    auto u = change(0);
    u.leader = broker_id{3};
    u.isr = ids{3};
    u.leader_recovery_state = 1;
    REQUIRE(img.apply(u).has_value());
    CHECK(p0().leader_recovery_state == 1);
    CHECK(p0().leader_epoch == leader_epoch{1});
    CHECK(p0().partition_epoch == 2);
  }
  SECTION("a change whose result contradicts itself is refused") {
    auto c = change(0);
    c.isr = ids{2, 3};  // leader 1 would leave the isr without a new leader
    refused(img, c, "leader 1 is not in the isr");
    c.leader = broker_id{4};
    refused(img, c, "leader 4 is not in the isr");
    auto r = change(0);
    r.replicas = ids{1, 2};  // isr still has 3
    refused(img, r, "isr [1, 2, 3]");
    auto l = change(0);
    l.leader = broker_id{-3};
    refused(img, l, "Leader -3");
    auto s = change(0);
    s.leader_recovery_state = 2;
    refused(img, s, "LeaderRecoveryState 2");
    auto unknown = change(0);
    unknown.topic_id = uuid::from_parts(7, 7);
    refused(img, unknown, "no topic has id");
  }
}

TEST_CASE("apply_all is all or nothing, controller epochs never go back", "[replication][cluster_image]") {
  cluster_image img = base_image();
  const cluster_image before = img;
  std::vector<metadata_record> recs = {broker(4, 1), topic_record{"t2", uuid::from_parts(5, 5)},
                                       topic_record{"orders", uuid::from_parts(6, 6)}};
  auto r = img.apply_all(recs);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message().find("record 2 of 3") != std::string::npos);
  CHECK(img == before);

  CHECK(img.controller_epoch() == -1);
  REQUIRE(img.set_controller_epoch(3).has_value());
  REQUIRE(img.set_controller_epoch(3).has_value());
  CHECK_FALSE(img.set_controller_epoch(2).has_value());
  CHECK(img.controller_epoch() == 3);
  auto c = change(1);
  c.leader = broker_id{3};
  REQUIRE(img.apply(c).has_value());
  CHECK(img.partition("orders", partition_id{1})->controller_epoch == 3);
  CHECK(img.partition("orders", partition_id{0})->controller_epoch == -1);
}

TEST_CASE("ConfigRecords set and delete a topic's overrides, kept by name, dropped with the topic",
          "[replication][cluster_image]") {
  cluster_image img;
  // Kafka 3.0-3.3 wrote a new topic's configs before its TopicRecord (later ones after it).
  REQUIRE(img.apply(config_record{config_resource_topic, "orders", "cleanup.policy", "compact"}).has_value());
  REQUIRE(img.apply(config_record{config_resource_topic, "orders", "retention.ms", "1000"}).has_value());
  REQUIRE(img.apply(topic_record{"orders", tid}).has_value());
  CHECK(img.topic_configs("orders") ==
        std::map<std::string, std::string>{{"cleanup.policy", "compact"}, {"retention.ms", "1000"}});
  REQUIRE(img.apply(config_record{config_resource_topic, "orders", "retention.ms", std::nullopt}).has_value());
  CHECK(img.topic_configs("orders") == std::map<std::string, std::string>{{"cleanup.policy", "compact"}});
  // Other resource types (4 = broker) are accepted and not kept.
  REQUIRE(img.apply(config_record{4, "1", "log.retention.ms", "5"}).has_value());
  CHECK(img.topic_configs("1").empty());
  SECTION("bad records are refused, the image unchanged") {
    const cluster_image before = img;
    CHECK(img.apply(config_record{config_resource_topic, "a/b", "retention.ms", "1"}).error() == errc::invalid_request);
    CHECK(img.apply(config_record{config_resource_topic, "orders", "", "1"}).error() == errc::invalid_request);
    CHECK(img == before);
  }
  SECTION("removing the topic drops its configs") {
    REQUIRE(img.apply(remove_topic_record{tid}).has_value());
    CHECK(img.topic_configs("orders").empty());
  }
}

// Helpers shared by the replication tests (with support/checks.hpp): image_builder, a
// cluster image assembled from metadata records the way the controller's log builds one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/core/types.hpp>
#include <brook/replication/cluster_image.hpp>
#include <brook/replication/metadata_records.hpp>

#include "support/checks.hpp"

namespace brook::test {

/// Broker ids written as integers: ids{1, 2, 3} is a std::vector<broker_id>.
struct ids : std::vector<broker_id> {
  ids() = default;
  ids(std::initializer_list<std::int32_t> list) {
    for (auto i : list) push_back(broker_id(i));
  }
  ids(std::vector<broker_id> v) : std::vector<broker_id>(std::move(v)) {}  // NOLINT: implicit on purpose
};

/// A cluster image assembled from metadata records, the way the controller's log builds it.
struct image_builder {
  cluster_image img;
  std::map<std::string, uuid> topic_ids;
  std::uint64_t next_id = 100;

  image_builder& brokers(std::initializer_list<std::int32_t> list) {
    for (auto id : list) {
      metadata::register_broker_record r;
      r.broker_id = broker_id(id);
      r.broker_epoch = 10 + id;
      r.incarnation_id = uuid::from_parts(1, static_cast<std::uint64_t>(id) + 1);
      r.fenced = false;
      REQUIRE(img.apply(r));
    }
    return *this;
  }
  image_builder& fence(std::int32_t id) {
    REQUIRE(img.apply(metadata::fence_broker_record{broker_id(id), img.broker(broker_id(id))->epoch}));
    return *this;
  }
  /// A topic whose partition p has replicas[p], all in sync, led by the first.
  image_builder& topic(const std::string& name, std::vector<ids> replicas) {
    metadata::topic_record t;
    t.name = name;
    t.topic_id = uuid::from_parts(0, next_id++);
    REQUIRE(img.apply(t));
    topic_ids[name] = t.topic_id;
    for (std::size_t p = 0; p < replicas.size(); ++p) {
      metadata::partition_record pr;
      pr.partition_id = partition_id(static_cast<std::int32_t>(p));
      pr.topic_id = t.topic_id;
      pr.replicas = replicas[p];
      pr.isr = replicas[p];
      pr.leader = replicas[p].front();
      pr.leader_epoch = leader_epoch(0);
      pr.partition_epoch = 0;
      REQUIRE(img.apply(pr));
    }
    return *this;
  }
  /// A PartitionChangeRecord: a new leader (bumps the leader epoch) and/or a new ISR.
  image_builder& change(const std::string& name, std::int32_t p, std::optional<std::int32_t> leader,
                        std::optional<ids> isr = std::nullopt) {
    metadata::partition_change_record c;
    c.topic_id = topic_ids.at(name);
    c.partition_id = partition_id(p);
    if (leader) c.leader = broker_id(*leader);
    c.isr = std::move(isr);
    REQUIRE(img.apply(c));
    return *this;
  }
};

}  // namespace brook::test

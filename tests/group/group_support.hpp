// Fixtures for coordinator and group consumer tests: a data directory on a manual clock,
// a coordinator with a small offsets topic, and helpers to fill topics.
#pragma once

#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <string>

#include <brook/format/record_batch_builder.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/temp_dir.hpp"

namespace brook::test {

using brook::testing::manual_clock;

struct group_env {
  temp_dir dir{"brook-group"};
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>();
  coordinator_config ccfg = default_coordinator_config();
  std::unique_ptr<data_dir> dd;
  std::unique_ptr<group_coordinator> coord;

  static coordinator_config default_coordinator_config() {
    coordinator_config c;
    c.offsets_topic_num_partitions = 3;
    c.group_initial_rebalance_delay = std::chrono::milliseconds(0);
    return c;
  }

  group_env() { open(); }
  explicit group_env(coordinator_config c) : ccfg(c) { open(); }

  void open() {
    data_dir_options o;
    o.defaults.clock = clk;
    auto d = data_dir::open(dir.path(), o);
    REQUIRE(d);
    dd = std::move(*d);
    auto c = group_coordinator::open(*dd, ccfg);
    REQUIRE(c);
    coord = std::move(*c);
  }
  /// Closes and reopens everything on the same directory (a process restart).
  void reopen() {
    coord.reset();
    REQUIRE(dd->close());
    dd.reset();
    open();
  }

  void create_topic(const std::string& name, int partitions) {
    topic_config tc;
    tc.partitions = partitions;
    REQUIRE(dd->create_topic(name, tc));
  }
  /// Appends n records "v<i>" to one partition; returns the first offset.
  offset produce(const std::string& topic, int partition, int n, const std::string& prefix = "v") {
    auto p = dd->get_partition(topic, partition_id(partition));
    REQUIRE(p);
    record_batch_builder b;
    for (int i = 0; i < n; ++i) {
      std::string v = prefix + std::to_string(i);
      b.append(clk->now_ms(), nullable_bytes::null(), nullable_bytes(v));
    }
    auto r = (*p)->append(b.finish());
    REQUIRE(r);
    return r->base_offset;
  }
  group_consumer_config consumer_config(const std::string& group) const {
    group_consumer_config c;
    c.group_id = group;
    c.consumer.auto_offset_reset = offset_reset::earliest;
    c.consumer.fetch_max_wait = std::chrono::milliseconds(0);
    return c;
  }
};

/// A join or sync answer captured from the coordinator's callback.
template <typename T>
struct reply {
  std::shared_ptr<std::optional<result<T>>> slot = std::make_shared<std::optional<result<T>>>();
  auto callback() {
    return [s = slot](result<T> r) { *s = std::move(r); };
  }
  bool ready() const { return slot->has_value(); }
  const result<T>& get() const {
    REQUIRE(ready());
    return **slot;
  }
};

inline topic_partition tp(const std::string& t, int p) { return topic_partition{t, partition_id(p)}; }

}  // namespace brook::test

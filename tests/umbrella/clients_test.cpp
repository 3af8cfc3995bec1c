// <brook/clients.hpp> compiles on its own (it is this file's first include) and carries
// what it promises: a producer, a group coordinator and a group consumer wired by hand on a
// data directory.
#include <brook/clients.hpp>

#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <string>

#include "support/temp_dir.hpp"

TEST_CASE("<brook/clients.hpp>: a hand-wired producer and group consumer on a data directory") {
  using namespace std::chrono_literals;
  brook::test::temp_dir t("brook-umbrella");
  auto dd = brook::data_dir::open(t.path() / "data");
  REQUIRE(dd.has_value());
  REQUIRE((*dd)->create_topic("orders").has_value());
  {
    brook::producer prod(**dd);
    for (const std::string v : {"a", "b", "c"}) {
      brook::producer_record rec;
      rec.topic = "orders";
      rec.value = v;
      prod.send(std::move(rec));
    }
    REQUIRE(prod.flush().has_value());
  }
  brook::coordinator_config cc;
  cc.offsets_topic_num_partitions = 1;
  cc.group_initial_rebalance_delay = 0ms;
  auto coord = brook::group_coordinator::open(**dd, cc);
  REQUIRE(coord.has_value());
  (*coord)->start();
  brook::group_consumer_config gc;
  gc.group_id = "billing";
  gc.consumer.auto_offset_reset = brook::offset_reset::earliest;
  std::set<std::string> seen;
  {
    brook::group_consumer member(**dd, **coord, gc);
    REQUIRE(member.subscribe({"orders"}).has_value());
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (seen.size() < 3 && std::chrono::steady_clock::now() < deadline) {
      auto recs = member.poll(100ms);
      REQUIRE(recs.has_value());
      for (const auto& r : *recs) seen.insert(r.value().to_string());
    }
    REQUIRE(member.close().has_value());
  }
  CHECK(seen == std::set<std::string>{"a", "b", "c"});
  (*coord)->stop();
  REQUIRE((*dd)->close().has_value());
}

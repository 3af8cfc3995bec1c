// <brook/replication.hpp> compiles on its own (it is this file's first include) and carries
// what it promises: a cluster stepped by hand, written to and read from its leaders.
#include <brook/replication.hpp>

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

TEST_CASE("<brook/replication.hpp>: a 3-broker cluster replicates an acks=all batch") {
  using namespace std::chrono_literals;
  brook::test::temp_dir t("brook-umbrella");
  auto c = brook::cluster::open(t.path() / "cluster");
  REQUIRE(c.has_value());
  REQUIRE((*c)->create_topic("orders", 1, 3).has_value());
  brook::record_batch_builder b;
  b.append(brook::system_clock().now_ms(), "k", "v");  // now: retention (7 days) keeps it
  auto bytes = b.finish();
  std::vector<std::byte> batch(bytes.begin(), bytes.end());
  std::optional<brook::result<brook::append_result>> acked;
  (*c)->produce("orders", brook::partition_id(0), batch, brook::acks_mode::all, 30s,
                [&](const brook::result<brook::append_result>& r) { acked = r; });
  for (int i = 0; i < 100 && !acked; ++i) REQUIRE((*c)->step().has_value());  // followers fetch, the HW moves
  REQUIRE(acked.has_value());
  REQUIRE(acked->has_value());
  auto slice = (*c)->fetch("orders", brook::partition_id(0), brook::offset(0));
  INFO((slice ? std::string("ok") : slice.error().to_string()));
  REQUIRE(slice.has_value());
  CHECK(!slice->empty());
  REQUIRE((*c)->close().has_value());
}

// <brook/embedded.hpp> compiles on its own (it is this file's first include) and carries
// what it promises: a node that hands out a producer.
#include <brook/embedded.hpp>

#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

TEST_CASE("<brook/embedded.hpp>: a node opens, produces and closes") {
  brook::test::temp_dir t("brook-umbrella");
  auto n = brook::node::open(t.path() / "data");
  REQUIRE(n.has_value());
  REQUIRE((*n)->create_topic("orders").has_value());
  {
    auto prod = (*n)->make_producer();
    brook::producer_record rec;
    rec.topic = "orders";
    rec.value = "v";
    auto md = prod->send(std::move(rec)).get();
    REQUIRE(md.has_value());
    CHECK(md->offset == brook::offset(0));
  }
  REQUIRE((*n)->close().has_value());
}

// The Kafka broker's handlers, called in-process (support/handler_calls.hpp): each API's
// answers, its errors and the bad input Kafka names, on a node in a temporary directory.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <brook/embedded.hpp>
#include <brook/server/kafka_broker.hpp>

#include "support/checks.hpp"
#include "support/handler_calls.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using namespace brook::protocol;
using namespace brook::server;
using brook::test::call;

namespace {

std::unique_ptr<node> open_node(const std::filesystem::path& dir) {
  node_options o;
  o.housekeeping_interval = std::chrono::milliseconds(0);
  auto n = node::open(dir, std::move(o));
  if (!n) FAIL("node::open: " << n.error().to_string());
  return std::move(*n);
}

}  // namespace

TEST_CASE("ApiVersions lists the served table at every served version", "[server][kafka_broker]") {
  brook::test::temp_dir tmp("broker");
  auto n = open_node(tmp.path());
  kafka_broker b(*n);
  const auto range = *kafka_broker::apis().find(api_key::api_versions);
  for (std::int16_t v = range.lo; v <= range.hi; ++v) {
    auto r = call(b, api_versions_request{}, v);
    REQUIRE_OK(r);
    CHECK(r->error_code == 0);
    CHECK(r->api_keys.size() == kafka_broker::apis().apis().size());
  }
}

#include <catch2/catch.hpp>

#include <brook/protocol/find_coordinator.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("FindCoordinator byte for byte: one key (v0-3), many keys (v4+)", "[protocol][find_coordinator]") {
  find_coordinator_request q;
  q.key = "g";
  CHECK(encoded(q, 0) == bytes_of({0, 1, 'g'}));
  CHECK(encoded(q, 1) == bytes_of({0, 1, 'g', 0}));
  CHECK(encoded(q, 3) == bytes_of({2, 'g', 0, 0}));
  auto v4 = codec::encode(q, 4);  // Key is gone in v4: not ignorable, so refused
  REQUIRE_FALSE(v4);
  CHECK(v4.error() == errc::unsupported_version);
  find_coordinator_request many;
  many.coordinator_keys = {"a", "b"};
  CHECK(encoded(many, 4) == bytes_of({0, 3, 2, 'a', 2, 'b', 0}));
  CHECK_FALSE(codec::encode(many, 3));
  find_coordinator_request txn;
  txn.key = "t";
  txn.key_type = static_cast<std::int8_t>(coordinator_type::transaction);
  CHECK_FALSE(codec::encode(txn, 0));  // v0 can only ask for a group's coordinator
  find_coordinator_response r;
  r.node_id = broker_id{1};
  r.host = "h";
  r.port = 9092;
  r.error_message.reset();  // Kafka's default is "", a broker with no error sends null
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 0, 0, 1, 0, 1, 'h', 0, 0, 0x23, 0x84}));
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 1, 'h', 0, 0, 0x23, 0x84}));
  find_coordinator_response r4;
  r4.coordinators.push_back({"g", broker_id{1}, "h", 9092, 0, std::nullopt});
  CHECK(encoded(r4, 4) == bytes_of({0, 0, 0, 0, 2, 2, 'g', 0, 0, 0, 1, 2, 'h', 0, 0, 0x23, 0x84, 0, 0, 0, 0, 0}));
}

TEST_CASE("FindCoordinator round-trips at every version", "[protocol][find_coordinator]") {
  for (std::int16_t v = 0; v <= 6; ++v) {
    INFO("v" << v);
    find_coordinator_request q;
    find_coordinator_response r;
    if (v <= 3) {
      q.key = "group";
      r.error_code = 15;  // COORDINATOR_NOT_AVAILABLE
      r.node_id = broker_id{-1};
      if (v >= 1) r.error_message = "loading";
    } else {
      q.coordinator_keys = {"g1", "g2", "g3"};
      r.coordinators = {{"g1", broker_id{0}, "localhost", 9092, 0, std::nullopt},
                        {"g2", broker_id{-1}, "", -1, 15, "not yet"}};
    }
    if (v >= 1) {
      q.key_type = 0;
      r.throttle_time_ms = 3;
    }
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
}

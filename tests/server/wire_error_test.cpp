#include <cerrno>
#include <cstdint>

#include <catch2/catch.hpp>

#include <brook/server/wire_error.hpp>

using namespace brook;
using brook::server::coordinator_wire_error_code;
using brook::server::wire_error_code;

namespace {
std::int16_t code(errc c) { return static_cast<std::int16_t>(c); }
}  // namespace

TEST_CASE("the broker's codes: Kafka's pass and brook's own become Kafka's nearest", "[server][wire_error]") {
  CHECK(wire_error_code(make_error(errc::corrupt_message, "x")) == code(errc::corrupt_message));
  CHECK(wire_error_code(make_error(errc::not_coordinator, "x")) == code(errc::not_coordinator));
  CHECK(wire_error_code(make_error(errc::log_dir_locked, "x")) == code(errc::kafka_storage_error));
  CHECK(wire_error_code(make_error(errc::timeout, "x")) == code(errc::request_timed_out));
  CHECK(wire_error_code(make_error(errc::invalid_argument, "x")) == code(errc::invalid_request));
  CHECK(wire_error_code(make_error(errc::closed, "x")) == code(errc::unknown_server_error));
  CHECK(wire_error_code(make_error(errc::wakeup, "x")) == code(errc::unknown_server_error));
  CHECK(wire_error_code(make_system_error(ENOSPC, "append")) == code(errc::kafka_storage_error));
}

TEST_CASE("no brook-only code reaches the wire as a number Kafka does not know", "[server][wire_error]") {
  for (int v = 1000; v < 1100; ++v) {
    const error e = make_error(static_cast<errc>(v), "x");
    INFO("code " << v);
    CHECK(wire_error_code(e) < 1000);
    CHECK(coordinator_wire_error_code(e) < 1000);
  }
}

TEST_CASE("the coordinator's codes remap its log's failures as Kafka's coordinator does", "[server][wire_error]") {
  CHECK(coordinator_wire_error_code(make_error(errc::illegal_generation, "x")) == code(errc::illegal_generation));
  CHECK(coordinator_wire_error_code(make_error(errc::request_timed_out, "x")) == code(errc::coordinator_not_available));
  CHECK(coordinator_wire_error_code(make_error(errc::not_enough_replicas, "x")) ==
        code(errc::coordinator_not_available));
  CHECK(coordinator_wire_error_code(make_error(errc::timeout, "x")) == code(errc::coordinator_not_available));
  CHECK(coordinator_wire_error_code(make_error(errc::closed, "x")) == code(errc::coordinator_not_available));
  CHECK(coordinator_wire_error_code(make_error(errc::not_leader_or_follower, "x")) == code(errc::not_coordinator));
  CHECK(coordinator_wire_error_code(make_error(errc::kafka_storage_error, "x")) == code(errc::not_coordinator));
  CHECK(coordinator_wire_error_code(make_system_error(EIO, "append")) == code(errc::not_coordinator));
  CHECK(coordinator_wire_error_code(make_error(errc::invalid_argument, "x")) == code(errc::invalid_request));
  CHECK(coordinator_wire_error_code(make_error(errc::log_dir_locked, "x")) == code(errc::unknown_server_error));
  CHECK(coordinator_wire_error_code(make_error(errc::wakeup, "x")) == code(errc::unknown_server_error));
}

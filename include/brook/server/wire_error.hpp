// The Kafka error code a brook error travels as on the wire: one mapping for the broker's
// APIs and one for the group coordinator's, which remaps the failures of its own log the way
// Kafka's coordinator does.
//
//   out.error_code = server::wire_error_code(r.error());              // Produce, Fetch, ...
//   out.error_code = server::coordinator_wire_error_code(r.error());  // the group APIs
//
// brook's errc values below 1000 are Kafka's codes and travel as they are. brook's own codes
// (>= 1000: log_dir_locked, timeout, closed, invalid_argument, wakeup, and any added later)
// are not Kafka's and must never reach a client as numbers it does not know: each becomes the
// nearest Kafka code, and one without a nearest code UNKNOWN_SERVER_ERROR. An error of another
// category (an OS error from storage) is KAFKA_STORAGE_ERROR for the broker.
//
// The coordinator (Kafka's GroupCoordinatorService, when the append of a group record fails):
// a timeout or too few replicas is COORDINATOR_NOT_AVAILABLE, a storage error or a lost
// leadership NOT_COORDINATOR (an OS error too), so that a client looks for the coordinator
// again rather than failing.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include <brook/core/error.hpp>

namespace brook::server {

/// The code `e` travels as in the broker's answers (Produce, Fetch, Metadata, ...).
inline std::int16_t wire_error_code(const error& e) {
  if (e.code().category() != error_category()) return static_cast<std::int16_t>(errc::kafka_storage_error);
  switch (static_cast<errc>(e.code().value())) {
    case errc::log_dir_locked: return static_cast<std::int16_t>(errc::kafka_storage_error);
    case errc::timeout: return static_cast<std::int16_t>(errc::request_timed_out);
    case errc::invalid_argument: return static_cast<std::int16_t>(errc::invalid_request);
    default: break;
  }
  const int v = e.code().value();
  return v >= 1000 ? static_cast<std::int16_t>(errc::unknown_server_error) : static_cast<std::int16_t>(v);
}

/// The code `e` travels as in the group APIs' answers.
inline std::int16_t coordinator_wire_error_code(const error& e) {
  if (e.code().category() != error_category()) return static_cast<std::int16_t>(errc::not_coordinator);
  switch (static_cast<errc>(e.code().value())) {
    case errc::request_timed_out:
    case errc::not_enough_replicas:
    case errc::timeout:
    case errc::closed: return static_cast<std::int16_t>(errc::coordinator_not_available);
    case errc::not_leader_or_follower:
    case errc::kafka_storage_error: return static_cast<std::int16_t>(errc::not_coordinator);
    case errc::log_dir_locked: return static_cast<std::int16_t>(errc::unknown_server_error);
    default: return wire_error_code(e);
  }
}

}  // namespace brook::server

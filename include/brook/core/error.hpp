// Error codes and the error type. result<T> is in core/result.hpp.
//
// brook::errc mirrors Apache Kafka's protocol error codes (same names in
// snake_case, same numbers) so a custom broker built on brook can put them on
// the wire unchanged. Codes brook needs that Kafka has no number for live at
// 1000 and above.
//
// Fallible operations return result<T>: a value, or a brook::error that carries
// a std::error_code (category brook::error_category() for errc values,
// std::system_category() for OS errors) and a human message naming the file
// and byte position where that applies.
//
// Thread-safety: all types here are values; distinct objects may be used from
// distinct threads, one object is not synchronised.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace brook {

enum class errc : int {
  unknown_server_error = -1,
  none = 0,
  offset_out_of_range = 1,
  corrupt_message = 2,
  unknown_topic_or_partition = 3,
  invalid_fetch_size = 4,
  leader_not_available = 5,
  not_leader_or_follower = 6,
  request_timed_out = 7,
  broker_not_available = 8,
  record_too_large = 10,  // Kafka: MESSAGE_TOO_LARGE
  offset_metadata_too_large = 12,
  coordinator_load_in_progress = 14,
  coordinator_not_available = 15,
  not_coordinator = 16,
  invalid_topic = 17,  // Kafka: INVALID_TOPIC_EXCEPTION
  record_list_too_large = 18,
  not_enough_replicas = 19,
  not_enough_replicas_after_append = 20,
  invalid_required_acks = 21,
  illegal_generation = 22,
  inconsistent_group_protocol = 23,
  invalid_group_id = 24,
  unknown_member_id = 25,
  invalid_session_timeout = 26,
  rebalance_in_progress = 27,
  invalid_commit_offset_size = 28,
  topic_authorization_failed = 29,
  invalid_timestamp = 32,
  unsupported_version = 35,
  topic_already_exists = 36,
  invalid_partitions = 37,
  invalid_replication_factor = 38,
  invalid_config = 40,
  invalid_request = 42,
  policy_violation = 44,
  kafka_storage_error = 56,
  log_dir_not_found = 57,
  non_empty_group = 68,
  group_id_not_found = 69,
  fenced_leader_epoch = 74,
  unknown_leader_epoch = 75,
  stale_broker_epoch = 77,
  unsupported_compression_type = 76,
  member_id_required = 79,
  preferred_leader_not_available = 80,
  group_max_size_reached = 81,
  fenced_instance_id = 82,
  eligible_leaders_not_available = 83,
  election_not_needed = 84,
  invalid_record = 87,
  invalid_update_version = 99,
  unknown_topic_id = 100,
  inconsistent_topic_id = 103,
  ineligible_replica = 107,
  // brook-specific (no Kafka number).
  log_dir_locked = 1000,    // another process owns the data directory
  timeout = 1001,           // a bounded wait expired (client side)
  closed = 1002,            // the object was closed while the call waited
  invalid_argument = 1003,  // a caller-supplied argument is out of its domain
  wakeup = 1004,            // a blocking call was interrupted by wakeup() from another thread
};

/// Kafka-style upper-case name of a code ("CORRUPT_MESSAGE"), or "UNKNOWN".
constexpr std::string_view errc_name(errc e) noexcept {
  switch (e) {
    case errc::unknown_server_error: return "UNKNOWN_SERVER_ERROR";
    case errc::none: return "NONE";
    case errc::offset_out_of_range: return "OFFSET_OUT_OF_RANGE";
    case errc::corrupt_message: return "CORRUPT_MESSAGE";
    case errc::unknown_topic_or_partition: return "UNKNOWN_TOPIC_OR_PARTITION";
    case errc::invalid_fetch_size: return "INVALID_FETCH_SIZE";
    case errc::leader_not_available: return "LEADER_NOT_AVAILABLE";
    case errc::not_leader_or_follower: return "NOT_LEADER_OR_FOLLOWER";
    case errc::request_timed_out: return "REQUEST_TIMED_OUT";
    case errc::broker_not_available: return "BROKER_NOT_AVAILABLE";
    case errc::record_too_large: return "MESSAGE_TOO_LARGE";
    case errc::offset_metadata_too_large: return "OFFSET_METADATA_TOO_LARGE";
    case errc::coordinator_load_in_progress: return "COORDINATOR_LOAD_IN_PROGRESS";
    case errc::coordinator_not_available: return "COORDINATOR_NOT_AVAILABLE";
    case errc::not_coordinator: return "NOT_COORDINATOR";
    case errc::invalid_topic: return "INVALID_TOPIC_EXCEPTION";
    case errc::record_list_too_large: return "RECORD_LIST_TOO_LARGE";
    case errc::not_enough_replicas: return "NOT_ENOUGH_REPLICAS";
    case errc::not_enough_replicas_after_append: return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    case errc::invalid_required_acks: return "INVALID_REQUIRED_ACKS";
    case errc::illegal_generation: return "ILLEGAL_GENERATION";
    case errc::inconsistent_group_protocol: return "INCONSISTENT_GROUP_PROTOCOL";
    case errc::invalid_group_id: return "INVALID_GROUP_ID";
    case errc::unknown_member_id: return "UNKNOWN_MEMBER_ID";
    case errc::invalid_session_timeout: return "INVALID_SESSION_TIMEOUT";
    case errc::rebalance_in_progress: return "REBALANCE_IN_PROGRESS";
    case errc::invalid_commit_offset_size: return "INVALID_COMMIT_OFFSET_SIZE";
    case errc::topic_authorization_failed: return "TOPIC_AUTHORIZATION_FAILED";
    case errc::invalid_timestamp: return "INVALID_TIMESTAMP";
    case errc::unsupported_version: return "UNSUPPORTED_VERSION";
    case errc::topic_already_exists: return "TOPIC_ALREADY_EXISTS";
    case errc::invalid_partitions: return "INVALID_PARTITIONS";
    case errc::invalid_replication_factor: return "INVALID_REPLICATION_FACTOR";
    case errc::invalid_config: return "INVALID_CONFIG";
    case errc::invalid_request: return "INVALID_REQUEST";
    case errc::policy_violation: return "POLICY_VIOLATION";
    case errc::kafka_storage_error: return "KAFKA_STORAGE_ERROR";
    case errc::log_dir_not_found: return "LOG_DIR_NOT_FOUND";
    case errc::non_empty_group: return "NON_EMPTY_GROUP";
    case errc::group_id_not_found: return "GROUP_ID_NOT_FOUND";
    case errc::fenced_leader_epoch: return "FENCED_LEADER_EPOCH";
    case errc::unknown_leader_epoch: return "UNKNOWN_LEADER_EPOCH";
    case errc::stale_broker_epoch: return "STALE_BROKER_EPOCH";
    case errc::unsupported_compression_type: return "UNSUPPORTED_COMPRESSION_TYPE";
    case errc::member_id_required: return "MEMBER_ID_REQUIRED";
    case errc::preferred_leader_not_available: return "PREFERRED_LEADER_NOT_AVAILABLE";
    case errc::group_max_size_reached: return "GROUP_MAX_SIZE_REACHED";
    case errc::fenced_instance_id: return "FENCED_INSTANCE_ID";
    case errc::eligible_leaders_not_available: return "ELIGIBLE_LEADERS_NOT_AVAILABLE";
    case errc::election_not_needed: return "ELECTION_NOT_NEEDED";
    case errc::invalid_record: return "INVALID_RECORD";
    case errc::invalid_update_version: return "INVALID_UPDATE_VERSION";
    case errc::unknown_topic_id: return "UNKNOWN_TOPIC_ID";
    case errc::inconsistent_topic_id: return "INCONSISTENT_TOPIC_ID";
    case errc::ineligible_replica: return "INELIGIBLE_REPLICA";
    case errc::log_dir_locked: return "LOG_DIR_LOCKED";
    case errc::timeout: return "TIMEOUT";
    case errc::closed: return "CLOSED";
    case errc::invalid_argument: return "INVALID_ARGUMENT";
    case errc::wakeup: return "WAKEUP";
  }
  return "UNKNOWN";
}

namespace detail {
class brook_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "brook"; }
  std::string message(int ev) const override { return std::string(errc_name(static_cast<errc>(ev))); }
};
}  // namespace detail

/// The category of brook::errc values. Thread-safe.
inline const std::error_category& error_category() noexcept {
  static const detail::brook_category cat;
  return cat;
}

inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

}  // namespace brook

template <>
struct std::is_error_code_enum<brook::errc> : std::true_type {};

namespace brook {

/// An error: a code plus a message for humans ("00000000000000000000.log at byte 4096: crc mismatch").
class error {
 public:
  error() = default;
  error(std::error_code code, std::string message) : code_(code), message_(std::move(message)) {}
  error(errc code, std::string message) : code_(make_error_code(code)), message_(std::move(message)) {}

  const std::error_code& code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  /// "CORRUPT_MESSAGE: <message>" for brook codes; OS errors carry their reason in the
  /// message already ("open /x: No such file or directory"). What a tool prints on one line.
  std::string to_string() const {
    if (message_.empty()) return code_.message();
    if (code_.category() != error_category()) return message_;
    return code_.message() + ": " + message_;
  }
  /// True when the code is `c` (so `e != errc::timeout` works too). An OS error (errno in
  /// std::system_category(): a full disk, an I/O error) is Kafka's KAFKA_STORAGE_ERROR, as a
  /// Java broker turns every IOException of a log into a KafkaStorageException: it equals
  /// errc::kafka_storage_error and keeps its errno in code().
  friend bool operator==(const error& e, errc c) noexcept {
    if (c == errc::kafka_storage_error && e.code_.category() == std::system_category()) return true;
    return e.code_ == make_error_code(c);
  }

 private:
  std::error_code code_;
  std::string message_;
};

/// error with a fmt-formatted message.
template <typename... Args>
error make_error(errc code, fmt::format_string<Args...> f, Args&&... args) {
  return error(code, fmt::format(f, std::forward<Args>(args)...));
}

/// error from errno (system_category) with a fmt-formatted message.
template <typename... Args>
error make_system_error(int err, fmt::format_string<Args...> f, Args&&... args) {
  std::error_code ec(err, std::system_category());
  return error(ec, fmt::format(f, std::forward<Args>(args)...) + ": " + ec.message());
}

}  // namespace brook

/// `{}` prints error::to_string(): "CORRUPT_MESSAGE: <message>".
template <>
struct fmt::formatter<brook::error> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const brook::error& e, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(e.to_string(), ctx);
  }
};

/// `{}` prints Kafka's name of the code: "CORRUPT_MESSAGE".
template <>
struct fmt::formatter<brook::errc> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(brook::errc e, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(brook::errc_name(e), ctx);
  }
};

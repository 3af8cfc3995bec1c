// The records of the cluster metadata log (`__cluster_metadata-0`), byte for
// byte as Apache Kafka's KRaft controller writes them: each record's value is
// one ApiMessageAndVersion, its key is null.
//
// Sources (apache/kafka): metadata/src/main/resources/common/metadata/
// RegisterBrokerRecord.json (apiKey 0), UnregisterBrokerRecord.json (1),
// TopicRecord.json (2), PartitionRecord.json (3), PartitionChangeRecord.json (5),
// FenceBrokerRecord.json (7), UnfenceBrokerRecord.json (8), RemoveTopicRecord.json (9),
// BrokerRegistrationChangeRecord.json (17), NoOpRecord.json (20);
// server-common/.../serialization/AbstractApiMessageSerde.java (the frame);
// clients/.../common/Uuid.java (topic ids). Every one of these messages is
// flexible from version 0 ("flexibleVersions": "0+"): strings, arrays and
// bytes use the compact forms and every struct ends with a tagged-field section.
//
// Primitive types (as Kafka's generated code writes them):
//   int8/int16/int32/int64  big-endian two's complement; uint16 big-endian
//   bool                    one byte, 0 = false, anything else = true (Readable.readByte() != 0)
//   uuid                    16 bytes: most significant 8 bytes, then least significant 8
//   uvarint                 unsigned base-128, low group first, at most 5 bytes
//   compact string          uvarint N+1, N bytes of UTF-8 (uvarint 0 = null, nullable fields only)
//   compact [T]             uvarint N+1, N elements (uvarint 0 = null, nullable fields only)
//   tagged fields           uvarint count, then per field in ascending tag order:
//                           uvarint tag | uvarint size | size bytes (the field as it would be
//                           written in the body). A tagged field equal to its default is not written.
//
// FRAME (AbstractApiMessageSerde, frame version 1):
//   +---------------+-----------+-----------+-----------------------------+
//   | frame version | api key   | version   | message (flexible version)  |
//   | uvarint = 1   | uvarint   | uvarint   | fields..., tagged fields    |
//   +---------------+-----------+-----------+-----------------------------+
//   A frame version other than 1, an api key or version above 32767, an
//   unknown api key, a version brook does not read and trailing bytes are all
//   corrupt_message (Kafka's MetadataParseException).
//
// RECORDS (field: type; "tag N" = in the tagged-field section with tag N):
//
//   RegisterBrokerRecord (0), v0-v3 read, v2 written:
//     BrokerId int32 | IsMigratingZkBroker bool (v2+) | IncarnationId uuid | BrokerEpoch int64
//     | EndPoints compact [Name compact string, Host compact string, Port uint16,
//                          SecurityProtocol int16, tagged fields]
//     | Features compact [Name compact string, MinSupportedVersion int16,
//                         MaxSupportedVersion int16, tagged fields]
//     | Rack compact nullable string | Fenced bool | InControlledShutdown bool (v1+)
//     | tagged fields (v3: tag 0 LogDirs []uuid — not modelled: skipped like an unknown tag)
//     e.g. v2 broker 1, incarnation 0, epoch 7, no endpoints/features, rack null, fenced:
//     01 00 02 | 00 00 00 01 | 00 | 00 x16 | 00 00 00 00 00 00 00 07 | 01 | 01 | 00 | 01 | 00 | 00
//
//   UnregisterBrokerRecord (1), v0:  BrokerId int32 | BrokerEpoch int64 | tagged fields
//   FenceBrokerRecord (7), v0:       Id int32 | Epoch int64 | tagged fields
//   UnfenceBrokerRecord (8), v0:     Id int32 | Epoch int64 | tagged fields
//     e.g. fence broker 3 at epoch 9:  01 07 00 | 00 00 00 03 | 00 00 00 00 00 00 00 09 | 00
//
//   TopicRecord (2), v0:             Name compact string | TopicId uuid | tagged fields
//     e.g. "t" with id 00..01:         01 02 00 | 02 74 | 00 x15 01 | 00
//
//   RemoveTopicRecord (9), v0:       TopicId uuid | tagged fields
//
//   PartitionRecord (3), v0-v2 read, v0 written:
//     PartitionId int32 | TopicId uuid | Replicas compact [int32] | Isr compact [int32]
//     | RemovingReplicas compact [int32] | AddingReplicas compact [int32] | Leader int32
//     | LeaderEpoch int32 | PartitionEpoch int32 | Directories compact [uuid] (v1+)
//     | tagged fields: tag 0 LeaderRecoveryState int8 (default 0),
//                      tag 1 EligibleLeaderReplicas compact nullable [int32] (v2+, default null),
//                      tag 2 LastKnownElr compact nullable [int32] (v2+, default null)
//     e.g. v0 partition 0 of topic 00..01, replicas [1,2], isr [1,2], leader 1, epochs 0:
//     01 03 00 | 00 00 00 00 | 00 x15 01 | 03 00 00 00 01 00 00 00 02 | 03 00 00 00 01 00 00 00 02
//     | 01 | 01 | 00 00 00 01 | 00 00 00 00 | 00 00 00 00 | 00
//
//   PartitionChangeRecord (5), v0-v2 read, v0 written: PartitionId int32 | TopicId uuid
//     | tagged fields: tag 0 Isr compact nullable [int32] (default null = unchanged)
//                      tag 1 Leader int32 (default -2 = unchanged; -1 = no leader)
//                      tag 2 Replicas, tag 3 RemovingReplicas, tag 4 AddingReplicas
//                            compact nullable [int32] (default null = unchanged)
//                      tag 5 LeaderRecoveryState int8 (default -1 = unchanged)
//                      tag 6 EligibleLeaderReplicas, tag 7 LastKnownElr (v2+),
//                            compact nullable [int32] (default null)
//                      tag 8 Directories compact nullable [uuid] (v1+, default null)
//     e.g. partition 2 of topic 00..01, new isr [1], new leader 1:
//     01 05 00 | 00 00 00 02 | 00 x15 01 | 02 | 00 05 02 00 00 00 01 | 01 04 00 00 00 01
//
//   BrokerRegistrationChangeRecord (17), v0-v2 read, v0 written: BrokerId int32 | BrokerEpoch int64
//     | tagged fields: tag 0 Fenced int8 (-1 unfenced, 0 no change (default), 1 fenced)
//                      tag 1 InControlledShutdown int8 (v1+; 0 no change (default), 1 in controlled shutdown)
//                      tag 2 LogDirs []uuid (v2+; not modelled: skipped)
//
//   NoOpRecord (20), v0: tagged fields only (01 14 00 00). brook's metadata_log writes one
//     when a new controller epoch starts without other changes, as KRaft leaders do.
//
// Versions written: PartitionRecord v0 and PartitionChangeRecord v0 (what a
// controller below metadata.version 3.7 writes: v1 adds log directories,
// KIP-858, v2 eligible leader replicas, KIP-966, neither modelled by brook's
// image), RegisterBrokerRecord v2 (metadata.version 3.4-3.6: v1 adds
// InControlledShutdown, v2 IsMigratingZkBroker = false), BrokerRegistrationChangeRecord
// v0; the other records have only v0. Newer versions are read (their extra
// fields kept where the struct has them) so a log written by a newer Kafka
// decodes. encode_metadata_record takes an explicit version for tests and
// tools; fields that version lacks must hold their defaults.
//
// Decoding checks every length against the bytes left before allocating and
// fails with errc::corrupt_message naming the record type, the field and the
// byte position inside the record value. A known tagged field whose declared
// size differs from what its value took is corrupt; unknown tags are skipped.
//
// Topic ids: brook::uuid::random(rng) draws 128 bits from a caller-provided
// (seeded) engine and makes them a version-4 UUID, skipping the values Kafka
// reserves (Uuid.ZERO_UUID, Uuid.METADATA_TOPIC_ID = 00..01) and the ones whose
// base64 text starts with '-' (Uuid.randomUuid does the same, so ids never look
// like command-line flags). Deterministic for a given engine state.
//
// Thread-safety: all types are values; the functions are pure and reentrant.
#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/bytes.hpp>
#include <brook/codec/message_codec.hpp>

namespace brook::metadata {

/// Kafka's MetadataRecordType api keys (the ones brook reads and writes).
enum class record_type : std::int16_t {
  register_broker = 0,
  unregister_broker = 1,
  topic = 2,
  partition = 3,
  partition_change = 5,
  fence_broker = 7,
  unfence_broker = 8,
  remove_topic = 9,
  broker_registration_change = 17,
  no_op = 20,
};

/// LeaderConstants: no leader, and "leader unchanged" in PartitionChangeRecord.
inline constexpr std::int32_t no_leader = -1;
inline constexpr std::int32_t no_leader_change = -2;

struct broker_endpoint {
  std::string name;
  std::string host;
  std::uint16_t port = 0;
  std::int16_t security_protocol = 0;
  friend bool operator==(const broker_endpoint&, const broker_endpoint&) = default;
};

struct broker_feature {
  std::string name;
  std::int16_t min_supported_version = 0;
  std::int16_t max_supported_version = 0;
  friend bool operator==(const broker_feature&, const broker_feature&) = default;
};

struct register_broker_record {
  static constexpr record_type type = record_type::register_broker;
  static constexpr std::int16_t min_version = 0, max_version = 3, written_version = 2;
  std::int32_t broker_id = 0;
  bool is_migrating_zk_broker = false;  ///< v2+
  uuid incarnation_id{};
  std::int64_t broker_epoch = 0;
  std::vector<broker_endpoint> endpoints{};
  std::vector<broker_feature> features{};
  std::optional<std::string> rack{};
  bool fenced = true;
  bool in_controlled_shutdown = false;  ///< v1+
  friend bool operator==(const register_broker_record&, const register_broker_record&) = default;
};

struct unregister_broker_record {
  static constexpr record_type type = record_type::unregister_broker;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  std::int32_t broker_id = 0;
  std::int64_t broker_epoch = 0;
  friend bool operator==(const unregister_broker_record&, const unregister_broker_record&) = default;
};

struct topic_record {
  static constexpr record_type type = record_type::topic;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  std::string name{};
  uuid topic_id{};
  friend bool operator==(const topic_record&, const topic_record&) = default;
};

struct partition_record {
  static constexpr record_type type = record_type::partition;
  static constexpr std::int16_t min_version = 0, max_version = 2, written_version = 0;
  std::int32_t partition_id = -1;
  uuid topic_id{};
  std::vector<std::int32_t> replicas{};
  std::vector<std::int32_t> isr{};
  std::vector<std::int32_t> removing_replicas{};
  std::vector<std::int32_t> adding_replicas{};
  std::int32_t leader = no_leader;
  std::int8_t leader_recovery_state = 0;  ///< tag 0: 0 recovered, 1 recovering (unclean election)
  std::int32_t leader_epoch = -1;
  std::int32_t partition_epoch = -1;
  std::vector<uuid> directories{};                                      ///< v1+
  std::optional<std::vector<std::int32_t>> eligible_leader_replicas{};  ///< v2+, tag 1
  std::optional<std::vector<std::int32_t>> last_known_elr{};            ///< v2+, tag 2
  friend bool operator==(const partition_record&, const partition_record&) = default;
};

/// Absent (nullopt / -2 / -1) fields mean "unchanged".
struct partition_change_record {
  static constexpr record_type type = record_type::partition_change;
  static constexpr std::int16_t min_version = 0, max_version = 2, written_version = 0;
  std::int32_t partition_id = -1;
  uuid topic_id{};
  std::optional<std::vector<std::int32_t>> isr{};                       ///< tag 0
  std::int32_t leader = no_leader_change;                             ///< tag 1: -2 unchanged, -1 none
  std::optional<std::vector<std::int32_t>> replicas{};                  ///< tag 2
  std::optional<std::vector<std::int32_t>> removing_replicas{};         ///< tag 3
  std::optional<std::vector<std::int32_t>> adding_replicas{};           ///< tag 4
  std::int8_t leader_recovery_state = -1;                             ///< tag 5: -1 unchanged
  std::optional<std::vector<std::int32_t>> eligible_leader_replicas{};  ///< v2+, tag 6
  std::optional<std::vector<std::int32_t>> last_known_elr{};            ///< v2+, tag 7
  std::optional<std::vector<uuid>> directories{};                       ///< v1+, tag 8
  friend bool operator==(const partition_change_record&, const partition_change_record&) = default;
};

struct fence_broker_record {
  static constexpr record_type type = record_type::fence_broker;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  std::int32_t id = 0;
  std::int64_t epoch = 0;
  friend bool operator==(const fence_broker_record&, const fence_broker_record&) = default;
};

struct unfence_broker_record {
  static constexpr record_type type = record_type::unfence_broker;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  std::int32_t id = 0;
  std::int64_t epoch = 0;
  friend bool operator==(const unfence_broker_record&, const unfence_broker_record&) = default;
};

struct remove_topic_record {
  static constexpr record_type type = record_type::remove_topic;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  uuid topic_id{};
  friend bool operator==(const remove_topic_record&, const remove_topic_record&) = default;
};

struct broker_registration_change_record {
  static constexpr record_type type = record_type::broker_registration_change;
  static constexpr std::int16_t min_version = 0, max_version = 2, written_version = 0;
  std::int32_t broker_id = 0;
  std::int64_t broker_epoch = 0;
  std::int8_t fenced = 0;                  ///< tag 0: -1 unfenced, 0 no change, 1 fenced
  std::int8_t in_controlled_shutdown = 0;  ///< v1+, tag 1: 0 no change, 1 in controlled shutdown
  friend bool operator==(const broker_registration_change_record&, const broker_registration_change_record&) = default;
};

struct no_op_record {
  static constexpr record_type type = record_type::no_op;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  friend bool operator==(const no_op_record&, const no_op_record&) = default;
};

using metadata_record = std::variant<register_broker_record, unregister_broker_record, topic_record, partition_record,
                                     partition_change_record, fence_broker_record, unfence_broker_record,
                                     remove_topic_record, broker_registration_change_record, no_op_record>;

/// Kafka's name for a record type ("PartitionChangeRecord").
constexpr std::string_view record_type_name(record_type t) noexcept {
  switch (t) {
    case record_type::register_broker: return "RegisterBrokerRecord";
    case record_type::unregister_broker: return "UnregisterBrokerRecord";
    case record_type::topic: return "TopicRecord";
    case record_type::partition: return "PartitionRecord";
    case record_type::partition_change: return "PartitionChangeRecord";
    case record_type::fence_broker: return "FenceBrokerRecord";
    case record_type::unfence_broker: return "UnfenceBrokerRecord";
    case record_type::remove_topic: return "RemoveTopicRecord";
    case record_type::broker_registration_change: return "BrokerRegistrationChangeRecord";
    case record_type::no_op: return "NoOpRecord";
  }
  return "UnknownRecord";
}

inline record_type type_of(const metadata_record& r) noexcept {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::type; }, r);
}

/// A decoded record and the version it was written at.
struct decoded_record {
  metadata_record record{};
  std::int16_t version = 0;
};

inline constexpr std::uint32_t metadata_frame_version = 1;

namespace detail {

/// Bounds-checked reader for the flexible primitives above (message_reader lacks int8,
/// uint16, uuid and skipping). Errors: corrupt_message "<what>: field '<f>' at byte <n>: ...".
class flex_reader {
 public:
  flex_reader(std::span<const std::byte> b, std::string what) : b_(b), what_(std::move(what)) {}
  std::size_t position() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return b_.size() - pos_; }
  void set_what(std::string w) { what_ = std::move(w); }

  template <typename... Args>
  brook::error fail_at(std::size_t pos, std::string_view field, fmt::format_string<Args...> f, Args&&... args) const {
    return make_error(errc::corrupt_message, "{}: field '{}' at byte {}: {}", what_, field, pos,
                      fmt::format(f, std::forward<Args>(args)...));
  }

  result<void> int8(std::string_view f, std::int8_t& out) {
    BROOK_TRY(need(f, 1, "int8"));
    out = static_cast<std::int8_t>(b_[pos_++]);
    return ok();
  }
  result<void> boolean(std::string_view f, bool& out) {
    std::int8_t v = 0;
    BROOK_TRY(int8(f, v));
    out = v != 0;
    return ok();
  }
  result<void> int16(std::string_view f, std::int16_t& out) {
    BROOK_TRY(need(f, 2, "int16"));
    out = brook::detail::load_be16(b_.data() + pos_);
    pos_ += 2;
    return ok();
  }
  result<void> uint16(std::string_view f, std::uint16_t& out) {
    std::int16_t v = 0;
    BROOK_TRY(int16(f, v));
    out = static_cast<std::uint16_t>(v);
    return ok();
  }
  result<void> int32(std::string_view f, std::int32_t& out) {
    BROOK_TRY(need(f, 4, "int32"));
    out = brook::detail::load_be32(b_.data() + pos_);
    pos_ += 4;
    return ok();
  }
  result<void> int64(std::string_view f, std::int64_t& out) {
    BROOK_TRY(need(f, 8, "int64"));
    out = brook::detail::load_be64(b_.data() + pos_);
    pos_ += 8;
    return ok();
  }
  result<void> id(std::string_view f, uuid& out) {
    BROOK_TRY(need(f, 16, "uuid"));
    for (std::size_t i = 0; i < 16; ++i) out.bytes[i] = static_cast<std::uint8_t>(b_[pos_ + i]);
    pos_ += 16;
    return ok();
  }
  result<void> uvarint(std::string_view f, std::uint32_t& out) {
    const std::size_t start = pos_;
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 5; ++i) {
      if (pos_ >= b_.size()) return fail_at(start, f, "unsigned varint runs past the end ({} bytes in all)", b_.size());
      const auto b = static_cast<std::uint8_t>(b_[pos_++]);
      if (i == 4 && b > 0x0f) return fail_at(start, f, "unsigned varint longer than 32 bits");
      v |= static_cast<std::uint32_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        out = v;
        return ok();
      }
    }
    return fail_at(start, f, "unsigned varint longer than 32 bits");
  }
  result<void> compact_nullable_string(std::string_view f, std::optional<std::string>& out) {
    const std::size_t start = pos_;
    std::uint32_t n1 = 0;
    BROOK_TRY(uvarint(f, n1));
    if (n1 == 0) {
      out.reset();
      return ok();
    }
    const std::size_t n = n1 - 1;
    if (n > brook::detail::max_message_string_size)
      return fail_at(start, f, "compact string length {} exceeds {}", n, brook::detail::max_message_string_size);
    if (n > remaining()) return fail_at(start, f, "string of {} bytes runs past the end ({} left)", n, remaining());
    out.emplace(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return ok();
  }
  result<void> compact_string(std::string_view f, std::string& out) {
    const std::size_t start = pos_;
    std::optional<std::string> s;
    BROOK_TRY(compact_nullable_string(f, s));
    if (!s) return fail_at(start, f, "null (length 0) in a non-nullable compact string");
    out = std::move(*s);
    return ok();
  }
  /// Compact array count; nullopt for null. Each element takes at least min_size bytes.
  result<void> compact_count(std::string_view f, std::size_t min_size, std::optional<std::size_t>& out) {
    const std::size_t start = pos_;
    std::uint32_t n1 = 0;
    BROOK_TRY(uvarint(f, n1));
    if (n1 == 0) {
      out.reset();
      return ok();
    }
    const std::size_t n = n1 - 1;
    if (min_size > 0 && n > remaining() / min_size)
      return fail_at(start, f, "{} elements of at least {} bytes cannot fit in the {} bytes left", n, min_size,
                     remaining());
    out = n;
    return ok();
  }
  result<void> nullable_int32_array(std::string_view f, std::optional<std::vector<std::int32_t>>& out) {
    std::optional<std::size_t> n;
    BROOK_TRY(compact_count(f, 4, n));
    if (!n) {
      out.reset();
      return ok();
    }
    out.emplace(*n);
    for (auto& x : *out) BROOK_TRY(int32(f, x));
    return ok();
  }
  result<void> int32_array(std::string_view f, std::vector<std::int32_t>& out) {
    const std::size_t start = pos_;
    std::optional<std::vector<std::int32_t>> v;
    BROOK_TRY(nullable_int32_array(f, v));
    if (!v) return fail_at(start, f, "null (count 0) in a non-nullable compact array");
    out = std::move(*v);
    return ok();
  }
  result<void> nullable_uuid_array(std::string_view f, std::optional<std::vector<uuid>>& out) {
    std::optional<std::size_t> n;
    BROOK_TRY(compact_count(f, 16, n));
    if (!n) {
      out.reset();
      return ok();
    }
    out.emplace(*n);
    for (auto& x : *out) BROOK_TRY(id(f, x));
    return ok();
  }
  result<void> uuid_array(std::string_view f, std::vector<uuid>& out) {
    const std::size_t start = pos_;
    std::optional<std::vector<uuid>> v;
    BROOK_TRY(nullable_uuid_array(f, v));
    if (!v) return fail_at(start, f, "null (count 0) in a non-nullable compact array");
    out = std::move(*v);
    return ok();
  }

  /// Reads a tagged-field section. on_tag(tag) parses a known tag's value from this reader
  /// and returns result<bool> (false = unknown tag: skipped). A known tag must consume
  /// exactly its declared size.
  template <typename OnTag>
  result<void> tagged_fields(std::string_view f, OnTag&& on_tag) {
    std::uint32_t count = 0;
    BROOK_TRY(uvarint(f, count));
    if (count > remaining() / 2)
      return fail_at(pos_, f, "{} tagged fields cannot fit in the {} bytes left", count, remaining());
    for (std::uint32_t i = 0; i < count; ++i) {
      std::uint32_t tag = 0, size = 0;
      BROOK_TRY(uvarint(f, tag));
      const std::size_t at = pos_;
      BROOK_TRY(uvarint(f, size));
      if (size > remaining())
        return fail_at(at, f, "tagged field {} of {} bytes runs past the end ({} bytes left)", tag, size, remaining());
      const std::size_t start = pos_;
      const std::size_t saved_size = b_.size();
      b_ = b_.first(start + size);  // a known field may not read past its declared size
      auto known = on_tag(tag);
      b_ = std::span<const std::byte>(b_.data(), saved_size);
      if (!known) return known.error();
      if (!*known) {
        pos_ = start + size;
        continue;
      }
      if (pos_ != start + size)
        return fail_at(start, f, "tagged field {} declares {} bytes but its value took {}", tag, size, pos_ - start);
    }
    return ok();
  }

  result<void> expect_end() const {
    if (pos_ != b_.size())
      return make_error(errc::corrupt_message, "{}: {} bytes of garbage after the record at byte {}", what_,
                        b_.size() - pos_, pos_);
    return ok();
  }

 private:
  result<void> need(std::string_view f, std::size_t n, std::string_view type) const {
    if (remaining() < n) return fail_at(pos_, f, "{} needs {} bytes, {} left", type, n, remaining());
    return ok();
  }
  std::span<const std::byte> b_;
  std::string what_;
  std::size_t pos_ = 0;
};

using brook::detail::message_writer;

inline void put_i8(message_writer& w, std::int8_t v) {
  const std::byte b = static_cast<std::byte>(v);
  w.raw(std::span<const std::byte>(&b, 1));
}
inline void put_bool(message_writer& w, bool v) { put_i8(w, v ? 1 : 0); }
inline void put_uuid(message_writer& w, const uuid& u) {
  w.raw(std::span<const std::byte>(reinterpret_cast<const std::byte*>(u.bytes.data()), u.bytes.size()));
}
inline void put_i32_array(message_writer& w, const std::vector<std::int32_t>& v) {
  w.compact_array_length(v.size());
  for (auto x : v) w.int32(x);
}
inline void put_uuid_array(message_writer& w, const std::vector<uuid>& v) {
  w.compact_array_length(v.size());
  for (const auto& x : v) put_uuid(w, x);
}

/// Collects tagged fields (each tag's value bytes) and writes the section in tag order.
class tag_section {
 public:
  template <typename Fn>
  void add(std::uint32_t tag, Fn&& write_value) {
    message_writer v;
    write_value(v);
    fields_.emplace_back(tag, std::move(v).finish());
  }
  void write(message_writer& w) {
    std::sort(fields_.begin(), fields_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    w.uvarint(static_cast<std::uint32_t>(fields_.size()));
    for (const auto& [tag, bytes] : fields_) {
      w.uvarint(tag);
      w.uvarint(static_cast<std::uint32_t>(bytes.size()));
      w.raw(bytes);
    }
  }

 private:
  std::vector<std::pair<std::uint32_t, std::vector<std::byte>>> fields_;
};

// ---------------------------------------------------------------- encoders (body only)

inline void encode_body(message_writer& w, const register_broker_record& r, std::int16_t v) {
  BROOK_ASSERT(v >= 2 || !r.is_migrating_zk_broker, "RegisterBrokerRecord v{} has no IsMigratingZkBroker", v);
  BROOK_ASSERT(v >= 1 || !r.in_controlled_shutdown, "RegisterBrokerRecord v{} has no InControlledShutdown", v);
  w.int32(r.broker_id);
  if (v >= 2) put_bool(w, r.is_migrating_zk_broker);
  put_uuid(w, r.incarnation_id);
  w.int64(r.broker_epoch);
  w.compact_array_length(r.endpoints.size());
  for (const auto& e : r.endpoints) {
    w.compact_string(e.name);
    w.compact_string(e.host);
    w.int16(static_cast<std::int16_t>(e.port));
    w.int16(e.security_protocol);
    w.no_tagged_fields();
  }
  w.compact_array_length(r.features.size());
  for (const auto& f : r.features) {
    w.compact_string(f.name);
    w.int16(f.min_supported_version);
    w.int16(f.max_supported_version);
    w.no_tagged_fields();
  }
  w.compact_nullable_string(r.rack);
  put_bool(w, r.fenced);
  if (v >= 1) put_bool(w, r.in_controlled_shutdown);
  w.no_tagged_fields();
}

inline void encode_body(message_writer& w, const unregister_broker_record& r, std::int16_t) {
  w.int32(r.broker_id);
  w.int64(r.broker_epoch);
  w.no_tagged_fields();
}

inline void encode_body(message_writer& w, const topic_record& r, std::int16_t) {
  w.compact_string(r.name);
  put_uuid(w, r.topic_id);
  w.no_tagged_fields();
}

inline void encode_body(message_writer& w, const partition_record& r, std::int16_t v) {
  BROOK_ASSERT(v >= 1 || r.directories.empty(), "PartitionRecord v{} has no Directories", v);
  BROOK_ASSERT(v >= 2 || (!r.eligible_leader_replicas && !r.last_known_elr), "PartitionRecord v{} has no ELR", v);
  w.int32(r.partition_id);
  put_uuid(w, r.topic_id);
  put_i32_array(w, r.replicas);
  put_i32_array(w, r.isr);
  put_i32_array(w, r.removing_replicas);
  put_i32_array(w, r.adding_replicas);
  w.int32(r.leader);
  w.int32(r.leader_epoch);
  w.int32(r.partition_epoch);
  if (v >= 1) put_uuid_array(w, r.directories);
  tag_section tags;
  if (r.leader_recovery_state != 0) tags.add(0, [&](message_writer& t) { put_i8(t, r.leader_recovery_state); });
  if (r.eligible_leader_replicas)
    tags.add(1, [&](message_writer& t) { put_i32_array(t, *r.eligible_leader_replicas); });
  if (r.last_known_elr) tags.add(2, [&](message_writer& t) { put_i32_array(t, *r.last_known_elr); });
  tags.write(w);
}

inline void encode_body(message_writer& w, const partition_change_record& r, std::int16_t v) {
  BROOK_ASSERT(v >= 1 || !r.directories, "PartitionChangeRecord v{} has no Directories", v);
  BROOK_ASSERT(v >= 2 || (!r.eligible_leader_replicas && !r.last_known_elr), "PartitionChangeRecord v{} has no ELR", v);
  w.int32(r.partition_id);
  put_uuid(w, r.topic_id);
  tag_section tags;
  auto arr = [&](std::uint32_t tag, const std::optional<std::vector<std::int32_t>>& a) {
    if (a) tags.add(tag, [&](message_writer& t) { put_i32_array(t, *a); });
  };
  arr(0, r.isr);
  if (r.leader != no_leader_change) tags.add(1, [&](message_writer& t) { t.int32(r.leader); });
  arr(2, r.replicas);
  arr(3, r.removing_replicas);
  arr(4, r.adding_replicas);
  if (r.leader_recovery_state != -1) tags.add(5, [&](message_writer& t) { put_i8(t, r.leader_recovery_state); });
  arr(6, r.eligible_leader_replicas);
  arr(7, r.last_known_elr);
  if (r.directories) tags.add(8, [&](message_writer& t) { put_uuid_array(t, *r.directories); });
  tags.write(w);
}

inline void encode_body(message_writer& w, const fence_broker_record& r, std::int16_t) {
  w.int32(r.id);
  w.int64(r.epoch);
  w.no_tagged_fields();
}
inline void encode_body(message_writer& w, const unfence_broker_record& r, std::int16_t) {
  w.int32(r.id);
  w.int64(r.epoch);
  w.no_tagged_fields();
}
inline void encode_body(message_writer& w, const remove_topic_record& r, std::int16_t) {
  put_uuid(w, r.topic_id);
  w.no_tagged_fields();
}
inline void encode_body(message_writer& w, const broker_registration_change_record& r, std::int16_t v) {
  BROOK_ASSERT(v >= 1 || r.in_controlled_shutdown == 0,
               "BrokerRegistrationChangeRecord v{} has no InControlledShutdown", v);
  w.int32(r.broker_id);
  w.int64(r.broker_epoch);
  tag_section tags;
  if (r.fenced != 0) tags.add(0, [&](message_writer& t) { put_i8(t, r.fenced); });
  if (r.in_controlled_shutdown != 0) tags.add(1, [&](message_writer& t) { put_i8(t, r.in_controlled_shutdown); });
  tags.write(w);
}
inline void encode_body(message_writer& w, const no_op_record&, std::int16_t) { w.no_tagged_fields(); }

// ---------------------------------------------------------------- decoders (body only)

inline result<void> decode_body(flex_reader& r, register_broker_record& out, std::int16_t v) {
  BROOK_TRY(r.int32("BrokerId", out.broker_id));
  if (v >= 2) BROOK_TRY(r.boolean("IsMigratingZkBroker", out.is_migrating_zk_broker));
  BROOK_TRY(r.id("IncarnationId", out.incarnation_id));
  BROOK_TRY(r.int64("BrokerEpoch", out.broker_epoch));
  std::optional<std::size_t> n;
  BROOK_TRY(r.compact_count("EndPoints", 2 + 2 + 2 + 1, n));  // two strings, port, protocol, tags
  if (!n) return r.fail_at(r.position(), "EndPoints", "null (count 0) in a non-nullable compact array");
  out.endpoints.resize(*n);
  for (auto& e : out.endpoints) {
    BROOK_TRY(r.compact_string("EndPoints.Name", e.name));
    BROOK_TRY(r.compact_string("EndPoints.Host", e.host));
    BROOK_TRY(r.uint16("EndPoints.Port", e.port));
    BROOK_TRY(r.int16("EndPoints.SecurityProtocol", e.security_protocol));
    BROOK_TRY(r.tagged_fields("EndPoints._tagged_fields", [](std::uint32_t) -> result<bool> { return false; }));
  }
  BROOK_TRY(r.compact_count("Features", 1 + 2 + 2 + 1, n));
  if (!n) return r.fail_at(r.position(), "Features", "null (count 0) in a non-nullable compact array");
  out.features.resize(*n);
  for (auto& f : out.features) {
    BROOK_TRY(r.compact_string("Features.Name", f.name));
    BROOK_TRY(r.int16("Features.MinSupportedVersion", f.min_supported_version));
    BROOK_TRY(r.int16("Features.MaxSupportedVersion", f.max_supported_version));
    BROOK_TRY(r.tagged_fields("Features._tagged_fields", [](std::uint32_t) -> result<bool> { return false; }));
  }
  BROOK_TRY(r.compact_nullable_string("Rack", out.rack));
  BROOK_TRY(r.boolean("Fenced", out.fenced));
  if (v >= 1) BROOK_TRY(r.boolean("InControlledShutdown", out.in_controlled_shutdown));
  return r.tagged_fields("_tagged_fields", [](std::uint32_t) -> result<bool> { return false; });  // v3 LogDirs: skipped
}

inline result<void> decode_body(flex_reader& r, unregister_broker_record& out, std::int16_t) {
  BROOK_TRY(r.int32("BrokerId", out.broker_id));
  BROOK_TRY(r.int64("BrokerEpoch", out.broker_epoch));
  return r.tagged_fields("_tagged_fields", [](std::uint32_t) -> result<bool> { return false; });
}

inline result<void> decode_body(flex_reader& r, topic_record& out, std::int16_t) {
  BROOK_TRY(r.compact_string("Name", out.name));
  BROOK_TRY(r.id("TopicId", out.topic_id));
  return r.tagged_fields("_tagged_fields", [](std::uint32_t) -> result<bool> { return false; });
}

inline result<void> decode_body(flex_reader& r, partition_record& out, std::int16_t v) {
  BROOK_TRY(r.int32("PartitionId", out.partition_id));
  BROOK_TRY(r.id("TopicId", out.topic_id));
  BROOK_TRY(r.int32_array("Replicas", out.replicas));
  BROOK_TRY(r.int32_array("Isr", out.isr));
  BROOK_TRY(r.int32_array("RemovingReplicas", out.removing_replicas));
  BROOK_TRY(r.int32_array("AddingReplicas", out.adding_replicas));
  BROOK_TRY(r.int32("Leader", out.leader));
  BROOK_TRY(r.int32("LeaderEpoch", out.leader_epoch));
  BROOK_TRY(r.int32("PartitionEpoch", out.partition_epoch));
  if (v >= 1) BROOK_TRY(r.uuid_array("Directories", out.directories));
  return r.tagged_fields("_tagged_fields", [&](std::uint32_t tag) -> result<bool> {
    switch (tag) {
      case 0: BROOK_TRY(r.int8("LeaderRecoveryState", out.leader_recovery_state)); return true;
      case 1:
        if (v < 2) return false;
        BROOK_TRY(r.nullable_int32_array("EligibleLeaderReplicas", out.eligible_leader_replicas));
        return true;
      case 2:
        if (v < 2) return false;
        BROOK_TRY(r.nullable_int32_array("LastKnownElr", out.last_known_elr));
        return true;
      default: return false;
    }
  });
}

inline result<void> decode_body(flex_reader& r, partition_change_record& out, std::int16_t v) {
  BROOK_TRY(r.int32("PartitionId", out.partition_id));
  BROOK_TRY(r.id("TopicId", out.topic_id));
  return r.tagged_fields("_tagged_fields", [&](std::uint32_t tag) -> result<bool> {
    switch (tag) {
      case 0: BROOK_TRY(r.nullable_int32_array("Isr", out.isr)); return true;
      case 1: BROOK_TRY(r.int32("Leader", out.leader)); return true;
      case 2: BROOK_TRY(r.nullable_int32_array("Replicas", out.replicas)); return true;
      case 3: BROOK_TRY(r.nullable_int32_array("RemovingReplicas", out.removing_replicas)); return true;
      case 4: BROOK_TRY(r.nullable_int32_array("AddingReplicas", out.adding_replicas)); return true;
      case 5: BROOK_TRY(r.int8("LeaderRecoveryState", out.leader_recovery_state)); return true;
      case 6:
        if (v < 2) return false;
        BROOK_TRY(r.nullable_int32_array("EligibleLeaderReplicas", out.eligible_leader_replicas));
        return true;
      case 7:
        if (v < 2) return false;
        BROOK_TRY(r.nullable_int32_array("LastKnownElr", out.last_known_elr));
        return true;
      case 8:
        if (v < 1) return false;
        BROOK_TRY(r.nullable_uuid_array("Directories", out.directories));
        return true;
      default: return false;
    }
  });
}

inline result<void> decode_body(flex_reader& r, fence_broker_record& out, std::int16_t) {
  BROOK_TRY(r.int32("Id", out.id));
  BROOK_TRY(r.int64("Epoch", out.epoch));
  return r.tagged_fields("_tagged_fields", [](std::uint32_t) -> result<bool> { return false; });
}
inline result<void> decode_body(flex_reader& r, unfence_broker_record& out, std::int16_t) {
  BROOK_TRY(r.int32("Id", out.id));
  BROOK_TRY(r.int64("Epoch", out.epoch));
  return r.tagged_fields("_tagged_fields", [](std::uint32_t) -> result<bool> { return false; });
}
inline result<void> decode_body(flex_reader& r, remove_topic_record& out, std::int16_t) {
  BROOK_TRY(r.id("TopicId", out.topic_id));
  return r.tagged_fields("_tagged_fields", [](std::uint32_t) -> result<bool> { return false; });
}
inline result<void> decode_body(flex_reader& r, broker_registration_change_record& out, std::int16_t v) {
  BROOK_TRY(r.int32("BrokerId", out.broker_id));
  BROOK_TRY(r.int64("BrokerEpoch", out.broker_epoch));
  return r.tagged_fields("_tagged_fields", [&](std::uint32_t tag) -> result<bool> {
    if (tag == 0) {
      BROOK_TRY(r.int8("Fenced", out.fenced));
      return true;
    }
    if (tag == 1 && v >= 1) {
      BROOK_TRY(r.int8("InControlledShutdown", out.in_controlled_shutdown));
      return true;
    }
    return false;  // v2 LogDirs (tag 2): not modelled
  });
}
inline result<void> decode_body(flex_reader& r, no_op_record&, std::int16_t) {
  return r.tagged_fields("_tagged_fields", [](std::uint32_t) -> result<bool> { return false; });
}

template <typename T>
result<decoded_record> decode_as(flex_reader& r, std::int16_t version) {
  const auto name = record_type_name(T::type);
  if (version < T::min_version || version > T::max_version)
    return make_error(errc::corrupt_message, "{}: version {} is not one brook reads ({}-{})", name, version,
                      T::min_version, T::max_version);
  r.set_what(fmt::format("{} v{}", name, version));
  T out;
  BROOK_TRY(decode_body(r, out, version));
  BROOK_TRY(r.expect_end());
  return decoded_record{metadata_record(std::move(out)), version};
}

}  // namespace detail

/// Kafka's ApiMessageAndVersion bytes for `rec` at `version` (default: the type's
/// written_version). REQUIRES: version within [min_version, max_version]; fields that
/// version lacks hold their defaults; strings at most 32767 bytes.
inline std::vector<std::byte> encode_metadata_record(const metadata_record& rec,
                                                     std::optional<std::int16_t> version = {}) {
  return std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        const std::int16_t v = version.value_or(T::written_version);
        BROOK_ASSERT(v >= T::min_version && v <= T::max_version, "{} has no version {}", record_type_name(T::type), v);
        detail::message_writer w;
        w.uvarint(metadata_frame_version);
        w.uvarint(static_cast<std::uint32_t>(T::type));
        w.uvarint(static_cast<std::uint32_t>(v));
        detail::encode_body(w, r, v);
        return std::move(w).finish();
      },
      rec);
}

/// Decodes one record value. Errors: corrupt_message naming the record type, field and byte.
inline result<decoded_record> decode_metadata_record(std::span<const std::byte> bytes) {
  detail::flex_reader r(bytes, "metadata record frame");
  std::uint32_t frame = 0, key = 0, version = 0;
  BROOK_TRY(r.uvarint("frame version", frame));
  if (frame != metadata_frame_version)
    return r.fail_at(0, "frame version", "frame version {} (only {} is supported{})", frame, metadata_frame_version,
                     frame == 0 ? "; frame version 0 is KRaft's 2.8 preview format" : "");
  const std::size_t key_at = r.position();
  BROOK_TRY(r.uvarint("api key", key));
  if (key > 0x7fff) return r.fail_at(key_at, "api key", "api key {} exceeds 32767", key);
  const std::size_t version_at = r.position();
  BROOK_TRY(r.uvarint("version", version));
  if (version > 0x7fff) return r.fail_at(version_at, "version", "version {} exceeds 32767", version);
  const auto v = static_cast<std::int16_t>(version);
  switch (static_cast<record_type>(key)) {
    case record_type::register_broker: return detail::decode_as<register_broker_record>(r, v);
    case record_type::unregister_broker: return detail::decode_as<unregister_broker_record>(r, v);
    case record_type::topic: return detail::decode_as<topic_record>(r, v);
    case record_type::partition: return detail::decode_as<partition_record>(r, v);
    case record_type::partition_change: return detail::decode_as<partition_change_record>(r, v);
    case record_type::fence_broker: return detail::decode_as<fence_broker_record>(r, v);
    case record_type::unfence_broker: return detail::decode_as<unfence_broker_record>(r, v);
    case record_type::remove_topic: return detail::decode_as<remove_topic_record>(r, v);
    case record_type::broker_registration_change: return detail::decode_as<broker_registration_change_record>(r, v);
    case record_type::no_op: return detail::decode_as<no_op_record>(r, v);
  }
  return r.fail_at(key_at, "api key", "metadata record type {} is not one brook reads", key);
}

}  // namespace brook::metadata

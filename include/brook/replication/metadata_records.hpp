// The records of the cluster metadata log (`__cluster_metadata-0`), byte for
// byte as Apache Kafka's KRaft controller writes them: each record's value is
// one ApiMessageAndVersion, its key is null.
//
// Sources (apache/kafka): metadata/src/main/resources/common/metadata/
// RegisterBrokerRecord.json (apiKey 0), UnregisterBrokerRecord.json (1),
// TopicRecord.json (2), PartitionRecord.json (3), ConfigRecord.json (4), PartitionChangeRecord.json (5),
// FenceBrokerRecord.json (7), UnfenceBrokerRecord.json (8), RemoveTopicRecord.json (9),
// BrokerRegistrationChangeRecord.json (17), NoOpRecord.json (20);
// server-common/.../serialization/AbstractApiMessageSerde.java (the frame);
// clients/.../common/Uuid.java (topic ids). Every one of these messages is
// flexible from version 0 ("flexibleVersions": "0+"): strings, arrays and
// bytes use the compact forms and every struct ends with a tagged-field section.
//
// Primitive types are those of Kafka's generated messages (codec/message_codec.hpp);
// each record below is a field table (codec/schema.hpp) transcribed from its JSON.
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
//   ConfigRecord (4), v0:            ResourceType int8 | ResourceName compact string
//                                    | Name compact string | Value compact nullable string
//                                    | tagged fields
//     One per config key set on a resource (ConfigResource.Type: 2 = topic); a null value
//     deletes the key. A topic created with overrides gets one per override, between its
//     TopicRecord and its PartitionRecords, as Kafka's controller writes them (Kafka 3.0-3.3
//     wrote them before the TopicRecord).
//     e.g. topic "t", cleanup.policy=compact:
//     01 04 00 | 02 | 02 74 | 0f "cleanup.policy" | 08 "compact" | 00
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

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>

namespace brook::metadata {

/// Kafka's MetadataRecordType api keys (the ones brook reads and writes).
enum class record_type : std::int16_t {
  register_broker = 0,
  unregister_broker = 1,
  topic = 2,
  partition = 3,
  config = 4,
  partition_change = 5,
  fence_broker = 7,
  unfence_broker = 8,
  remove_topic = 9,
  broker_registration_change = 17,
  no_op = 20,
};

/// LeaderConstants: no leader, and "leader unchanged" in PartitionChangeRecord.
inline constexpr broker_id no_leader{-1};
inline constexpr broker_id no_leader_change{-2};

struct broker_endpoint {
  std::string name;
  std::string host;
  std::uint16_t port = 0;
  std::int16_t security_protocol = 0;
  friend bool operator==(const broker_endpoint&, const broker_endpoint&) = default;
  static constexpr auto schema() {
    using namespace codec;
    return structure<broker_endpoint>(field("Name", &broker_endpoint::name), field("Host", &broker_endpoint::host),
                                      field("Port", &broker_endpoint::port),
                                      field("SecurityProtocol", &broker_endpoint::security_protocol));
  }
};

struct broker_feature {
  std::string name;
  std::int16_t min_supported_version = 0;
  std::int16_t max_supported_version = 0;
  friend bool operator==(const broker_feature&, const broker_feature&) = default;
  static constexpr auto schema() {
    using namespace codec;
    return structure<broker_feature>(field("Name", &broker_feature::name),
                                     field("MinSupportedVersion", &broker_feature::min_supported_version),
                                     field("MaxSupportedVersion", &broker_feature::max_supported_version));
  }
};

struct register_broker_record {
  static constexpr record_type type = record_type::register_broker;
  static constexpr std::int16_t min_version = 0, max_version = 3, written_version = 2;
  brook::broker_id broker_id{0};
  bool is_migrating_zk_broker = false;  ///< v2+
  uuid incarnation_id{};
  std::int64_t broker_epoch = 0;
  std::vector<broker_endpoint> endpoints{};
  std::vector<broker_feature> features{};
  std::optional<std::string> rack{};
  bool fenced = true;
  bool in_controlled_shutdown = false;  ///< v1+
  friend bool operator==(const register_broker_record&, const register_broker_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = register_broker_record;
    return message<r>(
        {.name = "RegisterBrokerRecord", .valid = between(0, 3), .flexible = since(0), .api_key = 0},
        field("BrokerId", &r::broker_id), field("IsMigratingZkBroker", &r::is_migrating_zk_broker).in(since(2)),
        field("IncarnationId", &r::incarnation_id), field("BrokerEpoch", &r::broker_epoch),
        field("EndPoints", &r::endpoints), field("Features", &r::features), field("Rack", &r::rack),
        field("Fenced", &r::fenced), field("InControlledShutdown", &r::in_controlled_shutdown).in(since(1)));
  }
};

struct unregister_broker_record {
  static constexpr record_type type = record_type::unregister_broker;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  brook::broker_id broker_id{0};
  std::int64_t broker_epoch = 0;
  friend bool operator==(const unregister_broker_record&, const unregister_broker_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = unregister_broker_record;
    return message<r>({.name = "UnregisterBrokerRecord", .valid = only(0), .flexible = since(0), .api_key = 1},
                      field("BrokerId", &r::broker_id), field("BrokerEpoch", &r::broker_epoch));
  }
};

struct topic_record {
  static constexpr record_type type = record_type::topic;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  std::string name{};
  uuid topic_id{};
  friend bool operator==(const topic_record&, const topic_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = topic_record;
    return message<r>({.name = "TopicRecord", .valid = only(0), .flexible = since(0), .api_key = 2},
                      field("Name", &r::name), field("TopicId", &r::topic_id));
  }
};

struct partition_record {
  static constexpr record_type type = record_type::partition;
  static constexpr std::int16_t min_version = 0, max_version = 2, written_version = 0;
  brook::partition_id partition_id{-1};
  uuid topic_id{};
  std::vector<brook::broker_id> replicas{};
  std::vector<brook::broker_id> isr{};
  std::vector<brook::broker_id> removing_replicas{};
  std::vector<brook::broker_id> adding_replicas{};
  brook::broker_id leader = no_leader;
  std::int8_t leader_recovery_state = 0;  ///< tag 0: 0 recovered, 1 recovering (unclean election)
  brook::leader_epoch leader_epoch{-1};
  std::int32_t partition_epoch = -1;
  std::vector<uuid> directories{};                                          ///< v1+
  std::optional<std::vector<brook::broker_id>> eligible_leader_replicas{};  ///< v2+, tag 1
  std::optional<std::vector<brook::broker_id>> last_known_elr{};            ///< v2+, tag 2
  friend bool operator==(const partition_record&, const partition_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = partition_record;
    return message<r>({.name = "PartitionRecord", .valid = between(0, 2), .flexible = since(0), .api_key = 3},
                      field("PartitionId", &r::partition_id), field("TopicId", &r::topic_id),
                      field("Replicas", &r::replicas), field("Isr", &r::isr),
                      field("RemovingReplicas", &r::removing_replicas), field("AddingReplicas", &r::adding_replicas),
                      field("Leader", &r::leader),
                      field("LeaderRecoveryState", &r::leader_recovery_state).tagged(0, since(0)),
                      field("LeaderEpoch", &r::leader_epoch), field("PartitionEpoch", &r::partition_epoch),
                      field("Directories", &r::directories).in(since(1)),
                      field("EligibleLeaderReplicas", &r::eligible_leader_replicas).tagged(1, since(2)),
                      field("LastKnownElr", &r::last_known_elr).tagged(2, since(2)));
  }
};

/// Absent (nullopt / -2 / -1) fields mean "unchanged".
struct partition_change_record {
  static constexpr record_type type = record_type::partition_change;
  static constexpr std::int16_t min_version = 0, max_version = 2, written_version = 0;
  brook::partition_id partition_id{-1};
  uuid topic_id{};
  std::optional<std::vector<brook::broker_id>> isr{};                       ///< tag 0
  brook::broker_id leader = no_leader_change;                               ///< tag 1: -2 unchanged, -1 none
  std::optional<std::vector<brook::broker_id>> replicas{};                  ///< tag 2
  std::optional<std::vector<brook::broker_id>> removing_replicas{};         ///< tag 3
  std::optional<std::vector<brook::broker_id>> adding_replicas{};           ///< tag 4
  std::int8_t leader_recovery_state = -1;                                   ///< tag 5: -1 unchanged
  std::optional<std::vector<brook::broker_id>> eligible_leader_replicas{};  ///< v2+, tag 6
  std::optional<std::vector<brook::broker_id>> last_known_elr{};            ///< v2+, tag 7
  std::optional<std::vector<uuid>> directories{};                           ///< v1+, tag 8
  friend bool operator==(const partition_change_record&, const partition_change_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = partition_change_record;
    return message<r>({.name = "PartitionChangeRecord", .valid = between(0, 2), .flexible = since(0), .api_key = 5},
                      field("PartitionId", &r::partition_id), field("TopicId", &r::topic_id),
                      field("Isr", &r::isr).tagged(0, since(0)), field("Leader", &r::leader).tagged(1, since(0)),
                      field("Replicas", &r::replicas).tagged(2, since(0)),
                      field("RemovingReplicas", &r::removing_replicas).tagged(3, since(0)),
                      field("AddingReplicas", &r::adding_replicas).tagged(4, since(0)),
                      field("LeaderRecoveryState", &r::leader_recovery_state).tagged(5, since(0)),
                      field("EligibleLeaderReplicas", &r::eligible_leader_replicas).tagged(6, since(2)),
                      field("LastKnownElr", &r::last_known_elr).tagged(7, since(2)),
                      field("Directories", &r::directories).tagged(8, since(1)));
  }
};

struct fence_broker_record {
  static constexpr record_type type = record_type::fence_broker;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  brook::broker_id id{0};
  std::int64_t epoch = 0;
  friend bool operator==(const fence_broker_record&, const fence_broker_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = fence_broker_record;
    return message<r>({.name = "FenceBrokerRecord", .valid = only(0), .flexible = since(0), .api_key = 7},
                      field("Id", &r::id), field("Epoch", &r::epoch));
  }
};

struct unfence_broker_record {
  static constexpr record_type type = record_type::unfence_broker;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  brook::broker_id id{0};
  std::int64_t epoch = 0;
  friend bool operator==(const unfence_broker_record&, const unfence_broker_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = unfence_broker_record;
    return message<r>({.name = "UnfenceBrokerRecord", .valid = only(0), .flexible = since(0), .api_key = 8},
                      field("Id", &r::id), field("Epoch", &r::epoch));
  }
};

/// ConfigResource.Type values of ConfigRecord's ResourceType (the one brook uses).
inline constexpr std::int8_t config_resource_topic = 2;

struct config_record {
  static constexpr record_type type = record_type::config;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  std::int8_t resource_type = config_resource_topic;
  std::string resource_name{};
  std::string name{};
  std::optional<std::string> value{};  ///< null: the key is deleted
  friend bool operator==(const config_record&, const config_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = config_record;
    return message<r>({.name = "ConfigRecord", .valid = only(0), .flexible = since(0), .api_key = 4},
                      field("ResourceType", &r::resource_type), field("ResourceName", &r::resource_name),
                      field("Name", &r::name), field("Value", &r::value));
  }
};

struct remove_topic_record {
  static constexpr record_type type = record_type::remove_topic;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  uuid topic_id{};
  friend bool operator==(const remove_topic_record&, const remove_topic_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = remove_topic_record;
    return message<r>({.name = "RemoveTopicRecord", .valid = only(0), .flexible = since(0), .api_key = 9},
                      field("TopicId", &r::topic_id));
  }
};

struct broker_registration_change_record {
  static constexpr record_type type = record_type::broker_registration_change;
  static constexpr std::int16_t min_version = 0, max_version = 2, written_version = 0;
  brook::broker_id broker_id{0};
  std::int64_t broker_epoch = 0;
  std::int8_t fenced = 0;                  ///< tag 0: -1 unfenced, 0 no change, 1 fenced
  std::int8_t in_controlled_shutdown = 0;  ///< v1+, tag 1: 0 no change, 1 in controlled shutdown
  friend bool operator==(const broker_registration_change_record&, const broker_registration_change_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using r = broker_registration_change_record;
    return message<r>(
        {.name = "BrokerRegistrationChangeRecord", .valid = between(0, 2), .flexible = since(0), .api_key = 17},
        field("BrokerId", &r::broker_id), field("BrokerEpoch", &r::broker_epoch),
        field("Fenced", &r::fenced).tagged(0, since(0)),
        field("InControlledShutdown", &r::in_controlled_shutdown).tagged(1, since(1)));
  }
};

struct no_op_record {
  static constexpr record_type type = record_type::no_op;
  static constexpr std::int16_t min_version = 0, max_version = 0, written_version = 0;
  friend bool operator==(const no_op_record&, const no_op_record&) = default;
  static constexpr auto schema() {
    using namespace codec;
    return message<no_op_record>({.name = "NoOpRecord", .valid = only(0), .flexible = since(0), .api_key = 20});
  }
};

using metadata_record = std::variant<register_broker_record, unregister_broker_record, topic_record, partition_record,
                                     config_record, partition_change_record, fence_broker_record, unfence_broker_record,
                                     remove_topic_record, broker_registration_change_record, no_op_record>;

/// Kafka's name for a record type ("PartitionChangeRecord").
constexpr std::string_view record_type_name(record_type t) noexcept {
  switch (t) {
    case record_type::register_broker: return "RegisterBrokerRecord";
    case record_type::unregister_broker: return "UnregisterBrokerRecord";
    case record_type::topic: return "TopicRecord";
    case record_type::partition: return "PartitionRecord";
    case record_type::config: return "ConfigRecord";
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

template <typename T>
result<decoded_record> decode_as(codec::message_reader& r, std::int16_t version) {
  const auto name = record_type_name(T::type);
  if (version < T::min_version || version > T::max_version)
    return make_error(errc::corrupt_message, "{}: version {} is not one brook reads ({}-{})", name, version,
                      T::min_version, T::max_version);
  r.set_what(fmt::format("{} v{}", name, version));
  T out;
  BROOK_TRY(codec::read(r, out, version));
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
        static_assert(codec::schema_of<T>.info.api_key == static_cast<std::int16_t>(T::type));
        const std::int16_t v = version.value_or(T::written_version);
        BROOK_ASSERT(v >= T::min_version && v <= T::max_version, "{} has no version {}", record_type_name(T::type), v);
        codec::message_writer w;
        w.uvarint(metadata_frame_version);
        w.uvarint(static_cast<std::uint32_t>(T::type));
        w.uvarint(static_cast<std::uint32_t>(v));
        auto written = codec::write(w, r, v);
        BROOK_ASSERT(written.has_value(), "{}", written.error());
        return std::move(w).finish();
      },
      rec);
}

/// Decodes one record value. Errors: corrupt_message naming the record type, field and byte.
inline result<decoded_record> decode_metadata_record(std::span<const std::byte> bytes) {
  codec::message_reader r(bytes, "metadata record frame");
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
    case record_type::config: return detail::decode_as<config_record>(r, v);
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

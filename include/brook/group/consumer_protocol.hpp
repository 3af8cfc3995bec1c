// Kafka's consumer protocol, byte for byte: the subscription a consumer sends
// in JoinGroup (protocol type "consumer") and the assignment the leader returns
// in SyncGroup. The group coordinator treats both as opaque bytes and stores
// them in GroupMetadataValue (offsets_topic_records.hpp); the group leader and
// every member parse them.
//
// Sources (apache/kafka): clients/src/main/resources/common/message/
// ConsumerProtocolSubscription.json, ConsumerProtocolAssignment.json (versions
// 0-3, none flexible) and clients/.../consumer/internals/ConsumerProtocol.java.
//
// SUBSCRIPTION, after an int16 version:
//   +---------------------+-------------------+-----------------------------+--------------+--------------+
//   | topics              | userData          | ownedPartitions         v1+ | generationId | rackId   v3+ |
//   | int32 n, n strings  | int32 len (-1 =   | int32 n, n x (topic string, | int32    v2+ | int16 len    |
//   | (int16 len + UTF-8) | null) + bytes     |   int32 m, m x int32)       | (else -1)    | (-1 = null)  |
//   +---------------------+-------------------+-----------------------------+--------------+--------------+
//   e.g. v3, topics ["a"], no user data, owns a-0 and a-2, generation 4, no rack:
//   00 03 | 00 00 00 01  00 01 61 | ff ff ff ff | 00 00 00 01  00 01 61  00 00 00 02  00 00 00 00  00 00 00 02
//         | 00 00 00 04 | ff ff
//
// ASSIGNMENT, after an int16 version (the same layout at every version 0-3):
//   +--------------------------------------------------+-------------------------------+
//   | assignedPartitions                               | userData                      |
//   | int32 n, n x (topic string, int32 m, m x int32)  | int32 len (-1 = null) + bytes |
//   +--------------------------------------------------+-------------------------------+
//   e.g. v3, a-0 a-1 b-5, no user data:
//   00 03 | 00 00 00 02 | 00 01 61 00 00 00 02 00 00 00 00 00 00 00 01 | 00 01 62 00 00 00 01 00 00 00 05 | ff ff ff ff
//
// What brook writes is what the Java client (3.5+) writes: version 3 for both;
// subscription topics sorted, owned partitions sorted by (topic, partition) and
// grouped by topic; assignment partitions grouped by topic in order of first
// appearance, partitions in the order given; userData null (the range and
// roundrobin assignors send none), rackId null unless set.
//
// Reading follows ConsumerProtocol.java: a negative version is corrupt; a
// version above 3 is parsed as version 3 (the protocol promises newer versions
// only append fields), and bytes after the last known field are ignored for
// the same reason. Everything else malformed is errc::corrupt_message naming
// the field and byte position; nothing is read outside the given span.
//
// Thread-safety: the types are plain values; every function is pure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/group/assignor.hpp>

namespace brook {

/// Kafka's protocol type of consumer groups (ConsumerProtocol.PROTOCOL_TYPE).
inline constexpr std::string_view consumer_protocol_type = "consumer";
/// The version the Java client writes and the highest brook parses as itself.
inline constexpr std::int16_t consumer_protocol_version = 3;

/// Every field of a ConsumerProtocolSubscription. Thread-safety: value.
struct consumer_protocol_subscription {
  std::int16_t version = consumer_protocol_version;  ///< decoded: as on the wire (may exceed 3)
  std::vector<std::string> topics;
  std::optional<std::vector<std::byte>> user_data;  ///< assignor-specific; null when none
  std::vector<topic_partition> owned_partitions;    ///< v1+
  std::int32_t generation = -1;                     ///< v2+; -1 = unknown
  std::optional<std::string> rack_id;               ///< v3+ (client.rack)
  friend bool operator==(const consumer_protocol_subscription&, const consumer_protocol_subscription&) = default;
};

/// Every field of a ConsumerProtocolAssignment. Thread-safety: value.
struct consumer_protocol_assignment {
  std::int16_t version = consumer_protocol_version;  ///< decoded: as on the wire (may exceed 3)
  std::vector<topic_partition> partitions;
  std::optional<std::vector<std::byte>> user_data;
  friend bool operator==(const consumer_protocol_assignment&, const consumer_protocol_assignment&) = default;
};

namespace detail {

/// One topic's partitions (ConsumerProtocolSubscription.TopicPartition, ConsumerProtocolAssignment.TopicPartition).
struct wire_topic_partitions {
  std::string topic;
  std::vector<std::int32_t> partitions;
  friend bool operator==(const wire_topic_partitions&, const wire_topic_partitions&) = default;
  static constexpr auto schema() {
    using namespace codec;
    return structure<wire_topic_partitions>(field("Topic", &wire_topic_partitions::topic),
                                            field("Partitions", &wire_topic_partitions::partitions));
  }
};

/// ConsumerProtocolSubscription.json as it is on the wire.
struct wire_subscription {
  std::vector<std::string> topics;
  std::optional<std::vector<std::byte>> user_data;
  std::vector<wire_topic_partitions> owned_partitions;
  std::int32_t generation_id = -1;
  std::optional<std::string> rack_id;
  friend bool operator==(const wire_subscription&, const wire_subscription&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using w = wire_subscription;
    return message<w>({.name = "ConsumerProtocolSubscription", .valid = between(0, 3)}, field("Topics", &w::topics),
                      field("UserData", &w::user_data),
                      field("OwnedPartitions", &w::owned_partitions).in(since(1)).ignorable(),
                      field("GenerationId", &w::generation_id).in(since(2)).ignorable(),
                      field("RackId", &w::rack_id).in(since(3)).ignorable());
  }
};

/// ConsumerProtocolAssignment.json as it is on the wire.
struct wire_assignment {
  std::vector<wire_topic_partitions> assigned_partitions;
  std::optional<std::vector<std::byte>> user_data;
  friend bool operator==(const wire_assignment&, const wire_assignment&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using w = wire_assignment;
    return message<w>({.name = "ConsumerProtocolAssignment", .valid = between(0, 3)},
                      field("AssignedPartitions", &w::assigned_partitions), field("UserData", &w::user_data));
  }
};

/// Runs of equal topics, in the order given, one group each.
inline std::vector<wire_topic_partitions> group_runs(const std::vector<topic_partition>& tps) {
  std::vector<wire_topic_partitions> out;
  for (const auto& tp : tps) {
    if (out.empty() || out.back().topic != tp.topic) out.push_back({tp.topic, {}});
    out.back().partitions.push_back(tp.partition.value());
  }
  return out;
}

/// Groups partitions by topic in order of each topic's first appearance (ConsumerProtocol.serializeAssignment).
inline std::vector<wire_topic_partitions> group_by_first_appearance(const std::vector<topic_partition>& tps) {
  std::vector<wire_topic_partitions> out;
  std::map<std::string_view, std::size_t> index;
  for (const auto& tp : tps) {
    auto [it, inserted] = index.emplace(tp.topic, out.size());
    if (inserted) out.push_back({tp.topic, {}});  // key views tp.topic (outlives the map)
    out[it->second].partitions.push_back(tp.partition.value());
  }
  return out;
}

inline std::vector<topic_partition> flatten(const std::vector<wire_topic_partitions>& groups) {
  std::vector<topic_partition> out;
  for (const auto& g : groups)
    for (auto p : g.partitions) out.push_back(topic_partition{g.topic, partition_id{p}});
  return out;
}

/// Reads the int16 version that starts both messages, then the message: a negative version
/// is corrupt, a version above 3 is parsed as 3 (ConsumerProtocol.checkSubscriptionVersion),
/// and bytes after the last known field are ignored (fields of a newer version, as Java does).
template <typename T>
result<T> decode_consumer_protocol(std::span<const std::byte> bytes, std::int16_t& wire_version) {
  constexpr std::string_view name = codec::schema_of<T>.info.name;
  codec::message_reader r(bytes, std::string(name));
  BROOK_TRY(r.int16("version", wire_version));
  if (wire_version < 0) return r.fail_at(0, "version", "unsupported negative version {}", wire_version);
  r.set_what(fmt::format("{} v{}", name, wire_version));
  T out;
  BROOK_TRY(codec::read(r, out, std::min(wire_version, consumer_protocol_version)));
  return out;
}

}  // namespace detail

// ------------------------------------------------------------------ subscription

/// Encodes s at s.version (0..3), fields the version lacks dropped, topics and owned
/// partitions in the order given (encode_subscription sorts like Java).
/// REQUIRES: 0 <= s.version <= 3; topic names <= 32767 bytes.
inline std::vector<std::byte> encode(const consumer_protocol_subscription& s) {
  BROOK_ASSERT(s.version >= 0 && s.version <= consumer_protocol_version, "ConsumerProtocolSubscription v{}", s.version);
  // Runs of equal topics form one group (Java sorts first, so each topic appears once).
  const detail::wire_subscription w{s.topics, s.user_data, detail::group_runs(s.owned_partitions), s.generation,
                                    s.rack_id};
  return codec::encode_prefixed(s.version, w, s.version);
}

/// What the Java client sends in JoinGroup for `m` (ConsumerProtocol.serializeSubscription):
/// version 3, topics sorted, owned partitions sorted by (topic, partition) and grouped,
/// m.generation, user data null, rack null. member_id and group_instance_id are not part of it.
inline std::vector<std::byte> encode_subscription(const member_subscription& m) {
  consumer_protocol_subscription s;
  s.topics = m.topics;
  std::sort(s.topics.begin(), s.topics.end());
  s.owned_partitions = m.owned_partitions;
  std::sort(s.owned_partitions.begin(), s.owned_partitions.end());
  s.generation = m.generation;
  return encode(s);
}

/// Decodes a subscription of any version (see the top of this file).
inline result<consumer_protocol_subscription> decode_consumer_protocol_subscription(std::span<const std::byte> bytes) {
  consumer_protocol_subscription s;
  BROOK_TRY_ASSIGN(auto w, detail::decode_consumer_protocol<detail::wire_subscription>(bytes, s.version));
  s.topics = std::move(w.topics);
  s.user_data = std::move(w.user_data);
  s.owned_partitions = detail::flatten(w.owned_partitions);
  s.generation = w.generation_id;
  s.rack_id = std::move(w.rack_id);
  return s;
}

/// Decodes a subscription into the assignor's view: topics, owned partitions and
/// generation; member_id and group_instance_id are left empty for the caller to fill.
inline result<member_subscription> decode_subscription(std::span<const std::byte> bytes) {
  BROOK_TRY_ASSIGN(auto s, decode_consumer_protocol_subscription(bytes));
  member_subscription m;
  m.topics = std::move(s.topics);
  m.owned_partitions = std::move(s.owned_partitions);
  m.generation = s.generation;
  return m;
}

// ------------------------------------------------------------------ assignment

/// Encodes a at a.version (0..3; the layout is the same at each), partitions grouped by
/// topic in order of first appearance as Java does. REQUIRES: 0 <= a.version <= 3.
inline std::vector<std::byte> encode(const consumer_protocol_assignment& a) {
  BROOK_ASSERT(a.version >= 0 && a.version <= consumer_protocol_version, "ConsumerProtocolAssignment v{}", a.version);
  const detail::wire_assignment w{detail::group_by_first_appearance(a.partitions), a.user_data};
  return codec::encode_prefixed(a.version, w, a.version);
}

/// What the Java group leader sends a member in SyncGroup for `partitions`: version 3,
/// grouped by topic, user data null.
inline std::vector<std::byte> encode_assignment(const std::vector<topic_partition>& partitions) {
  consumer_protocol_assignment a;
  a.partitions = partitions;
  return encode(a);
}

/// Decodes an assignment of any version.
inline result<consumer_protocol_assignment> decode_consumer_protocol_assignment(std::span<const std::byte> bytes) {
  consumer_protocol_assignment a;
  BROOK_TRY_ASSIGN(auto w, detail::decode_consumer_protocol<detail::wire_assignment>(bytes, a.version));
  a.partitions = detail::flatten(w.assigned_partitions);
  a.user_data = std::move(w.user_data);
  return a;
}

/// Decodes an assignment into its partitions, in wire order.
inline result<std::vector<topic_partition>> decode_assignment(std::span<const std::byte> bytes) {
  BROOK_TRY_ASSIGN(auto a, decode_consumer_protocol_assignment(bytes));
  return std::move(a.partitions);
}

}  // namespace brook

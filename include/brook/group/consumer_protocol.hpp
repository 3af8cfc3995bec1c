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

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/group/assignor.hpp>
#include <brook/codec/message_codec.hpp>

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

/// Writes [topic string, [int32]] groups for runs of equal topics, in the order given.
inline void write_topic_partitions(message_writer& w,
                                   const std::vector<std::pair<std::string, std::vector<std::int32_t>>>& g) {
  w.array_length(g.size());
  for (const auto& [topic, parts] : g) {
    w.string(topic);
    w.array_length(parts.size());
    for (auto p : parts) w.int32(p);
  }
}

/// Groups partitions by topic in order of each topic's first appearance (ConsumerProtocol.serializeAssignment).
inline std::vector<std::pair<std::string, std::vector<std::int32_t>>> group_by_first_appearance(
    const std::vector<topic_partition>& tps) {
  std::vector<std::pair<std::string, std::vector<std::int32_t>>> out;
  std::map<std::string_view, std::size_t> index;
  for (const auto& tp : tps) {
    auto [it, inserted] = index.emplace(tp.topic, out.size());
    if (inserted) out.emplace_back(tp.topic, std::vector<std::int32_t>{});  // key views tp.topic (outlives the map)
    out[it->second].second.push_back(tp.partition.value());
  }
  return out;
}

/// Reads [topic string, [int32]] groups and flattens them.
inline result<void> read_topic_partitions(message_reader& r, std::string_view field,
                                          std::vector<topic_partition>& out) {
  std::size_t topics = 0;
  BROOK_TRY(r.array_length(field, 6, topics));  // at least: empty topic (2) + partition count (4)
  const std::string topic_field = std::string(field) + ".topic";
  const std::string parts_field = std::string(field) + ".partitions";
  for (std::size_t i = 0; i < topics; ++i) {
    std::string topic;
    BROOK_TRY(r.string(topic_field, topic));
    std::size_t n = 0;
    BROOK_TRY(r.array_length(parts_field, 4, n));
    for (std::size_t j = 0; j < n; ++j) {
      std::int32_t p = 0;
      BROOK_TRY(r.int32(parts_field, p));
      out.push_back(topic_partition{topic, partition_id{p}});
    }
  }
  return ok();
}

/// Reads the int16 version that starts both messages; negative versions are corrupt,
/// versions above 3 are parsed as 3 (ConsumerProtocol.checkSubscriptionVersion).
inline result<void> read_consumer_protocol_version(message_reader& r, std::int16_t& wire, std::int16_t& parse_as) {
  BROOK_TRY(r.int16("version", wire));
  if (wire < 0) return r.fail_at(0, "version", "unsupported negative version {}", wire);
  parse_as = wire > consumer_protocol_version ? consumer_protocol_version : wire;
  return ok();
}

}  // namespace detail

// ------------------------------------------------------------------ subscription

/// Encodes s at s.version (0..3), fields the version lacks dropped, topics and owned
/// partitions in the order given (encode_subscription sorts like Java).
/// REQUIRES: 0 <= s.version <= 3; topic names <= 32767 bytes.
inline std::vector<std::byte> encode(const consumer_protocol_subscription& s) {
  BROOK_ASSERT(s.version >= 0 && s.version <= consumer_protocol_version, "ConsumerProtocolSubscription v{}", s.version);
  detail::message_writer w;
  w.int16(s.version);
  w.array_length(s.topics.size());
  for (const auto& t : s.topics) w.string(t);
  w.nullable_bytes(s.user_data);
  if (s.version >= 1) {
    // Runs of equal topics form one group (Java sorts first, so each topic appears once).
    std::vector<std::pair<std::string, std::vector<std::int32_t>>> groups;
    for (const auto& tp : s.owned_partitions) {
      if (groups.empty() || groups.back().first != tp.topic) groups.emplace_back(tp.topic, std::vector<std::int32_t>{});
      groups.back().second.push_back(tp.partition.value());
    }
    detail::write_topic_partitions(w, groups);
  }
  if (s.version >= 2) w.int32(s.generation);
  if (s.version >= 3) w.nullable_string(s.rack_id);
  return std::move(w).finish();
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
  detail::message_reader r(bytes, "ConsumerProtocolSubscription");
  consumer_protocol_subscription s;
  std::int16_t v = 0;
  BROOK_TRY(detail::read_consumer_protocol_version(r, s.version, v));
  const std::string what = fmt::format("ConsumerProtocolSubscription v{}", s.version);
  r.set_what(what);
  std::size_t n = 0;
  BROOK_TRY(r.array_length("topics", 2, n));
  s.topics.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string t;
    BROOK_TRY(r.string("topics", t));
    s.topics.push_back(std::move(t));
  }
  BROOK_TRY(r.nullable_bytes("userData", s.user_data));
  if (v >= 1) BROOK_TRY(detail::read_topic_partitions(r, "ownedPartitions", s.owned_partitions));
  if (v >= 2) BROOK_TRY(r.int32("generationId", s.generation));
  if (v >= 3) BROOK_TRY(r.nullable_string("rackId", s.rack_id));
  return s;  // trailing bytes: fields of a newer version (ignored, as Java does)
}

/// Decodes a subscription into the assignor's view: topics, owned partitions and
/// generation; member_id and group_instance_id are left empty for the caller to fill.
inline result<member_subscription> decode_subscription(std::span<const std::byte> bytes) {
  auto s = decode_consumer_protocol_subscription(bytes);
  if (!s) return s.error();
  member_subscription m;
  m.topics = std::move(s->topics);
  m.owned_partitions = std::move(s->owned_partitions);
  m.generation = s->generation;
  return m;
}

// ------------------------------------------------------------------ assignment

/// Encodes a at a.version (0..3; the layout is the same at each), partitions grouped by
/// topic in order of first appearance as Java does. REQUIRES: 0 <= a.version <= 3.
inline std::vector<std::byte> encode(const consumer_protocol_assignment& a) {
  BROOK_ASSERT(a.version >= 0 && a.version <= consumer_protocol_version, "ConsumerProtocolAssignment v{}", a.version);
  detail::message_writer w;
  w.int16(a.version);
  detail::write_topic_partitions(w, detail::group_by_first_appearance(a.partitions));
  w.nullable_bytes(a.user_data);
  return std::move(w).finish();
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
  detail::message_reader r(bytes, "ConsumerProtocolAssignment");
  consumer_protocol_assignment a;
  std::int16_t v = 0;
  BROOK_TRY(detail::read_consumer_protocol_version(r, a.version, v));
  const std::string what = fmt::format("ConsumerProtocolAssignment v{}", a.version);
  r.set_what(what);
  BROOK_TRY(detail::read_topic_partitions(r, "assignedPartitions", a.partitions));
  BROOK_TRY(r.nullable_bytes("userData", a.user_data));
  return a;  // trailing bytes: fields of a newer version (ignored, as Java does)
}

/// Decodes an assignment into its partitions, in wire order.
inline result<std::vector<topic_partition>> decode_assignment(std::span<const std::byte> bytes) {
  auto a = decode_consumer_protocol_assignment(bytes);
  if (!a) return a.error();
  return std::move(a->partitions);
}

}  // namespace brook

// The records of Kafka's internal compacted topic __consumer_offsets, byte for
// byte: committed offsets and classic group metadata, as Kafka's group
// coordinator writes them and as kafka-dump-log --offsets-decoder reads them.
//
// Sources (apache/kafka): group-coordinator/src/main/resources/common/message/
// OffsetCommitKey.json, OffsetCommitValue.json, GroupMetadataKey.json,
// GroupMetadataValue.json, LegacyOffsetCommitKey.json, LegacyOffsetCommitValue.json;
// coordinator-common/.../runtime/CoordinatorRecordSerde.java (the 2-byte prefixes);
// group-coordinator/.../GroupCoordinatorRecordHelpers.java (which versions are
// written); clients/.../common/utils/Utils.java (abs). Primitive types are those
// of Kafka's generated messages (see codec/message_codec.hpp): big-endian
// integers, string = int16 length + UTF-8, bytes = int32 length, array = int32
// count; flexible versions use compact forms (uvarint length+1) and end each
// struct with a tagged-field section.
//
// A record's key starts with an int16 record type, its value with an int16
// value version (MessageUtil.toVersionPrefixedBytes). A null value is a
// tombstone (the group or offset was deleted); tombstones have no value bytes
// to decode.
//
// KEY — offset commit (record type 1 written; 0 = LegacyOffsetCommitKey, same layout, read):
//   +--------+-----------+-------+-----------+-------+-----------+
//   | type   | group len | group | topic len | topic | partition |
//   | int16  | int16     | UTF-8 | int16     | UTF-8 | int32     |
//   +--------+-----------+-------+-----------+-------+-----------+
//   e.g. group "g", topic "t", partition 3:
//   00 01 | 00 01 67 | 00 01 74 | 00 00 00 03
//
// KEY — group metadata (record type 2):
//   +--------+-----------+-------+
//   | type=2 | group len | group |
//   | int16  | int16     | UTF-8 |
//   +--------+-----------+-------+
//   Record types 3 and above are the KIP-848 consumer/share/streams group
//   records Kafka 3.7+ also keeps in this topic; brook does not read them
//   (decode_offsets_topic_key reports them as corrupt_message, naming the type).
//
// VALUE — offset commit. After the int16 version:
//   v0  offset int64 | metadata string | commitTimestamp int64                 (also LegacyOffsetCommitValue)
//   v1  offset int64 | metadata string | commitTimestamp int64 | expireTimestamp int64
//   v2  offset int64 | metadata string | commitTimestamp int64
//   v3  offset int64 | leaderEpoch int32 | metadata string | commitTimestamp int64
//   v4  offset int64 | leaderEpoch int32 | metadata COMPACT string | commitTimestamp int64 | tagged fields
//   Kafka writes v3, or v1 when the commit carries an explicit expire timestamp
//   (offsetCommitValueVersion in GroupCoordinatorRecordHelpers; v4, the first
//   flexible version, is read but not written yet). v1 has no leaderEpoch: it
//   reads back as -1, as in Kafka. An expireTimestamp of -1 reads back as none.
//   e.g. v3 offset 5, leaderEpoch 2, metadata "m", commitTimestamp 1000:
//   00 03 | 00 00 00 00 00 00 00 05 | 00 00 00 02 | 00 01 6d | 00 00 00 00 00 00 03 e8
//   the same at v4, no tagged fields:
//   00 04 | 00 00 00 00 00 00 00 05 | 00 00 00 02 | 02 6d | 00 00 00 00 00 00 03 e8 | 00
//
// VALUE — group metadata. After the int16 version:
//   protocolType    string (v4: compact)
//   generation      int32
//   protocol        nullable string (v4: compact)
//   leader          nullable string (v4: compact)
//   currentStateTimestamp int64                        v2+ (else -1)
//   members         array (v4: compact) of MemberMetadata:
//     memberId          string (v4: compact)
//     groupInstanceId   nullable string (v4: compact)  v3+ (else null)
//     clientId          string (v4: compact)
//     clientHost        string (v4: compact)
//     rebalanceTimeout  int32                          v1+ (v0: reads back as sessionTimeout,
//                                                        as GroupMetadataManager did)
//     sessionTimeout    int32
//     subscription      bytes (v4: compact)            its ConsumerProtocolSubscription (consumer_protocol.hpp)
//     assignment        bytes (v4: compact)            its ConsumerProtocolAssignment
//     tagged fields                                    v4 only
//   tagged fields                                      v4 only
//   Kafka writes v3 (GROUP_METADATA_VALUE_VERSION in GroupCoordinatorRecordHelpers).
//   e.g. v3 protocolType "consumer", generation 1, protocol "range", leader "m",
//   currentStateTimestamp 7, one member "m" (no instance id), client "c", host "h",
//   timeouts 300000 / 45000, subscription 01, assignment 02:
//   00 03 | 00 08 "consumer" | 00 00 00 01 | 00 05 "range" | 00 01 6d | 00..07 | 00 00 00 01
//         | 00 01 6d | ff ff | 00 01 63 | 00 01 68 | 00 04 93 e0 | 00 00 af c8
//         | 00 00 00 01 01 | 00 00 00 01 02
//
// Decoders accept exactly the versions above, check every length against the
// bytes left, reject trailing bytes, and fail with errc::corrupt_message naming
// the field and byte position. They never read outside the given span.
//
// PARTITIONING: a group's records live in partition
//   Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions     (default 50)
// where hashCode is Java's String.hashCode over UTF-16 code units and
// Utils.abs(Integer.MIN_VALUE) = 0 (offsets_topic_partition_for below).
//
// Thread-safety: the record types are plain values; every function is pure
// and may be called from any number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>

namespace brook {

/// Kafka's name of the topic.
inline constexpr std::string_view offsets_topic_name = "__consumer_offsets";
/// offsets.topic.num.partitions default.
inline constexpr std::int32_t offsets_topic_default_partitions = 50;

/// Record types (key prefixes). Kafka writes offset_commit (1) and group_metadata (2).
inline constexpr std::int16_t offsets_key_legacy_offset_commit = 0;
inline constexpr std::int16_t offsets_key_offset_commit = 1;
inline constexpr std::int16_t offsets_key_group_metadata = 2;

/// Highest value versions brook reads.
inline constexpr std::int16_t offset_commit_value_max_version = 4;
inline constexpr std::int16_t group_metadata_value_max_version = 4;

/// Key of a committed offset. Thread-safety: value.
struct offset_commit_key {
  std::string group;
  std::string topic;
  std::int32_t partition = 0;
  friend bool operator==(const offset_commit_key&, const offset_commit_key&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using k = offset_commit_key;
    return message<k>({.name = "OffsetCommitKey", .valid = only(0)}, field("group", &k::group),
                      field("topic", &k::topic), field("partition", &k::partition));
  }
};

/// A committed offset. Thread-safety: value.
struct offset_commit_value {
  std::int64_t offset = 0;
  std::int32_t leader_epoch = -1;  ///< -1 = unknown
  std::string metadata;
  std::int64_t commit_timestamp = 0;
  std::int64_t expire_timestamp = -1;  ///< -1 = none; set only by old clients (OffsetCommit v1); forces value v1
  friend bool operator==(const offset_commit_value&, const offset_commit_value&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using v = offset_commit_value;
    return message<v>({.name = "OffsetCommitValue", .valid = between(0, 4), .flexible = since(4)},
                      field("offset", &v::offset), field("leaderEpoch", &v::leader_epoch).in(since(3)).ignorable(),
                      field("metadata", &v::metadata), field("commitTimestamp", &v::commit_timestamp),
                      field("expireTimestamp", &v::expire_timestamp).in(only(1)).ignorable());
  }
};

/// Key of a group's metadata. Thread-safety: value.
struct group_metadata_key {
  std::string group;
  friend bool operator==(const group_metadata_key&, const group_metadata_key&) = default;
  static constexpr auto schema() {
    using namespace codec;
    return message<group_metadata_key>({.name = "GroupMetadataKey", .valid = only(0)},
                                       field("group", &group_metadata_key::group));
  }
};

/// One member of a classic group as stored in its group metadata. Thread-safety: value.
struct group_member_metadata {
  std::string member_id;
  std::optional<std::string> group_instance_id;  ///< static membership (KIP-345)
  std::string client_id;
  std::string client_host;
  std::int32_t rebalance_timeout_ms = 0;
  std::int32_t session_timeout_ms = 0;
  std::vector<std::byte> subscription;  ///< the member's metadata for the chosen protocol
  std::vector<std::byte> assignment;    ///< what the leader assigned it
  friend bool operator==(const group_member_metadata&, const group_member_metadata&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using m = group_member_metadata;
    return structure<m>(field("memberId", &m::member_id),
                        field("groupInstanceId", &m::group_instance_id).in(since(3)).ignorable(),
                        field("clientId", &m::client_id), field("clientHost", &m::client_host),
                        field("rebalanceTimeout", &m::rebalance_timeout_ms).in(since(1)).ignorable(),
                        field("sessionTimeout", &m::session_timeout_ms), field("subscription", &m::subscription),
                        field("assignment", &m::assignment));
  }
};

/// A classic group's state (GroupMetadataValue). Thread-safety: value.
struct group_metadata_value {
  std::string protocol_type;  ///< "consumer" for consumer groups, "" for an empty group
  std::int32_t generation = 0;
  std::optional<std::string> protocol;  ///< chosen assignor, null when no member
  std::optional<std::string> leader;
  std::int64_t current_state_timestamp = -1;
  std::vector<group_member_metadata> members;
  friend bool operator==(const group_metadata_value&, const group_metadata_value&) = default;
  static constexpr auto schema() {
    using namespace codec;
    using g = group_metadata_value;
    return message<g>({.name = "GroupMetadataValue", .valid = between(0, 4), .flexible = since(4)},
                      field("protocolType", &g::protocol_type), field("generation", &g::generation),
                      field("protocol", &g::protocol), field("leader", &g::leader),
                      field("currentStateTimestamp", &g::current_state_timestamp).in(since(2)).ignorable(),
                      field("members", &g::members));
  }
};

/// A decoded key: which kind of record, and its fields.
using offsets_topic_key = std::variant<offset_commit_key, group_metadata_key>;

// ------------------------------------------------------------------ encoding

namespace detail {
/// Reads the int16 value version, checks it against [0, max], and decodes the rest as T.
template <typename T>
result<T> decode_versioned_value(std::span<const std::byte> bytes, std::int16_t max) {
  constexpr std::string_view name = codec::schema_of<T>.info.name;
  codec::message_reader r(bytes, std::string(name));
  std::int16_t version = 0;
  BROOK_TRY(r.int16("version", version));
  if (version < 0 || version > max)
    return r.fail_at(0, "version", "unknown {} version {} (brook reads 0..{})", name, version, max);
  r.set_what(fmt::format("{} v{}", name, version));
  T out;
  BROOK_TRY(codec::read(r, out, version));
  BROOK_TRY(r.expect_end());
  return out;
}
}  // namespace detail

/// Offset commit key, record type 1 (what Kafka writes). REQUIRES: group, topic <= 32767 bytes.
inline std::vector<std::byte> encode(const offset_commit_key& k) {
  return codec::encode_prefixed(offsets_key_offset_commit, k, 0);
}

/// Group metadata key, record type 2. REQUIRES: group <= 32767 bytes.
inline std::vector<std::byte> encode(const group_metadata_key& k) {
  return codec::encode_prefixed(offsets_key_group_metadata, k, 0);
}

/// The value version Kafka writes for v: 1 when an expire timestamp is set, else 3.
inline std::int16_t offset_commit_value_version_for(const offset_commit_value& v) noexcept {
  return v.expire_timestamp != -1 ? 1 : 3;
}

/// Offset commit value at an explicit version 0..4; fields the version lacks are
/// dropped (expire timestamp outside v1 is written nowhere, leader epoch before v3).
/// REQUIRES: 0 <= version <= 4, metadata <= 32767 bytes.
inline std::vector<std::byte> encode(const offset_commit_value& v, std::int16_t version) {
  return codec::encode_prefixed(version, v, version);
}

/// Offset commit value at the version Kafka writes: v3, or v1 when expire_timestamp is set.
inline std::vector<std::byte> encode(const offset_commit_value& v) {
  return encode(v, offset_commit_value_version_for(v));
}

/// Group metadata value at an explicit version 0..4; fields the version lacks are dropped.
/// REQUIRES: 0 <= version <= 4, strings <= 32767 bytes.
inline std::vector<std::byte> encode(const group_metadata_value& g, std::int16_t version) {
  return codec::encode_prefixed(version, g, version);
}

/// Group metadata value at the version Kafka writes: v3.
inline std::vector<std::byte> encode(const group_metadata_value& g) { return encode(g, 3); }

// ------------------------------------------------------------------ decoding

/// Decodes a key of any type Kafka writes for offsets and classic groups (0, 1, 2).
inline result<offsets_topic_key> decode_offsets_topic_key(std::span<const std::byte> bytes) {
  codec::message_reader r(bytes, "__consumer_offsets key");
  std::int16_t type = 0;
  BROOK_TRY(r.int16("record type", type));
  if (type == offsets_key_legacy_offset_commit || type == offsets_key_offset_commit) {
    r.set_what(type == 0 ? "LegacyOffsetCommitKey" : "OffsetCommitKey");
    offset_commit_key k;
    BROOK_TRY(codec::read(r, k, 0));
    BROOK_TRY(r.expect_end());
    return offsets_topic_key(std::move(k));
  }
  if (type == offsets_key_group_metadata) {
    r.set_what("GroupMetadataKey");
    group_metadata_key k;
    BROOK_TRY(codec::read(r, k, 0));
    BROOK_TRY(r.expect_end());
    return offsets_topic_key(std::move(k));
  }
  return r.fail_at(0, "record type", "unknown record type {} (brook reads 0 and 1 = offset commit, 2 = group metadata)",
                   type);
}

/// Decodes an offset commit value of version 0..4.
inline result<offset_commit_value> decode_offset_commit_value(std::span<const std::byte> bytes) {
  return detail::decode_versioned_value<offset_commit_value>(bytes, offset_commit_value_max_version);
}

/// Decodes a group metadata value of version 0..4. At v0, which has no rebalance timeout,
/// each member's reads back as its session timeout (as GroupMetadataManager did).
inline result<group_metadata_value> decode_group_metadata_value(std::span<const std::byte> bytes) {
  auto g = detail::decode_versioned_value<group_metadata_value>(bytes, group_metadata_value_max_version);
  if (g && !bytes.empty() && detail::load_be16(bytes.data()) == 0)
    for (auto& m : g->members) m.rebalance_timeout_ms = m.session_timeout_ms;
  return g;
}

// ------------------------------------------------------------------ partitioning

/// Java's String.hashCode of the string whose UTF-8 bytes are `s`: s[0]*31^(n-1) + ... + s[n-1]
/// in wrapping int32 arithmetic over UTF-16 code units (a code point above U+FFFF counts as its
/// two surrogates). Ill-formed UTF-8 (which no Java client can send) is hashed with each maximal
/// ill-formed subpart replaced by one U+FFFD, the Unicode-recommended practice Kafka's
/// new String(bytes, UTF_8) follows for stray and truncated bytes; for some ill-formed
/// 3-byte sequences (e.g. UTF-8-encoded surrogates ED A0 80) the JDK's replacement count differs.
inline std::int32_t java_string_hash(std::string_view s) noexcept {
  std::uint32_t h = 0;  // unsigned: wrapping multiplication without UB
  auto add = [&h](std::uint32_t unit) { h = h * 31u + unit; };
  auto add_code_point = [&add](std::uint32_t cp) {
    if (cp < 0x10000) {
      add(cp);
    } else {
      cp -= 0x10000;
      add(0xD800 + (cp >> 10));
      add(0xDC00 + (cp & 0x3FF));
    }
  };
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned b0 = p[i];
    if (b0 < 0x80) {
      add(b0);
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Unicode Table 3-7)
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2;
      cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3;
      cp = b0 & 0x0F;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;  // no UTF-8-encoded surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4;
      cp = b0 & 0x07;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      add(0xFFFD);  // 80..C1, F5..FF never start a sequence
      ++i;
      continue;
    }
    std::size_t k = 1;
    for (; k < len && i + k < n; ++k) {
      const unsigned b = p[i + k];
      const unsigned l = k == 1 ? lo : 0x80, u = k == 1 ? hi : 0xBF;
      if (b < l || b > u) break;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (k == len) {
      add_code_point(cp);
    } else {
      add(0xFFFD);  // the maximal subpart p[i, i+k) is ill-formed
    }
    i += k;
  }
  return static_cast<std::int32_t>(h);
}

/// The __consumer_offsets partition holding `group`'s records:
/// Utils.abs(group.hashCode()) % num_partitions, with Utils.abs(INT_MIN) = 0.
/// REQUIRES: num_partitions > 0.
inline std::int32_t offsets_topic_partition_for(std::string_view group, std::int32_t num_partitions) {
  BROOK_ASSERT(num_partitions > 0, "offsets topic partitions must be positive, got {}", num_partitions);
  const std::int32_t h = java_string_hash(group);
  const std::int32_t abs = h == std::numeric_limits<std::int32_t>::min() ? 0 : (h < 0 ? -h : h);
  return abs % num_partitions;
}

}  // namespace brook

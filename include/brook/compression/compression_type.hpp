// Kafka's compression codecs by id and name.
//
// The id is what a magic-2 RecordBatch keeps in bits 0-2 of its attributes (the bit layout
// is documented in format/record_batch.hpp); the names are those of Kafka's
// `compression.type` producer config. Ids 5-7 fit the bits but name no codec.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <brook/core/error.hpp>
#include <brook/core/printable.hpp>
#include <brook/core/result.hpp>

namespace brook {

/// Kafka's codec ids (org.apache.kafka.common.record.CompressionType).
enum class compression_type : std::int8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };

/// The largest id Kafka defines (zstd).
inline constexpr int max_compression_type_id = 4;

/// Kafka's name of a codec: "none", "gzip", "snappy", "lz4", "zstd" ("unknown" for an id Kafka
/// does not define, which only a cast can make).
constexpr std::string_view compression_name(compression_type t) noexcept {
  switch (t) {
    case compression_type::none: return "none";
    case compression_type::gzip: return "gzip";
    case compression_type::snappy: return "snappy";
    case compression_type::lz4: return "lz4";
    case compression_type::zstd: return "zstd";
  }
  return "unknown";
}

/// The codec of an id (attribute bits 0-2), or nullopt for an id Kafka does not define (5-7,
/// or anything outside 0..7).
constexpr std::optional<compression_type> compression_type_from_id(int id) noexcept {
  if (id < 0 || id > max_compression_type_id) return std::nullopt;
  return static_cast<compression_type>(id);
}

/// Kafka's `compression.<codec>.level` for a codec (KIP-390): its default and range, the same
/// for producers and topics. gzip also takes -1 (zlib's default, 6); snappy has no level (0).
/// zstd's range is libzstd's (ZSTD_minCLevel() -131072 .. ZSTD_maxCLevel() 22, as zstd-jni's).
struct compression_levels {
  int min = 0;
  int max = 0;
  int default_level = 0;
};
constexpr compression_levels kafka_compression_levels(compression_type t) noexcept {
  switch (t) {
    case compression_type::gzip: return {1, 9, -1};
    case compression_type::lz4: return {1, 17, 9};
    case compression_type::zstd: return {-131072, 22, 3};
    case compression_type::none:
    case compression_type::snappy: break;
  }
  return {0, 0, 0};
}
/// True when `level` is a valid `compression.<codec>.level` for `t`.
constexpr bool valid_kafka_compression_level(compression_type t, int level) noexcept {
  const auto r = kafka_compression_levels(t);
  return (level >= r.min && level <= r.max) || level == r.default_level;
}

/// The codec of a Kafka name, as `compression.type` takes it: "none", "gzip", "snappy", "lz4"
/// or "zstd", in any ASCII case (Kafka's validators ignore case). Anything else, including
/// the topic-only values "producer" and "uncompressed", is `invalid_config` naming the value
/// (echoed safely) and listing the valid names.
inline result<compression_type> parse_compression_type(std::string_view name) {
  for (int id = 0; id <= max_compression_type_id; ++id) {
    const auto t = static_cast<compression_type>(id);
    const std::string_view want = compression_name(t);
    if (name.size() != want.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size() && same; ++i) {
      char c = name[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      same = c == want[i];
    }
    if (same) return t;
  }
  return make_error(errc::invalid_config, "unknown compression type '{}' (Kafka's are none, gzip, snappy, lz4, zstd)",
                    detail::printable(name));
}

}  // namespace brook

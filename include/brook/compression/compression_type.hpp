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

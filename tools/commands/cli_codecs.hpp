// The compression codecs the `brook` tool enables: every one it was built with.
//
// tools/CMakeLists.txt links each brook::<codec> target the configure step defined (the
// library was found) and defines BROOK_CLI_CODEC_<NAME>=1 for it; this header includes
// exactly those codecs (docs/compression.md, "Enabling a codec"). Every data directory and
// partition log the tool opens reads, validates and writes compressed batches with them, and
// a batch of a codec the tool was built without is UNSUPPORTED_COMPRESSION_TYPE naming it.
//
// Thread-safety: pure functions returning values; the codecs are thread-safe.
#pragma once

#include <memory>
#include <string>

#include <brook/compression/compression_codec.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/log_config.hpp>

#if defined(BROOK_CLI_CODEC_GZIP)
#include <brook/codecs/gzip.hpp>
#endif
#if defined(BROOK_CLI_CODEC_SNAPPY)
#include <brook/codecs/snappy.hpp>
#endif
#if defined(BROOK_CLI_CODEC_LZ4)
#include <brook/codecs/lz4.hpp>
#endif
#if defined(BROOK_CLI_CODEC_ZSTD)
#include <brook/codecs/zstd.hpp>
#endif

namespace brook::cli {

/// `none` and every codec the tool was built with.
inline compression_codecs cli_codec_set() {
  compression_codecs c;
#if defined(BROOK_CLI_CODEC_GZIP)
  c.add(std::make_shared<codecs::gzip_codec>());
#endif
#if defined(BROOK_CLI_CODEC_SNAPPY)
  c.add(std::make_shared<codecs::snappy_codec>());
#endif
#if defined(BROOK_CLI_CODEC_LZ4)
  c.add(std::make_shared<codecs::lz4_codec>());
#endif
#if defined(BROOK_CLI_CODEC_ZSTD)
  c.add(std::make_shared<codecs::zstd_codec>());
#endif
  return c;
}

/// The same, shared, as log_config::codecs takes them.
inline std::shared_ptr<const compression_codecs> cli_codecs() {
  return std::make_shared<const compression_codecs>(cli_codec_set());
}

/// The names of the codecs the tool was built with, "none" first: "none, gzip, zstd".
inline std::string cli_codec_names() {
  const compression_codecs c = cli_codec_set();
  std::string out;
  for (int id = 0; id <= max_compression_type_id; ++id) {
    const auto t = static_cast<compression_type>(id);
    if (c.find(t) == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += compression_name(t);
  }
  return out;
}

/// A partition log's config for the tool: brook's defaults with the tool's codecs.
inline log_config cli_log_config() {
  log_config c;
  c.codecs = cli_codecs();
  return c;
}

/// Data directory options for the tool: brook's defaults with the tool's codecs as every
/// topic's log default.
inline data_dir_options cli_data_dir_options() {
  data_dir_options o;
  o.defaults.codecs = cli_codecs();
  return o;
}

}  // namespace brook::cli

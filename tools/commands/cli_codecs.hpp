// The compression codecs the `brook` tool enables: every one it was built with.
//
// tools/CMakeLists.txt links each brook::<codec> target the configure step defined (the
// library was found) and defines BROOK_CLI_CODEC_<NAME>=1 for it; this header includes
// exactly those codecs (docs/compression.md, "Enabling a codec"). Every data directory and
// partition log the tool opens reads, validates and writes compressed batches with them, and
// a batch of a codec the tool was built without is UNSUPPORTED_COMPRESSION_TYPE naming it
// (parse_batch), said for a user of the tool rather than for a program linking brook.
//
// Thread-safety: pure functions returning values; the codecs are thread-safe.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <brook/compression/compression_codec.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>
#include <brook/format/batch_decompressor.hpp>
#include <brook/format/record_batch.hpp>
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

/// The same, shared, as log_config::codecs takes them: one set for the whole process, so a
/// codec pointer taken from it stays valid until the tool exits.
inline const std::shared_ptr<const compression_codecs>& cli_codecs() {
  static const auto codecs = std::make_shared<const compression_codecs>(cli_codec_set());
  return codecs;
}

/// The names of the codecs `c` enables, "none" first: "none, gzip, zstd".
inline std::string codec_names(const compression_codecs& c) {
  std::string out;
  for (int id = 0; id <= max_compression_type_id; ++id) {
    const auto t = static_cast<compression_type>(id);
    if (c.find(t) == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += compression_name(t);
  }
  return out;
}

/// The library a codec needs at configure time, as docs/compression.md names it.
constexpr std::string_view codec_library(compression_type t) noexcept {
  switch (t) {
    case compression_type::gzip: return "zlib (zlib1g-dev)";
    case compression_type::snappy: return "libsnappy (libsnappy-dev)";
    case compression_type::lz4: return "liblz4 (liblz4-dev)";
    case compression_type::zstd: return "libzstd (libzstd-dev)";
    default: return "none";
  }
}

/// "this brook was built without the zstd codec (it reads none, gzip): install libzstd
/// (libzstd-dev) and build brook again", for a codec `c` lacks. The library's own message
/// tells a program linking brook how to add a codec, which a user of the tool cannot act on.
inline std::string not_built_with(compression_type t, const compression_codecs& c) {
  const std::string_view name = compression_name(t);
  return fmt::format("this brook was built without the {} codec (it reads {}): install {} and build brook again", name,
                     codec_names(c), codec_library(t));
}

/// The tool's codec for `type` (valid until the tool exits), or UNSUPPORTED_COMPRESSION_TYPE
/// (not_built_with).
inline result<const compression_codec*> cli_codec(compression_type type) {
  const compression_codecs& c = *cli_codecs();
  auto codec = c.get(type);
  if (!codec) return make_error(errc::unsupported_compression_type, "{}", not_built_with(type, c));
  return codec;
}

/// The tool's decompressor: its codecs, at most default_max_decompressed_batch_bytes a batch.
inline batch_decompressor cli_decompressor() { return batch_decompressor(cli_codec_set()); }

/// record_batch_view::parse of the batch at the start of `b` with every check, a compressed
/// batch's records decompressed into `d` (the view's records are valid until d's next use).
/// A batch of a codec `d` lacks is UNSUPPORTED_COMPRESSION_TYPE naming the batch and saying
/// so (not_built_with).
template <typename Where>
result<record_batch_view> parse_batch(std::span<const std::byte> b, batch_decompressor& d, const Where& where) {
  auto v = record_batch_view::parse(b, d, batch_check{}, where);
  if (v || v.error() != errc::unsupported_compression_type) return v;
  auto h = record_batch_view::parse(b, batch_check{.crc = true, .records = false}, where);
  if (!h || d.codecs().find(h->compression()) != nullptr) return v;
  return make_error(errc::unsupported_compression_type, "{}: batch at offset {} is {}-compressed, and {}",
                    detail::where_string(where), h->header().base_offset, compression_name(h->compression()),
                    not_built_with(h->compression(), d.codecs()));
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

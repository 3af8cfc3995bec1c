// The four codecs brook's tests read and write compressed batches with (tests/CMakeLists.txt
// links their libraries into every test).
//
// Thread-safety: functions returning values; the codecs are thread-safe.
#pragma once

#include <array>
#include <memory>

#include <brook/codecs/gzip.hpp>
#include <brook/codecs/lz4.hpp>
#include <brook/codecs/snappy.hpp>
#include <brook/codecs/zstd.hpp>
#include <brook/compression/compression_codec.hpp>

namespace brook::test {

/// Kafka's four codecs, all enabled.
inline compression_codecs all_codecs() {
  return compression_codecs{std::make_shared<codecs::gzip_codec>(), std::make_shared<codecs::snappy_codec>(),
                            std::make_shared<codecs::lz4_codec>(), std::make_shared<codecs::zstd_codec>()};
}

/// Every codec id, `none` first.
inline constexpr std::array<compression_type, 5> every_compression_type{compression_type::none, compression_type::gzip,
                                                                        compression_type::snappy, compression_type::lz4,
                                                                        compression_type::zstd};

}  // namespace brook::test

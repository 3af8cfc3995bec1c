// The codec seam: what a host chooses to compress and decompress Kafka's batches with.
//
// brook links no compression library. A host that wants a codec includes its opt-in header
// (brook/codecs/gzip.hpp, snappy.hpp, lz4.hpp, zstd.hpp), links the CMake target of the same
// name (brook::gzip, ...) and adds an instance to the compression_codecs it hands to brook:
//
//   brook::compression_codecs codecs;
//   codecs.add(std::make_shared<brook::codecs::zstd_codec>());
//   auto codec = codecs.get(brook::compression_type::zstd);   // or unsupported_compression_type
//
// Levels are Kafka's (KIP-390, `compression.<codec>.level`), not the libraries' own: each
// codec maps them. What `compress` appends is the framing Kafka's Java client writes for
// magic-2 batches; `decompress` reads every framing a real Kafka client writes
// (docs/compression.md lists them).
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <brook/compression/compression_type.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>

namespace brook {

/// The size of one window a decompressor fills between two checks of its limit (64 KiB, the
/// block of the lz4 frames Java and librdkafka write). A buffer that is reused across batches
/// keeps this much room, so liblz4 decodes such a block straight into it
/// (format/batch_decompressor.hpp).
inline constexpr std::size_t decompress_window_bytes = 64 * 1024;

/// One codec. An interface (not a template) because the host chooses the codecs at run time
/// and the virtual call is nothing next to compressing a batch.
/// Thread-safety: implementations are thread-safe: every member may be called from any number
/// of threads at once (each codec says what state it keeps per call or per thread).
class compression_codec {
 public:
  virtual ~compression_codec() = default;

  /// The codec's Kafka id.
  virtual compression_type type() const noexcept = 0;
  /// Kafka's default level (`compression.<codec>.level`'s default).
  virtual int default_level() const noexcept = 0;
  /// True when `level` is within Kafka's range for this codec.
  virtual bool valid_level(int level) const noexcept = 0;

  /// Appends `in` compressed at `level` to `out`, in Kafka's framing for magic-2 batches.
  /// A level outside valid_level is `invalid_config` naming the range; `out` is then as it was.
  virtual result<void> compress(std::span<const std::byte> in, int level, byte_buffer& out) const = 0;

  /// Appends the decompressed bytes of `in` (one whole codec payload) to `out`, producing at
  /// most `max_bytes`: more is `record_too_large` naming the limit, found without allocating
  /// more than about max_bytes whatever sizes the input claims. Empty, garbage, truncated
  /// input, or bytes after the payload's end, are `corrupt_message` naming the codec. On an
  /// error `out` is as it was.
  virtual result<void> decompress(std::span<const std::byte> in, std::size_t max_bytes, byte_buffer& out) const = 0;
};

/// The codec of `none`: bytes as they are. Level 0 only. compression_codecs holds one always.
/// Thread-safety: stateless; thread-safe.
class none_codec final : public compression_codec {
 public:
  compression_type type() const noexcept override { return compression_type::none; }
  int default_level() const noexcept override { return 0; }
  bool valid_level(int level) const noexcept override { return level == 0; }
  result<void> compress(std::span<const std::byte> in, int level, byte_buffer& out) const override {
    if (!valid_level(level)) return make_error(errc::invalid_config, "none takes no compression level (got {})", level);
    out.insert(out.end(), in.begin(), in.end());
    return {};
  }
  result<void> decompress(std::span<const std::byte> in, std::size_t max_bytes, byte_buffer& out) const override {
    if (in.size() > max_bytes) {
      return make_error(errc::record_too_large, "{} uncompressed bytes exceed the limit of {} bytes", in.size(),
                        max_bytes);
    }
    out.insert(out.end(), in.begin(), in.end());
    return {};
  }
};

/// The codecs a host enables: at most one per compression_type, `none` always (none_codec).
/// A value the host builds and hands to brook; no global registry exists.
///
///   brook::compression_codecs codecs{std::make_shared<brook::codecs::gzip_codec>(),
///                                    std::make_shared<brook::codecs::lz4_codec>()};
///
/// Thread-safety: const members may be called from any number of threads at once; add() must
/// not run concurrently with anything else on the same object. Copies share the codecs.
class compression_codecs {
 public:
  /// Only `none`.
  compression_codecs() = default;
  /// `none` and these codecs (as add() for each).
  compression_codecs(std::initializer_list<std::shared_ptr<const compression_codec>> codecs) {
    for (const auto& c : codecs) add(c);
  }

  /// Enables `codec` for its type(), replacing the one enabled before.
  /// REQUIRES: codec is not null and its type is gzip, snappy, lz4 or zstd.
  compression_codecs& add(std::shared_ptr<const compression_codec> codec) {
    BROOK_ASSERT(codec != nullptr, "compression_codecs::add: a null codec");
    const auto id = static_cast<int>(codec->type());
    BROOK_ASSERT(id >= 1 && id <= max_compression_type_id, "compression_codecs::add: a codec of type id {}", id);
    codecs_[static_cast<std::size_t>(id)] = std::move(codec);
    return *this;
  }

  /// True when no codec but `none` is enabled.
  bool only_none() const noexcept {
    for (const auto& c : codecs_)
      if (c) return false;
    return true;
  }

  /// The codec enabled for `type` (none_codec for `none`), or nullptr.
  const compression_codec* find(compression_type type) const noexcept {
    const int id = static_cast<int>(type);
    if (type == compression_type::none) return &none_;
    if (id < 0 || id > max_compression_type_id) return nullptr;
    return codecs_[static_cast<std::size_t>(id)].get();
  }

  /// The codec enabled for `type`, or `unsupported_compression_type` naming the codec and how
  /// a host enables it (an id Kafka does not define gets the same code, naming the id).
  result<const compression_codec*> get(compression_type type) const {
    if (const auto* c = find(type)) return c;
    const std::string_view name = compression_name(type);
    if (name == "unknown") {
      return make_error(errc::unsupported_compression_type, "compression type id {} is not one Kafka defines",
                        static_cast<int>(type));
    }
    return make_error(errc::unsupported_compression_type,
                      "the {} codec is not enabled: include <brook/codecs/{}.hpp>, link brook::{} and add a "
                      "brook::codecs::{}_codec to the compression_codecs",
                      name, name, name, name);
  }

 private:
  none_codec none_;
  std::array<std::shared_ptr<const compression_codec>, max_compression_type_id + 1> codecs_;
};

}  // namespace brook

// Kafka's snappy codec (compression type 2) over libsnappy. Opt-in: link brook::snappy
// (libsnappy).
//
// Writes what Kafka's Java client writes (snappy-java's SnappyOutputStream, the "xerial"
// framing), which every Kafka client reads:
//
//   82 53 4E 41 50 50 59 00   magic (0x82 "SNAPPY" 0)
//   00 00 00 01               version 1, int32 big-endian
//   00 00 00 01               compatible version 1, int32 big-endian
//   { int32 big-endian length, raw snappy block of that many bytes }*
//
// each block holding at most 32 KiB of input (no blocks for empty input). Reads that framing
// (a repeated header between blocks too, as snappy-java writes when streams are
// concatenated) and raw snappy, what librdkafka and kafkajs write: input that does not start
// with the 8 magic bytes is one raw snappy buffer, as every Kafka reader decides.
// Uncompressed lengths (a raw buffer's varint, each block's) are checked against the limit
// before any allocation.
//
// Levels: snappy has none in Kafka; level 0 only.
//
// Thread-safety: stateless; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <snappy.h>
#include <boost/endian/conversion.hpp>

#include <brook/codecs/detail/bounded_output.hpp>
#include <brook/compression/compression_codec.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>

namespace brook::codecs {

class snappy_codec final : public compression_codec {
 public:
  /// snappy-java's magic, the first 8 bytes of the xerial header.
  static constexpr std::array<unsigned char, 8> xerial_magic{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
  /// The header: magic, version (int32), compatible version (int32).
  static constexpr std::size_t xerial_header_size = 8 + 4 + 4;
  static_assert(xerial_header_size == 16);
  /// snappy-java's version and oldest compatible version, both 1.
  static constexpr std::uint32_t xerial_version = 1;
  /// Input bytes per block: snappy-java's default block size, which Kafka uses.
  static constexpr std::size_t xerial_block_size = 32 * 1024;

  compression_type type() const noexcept override { return compression_type::snappy; }
  int default_level() const noexcept override { return 0; }
  bool valid_level(int level) const noexcept override { return level == 0; }

  result<void> compress(std::span<const std::byte> in, int level, byte_buffer& out) const override {
    if (!valid_level(level)) return detail::bad_level("snappy", level, "0 (snappy has no level)");
    const std::size_t start = out.size();
    const std::size_t blocks = (in.size() + xerial_block_size - 1) / xerial_block_size;
    out.resize(start + xerial_header_size + blocks * (4 + snappy::MaxCompressedLength(xerial_block_size)));
    auto* p = reinterpret_cast<unsigned char*>(out.data() + start);
    std::copy(xerial_magic.begin(), xerial_magic.end(), p);
    boost::endian::store_big_u32(p + 8, xerial_version);
    boost::endian::store_big_u32(p + 12, xerial_version);
    std::size_t at = xerial_header_size;
    for (std::size_t done = 0; done < in.size(); done += xerial_block_size) {
      const std::size_t n = std::min(xerial_block_size, in.size() - done);
      std::size_t written = 0;
      snappy::RawCompress(reinterpret_cast<const char*>(in.data() + done), n, reinterpret_cast<char*>(p + at + 4),
                          &written);
      boost::endian::store_big_u32(p + at, static_cast<std::uint32_t>(written));
      at += 4 + written;
    }
    out.resize(start + at);
    return {};
  }

  result<void> decompress(std::span<const std::byte> in, std::size_t max_bytes, byte_buffer& out) const override {
    detail::bounded_output sink(out, max_bytes);
    auto r = is_xerial(in) ? decompress_xerial(in, sink) : decompress_raw(in, sink);
    if (r) sink.keep();
    return r;
  }

 private:
  static bool is_xerial(std::span<const std::byte> in) {
    if (in.size() < xerial_magic.size()) return false;
    for (std::size_t i = 0; i < xerial_magic.size(); ++i) {
      if (static_cast<unsigned char>(in[i]) != xerial_magic[i]) return false;
    }
    return true;
  }

  // One raw snappy buffer into `sink`; the declared length is checked before allocating.
  static result<void> decompress_raw(std::span<const std::byte> in, detail::bounded_output& sink) {
    const auto* src = reinterpret_cast<const char*>(in.data());
    std::size_t length = 0;
    if (in.empty() || !snappy::GetUncompressedLength(src, in.size(), &length)) {
      return detail::corrupt("snappy", "no valid length");
    }
    if (!sink.fits(length)) return sink.too_large("snappy");
    if (!snappy::RawUncompress(src, in.size(), reinterpret_cast<char*>(sink.reserve_exact(length)))) {
      return detail::corrupt("snappy", "invalid raw snappy data");
    }
    sink.commit(length);
    return {};
  }

  // A xerial header check: the magic was seen; the compatible version must be 1 or less.
  static result<void> check_header(std::span<const std::byte> in, std::size_t at) {
    if (in.size() - at < xerial_header_size) return detail::corrupt("snappy", "truncated xerial header");
    const auto compatible = boost::endian::load_big_u32(reinterpret_cast<const unsigned char*>(in.data() + at + 12));
    if (compatible > xerial_version) {
      return detail::corrupt("snappy", fmt::format("xerial compatible version {} (brook reads 1)", compatible));
    }
    return {};
  }

  // The xerial framing: blocks until the input ends exactly at one's end.
  static result<void> decompress_xerial(std::span<const std::byte> in, detail::bounded_output& sink) {
    BROOK_TRY(check_header(in, 0));
    std::size_t at = xerial_header_size;
    while (at < in.size()) {
      if (in.size() - at < 4) return detail::corrupt("snappy", "truncated xerial block length");
      const auto* p = reinterpret_cast<const unsigned char*>(in.data() + at);
      if (std::equal(xerial_magic.begin(), xerial_magic.begin() + 4, p)) {  // another header
        if (in.size() - at < xerial_magic.size() || !is_xerial(in.subspan(at))) {
          return detail::corrupt("snappy", "truncated xerial header");
        }
        BROOK_TRY(check_header(in, at));
        at += xerial_header_size;
        continue;
      }
      const std::uint32_t n = boost::endian::load_big_u32(p);
      at += 4;
      if (n > in.size() - at) return detail::corrupt("snappy", fmt::format("xerial block of {} bytes truncated", n));
      const auto* src = reinterpret_cast<const char*>(in.data() + at);
      std::size_t length = 0;
      if (n == 0 || !snappy::GetUncompressedLength(src, n, &length)) {
        return detail::corrupt("snappy", "xerial block without a valid length");
      }
      if (!sink.fits(length)) return sink.too_large("snappy");
      if (!snappy::RawUncompress(src, n, reinterpret_cast<char*>(sink.reserve_exact(length)))) {
        return detail::corrupt("snappy", "invalid xerial block");
      }
      sink.commit(length);
      at += n;
    }
    return {};
  }
};

}  // namespace brook::codecs

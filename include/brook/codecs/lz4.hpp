// Kafka's lz4 codec (compression type 3) over liblz4's frame API. Opt-in: link brook::lz4
// (liblz4).
//
// Writes the LZ4 frame Kafka's Java client writes for magic-2 batches (KafkaLZ4BlockOutput-
// Stream): magic 04 22 4D 18, FLG 0x60 (version 1, independent blocks, no block checksums,
// no content size, no content checksum), BD 0x40 (64 KiB blocks), the header checksum
// computed correctly (only magic 0 used Kafka's broken one), the blocks, the end mark.
// Reads any single LZ4 frame liblz4 accepts: blocks of 64 KiB to 4 MiB, block and content
// checksums (verified), a content size, linked blocks; kafkajs's lz4 codec writes 4 MiB
// blocks and a content checksum. Bytes after the frame's end mark are corrupt_message (as
// librdkafka); a content size claimed past the limit is refused before decoding.
//
// Levels (KIP-390 `compression.lz4.level`): 9 by default, 1..17 (lz4-java's range). As in
// Kafka's Java client, level 9 is LZ4's fast compressor and every other level its high-
// compression (HC) one; liblz4's frame API runs HC at levels 3..12, so levels 1 and 2 run as
// HC level 3 and levels above 12 as HC level 12 (lz4-java's HC tops out at 12 too).
//
// Thread-safety: thread-safe: compression makes an LZ4F context per call; decompression
// keeps one per thread (thread_local, reset before each call).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <lz4frame.h>

#include <brook/codecs/detail/bounded_output.hpp>
#include <brook/compression/compression_codec.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>

namespace brook::codecs {

class lz4_codec final : public compression_codec {
 public:
  /// Kafka's default level, the one that runs LZ4's fast compressor.
  static constexpr int fast_level = 9;

  compression_type type() const noexcept override { return compression_type::lz4; }
  int default_level() const noexcept override { return fast_level; }
  bool valid_level(int level) const noexcept override { return level >= 1 && level <= 17; }

  /// liblz4's frame level for Kafka's `level`: 0 (fast, acceleration 1) for 9, else HC 3..12.
  static int liblz4_level(int level) noexcept { return level == fast_level ? 0 : std::clamp(level, 3, 12); }

  result<void> compress(std::span<const std::byte> in, int level, byte_buffer& out) const override {
    if (!valid_level(level)) return detail::bad_level("lz4", level, "1..17");
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
    prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
    prefs.frameInfo.contentSize = 0;
    prefs.compressionLevel = liblz4_level(level);
    const std::size_t start = out.size();
    out.resize(start + LZ4F_compressFrameBound(in.size(), &prefs));
    const std::size_t n = LZ4F_compressFrame(out.data() + start, out.size() - start, in.data(), in.size(), &prefs);
    if (LZ4F_isError(n)) {
      out.resize(start);
      return make_error(errc::unknown_server_error, "lz4: compression failed: {}", LZ4F_getErrorName(n));
    }
    out.resize(start + n);
    return {};
  }

  result<void> decompress(std::span<const std::byte> in, std::size_t max_bytes, byte_buffer& out) const override {
    if (in.empty()) return detail::corrupt("lz4", "empty");
    // One context per thread, reset before each use: creating one per call costs its buffers'
    // allocations every time.
    thread_local const std::unique_ptr<LZ4F_dctx, dctx_free> dctx = [] {
      LZ4F_dctx* raw = nullptr;
      if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) raw = nullptr;
      return std::unique_ptr<LZ4F_dctx, dctx_free>(raw);
    }();
    if (dctx == nullptr)
      return make_error(errc::unknown_server_error, "lz4: no decompression context (out of memory?)");
    LZ4F_resetDecompressionContext(dctx.get());
    // The header first (checked, its checksum too): a content size it claims past the limit
    // is refused before decoding anything.
    LZ4F_frameInfo_t info{};
    std::size_t header_size = in.size();
    const std::size_t hint = LZ4F_getFrameInfo(dctx.get(), &info, in.data(), &header_size);
    if (LZ4F_isError(hint)) return detail::corrupt("lz4", LZ4F_getErrorName(hint));
    if (info.contentSize > max_bytes) {
      return make_error(errc::record_too_large, "lz4 frame claims {} bytes, past the limit of {} bytes",
                        info.contentSize, max_bytes);
    }
    LZ4F_resetDecompressionContext(dctx.get());
    // With a content size, the first window fits the frame (up to 64 KiB); a reused
    // buffer's free room (batch_decompressor keeps 64 KiB of it) is taken whole, as
    // bounded_output does.
    detail::bounded_output sink(out, max_bytes, in.size(), info.contentSize);
    auto r = decompress_frame(dctx.get(), in, sink);
    if (r) sink.keep();
    return r;
  }

 private:
  struct dctx_free {
    void operator()(LZ4F_dctx* d) const noexcept { LZ4F_freeDecompressionContext(d); }
  };

  // Decodes the one frame of `in` into `sink`.
  static result<void> decompress_frame(LZ4F_dctx* dctx, std::span<const std::byte> in, detail::bounded_output& sink) {
    std::size_t consumed = 0;
    for (;;) {
      const std::span<std::byte> window = sink.window();
      if (window.empty()) return sink.too_large("lz4");
      std::size_t dst_size = window.size();
      std::size_t src_size = in.size() - consumed;
      const std::size_t rc = LZ4F_decompress(dctx, window.data(), &dst_size, in.data() + consumed, &src_size, nullptr);
      consumed += src_size;
      sink.commit(dst_size);
      if (LZ4F_isError(rc)) return detail::corrupt("lz4", LZ4F_getErrorName(rc));
      if (sink.over()) return sink.too_large("lz4");
      if (rc == 0) {  // the end mark (and content checksum) was read
        if (consumed != in.size()) {
          return detail::corrupt("lz4", fmt::format("{} bytes after the frame", in.size() - consumed));
        }
        return {};
      }
      if (consumed == in.size() && dst_size < window.size()) return detail::corrupt("lz4", "truncated");
    }
  }
};

}  // namespace brook::codecs

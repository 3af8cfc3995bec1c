// Kafka's zstd codec (compression type 4) over libzstd. Opt-in: link brook::zstd (libzstd).
//
// Writes one zstd frame holding the whole input (with its content size, no checksum), as one
// ZSTD_compress2 call; Kafka's Java client streams its frame and leaves the content size
// out, which every reader handles either way. Reads with a streaming loop, so frames without
// a content size, several frames back to back and skippable frames all decode; the content
// size a frame claims is never used to allocate (a claim past the limit is refused at once),
// and bytes that do not form a frame are corrupt_message.
//
// Memory: the output stays within the caller's limit; zstd's own window buffer is bounded by
// the window it accepts: frames declaring a window larger than max(8 MiB, the limit rounded
// up to a power of two), capped at 128 MiB (libzstd's default limit), are corrupt_message.
// Kafka's Java client at levels up to 19 declares at most 8 MiB.
//
// Levels (KIP-390 `compression.zstd.level`): 3 by default, ZSTD_minCLevel() (-131072) to
// ZSTD_maxCLevel() (22); 0 means zstd's default (3), as in zstd.
//
// Thread-safety: thread-safe. Each thread that calls it keeps one compression and one
// decompression context (thread_local, reset before each call, freed when the thread ends):
// zstd contexts are costly to create and worth reusing.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <zstd.h>

#include <brook/codecs/detail/bounded_output.hpp>
#include <brook/compression/compression_codec.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>

namespace brook::codecs {

class zstd_codec final : public compression_codec {
 public:
  /// The smallest window limit (log2 bytes) a decompression accepts: 8 MiB, what zstd's
  /// levels up to 19 use when the content size is unknown.
  static constexpr int min_window_log = 23;
  /// The largest (libzstd's default ZSTD_WINDOWLOG_LIMIT_DEFAULT): 128 MiB.
  static constexpr int max_window_log = 27;

  compression_type type() const noexcept override { return compression_type::zstd; }
  int default_level() const noexcept override { return 3; }
  bool valid_level(int level) const noexcept override { return level >= ZSTD_minCLevel() && level <= ZSTD_maxCLevel(); }

  result<void> compress(std::span<const std::byte> in, int level, byte_buffer& out) const override {
    if (!valid_level(level)) {
      return detail::bad_level("zstd", level, fmt::format("{}..{}", ZSTD_minCLevel(), ZSTD_maxCLevel()));
    }
    ZSTD_CCtx* cctx = contexts().cctx.get();
    if (cctx == nullptr) return make_error(errc::unknown_server_error, "zstd: no compression context (out of memory?)");
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
    const std::size_t start = out.size();
    out.resize(start + ZSTD_compressBound(in.size()));
    const std::size_t n = ZSTD_compress2(cctx, out.data() + start, out.size() - start, in.data(), in.size());
    if (ZSTD_isError(n)) {
      out.resize(start);
      return make_error(errc::unknown_server_error, "zstd: compression failed: {}", ZSTD_getErrorName(n));
    }
    out.resize(start + n);
    return {};
  }

  result<void> decompress(std::span<const std::byte> in, std::size_t max_bytes, byte_buffer& out) const override {
    if (in.empty()) return detail::corrupt("zstd", "empty");
    const unsigned long long claimed = ZSTD_getFrameContentSize(in.data(), in.size());
    if (claimed != ZSTD_CONTENTSIZE_UNKNOWN && claimed != ZSTD_CONTENTSIZE_ERROR && claimed > max_bytes) {
      return make_error(errc::record_too_large, "zstd frame claims {} bytes, past the limit of {} bytes", claimed,
                        max_bytes);
    }
    ZSTD_DCtx* dctx = contexts().dctx.get();
    if (dctx == nullptr)
      return make_error(errc::unknown_server_error, "zstd: no decompression context (out of memory?)");
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_and_parameters);
    ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, window_log_limit(max_bytes));
    const bool known = claimed != ZSTD_CONTENTSIZE_UNKNOWN && claimed != ZSTD_CONTENTSIZE_ERROR;
    detail::bounded_output sink(out, max_bytes, in.size(), known ? claimed : 0);
    auto r = decompress_frames(dctx, in, sink);
    if (r) sink.keep();
    return r;
  }

 private:
  struct cctx_free {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
  };
  struct dctx_free {
    void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
  };
  struct thread_contexts {
    std::unique_ptr<ZSTD_CCtx, cctx_free> cctx{ZSTD_createCCtx()};
    std::unique_ptr<ZSTD_DCtx, dctx_free> dctx{ZSTD_createDCtx()};
  };
  static thread_contexts& contexts() {
    thread_local thread_contexts per_thread;
    return per_thread;
  }

  static int window_log_limit(std::size_t max_bytes) {
    const int wanted = static_cast<int>(std::bit_width(max_bytes > 1 ? max_bytes - 1 : 1));
    return std::clamp(wanted, min_window_log, max_window_log);
  }

  // Decodes every frame of `in` into `sink`.
  static result<void> decompress_frames(ZSTD_DCtx* dctx, std::span<const std::byte> in, detail::bounded_output& sink) {
    ZSTD_inBuffer src{in.data(), in.size(), 0};
    for (;;) {
      const std::span<std::byte> window = sink.window();
      if (window.empty()) return sink.too_large("zstd");
      ZSTD_outBuffer dst{window.data(), window.size(), 0};
      const std::size_t rc = ZSTD_decompressStream(dctx, &dst, &src);
      sink.commit(dst.pos);
      if (ZSTD_isError(rc)) return detail::corrupt("zstd", ZSTD_getErrorName(rc));
      if (sink.over()) return sink.too_large("zstd");
      const bool input_done = src.pos == src.size;
      if (rc == 0 && input_done) return {};  // the last frame ended with the input
      if (input_done && dst.pos < dst.size) return detail::corrupt("zstd", "truncated");
    }
  }
};

}  // namespace brook::codecs

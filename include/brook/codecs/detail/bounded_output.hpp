// The output side of every codec's decompression: a buffer that grows by windows, never past
// one byte beyond the caller's limit, and is restored when decompression fails.
//
// Thread-safety: one object per call; not shared.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <brook/compression/compression_codec.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/error.hpp>

namespace brook::codecs::detail {

/// Windows of free space at the end of `out` for a decompressor to write into. A window never
/// reaches past `max_bytes + 1` produced bytes, so a payload one byte too long is seen
/// (over()) without ever holding more than the limit plus one byte of it.
class bounded_output {
 public:
  /// The size of a window: what a decompressor fills between two checks.
  static constexpr std::size_t window_bytes = decompress_window_bytes;

  /// The first window is `expected_bytes` + 1 when the payload says how much it holds (a zstd
  /// or lz4 content size, gzip's ISIZE; 0 when unknown), else 8 times `input_bytes`, the
  /// compressed size; from 4 KiB to window_bytes, and windows then double. So a payload
  /// usually decodes in one call into one window, and the capacity the output keeps stays
  /// near what is produced (growth writes nothing: `out` is a byte_buffer). A wrong hint
  /// costs only more windows. When `out` already has more free capacity than that, the first
  /// window takes it, up to window_bytes: room a reused buffer has costs nothing, and liblz4
  /// decodes a block in place only where a whole block fits.
  bounded_output(byte_buffer& out, std::size_t max_bytes, std::size_t input_bytes = window_bytes,
                 std::uint64_t expected_bytes = 0)
      : out_(out),
        start_(out.size()),
        max_bytes_(max_bytes),
        next_window_(static_cast<std::size_t>(std::max<std::uint64_t>(
            std::clamp<std::uint64_t>(expected_bytes > 0 ? expected_bytes + 1 : std::uint64_t{input_bytes} * 8, 4096,
                                      window_bytes),
            std::min(out.capacity() - out.size(), window_bytes)))) {}
  bounded_output(const bounded_output&) = delete;
  bounded_output& operator=(const bounded_output&) = delete;
  /// Restores `out` to its size before the call unless keep() was called.
  ~bounded_output() {
    if (!kept_) out_.resize(start_);
  }

  /// Free space to write into (empty only when over()). Invalidates earlier windows.
  std::span<std::byte> window() {
    const std::size_t allowed = max_bytes_ - std::min(max_bytes_, produced_) + (over() ? 0 : 1);
    const std::size_t n = std::min(next_window_, allowed);
    next_window_ = std::min(next_window_ * 2, window_bytes);
    resize_uninitialized(out_, start_ + produced_ + n);
    return {out_.data() + start_ + produced_, n};
  }
  /// `n` bytes of the last window were written.
  void commit(std::size_t n) {
    BROOK_ASSERT(start_ + produced_ + n <= out_.size(), "bounded_output: commit of {} bytes past the window", n);
    produced_ += n;
  }
  /// Bytes produced so far.
  std::size_t produced() const noexcept { return produced_; }
  /// True when more than max_bytes were produced.
  bool over() const noexcept { return produced_ > max_bytes_; }
  /// Room for `n` more bytes within the limit, for a decompressor that writes a block whose
  /// size it knows in one go.
  bool fits(std::size_t n) const noexcept { return n <= max_bytes_ - std::min(max_bytes_, produced_); }
  /// Appends `n` bytes of room and returns it (REQUIRES: fits(n)).
  std::byte* reserve_exact(std::size_t n) {
    BROOK_ASSERT(fits(n), "bounded_output: {} bytes do not fit", n);
    resize_uninitialized(out_, start_ + produced_ + n);
    return out_.data() + start_ + produced_;
  }
  /// Keeps what was produced: `out` ends with it.
  void keep() {
    out_.resize(start_ + produced_);
    kept_ = true;
  }

  /// The record_too_large error of `codec`.
  error too_large(std::string_view codec) const {
    return make_error(errc::record_too_large, "{} payload decompresses to more than the limit of {} bytes", codec,
                      max_bytes_);
  }

 private:
  byte_buffer& out_;
  std::size_t start_;
  std::size_t max_bytes_;
  std::size_t produced_ = 0;
  std::size_t next_window_;
  bool kept_ = false;
};

/// The corrupt_message error of `codec`.
inline error corrupt(std::string_view codec, std::string_view what) {
  return make_error(errc::corrupt_message, "{} payload is corrupt: {}", codec, what);
}

/// The invalid_config error for a level outside a codec's range.
inline error bad_level(std::string_view codec, int level, std::string_view range) {
  return make_error(errc::invalid_config, "{} compression level {} is outside Kafka's range {}", codec, level, range);
}

}  // namespace brook::codecs::detail

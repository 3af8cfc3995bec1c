// Kafka's framing: every request and response on a connection is one frame.
//
//   0              4                                      4 + size
//   +--------------+--------------------------------------+
//   | size: int32  | header + body: `size` bytes           |
//   | big-endian   | (request_header.hpp, response_header) |
//   +--------------+--------------------------------------+
//
// A server reads frames with a frame_reader: it takes the bytes of a stream as they
// arrive (partial frames, several frames in one read) and hands out whole frames. The size
// is checked as soon as its four bytes are there, before anything is reserved for the
// frame: a size below 0 or above the limit (Kafka's socket.request.max.bytes, default
// 104857600) is invalid_request, as Kafka's NetworkReceive throws InvalidReceiveException
// and closes the connection. After that error the stream cannot be resynchronised, so the
// reader keeps returning it.
//
// Memory: the reader holds what it was fed and has not handed out. A caller that feeds
// one read at a time and takes every whole frame before the next read holds at most one
// partial frame (bounded by the limit) plus one read.
//
// Thread-safety: frame_reader is a single-threaded value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/format/bytes.hpp>

namespace brook::protocol {

/// Bytes of a frame's size prefix.
inline constexpr std::size_t frame_prefix_size = 4;
/// Kafka's socket.request.max.bytes default: the largest request frame a broker reads.
inline constexpr std::int32_t default_max_frame_size = 104'857'600;

class frame_reader {
 public:
  /// `max_size`: the largest frame accepted (the bytes after the size prefix).
  explicit frame_reader(std::int32_t max_size = default_max_frame_size) : max_size_(max_size) {
    BROOK_ASSERT(max_size >= 0, "a negative frame limit {}", max_size);
  }

  /// Appends bytes as read from the stream.
  void feed(std::span<const std::byte> bytes) {
    if (head_ > 0 && head_ >= buf_.size() / 2) {  // drop what was handed out before growing
      buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    buf_.insert(buf_.end(), bytes.begin(), bytes.end());
  }

  /// The next whole frame without its size prefix; none until one is buffered.
  /// invalid_request for a size below 0 or above the limit, then on every later call.
  result<std::optional<std::vector<std::byte>>> next() {
    if (failed_) return *failed_;
    if (buffered() < frame_prefix_size) return std::optional<std::vector<std::byte>>();
    const std::int32_t size = brook::detail::load_be32(buf_.data() + head_);
    if (size < 0 || size > max_size_) {
      failed_ = make_error(errc::invalid_request, "frame of {} bytes: the size must be in [0, {}]", size, max_size_);
      return *failed_;
    }
    const auto need = frame_prefix_size + static_cast<std::size_t>(size);
    if (buffered() < need) {
      buf_.reserve(head_ + need);  // the size is known to be within the limit now
      return std::optional<std::vector<std::byte>>();
    }
    const auto first = buf_.begin() + static_cast<std::ptrdiff_t>(head_ + frame_prefix_size);
    std::vector<std::byte> frame(first, first + size);
    head_ += need;
    if (head_ == buf_.size()) buf_.clear(), head_ = 0;
    return std::optional<std::vector<std::byte>>(std::move(frame));
  }

  /// Bytes fed and not handed out yet.
  std::size_t buffered() const noexcept { return buf_.size() - head_; }
  std::int32_t max_size() const noexcept { return max_size_; }

 private:
  std::int32_t max_size_;
  std::vector<std::byte> buf_;
  std::size_t head_ = 0;  // buf_[0, head_) was handed out
  std::optional<error> failed_;
};

/// Appends `message` to `out` as one frame (its size, then its bytes).
inline void append_frame(std::vector<std::byte>& out, std::span<const std::byte> message) {
  BROOK_ASSERT(message.size() <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()),
               "a frame of {} bytes", message.size());
  const std::size_t at = out.size();
  out.resize(at + frame_prefix_size);
  brook::detail::store_be32(out.data() + at, static_cast<std::int32_t>(message.size()));
  out.insert(out.end(), message.begin(), message.end());
}

}  // namespace brook::protocol

// A zero-copy read result: whole batches from one segment, viewed in place in
// the segment's mapping.
//
// A log_slice keeps its segment (and so the mapping) alive: the bytes stay
// valid for the slice's whole lifetime even if retention deletes the segment
// or truncation replaces it meanwhile. Record views handed to callbacks are
// valid as long as the slice.
//
// The first batch may start before the offset that was asked for (batches are
// never split); for_each_record skips those records, as a Kafka consumer does.
//
// Thread-safety: immutable; may be read from any number of threads.
#pragma once

#include <sys/sendfile.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <brook/error.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/segment.hpp>
#include <brook/types.hpp>

namespace brook {

class log_slice {
 public:
  log_slice() = default;
  log_slice(std::shared_ptr<const segment> seg, std::uint64_t pos, std::uint64_t len, offset start, offset next)
      : seg_(std::move(seg)), pos_(pos), len_(len), start_(start), next_(next) {}

  bool empty() const noexcept { return len_ == 0; }
  /// The batches, header to end, exactly as on disk.
  std::span<const std::byte> bytes() const noexcept { return seg_ ? seg_->bytes(pos_, len_) : std::span<const std::byte>(); }
  std::size_t size_bytes() const noexcept { return static_cast<std::size_t>(len_); }
  /// The offset that was asked for.
  offset start_offset() const noexcept { return start_; }
  /// Where the next read should start: after the last batch in the slice.
  offset next_offset() const noexcept { return next_; }
  /// Byte position of the slice in its segment file.
  std::uint64_t file_position() const noexcept { return pos_; }
  const std::shared_ptr<const segment>& source() const noexcept { return seg_; }

  /// Calls fn(const record_batch_view&) for each batch, validating each first (CRC and
  /// records by default). Stops with corrupt_message at the first damaged batch.
  template <typename Fn>
  result<std::size_t> for_each_batch(Fn&& fn, batch_check check = {}) const {
    auto b = bytes();
    std::size_t pos = 0, n = 0;
    while (pos < b.size()) {
      auto v = record_batch_view::parse(b.subspan(pos), check, seg_->where(pos_ + pos));
      if (!v) return v.error();
      fn(*v);
      pos += v->size_bytes();
      ++n;
    }
    return n;
  }

  /// Calls fn(const record_view&) for each record at or after start_offset(), skipping
  /// control batches. Returns the number of records delivered.
  template <typename Fn>
  result<std::size_t> for_each_record(Fn&& fn, batch_check check = {}) const {
    std::size_t n = 0;
    auto r = for_each_batch(
        [&](const record_batch_view& v) {
          if (v.header().is_control()) return;
          for (const record_view& rec : v) {
            if (rec.offset() < start_) continue;
            fn(rec);
            ++n;
          }
        },
        check);
    if (!r) return r.error();
    return n;
  }

  /// Copies the slice's bytes to out_fd with sendfile(2): no copy through user space.
  /// Works for sockets, pipes and (since Linux 2.6.33) regular files. Returns bytes sent,
  /// fewer than size_bytes() only when a non-blocking out_fd would block.
  result<std::size_t> send_to(int out_fd) const {
    off_t off = static_cast<off_t>(pos_);
    std::size_t left = static_cast<std::size_t>(len_), sent = 0;
    while (left > 0) {
      ssize_t n = ::sendfile(out_fd, seg_->fd(), &off, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) break;  // non-blocking socket full: the caller resends the rest
        return make_system_error(errno, "sendfile from {}", seg_->log_path().string());
      }
      if (n == 0) break;
      sent += static_cast<std::size_t>(n);
      left -= static_cast<std::size_t>(n);
    }
    return sent;
  }

 private:
  std::shared_ptr<const segment> seg_;
  std::uint64_t pos_ = 0;
  std::uint64_t len_ = 0;
  offset start_{0};
  offset next_{0};
};

}  // namespace brook

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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/segment.hpp>

namespace brook {

class log_slice {
 public:
  log_slice() = default;
  log_slice(std::shared_ptr<const segment> seg, file_pos pos, std::uint64_t len, offset start, offset next)
      : seg_(std::move(seg)), pos_(pos), len_(len), start_(start), next_(next) {}

  /// The slice of `seg` from byte `pos` (a batch start, the batch holding `start`): whole
  /// batches whose offsets are below `bound`, up to max_bytes (the first batch always whole,
  /// as in Kafka's fetch since KIP-74). A damaged header (or offsets that do not increase)
  /// ends the slice before it, so every intact batch ahead of the damage is delivered; a
  /// read that starts at the damage gets the named error.
  /// `hint`: where a record at or before `start` begins in that first batch, if known.
  static result<log_slice> of_batches(std::shared_ptr<const segment> seg, file_pos pos, offset start, offset bound,
                                      std::size_t max_bytes, std::optional<record_position> hint = std::nullopt) {
    const file_pos limit = seg->end_pos();
    // Once past the first batch (a read of one batch, a lookup, makes no index search:
    // find_batch has just read its header), the walk asks for up to 16 of the headers
    // ahead that the index names, and asks again about halfway through them.
    const file_pos reach = pos + static_cast<std::int64_t>(std::min<std::uint64_t>(
                                     max_bytes, static_cast<std::uint64_t>(std::max<std::int64_t>(limit - pos, 0))));
    file_pos refill_at = pos + 1;
    std::int64_t len = 0;
    offset next = start;
    while (pos + len < limit && (len == 0 || static_cast<std::size_t>(len) < max_bytes)) {
      auto h = seg->header_at(pos + len, limit);
      if (!h && len == 0) return h.error();
      if (!h || (len > 0 && h->base_offset < next)) break;  // the next read starts here and reports it
      if (h->last_offset() >= bound) break;
      if (len > 0 && static_cast<std::size_t>(len) + h->size_bytes() > max_bytes) break;
      len += h->size_bytes();
      next = h->next_offset();
      if (pos + len >= refill_at && refill_at < reach) {
        const file_pos last = seg->prefetch_headers(next - 1, reach, 16);
        refill_at = last == reach ? reach : pos + len + std::max<std::int64_t>(last - (pos + len), 0) / 2;
      }
    }
    log_slice s(std::move(seg), pos, static_cast<std::uint64_t>(len), start, std::max(next, start));
    s.hint_ = hint;
    return s;
  }

  bool empty() const noexcept { return len_ == 0; }
  /// The batches, header to end, exactly as on disk.
  std::span<const std::byte> bytes() const noexcept {
    return seg_ ? seg_->bytes(pos_, len_) : std::span<const std::byte>();
  }
  std::size_t size_bytes() const noexcept { return static_cast<std::size_t>(len_); }
  /// The offset that was asked for.
  offset start_offset() const noexcept { return start_; }
  /// Where the next read should start: after the last batch in the slice.
  offset next_offset() const noexcept { return next_; }
  /// Byte position of the slice in its segment file.
  file_pos file_position() const noexcept { return pos_; }
  const std::shared_ptr<const segment>& source() const noexcept { return seg_; }
  /// Where a record at or before start_offset() begins in the first batch, when the log
  /// knows it (record_marks.hpp): a lookup of one record passes it to
  /// record_batch_view::seek(start_offset(), start_hint()) to step over fewer records.
  std::optional<record_position> start_hint() const noexcept { return hint_; }

  /// Calls fn(const record_batch_view&) for each batch, validating each first (CRC and
  /// records by default). Stops with corrupt_message at the first damaged batch.
  template <typename Fn>
  result<std::size_t> for_each_batch(Fn&& fn, batch_check check = {}) const {
    auto b = bytes();
    std::size_t pos = 0, n = 0;
    while (pos < b.size()) {
      BROOK_TRY_ASSIGN(auto v,
                       record_batch_view::parse(b.subspan(pos), check, [&] { return seg_->where(pos_ + pos); }));
      fn(v);
      pos += v.size_bytes();
      ++n;
    }
    return n;
  }

  /// Calls fn(const record_view&) for each record at or after start_offset(), skipping
  /// control batches. If fn returns bool, false stops the walk (later batches are then not
  /// even validated). Returns the number of records delivered. Each batch's CRC is checked
  /// before any of its records is delivered, and records are validated as they are decoded
  /// (one pass): a malformed record stops the walk with corrupt_message. A compressed batch's
  /// records are decompressed into `d` (and fully checked, whatever `check` says); without
  /// `d` it is unsupported_compression_type. The records passed to fn are valid during the
  /// call only.
  template <typename Fn>
  result<std::size_t> for_each_record(Fn&& fn, batch_check check = {}, batch_decompressor* d = nullptr) const {
    auto b = bytes();
    std::size_t pos = 0, n = 0;
    while (pos < b.size()) {
      auto where = [&] { return seg_->where(pos_ + pos); };
      BROOK_TRY_ASSIGN(auto v, record_batch_view::parse(b.subspan(pos), batch_check{check.crc, false}, where));
      const batch_header& h = v.header();
      // A batch wholly below the start offset is skipped without decompressing it.
      if (!h.is_control() && h.last_offset() >= start_) {
        if (!v.records_readable()) {  // compressed, with records (an empty batch has none to decode)
          if (d == nullptr)
            return make_error(errc::unsupported_compression_type,
                              "{}: batch at offset {} is {}-compressed and was read without a batch_decompressor",
                              where(), h.base_offset, compression_name(v.compression()));
          // Records unchecked here: walk_batch checks each and their count as it delivers them.
          BROOK_TRY_ASSIGN(v, record_batch_view::parse(b.subspan(pos), *d, batch_check{false, false}, where));
        }
        bool go_on = true;
        read_ahead ahead(b, pos + v.size_bytes(), v.size_bytes(), h.records_count);
        BROOK_TRY(walk_batch(v, fn, check.records || v.compressed(), n, go_on, where, ahead));
        if (!go_on) return n;
      }
      pos += v.size_bytes();
    }
    return n;
  }

  /// Copies the slice's bytes from byte `from` on to out_fd with sendfile(2): no copy
  /// through user space. Works for sockets, pipes and (since Linux 2.6.33) regular files.
  /// Returns bytes sent, fewer than size_bytes() - from only when a non-blocking out_fd
  /// would block (the caller waits until it is writable and resumes from there).
  /// kafka_storage_error when the file ends before the slice does (it was cut under us).
  /// REQUIRES: from <= size_bytes().
  result<std::size_t> send_to(int out_fd, std::size_t from = 0) const {
    BROOK_ASSERT(from <= len_, "sendfile from byte {} of a {}-byte slice", from, len_);
    off_t off = static_cast<off_t>(pos_.value() + from);
    std::size_t left = static_cast<std::size_t>(len_) - from, sent = 0;
    while (left > 0) {
      ssize_t n = ::sendfile(out_fd, seg_->fd(), &off, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) break;  // non-blocking socket full: the caller resends the rest
        return make_system_error(errno, "sendfile from {}", seg_->log_path().string());
      }
      if (n == 0)
        return make_error(errc::kafka_storage_error, "sendfile from {}: the file ends at byte {}, inside the slice",
                          seg_->log_path().string(), off);
      sent += static_cast<std::size_t>(n);
      left -= static_cast<std::size_t>(n);
    }
    return sent;
  }

 private:
  // The CRC pass reads a batch from memory and the record walk then runs from the cache, so
  // the memory sits idle during the walk: each record walked asks for its share of the next
  // batch's cache lines (sized like this one), which are then in the cache for the CRC.
  struct read_ahead {
    static constexpr std::size_t line = 64;
    const std::byte* base;   // the slice
    std::size_t at;          // the next byte to ask for (may pass `end` by less than a line)
    std::size_t end;         // asks stay below this: the next batch's guessed end, or the slice's
    std::size_t per_record;  // bytes asked for after each record, a whole number of lines

    read_ahead(std::span<const std::byte> b, std::size_t from, std::size_t bytes, std::int32_t records) noexcept
        : base(b.data()), at(from), end(std::min(from + bytes, b.size())) {
      const std::size_t per = bytes / static_cast<std::size_t>(std::max(records, 1)) + line;
      per_record = per - per % line;
    }
    void step() noexcept {
      for (const std::size_t stop = std::min(at + per_record, end); at < stop; at += line)
        __builtin_prefetch(base + at);
    }
  };

  /// Delivers the records of `v` at or after start_offset() to fn, checking each as it is
  /// decoded (`check_records`: headers and the bytes after the last record too).
  template <typename Fn, typename Where>
  result<void> walk_batch(const record_batch_view& v, Fn& fn, bool check_records, std::size_t& n, bool& go_on,
                          const Where& where, read_ahead& ahead) const {
    const batch_header& h = v.header();
    const auto records = v.records_bytes();
    const std::byte* p = records.data();
    const std::byte* end = p + records.size();
    const bool append_time = h.timestamp_type() == timestamp_type::log_append_time;
    std::int64_t prev_delta = -1;
    detail::record_fields f;
    for (std::int32_t i = 0; i < h.records_count; ++i) {
      const std::byte* next = detail::parse_record(p, end, f, check_records);
      if (next == nullptr || f.offset_delta <= prev_delta || f.offset_delta > h.last_offset_delta)
        return make_error(errc::corrupt_message, "{}: record {} of batch at offset {} is malformed", where(), i,
                          h.base_offset);
      prev_delta = f.offset_delta;
      p = next;
      ahead.step();
      const offset o = h.base_offset + f.offset_delta;
      if (o < start_) continue;
      timestamp_ms ts = h.max_timestamp;
      if (!append_time && __builtin_add_overflow(h.base_timestamp, f.timestamp_delta, &ts))
        return make_error(errc::corrupt_message, "{}: record {} of batch at offset {} has a timestamp that overflows",
                          where(), i, h.base_offset);
      ++n;
      if constexpr (std::is_same_v<std::invoke_result_t<Fn&, const record_view&>, bool>) {
        if (!fn(record_view(o, ts, f))) {
          go_on = false;
          return ok();
        }
      } else {
        fn(record_view(o, ts, f));
      }
    }
    if (check_records && p != end)
      return make_error(errc::corrupt_message, "{}: batch at offset {} has bytes after its records", where(),
                        h.base_offset);
    return ok();
  }

  std::shared_ptr<const segment> seg_;
  file_pos pos_{0};
  std::uint64_t len_ = 0;
  offset start_{0};
  offset next_{0};
  std::optional<record_position> hint_;
};

}  // namespace brook

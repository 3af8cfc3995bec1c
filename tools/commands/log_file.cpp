#include "commands/log_file.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include <brook/format/bytes.hpp>
#include <brook/storage/offset_index.hpp>
#include <brook/storage/segment.hpp>
#include <brook/storage/time_index.hpp>

namespace brook::cli {

result<log_file_reader> log_file_reader::open(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return make_error(errc::invalid_argument, "{}: is a directory, not a .log file", path.string());
  // Only a regular file (issue 11 #20: a FIFO once blocked the open forever); O_NONBLOCK
  // keeps one swapped in after the check from blocking too.
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    return make_error(errc::kafka_storage_error, "{}: not a regular file", path.string());
  auto f = file_handle::open(*posix_file_system::shared(), path, O_RDONLY | O_NONBLOCK);
  if (!f) return f.error();
  auto sz = f->size();
  if (!sz) return sz.error();
  log_file_reader r;
  r.path_ = path;
  r.file_ = std::move(*f);
  r.size_ = *sz;
  r.base_ = partition_files::parse_base(path.stem().string());
  if (r.base_) r.next_ = *r.base_;
  return r;
}

std::string log_file_reader::where(std::uint64_t pos) const {
  return fmt::format("{} at byte {}", path_.string(), pos);
}

result<std::optional<record_batch_view>> log_file_reader::next() {
  using namespace batch_layout;
  if (pos_ >= size_) return std::optional<record_batch_view>();
  const std::uint64_t left = size_ - pos_;
  const std::string at = where(pos_);
  // The fixed header first (or what there is of it), to learn the batch's size.
  const std::size_t head = static_cast<std::size_t>(std::min<std::uint64_t>(left, header_size));
  buf_.resize(head);
  BROOK_TRY(file_.pread_all(buf_, pos_));
  std::uint64_t total = 0;
  if (head >= log_overhead) {
    std::int32_t blen = detail::load_be32(buf_.data() + batch_length);
    if (blen >= static_cast<std::int32_t>(header_size - log_overhead)) {
      total = log_overhead + static_cast<std::uint64_t>(blen);
      if (total > left)
        return make_error(errc::corrupt_message,
                          "{}: batch of {} bytes runs past the end of the file (only {} bytes left: a torn tail or a "
                          "corrupt batchLength)",
                          at, total, left);
    }
  }
  if (total == 0) {
    // Too short, or a batchLength below the header size: the library names the reason.
    auto v = record_batch_view::parse(buf_, batch_check{}, at);
    if (!v) return v.error();
    return make_error(errc::corrupt_message, "{}: unreadable batch header", at);  // not reached
  }
  buf_.resize(static_cast<std::size_t>(total));
  BROOK_TRY(file_.pread_all(std::span<std::byte>(buf_).subspan(head), pos_ + head));
  auto v = parse_batch(buf_, decompressor_, at);
  if (!v) return v.error();
  const batch_header& h = v->header();
  if (next_.value() >= 0 && h.base_offset < next_)
    return make_error(errc::corrupt_message, "{}: batch base offset {} is below the expected {}", at, h.base_offset,
                      next_);
  if (base_ && h.last_offset() - *base_ > std::numeric_limits<std::int32_t>::max())
    return make_error(errc::corrupt_message, "{}: batch offset {} does not fit the segment based at {}", at,
                      h.last_offset(), *base_);
  batch_location loc{pos_, h.base_offset, h.last_offset(), -1, h.max_timestamp};
  for (const record_view& r : *v) loc.max_record_timestamp = std::max(loc.max_record_timestamp, r.timestamp());
  if (v->record_count() == 0) loc.max_record_timestamp = h.max_timestamp;
  seen_.push_back(loc);
  next_ = h.next_offset();
  pos_ += total;
  return std::optional<record_batch_view>(*v);
}

namespace {

struct raw_index {
  bool present = false;
  std::vector<std::byte> bytes;
  std::string error;
};

raw_index read_index(const fs::path& path) {
  raw_index out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  out.present = true;
  if (!fs::is_regular_file(path, ec)) {
    out.error = "not a regular file";
    return out;
  }
  auto f = file_handle::open(*posix_file_system::shared(), path, O_RDONLY | O_NONBLOCK);
  if (!f) {
    out.error = f.error().message();
    return out;
  }
  auto sz = f->size();
  if (!sz) {
    out.error = sz.error().message();
    return out;
  }
  out.bytes.resize(static_cast<std::size_t>(*sz));
  if (auto r = f->pread_all(out.bytes, 0); !r) out.error = r.error().message();
  return out;
}

bool all_zero(const std::byte* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; });
}

/// Number of entries in use: up to the first entry after entry 0 with relative offset 0
/// (read at rel_at within the entry), provided everything from there is zero. If non-zero
/// bytes follow, every entry counts as in use so the bad ones get reported.
std::size_t used_entries(const std::vector<std::byte>& b, std::size_t entry_size, std::size_t rel_at) {
  const std::size_t n = b.size() / entry_size;
  if (n == 0) return 0;
  if (all_zero(b.data(), n * entry_size)) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (detail::load_be32(b.data() + i * entry_size + rel_at) == 0) {
      if (all_zero(b.data() + i * entry_size, (n - i) * entry_size)) return i;
      return n;
    }
  }
  return n;
}

}  // namespace

index_check check_offset_index(const fs::path& path, brook::offset base, const std::vector<batch_location>& batches,
                               std::uint64_t valid_bytes) {
  index_check out;
  out.path = path;
  auto raw = read_index(path);
  out.present = raw.present;
  if (!raw.present) {
    out.problems.push_back(fmt::format("{}: offset index is missing", path.string()));
    return out;
  }
  if (!raw.error.empty()) {
    out.problems.push_back(fmt::format("{}: {}", path.string(), raw.error));
    return out;
  }
  const std::size_t es = offset_index::entry_size;
  if (raw.bytes.size() % es != 0)
    out.problems.push_back(
        fmt::format("{}: size {} is not a multiple of the {}-byte entry", path.string(), raw.bytes.size(), es));
  const std::size_t total = raw.bytes.size() / es;
  const std::size_t used = used_entries(raw.bytes, es, 0);
  out.entries = used;
  out.unused_entries = total - used;
  std::optional<std::pair<std::int64_t, std::int64_t>> prev;
  for (std::size_t i = 0; i < used; ++i) {
    const std::byte* p = raw.bytes.data() + i * es;
    const std::int32_t rel = detail::load_be32(p);
    const std::int32_t pos = detail::load_be32(p + 4);
    const brook::offset off = base + rel;
    const std::string what = fmt::format("{}: entry {} (offset {} -> byte {})", path.string(), i, off, pos);
    if (i > 0 && rel == 0) {
      out.problems.push_back(
          fmt::format("{} has relative offset 0, which marks the unused tail, but non-zero entries follow", what));
      continue;
    }
    if (prev && (off.value() <= prev->first || pos <= prev->second))
      out.problems.push_back(
          fmt::format("{} does not increase after offset {} -> byte {}", what, prev->first, prev->second));
    prev = {off.value(), pos};
    if (rel < 0 || pos < 0) {
      out.problems.push_back(fmt::format("{} is negative", what));
      continue;
    }
    auto it = std::lower_bound(batches.begin(), batches.end(), static_cast<std::uint64_t>(pos),
                               [](const batch_location& b, std::uint64_t v) { return b.position < v; });
    if (it == batches.end() || it->position != static_cast<std::uint64_t>(pos)) {
      if (static_cast<std::uint64_t>(pos) >= valid_bytes)
        out.problems.push_back(
            fmt::format("{} points past the last valid batch (valid bytes end at {})", what, valid_bytes));
      else
        out.problems.push_back(fmt::format("{} does not point at the start of a batch", what));
      continue;
    }
    if (it->last != off)
      out.problems.push_back(
          fmt::format("{} points at the batch {}..{}, whose last offset is {}", what, it->base, it->last, it->last));
  }
  return out;
}

index_check check_time_index(const fs::path& path, brook::offset base, const std::vector<batch_location>& batches) {
  index_check out;
  out.path = path;
  auto raw = read_index(path);
  out.present = raw.present;
  if (!raw.present) {
    out.problems.push_back(fmt::format("{}: time index is missing", path.string()));
    return out;
  }
  if (!raw.error.empty()) {
    out.problems.push_back(fmt::format("{}: {}", path.string(), raw.error));
    return out;
  }
  const std::size_t es = time_index::entry_size;
  if (raw.bytes.size() % es != 0)
    out.problems.push_back(
        fmt::format("{}: size {} is not a multiple of the {}-byte entry", path.string(), raw.bytes.size(), es));
  const std::size_t total = raw.bytes.size() / es;
  const std::size_t used = used_entries(raw.bytes, es, 8);
  out.entries = used;
  out.unused_entries = total - used;
  std::optional<std::pair<timestamp_ms, std::int64_t>> prev;
  for (std::size_t i = 0; i < used; ++i) {
    const std::byte* p = raw.bytes.data() + i * es;
    const timestamp_ms ts = detail::load_be64(p);
    const std::int32_t rel = detail::load_be32(p + 8);
    const brook::offset off = base + rel;
    const std::string what = fmt::format("{}: entry {} (timestamp {} -> offset {})", path.string(), i, ts, off);
    if (i > 0 && rel == 0) {
      out.problems.push_back(
          fmt::format("{} has relative offset 0, which marks the unused tail, but non-zero entries follow", what));
      continue;
    }
    if (prev && (ts <= prev->first || off.value() < prev->second))
      out.problems.push_back(
          fmt::format("{} goes backwards after timestamp {} -> offset {}", what, prev->first, prev->second));
    prev = {ts, off.value()};
    auto it = std::lower_bound(batches.begin(), batches.end(), off,
                               [](const batch_location& b, brook::offset v) { return b.last < v; });
    if (it == batches.end()) {
      out.problems.push_back(fmt::format("{} names an offset past the last valid batch", what));
      continue;
    }
    if (it->last != off) {
      out.problems.push_back(
          fmt::format("{} is not the last offset of a batch (the batch there ends at {})", what, it->last));
      continue;
    }
    // Recovery indexes the header's maxTimestamp, as Kafka does; a header that claims more than
    // its records is a note of verify's, not index damage (issue 11 #16: repair converges).
    if (it->max_record_timestamp != ts && it->header_max_timestamp != ts)
      out.problems.push_back(
          fmt::format("{} does not match the batch's largest timestamp {}", what, it->max_record_timestamp));
  }
  return out;
}

}  // namespace brook::cli

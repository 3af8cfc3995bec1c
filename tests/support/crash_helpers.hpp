// Helpers for crash and concurrency scenarios on partition logs: a scratch
// directory on a fast filesystem, whole-directory copies that model the
// on-disk state at a crash instant, file damage (cut, garbage, overwrite),
// an independent scanner of .log files, an independent checker of .index and
// .timeindex files, and a reader that also returns record headers.
//
// Nothing here calls into brook's storage internals except through the public
// partition_log API, the format layer's batch parser, and the documented file
// layouts (offset_index.hpp, time_index.hpp).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/format/bytes.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/offset_index.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/storage/time_index.hpp>

#include "support/log_builders.hpp"

namespace brook::test {

namespace sfs = std::filesystem;

/// Where scenario tests put their directories: $BROOK_TEST_TMPDIR, else /dev/shm when it is
/// a writable directory (tmpfs: fdatasync is free, so thousands of opens/closes stay fast;
/// the crash model here is file copies, not power loss, so the filesystem does not matter),
/// else the system temp directory.
inline sfs::path scenario_tmp_root() {
  if (const char* e = std::getenv("BROOK_TEST_TMPDIR"); e != nullptr && *e != '\0') return e;
  std::error_code ec;
  if (sfs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  return sfs::temp_directory_path();
}

/// A unique directory under scenario_tmp_root(), removed recursively on destruction.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& prefix = "brook-scn") {
    std::string tmpl = (scenario_tmp_root() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    sfs::remove_all(path_, ec);
  }
  const sfs::path& path() const noexcept { return path_; }
  sfs::path operator/(const std::string& s) const { return path_ / s; }

 private:
  sfs::path path_;
};

/// Reads an env var as an integer (nullopt when unset or not a number).
inline std::optional<std::int64_t> env_int(const char* name) {
  const char* e = std::getenv(name);
  if (e == nullptr || *e == '\0') return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(e, &end, 10);
  if (end == e || *end != '\0') return std::nullopt;
  return static_cast<std::int64_t>(v);
}

// ------------------------------------------------------------------ files

inline std::vector<std::byte> read_file_bytes(const sfs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::transform(c.begin(), c.end(), out.begin(), [](char ch) { return static_cast<std::byte>(ch); });
  return out;
}

inline void write_file_bytes(const sfs::path& p, std::span<const std::byte> b, bool append = false) {
  std::ofstream out(p, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  if (!out) throw std::runtime_error("cannot write " + p.string());
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!out) throw std::runtime_error("short write to " + p.string());
}

/// Plain byte copies of every regular file in `src` into `dst` (created). Copying while a
/// log is open reads the page cache, i.e. exactly what a crash at this instant would leave
/// behind if the kernel wrote everything out (appends are in the page cache before they are
/// visible). Index files still carry their preallocated zero tail, as after a real crash.
inline void copy_dir_files(const sfs::path& src, const sfs::path& dst) {
  sfs::create_directories(dst);
  for (const auto& de : sfs::directory_iterator(src)) {
    if (!de.is_regular_file()) continue;
    auto bytes = read_file_bytes(de.path());
    write_file_bytes(dst / de.path().filename(), bytes);
  }
}

inline std::vector<std::byte> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::byte> out(n);
  for (auto& b : out) b = static_cast<std::byte>(rng() & 0xff);
  return out;
}

inline void cut_file(const sfs::path& p, std::uint64_t len) { sfs::resize_file(p, len); }

// ------------------------------------------------------------------ .log scanning

/// One batch as found on disk by an independent walk of a .log file.
struct disk_batch {
  std::uint64_t pos = 0;
  std::uint64_t size = 0;
  std::int64_t base = 0;
  std::int64_t last = 0;
  std::int64_t max_ts = -1;
  int compression = 0;  ///< the codec id in the attributes
  std::int32_t records = 0;
};

/// Walks a .log with full validation (CRC, records; a compressed batch's payload only by its
/// CRC); stops at the first invalid byte. Returns the valid batches and sets *valid_bytes to
/// where they end.
inline std::vector<disk_batch> scan_log_file(const sfs::path& p, std::uint64_t* valid_bytes = nullptr) {
  auto bytes = read_file_bytes(p);
  std::vector<disk_batch> out;
  std::uint64_t pos = 0;
  while (pos < bytes.size()) {
    const auto rest = std::span<const std::byte>(bytes).subspan(pos);
    auto v = record_batch_view::parse(rest, batch_check{true, false});
    if (!v || (!v->compressed() && !record_batch_view::parse(rest))) break;
    out.push_back({pos, v->size_bytes(), v->base_offset().value(), v->last_offset().value(), v->header().max_timestamp,
                   static_cast<int>(v->compression()), v->header().records_count});
    pos += v->size_bytes();
  }
  if (valid_bytes != nullptr) *valid_bytes = pos;
  return out;
}

/// Checks a closed partition directory's indexes against its logs, independently of brook:
///  - .index: size a multiple of 8, entries strictly increasing in offset and position, each
///    pointing at the start of a batch whose last offset is the entry's offset;
///  - .timeindex: size a multiple of 12, timestamps strictly increasing, offsets
///    non-decreasing, each entry (T, O) with O the last offset of a batch and T the largest
///    batch maxTimestamp up to and including that batch; for a non-empty segment the last
///    entry carries the segment's largest timestamp (TimeIndex's "final entry on seal",
///    which partition_log::segments()[i].max_timestamp is restored from).
/// Returns a description of the first problem, or an empty string.
inline std::string check_closed_indexes(const sfs::path& dir) {
  std::vector<std::pair<std::int64_t, sfs::path>> logs;
  for (const auto& de : sfs::directory_iterator(dir)) {
    if (de.path().extension() != ".log") continue;
    auto base = partition_files::parse_base(de.path().stem().string());
    if (!base) continue;
    logs.push_back({base->value(), de.path()});
  }
  std::sort(logs.begin(), logs.end());
  for (const auto& [base, lp] : logs) {
    std::uint64_t valid = 0;
    auto batches = scan_log_file(lp, &valid);
    const auto log_size = sfs::file_size(lp);
    if (valid != log_size)
      return fmt::format("{}: {} bytes but only {} bytes of valid batches", lp.string(), log_size, valid);
    auto ip = partition_files::index(dir, offset(base));
    auto tp = partition_files::time_index(dir, offset(base));
    if (!sfs::exists(ip)) return fmt::format("{}: missing", ip.string());
    if (!sfs::exists(tp)) return fmt::format("{}: missing", tp.string());
    auto ib = read_file_bytes(ip);
    auto tb = read_file_bytes(tp);
    if (ib.size() % offset_index::entry_size != 0)
      return fmt::format("{}: size {} is not a multiple of 8", ip.string(), ib.size());
    if (tb.size() % time_index::entry_size != 0)
      return fmt::format("{}: size {} is not a multiple of 12", tp.string(), tb.size());
    auto batch_at_pos = [&](std::int64_t pos) -> const disk_batch* {
      auto it = std::lower_bound(batches.begin(), batches.end(), pos, [](const disk_batch& b, std::int64_t v) {
        return static_cast<std::int64_t>(b.pos) < v;
      });
      return it != batches.end() && static_cast<std::int64_t>(it->pos) == pos ? &*it : nullptr;
    };
    std::int64_t prev_off = -1, prev_pos = -1;
    for (std::size_t i = 0; i * 8 < ib.size(); ++i) {
      std::int64_t off = base + detail::load_be32(ib.data() + i * 8);
      std::int64_t pos = detail::load_be32(ib.data() + i * 8 + 4);
      if (off <= prev_off || pos <= prev_pos)
        return fmt::format("{}: entry {} ({} -> {}) does not increase", ip.string(), i, off, pos);
      const disk_batch* b = batch_at_pos(pos);
      if (b == nullptr) return fmt::format("{}: entry {} points at byte {}, not a batch start", ip.string(), i, pos);
      if (b->last != off)
        return fmt::format("{}: entry {} says offset {} but the batch at byte {} ends at {}", ip.string(), i, off, pos,
                           b->last);
      prev_off = off;
      prev_pos = pos;
    }
    std::int64_t prev_ts = std::numeric_limits<std::int64_t>::min();
    prev_off = -1;
    std::int64_t seg_max = -1;
    for (const auto& b : batches) seg_max = std::max(seg_max, b.max_ts);
    const std::size_t tn = tb.size() / 12;
    for (std::size_t i = 0; i < tn; ++i) {
      std::int64_t ts = detail::load_be64(tb.data() + i * 12);
      std::int64_t off = base + detail::load_be32(tb.data() + i * 12 + 8);
      if (ts <= prev_ts || off < prev_off)
        return fmt::format("{}: entry {} ({} -> {}) goes backwards", tp.string(), i, ts, off);
      auto it = std::find_if(batches.begin(), batches.end(), [&](const disk_batch& b) { return b.last == off; });
      if (it == batches.end())
        return fmt::format("{}: entry {} points at offset {}, not a batch's last offset", tp.string(), i, off);
      std::int64_t mx = -1;
      for (auto j = batches.begin(); j <= it; ++j) mx = std::max(mx, j->max_ts);
      if (mx != ts)
        return fmt::format("{}: entry {} says max timestamp {} up to offset {}, the log says {}", tp.string(), i, ts,
                           off, mx);
      prev_ts = ts;
      prev_off = off;
    }
    if (!batches.empty()) {
      std::int64_t last_ts = tn > 0 ? detail::load_be64(tb.data() + (tn - 1) * 12) : -1;
      if (last_ts != seg_max)
        return fmt::format("{}: last entry has timestamp {} but the segment's largest is {}", tp.string(), last_ts,
                           seg_max);
    }
  }
  return {};
}

// ------------------------------------------------------------------ records with headers

struct full_record {
  plain_record rec;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  friend bool operator==(const full_record&, const full_record&) = default;
};

inline std::string describe(const full_record& r) {
  std::string h;
  for (const auto& [k, v] : r.headers) h += fmt::format(" {}={}", k, v ? *v : "<null>");
  return fmt::format("offset {} ts {} key {} ({}B) value {} ({}B) headers[{}]", r.rec.offset, r.rec.timestamp,
                     r.rec.key_null ? "null" : "set", r.rec.key.size(), r.rec.value_null ? "null" : "set",
                     r.rec.value.size(), h);
}

/// Like read_all, but also returns each record's headers.
/// `d` reads compressed batches (null: none may be compressed).
inline std::vector<full_record> read_all_full(const partition_log& log, batch_decompressor* d = nullptr) {
  std::vector<full_record> out;
  offset at = log.log_start_offset();
  while (at < log.log_end_offset()) {
    read_options ro;
    ro.max_bytes = 4096;
    auto s = log.read(at, ro);
    if (!s) throw std::runtime_error(s.error().to_string());
    if (s->empty()) break;
    auto r = s->for_each_record(
        [&](const record_view& rv) {
          full_record f;
          f.rec.offset = rv.offset().value();
          f.rec.timestamp = rv.timestamp();
          f.rec.key_null = rv.key().is_null();
          f.rec.key = rv.key().to_string();
          f.rec.value_null = rv.value().is_null();
          f.rec.value = rv.value().to_string();
          for (const record_header& h : rv.headers())
            f.headers.emplace_back(std::string(h.key),
                                   h.value.is_null() ? std::nullopt : std::optional<std::string>(h.value.to_string()));
          out.push_back(std::move(f));
        },
        batch_check{}, d);
    if (!r) throw std::runtime_error(r.error().to_string());
    at = s->next_offset();
  }
  return out;
}

}  // namespace brook::test

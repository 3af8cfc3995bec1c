// The hostile-file corpus: every damaged variant of one small partition that a disk, a bad
// copy or a hostile user can leave, with what each open mode must give. Shared by
// tests/storage/hostile_files_test.cpp (the library's opens) and
// tests/tools/cli_hostile_files_test.cpp (`brook verify`, `verify --repair`, `consume`).
//
// The partition: 100 batches of 10 records (offsets 0..999), one segment, closed cleanly, so
// the damage lies below the recovery point, where an open trusts the segment after a tail
// check. Batch 50 (offsets 500..509) is the one damaged.
#pragma once

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/format/crc32c.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/partition_files.hpp>
#include <brook/storage/partition_log.hpp>

#include "support/checks.hpp"
#include "support/crash_helpers.hpp"
#include "support/log_builders.hpp"

namespace brook::test::hostile {

namespace sfs = std::filesystem;

inline constexpr int batches = 100, per_batch = 10, total = batches * per_batch;
inline constexpr int damaged = 50;           // the damaged batch
inline constexpr int before = damaged * 10;  // records ahead of it

inline log_config corpus_config() {
  log_config c;
  c.segment_bytes = 1 << 20;
  c.index_interval_bytes = 256;
  c.retention_time = log_config::keep_forever;
  return c;
}

inline std::string value_of(std::int64_t o) { return fmt::format("value-{:04}", o); }

/// The pristine partition, built once.
inline const std::vector<std::pair<std::string, std::vector<std::byte>>>& pristine() {
  static const auto files = [] {
    scratch_dir tmp("brook-hostile");
    const auto dir = tmp / "t-0";
    {
      auto log = partition_log::open(dir, corpus_config());
      REQUIRE_OK(log);
      for (int b = 0; b < batches; ++b) {
        record_batch_builder bb;
        for (int i = 0; i < per_batch; ++i) bb.append(1'000 + b, "k", value_of(b * per_batch + i));
        auto bytes = bb.finish();
        REQUIRE_OK((*log)->append(bytes));
      }
      REQUIRE_OK((*log)->close());
    }
    std::vector<std::pair<std::string, std::vector<std::byte>>> out;
    for (const auto& de : sfs::directory_iterator(dir))
      out.emplace_back(de.path().filename().string(), read_file_bytes(de.path()));
    return out;
  }();
  return files;
}

inline const std::string seg_log = "00000000000000000000.log";

/// Byte position of each batch in the pristine segment.
inline std::vector<std::size_t> batch_positions() {
  std::vector<std::size_t> pos;
  for (const auto& [name, bytes] : pristine())
    if (name == seg_log)
      for (std::size_t p = 0; p < bytes.size();) {
        pos.push_back(p);
        p += batch_layout::log_overhead + static_cast<std::size_t>(detail::load_be32(bytes.data() + p + 8));
      }
  return pos;
}

inline void lay_out(const sfs::path& dir) {
  sfs::create_directories(dir);
  for (const auto& [name, bytes] : pristine()) write_file_bytes(dir / name, bytes);
}

/// What one open mode must give.
struct expect {
  std::optional<errc> open_fails;  ///< the open's named error
  int delivered = total;           ///< records a full consume delivers
  std::optional<errc> stopped_by;  ///< the error after them (none: all delivered)
};
inline expect all() { return {}; }
inline expect prefix_then(errc e) { return {std::nullopt, before, e}; }
inline expect open_fails(errc e) { return {e, 0, std::nullopt}; }

struct variant {
  std::string name;
  std::function<void(const sfs::path& dir)> damage;
  expect read_only, writable, repaired;
  /// The named code `brook verify` reports (exit 1); none: it exits 0. verify is stricter
  /// than an open: it checks every CRC and every index entry.
  std::optional<std::string> verify_finds;
  /// What verify finds stays after `verify --repair` (a hole: nothing can fill it).
  bool repair_keeps_problem = false;
};

// ------------------------------------------------------------------ batch header fields

struct field {
  const char* name;
  std::size_t at, width;
  bool under_crc;
};
inline const field fields[] = {
    {"baseOffset", batch_layout::base_offset, 8, false},
    {"batchLength", batch_layout::batch_length, 4, false},
    {"partitionLeaderEpoch", batch_layout::partition_leader_epoch, 4, false},
    {"magic", batch_layout::magic, 1, false},
    {"crc", batch_layout::crc, 4, false},
    {"attributes", batch_layout::attributes, 2, true},
    {"lastOffsetDelta", batch_layout::last_offset_delta, 4, true},
    {"baseTimestamp", batch_layout::base_timestamp, 8, true},
    {"maxTimestamp", batch_layout::max_timestamp, 8, true},
    {"producerId", batch_layout::producer_id, 8, true},
    {"producerEpoch", batch_layout::producer_epoch, 2, true},
    {"baseSequence", batch_layout::base_sequence, 4, true},
    {"recordsCount", batch_layout::records_count, 4, true},
};

inline std::uint64_t load_field(const std::byte* p, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v = v << 8 | static_cast<std::uint8_t>(p[i]);
  return v;
}
inline void store_field(std::byte* p, std::size_t width, std::uint64_t v) {
  for (std::size_t i = width; i-- > 0; v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
}

/// Which values of a field a reader must accept (the batch is still what was written).
inline bool harmless(const field& f, std::uint64_t value, std::uint64_t original) {
  if (value == original) return true;
  const std::string n = f.name;
  // Not read back by a consumer: the epoch is outside the CRC; timestamps and the producer
  // fields are covered by it, so with the CRC fixed they are simply what the batch says.
  return n == "partitionLeaderEpoch" || n == "baseTimestamp" || n == "maxTimestamp" || n == "producerId" ||
         n == "producerEpoch" || n == "baseSequence";
}

/// Values the batch header check refuses (check_batch_header), whatever the CRC says.
inline bool header_walk_refuses(const std::string& field, const std::string& value) {
  static const std::set<std::pair<std::string, std::string>> refused{
      {"baseOffset", "-1"},      {"baseOffset", "max"},  {"batchLength", "0"},
      {"batchLength", "-1"},     {"batchLength", "max"}, {"magic", "0"},
      {"magic", "-1"},           {"magic", "max"},       {"lastOffsetDelta", "0"},
      {"lastOffsetDelta", "-1"}, {"recordsCount", "-1"}, {"recordsCount", "max"},
  };
  return refused.count({field, value}) > 0;
}

inline std::vector<variant> header_variants() {
  std::vector<variant> out;
  const auto pos = batch_positions();
  REQUIRE(pos.size() == batches);
  const std::vector<std::byte>* found = nullptr;
  for (const auto& [name, bytes] : pristine())
    if (name == seg_log) found = &bytes;
  REQUIRE(found != nullptr);
  const std::vector<std::byte>& seg = *found;  // pristine() lives as long as the process
  const std::size_t p50 = pos[damaged], p49 = pos[damaged - 1], end50 = pos[damaged + 1];
  for (const field& f : fields) {
    const std::uint64_t ones = f.width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * f.width)) - 1;
    const std::uint64_t original = load_field(seg.data() + p50 + f.at, f.width);
    const std::pair<const char*, std::uint64_t> values[] = {
        {"0", 0},
        {"-1", ones},
        {"max", ones >> 1},
        {"neighbour", load_field(seg.data() + p49 + f.at, f.width)},
    };
    for (const auto& [vname, value] : values)
      for (const bool fix_crc : {false, true}) {
        if (!f.under_crc && fix_crc) continue;  // the CRC does not cover it: fixing changes nothing
        variant v;
        v.name = fmt::format("batch {} {} = {}{}", damaged, f.name, vname, fix_crc ? ", CRC fixed" : "");
        v.damage = [found, p50, end50, f, value, fix_crc](const sfs::path& dir) {
          auto bytes = *found;
          store_field(bytes.data() + p50 + f.at, f.width, value);
          if (fix_crc) update_batch_crc(std::span<std::byte>(bytes.data() + p50, end50 - p50));
          write_file_bytes(dir / seg_log, bytes);
        };
        const bool crc_breaks = f.under_crc && !fix_crc && value != original;
        const bool crc_field_breaks = std::string(f.name) == "crc" && value != original;
        if ((harmless(f, value, original) && !crc_breaks) || (std::string(f.name) == "crc" && !crc_field_breaks)) {
          v.read_only = v.writable = v.repaired = all();
        } else {
          v.verify_finds = "CORRUPT_MESSAGE";
          // The reader gets batches 0..49, then the named error; full recovery cuts there.
          const expect cut{std::nullopt, before, std::nullopt};
          v.read_only = v.writable = prefix_then(errc::corrupt_message);
          v.repaired = cut;
          // A writable open walks the active segment's headers (to rebuild its time index):
          // a header that cannot be right, or a timestamp past the time index, sends it to
          // recovery, which cuts there and reports flushed_bytes_truncated.
          if (header_walk_refuses(f.name, vname) ||
              (std::string(f.name) == "maxTimestamp" &&
               static_cast<std::int64_t>(value) > static_cast<std::int64_t>(original)))
            v.writable = cut;
        }
        out.push_back(std::move(v));
      }
  }
  return out;
}

inline void write_text(const sfs::path& p, const std::string& text) {
  std::vector<std::byte> b(text.size());
  if (!text.empty()) std::memcpy(b.data(), text.data(), text.size());  // (an empty vector's data() may be null)
  write_file_bytes(p, b);
}

inline std::vector<variant> file_variants() {
  const std::string rp(partition_files::recovery_point_checkpoint), ls(partition_files::log_start_checkpoint);
  const auto bad = open_fails(errc::kafka_storage_error);
  auto ckpt = [](const std::string& body) { return "0\n" + body; };
  std::vector<variant> v;
  auto add = [&](std::string name, std::function<void(const sfs::path&)> d, expect ro, expect wr, expect rep) {
    std::optional<std::string> finds;
    if (ro.open_fails) finds = fmt::format("{}", *ro.open_fails);
    v.push_back({std::move(name), std::move(d), ro, wr, rep, std::move(finds)});
  };
  auto same = [&](std::string name, std::function<void(const sfs::path&)> d, expect e) { add(name, d, e, e, e); };
  // Checkpoints: what cannot be right is reported, never obeyed.
  for (const std::string& f : {rp, ls}) {
    same(
        f + ": junk", [f](const sfs::path& d) { write_text(d / f, "\x01\xff junk\n"); }, bad);
    same(
        f + ": negative", [f, ckpt](const sfs::path& d) { write_text(d / f, ckpt("1\nt 0 -5\n")); }, bad);
    same(
        f + ": another partition", [f, ckpt](const sfs::path& d) { write_text(d / f, ckpt("1\nu 3 10\n")); }, bad);
    same(
        f + ": two entries", [f, ckpt](const sfs::path& d) { write_text(d / f, ckpt("2\nt 0 1\nt 0 2\n")); }, bad);
    same(
        f + ": a count that lies", [f, ckpt](const sfs::path& d) { write_text(d / f, ckpt("5\nt 0 1\n")); }, bad);
    same(
        f + ": a directory", [f](const sfs::path& d) { sfs::remove(d / f), sfs::create_directory(d / f); }, bad);
    same(
        f + ": missing", [f](const sfs::path& d) { sfs::remove(d / f); }, all());
  }
  // A huge recovery point only claims everything was flushed.
  same(
      rp + ": past the log end", [=](const sfs::path& d) { write_text(d / rp, ckpt("1\nt 0 99999999\n")); }, all());
  // A log start past the log end, with nothing cut by recovery to explain it: a writer flushes
  // the records below a log start before checkpointing it, so the value is ignored (issue 11 #5).
  same(
      ls + ": past the log end", [=](const sfs::path& d) { write_text(d / ls, ckpt("1\nt 0 99999999\n")); }, all());
  v.back().verify_finds = "KAFKA_STORAGE_ERROR";  // verify names it; --repair rewrites it
  // Indexes are hints: damaged or missing ones are rebuilt or ignored, never trusted.
  for (const std::string ext : {".index", ".timeindex"}) {
    const std::string f = "00000000000000000000" + ext;
    same(
        f + ": missing", [f](const sfs::path& d) { sfs::remove(d / f); }, all());
    same(
        f + ": empty", [f](const sfs::path& d) { write_text(d / f, ""); }, all());
    same(
        f + ": garbage", [f](const sfs::path& d) { write_text(d / f, std::string(1000, '\x7f')); }, all());
    v.back().verify_finds = "CORRUPT_MESSAGE";  // verify checks every entry; --repair rebuilds it
    // An empty directory where an index was: removed and the index rebuilt (a read-only
    // open indexes in memory).
    same(
        f + ": a directory", [f](const sfs::path& d) { sfs::remove(d / f), sfs::create_directory(d / f); }, all());
    v.back().verify_finds = "CORRUPT_MESSAGE";
  }
  // A hole before an empty segment (a follower's roll to a far offset whose append then
  // failed, or segments removed by hand): kept, as Kafka's loader keeps it. A reader gets
  // every record, then an empty read that skips the hole instead of an error or a stall.
  same(
      "an empty segment past a hole", [](const sfs::path& d) { write_text(d / "00000000000000005000.log", ""); },
      all());
  v.back().verify_finds = "KAFKA_STORAGE_ERROR";  // verify names the hole; no repair can fill it
  v.back().repair_keeps_problem = true;
  // Names that are not what they claim: named errors, never a hang or a crash.
  same(
      "a symlink loop named like a segment",
      [](const sfs::path& d) { sfs::create_symlink("00000000000000000500.log", d / "00000000000000000500.log"); }, bad);
  same(
      "a symlink loop with a foreign name", [](const sfs::path& d) { sfs::create_symlink("X.log", d / "X.log"); }, bad);
  same(
      "a FIFO named like a segment",
      [](const sfs::path& d) { REQUIRE(::mkfifo((d / "00000000000000001000.log").c_str(), 0600) == 0); }, bad);
  same(
      "a directory named like a segment",
      [](const sfs::path& d) { sfs::create_directory(d / "00000000000000001000.log"); }, bad);
  same(
      "a FIFO in place of a checkpoint",
      [rp](const sfs::path& d) {
        sfs::remove(d / rp);
        REQUIRE(::mkfifo((d / rp).c_str(), 0600) == 0);
      },
      bad);
  return v;
}

}  // namespace brook::test::hostile

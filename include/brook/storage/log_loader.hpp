// Opening a partition directory: lock it, list and classify its files (partition_files.hpp),
// finish or drop what an interrupted write left behind, read the checkpoints, and open the
// segments in offset order, recovering those that may hold unflushed data (segment.hpp).
//
// The chain of segments has no holes: if a segment was truncated by recovery, or the next
// segment does not start where the previous one ends, everything after that point is
// deleted (a log is a prefix, never a prefix with gaps). A file the directory should not
// hold fails the open instead of being deleted or guessed about.
//
// Thread-safety: a loader is used once, by the thread opening the log.
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/detail/lock_holder.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/log_checkpoints.hpp>
#include <brook/storage/log_cleaner.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/partition_files.hpp>
#include <brook/storage/segment.hpp>

namespace brook {

struct log_open_options {
  /// Open without modifying any file and without recovery writes: for tools reading a log
  /// another process owns. A torn tail is ignored (not cut); indexes live in memory. Takes
  /// no lock. (A read-only reader in another process is not protected from the writer
  /// cutting a file under it with truncate_to; in-process readers are.)
  bool read_only = false;
  /// Validate every batch of every segment (as if nothing had ever been checkpointed),
  /// instead of trusting segments below the recovery point after a tail check.
  bool full_recovery = false;
};

/// What a partition log starts from after load_log.
struct loaded_log {
  file_handle dir_lock;                            ///< holds the flock for a writable open
  std::vector<std::shared_ptr<segment>> segments;  ///< oldest first, the last one active; never empty
  offset log_start{0};
  offset log_end{0};
  offset recovery_point{0};  ///< == log_end: everything on disk was validated or flushed before
  offset first_dirty{0};     ///< the cleaner checkpoint, or 0
  bool created = false;      ///< the directory held no segment: a new, empty log at log_start
};

class log_loader {
 public:
  /// `config` must outlive the segments (they keep a pointer to it): pass the log's own.
  log_loader(std::filesystem::path dir, const log_config& config, log_open_options opts, recovery_report& report,
             log_checkpoints& checkpoints)
      : dir_(std::move(dir)), config_(config), opts_(opts), report_(report), checkpoints_(checkpoints) {}

  result<loaded_log> run() {
    loaded_log out;
    BROOK_TRY(prepare_directory(out));
    BROOK_TRY_ASSIGN(listing files, list_directory());
    BROOK_TRY(remove_leftovers(files));
    BROOK_TRY(checkpoints_.load());
    const auto cleaner = checkpoints_.cleaner_offset();
    out.first_dirty = cleaner.value_or(offset(0));
    report_.flushed_point = checkpoints_.recovery_point().value_or(offset(0));
    recovery_point_ = opts_.full_recovery ? offset(0) : report_.flushed_point;
    if (files.bases.empty()) {
      BROOK_TRY(open_empty(out));
    } else {
      BROOK_TRY(open_chain(files.bases, out));
    }
    BROOK_ASSERT(!out.segments.empty(), "{}: a loaded log has an active segment", dir_.string());
    BROOK_ASSERT(out.log_start <= out.log_end, "{}: log start {} past log end {}", dir_.string(), out.log_start,
                 out.log_end);
    return out;
  }

 private:
  using seg_ptr = std::shared_ptr<segment>;

  struct listing {
    std::vector<offset> bases;  // of the .log files, sorted
    std::vector<std::filesystem::path> orphans;
    std::vector<std::pair<offset, std::filesystem::path>> log_swaps;
  };

  /// Creates a missing directory (writable opens) and takes the writer's flock.
  result<void> prepare_directory(loaded_log& out) {
    const file_kind k = files().kind(dir_).value_or(file_kind::none);
    if (k == file_kind::none) {
      if (opts_.read_only) return make_error(errc::log_dir_not_found, "{}: no such partition directory", dir_.string());
      BROOK_TRY(files().create_directories(dir_));
    } else if (k != file_kind::directory) {
      return make_error(errc::kafka_storage_error, "{}: not a directory", dir_.string());
    }
    if (opts_.read_only) return ok();
    BROOK_TRY_ASSIGN(file_handle d, file_handle::open(files(), dir_, O_RDONLY | O_DIRECTORY));
    BROOK_TRY_ASSIGN(const bool locked, d.try_lock());
    if (!locked)
      return make_error(errc::log_dir_locked, "{}: {} has this partition log open for writing", dir_.string(),
                        detail::flock_holder_name(d.fd()));
    out.dir_lock = std::move(d);
    return ok();
  }

  file_system& files() const { return files_or_posix(config_.files); }

  /// Classifies every entry; a foreign file fails the open.
  result<listing> list_directory() {
    listing l;
    BROOK_TRY_ASSIGN(const auto entries, files().list(dir_));
    for (const auto& de : entries) {
      const std::filesystem::path& p = de.path;
      const std::string name = p.filename().string();
      const partition_file f = partition_files::classify(name);
      using kind = partition_file_kind;
      switch (f.kind) {
        case kind::segment_log:
          if (de.kind != file_kind::regular) break;  // a directory called <base>.log: foreign
          l.bases.push_back(*f.base);
          continue;
        case kind::segment_index:
        case kind::segment_time_index:
        case kind::kafka_only:
        case kind::checkpoint: continue;
        case kind::checkpoint_tmp:
          // A checkpoint write cut short: the checkpoint itself is intact (rename is atomic).
          if (!opts_.read_only) {
            report_.events.push_back(fmt::format("{}: removed leftover file", p.string()));
            (void)files().remove(p);
          }
          continue;
        case kind::log_swap:
          l.log_swaps.emplace_back(*f.base, p);  // the cleaner's commit point: maybe completed
          continue;
        case kind::leftover:
          l.orphans.push_back(p);  // leftovers of an interrupted swap or delete
          continue;
        case kind::foreign: break;
      }
      return make_error(errc::kafka_storage_error,
                        "{}: unexpected file '{}' in a partition directory (not a segment, index or checkpoint)",
                        dir_.string(), name);
    }
    std::sort(l.bases.begin(), l.bases.end());
    return l;
  }

  /// Completes the cleaner's swaps and removes orphans and indexes without a log (they would
  /// be rebuilt anyway).
  result<void> remove_leftovers(listing& l) {
    BROOK_TRY_ASSIGN(auto left,
                     detail::complete_log_swaps(files(), dir_, l.bases, l.log_swaps, opts_.read_only, report_));
    l.orphans.insert(l.orphans.end(), left.begin(), left.end());
    for (const auto& de : files().list(dir_).value_or(std::vector<directory_entry>{})) {
      const partition_file f = partition_files::classify(de.path.filename().string());
      if ((f.kind == partition_file_kind::segment_index || f.kind == partition_file_kind::segment_time_index) &&
          !std::binary_search(l.bases.begin(), l.bases.end(), *f.base))
        l.orphans.push_back(de.path);
    }
    for (const auto& p : l.orphans) {
      report_.events.push_back(fmt::format("{}: removed leftover file", p.string()));
      if (!opts_.read_only) (void)files().remove(p);
    }
    return ok();
  }

  /// A directory without segments: a new log, empty at the checkpointed log start.
  result<void> open_empty(loaded_log& out) {
    if (opts_.read_only) return make_error(errc::log_dir_not_found, "{}: holds no segments", dir_.string());
    const offset start = checkpoints_.log_start().value_or(offset(0));
    BROOK_TRY_ASSIGN(seg_ptr s, open_segment(start, segment::open_kind::create, true));
    out.segments.push_back(std::move(s));
    out.log_start = out.log_end = out.recovery_point = start;
    out.created = true;
    return ok();
  }

  /// Opens the segments in order; everything after an overlap or a truncated segment is
  /// deleted. A hole (a segment starting past the previous one's end: a follower's batch far
  /// ahead, or a segment removed by hand) is kept and reported, as Kafka's loader keeps it.
  result<void> open_chain(const std::vector<offset>& bases, loaded_log& out) {
    auto& segs = out.segments;
    offset expected = bases.front();
    bool cut = false;
    for (std::size_t i = 0; i < bases.size(); ++i) {
      const offset base = bases[i];
      if (!cut && i > 0 && base > expected)
        report_.events.push_back(fmt::format("{}: offsets {}..{} are missing before this segment (kept)",
                                             partition_files::log(dir_, base).string(), expected, base - 1));
      if (!cut && i > 0 && base < expected) {
        cut = true;  // the previous segment ends after this one starts: an overlap
        report_.events.push_back(fmt::format("{}: previous segment ends at offset {}, past its base {}",
                                             partition_files::log(dir_, base).string(), expected, base));
      }
      if (cut) {
        delete_after_cut(base);
        continue;
      }
      const bool is_last = i + 1 == bases.size();
      BROOK_TRY_ASSIGN(seg_ptr s, open_segment(base, segment::open_kind::trusted, is_last));
      expected = s->next_offset();
      if (s->was_truncated() && !is_last) cut = true;
      segs.push_back(std::move(s));
    }
    if (!opts_.read_only && segs.size() < bases.size()) {
      // The last kept segment becomes the active one: reopen it with room to grow.
      const offset b = segs.back()->base_offset();
      segs.pop_back();
      BROOK_TRY_ASSIGN(seg_ptr s, open_segment(b, segment::open_kind::trusted, true));
      segs.push_back(std::move(s));
    }
    out.log_end = segs.back()->next_offset();
    if (report_.flushed_point > out.log_end) {  // e.g. a file shortened at a batch boundary
      report_.clean = false;
      report_.events.push_back(fmt::format("{}: recovery point {} is past the log end {}: flushed data is missing",
                                           (dir_ / partition_files::recovery_point_checkpoint).string(),
                                           report_.flushed_point, out.log_end));
    }
    out.log_start = checked_log_start(segs.front()->base_offset(), out.log_end);
    out.recovery_point = out.log_end;
    return ok();
  }

  /// The log start the checkpoint names, checked against the segments found. A writer flushes
  /// everything below a log start before it checkpoints it (delete_records_before), so only
  /// lost flushed data explains a checkpoint past the log end: data this recovery cut, or a
  /// recovery point past the log end too (a file shortened or removed below it). Then the log
  /// starts at its end, as Kafka's loader starts it at the checkpoint. Otherwise the value
  /// cannot be right: it is reported and ignored, and every record stays readable.
  offset checked_log_start(offset first, offset end) {
    const std::optional<offset> ckpt = checkpoints_.log_start();
    if (!ckpt || *ckpt <= end) return std::max(ckpt.value_or(first), first);
    const auto path = (dir_ / partition_files::log_start_checkpoint).string();
    const bool cut = report_.bytes_truncated > 0 || report_.segments_deleted > 0;
    if (cut || report_.flushed_point > end) {
      report_.events.push_back(fmt::format(
          "{}: log start {} is past the log end {}, and {}: the log starts at its end", path, *ckpt, end,
          cut ? "recovery cut data below it" : fmt::format("flushed data up to {} is missing", report_.flushed_point)));
      return end;
    }
    report_.events.push_back(fmt::format(
        "{}: log start {} is past the log end {}, and no flushed data is missing: ignored, the log starts at {}", path,
        *ckpt, end, first));
    return first;
  }

  void delete_after_cut(offset base) {
    const auto path = partition_files::log(dir_, base);
    std::uint64_t bytes = 0;
    if (auto f = file_handle::open(files(), path, O_RDONLY)) bytes = f->size().value_or(0);
    const bool flushed = base < report_.flushed_point;
    report_.clean = false;
    ++report_.segments_deleted;
    report_.bytes_deleted += bytes;
    if (flushed) report_.flushed_bytes_deleted += bytes;
    report_.events.push_back(fmt::format("{}: deleted ({} bytes{}), it follows a truncated segment", path.string(),
                                         bytes, flushed ? ", flushed data" : ""));
    if (!opts_.read_only) segment::remove_files(files(), dir_, base);
  }

  result<seg_ptr> open_segment(offset base, segment::open_kind kind, bool active) {
    return segment::open(dir_, base, config_, kind, !opts_.read_only, active, recovery_point_, report_);
  }

  const std::filesystem::path dir_;
  const log_config& config_;
  const log_open_options opts_;
  recovery_report& report_;
  log_checkpoints& checkpoints_;
  offset recovery_point_{0};  // what segments may be trusted below, during the load
};

}  // namespace brook

// The cluster metadata log: KRaft's `__cluster_metadata-0` partition, in
// process. A partition_log (storage/partition_log.hpp) in
// `<root>/__cluster_metadata-0` holds the records of metadata_records.hpp,
// one RecordBatch v2 per append, each record with a null key and the
// ApiMessageAndVersion bytes as its value, as a Kafka controller writes them.
// The batch's partitionLeaderEpoch is the controller epoch that wrote it (in
// KRaft, the Raft leader epoch of the metadata partition).
//
//   <root>/__cluster_metadata-0/00000000000000000000.log     RecordBatch v2, Kafka's bytes
//                               00000000000000000000.index / .timeindex
//                               recovery-point-offset-checkpoint, log-start-offset-checkpoint
//
// open() replays every batch into a cluster_image. A torn tail (a crash in the
// middle of an append) is cut by partition_log's recovery before the replay,
// so the image is the one after the last whole batch. A record that does not
// decode, a record the image refuses, or a batch whose controller epoch goes
// backwards stops the open with corrupt_message naming the offset: brook never
// guesses past a damaged metadata log.
//
// append(records[, controller_epoch]) is all or nothing: the records are first
// applied to a copy of the image (a record the image refuses fails the append
// with invalid_request and nothing is written), then written as one batch and
// flushed (fdatasync) before the new image is published. Metadata is small and
// rare, so every append is durable when append returns; the cost is one
// fdatasync per append. An I/O error during the write or the flush leaves the
// on-disk state unknown: the log then refuses further appends with
// kafka_storage_error (reopen it, and the replay tells what survived).
//
// A read-only open (metadata_log_options::read_only) takes no lock and writes
// nothing: tools use it to replay the log of a running controller (a batch being
// written at that moment is ignored as a torn tail). It refuses append().
//
// Watchers: watch(fn) registers fn(image, records), called once per successful
// append with the image after it and the records it applied, in append
// (offset) order, one call at a time, outside the log's lock. They run on a
// thread that called append: normally the appending thread, before its append
// returns; if another thread is already delivering, that thread delivers this
// append too (after the earlier ones) and this append returns at once. A
// watcher may call any member, append included (that append is delivered after
// the current callback returns). unwatch(id) stops later deliveries; a
// delivery already in progress on another thread may still complete. An
// exception thrown by a watcher propagates out of the append() that was
// delivering (that append, and any it delivered, are already durable and
// published); the events not yet delivered are delivered by the next append.
//
// Thread-safety: every member is thread-safe (one internal mutex serialises
// appends and protects the published image; image() returns an immutable
// snapshot that stays valid as long as the caller holds it). The image is
// copied once per append: appends cost O(size of the image), fine for cluster
// metadata.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/clock.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/replication/cluster_image.hpp>
#include <brook/replication/metadata_records.hpp>
#include <brook/storage/partition_log.hpp>

namespace brook {

struct metadata_log_options {
  /// Record timestamps (the append time). Null = system clock.
  std::shared_ptr<const brook::clock> clock{};
  /// Settings of the underlying partition log (segment.bytes, segment.index.bytes, ...).
  /// Its clock is replaced by `clock`, and retention is forced off (retention.ms and
  /// retention.bytes -1): brook has no metadata snapshots yet, so every record is kept.
  log_config log{};
  /// Open the log read-only (log_open_options::read_only): no lock, nothing written, a torn
  /// tail ignored rather than cut, so a tool can replay the log a running controller owns.
  /// append() then fails with invalid_request. Default false.
  bool read_only = false;
};

struct metadata_append_result {
  offset base_offset{0};                       ///< offset of the first record
  offset last_offset{0};                       ///< offset of the last record
  std::shared_ptr<const cluster_image> image;  ///< the image after this append
};

class metadata_log {
 public:
  /// KRaft's directory name for the metadata partition.
  static constexpr const char* partition_dir_name = "__cluster_metadata-0";

  using watcher =
      std::function<void(const std::shared_ptr<const cluster_image>&, const std::vector<metadata::metadata_record>&)>;
  using watch_id = std::uint64_t;

  metadata_log(const metadata_log&) = delete;
  metadata_log& operator=(const metadata_log&) = delete;
  ~metadata_log() { (void)close(); }

  /// Opens (creating when missing) `<root>/__cluster_metadata-0` and replays it.
  /// Errors: corrupt_message (a record that does not decode or apply, naming its offset),
  /// log_dir_locked (another writer has it open), OS errors. Read-only (opts.read_only):
  /// nothing is created; log_dir_not_found when the directory is missing or holds no segment.
  static result<std::unique_ptr<metadata_log>> open(const std::filesystem::path& root, metadata_log_options opts = {}) {
    if (!opts.clock) opts.clock = make_system_clock();
    log_config cfg = opts.log;
    cfg.clock = opts.clock;
    cfg.retention_time = log_config::keep_forever;
    cfg.retention_bytes = -1;
    log_open_options lo;
    lo.read_only = opts.read_only;
    BROOK_TRY_ASSIGN(auto log, partition_log::open(root / partition_dir_name, std::move(cfg), lo));
    std::unique_ptr<metadata_log> m(new metadata_log(std::move(log), std::move(opts)));
    BROOK_TRY(m->replay());
    return m;
  }

  /// The current image: an immutable snapshot. Thread-safe.
  std::shared_ptr<const cluster_image> image() const {
    std::lock_guard lk(mu_);
    return image_;
  }

  /// The offset the next record will get. Thread-safe.
  offset end_offset() const { return log_->log_end_offset(); }

  /// The partition log's recovery report from open (what a crash left and what was cut), a copy.
  recovery_report recovery() const { return log_->recovery(); }

  /// Appends records as one batch at the current controller epoch. See append(records, epoch).
  result<metadata_append_result> append(std::vector<metadata::metadata_record> records) {
    std::unique_lock lk(mu_);
    return append_locked(std::move(records), image_->controller_epoch() < 0 ? 0 : image_->controller_epoch(), lk);
  }

  /// Appends records as one batch written by a controller in `controller_epoch`, which
  /// must not be older than the image's (a newer one starts a new epoch; write a
  /// NoOpRecord to start one without other changes). All or nothing; durable (flushed)
  /// when it returns. Errors: invalid_argument (no records, negative epoch),
  /// invalid_request (an older controller epoch, a record the image refuses, or a log
  /// opened read-only: nothing written), closed, kafka_storage_error (an earlier write
  /// failed), OS errors.
  result<metadata_append_result> append(std::vector<metadata::metadata_record> records, std::int32_t controller_epoch) {
    std::unique_lock lk(mu_);
    return append_locked(std::move(records), controller_epoch, lk);
  }

  /// Registers fn (see the header comment for when and where it runs). Thread-safe.
  watch_id watch(watcher fn) {
    std::lock_guard lk(mu_);
    const watch_id id = ++next_watch_id_;
    watchers_.emplace_back(id, std::make_shared<watcher>(std::move(fn)));
    return id;
  }

  /// Removes a watcher; false if the id is unknown. Thread-safe.
  bool unwatch(watch_id id) {
    std::lock_guard lk(mu_);
    auto it = std::find_if(watchers_.begin(), watchers_.end(), [&](const auto& w) { return w.first == id; });
    if (it == watchers_.end()) return false;
    watchers_.erase(it);
    return true;
  }

  /// Closes the underlying log (flush + checkpoints). Later appends fail with closed.
  result<void> close() {
    std::lock_guard lk(mu_);
    if (closed_) return ok();
    closed_ = true;
    return log_->close();
  }

 private:
  struct event {
    std::shared_ptr<const cluster_image> image;
    std::vector<metadata::metadata_record> records;
  };

  metadata_log(std::unique_ptr<partition_log> log, metadata_log_options opts)
      : log_(std::move(log)), opts_(std::move(opts)), image_(std::make_shared<const cluster_image>()) {}

  result<void> replay() {
    cluster_image img;
    offset pos = log_->log_start_offset();
    const offset end = log_->log_end_offset();
    const std::string where = log_->dir().string();
    while (pos < end) {
      BROOK_TRY_ASSIGN(auto slice, log_->read(pos));
      if (slice.empty() && slice.next_offset() <= pos) break;
      result<void> bad = ok();
      auto n = slice.for_each_batch([&](const record_batch_view& b) {
        if (!bad) return;
        const auto& h = b.header();
        if (h.is_control()) return;  // KRaft's own control records (leader change, snapshots): nothing to apply
        if (auto e = img.set_controller_epoch(h.partition_leader_epoch); !e) {
          bad = make_error(errc::corrupt_message, "{}: batch at offset {}: {}", where, h.base_offset,
                           e.error().message());
          return;
        }
        for (const record_view& rv : b) {
          if (rv.offset() < pos) continue;
          const auto& v = rv.value();
          if (v.is_null()) {
            bad = make_error(errc::corrupt_message, "{}: record at offset {} has a null value", where, rv.offset());
            return;
          }
          auto d = metadata::decode_metadata_record(std::span<const std::byte>(v.data(), v.size()));
          if (!d) {
            bad = make_error(errc::corrupt_message, "{}: record at offset {}: {}", where, rv.offset(),
                             d.error().message());
            return;
          }
          if (auto a = img.apply(d->record); !a) {
            bad = make_error(errc::corrupt_message, "{}: record at offset {} does not apply: {}", where, rv.offset(),
                             a.error().message());
            return;
          }
        }
      });
      if (!n) return n.error();
      if (!bad) return bad.error();
      pos = slice.next_offset();
    }
    image_ = std::make_shared<const cluster_image>(std::move(img));
    return ok();
  }

  result<metadata_append_result> append_locked(std::vector<metadata::metadata_record> records,
                                               std::int32_t controller_epoch, std::unique_lock<std::mutex>& lk) {
    if (closed_) return make_error(errc::closed, "{}: metadata log is closed", log_->dir().string());
    if (opts_.read_only)
      return make_error(errc::invalid_request, "{}: metadata log was opened read-only", log_->dir().string());
    if (failed_)
      return make_error(errc::kafka_storage_error, "{}: an earlier append failed; reopen the metadata log",
                        log_->dir().string());
    if (records.empty()) return make_error(errc::invalid_argument, "metadata append without records");
    if (controller_epoch < 0)
      return make_error(errc::invalid_argument, "controller epoch {} is negative", controller_epoch);

    auto next = std::make_shared<cluster_image>(*image_);
    BROOK_TRY(next->set_controller_epoch(controller_epoch));
    BROOK_TRY(next->apply_all(records));

    batch_options bo;
    bo.partition_leader_epoch = controller_epoch;
    record_batch_builder builder(bo, 4096);
    const timestamp_ms now = opts_.clock->now_ms();
    for (const auto& r : records) {
      const auto value = metadata::encode_metadata_record(r);
      builder.append(now, nullable_bytes::null(), nullable_bytes(std::span<const std::byte>(value)));
    }
    auto written = log_->append(builder.finish());
    if (!written) {
      // partition_log validates before it writes: only an OS or storage error leaves the
      // file in an unknown state (record_too_large and the like wrote nothing).
      const auto& code = written.error().code();
      if (code.category() != brook::error_category() || written.error() == errc::kafka_storage_error) failed_ = true;
      return written.error();
    }
    if (auto f = log_->flush(); !f) {
      failed_ = true;
      return f.error();
    }
    std::shared_ptr<const cluster_image> published = std::move(next);
    image_ = published;
    metadata_append_result res{written->base_offset, written->last_offset, published};

    pending_.push_back(event{published, std::move(records)});
    if (!delivering_) deliver(lk);
    return res;
  }

  /// Runs watchers for every pending event, in order, without holding mu_ while they run.
  /// REQUIRES: lk holds mu_ and no other thread is delivering.
  void deliver(std::unique_lock<std::mutex>& lk) {
    delivering_ = true;
    try {
      while (!pending_.empty()) {
        event ev = std::move(pending_.front());
        pending_.pop_front();
        auto ws = watchers_;
        lk.unlock();
        for (const auto& w : ws) (*w.second)(ev.image, ev.records);
        lk.lock();
      }
    } catch (...) {
      if (!lk.owns_lock()) lk.lock();
      delivering_ = false;
      throw;
    }
    delivering_ = false;
  }

  std::unique_ptr<partition_log> log_;
  metadata_log_options opts_;
  mutable std::mutex mu_;  // guards everything below, and serialises appends
  std::shared_ptr<const cluster_image> image_;
  std::vector<std::pair<watch_id, std::shared_ptr<watcher>>> watchers_;
  watch_id next_watch_id_ = 0;
  std::deque<event> pending_;
  bool delivering_ = false;
  bool closed_ = false;
  bool failed_ = false;
};

}  // namespace brook

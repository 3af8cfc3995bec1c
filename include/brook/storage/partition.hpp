// One partition of a topic as the clients see it: its log plus the high watermark,
// the offset below which records are *committed* and may be read by consumers.
//
// With one replica (this layer) the high watermark follows the log end after every
// append; the replication layer moves it instead once followers exist. Reads through
// a partition never return records at or past the high watermark.
//
// Thread-safety: all members are thread-safe; appends are serialised by the log.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include <brook/core/assert.hpp>
#include <brook/core/notifier.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/partition_log.hpp>

namespace brook {

class partition {
 public:
  partition(std::string topic, partition_id id, std::unique_ptr<partition_log> log, std::shared_ptr<notifier> notify)
      : topic_(std::move(topic)), id_(id), log_(std::move(log)), notify_(std::move(notify)) {
    hw_.store(log_->log_end_offset().value(), std::memory_order_release);
  }

  const std::string& topic() const noexcept { return topic_; }
  partition_id id() const noexcept { return id_; }
  partition_log& log() noexcept { return *log_; }
  const partition_log& log() const noexcept { return *log_; }

  /// Offsets below this are committed and visible to consumers.
  offset high_watermark() const noexcept { return offset(hw_.load(std::memory_order_acquire)); }
  offset log_start_offset() const noexcept { return log_->log_start_offset(); }
  offset log_end_offset() const noexcept { return log_->log_end_offset(); }

  /// Appends as the only replica: the high watermark moves to the new log end. Takes what
  /// partition_log::append takes: bytes (and append_options), or a built_batch made in
  /// this process.
  template <typename Batches, typename... Options>
  result<append_result> append(Batches&& batches, Options&&... options) {
    auto r = log_->append(std::forward<Batches>(batches), std::forward<Options>(options)...);
    if (r) advance_high_watermark(r->last_offset + 1);
    return r;
  }

  /// Moves the high watermark forward (never back) and, when it moved, wakes waiting
  /// consumers. (A wake-up without a move would wake fetchers that wait on a shared
  /// notifier for nothing, and their fetches call this again.)
  void advance_high_watermark(offset hw) noexcept {
    // Callers compute hw from log ends under the lock that also guards truncation.
    BROOK_ASSERT(hw <= log_->log_end_offset(), "{}-{}: high watermark {} past the log end {}", topic_, id_, hw,
                 log_->log_end_offset());
    std::int64_t cur = hw_.load(std::memory_order_relaxed);
    while (cur < hw.value()) {
      if (hw_.compare_exchange_weak(cur, hw.value(), std::memory_order_acq_rel)) {
        if (notify_) notify_->notify();
        return;
      }
    }
  }

  /// Sets the high watermark, also lower (a replica restoring its checkpoint, or a follower
  /// truncated below it after an unclean election), clamped to the log end. Wakes waiters.
  void reset_high_watermark(offset hw) noexcept {
    hw_.store(std::clamp(hw, log_->log_start_offset(), log_->log_end_offset()).value(), std::memory_order_release);
    if (notify_) notify_->notify();
  }

  /// Like partition_log::read, bounded by the high watermark.
  result<log_slice> read(offset start, read_options ro = {}) const {
    offset hw = high_watermark();
    if (!ro.max_offset || *ro.max_offset > hw) ro.max_offset = hw;
    return log_->read(start, ro);
  }

 private:
  std::string topic_;
  partition_id id_;
  std::unique_ptr<partition_log> log_;
  std::shared_ptr<notifier> notify_;
  std::atomic<std::int64_t> hw_{0};
};

}  // namespace brook

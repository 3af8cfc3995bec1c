// The definitions of partition_log's members; <brook/storage/partition_log.hpp> says what each does.
// BROOK_DECL (core/linkage.hpp) makes them inline, the header-only default, or external,
// compiled once in <brook/src.hpp> under BROOK_SEPARATE_COMPILATION.
#pragma once

#include <brook/storage/partition_log.hpp>

namespace brook {

BROOK_DECL partition_log::~partition_log() { (void)close(); }

BROOK_DECL result<std::unique_ptr<partition_log>> partition_log::open(const fs::path& dir, log_config config,
                                                                      log_open_options opts) {
  BROOK_TRY(config.validate());
  if (!config.clock) config.clock = make_system_clock();
  if (!config.files) config.files = posix_file_system::shared();
  std::unique_ptr<partition_log> log(new partition_log(dir, std::move(config), opts));
  BROOK_TRY(log->load());
  return log;
}

BROOK_DECL result<append_result> partition_log::append(std::span<std::byte> batches, append_options ao) {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_writable());
  if (batches.empty()) return make_error(errc::invalid_record, "{}: empty append", dir_.string());
  const timestamp_ms now = config_.clock->now_ms();
  BROOK_TRY_ASSIGN(validated_append v, validate_append(batches, ao, config_, log_end_offset(), now, dir_.string()));
  return write_validated(batches, v, now);
}

BROOK_DECL result<append_result> partition_log::append(const built_batch& b) {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_writable());
  const timestamp_ms now = config_.clock->now_ms();
  auto v = can_append_built(b, config_) ? validate_built_append(b, config_, log_end_offset(), now, dir_.string())
                                        : validate_append(b.bytes(), {}, config_, log_end_offset(), now, dir_.string());
  if (!v) return v.error();
  return write_validated(b.bytes(), *v, now);
}

BROOK_DECL result<append_result> partition_log::write_validated(std::span<const std::byte> batches,
                                                                const validated_append& v, timestamp_ms now) {
  const std::span<const std::byte> bytes = v.rebuilt.empty() ? batches : std::span<const std::byte>(v.rebuilt);
  BROOK_TRY(write_batches(bytes, v.result.last_offset, v.max_timestamp, now));
  log_end_.store((v.result.last_offset + 1).value(), std::memory_order_release);
  notify_waiters();

  unflushed_records_ += static_cast<std::int64_t>(v.result.records);
  if (first_unflushed_ms_ < 0) first_unflushed_ms_ = now;
  if (unflushed_records_ >= config_.flush_messages) BROOK_TRY(flush_locked());
  return v.result;
}

BROOK_DECL result<void> partition_log::flush() {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_open());
  return flush_locked();
}

BROOK_DECL result<void> partition_log::tick() {
  std::lock_guard wl(writer_mu_);
  if (closed_ || opts_.read_only) return ok();
  timestamp_ms now = config_.clock->now_ms();
  if (first_unflushed_ms_ >= 0 && now - first_unflushed_ms_ >= config_.flush_interval.count())
    BROOK_TRY(flush_locked());
  if (!segs_.active()->empty() && now - active_created_ms_ > config_.segment_time.count()) BROOK_TRY(roll_locked());
  return ok();
}

BROOK_DECL result<void> partition_log::roll() {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_open());
  if (segs_.active()->empty()) return ok();
  return roll_locked();
}

BROOK_DECL result<void> partition_log::checkpoint() {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_open());
  return write_checkpoints();
}

BROOK_DECL result<std::size_t> partition_log::enforce_retention() {
  std::lock_guard wl(writer_mu_);
  if (closed_ || opts_.read_only) return std::size_t{0};
  const auto segs = segs_.snapshot();
  BROOK_TRY_ASSIGN(std::size_t n, segments_past_retention(segs, log_start_offset(), config_, config_.clock->now_ms()));
  if (n == 0) return n;
  if (n == segs.size()) BROOK_TRY(roll_locked());  // never leave the log without a segment
  BROOK_TRY(delete_oldest(n));
  return n;
}

BROOK_DECL result<void> partition_log::delete_records_before(offset o) {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_open());
  if (o > log_end_offset())
    return make_error(errc::offset_out_of_range, "{}: cannot delete records before {}, past the log end {}",
                      dir_.string(), o, log_end_offset());
  if (o <= log_start_offset()) return ok();
  // The records below `o` reach the disk before the checkpoint naming `o` does, so after a
  // crash the log never ends below its checkpointed start (log_loader checks it).
  if (recovery_point() < o) BROOK_TRY(flush_locked());
  set_log_start(o);
  if (const std::size_t n = segments_below(segs_.snapshot(), o); n > 0) BROOK_TRY(delete_oldest(n));
  return write_checkpoints();
}

BROOK_DECL result<void> partition_log::truncate_fully_and_start_at(offset o) {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_writable());
  if (o.value() < 0) return make_error(errc::invalid_argument, "{}: negative start offset {}", dir_.string(), o);
  structure_gen_.fetch_add(1, std::memory_order_acq_rel);
  return truncate_fully_locked(o);
}

BROOK_DECL result<void> partition_log::truncate_to(offset o) {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_writable());
  if (o >= log_end_offset()) return ok();
  structure_gen_.fetch_add(1, std::memory_order_acq_rel);  // a cleaner pass running now must not swap
  if (o < log_start_offset()) return truncate_fully_locked(o);
  auto cut = segs_.modify([&](segment_list::vector& segs) -> result<void> {
    BROOK_TRY(cut_segments_at(files(), segs, o, dir_, [&](offset base, segment::open_kind kind) {
      return open_segment(base, kind, /*active=*/true);
    }));
    set_log_end_after_truncation(segs.back()->next_offset());
    return ok();
  });
  BROOK_TRY(std::move(cut));
  active_created_ms_ = config_.clock->now_ms();
  const offset end = log_end_offset();
  if (checkpoints_.cleaner_offset() && *checkpoints_.cleaner_offset() > end)
    BROOK_TRY(checkpoints_.write_cleaner_offset(end));  // Kafka's maybeTruncateCheckpoint
  return write_checkpoints();
}

BROOK_DECL result<void> partition_log::close() {
  std::lock_guard wl(writer_mu_);
  if (closed_) return ok();
  closed_ = true;
  notify_waiters();
  if (opts_.read_only || segs_.size() == 0) return ok();  // read-only, or open() failed
  // After a failed flush, nothing may claim durability: no seal, no checkpoint.
  auto r = sync_failed_ ? result<void>(ok()) : flush_seal_and_checkpoint();
  dir_lock_.reset();  // another writer may open the directory now
  return r;
}

BROOK_DECL result<cleanable_info> partition_log::cleanable(std::optional<offset> upper_bound) const {
  return plan(segs_.snapshot(), upper_bound, config_.clock->now_ms());
}

BROOK_DECL result<compact_stats> partition_log::compact(const compact_options& co) {
  std::lock_guard cl(cleaner_mu_);
  BROOK_TRY(check_compactable());
  const std::uint64_t gen = structure_gen_.load(std::memory_order_acquire);
  const timestamp_ms now = config_.clock->now_ms();
  const auto segs = segs_.snapshot();  // pins every segment the map's keys point into
  BROOK_TRY_ASSIGN(cleanable_info p, plan(segs, co.upper_bound, now));
  compact_stats st = detail::stats_before_pass(p);
  if (p.segments == 0) return st;
  offset_map map;
  const compression_codecs none_only;
  const compression_codecs& codecs = config_.codecs ? *config_.codecs : none_only;
  BROOK_TRY(detail::build_offset_map(segs, p, map, codecs));
  const detail::record_filter filter{&map, now, config_.delete_retention.count(), &codecs};
  for (std::size_t i = 0; i < p.segments; ++i) {
    BROOK_TRY_ASSIGN(bool go_on, clean_one(segs[i], filter, gen, st));
    if (!go_on) return st;  // truncated or closed meanwhile: stop, the first dirty offset stays
  }
  std::lock_guard wl(writer_mu_);
  if (closed_ || structure_gen_.load(std::memory_order_acquire) != gen) return st;
  if (st.first_dirty_after.value() > first_dirty_.load(std::memory_order_acquire))
    first_dirty_.store(st.first_dirty_after.value(), std::memory_order_release);
  BROOK_TRY(checkpoints_.write_cleaner_offset(st.first_dirty_after));
  return st;
}

BROOK_DECL result<log_slice> partition_log::read(offset start, read_options ro) const {
  const offset log_start = log_start_offset();
  const offset leo = log_end_offset();
  if (start < log_start || start > leo)
    return make_error(errc::offset_out_of_range, "{}: offset {} is outside [{}, {}]", dir_.string(), start, log_start,
                      leo);
  const offset bound = ro.max_offset ? std::min(*ro.max_offset, leo) : leo;
  if (start >= bound) return log_slice(nullptr, file_pos{0}, 0, start, start);
  BROOK_TRY_ASSIGN(log_slice s, read_segments(segs_, start, bound, ro.max_bytes, dir_, ro.hint));
  if (!s.empty() || s.next_offset() > start || bound != leo) return s;
  // Below the log end some batch always holds `start` or a later offset (the log end is one
  // past the last batch), unless `start` lies in a hole before an empty segment, which the
  // empty slice skips (its next_offset). Finding none means a damaged header claims offsets
  // past the end, or a truncation raced this read: look again with writers held off, and
  // report the first, never answer "nothing yet" forever.
  std::lock_guard wl(writer_mu_);
  const offset now_end = log_end_offset();
  if (start >= now_end || start < log_start_offset()) return log_slice(nullptr, file_pos{0}, 0, start, start);
  BROOK_TRY_ASSIGN(log_slice again, read_segments(segs_, start, now_end, ro.max_bytes, dir_, ro.hint));
  if (!again.empty() || again.next_offset() > start) return again;
  return make_error(errc::corrupt_message, "{}: no batch holds offset {} or a later one below the log end {}",
                    dir_.string(), start, now_end);
}

BROOK_DECL result<std::optional<timestamp_offset>> partition_log::offset_for_timestamp(
    timestamp_ms ts, std::optional<offset> max_offset) const {
  // Retention may move the log start while the search runs; an answer below the new start
  // is stale, so search again (the log start only moves forward).
  for (;;) {
    auto r = offset_for_timestamp_once(ts, max_offset);
    if (!r || !*r || (*r)->off >= log_start_offset()) return r;
  }
}

BROOK_DECL bool partition_log::wait_for_data(offset after, std::chrono::steady_clock::time_point deadline) const {
  for (;;) {
    const std::uint64_t seen = changed_.sequence();
    if (log_end_offset() > after) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (closed_flag_.load(std::memory_order_acquire)) return false;
    if (!changed_.wait(seen, deadline)) return log_end_offset() > after;
  }
}

BROOK_DECL partition_log::partition_log(fs::path dir, log_config cfg, log_open_options o)
    : dir_(std::move(dir)), config_(std::move(cfg)), opts_(o), checkpoints_(dir_, *config_.files) {}

BROOK_DECL result<void> partition_log::load() {
  BROOK_TRY_ASSIGN(loaded_log l, log_loader(dir_, config_, opts_, report_, checkpoints_).run());
  dir_lock_ = std::move(l.dir_lock);
  segs_.modify([&](segment_list::vector& v) { v = std::move(l.segments); });
  log_start_.store(l.log_start.value(), std::memory_order_release);
  log_end_.store(l.log_end.value(), std::memory_order_release);
  recovery_point_.store(l.recovery_point.value(), std::memory_order_release);
  first_dirty_.store(l.first_dirty.value(), std::memory_order_release);
  active_created_ms_ = config_.clock->now_ms();
  if (opts_.read_only) return ok();
  if (!l.created) BROOK_TRY(segs_.active()->flush());  // everything on disk now counts as flushed
  // Checkpoints only speed up the next open: on a full disk, open anyway (the stale ones on
  // disk make the next open recover more, never less).
  if (auto w = write_checkpoints(); !w)
    report_.events.push_back(fmt::format("{}: checkpoints not written ({}); the next open recovers from the old ones",
                                         dir_.string(), w.error().to_string()));
  return ok();
}

BROOK_DECL result<void> partition_log::check_open() const {
  if (closed_) return make_error(errc::closed, "{}: log is closed", dir_.string());
  return ok();
}

BROOK_DECL result<void> partition_log::check_writable() const {
  BROOK_TRY(check_open());
  if (opts_.read_only) return make_error(errc::invalid_request, "{}: log was opened read-only", dir_.string());
  if (sync_failed_)
    return make_error(errc::kafka_storage_error,
                      "{}: a flush failed, so the log takes no more writes; reopen it to recover what reached the disk",
                      dir_.string());
  return ok();
}

BROOK_DECL result<void> partition_log::check_compactable() {
  std::lock_guard wl(writer_mu_);
  BROOK_TRY(check_writable());
  if (!config_.compacts())
    return make_error(errc::invalid_request, "{}: cleanup.policy is {}; compaction needs compact", dir_.string(),
                      to_string(config_.cleanup));
  return ok();
}

BROOK_DECL void partition_log::assert_positions() const {
  const offset ls = log_start_offset(), rp = recovery_point(), leo = log_end_offset();
  BROOK_ASSERT(ls <= rp && rp <= leo, "{}: log start {} <= recovery point {} <= log end {} does not hold",
               dir_.string(), ls, rp, leo);
}

BROOK_DECL void partition_log::set_log_start(offset o) {
  BROOK_ASSERT(o >= log_start_offset(), "{}: the log start moves only forward ({} -> {})", dir_.string(),
               log_start_offset(), o);
  log_start_.store(o.value(), std::memory_order_release);
  if (recovery_point() < o) recovery_point_.store(o.value(), std::memory_order_release);
  assert_positions();
}

BROOK_DECL void partition_log::set_log_end_after_truncation(offset end) {
  log_end_.store(end.value(), std::memory_order_release);
  if (recovery_point() > end) recovery_point_.store(end.value(), std::memory_order_release);
  if (first_dirty_.load(std::memory_order_relaxed) > end.value())
    first_dirty_.store(end.value(), std::memory_order_release);
  assert_positions();
}

BROOK_DECL void partition_log::notify_waiters() {
  if (closed_) closed_flag_.store(true, std::memory_order_release);
  changed_.notify();
}

BROOK_DECL auto partition_log::open_segment(offset base, segment::open_kind kind, bool active_seg,
                                            recovery_report* report) -> result<seg_ptr> {
  return segment::open(dir_, base, config_, kind, !opts_.read_only, active_seg, recovery_point(),
                       report ? *report : report_);
}

BROOK_DECL result<void> partition_log::write_batches(std::span<const std::byte> batches, offset last,
                                                     timestamp_ms max_ts, timestamp_ms now) {
  auto a = segs_.active();
  const offset first_base = decode_batch_header_unchecked(batches.data()).base_offset;
  // segment.ms, Kafka's way: the incoming timestamp against the segment's first batch,
  // or wall time since the segment was created when timestamps are missing.
  if (!a->empty()) {
    const timestamp_ms first = a->first_batch_timestamp();
    const std::int64_t waited = first >= 0 && max_ts >= 0 ? max_ts - first : now - active_created_ms_;
    const bool full = !a->has_room_for(batches.size(), last);
    if (waited > config_.segment_time.count() || full) {
      BROOK_TRY(roll_locked(first_base));
      a = segs_.active();
    }
  }
  if (a->has_room_for(batches.size(), last)) return a->append(batches);
  // More than one segment's worth in one call: append batch by batch.
  for (std::size_t pos = 0; pos < batches.size();) {
    batch_header h = decode_batch_header_unchecked(batches.data() + pos);
    auto one = batches.subspan(pos, h.size_bytes());
    if (!segs_.active()->has_room_for(one.size(), h.last_offset())) BROOK_TRY(roll_locked(h.base_offset));
    BROOK_TRY(segs_.active()->append(one));
    pos += h.size_bytes();
  }
  return ok();
}

BROOK_DECL result<void> partition_log::flush_locked() {
  if (opts_.read_only) return ok();
  if (sync_failed_) return make_error(errc::kafka_storage_error, "{}: a flush failed earlier", dir_.string());
  if (auto r = segs_.active()->flush(); !r) {
    sync_failed_ = true;
    return r;
  }
  recovery_point_.store(log_end_offset().value(), std::memory_order_release);
  unflushed_records_ = 0;
  first_unflushed_ms_ = -1;
  return ok();
}

BROOK_DECL result<void> partition_log::roll_locked(std::optional<offset> at) {
  auto old = segs_.active();
  const offset base = std::max(log_end_offset(), at.value_or(log_end_offset()));
  if (auto r = old->seal(); !r) {
    sync_failed_ = true;
    return r;
  }
  if (old->empty() && old->base_offset() == base) {
    // Re-open an empty sealed segment as active instead of creating a duplicate name.
    BROOK_TRY_ASSIGN(seg_ptr s, open_segment(base, segment::open_kind::trusted, true));
    segs_.replace_back(std::move(s));
    return ok();
  }
  if (old->empty()) return restart_active_at(base);
  BROOK_TRY_ASSIGN(seg_ptr s, open_segment(base, segment::open_kind::create, true));
  segs_.push_back(std::move(s));  // asserts base > the old active segment's base
  // A replica batch far ahead: the log ends where it starts, even if its append fails, so no
  // later append lands below the new segment's base.
  if (base > log_end_offset()) log_end_.store(base.value(), std::memory_order_release);
  // Everything in the sealed segment is durable now.
  recovery_point_.store(std::max(recovery_point(), old->next_offset()).value(), std::memory_order_release);
  assert_positions();
  active_created_ms_ = config_.clock->now_ms();
  BROOK_TRY(files().sync_directory(dir_));
  return write_checkpoints();
}

BROOK_DECL result<void> partition_log::restart_active_at(offset base) {
  auto old = segs_.active();
  BROOK_ASSERT(old->empty() && base > old->base_offset() && base >= log_end_offset(),
               "{}: only an empty active segment below {} is replaced", dir_.string(), base);
  BROOK_TRY_ASSIGN(seg_ptr s, open_segment(base, segment::open_kind::create, true));
  segs_.replace_back(std::move(s));
  segment::remove_files(files(), dir_, old->base_offset());
  // The log now ends where the next batch starts (offsets in between never existed), even if
  // the append that asked for this fails: a later append never lands below its segment.
  log_end_.store(base.value(), std::memory_order_release);
  if (segs_.size() == 1) set_log_start(base);  // nothing below `base` exists any more
  active_created_ms_ = config_.clock->now_ms();
  BROOK_TRY(files().sync_directory(dir_));
  return write_checkpoints();
}

BROOK_DECL result<void> partition_log::delete_oldest(std::size_t n) {
  // The log start moves under the list's lock: a reader that pins after the segments are
  // gone sees the new log start (read() reports offset_out_of_range against it).
  const auto gone = segs_.pop_front(n, [&](const seg_ptr& first) {
    if (log_start_offset() < first->base_offset()) set_log_start(first->base_offset());
  });
  for (const auto& s : gone) segment::remove_files(files(), dir_, s->base_offset());
  BROOK_TRY(files().sync_directory(dir_));
  return write_checkpoints();
}

BROOK_DECL result<void> partition_log::truncate_fully_locked(offset o) {
  auto reset = segs_.modify([&](segment_list::vector& segs) -> result<void> {
    BROOK_TRY_ASSIGN(seg_ptr fresh, open_segment_replacing_all(segs, o));
    segs.assign(1, std::move(fresh));
    log_start_.store(o.value(), std::memory_order_release);
    log_end_.store(o.value(), std::memory_order_release);
    recovery_point_.store(o.value(), std::memory_order_release);
    first_dirty_.store(o.value(), std::memory_order_release);
    return ok();
  });
  BROOK_TRY(std::move(reset));
  notify_waiters();  // the log end may have moved forward (a follower restarting at its leader's log start)
  active_created_ms_ = config_.clock->now_ms();
  if (checkpoints_.cleaner_offset()) BROOK_TRY(checkpoints_.write_cleaner_offset(o));
  return write_checkpoints();
}

BROOK_DECL auto partition_log::open_segment_replacing_all(const segment_list::vector& segs, offset o)
    -> result<seg_ptr> {
  for (const auto& s : segs) segment::remove_files(files(), dir_, s->base_offset());
  return open_segment(o, segment::open_kind::create, true);
}

BROOK_DECL result<cleanable_info> partition_log::plan(const std::vector<seg_ptr>& segs, std::optional<offset> upper,
                                                      timestamp_ms now) const {
  return plan_cleaning(segs, offset(first_dirty_.load(std::memory_order_acquire)), log_start_offset(), log_end_offset(),
                       upper, config_, now);
}

BROOK_DECL result<bool> partition_log::clean_one(const seg_ptr& s, const detail::record_filter& filter,
                                                 std::uint64_t gen, compact_stats& st) {
  const offset base = s->base_offset();
  st.bytes_before += s->size();
  detail::cleaned_segment_writer w(dir_, base, config_);
  BROOK_TRY_ASSIGN(bool changed, detail::clean_segment_into(*s, filter, w, st));
  if (!changed) {
    st.bytes_after += s->size();
    return true;
  }
  BROOK_TRY(w.finish());

  std::lock_guard wl(writer_mu_);
  if (closed_ || structure_gen_.load(std::memory_order_acquire) != gen) {
    w.discard();
    return false;
  }
  const auto pos = segs_.find(s);  // stable while writer_mu_ is held
  if (!pos) {                      // retention deleted it meanwhile
    w.discard();
    return true;
  }
  ++st.segments_cleaned;
  BROOK_TRY(detail::commit_cleaned_segment(files(), dir_, base));
  recovery_report quiet;  // the open's report belongs to open(); this one is not kept
  BROOK_TRY_ASSIGN(seg_ptr ns, open_segment(base, segment::open_kind::trusted, /*active=*/false, &quiet));
  segs_.replace_at(*pos, std::move(ns));
  st.bytes_after += w.size();
  return true;
}

BROOK_DECL result<std::optional<timestamp_offset>> partition_log::offset_for_timestamp_once(
    timestamp_ms ts, std::optional<offset> max_offset) const {
  const offset bound = max_offset ? std::min(*max_offset, log_end_offset()) : log_end_offset();
  return find_offset_by_timestamp(segs_.snapshot(), ts, log_start_offset(), bound);
}

BROOK_DECL result<void> partition_log::flush_seal_and_checkpoint() {
  BROOK_TRY(flush_locked());
  BROOK_TRY(segs_.active()->seal());
  return write_checkpoints();
}

BROOK_DECL result<void> partition_log::write_checkpoints() {
  if (opts_.read_only) return ok();
  BROOK_TRY(checkpoints_.write_recovery_point(recovery_point()));
  return checkpoints_.write_log_start(log_start_offset());
}

}  // namespace brook

// The definitions of consumer's members; <brook/client/consumer.hpp> says what each does.
// BROOK_DECL (core/linkage.hpp) makes them inline, the header-only default, or external,
// compiled once in <brook/src.hpp> under BROOK_SEPARATE_COMPILATION.
#pragma once

#include <brook/client/consumer.hpp>

namespace brook {

BROOK_DECL consumer::consumer(data_dir& dd, consumer_config cfg)
    : owned_source_(std::make_unique<data_dir_source>(dd)), src_(*owned_source_), cfg_(std::move(cfg)) {
  init_codecs();
}

BROOK_DECL consumer::consumer(fetch_source& source, consumer_config cfg) : src_(source), cfg_(std::move(cfg)) {
  init_codecs();
}

BROOK_DECL void consumer::init_codecs() {
  if (cfg_.codecs.only_none())
    if (auto c = src_.codecs()) cfg_.codecs = *c;
  dec_ = batch_decompressor(cfg_.codecs, cfg_.max_decompressed_batch_bytes);
  dec_.set_retaining(true);
}

BROOK_DECL result<void> consumer::assign(const std::vector<topic_partition>& tps) {
  std::map<topic_partition, state> next;
  for (const auto& tp : tps) {
    BROOK_TRY_ASSIGN(const std::int32_t n, src_.partition_count(tp.topic));
    if (tp.partition.value() < 0 || tp.partition.value() >= n)
      return make_error(errc::unknown_topic_or_partition, "no partition {}-{}: the topic has {}", tp.topic,
                        tp.partition, n);
    auto it = parts_.find(tp);
    next.emplace(tp, it != parts_.end() ? it->second : state{});
  }
  parts_ = std::move(next);
  return ok();
}

BROOK_DECL std::vector<topic_partition> consumer::assignment() const {
  std::vector<topic_partition> out;
  for (const auto& [tp, _] : parts_) out.push_back(tp);
  return out;
}

BROOK_DECL result<void> consumer::seek(const topic_partition& tp, offset o) {
  auto* s = find(tp);
  if (!s) return not_assigned(tp);
  if (o.value() < 0) return make_error(errc::invalid_argument, "seek to negative offset {}", o);
  s->position = o;
  s->reset.reset();
  return ok();
}

BROOK_DECL result<void> consumer::seek_to_beginning(const std::vector<topic_partition>& tps) {
  return seek_to(tps, offset_reset::earliest);
}

BROOK_DECL bool consumer::has_position(const topic_partition& tp) const {
  auto it = parts_.find(tp);
  return it != parts_.end() && (it->second.position.has_value() || it->second.reset.has_value());
}

BROOK_DECL bool consumer::awaiting_reset(const topic_partition& tp) const {
  auto it = parts_.find(tp);
  return it != parts_.end() && it->second.reset.has_value();
}

BROOK_DECL result<offset> consumer::position(const topic_partition& tp) {
  auto* s = find(tp);
  if (!s) return not_assigned(tp);
  BROOK_TRY(ensure_position(tp, *s));
  return *s->position;
}

BROOK_DECL void consumer::pause(const std::vector<topic_partition>& tps) {
  for (const auto& tp : tps)
    if (auto* s = find(tp)) s->paused = true;
}

BROOK_DECL void consumer::resume(const std::vector<topic_partition>& tps) {
  for (const auto& tp : tps)
    if (auto* s = find(tp)) s->paused = false;
}

BROOK_DECL std::vector<topic_partition> consumer::paused() const {
  std::vector<topic_partition> out;
  for (const auto& [tp, s] : parts_)
    if (s.paused) out.push_back(tp);
  return out;
}

BROOK_DECL result<std::map<topic_partition, std::optional<timestamp_offset>>> consumer::offsets_for_times(
    const std::map<topic_partition, timestamp_ms>& query) {
  std::map<topic_partition, std::optional<timestamp_offset>> out;
  for (const auto& [tp, ts] : query) {
    BROOK_TRY_ASSIGN(out[tp], src_.offset_for_timestamp(tp, ts));
  }
  return out;
}

BROOK_DECL result<std::map<topic_partition, offset>> consumer::beginning_offsets(
    const std::vector<topic_partition>& tps) {
  return offsets_of(tps, [](const partition_bounds& b) { return b.log_start; });
}

BROOK_DECL result<std::map<topic_partition, offset>> consumer::end_offsets(const std::vector<topic_partition>& tps) {
  return offsets_of(tps, [](const partition_bounds& b) { return b.high_watermark; });
}

BROOK_DECL void consumer::wakeup() {
  wakeup_.store(true, std::memory_order_release);
  src_.notifier().notify();
}

BROOK_DECL bool consumer::watch(std::uint64_t seen, std::chrono::steady_clock::time_point end) const {
  for (unsigned looks = 1;; ++looks) {
    if (src_.notifier().sequence() != seen) return true;
    if (looks % 64 == 0 && std::chrono::steady_clock::now() >= end) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();  // spin-wait hint: yields the core's pipeline to its sibling
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

BROOK_DECL auto consumer::find(const topic_partition& tp) -> state* {
  auto it = parts_.find(tp);
  return it == parts_.end() ? nullptr : &it->second;
}

BROOK_DECL brook::error consumer::not_assigned(const topic_partition& tp) {
  return make_error(errc::invalid_argument, "{}-{} is not assigned to this consumer", tp.topic, tp.partition);
}

BROOK_DECL result<void> consumer::seek_to(const std::vector<topic_partition>& tps, offset_reset where) {
  for (const auto& tp : tps)
    if (!find(tp)) return not_assigned(tp);
  for (const auto& tp : tps) find(tp)->reset = where;
  return ok();
}

BROOK_DECL result<void> consumer::ensure_position(const topic_partition& tp, state& s, bool out_of_range) {
  if (s.position && !s.reset && !out_of_range) return ok();
  const offset_reset how = s.reset.value_or(cfg_.auto_offset_reset);
  if (how == offset_reset::none) {
    if (!out_of_range)
      return make_error(errc::offset_out_of_range, "{}-{}: no position and auto.offset.reset is none", tp.topic,
                        tp.partition);
    BROOK_TRY_ASSIGN(const partition_bounds b, src_.bounds(tp));
    return make_error(errc::offset_out_of_range, "{}-{}: position {} is outside [{}, {}] and auto.offset.reset is none",
                      tp.topic, tp.partition, *s.position, b.log_start, b.high_watermark);
  }
  BROOK_TRY_ASSIGN(const partition_bounds b, src_.bounds(tp));
  s.position = how == offset_reset::earliest ? b.log_start : b.high_watermark;
  s.reset.reset();
  return ok();
}

BROOK_DECL bool consumer::skip_for_now(const brook::error& e) {
  return is_leader_change(e) || e == errc::unknown_topic_or_partition;
}

BROOK_DECL result<log_slice> consumer::read_from_position(const topic_partition& tp, state& s, const read_options& ro) {
  BROOK_TRY(ensure_position(tp, s));
  auto slice = src_.fetch(tp, *s.position, ro);
  // Out of range: reset by policy and read again. Retention may move the log start again
  // between the reset and the read, so retry (the log start only moves forward, and
  // each reset lands on its newest value).
  for (int tries = 0; !slice && slice.error() == errc::offset_out_of_range && tries < 64; ++tries) {
    BROOK_TRY(ensure_position(tp, s, /*out_of_range=*/true));
    slice = src_.fetch(tp, *s.position, ro);
  }
  return slice;
}

BROOK_DECL result<void> consumer::fetch_into(consumer_records& out, std::size_t& bytes) {
  if (parts_.empty()) return ok();
  const std::size_t n = parts_.size();
  auto it = parts_.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(rotate_++ % n));
  batch_check check{cfg_.check_crcs, true};
  for (std::size_t k = 0; k < n; ++k, ++it) {
    if (it == parts_.end()) it = parts_.begin();
    if (out.size() >= cfg_.max_poll_records || bytes >= cfg_.fetch_max_bytes) break;
    const topic_partition& tp = it->first;
    state& s = it->second;
    if (s.paused) continue;
    read_options ro;
    ro.max_bytes = std::min(cfg_.max_partition_fetch_bytes, std::max<std::size_t>(cfg_.fetch_max_bytes - bytes, 1));
    auto slice = read_from_position(tp, s, ro);
    if (!slice && skip_for_now(slice.error())) continue;
    if (!slice) return slice.error();
    if (slice->empty()) {
      // Offsets in a hole before an empty segment: none of them exists, so move past them.
      if (slice->next_offset() > *s.position) s.position = slice->next_offset();
      continue;
    }
    const std::string* topic = out.intern(tp.topic);
    offset next = *s.position;
    const std::size_t room = cfg_.max_poll_records - out.size();
    // Room for the records the slice can hold: no more than its offsets (fewer where
    // compaction left gaps) nor than its bytes allow uncompressed (a record is 7 bytes at
    // least: length, attributes, two deltas, key and value lengths, header count).
    const auto offsets = static_cast<std::size_t>(std::max<std::int64_t>(slice->next_offset() - *s.position, 0));
    out.reserve_more(std::min({room, offsets, slice->size_bytes() / 7}));
    std::size_t taken = 0;
    BROOK_TRY(slice->for_each_record(
        [&](const record_view& v) {
          out.add(consumer_record(topic, tp.partition, v));
          next = v.offset() + 1;
          return ++taken < room;
        },
        check, &dec_));
    for (auto& buf : dec_.take_retained()) out.keep(std::move(buf));
    // Control batches and compacted gaps hold no records: move past them too.
    if (taken < room) next = std::max(next, slice->next_offset());
    bytes += slice->size_bytes();
    s.position = next;
    out.keep(std::move(*slice));
  }
  return ok();
}

}  // namespace brook

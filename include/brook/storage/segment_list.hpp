// The ordered segments of one partition log, shared between the log's writer and its
// readers. The last segment is the active one. A reader pins a segment (a shared_ptr copy)
// under a short lock and then reads its mapping without any lock; replacing or removing a
// segment never unmaps bytes a reader still holds.
//
// Invariants (asserted on every change): base offsets strictly increase along the list, and
// a list that has been filled never becomes empty again (a log keeps its active segment).
//
// Thread-safety: every member is safe to call from any thread; modify() runs its function
// under the list's lock, so readers' pins wait for it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <brook/core/adaptive_mutex.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/segment.hpp>

namespace brook {

/// One segment as partition_log::segments() describes it.
struct segment_info {
  offset base_offset;
  offset next_offset;
  std::uint64_t size_bytes;
  timestamp_ms max_timestamp;  ///< verified against the batch headers (the time index is a hint)
  std::filesystem::path path;
};

/// How many leading segments of `segs` (oldest first) hold only offsets below `o`: those
/// whose successor starts at or below `o`. Never counts the last segment.
inline std::size_t segments_below(const std::vector<std::shared_ptr<segment>>& segs, offset o) {
  std::size_t n = 0;
  while (n + 1 < segs.size() && segs[n + 1]->base_offset() <= o) ++n;
  return n;
}

class segment_list {
 public:
  using seg_ptr = std::shared_ptr<segment>;
  using vector = std::vector<seg_ptr>;

  /// A copy of the list: the segments stay alive (and mapped) while the copy lives.
  vector snapshot() const {
    std::lock_guard lk(mu_);
    return segs_;
  }
  std::size_t size() const {
    std::lock_guard lk(mu_);
    return segs_.size();
  }
  /// Bytes of whole batches in every segment.
  std::uint64_t size_bytes() const {
    std::uint64_t n = 0;
    for (const auto& s : snapshot()) n += s->size();
    return n;
  }
  /// Each segment's offsets, size, largest timestamp and path, oldest first.
  std::vector<segment_info> describe() const {
    std::vector<segment_info> out;
    for (const auto& s : snapshot()) {
      auto m = s->exact_max_timestamp();  // verified once per segment
      out.push_back({s->base_offset(), s->next_offset(), s->size(), m ? *m : s->max_timestamp(), s->log_path()});
    }
    return out;
  }
  /// The active (last) segment. REQUIRES: the list is not empty.
  seg_ptr active() const {
    std::lock_guard lk(mu_);
    BROOK_ASSERT(!segs_.empty(), "a log has no active segment");
    return segs_.back();
  }
  /// The segment that would hold offset o: the last one whose base is <= o, or the first.
  seg_ptr pin(offset o) const {
    std::lock_guard lk(mu_);
    auto it = std::upper_bound(segs_.begin(), segs_.end(), o,
                               [](offset v, const seg_ptr& s) { return v < s->base_offset(); });
    if (it == segs_.begin()) return segs_.empty() ? nullptr : segs_.front();
    return *(it - 1);
  }
  /// The first segment whose base offset is above `base`, or null.
  seg_ptr pin_after(offset base) const {
    std::lock_guard lk(mu_);
    auto it = std::upper_bound(segs_.begin(), segs_.end(), base,
                               [](offset v, const seg_ptr& s) { return v < s->base_offset(); });
    return it == segs_.end() ? nullptr : *it;
  }
  /// The index of `s` in the list, if it is still there.
  std::optional<std::size_t> find(const seg_ptr& s) const {
    std::lock_guard lk(mu_);
    for (std::size_t k = 0; k < segs_.size(); ++k)
      if (segs_[k] == s) return k;
    return std::nullopt;
  }

  /// Runs f(vector&) under the lock and checks the invariants afterwards.
  template <class F>
  decltype(auto) modify(F&& f) {
    std::lock_guard lk(mu_);
    struct check {
      segment_list& l;
      ~check() { l.assert_invariants(); }
    } c{*this};
    filled_ = filled_ || !segs_.empty();
    return std::forward<F>(f)(segs_);
  }

  void push_back(seg_ptr s) {
    modify([&](vector& v) { v.push_back(std::move(s)); });
  }
  void replace_back(seg_ptr s) {
    modify([&](vector& v) {
      BROOK_ASSERT(!v.empty(), "no active segment to replace");
      v.back() = std::move(s);
    });
  }
  void replace_at(std::size_t k, seg_ptr s) {
    modify([&](vector& v) {
      BROOK_ASSERT(k < v.size(), "segment {} of {} does not exist", k, v.size());
      v[k] = std::move(s);
    });
  }
  /// Removes the n oldest segments, never the last one, and returns them. `then(new_first)`
  /// runs under the lock afterwards (the log moves its log start there, so a reader that
  /// pins after the removal also sees the new log start).
  template <class Then = void (*)(const seg_ptr&)>
  vector pop_front(
      std::size_t n, Then&& then = [](const seg_ptr&) {}) {
    return modify([&](vector& v) {
      n = std::min(n, v.empty() ? 0 : v.size() - 1);
      vector gone(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
      v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
      if (!v.empty()) then(v.front());
      return gone;
    });
  }

 private:
  void assert_invariants() const {
    BROOK_ASSERT(!filled_ || !segs_.empty(), "a log keeps at least its active segment");
    for (std::size_t k = 1; k < segs_.size(); ++k)
      BROOK_ASSERT(segs_[k - 1]->base_offset() < segs_[k]->base_offset(),
                   "segment base offsets must increase: {} then {}", segs_[k - 1]->base_offset(),
                   segs_[k]->base_offset());
  }

  mutable adaptive_mutex mu_;
  vector segs_;
  bool filled_ = false;  // once a segment was added, the list may not become empty
};

}  // namespace brook

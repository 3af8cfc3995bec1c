// The storage shared by the offset and time indexes: fixed-size big-endian
// entries in a file that is preallocated (segment.index.bytes) and mapped
// while the segment is active, then trimmed to its entries when the segment
// is sealed or closed, as Kafka's AbstractIndex does.
//
// A writer appends entries by storing them into the mapping and publishing the
// new count with release semantics. The file is sparse; before the first store into
// a page its blocks are reserved (file_system::allocate), so a full disk is an
// ENOSPC error from prepare(), never a SIGBUS from the store; readers load the count with acquire
// semantics and only ever look at entries below it, so they never see a
// half-written entry and never touch a page past the trimmed end.
//
// An index can also live only in memory (an anonymous mapping): read-only
// opens that may not write files use that to index a live segment.
//
// Thread-safety: one writer (append/trim/reset), any number of concurrent
// readers (entries/entry_bytes).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

#include <brook/core/result.hpp>
#include <brook/storage/file.hpp>

namespace brook::detail {

class index_file {
 public:
  enum class mode {
    keep,       ///< open existing entries (file size / entry size) and make room to append
    fresh,      ///< discard the file's contents and start empty (rebuild)
    read_only,  ///< copy the existing entries into private memory; no append
    memory,     ///< no file at all: an anonymous mapping
  };

  index_file() = default;
  index_file(index_file&&) = delete;

  /// Opens or creates `path`. `capacity` is the preallocated size in bytes (rounded down to
  /// whole entries) for writable modes. In keep mode a file whose size is not a multiple of
  /// the entry size keeps its whole entries; the caller's sanity check decides what to trust.
  result<void> open(file_system& files, const fs::path& path, std::size_t entry_size, std::size_t capacity, mode m) {
    entry_size_ = entry_size;
    path_ = path;
    mode_ = m;
    std::size_t cap_entries = capacity / entry_size;
    if (m == mode::memory) {
      cap_entries = std::max<std::size_t>(cap_entries, 1);
      BROOK_TRY_ASSIGN(auto r, mapped_region::map_anonymous(cap_entries * entry_size));
      map_ = std::move(r);
      max_entries_ = cap_entries;
      count_.store(0, std::memory_order_release);
      return ok();
    }
    if (m == mode::read_only) {
      // Another process may own this file and trim it at any moment (segment roll or
      // close): mapping it could SIGBUS. Copy the used entries into private memory instead.
      BROOK_TRY_ASSIGN(auto f, file_handle::open(files, path, O_RDONLY));
      BROOK_TRY_ASSIGN(auto sz, f.size());
      std::size_t used = used_entries_by_pread(f, static_cast<std::size_t>(sz) / entry_size);
      BROOK_TRY_ASSIGN(auto r, mapped_region::map_anonymous(std::max<std::size_t>(used, 1) * entry_size));
      map_ = std::move(r);
      if (used > 0) {
        auto rd = f.pread_all({map_->data(), used * entry_size}, 0);
        if (!rd) used = 0;  // the file shrank while we read: start with no hints
      }
      max_entries_ = used;
      count_.store(used, std::memory_order_release);
      return ok();
    }
    int flags = O_RDWR | O_CREAT | (m == mode::fresh ? O_TRUNC : 0);
    BROOK_TRY_ASSIGN(auto f, file_handle::open(files, path, flags));
    BROOK_TRY_ASSIGN(auto sz, f.size());
    std::size_t existing = m == mode::fresh ? 0 : static_cast<std::size_t>(sz) / entry_size;
    cap_entries = std::max(cap_entries, existing);
    if (cap_entries * entry_size != sz) BROOK_TRY(f.truncate(cap_entries * entry_size));
    BROOK_TRY_ASSIGN(auto r, mapped_region::map_file(f, cap_entries * entry_size, true));
    // Entries are written one page at a time into a sparse file: without this, the first
    // write fault reads ahead (zero-fills) megabytes of the preallocated index.
    r->advise(MADV_RANDOM);
    // Counted with pread, not through the mapping: on tmpfs a read fault in a hole takes a
    // page, which on a full disk is a SIGBUS.
    const std::size_t used = used_entries_by_pread(f, existing);
    // The entries in use are read through the mapping: their pages must have blocks. They
    // do when they were written, but entry 0 counts as used even when all zero (it may be a
    // real one), and a hole there would fault (allocating what exists is a no-op).
    reserved_ = std::min(round_to_page(used * entry_size_), cap_entries * entry_size_);
    if (reserved_ > 0) BROOK_TRY(f.allocate(0, reserved_));
    file_ = std::move(f);
    map_ = std::move(r);
    max_entries_ = cap_entries;
    count_.store(used, std::memory_order_release);
    return ok();
  }

  std::size_t entries() const noexcept { return count_.load(std::memory_order_acquire); }
  std::size_t max_entries() const noexcept { return max_entries_; }
  bool full() const noexcept { return entries() >= max_entries_; }
  std::size_t entry_size() const noexcept { return entry_size_; }
  const fs::path& path() const noexcept { return path_; }
  /// Bytes of entry i. REQUIRES: i < entries() as loaded by the caller.
  const std::byte* entry(std::size_t i) const noexcept { return map_->data() + i * entry_size_; }

  /// Number of leading entries e (of the first n) for which at_or_below(e) holds, by binary
  /// search: entries are sorted, so that is the index just past the greatest such entry.
  template <typename Pred>
  std::size_t count_at_or_below(std::size_t n, Pred at_or_below) const {
    std::size_t lo = 0, hi = n;
    while (lo < hi) {
      std::size_t mid = lo + (hi - lo) / 2;
      if (at_or_below(mid))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  /// Space for the next entry; fill it then call commit(). Reserves the entry's blocks
  /// first (kafka_storage_error on a full disk). REQUIRES: !full(), writable.
  result<std::byte*> prepare() {
    const std::size_t at = count_.load(std::memory_order_relaxed) * entry_size_;
    if (file_.is_open() && at + entry_size_ > reserved_) {
      const std::size_t from = reserved_ > at ? reserved_ : at / page_size() * page_size();
      const std::size_t to = std::min(round_to_page(at + entry_size_), max_entries_ * entry_size_);
      BROOK_TRY(file_.allocate(from, to - from));
      reserved_ = to;
    }
    return map_->data() + at;
  }
  void commit() noexcept { count_.fetch_add(1, std::memory_order_release); }

  /// Drops entries from n on (truncation). Writer only.
  void truncate_entries(std::size_t n) noexcept {
    if (n < count_.load(std::memory_order_relaxed)) count_.store(n, std::memory_order_release);
  }

  /// Entries in use among the first n of `f`: a file that was preallocated and never trimmed
  /// (a live segment, or one after a crash) ends in all-zero slots. An all-zero entry is never
  /// a real one after entry 0, so the used prefix is found by binary search. Read with pread
  /// (holes read as zeros without taking a page); an entry that cannot be read is unused.
  std::size_t used_entries_by_pread(const file_handle& f, std::size_t n) const {
    auto zero_at = [&](std::size_t i) {
      std::byte e[16] = {};
      if (!f.pread_all({e, entry_size_}, i * entry_size_)) return true;  // shrank under us: unused
      for (std::size_t k = 0; k < entry_size_; ++k)
        if (e[k] != std::byte{0}) return false;
      return true;
    };
    if (n == 0 || !zero_at(n - 1)) return n;
    std::size_t lo = 1, hi = n - 1;  // first all-zero slot after entry 0
    while (lo < hi) {
      std::size_t mid = lo + (hi - lo) / 2;
      if (zero_at(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  }

  static std::size_t page_size() noexcept {
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
  }
  static std::size_t round_to_page(std::size_t n) noexcept { return (n + page_size() - 1) / page_size() * page_size(); }

  /// Shrinks the file to its entries and syncs it (segment sealed or closed). Readers keep
  /// working: they only read entries below the count, which stay inside the file.
  result<void> trim_and_sync() {
    if (!file_.is_open()) return ok();
    std::size_t bytes = entries() * entry_size_;
    BROOK_TRY(map_->sync(bytes));
    BROOK_TRY(file_.truncate(bytes));
    max_entries_ = entries();
    return file_.sync();
  }
  /// Syncs the entries written so far without trimming.
  result<void> sync() const {
    if (!file_.is_open()) return ok();
    return map_->sync(entries() * entry_size_);
  }

  /// The mapping, so a reader can keep it alive alongside the entry count it loaded.
  const std::shared_ptr<mapped_region>& region() const noexcept { return map_; }

 private:
  fs::path path_;
  std::size_t entry_size_ = 8;
  mode mode_ = mode::memory;
  file_handle file_;
  std::shared_ptr<mapped_region> map_;
  std::size_t max_entries_ = 0;
  std::size_t reserved_ = 0;  // bytes of the file whose blocks are known to exist
  std::atomic<std::size_t> count_{0};
};

}  // namespace brook::detail

// A file_system (storage/file_system.hpp) for tests: it passes every call to another one
// (the kernel's by default) and fails the ones a test asks for, as a full or broken disk
// would: the Nth mutating call from now, every mutating call from the Nth on, or all of them
// after kill() (a process whose I/O stopped: nothing more reaches the files).
//
//   auto files = std::make_shared<brook::testing::faulty_file_system>();
//   log_config cfg;
//   cfg.files = files;
//   files->fail_at(3, ENOSPC);   // the third write, sync, truncate, rename, ... fails
//
// A failed call does nothing: no byte of a failed pwrite is written. Reads (pread, size,
// map, kind, list, opening read-only) are counted apart and never fail.
//
// A call that does not fail costs one atomic increment over the file system it wraps.
//
// Part of the opt-in testing/ layer: the library never includes it.
// Thread-safety: thread-safe. A fail_at() racing with calls on other threads applies from
// some call around it.
#pragma once

#include <fcntl.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/storage/file_system.hpp>

namespace brook::testing {

class faulty_file_system final : public file_system {
 public:
  explicit faulty_file_system(std::shared_ptr<file_system> inner = posix_file_system::shared())
      : inner_(std::move(inner)) {}

  /// Fails the `nth` mutating call from now (1 = the next one) with errno `err`; with
  /// `sticky`, that call and every later one. Replaces an earlier fail_at.
  void fail_at(std::uint64_t nth, int err = EIO, bool sticky = false) {
    err_.store(err);
    sticky_.store(sticky);
    fail_at_.store(mutations_.load() + nth);
  }
  /// Every mutating call fails with EIO until revive(): the process's I/O stopped.
  void kill() { killed_.store(true); }
  /// Ends kill() and any fail_at.
  void revive() {
    killed_.store(false);
    fail_at_.store(0);
  }
  /// Mutating calls so far (failed ones included).
  std::uint64_t mutations() const { return mutations_.load(); }
  /// Calls that failed because of this object, each as "<call> <path>".
  std::vector<std::string> failures() const {
    std::lock_guard l(mu_);
    return failures_;
  }

  result<int> open(const fs::path& p, int flags, mode_t mode) override {
    if ((flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0) BROOK_TRY(mutate("open", p));
    return inner_->open(p, flags, mode);
  }
  result<void> pwrite(int fd, std::span<const std::byte> data, std::uint64_t pos, const fs::path& p) override {
    BROOK_TRY(mutate("pwrite", p));
    return inner_->pwrite(fd, data, pos, p);
  }
  result<void> pread(int fd, std::span<std::byte> out, std::uint64_t pos, const fs::path& p) override {
    return inner_->pread(fd, out, pos, p);
  }
  result<std::uint64_t> size(int fd, const fs::path& p) override { return inner_->size(fd, p); }
  result<void> truncate(int fd, std::uint64_t len, const fs::path& p) override {
    BROOK_TRY(mutate("ftruncate", p));
    return inner_->truncate(fd, len, p);
  }
  result<void> allocate(int fd, std::uint64_t from, std::uint64_t len, const fs::path& p) override {
    BROOK_TRY(mutate("fallocate", p));
    return inner_->allocate(fd, from, len, p);
  }
  result<void> datasync(int fd, const fs::path& p) override {
    BROOK_TRY(mutate("fdatasync", p));
    return inner_->datasync(fd, p);
  }
  result<void> sync(int fd, const fs::path& p) override {
    BROOK_TRY(mutate("fsync", p));
    return inner_->sync(fd, p);
  }
  result<bool> try_lock(int fd, const fs::path& p) override { return inner_->try_lock(fd, p); }
  result<void*> map(int fd, std::size_t length, bool writable, const fs::path& p) override {
    return inner_->map(fd, length, writable, p);
  }
  result<void> msync(void* addr, std::size_t len, const fs::path& p) override {
    BROOK_TRY(mutate("msync", p));
    return inner_->msync(addr, len, p);
  }
  result<void> copy(int in, int out, std::uint64_t len, const fs::path& from, const fs::path& to) override {
    BROOK_TRY(mutate("copy_file_range", to));
    return inner_->copy(in, out, len, from, to);
  }
  result<void> rename(const fs::path& from, const fs::path& to) override {
    BROOK_TRY(mutate("rename", to));
    return inner_->rename(from, to);
  }
  result<bool> remove(const fs::path& p) override {
    BROOK_TRY(mutate("remove", p));
    return inner_->remove(p);
  }
  result<std::uint64_t> remove_all(const fs::path& p) override {
    BROOK_TRY(mutate("remove_all", p));
    return inner_->remove_all(p);
  }
  result<void> create_directories(const fs::path& p) override {
    BROOK_TRY(mutate("create_directories", p));
    return inner_->create_directories(p);
  }
  result<file_kind> kind(const fs::path& p) override { return inner_->kind(p); }
  result<std::vector<directory_entry>> list(const fs::path& dir) override { return inner_->list(dir); }

 private:
  // Counts one mutating call; fails it when asked to.
  result<void> mutate(const char* call, const fs::path& p) {
    const std::uint64_t n = mutations_.fetch_add(1) + 1;
    const bool killed = killed_.load();
    const std::uint64_t at = fail_at_.load();
    if (!killed && (at == 0 || (n != at && !(sticky_.load() && n > at)))) return ok();
    const int err = killed ? EIO : err_.load();
    {
      std::lock_guard l(mu_);
      std::string what = call;  // built piecewise: `call + " " + ...` trips GCC 12's false -Wrestrict
      what += ' ';
      what += p.string();
      failures_.push_back(std::move(what));
    }
    return make_system_error(err, "{} {} (injected by faulty_file_system)", call, p.string());
  }

  const std::shared_ptr<file_system> inner_;
  std::atomic<std::uint64_t> mutations_{0};
  std::atomic<std::uint64_t> fail_at_{0};  // 0: none
  std::atomic<int> err_{EIO};
  std::atomic<bool> sticky_{false};
  std::atomic<bool> killed_{false};
  mutable std::mutex mu_;  // guards failures_
  std::vector<std::string> failures_;
};

}  // namespace brook::testing

// Thin RAII wrappers over the file operations the storage layer makes, through its
// file_system (file_system.hpp, the I/O seam): an owned file descriptor with full-length
// pread/pwrite, and a shared memory mapping whose lifetime is reference counted so that
// readers holding a view keep the bytes mapped even after the segment was closed, deleted or
// replaced (Linux keeps an unlinked file's pages while a mapping exists).
//
// Every failure is returned as a brook::error carrying errno in std::system_category() and
// the file's path.
//
// Lifetimes: a handle's file_system must outlive every operation on the handle; closing
// and unmapping need none, so a reader's mapping may outlive it.
//
// Thread-safety: file_handle is not synchronised, except pread/pwrite which may be called
// concurrently on distinct ranges; mapped_region is immutable after construction and may be
// shared freely between threads.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/storage/file_system.hpp>

namespace brook {

/// An owned file descriptor and the file_system its operations go through. Move-only.
class file_handle {
 public:
  file_handle() = default;
  file_handle(file_system& files, int fd, fs::path path) : files_(&files), fd_(fd), path_(std::move(path)) {}
  file_handle(file_handle&& o) noexcept : files_(o.files_), fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}
  file_handle& operator=(file_handle&& o) noexcept {
    if (this != &o) {
      reset();
      files_ = o.files_;
      fd_ = std::exchange(o.fd_, -1);
      path_ = std::move(o.path_);
    }
    return *this;
  }
  file_handle(const file_handle&) = delete;
  file_handle& operator=(const file_handle&) = delete;
  ~file_handle() { reset(); }

  /// Opens (flags as for open(2)) through `files`; O_CLOEXEC is always added.
  static result<file_handle> open(file_system& files, const fs::path& p, int flags, mode_t mode = 0644) {
    BROOK_TRY_ASSIGN(const int fd, files.open(p, flags, mode));
    return file_handle(files, fd, p);
  }

  int fd() const noexcept { return fd_; }
  const fs::path& path() const noexcept { return path_; }
  bool is_open() const noexcept { return fd_ >= 0; }
  /// REQUIRES (for the operations below): is_open().
  file_system& files() const noexcept {
    BROOK_ASSERT(files_ != nullptr, "file_handle used before open");
    return *files_;
  }

  result<std::uint64_t> size() const { return files().size(fd_, path_); }
  /// Writes all of `data` at `pos`.
  result<void> pwrite_all(std::span<const std::byte> data, std::uint64_t pos) const {
    return files().pwrite(fd_, data, pos, path_);
  }
  /// Reads exactly out.size() bytes at pos; a short file is kafka_storage_error.
  result<void> pread_all(std::span<std::byte> out, std::uint64_t pos) const {
    return files().pread(fd_, out, pos, path_);
  }
  result<void> truncate(std::uint64_t len) const { return files().truncate(fd_, len, path_); }
  /// Reserves the blocks of [from, from + len) (file_system::allocate).
  result<void> allocate(std::uint64_t from, std::uint64_t len) const { return files().allocate(fd_, from, len, path_); }
  /// fdatasync(2): data and the metadata needed to read it back are durable.
  result<void> datasync() const { return files().datasync(fd_, path_); }
  result<void> sync() const { return files().sync(fd_, path_); }
  /// flock(LOCK_EX | LOCK_NB); false when another holds it.
  result<bool> try_lock() const { return files().try_lock(fd_, path_); }

  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  file_system* files_ = nullptr;
  int fd_ = -1;
  fs::path path_;
};

/// The whole of a small text file (a checkpoint, topic-configs). Errors: the file system's;
/// kafka_storage_error when it is larger than `max_bytes`.
inline result<std::string> read_small_file(file_system& files, const fs::path& p,
                                           std::uint64_t max_bytes = std::uint64_t{64} << 20) {
  // Only a regular file: a FIFO would block the open, a directory has no text. O_NONBLOCK
  // keeps a FIFO swapped in after the check from blocking too.
  BROOK_TRY_ASSIGN(const file_kind kind, files.kind(p));
  if (kind != file_kind::regular && kind != file_kind::none)
    return make_error(errc::kafka_storage_error, "{}: not a regular file", p.string());
  BROOK_TRY_ASSIGN(file_handle f, file_handle::open(files, p, O_RDONLY | O_NONBLOCK));
  BROOK_TRY_ASSIGN(const std::uint64_t size, f.size());
  if (size > max_bytes)
    return make_error(errc::kafka_storage_error, "{}: {} bytes, more than the {} a checkpoint may have", p.string(),
                      size, max_bytes);
  std::string text(static_cast<std::size_t>(size), '\0');
  BROOK_TRY(f.pread_all(std::as_writable_bytes(std::span(text)), 0));
  return text;
}

/// Atomically replaces `p` with `text`: written to `<p>.tmp`, fsync'd, renamed over `p`, and
/// the directory fsync'd, so a crash leaves the old file or the new one, never a torn one.
inline result<void> replace_file(file_system& files, const fs::path& p, std::string_view text) {
  fs::path tmp = p;
  tmp += ".tmp";
  {
    BROOK_TRY_ASSIGN(file_handle f, file_handle::open(files, tmp, O_WRONLY | O_CREAT | O_TRUNC));
    BROOK_TRY(f.pwrite_all(std::as_bytes(std::span(text.data(), text.size())), 0));
    BROOK_TRY(f.sync());
  }
  BROOK_TRY(files.rename(tmp, p));
  return files.sync_directory(p.parent_path());
}

/// A read-only or read-write shared mapping of [0, length) of a file, or an anonymous
/// mapping. Unmapped when the last shared_ptr to it goes.
class mapped_region {
 public:
  mapped_region(const mapped_region&) = delete;
  mapped_region& operator=(const mapped_region&) = delete;
  ~mapped_region() {
    if (addr_ != nullptr && len_ > 0) ::munmap(addr_, len_);
  }

  /// Maps `length` bytes of fd (may exceed the file's size: touching pages wholly past
  /// the end of the file raises SIGBUS, so callers read only what they know exists).
  static result<std::shared_ptr<mapped_region>> map_file(const file_handle& f, std::size_t length, bool writable) {
    if (length == 0) return std::shared_ptr<mapped_region>(new mapped_region(nullptr, 0));
    BROOK_TRY_ASSIGN(void* a, f.files().map(f.fd(), length, writable, f.path()));
    return std::shared_ptr<mapped_region>(new mapped_region(a, length, &f.files(), f.path()));
  }
  /// Private zero-filled memory (used where an index lives only in memory).
  static result<std::shared_ptr<mapped_region>> map_anonymous(std::size_t length) {
    if (length == 0) return std::shared_ptr<mapped_region>(new mapped_region(nullptr, 0));
    void* a = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a == MAP_FAILED) return make_system_error(errno, "mmap anonymous ({} bytes)", length);
    return std::shared_ptr<mapped_region>(new mapped_region(a, length));
  }

  std::byte* data() const noexcept { return static_cast<std::byte*>(addr_); }
  std::size_t size() const noexcept { return len_; }
  /// madvise(2) hint for the whole region; failures are ignored (it is only a hint).
  void advise(int advice) const noexcept {
    if (addr_ != nullptr && len_ > 0) (void)::madvise(addr_, len_, advice);
  }

  /// msync(MS_SYNC) of [0, len), through the file_system that mapped it (an anonymous
  /// mapping has nothing to sync). REQUIRES: that file_system is alive.
  result<void> sync(std::size_t len) const {
    if (addr_ == nullptr || len == 0 || files_ == nullptr) return ok();
    return files_->msync(addr_, std::min(len, len_), path_);
  }

 private:
  mapped_region(void* a, std::size_t n, file_system* files = nullptr, fs::path path = {})
      : addr_(a), len_(n), files_(files), path_(std::move(path)) {}
  void* addr_;
  std::size_t len_;
  file_system* files_;  // null for anonymous mappings
  fs::path path_;
};

inline std::size_t page_size() noexcept {
  static const std::size_t ps = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return ps;
}
inline std::size_t round_up_to_page(std::size_t n) noexcept {
  std::size_t ps = page_size();
  return (n + ps - 1) / ps * ps;
}

}  // namespace brook

// Thin RAII wrappers over the POSIX calls the storage layer makes: an owned
// file descriptor with full-length pread/pwrite loops, and a shared memory
// mapping whose lifetime is reference counted so that readers holding a view
// keep the bytes mapped even after the segment was closed, deleted or
// replaced (Linux keeps an unlinked file's pages while a mapping exists).
//
// Every failure is returned as a brook::error carrying errno in
// std::system_category() and the file's path.
//
// Thread-safety: file_handle is not synchronised, except pread/pwrite which may
// be called concurrently on distinct ranges; mapped_region is immutable after
// construction and may be shared freely between threads.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include <brook/core/result.hpp>

namespace brook {

namespace fs = std::filesystem;

/// An owned file descriptor. Move-only.
class file_handle {
 public:
  file_handle() = default;
  file_handle(int fd, fs::path path) : fd_(fd), path_(std::move(path)) {}
  file_handle(file_handle&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}
  file_handle& operator=(file_handle&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
      path_ = std::move(o.path_);
    }
    return *this;
  }
  file_handle(const file_handle&) = delete;
  file_handle& operator=(const file_handle&) = delete;
  ~file_handle() { reset(); }

  /// Opens (flags as for open(2)); O_CLOEXEC is always added.
  static result<file_handle> open(const fs::path& p, int flags, mode_t mode = 0644) {
    int fd;
    do {
      fd = ::open(p.c_str(), flags | O_CLOEXEC, mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return make_system_error(errno, "open {}", p.string());
    return file_handle(fd, p);
  }

  int fd() const noexcept { return fd_; }
  const fs::path& path() const noexcept { return path_; }
  bool is_open() const noexcept { return fd_ >= 0; }

  result<std::uint64_t> size() const {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return make_system_error(errno, "fstat {}", path_.string());
    return static_cast<std::uint64_t>(st.st_size);
  }

  /// Writes all of `data` at `pos`, retrying short writes and EINTR.
  result<void> pwrite_all(std::span<const std::byte> data, std::uint64_t pos) const {
    const std::byte* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
      ssize_t n = ::pwrite(fd_, p, left, static_cast<off_t>(pos));
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_system_error(errno, "pwrite {} at byte {}", path_.string(), pos);
      }
      p += n;
      pos += static_cast<std::uint64_t>(n);
      left -= static_cast<std::size_t>(n);
    }
    return ok();
  }

  /// Reads exactly out.size() bytes at pos; a short file is kafka_storage_error.
  result<void> pread_all(std::span<std::byte> out, std::uint64_t pos) const {
    std::byte* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      ssize_t n = ::pread(fd_, p, left, static_cast<off_t>(pos));
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_system_error(errno, "pread {} at byte {}", path_.string(), pos);
      }
      if (n == 0)
        return make_error(errc::kafka_storage_error, "{}: unexpected end of file at byte {}", path_.string(), pos);
      p += n;
      pos += static_cast<std::uint64_t>(n);
      left -= static_cast<std::size_t>(n);
    }
    return ok();
  }

  result<void> truncate(std::uint64_t len) const {
    if (::ftruncate(fd_, static_cast<off_t>(len)) != 0)
      return make_system_error(errno, "ftruncate {} to {} bytes", path_.string(), len);
    return ok();
  }

  /// fdatasync(2): data and the metadata needed to read it back are durable.
  result<void> datasync() const {
    if (::fdatasync(fd_) != 0) return make_system_error(errno, "fdatasync {}", path_.string());
    return ok();
  }
  result<void> sync() const {
    if (::fsync(fd_) != 0) return make_system_error(errno, "fsync {}", path_.string());
    return ok();
  }

  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  fs::path path_;
};

/// fsyncs a directory so that names created, renamed or removed in it are durable.
inline result<void> sync_directory(const fs::path& dir) {
  auto h = file_handle::open(dir, O_RDONLY | O_DIRECTORY);
  if (!h) return h.error();
  return h->sync();
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
    int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    void* a = ::mmap(nullptr, length, prot, MAP_SHARED, f.fd(), 0);
    if (a == MAP_FAILED) return make_system_error(errno, "mmap {} ({} bytes)", f.path().string(), length);
    return std::shared_ptr<mapped_region>(new mapped_region(a, length));
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

  /// msync(MS_SYNC) of [0, len).
  result<void> sync(std::size_t len) const {
    if (addr_ == nullptr || len == 0) return ok();
    if (::msync(addr_, std::min(len, len_), MS_SYNC) != 0) return make_system_error(errno, "msync");
    return ok();
  }

 private:
  mapped_region(void* a, std::size_t n) : addr_(a), len_(n) {}
  void* addr_;
  std::size_t len_;
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

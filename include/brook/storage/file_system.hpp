// The I/O seam: every file operation the storage layer makes that can fail goes through a
// file_system, so a host can watch or redirect it and a test can fail any of them
// (brook/testing/faulty_file_system.hpp injects ENOSPC and EIO at the Nth call, or kills a
// process's I/O to model a crash).
//
// The seam is POSIX-shaped on purpose: descriptors are the kernel's, so an implementation
// wraps the real calls (checks, counts, refuses) rather than emulating files. What needs no
// seam stays direct: close(2) and munmap(2) (they cannot fail in a way brook acts on), reads
// through a mapping, and sendfile(2) from a mapped segment to a socket.
//
// Every error is a brook::error carrying errno in std::system_category() (ENOSPC, EIO, ...)
// and the operation and path in its message; errors brook detects itself (a short file)
// are errc::kafka_storage_error.
//
// Where a file_system comes from: log_config::files (every partition log and its segments,
// indexes, checkpoints and cleaner files) and data_dir_options::defaults.files (the data
// directory's own files and lock). Null means posix_file_system::shared().
//
// Thread-safety: implementations must be thread-safe; posix_file_system is stateless.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <system_error>
#include <vector>

#include <brook/core/result.hpp>

namespace brook {

namespace fs = std::filesystem;

/// What a name is (symbolic links followed): none when it does not exist.
enum class file_kind { none, regular, directory, other };

/// One name in a directory listing.
struct directory_entry {
  fs::path path;
  file_kind kind = file_kind::none;
};

class file_system {
 public:
  virtual ~file_system() = default;

  // --- on descriptors ---
  /// open(2); O_CLOEXEC is added. Returns the descriptor, which the caller closes with close(2).
  virtual result<int> open(const fs::path& p, int flags, mode_t mode) = 0;
  /// Writes all of `data` at `pos` (short writes and EINTR retried).
  virtual result<void> pwrite(int fd, std::span<const std::byte> data, std::uint64_t pos, const fs::path& p) = 0;
  /// Reads exactly out.size() bytes at `pos`; a short file is kafka_storage_error.
  virtual result<void> pread(int fd, std::span<std::byte> out, std::uint64_t pos, const fs::path& p) = 0;
  virtual result<std::uint64_t> size(int fd, const fs::path& p) = 0;
  /// ftruncate(2).
  virtual result<void> truncate(int fd, std::uint64_t len, const fs::path& p) = 0;
  /// posix_fallocate(3): reserves the blocks of [from, from + len), so that storing into a
  /// shared mapping of them cannot fault for want of space (SIGBUS on a full disk).
  virtual result<void> allocate(int fd, std::uint64_t from, std::uint64_t len, const fs::path& p) = 0;
  /// fdatasync(2): the data and the metadata needed to read it back are durable.
  virtual result<void> datasync(int fd, const fs::path& p) = 0;
  /// fsync(2).
  virtual result<void> sync(int fd, const fs::path& p) = 0;
  /// flock(LOCK_EX | LOCK_NB): false when another open file description holds the lock.
  virtual result<bool> try_lock(int fd, const fs::path& p) = 0;
  /// A MAP_SHARED mapping of [0, length) of fd; the caller unmaps it with munmap(2).
  virtual result<void*> map(int fd, std::size_t length, bool writable, const fs::path& p) = 0;
  /// msync(MS_SYNC) of [addr, addr + len) of a mapping of `p`.
  virtual result<void> msync(void* addr, std::size_t len, const fs::path& p) = 0;
  /// Copies `len` bytes from the start of `in` to the start of `out` (copy_file_range(2)).
  virtual result<void> copy(int in, int out, std::uint64_t len, const fs::path& from, const fs::path& to) = 0;

  // --- on names ---
  /// rename(2): atomically replaces `to`.
  virtual result<void> rename(const fs::path& from, const fs::path& to) = 0;
  /// Removes a file or an empty directory; false when it did not exist.
  virtual result<bool> remove(const fs::path& p) = 0;
  /// Removes a tree; returns how many names went.
  virtual result<std::uint64_t> remove_all(const fs::path& p) = 0;
  virtual result<void> create_directories(const fs::path& p) = 0;
  virtual result<file_kind> kind(const fs::path& p) = 0;
  /// The names in `dir`, in no particular order.
  virtual result<std::vector<directory_entry>> list(const fs::path& dir) = 0;

  /// fsyncs a directory so that names created, renamed or removed in it are durable.
  result<void> sync_directory(const fs::path& dir) {
    BROOK_TRY_ASSIGN(const int fd, open(dir, O_RDONLY | O_DIRECTORY, 0));
    auto r = sync(fd, dir);
    ::close(fd);
    return r;
  }
  /// True when `p` exists; an error (permission, a loop of links) is not "missing".
  result<bool> exists(const fs::path& p) {
    BROOK_TRY_ASSIGN(const file_kind k, kind(p));
    return k != file_kind::none;
  }
};

/// The kernel's file system, through the POSIX calls. Thread-safe (stateless).
class posix_file_system final : public file_system {
 public:
  /// The process-wide instance every default configuration uses.
  static const std::shared_ptr<file_system>& shared() {
    static const std::shared_ptr<file_system> fs = std::make_shared<posix_file_system>();
    return fs;
  }

  result<int> open(const fs::path& p, int flags, mode_t mode) override {
    int fd;
    do {
      fd = ::open(p.c_str(), flags | O_CLOEXEC, mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return make_system_error(errno, "open {}", p.string());
    return fd;
  }

  result<void> pwrite(int fd, std::span<const std::byte> data, std::uint64_t pos, const fs::path& p) override {
    const std::byte* at = data.data();
    std::size_t left = data.size();
    while (left > 0) {
      const ssize_t n = ::pwrite(fd, at, left, static_cast<off_t>(pos));
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_system_error(errno, "pwrite {} at byte {}", p.string(), pos);
      }
      at += n;
      pos += static_cast<std::uint64_t>(n);
      left -= static_cast<std::size_t>(n);
    }
    return ok();
  }

  result<void> pread(int fd, std::span<std::byte> out, std::uint64_t pos, const fs::path& p) override {
    std::byte* at = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      const ssize_t n = ::pread(fd, at, left, static_cast<off_t>(pos));
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_system_error(errno, "pread {} at byte {}", p.string(), pos);
      }
      if (n == 0)
        return make_error(errc::kafka_storage_error, "{}: unexpected end of file at byte {}", p.string(), pos);
      at += n;
      pos += static_cast<std::uint64_t>(n);
      left -= static_cast<std::size_t>(n);
    }
    return ok();
  }

  result<std::uint64_t> size(int fd, const fs::path& p) override {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return make_system_error(errno, "fstat {}", p.string());
    return static_cast<std::uint64_t>(st.st_size);
  }

  result<void> truncate(int fd, std::uint64_t len, const fs::path& p) override {
    if (::ftruncate(fd, static_cast<off_t>(len)) != 0)
      return make_system_error(errno, "ftruncate {} to {} bytes", p.string(), len);
    return ok();
  }

  result<void> allocate(int fd, std::uint64_t from, std::uint64_t len, const fs::path& p) override {
    const int e = ::posix_fallocate(fd, static_cast<off_t>(from), static_cast<off_t>(len));
    if (e != 0) return make_system_error(e, "allocate {} bytes at {} of {}", len, from, p.string());
    return ok();
  }

  result<void> datasync(int fd, const fs::path& p) override {
    if (::fdatasync(fd) != 0) return make_system_error(errno, "fdatasync {}", p.string());
    return ok();
  }

  result<void> sync(int fd, const fs::path& p) override {
    if (::fsync(fd) != 0) return make_system_error(errno, "fsync {}", p.string());
    return ok();
  }

  result<bool> try_lock(int fd, const fs::path& p) override {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EWOULDBLOCK) return false;
    return make_system_error(errno, "flock {}", p.string());
  }

  result<void*> map(int fd, std::size_t length, bool writable, const fs::path& p) override {
    const int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    void* a = ::mmap(nullptr, length, prot, MAP_SHARED, fd, 0);
    if (a == MAP_FAILED) return make_system_error(errno, "mmap {} ({} bytes)", p.string(), length);
    return a;
  }

  result<void> msync(void* addr, std::size_t len, const fs::path& p) override {
    if (::msync(addr, len, MS_SYNC) != 0) return make_system_error(errno, "msync {}", p.string());
    return ok();
  }

  result<void> copy(int in, int out, std::uint64_t len, const fs::path& from, const fs::path& to) override {
    loff_t ioff = 0, ooff = 0;
    for (std::uint64_t left = len; left > 0;) {
      const ssize_t n = ::copy_file_range(in, &ioff, out, &ooff, static_cast<std::size_t>(left), 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_system_error(errno, "copy_file_range {} -> {}", from.string(), to.string());
      }
      if (n == 0) return make_error(errc::kafka_storage_error, "{}: shorter than {} bytes", from.string(), len);
      left -= static_cast<std::uint64_t>(n);
    }
    return ok();
  }

  result<void> rename(const fs::path& from, const fs::path& to) override {
    std::error_code ec;
    fs::rename(from, to, ec);
    if (ec) return error(ec, fmt::format("rename {} to {}", from.string(), to.string()));
    return ok();
  }

  result<bool> remove(const fs::path& p) override {
    std::error_code ec;
    const bool removed = fs::remove(p, ec);
    if (ec) return error(ec, fmt::format("remove {}", p.string()));
    return removed;
  }

  result<std::uint64_t> remove_all(const fs::path& p) override {
    std::error_code ec;
    const auto n = fs::remove_all(p, ec);
    if (ec) return error(ec, fmt::format("remove {}", p.string()));
    return static_cast<std::uint64_t>(n);
  }

  result<void> create_directories(const fs::path& p) override {
    std::error_code ec;
    fs::create_directories(p, ec);
    if (ec) return error(ec, fmt::format("create directory {}", p.string()));
    return ok();
  }

  result<file_kind> kind(const fs::path& p) override {
    std::error_code ec;
    const auto st = fs::status(p, ec);
    if (st.type() == fs::file_type::not_found) return file_kind::none;
    if (ec) return error(ec, fmt::format("stat {}", p.string()));
    return to_kind(st.type());
  }

  result<std::vector<directory_entry>> list(const fs::path& dir) override {
    std::vector<directory_entry> out;
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code sec;
      const auto st = it->status(sec);  // follows links; a dangling or looping one is "other"
      out.push_back({it->path(), sec ? file_kind::other : to_kind(st.type())});
    }
    if (ec) return error(ec, fmt::format("list {}", dir.string()));
    return out;
  }

 private:
  static file_kind to_kind(fs::file_type t) noexcept {
    switch (t) {
      case fs::file_type::not_found: return file_kind::none;
      case fs::file_type::regular: return file_kind::regular;
      case fs::file_type::directory: return file_kind::directory;
      default: return file_kind::other;
    }
  }
};

/// `files`, or the POSIX file system when it is null.
inline file_system& files_or_posix(const std::shared_ptr<file_system>& files) {
  return files ? *files : *posix_file_system::shared();
}

}  // namespace brook

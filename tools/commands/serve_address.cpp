#include "commands/serve_address.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace brook::cli {

namespace {

/// Longest line a reader accepts: a host name (at most 253) and ":65535".
constexpr std::size_t max_address_bytes = 260;

/// HOST:PORT as serve writes it: a host name, an IPv4 address or a bracketed IPv6 one.
bool looks_like_address(std::string_view a) {
  const auto colon = a.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == a.size()) return false;
  if (a.find_first_not_of("0123456789", colon + 1) != std::string_view::npos) return false;
  return a.substr(0, colon).find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") ==
         std::string_view::npos;
}

}  // namespace

result<serve_address> serve_address::publish(const std::filesystem::path& dir, std::string_view address) {
  const std::filesystem::path p = dir / serve_address_file;
  const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return make_system_error(errno, "open {}", p.string());
  serve_address out(p, fd);
  // Blocking: a reader holds its shared lock only for a moment.
  int r;
  while ((r = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (r != 0) return make_system_error(errno, "flock {}", p.string());
  const std::string line = fmt::format("{}\n", address);
  if (::ftruncate(fd, 0) != 0) return make_system_error(errno, "truncate {}", p.string());
  if (::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
    return make_system_error(errno, "write {}", p.string());
  return out;
}

serve_address::~serve_address() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // still locked: no reader sees a file whose lock is free
  ::close(fd_);
}

std::optional<std::string> running_serve_address(const std::filesystem::path& dir) {
  const std::filesystem::path p = dir / serve_address_file;
  // O_NONBLOCK: a FIFO planted under the name must not block the open.
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    char buf[max_address_bytes + 1];
    const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
    std::string_view text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    if (const auto nl = text.find('\n'); nl != std::string_view::npos && looks_like_address(text.substr(0, nl)))
      out = std::string(text.substr(0, nl));
  }
  ::close(fd);  // also drops a shared lock taken on a stale file
  return out;
}

brook::error with_serve_hint(brook::error e, const std::filesystem::path& dir) {
  if (e != errc::log_dir_locked) return e;
  const auto address = running_serve_address(dir);
  if (!address) return e;
  return brook::error(e.code(), fmt::format("{}; it is held by `brook serve`, a Kafka broker listening on {}: use a "
                                            "Kafka client instead, e.g. `kcat -b {} -L`",
                                            e.message(), *address, *address));
}

brook::error with_partition_serve_hint(brook::error e, const std::filesystem::path& partition_dir) {
  std::filesystem::path p = partition_dir.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "orders-0/"
  return with_serve_hint(std::move(e), p.parent_path());
}

}  // namespace brook::cli

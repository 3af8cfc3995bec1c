// Who holds the flock(2) on a file: for the message when a writable open finds its
// directory locked. A second open in the same process (or through a symlinked alias of the
// same directory) is told that, instead of blaming "another process".
//
// Linux: /proc/locks lists each lock as "<n>: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> ...".
// Elsewhere, or when /proc is not mounted, the holder is unknown.
//
// Thread-safety: a pure function of the descriptor and /proc/locks.
#pragma once

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

namespace brook::detail {

/// The process holding a FLOCK lock on the file `fd` refers to, if /proc/locks names one.
inline std::optional<pid_t> flock_holder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  std::FILE* f = std::fopen("/proc/locks", "re");
  if (f == nullptr) return std::nullopt;
  std::optional<pid_t> out;
  char line[512];
  while (!out && std::fgets(line, sizeof line, f) != nullptr) {
    char kind[16] = {}, mode[16] = {}, access[16] = {};
    long pid = 0;
    unsigned maj = 0, min = 0;
    unsigned long long ino = 0;
    if (std::sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%llu", kind, mode, access, &pid, &maj, &min, &ino) != 7)
      continue;
    if (std::string(kind) == "FLOCK" && maj == ::major(st.st_dev) && min == ::minor(st.st_dev) && ino == st.st_ino)
      out = static_cast<pid_t>(pid);
  }
  std::fclose(f);
  return out;
}

/// "this process" when the caller's process holds the lock on `fd`'s file, "process N" for
/// another one, "another process" when unknown.
inline std::string flock_holder_name(int fd) {
  const auto pid = flock_holder(fd);
  if (!pid) return "another process";
  if (*pid == ::getpid()) return "this process";
  return "process " + std::to_string(*pid);
}

}  // namespace brook::detail

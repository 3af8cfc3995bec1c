// The address a running `brook serve` leaves in its data directory, so that the other
// commands, refused with LOG_DIR_LOCKED, can say where the broker is and how to reach it.
//
// The file is DIR/.brook-serve, one line: the advertised "HOST:PORT" and a newline. serve
// creates it after it listens and holds an exclusive flock on it for as long as it runs; a
// clean stop removes it. A file whose lock nobody holds is left over from a serve that
// died (kill -9, a crash): readers ignore it, so a stale address is never shown. The data
// directory ignores files at its top level, so the file is invisible to the library.
//
// Thread-safety: the tool's main thread only; values and functions over the file system.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <brook/core/result.hpp>

namespace brook::cli {

/// The file's name inside the data directory.
inline constexpr std::string_view serve_address_file = ".brook-serve";

/// The file while serve runs: created, locked and written by publish(), removed (while
/// still locked) by the destructor.
class serve_address {
 public:
  /// Writes "HOST:PORT\n" to DIR/.brook-serve under an exclusive lock. REQUIRES: the
  /// caller holds the data directory's lock, so no other serve writes the file.
  /// Errors: the OS's (kafka_storage_error).
  static result<serve_address> publish(const std::filesystem::path& dir, std::string_view address);

  serve_address(serve_address&& o) noexcept : path_(std::move(o.path_)), fd_(std::exchange(o.fd_, -1)) {}
  serve_address& operator=(serve_address&&) = delete;
  serve_address(const serve_address&) = delete;
  ~serve_address();

 private:
  serve_address(std::filesystem::path p, int fd) : path_(std::move(p)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_ = -1;
};

/// The address a running serve advertises for data directory `dir`: the file's line when
/// the file exists, its lock is held by a running process and the line looks like
/// HOST:PORT; nullopt otherwise (no serve, a stale file, junk).
std::optional<std::string> running_serve_address(const std::filesystem::path& dir);

/// `e` unchanged unless it is LOG_DIR_LOCKED and a serve runs on `dir`; then the message
/// says so and suggests a Kafka client: "...; it is held by `brook serve`, a Kafka broker
/// listening on H:P: use a Kafka client instead, e.g. `kcat -b H:P -L`". Every command that
/// opens a data directory (or a partition directory in one: pass the data directory)
/// passes its LOG_DIR_LOCKED errors through this one place.
brook::error with_serve_hint(brook::error e, const std::filesystem::path& dir);
/// with_serve_hint for a partition directory (`produce DIR`, `verify DIR --repair`): the
/// data directory it may belong to is its parent.
brook::error with_partition_serve_hint(brook::error e, const std::filesystem::path& partition_dir);

}  // namespace brook::cli

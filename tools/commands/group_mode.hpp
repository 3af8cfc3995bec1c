// What the group commands (`groups`, `consume --group`) share: whether a running process
// owns a data directory, the groups as its internal topic __consumer_offsets stores them
// (read without the lock, so it works next to that process), and aligned tables.
//
// The group coordinator lives in the process that has the directory open for writing, so
// only that process knows a group's live members. Another process can see only what the
// coordinator last stored (group metadata is stored when a rebalance completes and when
// the group becomes empty), and whether the directory is owned at all: an idle directory
// has no active members in any group.
//
// Thread-safety: the tool is single-threaded; values and functions over the file system.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/group/offset_store.hpp>
#include <brook/storage/data_dir.hpp>

namespace brook::cli {

/// Whether a process has `dir` open for writing, i.e. holds the exclusive flock on
/// <dir>/.lock, found without touching the lock: /proc/locks lists every flock with the
/// device and inode of its file. Taking the lock to test it, even shared and for a moment,
/// would make a process that opens the directory at that moment fail with LOG_DIR_LOCKED.
/// Only where /proc/locks cannot be read does it fall back to such a momentary
/// flock(LOCK_SH | LOCK_NB) probe. A directory without a .lock was never opened for writing.
result<bool> dir_in_use(const fs::path& dir);

/// The groups of a data directory as stored, read through a read-only data_dir.
struct stored_groups {
  std::unique_ptr<data_dir> dd;  ///< read-only, for log end offsets
  std::map<std::string, stored_group> groups;
  bool in_use = false;  ///< a running process owns the directory (and the groups' live state)
};

/// Checks whether `dir` is in use, then opens it read-only and replays its
/// __consumer_offsets (an absent internal topic: no groups).
result<stored_groups> load_stored_groups(const fs::path& dir);

/// What the stored metadata of a group means for a tool outside the owning process.
struct group_view {
  std::string state;              ///< Kafka's state name: "Stable" or "Empty"
  bool has_members = false;       ///< members are shown as the group's (state Stable)
  std::size_t stale_members = 0;  ///< stored members of a process that no longer runs
};
group_view view_of(const stored_group& g, bool dir_in_use);

/// Rows (the first is the heading) as left-aligned columns two spaces apart, trailing
/// spaces trimmed, one line each.
std::string table_text(const std::vector<std::vector<std::string>>& rows);

/// Kafka's "YYYY-MM-DDTHH:mm:SS.sss" (the ".sss" may be left out) with an optional time
/// zone "Z", "+hh:mm" or "-hh:mm" (none: UTC), as milliseconds since the Unix epoch.
/// nullopt when the text does not match or is not a valid date and time.
std::optional<std::int64_t> parse_datetime(std::string_view text);

}  // namespace brook::cli

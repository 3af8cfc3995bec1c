// What the topic forms of the commands (`topics`, `produce --data-dir`, `consume
// --data-dir`) share: opening a data directory for writing or read-only with errors that
// say what to do, and a cheap fingerprint of a topic's files for `consume --follow`.
//
// Thread-safety: the tool is single-threaded; these are pure functions over the file system.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/storage/data_dir.hpp>

namespace brook::cli {

/// Opens the data directory `dir`, which must exist (LOG_DIR_NOT_FOUND otherwise: the tool
/// never creates one by accident, except `topics --create` with `create = true`).
/// Writable opens take the directory's lock and fail with LOG_DIR_LOCKED while another
/// process holds it; read-only opens take no lock and write nothing.
result<std::unique_ptr<data_dir>> open_data_dir(const fs::path& dir, bool read_only, bool create = false);
/// How every command that wrote a data directory ends: one housekeeping pass (retention,
/// segment.ms, flush.ms, the cleaner; data_dir::tick) so topic settings such as retention.ms
/// take effect without a long-running process, then a clean close. The first error wins.
result<void> housekeep_and_close(data_dir& dd);

/// The topic's partition count, with an error naming the data directory for an invalid
/// (INVALID_TOPIC_EXCEPTION) or unknown (UNKNOWN_TOPIC_OR_PARTITION) topic.
result<std::int32_t> topic_partitions(const data_dir& dd, const std::string& topic);

/// Names and sizes of the .log files of every partition directory of `topic`, and the size
/// and modification time of the topic-configs file. A change means new records, a roll,
/// retention, or a topic change: a reason to re-open a read-only data_dir.
std::vector<std::pair<std::string, std::uintmax_t>> topic_fingerprint(const fs::path& dir, const std::string& topic);

}  // namespace brook::cli

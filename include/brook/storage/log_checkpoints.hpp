// The three checkpoint files a partition log keeps in its own directory, each with one
// `topic partition offset` entry in Kafka's text format (checkpoint_file.hpp):
//
//   recovery-point-offset-checkpoint   everything below it was flushed: recovery starts there
//   log-start-offset-checkpoint        the log start offset (retention, DeleteRecords)
//   cleaner-offset-checkpoint          the cleaner's first dirty offset (log_cleaner.hpp)
//
// The topic and partition in an entry come from the directory name (`<topic>-<partition>`).
// A value already on disk is not written again, so opening and closing an idle log costs no
// fsync. -1 stands for "no checkpoint file".
//
// Thread-safety: none; the owning partition_log serialises every call (its writer mutex).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/checkpoint_file.hpp>
#include <brook/storage/partition_files.hpp>

namespace brook {

class log_checkpoints {
 public:
  /// `files` must outlive this object.
  log_checkpoints(std::filesystem::path dir, file_system& files) : dir_(std::move(dir)), files_(files) {}

  /// Reads the three files; a missing file leaves its value unset.
  result<void> load() {
    BROOK_TRY_ASSIGN(recovery_point_, read_one(partition_files::recovery_point_checkpoint));
    BROOK_TRY_ASSIGN(log_start_, read_one(partition_files::log_start_checkpoint));
    BROOK_TRY_ASSIGN(cleaner_, read_one(partition_files::cleaner_offset_checkpoint));
    return ok();
  }

  /// The values on disk (as loaded or last written).
  std::optional<offset> recovery_point() const noexcept { return recovery_point_; }
  std::optional<offset> log_start() const noexcept { return log_start_; }
  std::optional<offset> cleaner_offset() const noexcept { return cleaner_; }

  result<void> write_recovery_point(offset v) {
    return write_if_changed(partition_files::recovery_point_checkpoint, recovery_point_, v);
  }
  result<void> write_log_start(offset v) {
    return write_if_changed(partition_files::log_start_checkpoint, log_start_, v);
  }
  result<void> write_cleaner_offset(offset v) {
    return write_if_changed(partition_files::cleaner_offset_checkpoint, cleaner_, v);
  }

  /// `<topic>-<partition>` from a directory name; a name without a numeric suffix is taken
  /// whole as the topic, partition 0.
  static std::pair<std::string, std::int32_t> topic_partition_of(const std::filesystem::path& dir) {
    std::string name = dir.filename().string();
    if (name.empty()) name = dir.parent_path().filename().string();
    auto dash = name.rfind('-');
    if (dash != std::string::npos && dash + 1 < name.size() && name.size() - dash - 1 <= 9 &&
        name.find_first_not_of("0123456789", dash + 1) == std::string::npos)
      return {name.substr(0, dash), std::stoi(name.substr(dash + 1))};
    return {name.empty() ? std::string("log") : name, 0};
  }

  /// The offset in the entries of `path`, a checkpoint of the partition in `dir` (as
  /// read_checkpoint returns them, 3 fields each): none for no entry. A value that cannot be
  /// right is reported, never obeyed: more than one entry, an entry for another
  /// topic-partition, or a negative offset is kafka_storage_error naming the file.
  static result<std::optional<offset>> entry_offset(const std::vector<std::vector<std::string>>& lines,
                                                    const std::filesystem::path& path,
                                                    const std::filesystem::path& dir) {
    if (lines.empty()) return std::optional<offset>();
    if (lines.size() != 1)
      return make_error(errc::kafka_storage_error, "{}: {} entries, but a partition's checkpoint holds one",
                        path.string(), lines.size());
    const auto& e = lines.front();
    const auto [topic, part] = topic_partition_of(dir);
    if (e[0] != topic || e[1] != std::to_string(part))
      return make_error(errc::kafka_storage_error, "{}: the entry is for {}-{}, not this partition ({}-{})",
                        path.string(), detail::printable(e[0]), detail::printable(e[1]), topic, part);
    BROOK_TRY_ASSIGN(auto v, parse_checkpoint_int<std::int64_t>(path, e[2]));
    if (v < 0) return make_error(errc::kafka_storage_error, "{}: negative offset {}", path.string(), v);
    return std::optional<offset>(offset(v));
  }

 private:
  result<std::optional<offset>> read_one(std::string_view name) const {
    const auto path = dir_ / name;
    BROOK_TRY_ASSIGN(auto lines, read_checkpoint(files_, path, 3));
    return entry_offset(lines, path, dir_);
  }

  result<void> write_if_changed(std::string_view name, std::optional<offset>& on_disk, offset v) {
    if (on_disk == v) return ok();
    auto [topic, part] = topic_partition_of(dir_);
    BROOK_TRY(write_checkpoint(files_, dir_ / name, {{topic, std::to_string(part), std::to_string(v.value())}}));
    on_disk = v;
    return ok();
  }

  std::filesystem::path dir_;
  file_system& files_;
  std::optional<offset> recovery_point_, log_start_, cleaner_;
};

}  // namespace brook

// `partition.metadata`: the topic id of the partition whose directory holds it, in Kafka's
// format (Kafka 2.8+, storage/.../checkpoint/PartitionMetadataFile.java and
// PartitionMetadataReadBuffer.java). Two lines of ASCII text, the second without a newline:
//
//   v e r s i o n : ␠ 0 \n                          "version: " + the version, then '\n'
//   t o p i c _ i d : ␠ U X y U 9 i 5 A R n 6 W 0 0 O N 2 t a e W A
//                                                   "topic_id: " + Uuid.toString(): the 16
//                                                   bytes in URL-safe base64, no padding;
//                                                   no newline at the end
//
// 11 + 10 + 22 = 43 bytes, always (format_partition_metadata; partition_metadata_size). A
// reader takes each line up to '\n' (a '\r' before it is dropped), splits it at ':' and the
// whitespace after it as Kafka does, and then:
//   - the version must be a non-negative number; a version above 0 is read as version 0
//     (Kafka's rule, so a newer Kafka's file still opens: its second line stays the id);
//   - the id must be Uuid.toString() text (uuid::from_string) and not Uuid.ZERO_UUID;
//   - what follows the second line is ignored, as Kafka ignores it.
// Anything else is errc::kafka_storage_error naming the file, the code every other
// unreadable checkpoint gets.
//
// brook is stricter than Kafka in one way: the keys must be `version` and `topic_id` (Kafka
// does not look at them; every file it writes has them).
//
// Writes go through replace_file (storage/file.hpp): `partition.metadata.tmp`, fsync, rename,
// fsync of the directory. A crash leaves the old file or the new one; a leftover `.tmp` is
// removed when the log opens (partition_files.hpp lists the name with the checkpoints).
//
// Who writes it: data_dir, once per partition directory, when it creates the topic or when
// it opens a directory without one (docs/format.md, "Topic ids").
//
// Thread-safety: free functions; concurrent writers of one directory must be serialised by
// the caller.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/printable.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/storage/file.hpp>
#include <brook/storage/file_system.hpp>
#include <brook/storage/partition_files.hpp>

namespace brook {

/// The version brook writes (PartitionMetadataFile.CURRENT_VERSION).
inline constexpr int partition_metadata_version = 0;
inline constexpr std::string_view partition_metadata_version_key = "version";
inline constexpr std::string_view partition_metadata_topic_id_key = "topic_id";
/// "version: 0\n" (11) + "topic_id: " (10) + 22 characters of id.
inline constexpr std::size_t partition_metadata_size = 11 + 10 + 22;
static_assert(partition_metadata_version_key.size() + 2 + 1 + 1 + partition_metadata_topic_id_key.size() + 2 + 22 ==
              partition_metadata_size);

/// The text brook writes for `topic_id` (PartitionMetadata.encode()).
/// REQUIRES: !topic_id.is_zero().
inline std::string format_partition_metadata(const uuid& topic_id) {
  BROOK_ASSERT(!topic_id.is_zero(), "partition.metadata for the zero topic id");
  std::string text = fmt::format("{}: {}\n{}: {}", partition_metadata_version_key, partition_metadata_version,
                                 partition_metadata_topic_id_key, topic_id.to_string());
  BROOK_ASSERT(text.size() == partition_metadata_size, "partition.metadata of {} bytes", text.size());
  return text;
}

namespace detail {

/// The value of one `key: value` line (Kafka splits at ":\s+"), or an error naming it.
inline result<std::string_view> partition_metadata_value(std::string_view line, std::string_view key,
                                                         std::string_view where) {
  const auto bad = [&] {
    return make_error(errc::kafka_storage_error, "{}: malformed line '{}' (expected '{}: <value>')", where,
                      detail::printable(line), key);
  };
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || line.substr(0, colon) != key) return bad();
  std::size_t at = colon + 1;
  while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\f' || line[at] == '\v')) ++at;
  if (at == colon + 1 || at == line.size()) return bad();
  const std::string_view value = line.substr(at);
  if (value.find_first_of(": \t") != std::string_view::npos) return bad();
  return value;
}

/// The next line of `text` from `at` (without its '\n' or "\r\n"), or nullopt at the end.
inline std::optional<std::string_view> next_line(std::string_view text, std::size_t& at) {
  if (at >= text.size()) return std::nullopt;
  const std::size_t nl = text.find('\n', at);
  std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
  at = nl == std::string_view::npos ? text.size() : nl + 1;
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

}  // namespace detail

/// The topic id in the text of a partition.metadata file; `where` names the file in errors.
/// Errors: kafka_storage_error (see the rules above).
inline result<uuid> parse_partition_metadata(std::string_view text, std::string_view where) {
  std::size_t at = 0;
  const auto version_line = detail::next_line(text, at);
  if (!version_line) return make_error(errc::kafka_storage_error, "{}: empty (no version line)", where);
  BROOK_TRY_ASSIGN(const std::string_view v,
                   detail::partition_metadata_value(*version_line, partition_metadata_version_key, where));
  int version = -1;
  const auto [p, e] = std::from_chars(v.data(), v.data() + v.size(), version);
  if (e != std::errc() || p != v.data() + v.size() || version < partition_metadata_version)
    return make_error(errc::kafka_storage_error, "{}: unsupported version '{}'", where, detail::printable(v));
  const auto id_line = detail::next_line(text, at);
  if (!id_line) return make_error(errc::kafka_storage_error, "{}: truncated (no topic_id line)", where);
  BROOK_TRY_ASSIGN(const std::string_view id_text,
                   detail::partition_metadata_value(*id_line, partition_metadata_topic_id_key, where));
  const auto id = uuid::from_string(id_text);
  if (!id)
    return make_error(errc::kafka_storage_error, "{}: '{}' is not a topic id (22 characters of URL-safe base64)", where,
                      detail::printable(id_text));
  if (id->is_zero()) return make_error(errc::kafka_storage_error, "{}: the topic id is the zero uuid", where);
  return *id;
}

/// The partition.metadata of partition directory `dir`.
inline std::filesystem::path partition_metadata_path(const std::filesystem::path& dir) {
  return dir / partition_files::partition_metadata;
}

/// The topic id stored in partition directory `dir`; nullopt when it has no
/// partition.metadata (written by Kafka before 2.8 or by brook before topic ids).
/// Errors: kafka_storage_error (unreadable or malformed, naming the file).
inline result<std::optional<uuid>> read_partition_metadata(file_system& files, const std::filesystem::path& dir) {
  const std::filesystem::path path = partition_metadata_path(dir);
  BROOK_TRY_ASSIGN(const file_kind kind, files.kind(path));
  if (kind == file_kind::none) return std::optional<uuid>{};
  // 4 KiB is generous: brook's and Kafka's files are 43 bytes.
  auto text = read_small_file(files, path, 4096);
  if (!text) return make_error(errc::kafka_storage_error, "{}: cannot be read ({})", path.string(), text.error());
  BROOK_TRY_ASSIGN(const uuid id, parse_partition_metadata(*text, path.string()));
  return std::optional<uuid>(id);
}

/// Atomically writes `topic_id` to the partition.metadata of partition directory `dir`.
/// REQUIRES: !topic_id.is_zero().
inline result<void> write_partition_metadata(file_system& files, const std::filesystem::path& dir,
                                             const uuid& topic_id) {
  return replace_file(files, partition_metadata_path(dir), format_partition_metadata(topic_id));
}

}  // namespace brook

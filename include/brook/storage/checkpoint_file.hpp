// Kafka's text checkpoint files (CheckpointFile.java):
//
//   0                 <- version
//   2                 <- number of entries
//   orders 0 1500     <- one entry per line, space separated
//   orders 1 1421
//
// Offset checkpoints (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
// replication-offset-checkpoint) have entries `topic partition offset`; the
// leader-epoch-checkpoint has `epoch startOffset`. Writes go to `<name>.tmp`,
// are fsync'd, renamed over the old file, and the directory is fsync'd, so a
// crash leaves either the old or the new file, never a torn one.
//
// Thread-safety: free functions; concurrent writers of one path must be serialised by the caller.
#pragma once

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <brook/core/printable.hpp>
#include <brook/core/result.hpp>
#include <brook/format/bytes.hpp>
#include <brook/storage/file.hpp>

namespace brook {

/// Parses the text of a checkpoint whose lines have `fields` space-separated tokens; `where`
/// names the file in errors. Every entry it returns has exactly `fields` tokens, none empty
/// and none holding whitespace. A malformed text is kafka_storage_error naming the line.
inline result<std::vector<std::vector<std::string>>> parse_checkpoint(std::string_view text, std::string_view where,
                                                                      std::size_t fields, int expected_version = 0) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in{std::string(text)};
  std::string line;
  auto bad = [&](std::size_t lineno, std::string_view why) {
    return make_error(errc::kafka_storage_error, "{} line {}: {}", where, lineno, why);
  };
  if (!std::getline(in, line)) return bad(1, "missing version line");
  if (line != std::to_string(expected_version))
    return bad(1, fmt::format("unsupported version '{}'", detail::printable(line)));
  if (!std::getline(in, line)) return bad(2, "missing entry count");
  std::size_t count = 0;
  auto [p, e] = std::from_chars(line.data(), line.data() + line.size(), count);
  if (e != std::errc() || p != line.data() + line.size())
    return bad(2, fmt::format("bad entry count '{}'", detail::printable(line)));
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::getline(in, line)) return bad(3 + i, fmt::format("expected {} entries, found {}", count, i));
    std::istringstream ls(line);
    std::vector<std::string> toks;
    std::string t;
    while (ls >> t) toks.push_back(t);
    if (toks.size() != fields)
      return bad(3 + i, fmt::format("expected {} fields in '{}'", fields, detail::printable(line)));
    out.push_back(std::move(toks));
  }
  while (std::getline(in, line))
    if (!line.empty()) return bad(3 + count, "unexpected line after the entries");
  return out;
}

/// Reads a checkpoint file (parse_checkpoint). A missing file is an empty list; a malformed
/// one is kafka_storage_error naming the file and line.
inline result<std::vector<std::vector<std::string>>> read_checkpoint(file_system& files, const fs::path& path,
                                                                     std::size_t fields, int expected_version = 0) {
  if (!files.exists(path).value_or(false)) return std::vector<std::vector<std::string>>{};
  auto text = read_small_file(files, path);
  if (!text) return make_error(errc::kafka_storage_error, "{}: cannot be read ({})", path.string(), text.error());
  return parse_checkpoint(*text, path.string(), fields, expected_version);
}

/// The text of a checkpoint of `lines` (each a list of tokens), as write_checkpoint writes it.
inline std::string format_checkpoint(const std::vector<std::vector<std::string>>& lines, int version = 0) {
  std::string text = fmt::format("{}\n{}\n", version, lines.size());
  for (const auto& l : lines) text += fmt::format("{}\n", fmt::join(l, " "));
  return text;
}

/// Atomically replaces `path` with a checkpoint of `lines` (each a list of tokens).
inline result<void> write_checkpoint(file_system& files, const fs::path& path,
                                     const std::vector<std::vector<std::string>>& lines, int version = 0) {
  return replace_file(files, path, format_checkpoint(lines, version));
}

/// Parses an integer token of a checkpoint line.
template <typename Int>
inline result<Int> parse_checkpoint_int(const fs::path& path, const std::string& tok) {
  Int v{};
  auto [p, e] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (e != std::errc() || p != tok.data() + tok.size())
    return make_error(errc::kafka_storage_error, "{}: '{}' is not a number", path.string(), detail::printable(tok));
  return v;
}

}  // namespace brook

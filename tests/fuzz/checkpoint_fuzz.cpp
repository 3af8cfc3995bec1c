// libFuzzer target for Kafka's text checkpoint files (built as brook_fuzz_checkpoint with
// -DBROOK_BUILD_FUZZERS=ON and Clang; see CMakeLists.txt). The same entry point is linked with
// replay_main.cpp into brook_fuzz_checkpoint_replay, which ctest runs over corpus_checkpoint/.
//
// The input is a checkpoint file's text. parse_checkpoint reads it as a 2-field file (the
// leader-epoch-checkpoint) and as a 3-field one (the offset checkpoints); a refusal must be
// kafka_storage_error. An accepted file must keep the parser's promises: every entry has
// exactly that many tokens, none empty, none holding whitespace; format_checkpoint (what
// write_checkpoint writes) of the entries parses back to the same entries, and formatting
// those gives the same text. Integer tokens parse_checkpoint_int accepts survive a round trip
// through std::to_string.
//
// The 3-field entries then go to log_checkpoints::entry_offset, which a partition log loads
// its checkpoints with, for the partition directory "orders-0" and for the directory the first
// entry names ("<topic>-<partition>"). What it accepts must be what it promises: one entry, for
// that directory's topic-partition (partition >= 0), with an offset >= 0; and the entry
// log_checkpoints would write for that offset reads back as the same offset.
//
// The same text is also read as a partition.metadata file (parse_partition_metadata): a
// refusal must be kafka_storage_error; an accepted id is never zero, and the file brook would
// write for it is 43 bytes that read back as the same id.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/storage/checkpoint_file.hpp>
#include <brook/storage/log_checkpoints.hpp>
#include <brook/storage/partition_metadata.hpp>

#include "fuzz_check.hpp"

namespace {

using entries = std::vector<std::vector<std::string>>;

void check_int_tokens(const entries& lines) {
  for (const auto& l : lines) {
    for (const auto& tok : l) {
      if (auto v = brook::parse_checkpoint_int<std::int64_t>("fuzz", tok)) {
        auto again = brook::parse_checkpoint_int<std::int64_t>("fuzz", std::to_string(*v));
        FUZZ_CHECK(again && *again == *v);
      } else {
        FUZZ_CHECK(v.error() == brook::errc::kafka_storage_error);
      }
      if (auto v = brook::parse_checkpoint_int<std::int32_t>("fuzz", tok)) {
        auto wide = brook::parse_checkpoint_int<std::int64_t>("fuzz", tok);
        FUZZ_CHECK(wide && *wide == *v);  // an int32 token is the same number read as int64
      }
    }
  }
}

void check_entry_offset(const entries& lines, const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "recovery-point-offset-checkpoint";
  auto r = brook::log_checkpoints::entry_offset(lines, path, dir);
  if (!r) {
    FUZZ_CHECK(r.error() == brook::errc::kafka_storage_error);
    return;
  }
  if (!r->has_value()) {
    FUZZ_CHECK(lines.empty());
    return;
  }
  const std::int64_t v = (*r)->value();
  FUZZ_CHECK(v >= 0);
  FUZZ_CHECK(lines.size() == 1);
  const auto [topic, part] = brook::log_checkpoints::topic_partition_of(dir);
  FUZZ_CHECK(part >= 0);
  FUZZ_CHECK(lines[0][0] == topic && lines[0][1] == std::to_string(part));
  // What write_if_changed would write for this offset reads back as it.
  const std::string text = brook::format_checkpoint({{topic, std::to_string(part), std::to_string(v)}});
  auto back = brook::parse_checkpoint(text, "rewritten", 3);
  FUZZ_CHECK(back);
  auto again = brook::log_checkpoints::entry_offset(*back, path, dir);
  FUZZ_CHECK(again && again->has_value() && (*again)->value() == v);
}

void check(std::string_view text, std::size_t fields) {
  auto r = brook::parse_checkpoint(text, "fuzz", fields);
  if (!r) {
    FUZZ_CHECK(r.error() == brook::errc::kafka_storage_error);
    return;
  }
  for (const auto& l : *r) {
    FUZZ_CHECK(l.size() == fields);
    for (const auto& tok : l) {
      FUZZ_CHECK(!tok.empty());
      FUZZ_CHECK(tok.find_first_of(" \t\n\v\f\r") == std::string::npos);
    }
  }
  const std::string formatted = brook::format_checkpoint(*r);
  auto back = brook::parse_checkpoint(formatted, "formatted", fields);
  FUZZ_CHECK(back);
  FUZZ_CHECK(*back == *r);
  FUZZ_CHECK(brook::format_checkpoint(*back) == formatted);
  check_int_tokens(*r);
  if (fields == 3) {
    check_entry_offset(*r, "orders-0");
    if (!r->empty()) check_entry_offset(*r, (*r)[0][0] + "-" + (*r)[0][1]);
  }
}

void check_partition_metadata(std::string_view text) {
  auto id = brook::parse_partition_metadata(text, "fuzz");
  if (!id) {
    FUZZ_CHECK(id.error() == brook::errc::kafka_storage_error);
    return;
  }
  FUZZ_CHECK(!id->is_zero());
  const std::string written = brook::format_partition_metadata(*id);
  FUZZ_CHECK(written.size() == brook::partition_metadata_size);
  auto back = brook::parse_partition_metadata(written, "rewritten");
  FUZZ_CHECK(back && *back == *id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text, 2);
  check(text, 3);
  check_partition_metadata(text);
  return 0;
}

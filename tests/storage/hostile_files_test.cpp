// The hostile-file corpus (tests/support/hostile_corpus.hpp): every damaged variant of one
// small partition that a disk, a bad copy or a hostile user can leave, each run through a
// read-only open, a writable open and a full-recovery open (what `brook verify --repair
// --yes` does), each followed by a full consume. Every variant states its expectation: the
// open's named error, or how many of the 1,000 records a consumer still gets before the
// named error that stops it. Records that are delivered must be exactly the ones written, at
// their offsets: nothing is silently altered, a read never returns "nothing" below the log
// end, and intact batches ahead of the damage are always delivered.
// tests/tools/cli_hostile_files_test.cpp runs the same corpus through the `brook` tool.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <brook/format/crc32c.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/storage/partition_files.hpp>
#include <brook/storage/partition_log.hpp>

#include "support/checks.hpp"
#include "support/crash_helpers.hpp"
#include "support/hostile_corpus.hpp"
#include "support/log_builders.hpp"

using namespace brook;
namespace sfs = std::filesystem;
using brook::test::read_file_bytes;
using brook::test::scratch_dir;
using brook::test::write_file_bytes;
using namespace brook::test::hostile;

namespace {

/// What a consumer got: records (offset, value) and the error that stopped it, if any.
struct consumed {
  std::vector<std::pair<std::int64_t, std::string>> records;
  std::optional<errc> stopped_by;
  std::string message;
};

/// The named code of an error (an OS error is KAFKA_STORAGE_ERROR).
errc code_of(const error& e) {
  return e.code().category() == std::system_category() ? errc::kafka_storage_error
                                                       : static_cast<errc>(e.code().value());
}

/// Everything from the log start to the log end, validating every batch, as a consumer does.
consumed consume_all(const partition_log& log) {
  consumed out;
  offset at = log.log_start_offset();
  while (at < log.log_end_offset()) {
    auto s = log.read(at);
    if (!s) {
      out.stopped_by = code_of(s.error());
      out.message = s.error().to_string();
      return out;
    }
    // Never "nothing" below the log end: an empty read must say where to go on (past a hole).
    REQUIRE((!s->empty() || s->next_offset() > at));
    auto r = s->for_each_record(
        [&](const record_view& rv) { out.records.emplace_back(rv.offset().value(), rv.value().to_string()); });
    if (!r) {
      out.stopped_by = code_of(r.error());
      out.message = r.error().to_string();
      return out;
    }
    at = s->next_offset();
  }
  return out;
}

std::string run_mode(const sfs::path& dir, log_open_options o, const expect& want) {
  auto log = partition_log::open(dir, corpus_config(), o);
  if (want.open_fails) {
    if (log) return fmt::format("the open succeeded, want {}", *want.open_fails);
    if (code_of(log.error()) != *want.open_fails)
      return fmt::format("the open failed with {}, want {}", log.error(), *want.open_fails);
    return {};
  }
  if (!log) return fmt::format("the open failed: {}", log.error());
  const consumed got = consume_all(**log);
  for (std::size_t i = 0; i < got.records.size(); ++i) {
    const auto want_off = static_cast<std::int64_t>(i);
    if (got.records[i].first != want_off || got.records[i].second != value_of(want_off))
      return fmt::format("record #{} is ({}, {}), want ({}, {})", i, got.records[i].first, got.records[i].second,
                         want_off, value_of(want_off));
  }
  if (static_cast<int>(got.records.size()) != want.delivered || got.stopped_by != want.stopped_by)
    return fmt::format("delivered {} then {} ({}), want {} then {}; recovery: {}", got.records.size(),
                       got.stopped_by ? fmt::format("{}", *got.stopped_by) : "the end", got.message, want.delivered,
                       want.stopped_by ? fmt::format("{}", *want.stopped_by) : "the end",
                       fmt::join((*log)->recovery().events, " | "));
  return {};
}

void check_variant(const variant& v) {
  scratch_dir tmp("brook-hostile");
  INFO("variant: " << v.name);
  const std::pair<const char*, log_open_options> modes[] = {
      {"read-only", {.read_only = true}},
      {"writable", {}},
      {"full recovery", {.full_recovery = true}},
  };
  const expect* wants[] = {&v.read_only, &v.writable, &v.repaired};
  for (int m = 0; m < 3; ++m) {
    const auto dir = tmp / fmt::format("m{}", m) / "t-0";
    lay_out(dir);
    v.damage(dir);
    const std::string err = run_mode(dir, modes[m].second, *wants[m]);
    INFO("mode: " << modes[m].first);
    CHECK(err == "");
    // After the writable opens the log is sound: a second open and consume agree.
    if (m > 0 && err.empty() && !wants[m]->open_fails && !wants[m]->stopped_by)
      CHECK(run_mode(dir, {}, *wants[m]) == "");
  }
}

}  // namespace

TEST_CASE("hostile files: each batch header field set to 0 or -1 or max or its neighbour value",
          "[storage][hostile][scenario]") {
  const auto vs = header_variants();
  CHECK(vs.size() > 60);
  for (const auto& v : vs) check_variant(v);
}

TEST_CASE("hostile files: checkpoints and indexes and names that lie", "[storage][hostile][scenario]") {
  for (const auto& v : file_variants()) check_variant(v);
}

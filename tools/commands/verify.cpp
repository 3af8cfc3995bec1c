// brook verify DIR [--repair [--yes]]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/storage/log_checkpoints.hpp>
#include <brook/storage/partition_files.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/storage/segment.hpp>

#include "commands/cli_codecs.hpp"
#include "commands/commands.hpp"
#include "commands/log_file.hpp"
#include "commands/serve_address.hpp"

namespace brook::cli {

const command_spec verify_spec{
    "verify",
    "DIR [--repair [--yes]]",
    "Check every batch and every index of the partition log in DIR.",
    R"txt(Without --repair nothing is modified and no lock is taken. Every .log file is parsed
from byte 0 (CRC-32C and every record of every batch, base offsets never going back,
each segment starting where the previous one ends) and every .index / .timeindex is
checked against it as dump-log --verify-index does. A torn or corrupt tail is
reported even though a read-only open would simply stop before it, and so is a
log-start checkpoint past the log end (an open ignores it or, after lost flushed
data, starts the log at its end). Finally the log is opened read-only through the
library (checkpoints, stray files).

On success prints "ok: N segments, M batches, R records, offsets A..B" (A = log
start offset, B = last offset; "no offsets (log end E)" when empty) and exits 0.
Otherwise lists each problem on stdout ("problem: ...") and prints the first one,
with its file and byte position, on stderr; exit 1.

Options:
  --repair    open the log writable (takes the directory lock, so it fails with
              LOG_DIR_LOCKED while another process writes the log); if problems were
              found, recovery re-validates every segment (full_recovery): it cuts a
              torn or corrupt tail and the segments after it and rebuilds indexes.
              Reports what recovery did, closes the log and verifies again. Exit 0 if
              the log is now sound.
              It first works out, without writing, what recovery would remove. If that
              includes flushed data (below the recovery point: acknowledged records a
              crash cannot explain), it prints "would cut: ..." and exits 1 unless
              --yes is given.
  --yes       let --repair cut flushed data
  -h, --help  this help

Exit: 0 ok (or repaired), 1 problems found (or left after repair), 2 usage error.)txt",
    {{"--repair", false}, {"--yes", false}},
    1,
    1};

namespace {

struct scan_result {
  std::size_t segments = 0;
  std::size_t batches = 0;
  std::uint64_t records = 0;
  std::optional<brook::offset> last_offset;
  std::vector<std::string> problems;
  std::vector<std::string> notes;  ///< worth knowing, not a problem (a missing index: rebuilt on open)
};

/// A log-start checkpoint past the log end hides every record (issue 11 #5). A checkpoint that
/// does not parse is left to the read-only open, which names it.
void check_log_start(const fs::path& dir, brook::offset log_end, scan_result& out) {
  log_checkpoints ck(dir, *posix_file_system::shared());
  if (!ck.load() || !ck.log_start() || *ck.log_start() <= log_end) return;
  out.problems.push_back(fmt::format("KAFKA_STORAGE_ERROR: {}: log start {} is past the log end {}",
                                     (dir / partition_files::log_start_checkpoint).string(), *ck.log_start(), log_end));
}

/// Parses every segment of `dir` and checks its indexes. Errors only for an unusable directory.
result<scan_result> scan(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return make_error(errc::log_dir_not_found, "{}: no such partition directory", dir.string());
  if (!fs::is_directory(dir, ec)) return make_error(errc::kafka_storage_error, "{}: not a directory", dir.string());
  std::vector<brook::offset> bases;
  for (const auto& de : fs::directory_iterator(dir, ec)) {
    if (de.path().extension() != partition_files::log_suffix) continue;
    if (auto b = partition_files::parse_base(de.path().stem().string())) bases.push_back(*b);
  }
  if (ec) return error(ec, fmt::format("list {}", dir.string()));
  if (bases.empty()) return make_error(errc::log_dir_not_found, "{}: holds no segments", dir.string());
  std::sort(bases.begin(), bases.end());

  scan_result out;
  std::optional<brook::offset> expected;  // where the next segment must start
  for (brook::offset base : bases) {
    ++out.segments;
    const fs::path log_path = partition_files::log(dir, base);
    if (expected && base != *expected)
      out.problems.push_back(
          fmt::format("KAFKA_STORAGE_ERROR: {}: segment starts at offset {} but the previous one ends at {} ({})",
                      log_path.string(), base, *expected, base < *expected ? "overlap" : "hole"));
    std::error_code kind_ec;
    auto rr = fs::is_directory(log_path, kind_ec)
                  ? result<log_file_reader>(
                        make_error(errc::kafka_storage_error, "{}: a directory, not a segment", log_path.string()))
                  : log_file_reader::open(log_path);
    if (!rr) {
      out.problems.push_back(describe(rr.error()));
      expected.reset();
      continue;
    }
    log_file_reader& reader = *rr;
    for (;;) {
      auto v = reader.next();
      if (!v) {
        out.problems.push_back(describe(v.error()));
        break;
      }
      if (!*v) break;
      ++out.batches;
      out.records += (*v)->record_count();
      out.last_offset = (*v)->last_offset();
    }
    expected = reader.next_offset();
    for (const auto& b : reader.batches())
      if (b.header_max_timestamp != b.max_record_timestamp)
        out.notes.push_back(
            fmt::format("{}: batch at offset {} claims maxTimestamp {}, but its records' largest is {} "
                        "(retention and time lookups go by the claim; Kafka's broker corrects it on "
                        "append, as brook's does)",
                        log_path.string(), b.base, b.header_max_timestamp, b.max_record_timestamp));
    const index_check checks[] = {
        check_offset_index(partition_files::index(dir, base), base, reader.batches(), reader.position()),
        check_time_index(partition_files::time_index(dir, base), base, reader.batches())};
    for (const auto& c : checks) {
      if (!c.present) {  // Kafka rebuilds a missing index silently; so does any open of brook's
        out.notes.push_back(fmt::format("{}: missing; an open rebuilds it", c.path.string()));
        continue;
      }
      for (const auto& p : c.problems) out.problems.push_back("CORRUPT_MESSAGE: " + p);
    }
  }
  if (expected) check_log_start(dir, *expected, out);
  return out;
}

/// Opens read-only through the library and prints the summary line. Returns the exit code.
int summarize(const fs::path& dir, const scan_result& s) {
  for (const auto& n : s.notes) fmt::print("note: {}\n", n);
  auto lr = partition_log::open(dir, cli_log_config(), log_open_options{.read_only = true});
  if (!lr) return fail(lr.error());
  const partition_log& log = **lr;
  std::string range = log.log_end_offset() > log.log_start_offset()
                          ? fmt::format("offsets {}..{}", log.log_start_offset(), log.log_end_offset() - 1)
                          : fmt::format("no offsets (log end {})", log.log_end_offset());
  fmt::print("ok: {} segments, {} batches, {} records, {}\n", s.segments, s.batches, s.records, range);
  std::fflush(stdout);
  return exit_ok;
}

int report_problems(const scan_result& s, std::string_view prefix = {}) {
  for (const auto& p : s.problems) fmt::print("problem: {}\n", p);
  std::fflush(stdout);
  fmt::print(stderr, "brook: {}{}{}\n", prefix, s.problems.front(),
             s.problems.size() > 1 ? fmt::format(" (and {} more problems)", s.problems.size() - 1) : "");
  return exit_failure;
}

}  // namespace

int run_verify(const parsed_args& args) {
  const fs::path dir = args.positional.at(0);
  auto sr = scan(dir);
  if (!sr) return fail(sr.error());
  if (!args.has("--repair")) {
    if (!sr->problems.empty()) return report_problems(*sr);
    return summarize(dir, *sr);
  }

  // --repair
  for (const auto& p : sr->problems) fmt::print("problem: {}\n", p);
  // With problems found, validate every batch (CRC included) instead of trusting a
  // cleanly closed log's tail walk.
  log_open_options opts;
  opts.full_recovery = !sr->problems.empty();
  if (!args.has("--yes")) {
    // A dry run first: a read-only open reports what a writable one would cut.
    log_open_options dry = opts;
    dry.read_only = true;
    auto plan = partition_log::open(dir, cli_log_config(), dry);
    if (!plan) return fail(plan.error());
    const recovery_report& rep = (*plan)->recovery();
    if (rep.flushed_bytes_truncated + rep.flushed_bytes_deleted > 0) {
      for (const auto& e : rep.events) fmt::print("would: {}\n", e);
      std::fflush(stdout);
      fmt::print(stderr,
                 "brook: would cut: {} flushed bytes truncated, {} flushed bytes in {} deleted segments; "
                 "rerun with --repair --yes to cut them\n",
                 rep.flushed_bytes_truncated, rep.flushed_bytes_deleted, rep.segments_deleted);
      return exit_failure;
    }
  }
  {
    auto lr = partition_log::open(dir, cli_log_config(), opts);
    if (!lr) return fail(with_partition_serve_hint(lr.error(), dir));
    const recovery_report& rep = (*lr)->recovery();
    for (const auto& e : rep.events) fmt::print("recovery: {}\n", e);
    fmt::print(
        "repaired: {} segments scanned, {} bytes truncated ({} flushed), {} indexes rebuilt, {} segments deleted "
        "({} bytes, {} flushed)\n",
        rep.segments_scanned, rep.bytes_truncated, rep.flushed_bytes_truncated, rep.indexes_rebuilt,
        rep.segments_deleted, rep.bytes_deleted, rep.flushed_bytes_deleted);
    if (auto c = (*lr)->close(); !c) return fail(c.error());
  }
  auto again = scan(dir);
  if (!again) return fail(again.error());
  if (!again->problems.empty()) return report_problems(*again, "still damaged after repair: ");
  return summarize(dir, *again);
}

}  // namespace brook::cli

// The hostile-file corpus (tests/support/hostile_corpus.hpp) through the `brook` tool: each
// damaged variant of the partition goes through `brook verify`, `brook consume`, `brook
// verify --repair` and, where that refuses to cut flushed data, `verify --repair --yes`.
// Written down for each: verify's exit code and the named code it reports (and that it
// modifies nothing); how many records consume prints (exactly the ones written, in order)
// and the named code it stops with; whether --repair without --yes refuses (naming "would
// cut" and leaving every file as it was); and that after a repair `verify` passes and
// `consume` prints what the library's full-recovery open delivers.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "support/cli_runner.hpp"
#include "support/hostile_corpus.hpp"

#ifndef BROOK_CLI_PATH
TEST_CASE("brook CLI hostile-file tests need BROOK_BUILD_TOOLS=ON", "[tools][cli]") {
  WARN("the brook tool is not built (BROOK_BUILD_TOOLS=OFF): CLI tests not run");
}
#else

namespace {

namespace fs = std::filesystem;
using namespace brook::test::cli;
using namespace brook::test::hostile;
using brook::test::scratch_dir;

/// Every regular file of `dir` by name (a FIFO or a loop is listed, never opened).
std::map<std::string, std::vector<std::byte> > snapshot(const fs::path& dir) {
  std::map<std::string, std::vector<std::byte> > out;
  for (const auto& de : fs::directory_iterator(dir)) {
    std::error_code ec;
    const bool regular = fs::is_regular_file(fs::symlink_status(de.path(), ec));
    out[de.path().filename().string()] = regular ? brook::test::read_file_bytes(de.path()) : std::vector<std::byte>{};
  }
  return out;
}

std::string code_name(brook::errc e) { return fmt::format("{}", e); }

/// `brook consume DIR` prints exactly `want.delivered` records, the ones written, in order,
/// and exits 1 naming the error that stopped it, or 0 after all of them.
void check_consume(const fs::path& dir, const expect& want) {
  const auto r = brook_cli({"consume", dir.string()});
  const auto lines = lines_of(r.out);
  const int delivered = want.open_fails ? 0 : want.delivered;
  REQUIRE(static_cast<int>(lines.size()) == delivered);
  for (int i = 0; i < delivered; ++i) REQUIRE(lines[static_cast<std::size_t>(i)] == value_of(i));
  const auto stop = want.open_fails ? want.open_fails : want.stopped_by;
  if (stop) {
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, code_name(*stop)));
  } else {
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
}

void check_verify(const fs::path& dir, const std::optional<std::string>& finds) {
  const auto before = snapshot(dir);
  const auto r = brook_cli({"verify", dir.string()});
  if (finds) {
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, *finds));
  } else {
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "ok: "));
  }
  CHECK(snapshot(dir) == before);  // verify never writes
}

/// `verify --repair`: refuses (and writes nothing) when it would cut flushed data, unless
/// --yes; afterwards the log verifies and consumes as the full-recovery open promised.
void check_repair(const variant& v, const fs::path& dir) {
  const expect& want = v.repaired;
  const bool cuts_flushed = !want.open_fails && want.delivered < total;
  const auto before = snapshot(dir);
  auto r = brook_cli({"verify", dir.string(), "--repair"});
  if (want.open_fails) {
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, code_name(*want.open_fails)));
    return;
  }
  if (cuts_flushed) {
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "would cut"));
    CHECK(snapshot(dir) == before);
    r = brook_cli({"verify", dir.string(), "--repair", "--yes"});
  }
  if (v.repair_keeps_problem) {
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "still damaged after repair"));
    CHECK(contains(r.err, *v.verify_finds));
  } else {
    CHECK(r.exit_code == 0);
    check_verify(dir, std::nullopt);
  }
  check_consume(dir, want);
}

void check_variant(const variant& v) {
  scratch_dir tmp("brook-cli-hostile");
  INFO("variant: " << v.name);
  const auto dir = tmp / "a" / "t-0";
  lay_out(dir);
  v.damage(dir);
  check_verify(dir, v.verify_finds);
  check_consume(dir, v.read_only);
  const auto fresh = tmp / "b" / "t-0";
  lay_out(fresh);
  v.damage(fresh);
  check_repair(v, fresh);
}

}  // namespace

TEST_CASE("brook tool on hostile files: each batch header field set to 0 or -1 or max or its neighbour value",
          "[tools][cli][hostile][scenario]") {
  const auto vs = header_variants();
  CHECK(vs.size() > 60);
  for (const auto& v : vs) check_variant(v);
}

TEST_CASE("brook tool on hostile files: checkpoints and indexes and names that lie",
          "[tools][cli][hostile][scenario]") {
  for (const auto& v : file_variants()) check_variant(v);
}

#endif

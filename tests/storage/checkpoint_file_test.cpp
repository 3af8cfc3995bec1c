#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include <brook/storage/checkpoint_file.hpp>

#include "support/temp_dir.hpp"

using namespace brook;

namespace {
file_system& files = *posix_file_system::shared();

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("checkpoints are written in Kafka's text format and read back", "[storage][checkpoint]") {
  test::temp_dir t;
  fs::path p = t / "recovery-point-offset-checkpoint";
  REQUIRE(write_checkpoint(files, p, {{"orders", "0", "1500"}, {"orders", "1", "1421"}}));
  CHECK(slurp(p) == "0\n2\norders 0 1500\norders 1 1421\n");
  CHECK_FALSE(fs::exists(t / "recovery-point-offset-checkpoint.tmp"));
  auto r = read_checkpoint(files, p, 3);
  REQUIRE(r);
  REQUIRE(r->size() == 2);
  CHECK((*r)[1][2] == "1421");
  auto v = parse_checkpoint_int<std::int64_t>(p, (*r)[0][2]);
  REQUIRE(v);
  CHECK(*v == 1500);
  CHECK_FALSE(parse_checkpoint_int<std::int64_t>(p, "12x"));
}

TEST_CASE("a missing checkpoint is empty, a malformed one is kafka_storage_error", "[storage][checkpoint]") {
  test::temp_dir t;
  auto none = read_checkpoint(files, t / "nope", 3);
  REQUIRE(none);
  CHECK(none->empty());
  auto bad = [&](const std::string& text) {
    std::ofstream(t / "c") << text;
    auto r = read_checkpoint(files, t / "c", 3);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::kafka_storage_error);
    CHECK_THAT(r.error().message(), Catch::Contains("line"));
  };
  bad("");
  bad("1\n0\n");                     // unknown version
  bad("0\nx\n");                     // bad count
  bad("0\n2\nt 0 5\n");              // fewer entries than counted
  bad("0\n1\nt 0\n");                // too few fields
  bad("0\n1\nt 0 5\nextra line\n");  // trailing garbage
}

TEST_CASE("leader-epoch style checkpoints with two fields", "[storage][checkpoint]") {
  test::temp_dir t;
  REQUIRE(write_checkpoint(files, t / "leader-epoch-checkpoint", {{"0", "0"}, {"3", "120"}}));
  CHECK(slurp(t / "leader-epoch-checkpoint") == "0\n2\n0 0\n3 120\n");
  auto r = read_checkpoint(files, t / "leader-epoch-checkpoint", 2);
  REQUIRE(r);
  CHECK(r->size() == 2);
}

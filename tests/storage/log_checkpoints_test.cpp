#include <catch2/catch.hpp>

#include <fstream>

#include <brook/storage/log_checkpoints.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"

using namespace brook;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("log_checkpoints: missing files are unset, written values are Kafka's text", "[storage][log_checkpoints]") {
  test::temp_dir t;
  const auto dir = t / "orders-3";
  fs::create_directories(dir);
  log_checkpoints c(dir, *posix_file_system::shared());
  REQUIRE_OK(c.load());
  CHECK_FALSE(c.recovery_point());
  CHECK_FALSE(c.log_start());
  CHECK_FALSE(c.cleaner_offset());

  REQUIRE_OK(c.write_recovery_point(offset(42)));
  REQUIRE_OK(c.write_log_start(offset(7)));
  REQUIRE_OK(c.write_cleaner_offset(offset(30)));
  CHECK(slurp(dir / "recovery-point-offset-checkpoint") == "0\n1\norders 3 42\n");
  CHECK(slurp(dir / "log-start-offset-checkpoint") == "0\n1\norders 3 7\n");
  CHECK(slurp(dir / "cleaner-offset-checkpoint") == "0\n1\norders 3 30\n");

  log_checkpoints again(dir, *posix_file_system::shared());
  REQUIRE_OK(again.load());
  CHECK(again.recovery_point() == std::optional<offset>(offset(42)));
  CHECK(again.log_start() == std::optional<offset>(offset(7)));
  CHECK(again.cleaner_offset() == std::optional<offset>(offset(30)));
}

TEST_CASE("log_checkpoints: a value already on disk is not written again", "[storage][log_checkpoints]") {
  test::temp_dir t;
  const auto dir = t / "t-0";
  fs::create_directories(dir);
  log_checkpoints c(dir, *posix_file_system::shared());
  REQUIRE_OK(c.write_log_start(offset(5)));
  fs::remove(dir / "log-start-offset-checkpoint");
  REQUIRE_OK(c.write_log_start(offset(5)));  // same value: no write (so no fsync)
  CHECK_FALSE(fs::exists(dir / "log-start-offset-checkpoint"));
  REQUIRE_OK(c.write_log_start(offset(6)));
  CHECK(fs::exists(dir / "log-start-offset-checkpoint"));
}

TEST_CASE("log_checkpoints: a malformed file fails the load naming it", "[storage][log_checkpoints]") {
  test::temp_dir t;
  const auto dir = t / "t-0";
  fs::create_directories(dir);
  std::ofstream(dir / "recovery-point-offset-checkpoint") << "0\n1\nt 0 twelve\n";
  log_checkpoints c(dir, *posix_file_system::shared());
  auto r = c.load();
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == errc::kafka_storage_error);
  CHECK_THAT(r.error().message(), Catch::Contains("recovery-point-offset-checkpoint"));
}

TEST_CASE("log_checkpoints: topic and partition from the directory name", "[storage][log_checkpoints]") {
  using P = std::pair<std::string, std::int32_t>;
  CHECK(log_checkpoints::topic_partition_of("/d/orders-12") == P{"orders", 12});
  CHECK(log_checkpoints::topic_partition_of("/d/my-topic-0") == P{"my-topic", 0});
  CHECK(log_checkpoints::topic_partition_of("/d/plain") == P{"plain", 0});
  CHECK(log_checkpoints::topic_partition_of("/d/odd-") == P{"odd-", 0});
  CHECK(log_checkpoints::topic_partition_of("/d/x-1234567890") == P{"x-1234567890", 0});  // too long for int32
  CHECK(log_checkpoints::topic_partition_of("/d/orders-1/") == P{"orders", 1});
}

// Issue 11 #4, #5, #20: a negative value, a second entry and another partition's entry were
// obeyed; junk was echoed raw into messages.
TEST_CASE("log_checkpoints: values that cannot be right are refused, naming the file", "[storage][log_checkpoints]") {
  test::temp_dir t;
  const auto dir = t / "orders-3";
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"0\n1\norders 3 -5\n", "negative offset -5"},
      {"0\n2\norders 3 5\norders 3 6\n", "2 entries"},
      {"0\n1\nother 3 5\n", "the entry is for other-3"},
      {"0\n1\norders 4 5\n", "the entry is for orders-4"},
      {"0\n1\norders 3 \x01\xff\n", "'\\x01\\xff' is not a number"},
      {std::string("\x7f\x45LF\n", 5), "unsupported version '\\x7fELF'"},
  };
  for (const auto& [text, why] : cases) {
    INFO(text);
    for (const char* name : {"log-start-offset-checkpoint", "recovery-point-offset-checkpoint"}) {
      fs::remove_all(dir);
      fs::create_directories(dir);
      std::ofstream(dir / name, std::ios::binary) << text;
      log_checkpoints c(dir, *posix_file_system::shared());
      auto r = c.load();
      REQUIRE_FALSE(r);
      CHECK(r.error().code() == errc::kafka_storage_error);
      CHECK_THAT(r.error().message(), Catch::Contains(name) && Catch::Contains(why));
    }
  }
}

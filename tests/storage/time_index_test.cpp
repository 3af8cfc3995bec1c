#include <catch2/catch.hpp>
#include <fstream>

#include <brook/storage/time_index.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using mode = detail::index_file::mode;

TEST_CASE("time index keeps increasing timestamps in Kafka's 12-byte entries", "[storage][time_index]") {
  test::temp_dir t;
  fs::path p = t / "00000000000000000010.timeindex";
  {
    time_index idx(offset(10));
    REQUIRE(idx.open(*posix_file_system::shared(), p, 12 * 10, mode::fresh));
    CHECK(idx.last().timestamp == -1);
    REQUIRE_OK(idx.maybe_append(1000, offset(12)));
    REQUIRE_OK(idx.maybe_append(900, offset(15)));   // older: ignored
    REQUIRE_OK(idx.maybe_append(1000, offset(16)));  // equal: ignored
    REQUIRE_OK(idx.maybe_append(2000, offset(20)));
    CHECK(idx.entries() == 2);
    CHECK(idx.lookup(999).offset == offset(10));
    CHECK(idx.lookup(999).timestamp == -1);
    CHECK(idx.lookup(1500).offset == offset(12));
    CHECK(idx.lookup(2000).offset == offset(20));
    CHECK(idx.sanity_check(offset(21)));
    CHECK_FALSE(idx.sanity_check(offset(20)));
    REQUIRE(idx.trim_and_sync());
  }
  std::ifstream in(p, std::ios::binary);
  std::vector<unsigned char> b((std::istreambuf_iterator<char>(in)), {});
  REQUIRE(b.size() == 24);
  CHECK(std::vector<unsigned char>(b.begin(), b.begin() + 12) ==
        std::vector<unsigned char>{0, 0, 0, 0, 0, 0, 0x03, 0xE8, 0, 0, 0, 2});
  time_index idx(offset(10));
  REQUIRE(idx.open(*posix_file_system::shared(), p, 12 * 10, mode::keep));
  idx.truncate_to_offset(offset(20));
  CHECK(idx.entries() == 1);
}

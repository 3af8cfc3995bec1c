#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <brook/storage/offset_index.hpp>

#include "support/checks.hpp"
#include "support/seeds.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using mode = detail::index_file::mode;

TEST_CASE("offset index stores Kafka's 8-byte big-endian entries", "[storage][offset_index]") {
  test::temp_dir t;
  fs::path p = t / "00000000000000000100.index";
  {
    offset_index idx(offset(100));
    REQUIRE(idx.open(*posix_file_system::shared(), p, 4096, mode::fresh));
    CHECK(fs::file_size(p) == 4096);  // preallocated
    REQUIRE_OK(idx.append(offset(105), file_pos(0x1234)));
    REQUIRE_OK(idx.append(offset(300), file_pos(0x20000)));
    REQUIRE(idx.trim_and_sync());
    CHECK(fs::file_size(p) == 16);  // trimmed to its entries
  }
  std::ifstream in(p, std::ios::binary);
  std::vector<unsigned char> b((std::istreambuf_iterator<char>(in)), {});
  CHECK(b == std::vector<unsigned char>{0, 0, 0, 5, 0, 0, 0x12, 0x34, 0, 0, 0, 200, 0, 2, 0, 0});
}

TEST_CASE("offset index lookup finds the greatest entry at or below the target", "[storage][offset_index]") {
  test::temp_dir t;
  offset_index idx(offset(1000));
  REQUIRE(idx.open(*posix_file_system::shared(), t / "i", 8 * 100, mode::fresh));
  for (int i = 1; i <= 50; ++i) REQUIRE_OK(idx.append(offset(1000 + 10 * i), file_pos(100 * i)));
  CHECK(idx.lookup(offset(999)).position == file_pos(0));
  CHECK(idx.lookup(offset(1005)).offset == offset(1000));  // before the first entry: segment start
  CHECK(idx.lookup(offset(1010)).position == file_pos(100));
  CHECK(idx.lookup(offset(1019)).position == file_pos(100));
  CHECK(idx.lookup(offset(1020)).position == file_pos(200));
  CHECK(idx.lookup(offset(99999)).position == file_pos(5000));
  SECTION("lookup_with_next also names the entry after it, the first above the target") {
    auto b = idx.lookup_with_next(offset(1005));
    CHECK(b.at_or_below.position == file_pos(0));
    REQUIRE(b.next);
    CHECK(b.next->offset == offset(1010));
    CHECK(b.next->position == file_pos(100));
    b = idx.lookup_with_next(offset(1019));
    CHECK(b.at_or_below.position == file_pos(100));
    REQUIRE(b.next);
    CHECK(b.next->position == file_pos(200));
    b = idx.lookup_with_next(offset(1020));
    CHECK(b.at_or_below.position == file_pos(200));
    REQUIRE(b.next);
    CHECK(b.next->position == file_pos(300));
    CHECK_FALSE(idx.lookup_with_next(offset(1500)).next);  // the last entry
    CHECK_FALSE(idx.lookup_with_next(offset(99999)).next);
  }
  SECTION("first_above numbers the first entry past the target") {
    const std::size_t n = idx.entries();
    CHECK(idx.first_above(offset(0), n) == 0);
    CHECK(idx.first_above(offset(1009), n) == 0);
    CHECK(idx.first_above(offset(1010), n) == 1);
    CHECK(idx.first_above(offset(1019), n) == 1);
    CHECK(idx.first_above(offset(1499), n) == 49);
    CHECK(idx.first_above(offset(1500), n) == 50);   // none: n
    CHECK(idx.first_above(offset(1300), 10) == 10);  // only the first 10 entries searched
  }
  idx.truncate_to_position(file_pos(250));
  CHECK(idx.entries() == 2);
  CHECK(idx.lookup(offset(99999)).position == file_pos(200));
  CHECK_FALSE(idx.lookup_with_next(offset(1020)).next);
  CHECK(idx.lookup_with_next(offset(1019)).next->position == file_pos(200));
}

TEST_CASE("offset index sanity check rejects entries a log cannot have", "[storage][offset_index]") {
  test::temp_dir t;
  offset_index idx(offset(0));
  REQUIRE(idx.open(*posix_file_system::shared(), t / "i", 8 * 10, mode::fresh));
  REQUIRE_OK(idx.append(offset(5), file_pos(100)));
  REQUIRE_OK(idx.append(offset(9), file_pos(200)));
  CHECK(idx.sanity_check(1000, offset(10)));
  CHECK_FALSE(idx.sanity_check(150, offset(10)));    // position past the log
  CHECK_FALSE(idx.sanity_check(1000, offset(9)));    // offset past the segment's end
  REQUIRE_OK(idx.append(offset(9), file_pos(300)));  // offset does not increase
  CHECK_FALSE(idx.sanity_check(1000, offset(10)));
}

TEST_CASE("an index fills at segment.index.bytes", "[storage][offset_index]") {
  test::temp_dir t;
  offset_index idx(offset(0));
  REQUIRE(idx.open(*posix_file_system::shared(), t / "i", 8 * 3, mode::fresh));
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(idx.full());
    REQUIRE_OK(idx.append(offset(i), file_pos(i * 10)));
  }
  CHECK(idx.full());
}

TEST_CASE("keep mode reopens existing entries and read-only mode maps them", "[storage][offset_index]") {
  test::temp_dir t;
  {
    offset_index idx(offset(0));
    REQUIRE(idx.open(*posix_file_system::shared(), t / "i", 8 * 10, mode::fresh));
    REQUIRE_OK(idx.append(offset(3), file_pos(10)));
    REQUIRE(idx.trim_and_sync());
  }
  {
    offset_index idx(offset(0));
    REQUIRE(idx.open(*posix_file_system::shared(), t / "i", 0, mode::read_only));
    CHECK(idx.entries() == 1);
    CHECK(fs::file_size(t / "i") == 8);
  }
  offset_index idx(offset(0));
  REQUIRE(idx.open(*posix_file_system::shared(), t / "i", 8 * 10, mode::keep));
  CHECK(idx.entries() == 1);
  REQUIRE_OK(idx.append(offset(7), file_pos(20)));
  CHECK(idx.lookup(offset(8)).position == file_pos(20));
}

TEST_CASE("offset index first_above agrees with a linear scan on even and uneven entries", "[storage][offset_index]") {
  const auto seed = brook::test::property_seed(1);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 1: rerun with the same base)");
  std::mt19937_64 rng(seed);
  test::temp_dir t;
  for (int iter = 0; iter < 60; ++iter) {
    INFO("iteration " << iter);
    offset_index idx(offset(5000));
    std::string name = "i";  // appended piecewise: `"i" + ...` trips GCC 12's false -Wrestrict
    name += std::to_string(iter);
    REQUIRE(idx.open(*posix_file_system::shared(), t / name, 8 * 4096, mode::fresh));
    const auto n = static_cast<std::size_t>(std::uniform_int_distribution<int>(0, 3000)(rng));
    const int shape = iter % 3;  // even steps; steps of 1-1000; runs of even steps with jumps
    std::int64_t at = 5000;
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t step = 148;
      if (shape == 1) step = std::uniform_int_distribution<std::int64_t>(1, 1000)(rng);
      if (shape == 2 && i % 200 == 199) step = 1'000'000;
      at += step;
      REQUIRE_OK(idx.append(offset(at), file_pos(static_cast<std::int64_t>(i) * 100 + 7)));
    }
    std::vector<std::int64_t> offsets;
    for (std::size_t i = 0; i < n; ++i) offsets.push_back(idx.at(i).offset.value());
    std::uniform_int_distribution<std::int64_t> pick(4990, at + 10);
    for (int q = 0; q < 300; ++q) {
      // First the edges (below the first entry, at it, at the last, past it) and four inner
      // entries and their neighbours; then at random.
      std::int64_t target = pick(rng);
      if (n > 0 && q < 4) {
        const std::int64_t edges[] = {offsets.front() - 1, offsets.front(), offsets.back(), offsets.back() + 1};
        target = edges[q];
      } else if (n > 0 && q < 8) {
        target = offsets[static_cast<std::size_t>(q - 4) * (n - 1) / 3] + (q % 2);
      }
      const auto want =
          static_cast<std::size_t>(std::upper_bound(offsets.begin(), offsets.end(), target) - offsets.begin());
      INFO("target " << target << " of " << n << " entries");
      REQUIRE(idx.first_above(offset(target), n) == want);
      const std::size_t part = n / 2;  // only the first half searched
      const auto want_part = static_cast<std::size_t>(
          std::upper_bound(offsets.begin(), offsets.begin() + static_cast<std::ptrdiff_t>(part), target) -
          offsets.begin());
      REQUIRE(idx.first_above(offset(target), part) == want_part);
    }
  }
}

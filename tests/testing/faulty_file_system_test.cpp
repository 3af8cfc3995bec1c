// brook/testing/faulty_file_system.hpp, and what a partition log does when the I/O seam fails
// a call: the error comes back named, and nothing acknowledged is lost.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <system_error>

#include <brook/storage/partition_log.hpp>
#include <brook/testing/faulty_file_system.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using brook::test::make_batch;
using brook::test::read_all;
using brook::test::temp_dir;
using brook::testing::faulty_file_system;

namespace {

const std::error_code enospc(ENOSPC, std::system_category());

log_config faulty_config(const std::shared_ptr<faulty_file_system>& files) {
  log_config c;
  c.segment_bytes = 2048;  // a roll every few batches
  c.segment_index_bytes = 4096;
  c.index_interval_bytes = 256;
  c.files = files;
  return c;
}

// One cycle of a log's writes: appends across several rolls, a flush, a truncation and a
// close. Returns the value of each record whose append was acknowledged, by offset.
std::map<std::int64_t, std::string> run_cycle(partition_log& log) {
  std::map<std::int64_t, std::string> acked;
  for (int b = 0; b < 12; ++b) {
    std::string tag = "b";  // built piecewise: `"b" + ...` trips GCC 12's false -Wrestrict
    tag += std::to_string(b);
    auto batch = make_batch(4, 1000 + b, tag, 200);
    auto r = log.append(batch);
    if (!r) continue;
    for (int i = 0; i < 4; ++i) {
      std::string v = tag;
      v += '-';
      v += std::to_string(i);
      v.resize(200, 'x');  // as make_batch pads it
      acked[r->base_offset.value() + i] = v;
    }
    if (b == 6) (void)log.flush();
  }
  (void)log.flush();
  return acked;
}

}  // namespace

TEST_CASE("faulty file system: fails the Nth mutating call once, or from then on") {
  temp_dir t("brook-faulty");
  auto files = std::make_shared<faulty_file_system>();
  files->fail_at(2, ENOSPC);
  REQUIRE_OK(files->create_directories(t.path() / "a"));  // 1
  auto second = files->create_directories(t.path() / "b");
  REQUIRE_FALSE(second);
  CHECK(second.error().code() == enospc);
  CHECK_THAT(second.error().message(), Catch::Contains("injected"));
  CHECK_FALSE(files->exists(t.path() / "b").value());     // a failed call does nothing
  REQUIRE_OK(files->create_directories(t.path() / "c"));  // once: the third succeeds
  CHECK(files->mutations() == 3);
  CHECK(files->failures().size() == 1);
  // Reads are not counted and never fail.
  REQUIRE_OK(files->list(t.path()));
  CHECK(files->mutations() == 3);

  files->fail_at(1, EIO, /*sticky=*/true);
  CHECK_FALSE(files->create_directories(t.path() / "d"));
  CHECK_FALSE(files->create_directories(t.path() / "e"));
  files->revive();
  REQUIRE_OK(files->create_directories(t.path() / "e"));
}

TEST_CASE("faulty file system: kill stops every write until revive") {
  temp_dir t("brook-faulty");
  auto files = std::make_shared<faulty_file_system>();
  auto f = brook::file_handle::open(*files, t.path() / "x", O_RDWR | O_CREAT);
  REQUIRE_OK(f);
  files->kill();
  const std::string text = "lost";
  auto w = f->pwrite_all(std::as_bytes(std::span(text.data(), text.size())), 0);
  REQUIRE_FALSE(w);
  CHECK(w.error().code() == std::error_code(EIO, std::system_category()));
  CHECK_FALSE(f->datasync());
  CHECK_FALSE(brook::file_handle::open(*files, t.path() / "y", O_WRONLY | O_CREAT));
  CHECK(brook::file_handle::open(*files, t.path() / "x", O_RDONLY));  // reading still works
  CHECK(f->size().value() == 0);
  files->revive();
  REQUIRE_OK(f->pwrite_all(std::as_bytes(std::span(text.data(), text.size())), 0));
  CHECK(f->size().value() == text.size());
}

TEST_CASE("a partition log writes through its log_config's file system") {
  temp_dir t("brook-faulty");
  auto files = std::make_shared<faulty_file_system>();
  auto log = partition_log::open(t.path() / "t-0", faulty_config(files));
  REQUIRE_OK(log);
  const auto opened = files->mutations();
  CHECK(opened > 0);  // directory, lock file, segment and index files, checkpoints
  auto first = make_batch(3);
  REQUIRE_OK((*log)->append(first));
  CHECK(files->mutations() > opened);
  files->fail_at(1, ENOSPC, /*sticky=*/true);
  auto second = make_batch(3);
  auto r = (*log)->append(second);
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == enospc);
  CHECK((*log)->log_end_offset() == offset(3));  // the failed append took no offset
  files->revive();
  auto third = make_batch(2);
  REQUIRE_OK((*log)->append(third));
  CHECK((*log)->log_end_offset() == offset(5));
}

TEST_CASE("a partition log loses no acknowledged record whichever write of a cycle fails") {
  // Count the mutating calls of one cycle, then fail each of them in turn (once, and from
  // then on), and reopen with the kernel's file system: every acknowledged record is there,
  // at its offset, with its value.
  std::uint64_t calls = 0;
  {
    temp_dir t("brook-faulty");
    auto files = std::make_shared<faulty_file_system>();
    auto log = partition_log::open(t.path() / "t-0", faulty_config(files));
    REQUIRE_OK(log);
    const auto before = files->mutations();
    CHECK(run_cycle(**log).size() == 48);
    REQUIRE_OK((*log)->close());
    calls = files->mutations() - before;
  }
  REQUIRE(calls > 20);
  for (const bool sticky : {false, true}) {
    for (std::uint64_t n = 1; n <= calls; ++n) {
      INFO("mutating call " << n << " of " << calls << (sticky ? ", and every one after it" : ", once"));
      temp_dir t("brook-faulty");
      auto files = std::make_shared<faulty_file_system>();
      std::map<std::int64_t, std::string> acked;
      {
        auto log = partition_log::open(t.path() / "t-0", faulty_config(files));
        REQUIRE_OK(log);
        files->fail_at(n, n % 2 ? ENOSPC : EIO, sticky);
        acked = run_cycle(**log);
        (void)(*log)->close();
      }
      CHECK(files->failures().size() >= 1);
      auto reopened = partition_log::open(t.path() / "t-0");
      REQUIRE_OK(reopened);
      const auto records = read_all(**reopened);
      std::map<std::int64_t, std::string> found;
      for (const auto& r : records) found[r.offset] = r.value;
      for (const auto& [off, value] : acked) {
        INFO("offset " << off);
        REQUIRE(found.count(off) == 1);
        CHECK(found.at(off) == value);
      }
    }
  }
}

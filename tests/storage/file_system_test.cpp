// The I/O seam's POSIX implementation and the helpers over it (storage/file_system.hpp,
// storage/file.hpp).
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <string>
#include <system_error>

#include <brook/storage/file.hpp>
#include <brook/storage/file_system.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using brook::test::temp_dir;

namespace {
file_system& posix() { return *posix_file_system::shared(); }
}  // namespace

TEST_CASE("posix file system: write, read, size, truncate through a handle") {
  temp_dir t("brook-fs");
  auto f = brook::file_handle::open(posix(), t.path() / "a", O_RDWR | O_CREAT);
  REQUIRE_OK(f);
  const std::string text = "hello, seam";
  REQUIRE_OK(f->pwrite_all(std::as_bytes(std::span(text.data(), text.size())), 4));
  CHECK(f->size().value() == 4 + text.size());
  std::string back(text.size(), '\0');
  REQUIRE_OK(f->pread_all(std::as_writable_bytes(std::span(back)), 4));
  CHECK(back == text);
  REQUIRE_OK(f->truncate(6));
  CHECK(f->size().value() == 6);
  REQUIRE_OK(f->datasync());
  REQUIRE_OK(f->sync());
  // Reading past the end is a named error, not a short read.
  auto past = f->pread_all(std::as_writable_bytes(std::span(back)), 4);
  REQUIRE_FALSE(past);
  CHECK(past.error() == errc::kafka_storage_error);
  CHECK_THAT(past.error().message(), Catch::Contains("unexpected end of file at byte"));
}

TEST_CASE("posix file system: errors carry errno and the path") {
  temp_dir t("brook-fs");
  auto missing = brook::file_handle::open(posix(), t.path() / "nope", O_RDONLY);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code() == std::error_code(ENOENT, std::system_category()));
  CHECK_THAT(missing.error().message(), Catch::Contains((t.path() / "nope").string()));
  auto ren = posix().rename(t.path() / "nope", t.path() / "other");
  REQUIRE_FALSE(ren);
  CHECK_THAT(ren.error().message(), Catch::Contains("rename"));
}

TEST_CASE("posix file system: names: kind, list, rename, remove, remove_all") {
  temp_dir t("brook-fs");
  CHECK(posix().kind(t.path() / "d").value() == file_kind::none);
  REQUIRE_OK(posix().create_directories(t.path() / "d" / "e"));
  CHECK(posix().kind(t.path() / "d").value() == file_kind::directory);
  REQUIRE_OK(brook::file_handle::open(posix(), t.path() / "d" / "f", O_WRONLY | O_CREAT));
  CHECK(posix().kind(t.path() / "d" / "f").value() == file_kind::regular);
  auto entries = posix().list(t.path() / "d");
  REQUIRE_OK(entries);
  REQUIRE(entries->size() == 2);
  REQUIRE_OK(posix().rename(t.path() / "d" / "f", t.path() / "d" / "g"));
  CHECK(posix().exists(t.path() / "d" / "g").value());
  CHECK(posix().remove(t.path() / "d" / "g").value());
  CHECK_FALSE(posix().remove(t.path() / "d" / "g").value());  // already gone: false, not an error
  CHECK(posix().remove_all(t.path() / "d").value() == 2);
  CHECK_FALSE(posix().exists(t.path() / "d").value());
  REQUIRE_OK(posix().sync_directory(t.path()));
  CHECK_FALSE(posix().list(t.path() / "d"));
}

TEST_CASE("posix file system: a second lock on a file is refused, not an error") {
  temp_dir t("brook-fs");
  auto a = brook::file_handle::open(posix(), t.path() / ".lock", O_RDWR | O_CREAT);
  auto b = brook::file_handle::open(posix(), t.path() / ".lock", O_RDWR);
  REQUIRE_OK(a);
  REQUIRE_OK(b);
  CHECK(a->try_lock().value());
  CHECK_FALSE(b->try_lock().value());
  a->reset();
  CHECK(b->try_lock().value());
}

TEST_CASE("replace_file and read_small_file: whole files, replaced atomically, bounded") {
  temp_dir t("brook-fs");
  const auto p = t.path() / "cfg";
  REQUIRE_OK(replace_file(posix(), p, "one\n"));
  REQUIRE_OK(replace_file(posix(), p, "two\n"));
  CHECK(read_small_file(posix(), p).value() == "two\n");
  CHECK_FALSE(posix().exists(t.path() / "cfg.tmp").value());
  auto big = read_small_file(posix(), p, 3);
  REQUIRE_FALSE(big);
  CHECK(big.error() == errc::kafka_storage_error);
  CHECK_THAT(big.error().message(), Catch::Contains("4 bytes"));
}

// Tests of tools/commands/cli_codecs.hpp built as a tool built with gzip only
// (tests/tools/CMakeLists.txt defines BROOK_CLI_CODEC_GZIP alone for this file): what the
// tool says about a batch of a codec it was built without, which the `brook` tool of a test
// build (every codec) can never show.
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include <brook/format/record_batch_builder.hpp>

#include "commands/cli_codecs.hpp"
#include "support/test_codecs.hpp"

namespace {

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("the tool's codecs are exactly the ones it was built with", "[tools][cli][compression]") {
  const brook::compression_codecs c = brook::cli::cli_codec_set();
  CHECK(c.find(brook::compression_type::none) != nullptr);
  CHECK(c.find(brook::compression_type::gzip) != nullptr);
  CHECK(c.find(brook::compression_type::snappy) == nullptr);
  CHECK(c.find(brook::compression_type::lz4) == nullptr);
  CHECK(c.find(brook::compression_type::zstd) == nullptr);
  CHECK(brook::cli::codec_names(c) == "none, gzip");
  CHECK(brook::cli::cli_log_config().codecs->find(brook::compression_type::gzip) != nullptr);
  CHECK(brook::cli::cli_data_dir_options().defaults.codecs->find(brook::compression_type::gzip) != nullptr);

  auto z = brook::cli::cli_codec(brook::compression_type::zstd);
  REQUIRE_FALSE(z);
  CHECK(z.error() == brook::errc::unsupported_compression_type);
  CHECK(z.error().message() ==
        "this brook was built without the zstd codec (it reads none, gzip): install libzstd (libzstd-dev) and build "
        "brook again");
  CHECK(brook::cli::cli_codec(brook::compression_type::gzip));
}

TEST_CASE("parse_batch names a codec the tool was built without", "[tools][cli][compression]") {
  const brook::compression_codecs all = brook::test::all_codecs();
  brook::batch_decompressor d = brook::cli::cli_decompressor();
  brook::record_batch_builder b;
  b.reset(brook::offset(7));
  b.append(1'700'000'000'000, "k", std::string(100, 'v'));
  b.append(1'700'000'000'001, "k", "w");

  SECTION("snappy: not built") {
    auto batch = b.finish(**all.get(brook::compression_type::snappy), 0);
    REQUIRE(batch);
    auto v = brook::cli::parse_batch(*batch, d, std::string_view("x.log at byte 0"));
    REQUIRE_FALSE(v);
    CHECK(v.error() == brook::errc::unsupported_compression_type);
    CHECK(v.error().message() ==
          "x.log at byte 0: batch at offset 7 is snappy-compressed, and this brook was built without the snappy "
          "codec (it reads none, gzip): install libsnappy (libsnappy-dev) and build brook again");
  }
  SECTION("gzip: built, records read") {
    auto batch = b.finish(**all.get(brook::compression_type::gzip), -1);
    REQUIRE(batch);
    auto v = brook::cli::parse_batch(*batch, d, [] { return std::string("lazy where"); });
    REQUIRE(v);
    CHECK(v->compression() == brook::compression_type::gzip);
    REQUIRE(v->record_count() == 2);
    auto it = v->begin();
    CHECK(it->value().as_string_view() == std::string(100, 'v'));
  }
  SECTION("a damaged batch of a missing codec is corrupt, not unsupported") {
    auto batch = b.finish(**all.get(brook::compression_type::lz4), 9);
    REQUIRE(batch);
    (*batch)[batch->size() - 1] ^= std::byte{0x01};  // the CRC no longer matches
    auto v = brook::cli::parse_batch(*batch, d, std::string_view("x.log at byte 0"));
    REQUIRE_FALSE(v);
    CHECK(v.error() == brook::errc::corrupt_message);
    CHECK(contains(v.error().message(), "x.log at byte 0"));
  }
}

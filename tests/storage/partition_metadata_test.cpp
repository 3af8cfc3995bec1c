// partition.metadata (storage/partition_metadata.hpp): Kafka's exact bytes, the round trip
// through a directory, and every malformed file a named error.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <brook/storage/partition_metadata.hpp>

#include "support/checks.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using brook::test::temp_dir;

namespace {

// Kafka's UuidTest uses this id; its bytes are 51 7c 94 f6 2e 40 46 7e 96 d3 43 8d da d6 9e 58
// (Python's base64.urlsafe_b64decode agrees).
const uuid kafka_id = uuid::from_parts(0x517c94f62e40467eULL, 0x96d3438ddad69e58ULL);

// What PartitionMetadata.encode() writes for it: "version: " + 0 + "\ntopic_id: " + id, no
// newline at the end (PartitionMetadataFileTest reads back exactly these two lines).
const std::string kafka_text = "version: 0\ntopic_id: UXyU9i5ARn6W00ON2taeWA";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename T>
void require_storage_error(const result<T>& r) {
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == errc::kafka_storage_error);
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

TEST_CASE("partition.metadata holds Kafka's exact bytes", "[storage][partition_metadata]") {
  CHECK(format_partition_metadata(kafka_id) == kafka_text);
  CHECK(kafka_text.size() == partition_metadata_size);
  auto back = parse_partition_metadata(kafka_text, "x");
  REQUIRE_OK(back);
  CHECK(*back == kafka_id);

  temp_dir t;
  REQUIRE_OK(write_partition_metadata(*posix_file_system::shared(), t.path(), kafka_id));
  CHECK(slurp(t.path() / "partition.metadata") == kafka_text);
  CHECK_FALSE(fs::exists(t.path() / "partition.metadata.tmp"));
  auto read = read_partition_metadata(*posix_file_system::shared(), t.path());
  REQUIRE_OK(read);
  REQUIRE(read->has_value());
  CHECK(**read == kafka_id);
}

TEST_CASE("partition.metadata round trips random ids and reads what Kafka tolerates", "[storage][partition_metadata]") {
  std::mt19937_64 rng(16);
  for (int i = 0; i < 200; ++i) {
    const uuid id = uuid::random(rng);
    auto back = parse_partition_metadata(format_partition_metadata(id), "x");
    REQUIRE_OK(back);
    CHECK(*back == id);
  }
  SECTION("a trailing newline, CRLF lines, more whitespace after the colon") {
    for (const std::string& text :
         {kafka_text + "\n", std::string("version: 0\r\ntopic_id: UXyU9i5ARn6W00ON2taeWA\r\n"),
          std::string("version:  0\ntopic_id:\tUXyU9i5ARn6W00ON2taeWA")}) {
      INFO(text);
      auto r = parse_partition_metadata(text, "x");
      REQUIRE_OK(r);
      CHECK(*r == kafka_id);
    }
  }
  SECTION("a later version keeps the id on its second line (Kafka reads it for downgrades)") {
    auto r = parse_partition_metadata("version: 1\ntopic_id: UXyU9i5ARn6W00ON2taeWA\nsomething: new\n", "x");
    REQUIRE_OK(r);
    CHECK(*r == kafka_id);
  }
  SECTION("Kafka's metadata topic id (00..01) is a valid id on disk") {
    auto r = parse_partition_metadata("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ", "x");
    REQUIRE_OK(r);
    CHECK(*r == uuid::from_parts(0, 1));
  }
}

TEST_CASE("a missing partition.metadata reads as no id", "[storage][partition_metadata]") {
  temp_dir t;
  auto r = read_partition_metadata(*posix_file_system::shared(), t.path());
  REQUIRE_OK(r);
  CHECK_FALSE(r->has_value());
}

TEST_CASE("hostile partition.metadata files are named errors", "[storage][partition_metadata]") {
  const std::string id = "UXyU9i5ARn6W00ON2taeWA";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"garbage",
       "\x7f"
       "ELF\x01\x02\x03 not a metadata file"},
      {"truncated after the version", "version: 0\n"},
      {"truncated in the id", "version: 0\ntopic_id: UXyU9i5ARn6W00O"},
      {"truncated in the key", "version: 0\ntopic_"},
      {"negative version", "version: -1\ntopic_id: " + id},
      {"version not a number", "version: zero\ntopic_id: " + id},
      {"no space after the colon", "version:0\ntopic_id: " + id},
      {"other keys", "Metadata schema version: 0\nTopic ID: " + id},
      {"lines swapped", "topic_id: " + id + "\nversion: 0"},
      {"bad base64 character", "version: 0\ntopic_id: UXyU9i5ARn6W00ON2taeW+"},
      {"standard base64 alphabet", "version: 0\ntopic_id: UXyU9i5ARn6W00ON2tae/A"},
      {"bits past the 128", "version: 0\ntopic_id: UXyU9i5ARn6W00ON2taeWB"},
      {"too long", "version: 0\ntopic_id: " + id + "AAAA"},
      {"the zero id", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"},
      {"two values", "version: 0\ntopic_id: " + id + " " + id},
  };
  temp_dir t;
  for (const auto& [why, text] : bad) {
    INFO(why);
    auto parsed = parse_partition_metadata(text, "x");
    require_storage_error(parsed);
    spit(t.path() / "partition.metadata", text);
    auto read = read_partition_metadata(*posix_file_system::shared(), t.path());
    require_storage_error(read);
    CHECK_THAT(read.error().message(), Catch::Contains("partition.metadata"));
  }
  SECTION("a file too large to be one") {
    spit(t.path() / "partition.metadata", kafka_text + std::string(8192, '\n'));
    require_storage_error(read_partition_metadata(*posix_file_system::shared(), t.path()));
  }
  SECTION("a directory in its place") {
    fs::remove(t.path() / "partition.metadata");
    fs::create_directory(t.path() / "partition.metadata");
    require_storage_error(read_partition_metadata(*posix_file_system::shared(), t.path()));
  }
}

#include <catch2/catch.hpp>

#include <brook/group/offset_store.hpp>

#include "group_support.hpp"
#include "support/checks.hpp"

using namespace brook;
using brook::test::tp;

namespace {
std::unique_ptr<offset_store> open_store(data_dir& dd, std::int32_t partitions = 3) {
  auto s = offset_store::open(dd, partitions);
  REQUIRE_OK(s);
  return std::move(*s);
}
offset_and_metadata om(std::int64_t o, std::string md = {}, timestamp_ms t = 100) {
  return offset_and_metadata{offset(o), 4, std::move(md), t};
}
}  // namespace

TEST_CASE("offset_store: creates a compacted __consumer_offsets and keeps its partition count",
          "[group][offset_store]") {
  brook::test::group_env env;  // its coordinator created the topic with 3 partitions
  auto s = open_store(*env.dd, 7);
  CHECK(s->partitions() == 3);  // an existing topic keeps its count: the group mapping depends on it
  CHECK(s->partition_for("my-consumer-group") == offsets_topic_partition_for("my-consumer-group", 3));
  auto p = env.dd->get_partition(offset_store::topic_name, partition_id(0));
  REQUIRE_OK(p);
  CHECK((*p)->log().config().compacts());
  CHECK(offset_store::open(*env.dd, 0).error() == errc::invalid_partitions);
}

TEST_CASE("offset_store: load replays offsets, metadata and tombstones to the latest state", "[group][offset_store]") {
  brook::test::group_env env;
  env.create_topic("t", 2);
  auto s = open_store(*env.dd);
  REQUIRE_OK(s->append_offsets("g", {{tp("t", 0), om(5, "first")}, {tp("t", 1), om(9)}}, 100));
  REQUIRE_OK(s->append_offsets("g", {{tp("t", 0), om(7, "second", 200)}}, 200));
  REQUIRE_OK(s->append_offsets("h", {{tp("t", 0), om(1)}}, 100));
  group_metadata_value md;
  md.protocol_type = "consumer";
  md.generation = 3;
  REQUIRE_OK(s->append_group_metadata("g", md, 300));
  REQUIRE_OK(s->append_tombstones("g", {tp("t", 1)}, false, 400));
  REQUIRE_OK(s->append_tombstones("h", {tp("t", 0)}, true, 400));

  auto loaded = s->load();
  REQUIRE_OK(loaded);
  REQUIRE(loaded->size() == 1);  // h: its only offset and its metadata deleted
  const stored_group& g = loaded->at("g");
  REQUIRE(g.metadata);
  CHECK(g.metadata->generation == 3);
  REQUIRE(g.offsets.size() == 1);
  CHECK(g.offsets.at(tp("t", 0)) == om(7, "second", 200));

  env.reopen();  // the same state after a restart, read from the files
  auto again = open_store(*env.dd)->load();
  REQUIRE_OK(again);
  CHECK(again->at("g").offsets.at(tp("t", 0)) == om(7, "second", 200));
}

TEST_CASE("offset_store: a record that does not decode fails the load naming where", "[group][offset_store]") {
  brook::test::group_env env;
  auto s = open_store(*env.dd);
  auto part = env.dd->get_partition(offset_store::topic_name, partition_id(s->partition_for("g")));
  REQUIRE_OK(part);
  record_batch_builder b;
  const std::string key("\x00\x01garbage", 9);  // a version-1 (offset commit) key whose group is cut short
  b.append(1, nullable_bytes(std::string_view(key.data(), key.size())), nullable_bytes(std::string_view("v")));
  REQUIRE_OK((*part)->append(b.finish()));
  auto r = s->load();
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == errc::corrupt_message);
  CHECK_THAT(r.error().message(), Catch::Contains("__consumer_offsets-"));
}

// <brook/storage.hpp> compiles on its own (it is this file's first include) and carries
// what it promises: building a batch, a data directory, a partition log.
#include <brook/storage.hpp>

#include <catch2/catch.hpp>
#include <vector>

#include "support/temp_dir.hpp"

TEST_CASE("<brook/storage.hpp>: a batch appended to a data directory's partition reads back") {
  brook::test::temp_dir t("brook-umbrella");
  auto dd = brook::data_dir::open(t.path() / "data");
  REQUIRE(dd.has_value());
  REQUIRE((*dd)->create_topic("orders").has_value());
  auto p = (*dd)->get_partition("orders", brook::partition_id(0));
  REQUIRE(p.has_value());
  brook::record_batch_builder b;
  b.append(1'000, "k", "v0");
  b.append(1'001, "k", "v1");
  auto bytes = b.finish();
  std::vector<std::byte> batch(bytes.begin(), bytes.end());
  auto appended = (*p)->append(batch);
  REQUIRE(appended.has_value());
  CHECK(appended->last_offset == brook::offset(1));
  auto slice = (*p)->log().read(brook::offset(0));
  REQUIRE(slice.has_value());
  std::vector<std::string> values;
  REQUIRE(slice->for_each_record([&](const brook::record_view& r) { values.push_back(r.value().to_string()); }));
  CHECK(values == std::vector<std::string>{"v0", "v1"});
  REQUIRE((*dd)->close().has_value());
}

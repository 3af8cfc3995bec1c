// brook::node: the embedded facade. Produce and group-consume through it, committed offsets
// across a reopen, the one-process defaults, housekeeping without the host asking, the
// lifetime rules of the handles it gives out, and its errors.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/core/clock.hpp>
#include <brook/embedded.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/replication_helpers.hpp"  // REQUIRE_OK
#include "support/temp_dir.hpp"

using namespace brook;
using brook::testing::manual_clock;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<node> open_node(const std::filesystem::path& dir, node_options opts = {}) {
  auto n = node::open(dir, std::move(opts));
  if (!n) FAIL("node::open: " << n.error().to_string());
  return std::move(*n);
}

void produce(node& n, const std::string& topic, int count, const std::string& prefix) {
  auto p = n.make_producer();
  std::vector<std::string> values;
  for (int i = 0; i < count; ++i) values.push_back(fmt::format("{}{}", prefix, i));
  int failed = 0;
  for (const auto& v : values) p->send({.topic = topic, .key = v, .value = v}, [&](const auto& md) { failed += !md; });
  REQUIRE_OK(p->flush());
  REQUIRE(failed == 0);
}

/// Polls a group member until `count` records arrived (or 30 s passed); returns their values.
std::vector<std::string> consume(group_consumer& c, std::size_t count) {
  std::vector<std::string> seen;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (seen.size() < count && std::chrono::steady_clock::now() < deadline) {
    auto recs = c.poll(200ms);
    if (!recs) FAIL("poll: " << recs.error().to_string());
    for (const auto& r : *recs) seen.push_back(r.value().to_string());
  }
  return seen;
}

group_consumer_config group(const std::string& id) {
  return {.group_id = id, .consumer = {.auto_offset_reset = offset_reset::earliest}};
}

}  // namespace

TEST_CASE("node: produce, consume through a group, and resume from the commit after a reopen", "[embedded][node]") {
  test::temp_dir tmp("brook-node");
  {
    auto n = open_node(tmp.path());
    REQUIRE_OK(n->create_topic("events", {.partitions = 3}));
    produce(*n, "events", 30, "a");
    auto c = n->make_group_consumer(group("g"));
    REQUIRE_OK(c->subscribe({"events"}));
    CHECK(consume(*c, 30).size() == 30);
    REQUIRE_OK(c->close());  // commits the positions
    c.reset();
    REQUIRE_OK(n->close());
  }
  auto n = open_node(tmp.path());
  CHECK(n->create_topic("events", {.partitions = 3}) == errc::topic_already_exists);
  produce(*n, "events", 5, "b");
  auto c = n->make_group_consumer(group("g"));
  REQUIRE_OK(c->subscribe({"events"}));
  auto seen = consume(*c, 5);
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"b0", "b1", "b2", "b3", "b4"});  // nothing of the first run again
}

TEST_CASE("node: one-process defaults: __consumer_offsets has one partition, Kafka's other settings stay",
          "[embedded][node]") {
  test::temp_dir tmp("brook-node");
  auto n = open_node(tmp.path());
  auto parts = n->dir().partition_count("__consumer_offsets");
  REQUIRE_OK(parts);
  CHECK(*parts == 1);
  CHECK(n->coordinator().config().group_initial_rebalance_delay == 0ms);
  CHECK(n->coordinator().config().group_min_session_timeout == coordinator_config{}.group_min_session_timeout);

  SECTION("Kafka's own group defaults when the host asks for them") {
    test::temp_dir other("brook-node");
    auto k = open_node(other.path(), {.groups = coordinator_config{}});
    auto kp = k->dir().partition_count("__consumer_offsets");
    REQUIRE_OK(kp);
    CHECK(*kp == 50);
  }
}

TEST_CASE("node: housekeeping runs on its own: retention.ms deletes old segments", "[embedded][node]") {
  test::temp_dir tmp("brook-node");
  auto clk = std::make_shared<manual_clock>(1'700'000'000'000);
  node_options opts;
  opts.dir.defaults.clock = clk;
  opts.housekeeping_interval = 5ms;
  auto n = open_node(tmp.path(), opts);
  REQUIRE_OK(
      n->create_topic("old", {.partitions = 1, .overrides = {{"retention.ms", "1000"}, {"segment.bytes", "1024"}}}));
  for (int i = 0; i < 20; ++i) produce(*n, "old", 10, "value-with-some-bytes-");  // a batch each: ~10 segments
  auto part = n->dir().get_partition("old", partition_id(0));
  REQUIRE_OK(part);
  REQUIRE((*part)->log().segment_count() > 2);
  CHECK((*part)->log_start_offset() == offset(0));
  clk->advance(10'000);  // every sealed segment is now past retention.ms
  // Nothing here calls tick(): the node's housekeeping thread must. Wait for it (bounded).
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((*part)->log_start_offset() == offset(0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  CHECK((*part)->log_start_offset() > offset(0));
  CHECK_FALSE(n->last_housekeeping_error());

  SECTION("with housekeeping off, only the host's tick() deletes") {
    test::temp_dir other("brook-node");
    node_options off = opts;
    off.housekeeping_interval = 0ms;
    auto m = open_node(other.path(), off);
    REQUIRE_OK(
        m->create_topic("old", {.partitions = 1, .overrides = {{"retention.ms", "1000"}, {"segment.bytes", "1024"}}}));
    for (int i = 0; i < 20; ++i) produce(*m, "old", 10, "value-with-some-bytes-");
    clk->advance(10'000);
    auto mp = m->dir().get_partition("old", partition_id(0));
    REQUIRE_OK(mp);
    std::this_thread::sleep_for(50ms);  // ten housekeeping intervals of the other node: none runs here
    CHECK((*mp)->log_start_offset() == offset(0));
    REQUIRE_OK(m->dir().tick());
    CHECK((*mp)->log_start_offset() > offset(0));
  }
}

TEST_CASE("node: close() refuses while handles are open, and a node dropped first lives on in its handles",
          "[embedded][node]") {
  test::temp_dir tmp("brook-node");
  auto n = open_node(tmp.path());
  REQUIRE_OK(n->create_topic("t"));
  auto p = n->make_producer();
  auto c = n->make_consumer();

  auto refused = n->close();
  CHECK(refused == errc::invalid_request);
  REQUIRE_OK(n->create_topic("still-open"));  // nothing was stopped

  SECTION("closed once the handles are gone") {
    p.reset();
    c.reset();
    REQUIRE_OK(n->close());
    REQUIRE_OK(n->close());  // twice is fine
    CHECK(n->create_topic("after") == errc::closed);
    auto again = node::open(tmp.path());  // the directory lock was released
    REQUIRE_OK(again);
  }
  SECTION("destroying the node first keeps the directory open until the last handle goes") {
    n.reset();
    auto f = p->send({.topic = "t", .key = "k", .value = "v"});
    auto md = f.get();
    REQUIRE_OK(md);
    CHECK(md->offset == offset(0));
    CHECK(node::open(tmp.path()) == errc::log_dir_locked);  // still held by the handles
    p.reset();
    c.reset();
    auto again = node::open(tmp.path());
    REQUIRE_OK(again);
    auto part = (*again)->dir().get_partition("t", partition_id(0));
    REQUIRE_OK(part);
    CHECK((*part)->log_end_offset() == offset(1));  // the record written through the orphaned handle
  }
}

TEST_CASE("node: errors are the parts' own", "[embedded][node]") {
  test::temp_dir tmp("brook-node");
  auto n = open_node(tmp.path());
  CHECK(node::open(tmp.path()) == errc::log_dir_locked);  // one process (one node) per directory
  CHECK(n->create_topic("bad name!") == errc::invalid_topic);
  CHECK(n->create_topic("t", {.partitions = 0}) == errc::invalid_partitions);
  CHECK(n->create_topic("t", {.partitions = 1, .overrides = {{"retention.ms", "soon"}}}) == errc::invalid_config);
  node_options bad;
  bad.groups.group_min_session_timeout = 10s;
  bad.groups.group_max_session_timeout = 1s;
  test::temp_dir other("brook-node");
  CHECK(node::open(other.path(), bad) == errc::invalid_config);
}

TEST_CASE("node: a group consumer keeps its group running after the node object is dropped", "[embedded][node]") {
  // The coordinator's timer and housekeeping belong to the parts the handles keep alive, so
  // dropping the node without close() must not stop them under a live group member.
  test::temp_dir tmp("brook-node");
  auto n = open_node(tmp.path());
  REQUIRE_OK(n->create_topic("t", {.partitions = 2}));
  produce(*n, "t", 20, "r");
  auto c = n->make_group_consumer(group("g"));
  n.reset();
  REQUIRE_OK(c->subscribe({"t"}));
  CHECK(consume(*c, 20).size() == 20);
  REQUIRE_OK(c->close());
}

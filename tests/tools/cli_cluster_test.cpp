// End-to-end tests of `brook cluster --describe`, run as a child process
// (support/cli_runner.hpp) on the directory of a real in-process cluster
// (replication/cluster.hpp) stepped on a manual clock: while the cluster runs in this
// process (read-only: nothing written, no lock taken) and after it is closed; a healthy
// topic, an under-replicated one after a broker crash, an offline one whose only
// replica crashed; text and --json; bad command lines.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/replication/cluster.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/checks.hpp"
#include "support/cli_runner.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

#ifndef BROOK_CLI_PATH
TEST_CASE("brook CLI cluster tests need BROOK_BUILD_TOOLS=ON", "[tools][cli][cluster]") {
  WARN("the brook tool is not built (BROOK_BUILD_TOOLS=OFF): CLI cluster tests not run");
}
#else

namespace {

namespace fs = std::filesystem;
using namespace brook;
using brook::testing::manual_clock;
using namespace brook::test::cli;

/// A 3-broker cluster on a manual clock under `root`.
struct fixture {
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>(1'000'000);
  brook::test::temp_dir tmp{"brook-cli-cluster"};
  fs::path root = tmp / "cluster";
  std::unique_ptr<cluster> c;

  fixture() {
    cluster_config cfg;
    cfg.broker_ids = {broker_id{1}, broker_id{2}, broker_id{3}};
    cfg.broker.dir.defaults.clock = clk;
    cfg.controller.seed = 7;
    auto r = cluster::open(root, cfg);
    if (!r) FAIL(r.error().to_string());
    c = std::move(*r);
  }

  void steps(int n, std::int64_t ms = 100) {
    for (int i = 0; i < n; ++i) {
      clk->advance(ms);
      REQUIRE_OK(c->step());
    }
  }

  /// Produces n records as one acks=all batch and steps until it is acknowledged.
  void produce_all(const std::string& t, int p, int n) {
    auto done = std::make_shared<std::optional<result<append_result> > >();
    auto b = brook::test::make_batch(n, clk->now_ms(), fmt::format("{}-{}", t, p));
    c->produce(t, partition_id(p), b, acks_mode::all, std::chrono::milliseconds(30000),
               [done](const result<append_result>& r) { *done = r; });
    for (int i = 0; i < 50 && !done->has_value(); ++i) steps(1);
    REQUIRE(done->has_value());
    if (!**done) FAIL((**done).error().to_string());
  }

  partition_state state(const std::string& t, int p) { return *c->image()->partition(t, partition_id(p)); }
};

run_result describe(const fs::path& root, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"cluster", "--data-dir", root.string(), "--describe"};
  args.insert(args.end(), extra.begin(), extra.end());
  return brook_cli(args);
}

/// A line split on whitespace.
std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

/// One row of the partitions table, split on whitespace.
struct partition_line {
  std::string leader, leader_epoch, replicas, isr, hw, leo, marker;
};

/// The partitions table of `cluster --describe` ("topic-p" -> row).
std::map<std::string, partition_line> partition_table(const std::string& out) {
  std::map<std::string, partition_line> rows;
  bool in_table = false;
  for (const auto& l : lines_of(out)) {
    if (l.rfind("TOPIC ", 0) == 0) {
      REQUIRE(tokens(l) == std::vector<std::string>{"TOPIC", "PARTITION", "LEADER", "LEADER-EPOCH", "REPLICAS", "ISR",
                                                    "HIGH-WATERMARK", "LOG-END-OFFSET"});
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (l.empty()) break;
    std::istringstream in(l);
    std::string topic, p, rest;
    partition_line row;
    in >> topic >> p >> row.leader >> row.leader_epoch >> row.replicas >> row.isr >> row.hw >> row.leo;
    while (in >> rest) row.marker += (row.marker.empty() ? "" : " ") + rest;
    rows[topic + "-" + p] = row;
  }
  return rows;
}

/// The brokers table ("1" -> "STATE DATA-DIR").
std::map<std::string, std::string> broker_table(const std::string& out) {
  std::map<std::string, std::string> rows;
  bool in_table = false;
  for (const auto& l : lines_of(out)) {
    if (l.rfind("BROKER ", 0) == 0) {
      REQUIRE(tokens(l) == std::vector<std::string>{"BROKER", "EPOCH", "STATE", "DATA-DIR"});
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (l.empty()) break;
    std::istringstream in(l);
    std::string id, epoch, st, dd;
    in >> id >> epoch >> st >> dd;
    rows[id] = st + " " + dd;
  }
  return rows;
}

std::string ids(const std::vector<broker_id>& v) { return fmt::format("{}", fmt::join(v, ",")); }

/// Every file under `dir` with its size and modification time.
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type> > tree(const fs::path& dir) {
  std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type> > out;
  for (const auto& de : fs::recursive_directory_iterator(dir))
    if (de.is_regular_file()) out[de.path().string()] = {de.file_size(), de.last_write_time()};
  return out;
}

}  // namespace

TEST_CASE("cluster --describe: leaders, ISRs, high watermarks, under-replicated and offline partitions",
          "[tools][cli][cluster]") {
  fixture f;
  REQUIRE_OK(f.c->create_topic("orders", 2, 3));
  REQUIRE_OK(f.c->create_topic("solo", 1, 1));
  const broker_id solo_broker = f.state("solo", 0).replicas.at(0);
  f.produce_all("orders", 0, 5);
  f.produce_all("orders", 1, 3);
  f.produce_all("solo", 0, 4);
  f.steps(60);  // past replica.high.watermark.checkpoint.interval.ms (5 s): every HW checkpointed

  SECTION("a healthy cluster") {
    auto r = describe(f.root);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "ControllerEpoch: "));
    auto brokers = broker_table(r.out);
    CHECK(brokers ==
          std::map<std::string, std::string>{{"1", "alive in-use"}, {"2", "alive in-use"}, {"3", "alive in-use"}});
    auto rows = partition_table(r.out);
    REQUIRE(rows.size() == 3);
    const auto o0 = f.state("orders", 0);
    CHECK(rows["orders-0"].leader == fmt::format("{}", o0.leader));
    CHECK(rows["orders-0"].replicas == "1,2,3");
    CHECK(rows["orders-0"].isr == "1,2,3");
    CHECK(rows["orders-0"].hw == "5");
    CHECK(rows["orders-0"].leo == "5");
    CHECK(rows["orders-0"].marker.empty());
    CHECK(rows["orders-1"].replicas == "2,3,1");
    CHECK(rows["orders-1"].hw == "3");
    CHECK(rows["solo-0"].leader == fmt::format("{}", solo_broker));
    CHECK(rows["solo-0"].hw == "4");
    CHECK(rows["solo-0"].leo == "4");
    CHECK(contains(r.out, "\n3 partitions: 0 under-replicated, 0 offline.\n"));
    // The cluster runs in this process: the note says the HWs are checkpoints.
    CHECK(contains(r.err, "note: a running process owns the data directory of brokers 1,2,3"));
  }

  // The solo topic's only broker dies (no controlled shutdown): solo-0 goes offline and
  // orders loses a replica.
  REQUIRE_OK(f.c->stop_broker(solo_broker, shutdown_mode::uncontrolled));
  f.steps(100);  // 10 s: past broker.session.timeout.ms (9 s): fenced, out of every ISR
  f.produce_all("orders", 0, 2);
  f.steps(60);
  const auto o0 = f.state("orders", 0), o1 = f.state("orders", 1), s0 = f.state("solo", 0);
  REQUIRE(o0.under_replicated());
  REQUIRE(o1.under_replicated());
  REQUIRE(s0.offline());
  REQUIRE(o0.leader != solo_broker);
  auto live = f.c->describe();
  REQUIRE(live.size() == 3);
  CHECK(live[0].high_watermark == offset(7));  // what the CLI must show

  // A row as the image (read by the library, in this process) says it should be.
  auto check_row = [&](const partition_line& row, const partition_state& s) {
    CHECK(row.leader == (s.has_leader() ? fmt::format("{}", s.leader) : "none"));
    CHECK(row.leader_epoch == fmt::format("{}", s.leader_epoch));
    CHECK(row.replicas == ids(s.replicas));
    CHECK(row.isr == ids(s.isr));
  };
  auto check_text = [&](const run_result& r) {
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto brokers = broker_table(r.out);
    REQUIRE(brokers.size() == 3);
    CHECK(brokers[fmt::format("{}", solo_broker)] == "fenced idle");  // a crash releases the lock
    auto rows = partition_table(r.out);
    REQUIRE(rows.size() == 3);
    check_row(rows["orders-0"], o0);
    check_row(rows["orders-1"], o1);
    check_row(rows["solo-0"], s0);
    CHECK(rows["orders-0"].isr.find(fmt::format("{}", solo_broker)) == std::string::npos);
    CHECK(rows["orders-0"].hw == "7");
    CHECK(rows["orders-0"].leo == "7");
    CHECK(rows["orders-0"].marker == "UNDER-REPLICATED");
    CHECK(rows["orders-1"].hw == "3");
    CHECK(rows["orders-1"].leo == "3");
    CHECK(rows["orders-1"].marker == "UNDER-REPLICATED");
    CHECK(rows["solo-0"].leader == "none");
    CHECK(rows["solo-0"].hw == "4*");  // from the crashed replica's checkpoint
    CHECK(rows["solo-0"].leo == "-");
    CHECK(rows["solo-0"].marker == "OFFLINE");
    CHECK(contains(r.out, fmt::format("* solo-0 has no leader: the highest high watermark its replicas "
                                      "checkpointed (broker {}'s).",
                                      solo_broker)));
    CHECK(contains(r.out, "\n3 partitions: 2 under-replicated, 1 offline.\n"));
  };

  SECTION("while the cluster runs: read-only, nothing written, no lock taken") {
    const auto before = tree(f.root);
    auto r = describe(f.root);
    check_text(r);
    auto brokers = broker_table(r.out);
    for (std::int32_t id : {1, 2, 3})
      if (id != solo_broker.value()) CHECK(brokers[std::to_string(id)] == "alive in-use");
    CHECK(contains(r.err, "note: a running process owns the data directory of brokers"));
    CHECK(tree(f.root) == before);
    // The cluster goes on: its locks were never taken.
    f.produce_all("orders", 1, 1);
    REQUIRE_OK(f.c->restart_broker(solo_broker));
    f.steps(60);
    auto again = partition_table(describe(f.root).out);
    CHECK(again["solo-0"].leader == fmt::format("{}", solo_broker));
    CHECK(again["solo-0"].marker.empty());
    CHECK(again["orders-1"].hw == "4");
  }

  SECTION("after the cluster is closed") {
    REQUIRE_OK(f.c->close());
    f.c.reset();
    const auto before = tree(f.root);
    auto r = describe(f.root);
    check_text(r);
    CHECK(r.err.empty());
    CHECK(tree(f.root) == before);

    SECTION("--json") {
      auto j = describe(f.root, {"--json"});
      INFO(j.out << j.err);
      REQUIRE(j.exit_code == 0);
      auto lines = lines_of(j.out);
      REQUIRE(lines.size() == 1);
      json doc = parse_json(lines[0]);
      CHECK(doc["cluster"].str == f.root.string());
      REQUIRE(doc["brokers"].items.size() == 3);
      for (const auto& b : doc["brokers"].items) {
        CHECK(b["state"].str == (b["id"].number == solo_broker.value() ? "fenced" : "alive"));
        CHECK(b["data_dir"].str == "idle");
      }
      const auto& ps = doc["partitions"].items;
      REQUIRE(ps.size() == 3);
      CHECK(ps[0]["topic"].str == "orders");
      CHECK(ps[0]["partition"].number == 0);
      CHECK(ps[0]["leader"].number == o0.leader.value());
      CHECK(ps[0]["leader_epoch"].number == o0.leader_epoch.value());
      CHECK(ps[0]["high_watermark"].number == 7);
      CHECK(ps[0]["high_watermark_from"].str == "leader");
      CHECK(ps[0]["log_end_offset"].number == 7);
      REQUIRE(ps[0]["isr"].items.size() == o0.isr.size());
      for (std::size_t i = 0; i < o0.isr.size(); ++i) CHECK(ps[0]["isr"].items[i].number == o0.isr[i].value());
      CHECK(ps[1]["partition"].number == 1);
      CHECK(ps[2]["topic"].str == "solo");
      CHECK(ps[2]["leader"].kind == json::null_v);
      CHECK(ps[2]["high_watermark"].number == 4);
      CHECK(ps[2]["high_watermark_from"].str == "replica");
      CHECK(ps[2]["high_watermark_broker"].number == solo_broker.value());
      CHECK(ps[2]["log_end_offset"].kind == json::null_v);
      CHECK(doc["summary"]["partitions"].number == 3);
      CHECK(doc["summary"]["under_replicated"].number == 2);
      CHECK(doc["summary"]["offline"].number == 1);
      // The test's JSON reader keeps no boolean values: check them in the text.
      CHECK(contains(lines[0], "\"log_end_offset\":7,\"under_replicated\":true,\"offline\":false}"));
      CHECK(contains(lines[0], "\"log_end_offset\":null,\"under_replicated\":false,\"offline\":true}"));
    }
  }
}

TEST_CASE("cluster --describe: an empty cluster, a missing checkpoint", "[tools][cli][cluster]") {
  fixture f;
  auto r = describe(f.root);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "No topics.\n"));
  CHECK(contains(r.out, "\n0 partitions: 0 under-replicated, 0 offline.\n"));
  CHECK(broker_table(r.out).size() == 3);

  // A new topic before the first checkpoint interval: no high watermark on disk yet.
  REQUIRE_OK(f.c->create_topic("fresh", 1, 2));
  auto fresh = partition_table(describe(f.root).out);
  CHECK(fresh["fresh-0"].hw == "-");
  CHECK(fresh["fresh-0"].leo == "0");

  SECTION("a damaged checkpoint is reported, and the rest still described") {
    REQUIRE_OK(f.c->close());
    const auto leader = fmt::format("{}", f.state("fresh", 0).leader);
    std::ofstream(f.root / ("broker-" + leader) / "fresh-0" / "replication-offset-checkpoint") << "0\n1\nfresh 0 x\n";
    auto bad = describe(f.root);
    CHECK(bad.exit_code == 1);
    CHECK(partition_table(bad.out)["fresh-0"].hw == "-");
    CHECK(contains(bad.err, "brook: KAFKA_STORAGE_ERROR: "));
    CHECK(contains(bad.err, "'x' is not a number"));
  }
}

TEST_CASE("cluster: errors and usage", "[tools][cli][cluster]") {
  brook::test::temp_dir tmp("brook-cli-cluster");

  SECTION("a directory that is not a cluster") {
    fs::create_directories(tmp / "plain" / "orders-0");
    auto r = describe(tmp / "plain");
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "not a cluster directory"));
    CHECK(contains(r.err, "LOG_DIR_NOT_FOUND"));
    CHECK_FALSE(fs::exists(tmp / "plain" / "controller"));  // nothing created
  }
  SECTION("a missing directory") {
    auto r = describe(tmp / "nowhere");
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "no such directory"));
    CHECK_FALSE(fs::exists(tmp / "nowhere"));
  }
  SECTION("missing --data-dir") {
    auto r = brook_cli({"cluster", "--describe"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "missing --data-dir D"));
    CHECK(contains(r.err, "usage: brook cluster --data-dir D --describe [--json]"));
  }
  SECTION("missing --describe") {
    auto r = brook_cli({"cluster", "--data-dir", tmp.path().string()});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "give --describe"));
  }
  SECTION("an unknown flag") {
    auto r = brook_cli({"cluster", "--data-dir", tmp.path().string(), "--describe", "--list"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unknown option '--list'"));
  }
  SECTION("a positional argument") {
    auto r = brook_cli({"cluster", "--describe", tmp.path().string()});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unexpected argument"));
  }
  SECTION("--help, and the command is listed") {
    auto h = brook_cli({"cluster", "--help"});
    CHECK(h.exit_code == 0);
    CHECK(contains(h.out, "usage: brook cluster --data-dir D --describe [--json]"));
    auto m = brook_cli({"--help"});
    CHECK(contains(m.out, "  cluster   Describe a replicated cluster"));
  }
}

#endif  // BROOK_CLI_PATH

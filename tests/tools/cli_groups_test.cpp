// End-to-end tests of the group forms of the `brook` tool: `consume --group` and `groups`
// (--list, --describe, --reset-offsets), run as child processes (support/cli_runner.hpp)
// on a data directory, once while another `brook` process owns it.
#include <signal.h>

#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/format/record_batch_builder.hpp>
#include <brook/group/offset_store.hpp>
#include <brook/storage/data_dir.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

#ifndef BROOK_CLI_PATH
TEST_CASE("brook CLI group tests need BROOK_BUILD_TOOLS=ON", "[tools][cli][groups]") {
  WARN("the brook tool is not built (BROOK_BUILD_TOOLS=OFF): CLI group tests not run");
}
#else

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using namespace brook::test::cli;

/// A data directory whose __consumer_offsets has one partition (offsets.topic.num.partitions
/// = 1; the tool keeps an existing count). Every writable open and close of a directory
/// writes and fsyncs each partition's checkpoints: with Kafka's 50 partitions each
/// `consume --group` would take a second or more.
void make_data_dir(const fs::path& d) {
  auto dd = brook::data_dir::open(d).value();
  REQUIRE(brook::offset_store::open(*dd, 1).value()->partitions() == 1);
  dd->close().value();
}

void create_topic(const fs::path& d, const std::string& topic, int partitions) {
  auto r = brook_cli(
      {"topics", "--data-dir", d.string(), "--create", "--topic", topic, "--partitions", std::to_string(partitions)});
  REQUIRE(r.exit_code == 0);
}

/// `brook produce --data-dir D --topic T --partition P`, one record per line of `input`.
void produce(const fs::path& d, const std::string& topic, int partition, const std::string& input) {
  auto r = brook_cli({"produce", "--data-dir", d.string(), "--topic", topic, "--partition", std::to_string(partition)},
                     input);
  REQUIRE(r.exit_code == 0);
}

/// `brook consume --data-dir D --topic T --group G <extra...>` (plain output).
run_result consume_group(const fs::path& d, const std::string& topic, const std::string& group,
                         std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"consume", "--data-dir", d.string(), "--topic", topic, "--group", group};
  args.insert(args.end(), extra.begin(), extra.end());
  return brook_cli(args);
}

/// The values `consume --group` printed; it must succeed quietly.
std::vector<std::string> consumed(const fs::path& d, const std::string& topic, const std::string& group,
                                  std::vector<std::string> extra = {}) {
  auto r = consume_group(d, topic, group, std::move(extra));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.err.empty());
  return lines_of(r.out);
}

run_result groups(const fs::path& d, std::vector<std::string> args) {
  args.insert(args.begin(), {"groups", "--data-dir", d.string()});
  return brook_cli(args);
}

/// One row of the offsets table of `groups --describe`.
struct offsets_row {
  std::string current, log_end, lag, consumer;
};

/// The offsets table of `groups --describe --group G` (partition -> row, for `topic`).
std::map<int, offsets_row> offsets_table(const std::string& describe_out, const std::string& topic) {
  std::map<int, offsets_row> out;
  bool in_table = false;
  for (const auto& l : lines_of(describe_out)) {
    if (l.rfind("GROUP ", 0) == 0) {
      REQUIRE(l.find("TOPIC") != std::string::npos);
      REQUIRE(l.find("CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID") != std::string::npos);
      in_table = true;
      continue;
    }
    if (!in_table || l.empty()) continue;
    std::istringstream in(l);
    std::string g, t;
    int p = -1;
    offsets_row row;
    in >> g >> t >> p >> row.current >> row.log_end >> row.lag >> row.consumer;
    INFO(l);
    REQUIRE(p >= 0);
    if (t == topic) out[p] = row;
  }
  return out;
}

run_result describe(const fs::path& d, const std::string& group) {
  auto r = groups(d, {"--describe", "--group", group});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

/// The NEW-OFFSET column of a reset plan (partition -> offset).
std::map<int, long long> plan_of(const std::string& out) {
  std::map<int, long long> plan;
  bool in_table = false;
  for (const auto& l : lines_of(out)) {
    if (l.rfind("GROUP ", 0) == 0) {
      REQUIRE(l.find("PARTITION  NEW-OFFSET") != std::string::npos);
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (l.empty()) break;
    std::istringstream in(l);
    std::string g, t;
    int p = -1;
    long long o = -1;
    in >> g >> t >> p >> o;
    INFO(l);
    REQUIRE(p >= 0);
    plan[p] = o;
  }
  return plan;
}

std::vector<std::string> values(int from, int to) {  // "v<from>".."v<to - 1>"
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(fmt::format("v{}", i));
  return out;
}

}  // namespace

TEST_CASE("consume --group continues where the last run stopped", "[tools][cli][groups]") {
  brook::test::temp_dir tmp("brook-cli-groups");
  const fs::path d = tmp / "data";
  make_data_dir(d);
  create_topic(d, "one", 1);
  produce(d, "one", 0, "v0\nv1\nv2\nv3\nv4\nv5\n");

  // --max-records N commits right after the N-th record; --from-beginning only applies
  // while the group has no committed offset.
  CHECK(consumed(d, "one", "g", {"--from-beginning", "--max-records", "2"}) == values(0, 2));
  CHECK(consumed(d, "one", "g", {"--from-beginning", "--max-records", "3"}) == values(2, 5));
  CHECK(consumed(d, "one", "g") == values(5, 6));
  CHECK(consumed(d, "one", "g").empty());  // at the end: nothing, exit 0
  produce(d, "one", 0, "v6\n");
  CHECK(consumed(d, "one", "g", {"--from-beginning"}) == values(6, 7));

  auto r = describe(d, "g");
  CHECK(contains(r.out, "State: Empty"));
  CHECK(contains(r.out, "Consumer group 'g' has no active members: no running process owns"));
  auto table = offsets_table(r.out, "one");
  REQUIRE(table.size() == 1);
  CHECK(table[0].current == "7");
  CHECK(table[0].log_end == "7");
  CHECK(table[0].lag == "0");
  CHECK(table[0].consumer == "-");

  SECTION("a new group starts at the end (latest) and goes on from there") {
    CHECK(consumed(d, "one", "late").empty());
    produce(d, "one", 0, "v7\n");
    CHECK(consumed(d, "one", "late") == values(7, 8));
  }
  SECTION("--json prints what the topic form prints, partition first") {
    auto rs = decode_records(consume_group(d, "one", "json", {"--from-beginning", "--json", "--max-records", "2"}).out,
                             /*with_partition=*/true);
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].partition == 0);
    CHECK(rs[0].offset == 0);
    CHECK(rs[1].value == "v1");
  }
}

TEST_CASE("consume --group over partitions, then groups --list and --describe show offsets and lag",
          "[tools][cli][groups]") {
  brook::test::temp_dir tmp("brook-cli-groups");
  const fs::path d = tmp / "data";
  make_data_dir(d);
  create_topic(d, "two", 2);
  produce(d, "two", 0, "a\nb\nc\nd\ne\n");
  produce(d, "two", 1, "x\ny\n");

  // Two runs split at an arbitrary record print every record exactly once.
  auto first = consumed(d, "two", "g", {"--from-beginning", "--max-records", "3"});
  auto second = consumed(d, "two", "g");
  CHECK(first.size() == 3);
  std::multiset<std::string> all(first.begin(), first.end());
  all.insert(second.begin(), second.end());
  CHECK(all == std::multiset<std::string>{"a", "b", "c", "d", "e", "x", "y"});

  produce(d, "two", 0, "f\ng\n");
  CHECK(consumed(d, "two", "second", {"--from-beginning", "--max-records", "1"}).size() == 1);

  auto list = groups(d, {"--list"});
  REQUIRE(list.exit_code == 0);
  CHECK(list.err.empty());
  CHECK(lines_of(list.out) == std::vector<std::string>{"g       Empty", "second  Empty"});

  auto r = describe(d, "g");
  CHECK(contains(r.out, "Group: g\tState: Empty\tProtocolType: consumer\t"));
  CHECK(contains(r.out, "has no active members"));
  auto table = offsets_table(r.out, "two");
  REQUIRE(table.size() == 2);
  CHECK(table[0].current == "5");
  CHECK(table[0].log_end == "7");
  CHECK(table[0].lag == "2");
  CHECK(table[1].current == "2");
  CHECK(table[1].log_end == "2");
  CHECK(table[1].lag == "0");
}

TEST_CASE("groups --reset-offsets: dry run and --execute for each target", "[tools][cli][groups]") {
  brook::test::temp_dir tmp("brook-cli-groups");
  const fs::path d = tmp / "data";
  make_data_dir(d);
  // Records with known timestamps: offset i at base + i s (2023-11-14T22:13:20Z + i s).
  constexpr brook::timestamp_ms base = 1'700'000'000'000;
  {
    auto dd = brook::data_dir::open(d).value();
    brook::topic_config tc;
    tc.partitions = 1;
    tc.overrides = {{"retention.ms", "-1"}};  // the 2023 records outlive the CLI's retention pass
    dd->create_topic("timed", tc).value();
    auto part = dd->get_partition("timed", brook::partition_id(0)).value();
    brook::record_batch_builder b;
    for (int i = 0; i < 6; ++i) b.append(base + i * 1000, brook::nullable_bytes::null(), fmt::format("v{}", i));
    part->append(b.finish()).value();
    dd->close().value();
  }
  REQUIRE(consumed(d, "timed", "g", {"--from-beginning", "--max-records", "4"}) == values(0, 4));

  auto committed = [&] { return offsets_table(describe(d, "g").out, "timed").at(0).current; };
  auto reset = [&](std::vector<std::string> target, bool execute) {
    std::vector<std::string> args{"--reset-offsets", "--group", "g", "--topic", "timed"};
    args.insert(args.end(), target.begin(), target.end());
    if (execute) args.push_back("--execute");
    auto r = groups(d, args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "No action was performed") == !execute);
    return r;
  };

  // Every target as a dry run; one of each kind also with --execute (writable opens are
  // the slow part of this file).
  struct target_case {
    std::vector<std::string> args;
    long long expected;
    bool execute;
  };
  const std::vector<target_case> cases{
      {{"--to-earliest"}, 0, true},
      {{"--to-latest"}, 6, true},
      {{"--to-offset", "2"}, 2, true},
      {{"--to-offset", "100"}, 6, false},                              // clamped to the log end
      {{"--to-datetime", "2023-11-14T22:13:23.000"}, 3, true},         // no zone: UTC, exactly record 3
      {{"--to-datetime", "2023-11-14T22:13:22.001Z"}, 3, false},       // the first record at or after
      {{"--to-datetime", "2023-11-15T00:13:21.000+02:00"}, 1, false},  // an offset from UTC
      {{"--to-datetime", "2023-11-14T17:13:20-05:00"}, 0, false},      // no milliseconds
      {{"--to-datetime", "2030-01-01T00:00:00.000Z"}, 6, false},       // after every record: the log end
  };
  for (const auto& c : cases) {
    INFO(c.args[0] << (c.args.size() > 1 ? " " + c.args[1] : ""));
    const std::string before = committed();
    auto dry = reset(c.args, /*execute=*/false);
    CHECK(plan_of(dry.out) == std::map<int, long long>{{0, c.expected}});
    CHECK(committed() == before);  // a dry run changes nothing
    if (c.args.size() > 1 && c.args[1] == "100") CHECK(contains(dry.err, "is past the log end offset; it is set to 6"));
    if (!c.execute) continue;
    auto exec = reset(c.args, /*execute=*/true);
    CHECK(plan_of(exec.out) == std::map<int, long long>{{0, c.expected}});
    CHECK(committed() == std::to_string(c.expected));
  }

  // The group goes on from the reset offset; --dry-run is the explicit default.
  auto dry = groups(d, {"--reset-offsets", "--group", "g", "--topic", "timed", "--to-offset", "4", "--dry-run"});
  REQUIRE(dry.exit_code == 0);
  CHECK(contains(dry.out, "No action was performed"));
  reset({"--to-offset", "4"}, /*execute=*/true);
  CHECK(consumed(d, "timed", "g") == values(4, 6));

  SECTION("a group that does not exist yet is created by --execute") {
    auto r = groups(d, {"--reset-offsets", "--group", "fresh", "--topic", "timed", "--to-offset", "5"});
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "does not exist yet"));
    CHECK(groups(d, {"--describe", "--group", "fresh"}).exit_code == 1);
    r = groups(d, {"--reset-offsets", "--group", "fresh", "--topic", "timed", "--to-offset", "5", "--execute"});
    REQUIRE(r.exit_code == 0);
    CHECK(offsets_table(describe(d, "fresh").out, "timed").at(0).current == "5");
    CHECK(consumed(d, "timed", "fresh") == values(5, 6));
  }
}

TEST_CASE("while a brook process owns the directory: describe shows its member, reset is refused",
          "[tools][cli][groups]") {
  brook::test::temp_dir tmp("brook-cli-groups");
  const fs::path d = tmp / "data";
  make_data_dir(d);
  create_topic(d, "t", 2);
  produce(d, "t", 0, "a\nb\nc\n");
  produce(d, "t", 1, "x\n");
  REQUIRE(consumed(d, "t", "idle", {"--from-beginning", "--max-records", "1"}).size() == 1);

  child member({"consume", "--data-dir", d.string(), "--topic", "t", "--group", "g", "--from-beginning", "--follow"});
  // Wait (bounded) until the member has joined and its coordinator stored the group.
  run_result r;
  for (auto deadline = std::chrono::steady_clock::now() + 15s; std::chrono::steady_clock::now() < deadline;) {
    r = groups(d, {"--describe", "--group", "g"});
    if (r.exit_code == 0 && contains(r.out, "State: Stable")) break;
    std::this_thread::sleep_for(50ms);
  }
  if (!contains(r.out, "State: Stable")) {
    member.send_signal(SIGTERM);
    auto m = member.finish();
    FAIL_CHECK("the member never showed up; its exit code " << m.exit_code << ", stderr: " << m.err);
  }
  INFO(r.out << r.err);
  REQUIRE(contains(r.out, "State: Stable"));
  CHECK(contains(r.out, "Members: 1"));
  CHECK(contains(r.out, "as last stored by the running process"));
  CHECK(contains(r.out, "brook-consume"));
  CHECK(contains(r.out, "t(0,1)"));
  auto table = offsets_table(r.out, "t");
  REQUIRE(table.size() == 2);
  CHECK(table[0].consumer.rfind("brook-consume-", 0) == 0);

  auto list = groups(d, {"--list"});
  REQUIRE(list.exit_code == 0);
  CHECK(lines_of(list.out) == std::vector<std::string>{"g     Stable", "idle  Empty"});
  CHECK(contains(list.err, "a running process owns"));

  // The idle group has no members, but the tool cannot know that: refused, dry run too.
  for (const std::string group : {"g", "idle"}) {
    for (bool execute : {false, true}) {
      std::vector<std::string> args{"--reset-offsets", "--group", group, "--topic", "t", "--to-earliest"};
      if (execute) args.push_back("--execute");
      auto refused = groups(d, args);
      CHECK(refused.exit_code == 1);
      CHECK(refused.out.empty());
      CHECK(contains(refused.err, "LOG_DIR_LOCKED"));
      CHECK(contains(refused.err, "may have active members"));
    }
  }
  auto second = consume_group(d, "t", "other");
  CHECK(second.exit_code == 1);
  CHECK(contains(second.err, "a running process owns the data directory"));

  member.send_signal(SIGTERM);
  auto done = member.finish();
  INFO(done.err);
  CHECK(done.exit_code == 0);  // a clean exit: commit, leave the group
  std::multiset<std::string> printed;
  for (const auto& l : lines_of(done.out)) printed.insert(l);
  CHECK(printed == std::multiset<std::string>{"a", "b", "c", "x"});

  r = describe(d, "g");
  CHECK(contains(r.out, "State: Empty"));
  CHECK(contains(r.out, "has no active members: no running process owns"));
  table = offsets_table(r.out, "t");
  CHECK(table[0].current == "3");
  CHECK(table[1].current == "1");
  CHECK(groups(d, {"--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--execute"}).exit_code == 0);
}

TEST_CASE("groups and consume --group: errors and usage", "[tools][cli][groups]") {
  brook::test::temp_dir tmp("brook-cli-groups");
  const fs::path d = tmp / "data";
  make_data_dir(d);
  create_topic(d, "t", 1);

  SECTION("failures exit 1 with one line naming the error") {
    auto r = groups(d, {"--describe", "--group", "nope"});
    CHECK(r.exit_code == 1);
    CHECK(r.err == "brook: GROUP_ID_NOT_FOUND: " + d.string() + ": consumer group 'nope' does not exist\n");
    r = consume_group(d, "missing", "g");
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "UNKNOWN_TOPIC_OR_PARTITION"));
    r = groups(d, {"--reset-offsets", "--group", "g", "--topic", "missing", "--to-earliest"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "UNKNOWN_TOPIC_OR_PARTITION"));
    r = groups(tmp / "absent", {"--list"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "LOG_DIR_NOT_FOUND"));
    r = groups(d, {"--list"});  // no group yet
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());
  }
  SECTION("bad command lines exit 2") {
    const std::vector<std::vector<std::string> > bad{
        {"groups", "--data-dir", d.string()},
        {"groups", "--data-dir", d.string(), "--list", "--describe"},
        {"groups", "--list"},
        {"groups", "--data-dir", d.string(), "--list", "--group", "g"},
        {"groups", "--data-dir", d.string(), "--describe"},
        {"groups", "--data-dir", d.string(), "--describe", "--group", "g", "--to-earliest"},
        {"groups", "--data-dir", d.string(), "--reset-offsets", "--group", "g", "--to-earliest"},
        {"groups", "--data-dir", d.string(), "--reset-offsets", "--group", "g", "--topic", "t"},
        {"groups", "--data-dir", d.string(), "--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest",
         "--to-latest"},
        {"groups", "--data-dir", d.string(), "--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest",
         "--dry-run", "--execute"},
        {"groups", "--data-dir", d.string(), "--reset-offsets", "--group", "g", "--topic", "t", "--to-offset", "x"},
        {"groups", "--data-dir", d.string(), "--reset-offsets", "--group", "g", "--topic", "t", "--to-datetime",
         "2024-02-30T00:00:00.000"},
        {"groups", "--data-dir", d.string(), "--reset-offsets", "--group", "g", "--topic", "t", "--to-datetime",
         "2024-01-01 00:00:00"},
        {"groups", "--data-dir", d.string(), "--describe", "--group", ""},
        {"consume", "--data-dir", d.string(), "--topic", "t", "--group", "g", "--partition", "0"},
        {"consume", "--data-dir", d.string(), "--topic", "t", "--group", ""},
        {"consume", (d / "t-0").string(), "--group", "g"},
    };
    for (const auto& args : bad) {
      auto r = brook_cli(args);
      INFO(r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(contains(r.err, "usage: brook"));
    }
  }
  SECTION("--help") {
    auto r = brook_cli({"groups", "--help"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "--reset-offsets"));
    CHECK(contains(r.out, "Without one T is UTC"));
    r = brook_cli({"consume", "--help"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "--group G"));
    CHECK(contains(r.out, "group.initial.rebalance.delay.ms"));
    r = brook_cli({"--help"});
    CHECK(contains(r.out, "groups"));
  }
}

#endif  // BROOK_CLI_PATH

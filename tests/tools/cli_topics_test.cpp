// End-to-end tests of the topic forms of the `brook` tool: `topics`, `produce --data-dir`
// and `consume --data-dir`, run as child processes (support/cli_runner.hpp) on a data
// directory, sometimes while this test process holds the directory's lock.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/client/partitioner.hpp>
#include <brook/client/producer.hpp>
#include <brook/storage/data_dir.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

#ifndef BROOK_CLI_PATH
TEST_CASE("brook CLI topic tests need BROOK_BUILD_TOOLS=ON", "[tools][cli][topics]") {
  WARN("the brook tool is not built (BROOK_BUILD_TOOLS=OFF): CLI topic tests not run");
}
#else

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using namespace brook::test::cli;

/// `brook topics --data-dir D <args...>`.
run_result topics(const fs::path& d, std::vector<std::string> args) {
  args.insert(args.begin(), {"topics", "--data-dir", d.string()});
  return brook_cli(args);
}

void create_topic(const fs::path& d, const std::string& topic, int partitions) {
  auto r = topics(d, {"--create", "--topic", topic, "--partitions", std::to_string(partitions)});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out == "Created topic " + topic + ".\n");
}

/// `brook produce --data-dir D --topic T <extra...>` fed `input`; must succeed.
run_result produce(const fs::path& d, const std::string& topic, const std::string& input,
                   std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"produce", "--data-dir", d.string(), "--topic", topic};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = brook_cli(args, input);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

/// `brook consume --data-dir D --topic T --json <extra...>`, decoded; must succeed.
std::vector<decoded_record> consume_json(const fs::path& d, const std::string& topic, std::vector<std::string> extra) {
  std::vector<std::string> args{"consume", "--data-dir", d.string(), "--topic", topic, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = brook_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.err.empty());
  return decode_records(r.out, /*with_partition=*/true);
}

/// "partition P offset O" lines of produce, in input order.
std::vector<std::pair<int, long long> > produced_positions(const std::string& out) {
  std::vector<std::pair<int, long long> > v;
  for (const auto& l : lines_of(out)) {
    std::istringstream in(l);
    std::string w1, w2;
    int p = -1;
    long long o = -1;
    in >> w1 >> p >> w2 >> o;
    INFO(l);
    REQUIRE(w1 == "partition");
    REQUIRE(w2 == "offset");
    v.emplace_back(p, o);
  }
  return v;
}

/// The rows of one topic's --describe table: partition -> {log start, log end, HW, size, segments}.
std::map<int, std::vector<long long> > describe_rows(const std::string& out) {
  std::map<int, std::vector<long long> > rows;
  for (const auto& l : lines_of(out)) {
    if (!l.starts_with("  ") || contains(l, "Partition")) continue;
    std::istringstream in(l);
    int p = -1;
    in >> p;
    std::vector<long long> cols;
    for (long long v; in >> v;) cols.push_back(v);
    INFO(l);
    REQUIRE(cols.size() == 5);
    rows[p] = cols;
  }
  return rows;
}

/// The error line of a failed command: exit 1, one line on stderr naming `code`.
void check_failure(const run_result& r, const std::string& code) {
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  CHECK(r.exit_code == 1);
  CHECK(lines_of(r.err).size() == 1);
  CHECK(contains(r.err, "brook: " + code + ": "));
}

/// Every partition's records in consume order must be that partition's offsets 0, 1, 2, ...
void check_gapless(const std::vector<decoded_record>& rs) {
  std::map<long long, long long> next;
  for (const auto& r : rs) {
    REQUIRE(r.partition.has_value());
    CHECK(r.offset == next[*r.partition]);
    next[*r.partition] = r.offset + 1;
  }
}

}  // namespace

TEST_CASE("topics --create, --list, --describe, --alter, --delete", "[tools][cli][topics]") {
  brook::test::temp_dir tmp("brook-cli-topics");
  const fs::path d = tmp / "data";

  auto c = topics(d, {"--create", "--topic", "orders", "--partitions", "3", "--config", "retention.ms=86400000",
                      "--config", "segment.bytes=1048576"});
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(c.out == "Created topic orders.\n");
  auto a = topics(d, {"--create", "--topic", "audit"});  // --partitions defaults to 1
  REQUIRE(a.exit_code == 0);

  CHECK(topics(d, {"--list"}).out == "audit\norders\n");

  produce(d, "orders", "a\nb\nc\n", {"--partition", "1"});
  auto desc = topics(d, {"--describe", "--topic", "orders"});
  REQUIRE(desc.exit_code == 0);
  {
    brook::data_dir_options ro;
    ro.read_only = true;
    const std::string id = (*brook::data_dir::open(d, ro))->topic_id("orders").value().to_string();
    CHECK(desc.out.starts_with("Topic: orders\tTopicId: " + id +
                               "\tPartitionCount: 3\tConfigs: retention.ms=86400000,segment.bytes=1048576\n"));
  }
  CHECK(contains(desc.out, "Partition  LogStartOffset  LogEndOffset  HighWatermark  SizeBytes  Segments"));
  auto rows = describe_rows(desc.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == std::vector<long long>{0, 0, 0, 0, 1});
  CHECK(rows[1][0] == 0);      // log start
  CHECK(rows[1][1] == 3);      // log end
  CHECK(rows[1][2] == 3);      // high watermark
  CHECK(rows[1][3] > 61 * 1);  // at least one batch header
  CHECK(rows[1][4] == 1);
  CHECK(rows[2] == std::vector<long long>{0, 0, 0, 0, 1});

  SECTION("describe without --topic shows every topic") {
    auto all = topics(d, {"--describe"});
    REQUIRE(all.exit_code == 0);
    CHECK(all.out.starts_with("Topic: audit\tTopicId: "));
    CHECK(contains(all.out, "\tPartitionCount: 1\tConfigs: \n"));
    CHECK(contains(all.out, "\n\nTopic: orders\tTopicId: "));
    CHECK(contains(all.out, "\tPartitionCount: 3\t"));
  }
  SECTION("alter grows a topic, never shrinks it") {
    auto g = topics(d, {"--alter", "--topic", "orders", "--partitions", "5"});
    INFO(g.err);
    REQUIRE(g.exit_code == 0);
    CHECK(g.out == "Topic orders now has 5 partitions.\n");
    auto after = topics(d, {"--describe", "--topic", "orders"});
    CHECK(contains(after.out, "PartitionCount: 5"));
    auto r5 = describe_rows(after.out);
    REQUIRE(r5.size() == 5);
    CHECK(r5[1][1] == 3);  // existing records untouched
    CHECK(r5[4] == std::vector<long long>{0, 0, 0, 0, 1});
    CHECK(fs::is_directory(d / "orders-4"));
    check_failure(topics(d, {"--alter", "--topic", "orders", "--partitions", "4"}), "INVALID_PARTITIONS");
    check_failure(topics(d, {"--alter", "--topic", "orders", "--partitions", "5"}), "INVALID_PARTITIONS");
    check_failure(topics(d, {"--alter", "--topic", "nope", "--partitions", "9"}), "UNKNOWN_TOPIC_OR_PARTITION");
  }
  SECTION("delete removes the topic and its partitions") {
    auto del = topics(d, {"--delete", "--topic", "audit"});
    REQUIRE(del.exit_code == 0);
    CHECK(del.out == "Deleted topic audit.\n");
    CHECK(!fs::exists(d / "audit-0"));
    CHECK(topics(d, {"--list"}).out == "orders\n");
    check_failure(topics(d, {"--describe", "--topic", "audit"}), "UNKNOWN_TOPIC_OR_PARTITION");
    check_failure(topics(d, {"--delete", "--topic", "audit"}), "UNKNOWN_TOPIC_OR_PARTITION");
    // The name is free again.
    create_topic(d, "audit", 2);
    CHECK(describe_rows(topics(d, {"--describe", "--topic", "audit"}).out).size() == 2);
  }
  SECTION("create errors") {
    check_failure(topics(d, {"--create", "--topic", "orders"}), "TOPIC_ALREADY_EXISTS");
    check_failure(topics(d, {"--create", "--topic", "x", "--partitions", "0"}), "INVALID_PARTITIONS");
    check_failure(topics(d, {"--create", "--topic", "x", "--config", "no.such.key=1"}), "INVALID_CONFIG");
    check_failure(topics(d, {"--create", "--topic", "x", "--config", "retention.ms=soon"}), "INVALID_CONFIG");
    CHECK(topics(d, {"--list"}).out == "audit\norders\n");
  }
  SECTION("a missing data directory") {
    const fs::path missing = tmp / "missing";
    for (const auto& args : std::vector<std::vector<std::string> >{{"--list"},
                                                                   {"--describe"},
                                                                   {"--alter", "--topic", "t", "--partitions", "2"},
                                                                   {"--delete", "--topic", "t"}})
      check_failure(topics(missing, args), "LOG_DIR_NOT_FOUND");
    CHECK(!fs::exists(missing));  // only --create makes one
    create_topic(missing, "t", 1);
    CHECK(fs::is_directory(missing / "t-0"));
  }
}

TEST_CASE("invalid topic names are INVALID_TOPIC_EXCEPTION", "[tools][cli][topics]") {
  brook::test::temp_dir tmp("brook-cli-topics");
  const fs::path d = tmp / "data";
  create_topic(d, "ok", 1);
  for (const std::string& name : {std::string("bad/name"), std::string(".."), std::string("."), std::string(250, 'a'),
                                  std::string("a b"), std::string("")}) {
    INFO("topic name '" << name << "'");
    check_failure(topics(d, {"--create", "--topic", name}), "INVALID_TOPIC_EXCEPTION");
    check_failure(topics(d, {"--describe", "--topic", name}), "INVALID_TOPIC_EXCEPTION");
    check_failure(brook_cli({"produce", "--data-dir", d.string(), "--topic", name}, "x\n"), "INVALID_TOPIC_EXCEPTION");
    check_failure(brook_cli({"consume", "--data-dir", d.string(), "--topic", name}), "INVALID_TOPIC_EXCEPTION");
  }
  CHECK(!fs::exists(tmp / "bad"));
  CHECK(topics(d, {"--list"}).out == "ok\n");
  // 249 characters is the longest legal name.
  create_topic(d, std::string(249, 'a'), 1);
}

TEST_CASE("produce partitions keys by murmur2, consume --from-beginning --json reads them back",
          "[tools][cli][topics]") {
  brook::test::temp_dir tmp("brook-cli-topics");
  const fs::path d = tmp / "data";
  constexpr int partitions = 4;
  create_topic(d, "t", partitions);

  std::string input;
  std::vector<std::optional<std::string> > keys;
  std::vector<std::string> values;
  for (int i = 0; i < 200; ++i) {
    std::string key = "key-" + std::to_string(i % 37);
    if (i % 50 == 7) key = "";  // an empty key is a key: hashed, not sticky
    keys.push_back(key);
    values.push_back("value-" + std::to_string(i));
    input += key + ":" + values.back() + "\n";
  }
  auto p = produce(d, "t", input, {"--key-separator", ":", "--batch-size", "7"});
  auto where = produced_positions(p.out);
  REQUIRE(where.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("line " << i << " key '" << *keys[i] << "'");
    CHECK(where[i].first == brook::partition_for_key(brook::nullable_bytes(*keys[i]), partitions).value());
  }

  auto rs = consume_json(d, "t", {"--from-beginning"});
  REQUIRE(rs.size() == keys.size());
  check_gapless(rs);
  std::map<std::pair<int, long long>, std::size_t> line_of;  // (partition, offset) -> input line
  for (std::size_t i = 0; i < where.size(); ++i) line_of[where[i]] = i;
  for (const auto& r : rs) {
    REQUIRE(r.key.has_value());
    CHECK(*r.partition == brook::partition_for_key(brook::nullable_bytes(*r.key), partitions).value());
    auto it = line_of.find({static_cast<int>(*r.partition), r.offset});
    REQUIRE(it != line_of.end());
    CHECK(r.key == keys[it->second]);
    CHECK(r.value == values[it->second]);
  }
  // Per key, input order is offset order.
  std::map<std::string, long long> last;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto [it, fresh] = last.emplace(*keys[i], where[i].second);
    if (!fresh) {
      CHECK(where[i].second > it->second);
      it->second = where[i].second;
    }
  }

  SECTION("null keys are sticky: runs of at most --batch-size records, each on another partition") {
    std::string nulls;
    for (int i = 0; i < 40; ++i) nulls += "n" + std::to_string(i) + "\n";
    auto np = produced_positions(produce(d, "t", nulls, {"--batch-size", "8"}).out);
    REQUIRE(np.size() == 40);
    std::vector<std::pair<int, int> > runs;  // partition, length
    for (const auto& [part, off] : np) {
      if (!runs.empty() && runs.back().first == part)
        ++runs.back().second;
      else
        runs.emplace_back(part, 1);
    }
    CHECK(runs.size() >= 5);
    for (const auto& [part, len] : runs) CHECK(len <= 8);
    std::set<int> used;
    for (const auto& r : runs) used.insert(r.first);
    CHECK(used.size() >= 2);
    auto all = consume_json(d, "t", {"--from-beginning"});
    CHECK(all.size() == 240);
    check_gapless(all);
  }
  SECTION("--print-key prints key<TAB>value") {
    auto r = brook_cli({"consume", "--data-dir", d.string(), "--topic", "t", "--from-beginning", "--print-key",
                        "--max-records", "1", "--partition", std::to_string(where[0].first)});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == *keys[0] + "\t" + values[0] + "\n");
  }
}

TEST_CASE("consume --partition/--offset, the default start at the end, and errors", "[tools][cli][topics]") {
  brook::test::temp_dir tmp("brook-cli-topics");
  const fs::path d = tmp / "data";
  create_topic(d, "t", 2);
  produce(d, "t", "v0\nv1\nv2\nv3\nv4\n", {"--partition", "0", "--batch-size", "2"});
  produce(d, "t", "w0\nw1\nw2\n", {"--partition", "1"});

  auto from2 = consume_json(d, "t", {"--partition", "0", "--offset", "2"});
  REQUIRE(from2.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(*from2[i].partition == 0);
    CHECK(from2[i].offset == static_cast<long long>(2 + i));
    CHECK(from2[i].value == "v" + std::to_string(2 + i));
  }
  auto p1 = consume_json(d, "t", {"--partition", "1", "--from-beginning"});
  REQUIRE(p1.size() == 3);
  CHECK(p1[2].value == "w2");
  CHECK(consume_json(d, "t", {"--partition", "0", "--offset", "5"}).empty());  // at the end
  CHECK(consume_json(d, "t", {}).empty());                                     // latest: starts at the end
  CHECK(consume_json(d, "t", {"--from-beginning", "--max-records", "4"}).size() == 4);
  auto plain = brook_cli({"consume", "--data-dir", d.string(), "--topic", "t", "--partition", "1", "--offset", "1"});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == "w1\nw2\n");

  check_failure(brook_cli({"consume", "--data-dir", d.string(), "--topic", "t", "--partition", "0", "--offset", "6"}),
                "OFFSET_OUT_OF_RANGE");
  check_failure(brook_cli({"consume", "--data-dir", d.string(), "--topic", "t", "--partition", "2"}),
                "UNKNOWN_TOPIC_OR_PARTITION");
  check_failure(brook_cli({"consume", "--data-dir", d.string(), "--topic", "nope"}), "UNKNOWN_TOPIC_OR_PARTITION");
  check_failure(brook_cli({"consume", "--data-dir", (tmp / "missing").string(), "--topic", "t"}), "LOG_DIR_NOT_FOUND");
  check_failure(brook_cli({"produce", "--data-dir", d.string(), "--topic", "t", "--partition", "2"}, "x\n"),
                "UNKNOWN_TOPIC_OR_PARTITION");

  auto unknown = brook_cli({"produce", "--data-dir", d.string(), "--topic", "nope"}, "x\n");
  check_failure(unknown, "UNKNOWN_TOPIC_OR_PARTITION");
  CHECK(contains(unknown.err, "does not create topics"));
  CHECK(topics(d, {"--list"}).out == "t\n");  // no auto-create

  auto big =
      brook_cli({"produce", "--data-dir", d.string(), "--topic", "t"}, "small\n" + std::string(1100000, 'x') + "\n");
  check_failure(big, "MESSAGE_TOO_LARGE");
  CHECK(lines_of(big.out).size() == 1);  // the record acknowledged before the failure
}

TEST_CASE("usage errors of the topic forms exit 2", "[tools][cli][topics]") {
  brook::test::temp_dir tmp("brook-cli-topics");
  const std::string d = (tmp / "data").string();
  const std::string p0 = (tmp / "p-0").string();
  const std::vector<std::vector<std::string> > cases{
      {"topics"},
      {"topics", "--data-dir", d},
      {"topics", "--data-dir", d, "--list", "--describe"},
      {"topics", "--create", "--topic", "t"},
      {"topics", "--data-dir", d, "--create"},
      {"topics", "--data-dir", d, "--create", "--topic", "t", "--partitions", "two"},
      {"topics", "--data-dir", d, "--create", "--topic", "t", "--config", "retention.ms"},
      {"topics", "--data-dir", d, "--create", "--topic", "t", "--config", "a=1", "--config", "a=2"},
      {"topics", "--data-dir", d, "--alter", "--topic", "t"},
      {"topics", "--data-dir", d, "--delete", "--topic", "t", "--partitions", "3"},
      {"topics", "--data-dir", d, "--describe", "--config", "a=1"},
      {"topics", "--data-dir", d, "--list", "--topic", "t"},
      {"topics", "--data-dir", d, "--list", "extra"},
      {"produce", "--data-dir", d},
      {"produce", "--topic", "t"},
      {"produce", p0, "--data-dir", d, "--topic", "t"},
      {"produce", p0, "--partition", "0"},
      {"produce", "--data-dir", d, "--topic", "t", "--partition", "-1"},
      {"consume", "--data-dir", d, "--topic", "t", "--offset", "3"},
      {"consume", "--data-dir", d, "--topic", "t", "--partition", "0", "--offset", "3", "--from-beginning"},
      {"consume", "--data-dir", d, "--topic", "t", "--from-offset", "3"},
      {"consume", "--data-dir", d, "--topic", "t", "--json", "--print-key"},
      {"consume", p0, "--from-beginning"},
      {"consume", p0, "--topic", "t"},
      {"consume"},
  };
  for (const auto& args : cases) {
    auto r = brook_cli(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "usage: brook"));
    CHECK(r.out.empty());
  }
  CHECK(!fs::exists(tmp / "data"));
  CHECK(!fs::exists(tmp / "p-0"));
}

TEST_CASE("consume --follow picks up records from later produce processes", "[tools][cli][topics]") {
  brook::test::temp_dir tmp("brook-cli-topics");
  const fs::path d = tmp / "data";
  create_topic(d, "t", 3);
  produce(d, "t", "a:1\nb:2\nc:3\n", {"--key-separator", ":"});

  SECTION("from the beginning, across a partition added meanwhile") {
    child follower({"consume", "--data-dir", d.string(), "--topic", "t", "--from-beginning", "--follow",
                    "--max-records", "9", "--json"});
    REQUIRE(follower.wait_stderr("reached the end, following"));
    produce(d, "t", "d:4\ne:5\nf:6\n", {"--key-separator", ":"});
    std::this_thread::sleep_for(300ms);
    REQUIRE(topics(d, {"--alter", "--topic", "t", "--partitions", "4"}).exit_code == 0);
    produce(d, "t", "g\nh\ni\n", {"--partition", "3"});

    auto r = follower.finish("", 20s);  // the hard timeout: -1 means it hung and was killed
    INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
    REQUIRE(r.exit_code == 0);
    auto rs = decode_records(r.out, /*with_partition=*/true);
    REQUIRE(rs.size() == 9);
    check_gapless(rs);
    std::set<std::string> got;
    for (const auto& x : rs) got.insert(*x.value);
    CHECK(got == std::set<std::string>{"1", "2", "3", "4", "5", "6", "g", "h", "i"});
    for (const auto& x : rs)
      if (x.key)
        CHECK(*x.partition == brook::partition_for_key(brook::nullable_bytes(*x.key), 3).value());
      else
        CHECK(*x.partition == 3);
  }
  SECTION("by default only records produced after it started") {
    child follower({"consume", "--data-dir", d.string(), "--topic", "t", "--follow", "--max-records", "2"});
    // It starts at the high watermark when it opens: wait until it has, then produce.
    REQUIRE(follower.wait_stderr("reached the end, following"));
    produce(d, "t", "new1\nnew2\n", {"--partition", "2"});
    auto r = follower.finish("", 20s);
    INFO("stderr:\n" << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "new1\nnew2\n");
  }
}

TEST_CASE("a second writer gets LOG_DIR_LOCKED, readers work while the lock is held", "[tools][cli][topics]") {
  brook::test::temp_dir tmp("brook-cli-topics");
  const fs::path d = tmp / "data";
  create_topic(d, "t", 2);
  produce(d, "t", "one\ntwo\n", {"--partition", "0"});

  auto held = brook::data_dir::open(d);  // this process now owns the directory
  REQUIRE(held.has_value());
  brook::data_dir& dd = **held;

  check_failure(topics(d, {"--create", "--topic", "other"}), "LOG_DIR_LOCKED");
  check_failure(topics(d, {"--alter", "--topic", "t", "--partitions", "3"}), "LOG_DIR_LOCKED");
  check_failure(topics(d, {"--delete", "--topic", "t"}), "LOG_DIR_LOCKED");
  auto locked = brook_cli({"produce", "--data-dir", d.string(), "--topic", "t"}, "x\n");
  check_failure(locked, "LOG_DIR_LOCKED");
  CHECK(contains(locked.err, "in use by process "));  // the test process holds it
  CHECK(dd.list_topics() == std::vector<std::string>{"t"});

  auto desc = topics(d, {"--describe"});
  INFO(desc.err);
  REQUIRE(desc.exit_code == 0);
  auto rows = describe_rows(desc.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0][1] == 2);
  CHECK(topics(d, {"--list"}).out == "t\n");
  CHECK(consume_json(d, "t", {"--from-beginning"}).size() == 2);

  // A consumer follows records this process (the lock holder) produces.
  child follower({"consume", "--data-dir", d.string(), "--topic", "t", "--partition", "1", "--from-beginning",
                  "--follow", "--max-records", "3", "--json"});
  REQUIRE(follower.wait_stderr("reached the end, following"));
  {
    brook::producer prod(dd);
    for (const char* v : {"x", "y", "z"}) {
      brook::producer_record rec;
      rec.topic = "t";
      rec.partition = brook::partition_id(1);
      rec.value = v;
      auto f = prod.send(rec);
      REQUIRE(f.get().has_value());
    }
    REQUIRE(prod.close().has_value());
  }
  auto r = follower.finish("", 20s);
  INFO("stderr:\n" << r.err);
  REQUIRE(r.exit_code == 0);
  auto rs = decode_records(r.out, /*with_partition=*/true);
  REQUIRE(rs.size() == 3);
  check_gapless(rs);
  CHECK(rs[2].value == "z");

  REQUIRE(dd.close().has_value());  // released: writers work again
  create_topic(d, "other", 1);
}

TEST_CASE("commands that write a data directory apply retention.ms before they exit", "[tools][cli][topics]") {
  // A CLI run is the only process most CLI users have: without a pass at exit, a topic's
  // retention.ms would never delete anything.
  brook::test::temp_dir tmp("brook-cli-retention");
  const fs::path d = tmp / "data";
  auto c =
      topics(d, {"--create", "--topic", "old", "--config", "retention.ms=60000", "--config", "segment.bytes=1024"});
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  {  // Records stamped an hour ago, a batch at a time (a segment or so each), written here.
    auto dd = brook::data_dir::open(d);
    REQUIRE(dd);
    brook::producer p(**dd);
    const auto hour_ago = brook::system_clock().now_ms() - 3'600'000;
    for (int b = 0; b < 6; ++b) {
      for (int i = 0; i < 10; ++i)
        p.send(
            {.topic = "old", .value = "a record long enough to fill a 1 KiB segment in a dozen", .timestamp = hour_ago},
            nullptr);
      REQUIRE(p.flush());
    }
    REQUIRE(p.close());
    REQUIRE((*dd)->close());
  }
  auto segments = [&] {  // the partition's segment files, by name
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(d / "old-0"))
      if (e.path().extension() == ".log") out.insert(e.path().filename().string());
    return out;
  };
  const auto before = segments();
  REQUIRE(before.size() > 2);
  REQUIRE(before.count("00000000000000000000.log") == 1);
  produce(d, "old", "new\n");  // any writing command; this one appends a record stamped now
  const auto after = segments();
  INFO("segments before: " << before.size() << ", after: " << after.size());
  CHECK(after.count("00000000000000000000.log") == 0);  // the hour-old sealed segments are gone
  CHECK(after.size() < before.size());
}

TEST_CASE("--help documents the topic forms", "[tools][cli][topics]") {
  auto top = brook_cli({"--help"});
  CHECK(contains(top.out, "topics"));
  auto t = brook_cli({"topics", "--help"});
  CHECK(t.exit_code == 0);
  for (const char* f : {"--create", "--list", "--describe", "--alter", "--delete", "--partitions", "--config",
                        "retention.ms", "LOG_DIR_LOCKED", "read-only", "INVALID_TOPIC_EXCEPTION"})
    CHECK(contains(t.out, f));
  auto p = brook_cli({"produce", "--help"});
  for (const char* f : {"--data-dir", "--topic", "--partition", "murmur2", "never creates topics",
                        "UNKNOWN_TOPIC_OR_PARTITION", "partition P offset O"})
    CHECK(contains(p.out, f));
  auto c = brook_cli({"consume", "--help"});
  for (const char* f :
       {"--data-dir", "--from-beginning", "--partition", "--offset", "--follow", "\"partition\":P", "read-only"})
    CHECK(contains(c.out, f));
}

#endif  // BROOK_CLI_PATH

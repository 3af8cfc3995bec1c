// End-to-end tests of the `brook` command-line tool: every command is run as a
// child process (fork + exec) with its stdin fed and stdout/stderr captured,
// under a deadline after which the child is killed and the test fails.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/segment.hpp>

#include "support/cli_runner.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

#ifndef BROOK_CLI_PATH
TEST_CASE("brook CLI tests need BROOK_BUILD_TOOLS=ON", "[tools][cli]") {
  WARN("the brook tool is not built (BROOK_BUILD_TOOLS=OFF): CLI tests not run");
}
#else

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using namespace brook::test::cli;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_file(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}

/// Start positions and last offsets of the batches of a .log, walking batchLength fields.
struct batch_pos {
  std::size_t position, size;
};
std::vector<batch_pos> batch_positions(const std::string& log) {
  std::vector<batch_pos> out;
  std::size_t pos = 0;
  while (pos + 12 <= log.size()) {
    std::uint32_t blen = 0;
    for (int k = 0; k < 4; ++k) blen = (blen << 8) | static_cast<unsigned char>(log[pos + 8 + k]);
    out.push_back({pos, 12 + blen});
    pos += 12 + blen;
  }
  return out;
}

std::string segment0 = "00000000000000000000";

/// Produces `n` lines "key-i=<value of 100 chars>" with small batches, so the segment has
/// enough bytes (> index.interval.bytes) for index entries.
void produce_many(const fs::path& dir, int n, int batch_size = 5) {
  std::string input;
  for (int i = 0; i < n; ++i)
    input += "key-" + std::to_string(i) + "=" + std::string(100, static_cast<char>('a' + i % 26)) + "\n";
  auto r =
      brook_cli({"produce", dir.string(), "--key-separator", "=", "--batch-size", std::to_string(batch_size)}, input);
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("produce then consume round-trips keys, null keys and values", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "orders-0";
  const std::string input =
      "alpha=one\nbeta=two=2\nno separator here\n\n=empty key\nk\xC3\xBC=v\xE2\x82\xAC\nlast line";
  auto p = brook_cli({"produce", dir.string(), "--key-separator", "="}, input);
  REQUIRE(p.exit_code == 0);
  CHECK(p.err.empty());
  // Every output line is "wrote offsets A..B", together covering 0..6 in order.
  long long expect_next = 0;
  for (const auto& l : lines_of(p.out)) {
    long long a = 0, b = 0;
    REQUIRE(std::sscanf(l.c_str(), "wrote offsets %lld..%lld", &a, &b) == 2);
    CHECK(a == expect_next);
    CHECK(b >= a);
    expect_next = b + 1;
  }
  CHECK(expect_next == 7);

  SECTION("plain output: values, and key<TAB>value with --print-key") {
    auto c = brook_cli({"consume", dir.string()});
    REQUIRE(c.exit_code == 0);
    CHECK(lines_of(c.out) ==
          std::vector<std::string>{"one", "two=2", "no separator here", "", "empty key", "v\xE2\x82\xAC", "last line"});
    auto k = brook_cli({"consume", dir.string(), "--print-key"});
    REQUIRE(k.exit_code == 0);
    CHECK(lines_of(k.out) == std::vector<std::string>{"alpha\tone", "beta\ttwo=2", "null\tno separator here", "null\t",
                                                      "\tempty key", "k\xC3\xBC\tv\xE2\x82\xAC", "null\tlast line"});
  }
  SECTION("--json decodes back to the input") {
    auto c = brook_cli({"consume", dir.string(), "--json"});
    REQUIRE(c.exit_code == 0);
    auto rs = decode_records(c.out);
    REQUIRE(rs.size() == 7);
    const std::vector<std::optional<std::string> > keys{"alpha", "beta",      std::nullopt, std::nullopt,
                                                        "",      "k\xC3\xBC", std::nullopt};
    const std::vector<std::string> values{"one",       "two=2",         "no separator here", "",
                                          "empty key", "v\xE2\x82\xAC", "last line"};
    const auto now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    for (std::size_t i = 0; i < rs.size(); ++i) {
      CHECK(rs[i].offset == static_cast<long long>(i));
      CHECK(rs[i].key == keys[i]);
      CHECK(rs[i].value == values[i]);
      CHECK(rs[i].headers.empty());
      CHECK(rs[i].timestamp <= now_ms);
      CHECK(rs[i].timestamp > now_ms - 600'000);
    }
  }
  SECTION("--max-records and --from-offset") {
    auto c = brook_cli({"consume", dir.string(), "--max-records", "2"});
    REQUIRE(c.exit_code == 0);
    CHECK(lines_of(c.out) == std::vector<std::string>{"one", "two=2"});
    auto f = brook_cli({"consume", dir.string(), "--from-offset", "4", "--json"});
    REQUIRE(f.exit_code == 0);
    auto rs = decode_records(f.out);
    REQUIRE(rs.size() == 3);
    CHECK(rs[0].offset == 4);
    CHECK(rs[2].value == "last line");
    auto both = brook_cli({"consume", dir.string(), "--from-offset=5", "--max-records=1"});
    REQUIRE(both.exit_code == 0);
    CHECK(lines_of(both.out) == std::vector<std::string>{"v\xE2\x82\xAC"});
    auto at_end = brook_cli({"consume", dir.string(), "--from-offset", "7"});
    CHECK(at_end.exit_code == 0);
    CHECK(at_end.out.empty());
  }
  SECTION("offsets outside the log are OFFSET_OUT_OF_RANGE") {
    auto c = brook_cli({"consume", dir.string(), "--from-offset", "8"});
    CHECK(c.exit_code == 1);
    CHECK(c.out.empty());
    CHECK(lines_of(c.err).size() == 1);
    CHECK(contains(c.err, "brook: OFFSET_OUT_OF_RANGE:"));
    CHECK(contains(c.err, "offset 8 is outside [0, 7]"));
  }
  SECTION("a second produce appends after the first") {
    auto p2 = brook_cli({"produce", dir.string()}, "more\n");
    REQUIRE(p2.exit_code == 0);
    CHECK(p2.out == "wrote offsets 7..7\n");
    auto c = brook_cli({"consume", dir.string(), "--from-offset", "7", "--json"});
    auto rs = decode_records(c.out);
    REQUIRE(rs.size() == 1);
    CHECK(!rs[0].key.has_value());
    CHECK(rs[0].value == "more");
  }
}

TEST_CASE("produce --batch-size bounds the records per batch", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  std::string input;
  for (int i = 0; i < 23; ++i) input += "line " + std::to_string(i) + "\n";
  auto p = brook_cli({"produce", dir.string(), "--batch-size", "4"}, input);
  REQUIRE(p.exit_code == 0);
  auto d = brook_cli({"dump-log", (dir / (segment0 + ".log")).string()});
  REQUIRE(d.exit_code == 0);
  int batches = 0, records = 0;
  for (const auto& l : lines_of(d.out)) {
    int count = 0;
    if (std::sscanf(l.c_str(), "baseOffset: %*d lastOffset: %*d count: %d", &count) == 1) {
      ++batches;
      CHECK(count >= 1);
      CHECK(count <= 4);
      records += count;
    }
  }
  CHECK(records == 23);
  CHECK(batches >= 6);
  CHECK(lines_of(p.out).size() == static_cast<std::size_t>(batches));
}

TEST_CASE("dump-log prints batches and records, human and JSON", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  fs::create_directories(dir);
  // A segment written with the library's builder, with headers the CLI cannot produce.
  brook::record_batch_builder b;
  const std::string bin("\x01\x02\xff", 3);
  std::vector<brook::record_header> hs{
      {"trace \"id\"\n\x01", "abc"}, {"schl\xC3\xBCssel", brook::nullable_bytes::null()}, {"bad\xFFutf8", bin}};
  b.append(1'700'000'000'000, "k1", "hello", hs);
  b.append(1'700'000'000'005, brook::nullable_bytes::null(), bin);
  b.append(1'700'000'000'002, "", brook::nullable_bytes::null());
  auto batch1 = b.finish();
  std::string log(reinterpret_cast<const char*>(batch1.data()), batch1.size());
  b.reset(brook::offset(3));
  b.append(1'700'000'000'010, "k4", "world");
  auto batch2 = b.finish();
  log.append(reinterpret_cast<const char*>(batch2.data()), batch2.size());
  const fs::path file = dir / (segment0 + ".log");
  write_file(file, log);
  const auto mtime = fs::last_write_time(file);

  SECTION("human") {
    auto d = brook_cli({"dump-log", file.string()});
    REQUIRE(d.exit_code == 0);
    CHECK(d.err.empty());
    CHECK(contains(d.out, "Log starting offset: 0"));
    CHECK(contains(d.out, "baseOffset: 0 lastOffset: 2 count: 3"));
    CHECK(contains(d.out, "position: 0 CreateTime: 1700000000005"));
    CHECK(contains(d.out, "maxTimestamp: 1700000000005"));
    CHECK(contains(d.out, "producerId: -1"));
    CHECK(contains(d.out, "crcValid: true"));
    CHECK(contains(d.out, fmt::format("baseOffset: 3 lastOffset: 3 count: 1 ")));
    CHECK(contains(d.out, fmt::format("position: {} ", batch1.size())));
    CHECK(
        contains(d.out, "| offset: 0 CreateTime: 1700000000000 keySize: 2 valueSize: 5 key: \"k1\" value: \"hello\""));
    CHECK(contains(d.out, "\"schl\xC3\xBCssel\"=null"));
    CHECK(contains(d.out, "=0x0102ff"));
    CHECK(contains(d.out, "| offset: 1 CreateTime: 1700000000005 keySize: -1 valueSize: 3 key: null value: 0x0102ff"));
    CHECK(contains(d.out, "| offset: 2 CreateTime: 1700000000002 keySize: 0 valueSize: -1 key: \"\" value: null"));
    CHECK(contains(d.out, "| offset: 3 CreateTime: 1700000000010"));
    CHECK(contains(d.out, "2 valid batches, 4 records"));
  }
  SECTION("json: one valid line per record, bytes base64, header keys escaped") {
    auto d = brook_cli({"dump-log", file.string(), "--json"});
    REQUIRE(d.exit_code == 0);
    auto ls = lines_of(d.out);
    REQUIRE(ls.size() == 4);
    // Header keys: quotes and control characters escaped, UTF-8 kept, invalid bytes -> U+FFFD.
    CHECK(contains(ls[0], R"("key":"trace \"id\"\u000a\u0001")"));
    CHECK(contains(ls[0], "\"key\":\"schl\xC3\xBCssel\",\"value\":null"));
    CHECK(contains(ls[0], "\"key\":\"bad\xEF\xBF\xBDutf8\""));
    auto rs = decode_records(d.out);
    CHECK(rs[0].offset == 0);
    CHECK(rs[0].timestamp == 1'700'000'000'000);
    CHECK(rs[0].key == "k1");
    CHECK(rs[0].value == "hello");
    REQUIRE(rs[0].headers.size() == 3);
    CHECK(rs[0].headers[0].first == "trace \"id\"\n\x01");
    CHECK(rs[0].headers[0].second == "abc");
    CHECK(rs[0].headers[1].second == std::nullopt);
    CHECK(rs[0].headers[2].second == bin);
    CHECK(rs[1].key == std::nullopt);
    CHECK(rs[1].value == bin);
    CHECK(rs[1].timestamp == 1'700'000'000'005);
    CHECK(rs[2].key == "");
    CHECK(rs[2].value == std::nullopt);
    CHECK(rs[3].offset == 3);
    CHECK(rs[3].value == "world");
  }
  SECTION("a damaged batch: the valid ones are printed, then one error line with the byte position") {
    std::string bad = log;
    bad[batch1.size() + 70] ^= 0x20;  // inside the second batch's records
    write_file(file, bad);
    auto d = brook_cli({"dump-log", file.string(), "--json"});
    CHECK(d.exit_code == 1);
    CHECK(lines_of(d.out).size() == 3);  // the first batch's records
    CHECK(lines_of(d.err).size() == 1);
    CHECK(contains(d.err,
                   fmt::format("brook: CORRUPT_MESSAGE: {} at byte {}: CRC mismatch", file.string(), batch1.size())));
  }
  SECTION("a torn tail") {
    write_file(file, log.substr(0, log.size() - 7));
    auto d = brook_cli({"dump-log", file.string()});
    CHECK(d.exit_code == 1);
    CHECK(contains(d.out, "baseOffset: 0 lastOffset: 2"));
    CHECK(contains(d.err, fmt::format("{} at byte {}: batch of {} bytes runs past the end of the file", file.string(),
                                      batch1.size(), batch2.size())));
  }
  SECTION("reading changes nothing") {
    auto d = brook_cli({"dump-log", file.string(), "--verify-index"});
    CHECK(read_file(file) == log);
    CHECK(fs::last_write_time(file) == mtime);
    // No indexes beside this hand-made segment: --verify-index says so.
    CHECK(d.exit_code == 1);
    CHECK(contains(d.err, ".index: offset index is missing"));
    CHECK(!fs::exists(dir / (segment0 + ".index")));
  }
}

TEST_CASE("dump-log --verify-index on good and damaged indexes", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  produce_many(dir, 300);
  const fs::path log = dir / (segment0 + ".log");
  const fs::path index = dir / (segment0 + ".index");
  const fs::path tindex = dir / (segment0 + ".timeindex");
  const std::string index_bytes = read_file(index);
  REQUIRE(index_bytes.size() >= 3 * 8);  // the closed log trimmed the index to its entries

  SECTION("good") {
    auto d = brook_cli({"dump-log", log.string(), "--verify-index"});
    REQUIRE(d.exit_code == 0);
    CHECK(contains(d.out, fmt::format("{}: ok, {} entries in use", index.string(), index_bytes.size() / 8)));
    CHECK(contains(d.out, tindex.string() + ": ok,"));
  }
  SECTION("a preallocated all-zero tail is unused space, as in a live index") {
    write_file(index, index_bytes + std::string(8 * 100, '\0'));
    write_file(tindex, read_file(tindex) + std::string(12 * 100, '\0'));
    auto d = brook_cli({"dump-log", log.string(), "--verify-index"});
    REQUIRE(d.exit_code == 0);
    CHECK(contains(d.out, fmt::format("{}: ok, {} entries in use, 100 unused (preallocated)", index.string(),
                                      index_bytes.size() / 8)));
    auto v = brook_cli({"verify", dir.string()});
    CHECK(v.exit_code == 0);
  }
  SECTION("non-zero bytes after a zero entry are reported") {
    std::string junk = index_bytes + std::string(8 * 3, '\0');
    junk[junk.size() - 1] = 1;
    write_file(index, junk);
    auto d = brook_cli({"dump-log", log.string(), "--verify-index"});
    CHECK(d.exit_code == 1);
    CHECK(contains(d.out, "mismatch: "));
    CHECK(contains(d.err, "relative offset 0"));
  }
  SECTION("an entry pointing at the wrong position") {
    std::string bad = index_bytes;
    bad[8 + 7] = static_cast<char>(bad[8 + 7] + 1);  // entry 1's position, low byte
    write_file(index, bad);
    auto d = brook_cli({"dump-log", log.string(), "--verify-index"});
    CHECK(d.exit_code == 1);
    CHECK(lines_of(d.err).size() == 1);
    CHECK(contains(d.err, fmt::format("brook: CORRUPT_MESSAGE: {}: entry 1 (", index.string())));
    CHECK(contains(d.err, "does not point at the start of a batch"));
    auto v = brook_cli({"verify", dir.string()});
    CHECK(v.exit_code == 1);
    CHECK(contains(v.err, index.string()));
  }
  SECTION("an entry with the wrong offset") {
    std::string bad = index_bytes;
    bad[3] = static_cast<char>(bad[3] + 1);  // entry 0's relative offset, low byte
    write_file(index, bad);
    auto d = brook_cli({"dump-log", log.string(), "--verify-index"});
    CHECK(d.exit_code == 1);
    CHECK(contains(d.err, "entry 0 ("));
    CHECK(contains(d.err, "whose last offset is"));
  }
  SECTION("a time index entry with the wrong timestamp") {
    std::string t = read_file(tindex);
    REQUIRE(t.size() >= 12);
    t[7] = static_cast<char>(t[7] ^ 0x01);
    write_file(tindex, t);
    auto d = brook_cli({"dump-log", log.string(), "--verify-index", "--json"});
    CHECK(d.exit_code == 1);
    CHECK(lines_of(d.out).size() == 300);  // --json keeps stdout to records
    CHECK(contains(d.err, tindex.string() + ": entry 0"));
    CHECK(contains(d.err, "largest timestamp"));
  }
}

TEST_CASE("verify finds damage and verify --repair fixes it", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  produce_many(dir, 200, 10);
  const fs::path log = dir / (segment0 + ".log");
  const std::string bytes = read_file(log);
  const auto batches = batch_positions(bytes);
  REQUIRE(batches.size() >= 10);

  auto ok = brook_cli({"verify", dir.string()});
  REQUIRE(ok.exit_code == 0);
  CHECK(ok.out == fmt::format("ok: 1 segments, {} batches, 200 records, offsets 0..199\n", batches.size()));

  std::size_t damaged_batch = 0;
  SECTION("a flipped byte in the middle") {
    const std::size_t middle = bytes.size() / 2;
    while (!(batches[damaged_batch].position + batches[damaged_batch].size > middle)) ++damaged_batch;
    std::string bad = bytes;
    bad[middle] ^= 0x40;
    write_file(log, bad);
  }
  SECTION("a cut tail") {
    damaged_batch = batches.size() - 1;
    fs::resize_file(log, bytes.size() - 5);
  }
  const std::size_t at = batches[damaged_batch].position;
  auto v = brook_cli({"verify", dir.string()});
  CHECK(v.exit_code == 1);
  CHECK(lines_of(v.err).size() == 1);
  CHECK(contains(v.err, fmt::format("brook: CORRUPT_MESSAGE: {} at byte {}: ", log.string(), at)));

  // A read-only consumer still reads the valid prefix.
  auto c = brook_cli({"consume", dir.string(), "--max-records", "3"});
  CHECK(c.exit_code == 0);
  CHECK(lines_of(c.out).size() == 3);

  // The damage lies below the recovery point: --repair says what it would cut and waits for --yes.
  auto ask = brook_cli({"verify", dir.string(), "--repair"});
  CHECK(ask.exit_code == 1);
  CHECK(contains(ask.err, "would cut: "));
  CHECK(contains(ask.err, "rerun with --repair --yes"));
  CHECK(read_file(log) != bytes.substr(0, at));  // nothing was cut yet

  auto r = brook_cli({"verify", dir.string(), "--repair", "--yes"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, fmt::format("{} bytes truncated",
                                    (damaged_batch + 1 == batches.size() ? bytes.size() - 5 : bytes.size()) - at)));
  CHECK(contains(r.out, fmt::format("truncated {} bytes at byte {}",
                                    (damaged_batch + 1 == batches.size() ? bytes.size() - 5 : bytes.size()) - at, at)));
  CHECK(contains(r.out, "ok: 1 segments"));

  auto again = brook_cli({"verify", dir.string()});
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, fmt::format("ok: 1 segments, {} batches, ", damaged_batch)));
  CHECK(read_file(log) == bytes.substr(0, at));
}

TEST_CASE("consume never ends quietly before damage", "[tools][cli]") {  // issue 11 #22
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  produce_many(dir, 200, 10);
  const fs::path log = dir / (segment0 + ".log");
  std::string bytes = read_file(log);
  const auto batches = batch_positions(bytes);
  REQUIRE(batches.size() >= 10);
  const std::size_t at = batches[batches.size() / 2].position;
  bytes[at + batches[batches.size() / 2].size / 2] ^= 0x10;  // inside the CRC
  write_file(log, bytes);
  // Without its checkpoint the open re-validates everything and stops at the damage.
  fs::remove(dir / "recovery-point-offset-checkpoint");
  auto c = brook_cli({"consume", dir.string()});
  CHECK(c.exit_code == 1);
  CHECK(contains(c.err, "damaged"));
  CHECK(contains(c.err, fmt::format("truncated {} bytes at byte {}", bytes.size() - at, at)));  // names the damage
  CHECK(lines_of(c.out).size() == 200 * (batches.size() / 2) / batches.size());  // the intact records first
}

TEST_CASE("dump-log on a FIFO is an error, never a hang", "[tools][cli]") {  // issue 11 #20
  brook::test::temp_dir tmp("brook-cli");
  const fs::path fifo = tmp / (segment0 + ".log");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto r = brook_cli({"dump-log", fifo.string()});  // blocked forever before the fix
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "not a regular file"));
}

TEST_CASE("verify --repair converges on a batch whose maxTimestamp lies", "[tools][cli]") {  // issue 11 #16
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  produce_many(dir, 50, 10);
  const fs::path log = dir / (segment0 + ".log");
  std::string bytes = read_file(log);
  const auto batches = batch_positions(bytes);
  REQUIRE(batches.size() >= 3);
  auto* b1 = reinterpret_cast<std::byte*>(bytes.data() + batches[1].position);
  brook::set_batch_max_timestamp(std::span<std::byte>(b1, batches[1].size), std::numeric_limits<std::int64_t>::max());
  write_file(log, bytes);
  fs::remove(dir / (segment0 + ".timeindex"));  // rebuilt from the headers: it indexes the claim
  auto r = brook_cli({"verify", dir.string(), "--repair"});
  CHECK(r.exit_code == 0);  // "still damaged after repair" on every run before
  auto v = brook_cli({"verify", dir.string()});
  CHECK(v.exit_code == 0);
  CHECK(contains(v.out, "claims maxTimestamp 9223372036854775807"));
}

TEST_CASE("verify names a log start past the log end and --repair rewrites it", "[tools][cli]") {  // issue 11 #5
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  produce_many(dir, 50);
  write_file(dir / "log-start-offset-checkpoint", "0\n1\nt 0 999\n");
  auto v = brook_cli({"verify", dir.string()});
  CHECK(v.exit_code == 1);  // exit 0 before: every record hidden, and retention would delete them
  CHECK(contains(v.err, "KAFKA_STORAGE_ERROR"));
  CHECK(contains(v.err, "log start 999 is past the log end 50"));
  auto c = brook_cli({"consume", dir.string()});
  CHECK(c.exit_code == 0);
  CHECK(std::count(c.out.begin(), c.out.end(), '\n') == 50);  // the value is ignored, not obeyed
  auto r = brook_cli({"verify", dir.string(), "--repair"});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "ignored, the log starts at 0"));
  CHECK(read_file(dir / "log-start-offset-checkpoint") == "0\n1\nt 0 0\n");
  CHECK(brook_cli({"verify", dir.string()}).exit_code == 0);
}

TEST_CASE("verify notes missing indexes, as Kafka rebuilds them silently", "[tools][cli]") {  // issue 11 #24
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  produce_many(dir, 50);
  fs::remove(dir / (segment0 + ".index"));
  fs::remove(dir / (segment0 + ".timeindex"));
  auto v = brook_cli({"verify", dir.string()});
  CHECK(v.exit_code == 0);
  CHECK(contains(v.out, "note: " + (dir / (segment0 + ".index")).string() + ": missing; an open rebuilds it"));
  CHECK(contains(v.out, ".timeindex: missing; an open rebuilds it"));
  CHECK(contains(v.out, "ok: 1 segments, "));
}

TEST_CASE("verify --repair rebuilds a damaged index", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  produce_many(dir, 300);
  const fs::path index = dir / (segment0 + ".index");
  const std::string good = read_file(index);
  std::string bad = good;
  bad[8 + 7] = static_cast<char>(bad[8 + 7] + 3);
  write_file(index, bad);
  CHECK(brook_cli({"verify", dir.string()}).exit_code == 1);
  auto r = brook_cli({"verify", dir.string(), "--repair"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "0 bytes truncated"));
  CHECK(contains(r.out, "indexes rebuilt"));
  CHECK(read_file(index) == good);
  CHECK(brook_cli({"verify", dir.string()}).exit_code == 0);
}

TEST_CASE("verify and consume span several segments", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "multi-0";
  {
    brook::log_config cfg;
    cfg.segment_bytes = 2048;
    cfg.index_interval_bytes = 256;
    auto log = brook::partition_log::open(dir, cfg);
    REQUIRE(log);
    for (int i = 0; i < 40; ++i) {
      auto b = brook::test::make_batch(3, 1'000 + i * 10, "v" + std::to_string(i), 40);
      REQUIRE((*log)->append(b));
    }
    REQUIRE((*log)->segment_count() >= 4);
    REQUIRE((*log)->close());
  }
  std::vector<fs::path> logs;
  for (const auto& de : fs::directory_iterator(dir))
    if (de.path().extension() == ".log") logs.push_back(de.path());
  std::sort(logs.begin(), logs.end());

  auto v = brook_cli({"verify", dir.string()});
  REQUIRE(v.exit_code == 0);
  CHECK(v.out == fmt::format("ok: {} segments, 40 batches, 120 records, offsets 0..119\n", logs.size()));
  auto c = brook_cli({"consume", dir.string(), "--json", "--from-offset", "2"});
  REQUIRE(c.exit_code == 0);
  auto rs = decode_records(c.out);
  REQUIRE(rs.size() == 118);
  for (std::size_t i = 0; i < rs.size(); ++i) CHECK(rs[i].offset == static_cast<long long>(i + 2));

  SECTION("damage in a later segment names that file") {
    std::string b = read_file(logs[2]);
    b[b.size() / 2] ^= 0x01;
    write_file(logs[2], b);
    auto bad = brook_cli({"verify", dir.string()});
    CHECK(bad.exit_code == 1);
    CHECK(contains(bad.err, "brook: CORRUPT_MESSAGE: " + logs[2].string() + " at byte "));
    CHECK(brook_cli({"verify", dir.string(), "--repair"}).exit_code == 1);  // flushed data: needs --yes
    auto r = brook_cli({"verify", dir.string(), "--repair", "--yes"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "ok: 3 segments"));  // the damaged segment was cut and the later ones dropped
    CHECK(!contains(r.out, "0 segments deleted"));
    CHECK(!contains(r.out, "(0 flushed)"));  // the cut and the deleted segments held flushed data
  }
  SECTION("a missing middle segment is a hole") {
    const fs::path gone = logs[1];
    fs::remove(gone);
    auto bad = brook_cli({"verify", dir.string()});
    CHECK(bad.exit_code == 1);
    CHECK(contains(bad.err, logs[2].string() + ": segment starts at offset "));
    CHECK(contains(bad.err, "(hole)"));
    // The segments after the hole are intact: a writable open keeps them, as Kafka does.
    {
      auto l = brook::partition_log::open(dir, brook::log_config{});
      REQUIRE(l);
      CHECK((*l)->log_end_offset() == brook::offset(120));
      CHECK((*l)->recovery().segments_deleted == 0);
    }
    auto c2 = brook_cli({"consume", dir.string(), "--json"});
    CHECK(c2.exit_code == 0);
    CHECK(decode_records(c2.out).back().offset == 119);
  }
}

TEST_CASE("consume --follow picks up records another process appends", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path dir = tmp / "t-0";
  REQUIRE(brook_cli({"produce", dir.string()}, "one\ntwo\nthree\n").exit_code == 0);

  child follower({"consume", dir.string(), "--follow", "--max-records", "6", "--json"});
  REQUIRE(follower.wait_stderr("reached the end, following"));
  auto p = brook_cli({"produce", dir.string(), "--key-separator", ":"}, "k:four\nfive\n");
  REQUIRE(p.exit_code == 0);
  std::this_thread::sleep_for(300ms);
  REQUIRE(brook_cli({"produce", dir.string()}, "six\nseven\n").exit_code == 0);

  auto r = follower.finish("", 20s);
  INFO("stdout:\n" << r.out << "\nstderr:\n" << r.err);
  REQUIRE(r.exit_code == 0);  // -1 would mean it hung and was killed
  auto rs = decode_records(r.out);
  REQUIRE(rs.size() == 6);
  const std::vector<std::string> values{"one", "two", "three", "four", "five", "six"};
  for (std::size_t i = 0; i < rs.size(); ++i) {
    CHECK(rs[i].offset == static_cast<long long>(i));
    CHECK(rs[i].value == values[i]);
  }
  CHECK(rs[3].key == "k");
  CHECK(rs[4].key == std::nullopt);
}

TEST_CASE("errors: one line on stderr and exit 1, usage errors exit 2", "[tools][cli]") {
  brook::test::temp_dir tmp("brook-cli");
  const fs::path missing = tmp / "nope-0";

  SECTION("nonexistent directory") {
    for (const auto& cmd : {"consume", "verify"}) {
      auto r = brook_cli({cmd, missing.string()});
      CHECK(r.exit_code == 1);
      CHECK(lines_of(r.err).size() == 1);
      CHECK(contains(r.err, "brook: LOG_DIR_NOT_FOUND: " + missing.string()));
    }
    auto rep = brook_cli({"verify", missing.string(), "--repair"});
    CHECK(rep.exit_code == 1);
    CHECK(!fs::exists(missing));  // --repair never creates a log
  }
  SECTION("nonexistent file") {
    auto r = brook_cli({"dump-log", (missing / (segment0 + ".log")).string()});
    CHECK(r.exit_code == 1);
    CHECK(lines_of(r.err).size() == 1);
    CHECK(contains(r.err, "No such file or directory"));
  }
  SECTION("garbage file") {
    const fs::path g = tmp / (segment0 + ".log");
    write_file(g, std::string(200, 'x'));
    auto r = brook_cli({"dump-log", g.string()});
    CHECK(r.exit_code == 1);
    CHECK(lines_of(r.err).size() == 1);
    CHECK(contains(r.err, "brook: CORRUPT_MESSAGE: " + g.string() + " at byte 0: "));
    auto j = brook_cli({"dump-log", g.string(), "--json"});
    CHECK(j.exit_code == 1);
    CHECK(j.out.empty());
  }
  SECTION("a directory that is not a log") {
    fs::create_directories(tmp / "junk-0");
    write_file(tmp / "junk-0" / "notes.txt", "hello");
    auto r = brook_cli({"consume", (tmp / "junk-0").string()});
    CHECK(r.exit_code == 1);
    CHECK(lines_of(r.err).size() == 1);
  }
  SECTION("usage errors") {
    const std::vector<std::vector<std::string> > cases{
        {},
        {"frobnicate"},
        {"dump-log"},
        {"dump-log", "a.log", "--bogus"},
        {"dump-log", "a.log", "b.log"},
        {"produce", (tmp / "p-0").string(), "--batch-size", "0"},
        {"produce", (tmp / "p-0").string(), "--batch-size", "many"},
        {"produce", (tmp / "p-0").string(), "--key-separator"},
        {"produce", (tmp / "p-0").string(), "--key-separator", ""},
        {"consume", (tmp / "p-0").string(), "--from-offset", "-1"},
        {"consume", (tmp / "p-0").string(), "--follow=yes"},
        {"consume", (tmp / "p-0").string(), "--json", "--json"},
        {"verify", (tmp / "p-0").string(), "-x"},
    };
    for (const auto& args : cases) {
      auto r = brook_cli(args);
      INFO(r.err);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, "usage: brook"));
      CHECK(r.out.empty());
    }
    CHECK(!fs::exists(tmp / "p-0"));
  }
}

TEST_CASE("--help works for brook and every command", "[tools][cli]") {
  for (const char* h : {"--help", "-h"}) {
    auto top = brook_cli({h});
    CHECK(top.exit_code == 0);
    for (const char* cmd : {"dump-log", "produce", "consume", "verify"}) CHECK(contains(top.out, cmd));
  }
  for (const char* cmd : {"dump-log", "produce", "consume", "verify"}) {
    for (const char* h : {"--help", "-h"}) {
      auto r = brook_cli({cmd, h});
      CHECK(r.exit_code == 0);
      CHECK(contains(r.out, std::string("usage: brook ") + cmd));
      CHECK(r.err.empty());
    }
  }
  auto p = brook_cli({"produce", "--help"});
  CHECK(contains(p.out, "default 100"));
  CHECK(contains(p.out, "16384"));
}

#endif  // BROOK_CLI_PATH

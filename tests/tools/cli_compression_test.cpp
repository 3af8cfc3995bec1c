// End-to-end tests of the `brook` tool on compressed batches: produce --compression, consume
// and dump-log decoding each codec, and batches the library compressed itself. The tool is
// built with every codec brook's tests need (tests/CMakeLists.txt requires all four).
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/compression/compression_codec.hpp>
#include <brook/compression/compression_type.hpp>
#include <brook/format/bytes.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/data_dir.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_codecs.hpp"

#ifndef BROOK_CLI_PATH
TEST_CASE("brook CLI compression tests need BROOK_BUILD_TOOLS=ON", "[tools][cli][compression]") {
  WARN("the brook tool is not built (BROOK_BUILD_TOOLS=OFF): CLI tests not run");
}
#else

namespace {

namespace fs = std::filesystem;
using namespace brook::test::cli;

const std::string segment0 = "00000000000000000000.log";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// `n` lines "key-i=<300 times one letter>": compressible, and a value's run of letters
/// never appears as it is in a compressed segment.
std::string lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "key-" + std::to_string(i) + "=" + std::string(300, static_cast<char>('a' + i)) + "\n";
  return s;
}

/// Every "compresscodec: X" of a human dump-log output.
std::vector<std::string> codecs_of(const std::string& dump) {
  std::vector<std::string> out;
  for (const auto& l : lines_of(dump)) {
    const auto at = l.find("compresscodec: ");
    if (at == std::string::npos) continue;
    const auto from = at + std::string("compresscodec: ").size();
    out.push_back(l.substr(from, l.find(' ', from) - from));
  }
  return out;
}

/// `n` lines of seeded words from a small vocabulary: compressible, and unlike `lines` its
/// compressed form depends on how hard a codec searches (its level).
std::string word_lines(int n) {
  static const char* const words[] = {"alpha", "bravo",  "charlie", "delta", "echo", "fox",      "golf",  "hotel",
                                      "india", "juliet", "kilo",    "lima",  "mike", "november", "oscar", "papa"};
  std::mt19937 rng(20261205);
  std::string s;
  for (int i = 0; i < n; ++i) {
    for (int w = 0; w < 12; ++w) s += std::string(words[rng() % 16]) + (w == 11 ? "\n" : " ");
  }
  return s;
}

/// The codec payload (the bytes after the 61-byte header) of every batch in segment `file`.
std::vector<std::string> batch_payloads(const fs::path& file) {
  const std::string raw = read_file(file);
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at + 12 <= raw.size()) {
    const auto len =
        static_cast<std::size_t>(brook::detail::load_be32(reinterpret_cast<const std::byte*>(raw.data()) + at + 8));
    REQUIRE(at + 12 + len <= raw.size());
    REQUIRE(len >= 49);
    out.push_back(raw.substr(at + 61, 12 + len - 61));
    at += 12 + len;
  }
  return out;
}

/// `payload` decompressed with `codec` and compressed again at `level`.
std::string recompressed(const brook::compression_codec& codec, const std::string& payload, int level) {
  brook::byte_buffer records, again;
  const auto in = std::as_bytes(std::span<const char>(payload.data(), payload.size()));
  REQUIRE(codec.decompress(in, 1 << 20, records));
  REQUIRE(codec.compress(records, level, again));
  return std::string(reinterpret_cast<const char*>(again.data()), again.size());
}

}  // namespace

TEST_CASE("produce --compression then consume and dump-log show the same records", "[tools][cli][compression]") {
  const std::string codec = GENERATE(as<std::string>{}, "none", "gzip", "snappy", "lz4", "zstd", "ZStd", "GZIP");
  std::string lower;
  for (char c : codec) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CAPTURE(codec);
  brook::test::temp_dir tmp("brook-cli-compression");
  const fs::path dir = tmp / "t-0";
  const std::string input = lines(6);

  auto p =
      brook_cli({"produce", dir.string(), "--key-separator", "=", "--batch-size", "3", "--compression", codec}, input);
  REQUIRE(p.exit_code == 0);
  CHECK(p.out == "wrote offsets 0..2\nwrote offsets 3..5\n");

  // The records went to disk compressed: a value's run of 300 letters is not there as it is.
  const std::string raw = read_file(dir / segment0);
  CHECK(contains(raw, std::string(300, 'a')) == (lower == "none"));

  auto c = brook_cli({"consume", dir.string(), "--print-key"});
  REQUIRE(c.exit_code == 0);
  std::string want;
  for (const auto& l : lines_of(input)) want += l.substr(0, l.find('=')) + "\t" + l.substr(l.find('=') + 1) + "\n";
  CHECK(c.out == want);

  auto d = brook_cli({"dump-log", (dir / segment0).string()});
  REQUIRE(d.exit_code == 0);
  CHECK(codecs_of(d.out) == std::vector<std::string>{lower, lower});
  CHECK(contains(d.out, "| offset: 4 CreateTime: "));
  CHECK(contains(d.out, "key: \"key-4\" value: \"" + std::string(300, 'e') + "\" headers: []"));
  CHECK(contains(d.out, "2 valid batches, 6 records, " + std::to_string(raw.size()) + " of "));

  auto j = brook_cli({"dump-log", "--json", (dir / segment0).string()});
  REQUIRE(j.exit_code == 0);
  auto rs = decode_records(j.out);
  REQUIRE(rs.size() == 6);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    CHECK(rs[i].offset == static_cast<long long>(i));
    CHECK(rs[i].key == "key-" + std::to_string(i));
    CHECK(rs[i].value == std::string(300, static_cast<char>('a' + i)));
  }

  auto v = brook_cli({"verify", dir.string()});
  CHECK(v.exit_code == 0);
  CHECK(contains(v.out, "2 batches, 6 records"));
}

TEST_CASE("produce --compression in the topic form and consume of the topic", "[tools][cli][compression]") {
  const std::string codec = GENERATE(as<std::string>{}, "gzip", "snappy", "lz4", "zstd");
  CAPTURE(codec);
  brook::test::temp_dir tmp("brook-cli-compression");
  const fs::path data = tmp / "data";
  REQUIRE(brook_cli({"topics", "--data-dir", data.string(), "--create", "--topic", "t"}).exit_code == 0);
  auto p = brook_cli(
      {"produce", "--data-dir", data.string(), "--topic", "t", "--key-separator", "=", "--compression", codec},
      lines(4));
  REQUIRE(p.exit_code == 0);
  CHECK(lines_of(p.out).size() == 4);

  auto c = brook_cli({"consume", "--data-dir", data.string(), "--topic", "t", "--from-beginning", "--json"});
  REQUIRE(c.exit_code == 0);
  auto rs = decode_records(c.out, /*with_partition=*/true);
  REQUIRE(rs.size() == 4);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    CHECK(rs[i].key == "key-" + std::to_string(i));
    CHECK(rs[i].value == std::string(300, static_cast<char>('a' + i)));
  }

  auto d = brook_cli({"dump-log", (data / "t-0" / segment0).string()});
  REQUIRE(d.exit_code == 0);
  const auto codecs = codecs_of(d.out);
  REQUIRE_FALSE(codecs.empty());
  for (const auto& cc : codecs) CHECK(cc == codec);
  CHECK(contains(d.out, "value: \"" + std::string(300, 'd') + "\""));
}

TEST_CASE("produce --compression with an unknown codec is a usage error", "[tools][cli][compression]") {
  brook::test::temp_dir tmp("brook-cli-compression");
  const fs::path dir = tmp / "t-0";
  auto r = brook_cli({"produce", dir.string(), "--compression", "bogus"}, "x\n");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "--compression: unknown compression type 'bogus'"));
  CHECK(contains(r.err, "usage: brook produce"));
  CHECK_FALSE(fs::exists(dir));  // refused before anything was opened

  const fs::path data = tmp / "data";
  REQUIRE(brook_cli({"topics", "--data-dir", data.string(), "--create", "--topic", "t"}).exit_code == 0);
  auto t = brook_cli({"produce", "--data-dir", data.string(), "--topic", "t", "--compression", "brotli"}, "x\n");
  CHECK(t.exit_code == 2);
  CHECK(contains(t.err, "unknown compression type 'brotli'"));
  auto none = brook_cli({"consume", "--data-dir", data.string(), "--topic", "t", "--from-beginning"});
  REQUIRE(none.exit_code == 0);
  CHECK(none.out.empty());

  auto h = brook_cli({"produce", "--help"});
  CHECK(h.exit_code == 0);
  CHECK(contains(h.out, "--compression C"));
}

TEST_CASE("a zstd batch the library appended through a data_dir dumps and consumes", "[tools][cli][compression]") {
  brook::test::temp_dir tmp("brook-cli-compression");
  const fs::path data = tmp / "data";
  {
    const auto codecs = std::make_shared<const brook::compression_codecs>(brook::test::all_codecs());
    brook::data_dir_options o;
    o.defaults.codecs = codecs;
    auto dd = brook::data_dir::open(data, std::move(o));
    REQUIRE(dd);
    REQUIRE((*dd)->create_topic("t"));
    auto p = (*dd)->get_partition("t", brook::partition_id(0));
    REQUIRE(p);
    brook::record_batch_builder b;
    std::vector<brook::record_header> hs{{"trace", "abc"}, {"empty", brook::nullable_bytes::null()}};
    b.append(1'700'000'000'000, "k0", "hello", hs);
    b.append(1'700'000'000'007, brook::nullable_bytes::null(), std::string(500, 'z'));
    b.append(1'700'000'000'003, "k2", brook::nullable_bytes::null());
    auto codec = codecs->get(brook::compression_type::zstd);
    REQUIRE(codec);
    auto batch = b.finish(**codec, 19);
    REQUIRE(batch);
    REQUIRE((*p)->append(*batch));
    REQUIRE((*dd)->close());
  }
  const fs::path file = data / "t-0" / segment0;
  CHECK_FALSE(contains(read_file(file), std::string(500, 'z')));

  auto d = brook_cli({"dump-log", file.string()});
  REQUIRE(d.exit_code == 0);
  CHECK(d.err.empty());
  CHECK(codecs_of(d.out) == std::vector<std::string>{"zstd"});
  CHECK(contains(d.out, "baseOffset: 0 lastOffset: 2 count: 3 "));
  CHECK(contains(d.out, "maxTimestamp: 1700000000007 "));
  CHECK(contains(d.out,
                 "| offset: 0 CreateTime: 1700000000000 keySize: 2 valueSize: 5 key: \"k0\" value: \"hello\" headers: "
                 "[\"trace\"=\"abc\", \"empty\"=null]\n"));
  CHECK(contains(d.out, "| offset: 1 CreateTime: 1700000000007 keySize: -1 valueSize: 500 key: null value: \"" +
                            std::string(500, 'z') + "\" headers: []\n"));
  CHECK(contains(d.out, "| offset: 2 CreateTime: 1700000000003 keySize: 2 valueSize: -1 key: \"k2\" value: null"));
  CHECK(contains(d.out, "1 valid batches, 3 records"));

  auto v = brook_cli({"dump-log", "--verify-index", file.string()});
  CHECK(v.exit_code == 0);

  auto c = brook_cli({"consume", (data / "t-0").string(), "--json"});
  REQUIRE(c.exit_code == 0);
  auto rs = decode_records(c.out);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].key == "k0");
  CHECK(rs[0].headers.size() == 2);
  CHECK(rs[1].value == std::string(500, 'z'));
  CHECK_FALSE(rs[2].value.has_value());

  // DIR form from an offset inside the batch: the earlier records are skipped.
  auto from = brook_cli({"consume", (data / "t-0").string(), "--from-offset", "2", "--print-key"});
  REQUIRE(from.exit_code == 0);
  CHECK(from.out == "k2\tnull\n");

  auto t = brook_cli({"consume", "--data-dir", data.string(), "--topic", "t", "--from-beginning"});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == "hello\n" + std::string(500, 'z') + "\nnull\n");
}

TEST_CASE("produce --compression-level compresses at that level in both forms", "[tools][cli][compression]") {
  struct choice {
    brook::compression_type type;
    const char* name;
    int level;
  };
  const auto c =
      GENERATE(choice{brook::compression_type::gzip, "gzip", 1}, choice{brook::compression_type::gzip, "gzip", 9},
               choice{brook::compression_type::lz4, "lz4", 1}, choice{brook::compression_type::lz4, "lz4", 17},
               choice{brook::compression_type::zstd, "zstd", 1}, choice{brook::compression_type::zstd, "zstd", 19},
               choice{brook::compression_type::zstd, "zstd", -5});
  const bool topic_form = GENERATE(false, true);
  CAPTURE(c.name, c.level, topic_form);
  const auto codecs = brook::test::all_codecs();
  const auto codec = codecs.get(c.type);
  REQUIRE(codec);
  brook::test::temp_dir tmp("brook-cli-compression");
  const fs::path data = tmp / "data";
  const std::string level = std::to_string(c.level);
  fs::path file;
  if (topic_form) {
    REQUIRE(brook_cli({"topics", "--data-dir", data.string(), "--create", "--topic", "t"}).exit_code == 0);
    auto p = brook_cli({"produce", "--data-dir", data.string(), "--topic", "t", "--partition", "0", "--compression",
                        c.name, "--compression-level", level},
                       word_lines(60));
    REQUIRE(p.exit_code == 0);
    file = data / "t-0" / segment0;
  } else {
    auto p = brook_cli({"produce", (tmp / "t-0").string(), "--compression", c.name, "--compression-level", level},
                       word_lines(60));
    REQUIRE(p.exit_code == 0);
    file = tmp / "t-0" / segment0;
  }
  const auto payloads = batch_payloads(file);
  REQUIRE_FALSE(payloads.empty());
  for (const auto& payload : payloads) {
    CHECK(recompressed(**codec, payload, c.level) == payload);
    // The level mattered: the codec's default level writes other bytes for these records.
    CHECK(recompressed(**codec, payload, (*codec)->default_level()) != payload);
  }
}

TEST_CASE("produce --compression-level outside the codec's range is a usage error", "[tools][cli][compression]") {
  brook::test::temp_dir tmp("brook-cli-compression");
  const fs::path dir = tmp / "t-0";
  auto lz4 = brook_cli({"produce", dir.string(), "--compression", "lz4", "--compression-level", "18"}, "x\n");
  CHECK(lz4.exit_code == 2);
  CHECK(contains(lz4.err, "--compression-level: lz4 compression level 18 is outside Kafka's range"));
  auto snappy = brook_cli({"produce", dir.string(), "--compression", "snappy", "--compression-level", "1"}, "x\n");
  CHECK(snappy.exit_code == 2);
  CHECK(contains(snappy.err, "snappy has no level"));
  auto none = brook_cli({"produce", dir.string(), "--compression-level", "3"}, "x\n");
  CHECK(none.exit_code == 2);
  CHECK(contains(none.err, "--compression-level: none takes no compression level"));
  auto word = brook_cli({"produce", dir.string(), "--compression", "gzip", "--compression-level", "max"}, "x\n");
  CHECK(word.exit_code == 2);
  CHECK(contains(word.err, "--compression-level"));
  CHECK_FALSE(fs::exists(dir));  // refused before anything was opened

  const fs::path data = tmp / "data";
  REQUIRE(brook_cli({"topics", "--data-dir", data.string(), "--create", "--topic", "t"}).exit_code == 0);
  auto t = brook_cli(
      {"produce", "--data-dir", data.string(), "--topic", "t", "--compression", "gzip", "--compression-level", "10"},
      "x\n");
  CHECK(t.exit_code == 2);
  CHECK(contains(t.err, "gzip compression level 10 is outside Kafka's range"));
  // A level that is not a number is a usage error before anything else is looked at.
  auto bad_topic = brook_cli({"produce", "--data-dir", data.string(), "--topic", "no/such", "--compression", "gzip",
                              "--compression-level", "max"},
                             "x\n");
  CHECK(bad_topic.exit_code == 2);
  CHECK(contains(bad_topic.err, "--compression-level"));
  auto nothing = brook_cli({"consume", "--data-dir", data.string(), "--topic", "t", "--from-beginning"});
  REQUIRE(nothing.exit_code == 0);
  CHECK(nothing.out.empty());

  // A valid level of the codec: snappy's only level, 0.
  auto ok = brook_cli({"produce", dir.string(), "--compression", "snappy", "--compression-level", "0"}, "x\n");
  CHECK(ok.exit_code == 0);
  auto h = brook_cli({"produce", "--help"});
  CHECK(contains(h.out, "--compression-level L"));
}

#endif  // BROOK_CLI_PATH

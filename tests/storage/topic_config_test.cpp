#include <catch2/catch.hpp>
#include <chrono>

#include <brook/storage/topic_config.hpp>

using namespace brook;

TEST_CASE("topic names are validated as Kafka does", "[storage][topic_config]") {
  for (const char* good : {"orders", "a", "A.b_c-9", "__consumer_offsets", "x.."}) {
    INFO(good);
    CHECK(validate_topic_name(good));
  }
  CHECK(validate_topic_name(std::string(249, 'a')));
  for (std::string bad : {std::string(), std::string("."), std::string(".."), std::string(250, 'a'), std::string("a/b"),
                          std::string("../etc"), std::string("a b"), std::string("ü"), std::string("a\0b", 3)}) {
    INFO(bad);
    auto r = validate_topic_name(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_topic);
  }
}

TEST_CASE("topic overrides apply on top of the defaults", "[storage][topic_config]") {
  topic_config tc;
  tc.overrides = {{"retention.ms", "1000"}, {"segment.bytes", "65536"}, {"message.timestamp.type", "LogAppendTime"}};
  auto c = tc.apply(log_config{});
  REQUIRE(c);
  CHECK(c->retention_time == std::chrono::milliseconds(1000));
  CHECK(c->segment_bytes == 65536);
  CHECK(c->message_timestamp_type == timestamp_type::log_append_time);
  CHECK(c->index_interval_bytes == 4096);

  for (auto bad : std::vector<std::pair<std::string, std::string>>{{"retention.ms", "soon"},
                                                                   {"segment.bytes", "-5"},
                                                                   {"segment.bytes", "1"},
                                                                   {"no.such.config", "1"},
                                                                   {"message.timestamp.type", "Later"}}) {
    topic_config t;
    t.overrides[bad.first] = bad.second;
    INFO(bad.first << "=" << bad.second);
    auto r = t.apply(log_config{});
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_config);
  }
}

TEST_CASE("the topic-configs file round-trips and rejects damage", "[storage][topic_config]") {
  std::map<std::string, topic_config> m;
  m["orders"].partitions = 3;
  m["orders"].overrides["retention.ms"] = "5";
  m["audit"].partitions = 1;
  std::string text = detail::format_topic_configs(m);
  CHECK(text == "0\naudit partitions=1\norders partitions=3\norders retention.ms=5\n");
  auto back = detail::parse_topic_configs(text, "f");
  REQUIRE(back);
  CHECK(back->at("orders").partitions == 3);
  CHECK(back->at("orders").overrides.at("retention.ms") == "5");
  for (const char* bad :
       {"1\n", "0\norders\n", "0\nbad/name partitions=1\n", "0\norders partitions=0\n", "0\norders partitions=x\n"}) {
    INFO(bad);
    auto r = detail::parse_topic_configs(bad, "f");
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::kafka_storage_error);
  }
}

// Issue 11 #13: max.message.bytes=4294967396 was accepted and narrowed to 100.
TEST_CASE("int configs past 2^31-1 are refused, never narrowed", "[storage][topic_config]") {
  for (const char* key : {"max.message.bytes", "index.interval.bytes", "segment.bytes", "segment.index.bytes"}) {
    for (const char* value : {"4294967396", "4294967297", "2147483648", "9223372036854775807"}) {
      topic_config t;
      t.overrides[key] = value;
      INFO(key << "=" << value);
      auto r = t.apply(log_config{});
      REQUIRE_FALSE(r);
      CHECK(r.error() == errc::invalid_config);
      CHECK_THAT(r.error().message(), Catch::Contains(key));
    }
  }
  topic_config largest;
  largest.overrides = {{"max.message.bytes", "2147483647"}, {"index.interval.bytes", "2147483647"}};
  auto c = largest.apply(log_config{});
  REQUIRE(c);
  CHECK(c->max_message_bytes == 2147483647u);
  CHECK(c->index_interval_bytes == 2147483647u);
  topic_config too_long;
  too_long.overrides["retention.ms"] = "9223372036854775808";  // past int64: not an integer
  CHECK(too_long.apply(log_config{}) == errc::invalid_config);
}

TEST_CASE("a host-built log_config past Kafka's int range is refused", "[storage][topic_config]") {
  log_config c;
  c.max_message_bytes = 3'000'000'000u;
  CHECK(c.validate() == errc::invalid_config);
  c = log_config{};
  c.index_interval_bytes = 4'000'000'000u;
  CHECK(c.validate() == errc::invalid_config);
  c = log_config{};
  c.segment_index_bytes = std::uint64_t{1} << 31;
  CHECK(c.validate() == errc::invalid_config);
  CHECK(log_config{}.validate());
}

// Issue 11 #20: junk from a topic-configs file (or, soon, a peer) was echoed raw into errors.
TEST_CASE("config errors never echo control bytes or unbounded text", "[storage][topic_config]") {
  const std::string junk = std::string("x\x1b[2J\xff\n") + std::string(500, 'y');
  auto is_clean = [](const std::string& msg) {
    for (unsigned char c : msg)
      if (c < 0x20 || c >= 0x7f) return false;
    return msg.size() < 400;
  };
  for (const char* key : {"segment.bytes", "cleanup.policy", "message.timestamp.type", "min.cleanable.dirty.ratio"}) {
    topic_config t;
    t.overrides[key] = junk;
    auto r = t.apply(log_config{});
    REQUIRE_FALSE(r);
    INFO(r.error().message());
    CHECK(is_clean(r.error().message()));
    CHECK_THAT(r.error().message(), Catch::Contains("\\x1b"));
  }
  topic_config unknown;
  unknown.overrides[junk] = "1";
  auto u = unknown.apply(log_config{});
  REQUIRE_FALSE(u);
  CHECK(is_clean(u.error().message()));
  for (const std::string text : {"\x01\xff\n", "0\norders partitions=\x1b\n",
                                 "0\nor\x7f"
                                 "ders partitions=1\n"}) {
    auto r = detail::parse_topic_configs(text, "f");
    REQUIRE_FALSE(r);
    INFO(r.error().message());
    CHECK(is_clean(r.error().message()));
  }
  auto name = validate_topic_name(
      "a\x1b"
      "b");
  REQUIRE_FALSE(name);
  CHECK(is_clean(name.error().message()));
}

TEST_CASE("compression.type and the levels are Kafka's topic configs", "[storage][topic_config][compression]") {
  auto apply = [](std::string k, std::string v) {
    topic_config tc;
    tc.overrides[k] = v;
    return tc.apply(log_config{});
  };
  CHECK_FALSE(log_config{}.compression.has_value());  // producer: the default
  for (auto [text, want] :
       std::vector<std::pair<std::string, std::optional<compression_type>>>{{"producer", std::nullopt},
                                                                            {"uncompressed", compression_type::none},
                                                                            {"gzip", compression_type::gzip},
                                                                            {"Snappy", compression_type::snappy},
                                                                            {"LZ4", compression_type::lz4},
                                                                            {"zstd", compression_type::zstd}}) {
    INFO(text);
    auto c = apply("compression.type", text);
    REQUIRE(c);
    CHECK(c->compression == want);
    // Described as Kafka prints it.
    for (const auto& [k, v] : topic_config_values(*c))
      if (k == "compression.type") CHECK(v == topic_compression_name(want));
  }
  for (std::string bad : {"none", "lz5", "", "gzip "}) {
    INFO("'" << bad << "'");
    auto c = apply("compression.type", bad);
    REQUIRE_FALSE(c);
    CHECK(c.error() == errc::invalid_config);
  }
  auto z = apply("compression.zstd.level", "19");
  REQUIRE(z);
  CHECK(z->compression_zstd_level == 19);
  CHECK(z->compression_level(compression_type::zstd) == 19);
  CHECK(apply("compression.gzip.level", "-1"));
  CHECK(apply("compression.lz4.level", "17"));
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{{"compression.gzip.level", "0"},
                                                                      {"compression.gzip.level", "10"},
                                                                      {"compression.lz4.level", "18"},
                                                                      {"compression.zstd.level", "23"},
                                                                      {"compression.zstd.level", "-131073"},
                                                                      {"compression.lz4.level", "99999999999"}}) {
    INFO(k << "=" << v);
    auto c = apply(k, v);
    REQUIRE_FALSE(c);
    CHECK(c.error() == errc::invalid_config);
  }
}

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include <brook/compression/compression_type.hpp>

using brook::compression_type;

TEST_CASE("compression types have Kafka's ids and names", "[compression][compression_type]") {
  CHECK(static_cast<int>(compression_type::none) == 0);
  CHECK(static_cast<int>(compression_type::gzip) == 1);
  CHECK(static_cast<int>(compression_type::snappy) == 2);
  CHECK(static_cast<int>(compression_type::lz4) == 3);
  CHECK(static_cast<int>(compression_type::zstd) == 4);
  for (int id = 0; id <= brook::max_compression_type_id; ++id) {
    const auto t = brook::compression_type_from_id(id);
    REQUIRE(t.has_value());
    CHECK(static_cast<int>(*t) == id);
    auto parsed = brook::parse_compression_type(brook::compression_name(*t));
    REQUIRE(parsed);
    CHECK(*parsed == *t);
  }
  CHECK(brook::compression_name(compression_type::lz4) == "lz4");
  CHECK(brook::compression_name(static_cast<compression_type>(5)) == "unknown");
  for (int id : {-1, 5, 6, 7, 8, 127}) CHECK_FALSE(brook::compression_type_from_id(id).has_value());
}

TEST_CASE("compression type names parse in any case and nothing else does", "[compression][compression_type]") {
  CHECK(*brook::parse_compression_type("ZSTD") == compression_type::zstd);
  CHECK(*brook::parse_compression_type("Gzip") == compression_type::gzip);
  for (const std::string& bad :
       std::vector<std::string>{"", "producer", "uncompressed", "lz4 ", "zstd1", "gzi", std::string("gz\0p", 4)}) {
    auto r = brook::parse_compression_type(bad);
    REQUIRE_FALSE(r);
    CHECK(r == brook::errc::invalid_config);
    CHECK(r.error().message().find("none, gzip, snappy, lz4, zstd") != std::string::npos);
  }
  auto r = brook::parse_compression_type("\x1b[2Jbad");
  REQUIRE_FALSE(r);
  CHECK(r.error().message().find("'\\x1b[2Jbad'") != std::string::npos);
}

#include <catch2/catch.hpp>
#include <set>

#include <brook/protocol/api_keys.hpp>

using namespace brook::protocol;

TEST_CASE("the API table: unique keys, Kafka's versions, lookups", "[protocol][api_keys]") {
  std::set<std::int16_t> keys;
  for (const api_info& a : known_apis) {
    INFO(a.name);
    CHECK(keys.insert(static_cast<std::int16_t>(a.key)).second);
    CHECK(find_api(static_cast<std::int16_t>(a.key)) == &a);
    CHECK(a.valid.lo == 0);  // every one of them is defined from version 0
    CHECK_FALSE(a.valid.empty());
    CHECK(a.flexible.lo <= a.valid.hi);  // and has flexible versions at its top
  }
  CHECK(keys.size() == 20);
  CHECK(find_api(4) == nullptr);  // LeaderAndIsr: an inter-broker API brook does not describe
  CHECK(find_api(-1) == nullptr);
  CHECK(find_api(1000) == nullptr);
  // Spot checks against apache/kafka's message JSONs (1eb7644).
  CHECK(api(api_key::fetch).valid.hi == 17);
  CHECK(api(api_key::fetch).flexible.lo == 12);
  CHECK(api(api_key::metadata).valid.hi == 12);
  CHECK(api(api_key::api_versions).flexible.lo == 3);
  CHECK(api(api_key::delete_groups).valid.hi == 2);
  CHECK(is_valid_version(api_key::produce, 11));
  CHECK_FALSE(is_valid_version(api_key::produce, 12));
  CHECK_FALSE(is_valid_version(api_key::produce, -1));
}

TEST_CASE("header versions follow the first flexible version with Kafka's two exceptions", "[protocol][api_keys]") {
  CHECK(request_header_version(api_key::produce, 8) == 1);
  CHECK(response_header_version(api_key::produce, 8) == 0);
  CHECK(request_header_version(api_key::produce, 9) == 2);
  CHECK(response_header_version(api_key::produce, 9) == 1);
  CHECK(request_header_version(api_key::fetch, 11) == 1);
  CHECK(request_header_version(api_key::fetch, 12) == 2);
  // ApiVersions answers always use response header v0 (KIP-511), even for flexible requests
  // and for versions past Kafka's newest.
  CHECK(request_header_version(api_key::api_versions, 2) == 1);
  CHECK(request_header_version(api_key::api_versions, 3) == 2);
  CHECK(request_header_version(api_key::api_versions, 9) == 2);
  for (std::int16_t v = 0; v <= 9; ++v) CHECK(response_header_version(api_key::api_versions, v) == 0);
  // ControlledShutdown v0 is the one request with header v0.
  CHECK(request_header_version(api_key::controlled_shutdown, 0) == 0);
  CHECK(request_header_version(api_key::controlled_shutdown, 1) == 1);
  CHECK(request_header_version(api_key::controlled_shutdown, 3) == 2);
}

#ifdef BROOK_PROTOCOL_DOC
#include <fmt/format.h>

#include <brook/protocol/messages.hpp>

#include <fstream>
#include <sstream>
#include <string>

namespace {
// What brook's schema describes for `key`: "lo-hi" of the request and response tables (which
// must agree), or "none".
std::string described_versions(api_key key) {
  std::string out = "none";
  for_each_api([&](auto api) {
    using A = decltype(api);
    if (A::key != key) return;
    constexpr auto q = brook::codec::schema_of<typename A::request>.info;
    constexpr auto r = brook::codec::schema_of<typename A::response>.info;
    static_assert(q.valid.lo == r.valid.lo && q.valid.hi == r.valid.hi);
    static_assert(q.flexible.lo == r.flexible.lo);
    out = fmt::format("{}-{} (flexible {}+)", q.valid.lo, q.valid.hi, q.flexible.lo);
  });
  return out;
}
}  // namespace

TEST_CASE("docs/protocol.md lists exactly the API table of api_keys.hpp and the schema", "[protocol][api_keys][docs]") {
  std::string want = "| API | key | Kafka's versions | flexible from | brook's messages |\n|---|---|---|---|---|\n";
  for (const api_info& a : known_apis)
    want += fmt::format("| {} | {} | {}-{} | {} | {} |\n", a.name, static_cast<int>(a.key), a.valid.lo, a.valid.hi,
                        a.flexible.lo, described_versions(a.key));
  std::ifstream in(BROOK_PROTOCOL_DOC);
  REQUIRE(in);
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const auto begin = text.find("-->\n", text.find("<!-- api table:"));
  const auto end = text.find("<!-- end of api table -->");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  INFO("the table docs/protocol.md should hold:\n" << want);
  CHECK(text.substr(begin + 4, end - begin - 4) == want);
}
#endif

#include <catch2/catch.hpp>

#include <brook/server/served_apis.hpp>

using namespace brook;
using namespace brook::protocol;
using brook::server::served_apis;

TEST_CASE("a served-API table answers what it lists and advertises it in key order", "[server][served_apis]") {
  const served_apis t({{api_key::metadata, codec::between(0, 12)},
                       {api_key::api_versions, codec::between(0, 3)},
                       {api_key::produce, codec::between(3, 11)}});
  CHECK(t.serves(api_key::produce, 3));
  CHECK(t.serves(api_key::produce, 11));
  CHECK_FALSE(t.serves(api_key::produce, 2));
  CHECK_FALSE(t.serves(api_key::fetch, 4));
  CHECK_FALSE(t.serves(api_key::api_versions, 4));
  CHECK_FALSE(t.find(api_key::fetch));

  const auto a = t.api_versions_answer();
  CHECK(a.error_code == 0);
  REQUIRE(a.api_keys.size() == 3);
  // Produce from v3 is advertised from v0, as Kafka 4.0 does (KAFKA-18659), and still refused below v3.
  CHECK(a.api_keys[0] == api_version_range{0, 0, 11});
  CHECK(a.api_keys[1] == api_version_range{3, 0, 12});
  CHECK(a.api_keys[2] == api_version_range{18, 0, 3});
  // Any other lower end, or another API from v3, is advertised as served.
  const served_apis p4({{api_key::api_versions, codec::between(0, 3)},
                        {api_key::produce, codec::between(4, 11)},
                        {api_key::fetch, codec::between(3, 12)}});
  CHECK(p4.api_versions_answer().api_keys[0] == api_version_range{0, 4, 11});
  CHECK(p4.api_versions_answer().api_keys[1] == api_version_range{1, 3, 12});

  const auto u = t.unsupported_api_versions_answer();
  CHECK(u.error_code == 35);
  REQUIRE(u.api_keys.size() == 1);
  CHECK(u.api_keys[0] == api_version_range{18, 0, 3});
}

#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include <brook/protocol/api_versions.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::encoded;

TEST_CASE("ApiVersions byte for byte: classic and flexible", "[protocol][api_versions]") {
  api_versions_response r;
  r.api_keys = {{18, 0, 3}};
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3}));
  r.throttle_time_ms = 7;
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3, 0, 0, 0, 7}));
  // v3: a compact array (count + 1), a tagged section per element, then one for the body.
  CHECK(encoded(r, 3) == bytes_of({0, 0, 2, 0, 18, 0, 0, 0, 3, 0, 0, 0, 0, 7, 0}));
  r.finalized_features_epoch = 5;  // tagged field 1, written only when not its default -1
  CHECK(encoded(r, 3) == bytes_of({0, 0, 2, 0, 18, 0, 0, 0, 3, 0, 0, 0, 0, 7, 1, 1, 8, 0, 0, 0, 0, 0, 0, 0, 5}));
  api_versions_request q{"kcat", "1.7"};
  CHECK(encoded(q, 2).empty());
  CHECK(encoded(q, 3) == bytes_of({5, 'k', 'c', 'a', 't', 4, '1', '.', '7', 0}));
  auto back = codec::decode<api_versions_request>(encoded(q, 4), 4);
  REQUIRE_OK(back);
  CHECK(*back == q);
}

TEST_CASE("an unsupported ApiVersions version gets a v0 answer naming the supported range",
          "[protocol][api_versions]") {
  const auto a = unsupported_version_answer(codec::between(0, 3));
  CHECK(encoded(a, 0) == bytes_of({0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 3}));
  auto back = codec::decode<api_versions_response>(encoded(a, 0), 0);
  REQUIRE_OK(back);
  CHECK(back->error_code == 35);
  REQUIRE(back->api_keys.size() == 1);
  CHECK(back->api_keys[0] == api_version_range{18, 0, 3});
}

TEST_CASE("ApiVersions round-trips at every version and refuses damage with named errors", "[protocol][api_versions]") {
  std::mt19937_64 g(18);
  for (std::int16_t v = 0; v <= 4; ++v) {
    INFO("v" << v);
    for (int trial = 0; trial < 50; ++trial) {
      api_versions_response r;
      r.error_code = static_cast<std::int16_t>(g() % 100);
      for (std::size_t i = g() % 30; i > 0; --i)
        r.api_keys.push_back({static_cast<std::int16_t>(g() % 70), static_cast<std::int16_t>(g() % 3),
                              static_cast<std::int16_t>(g() % 20)});
      if (v >= 1) r.throttle_time_ms = static_cast<std::int32_t>(g() % 1000);
      if (v >= 3) {
        if (g() % 2) r.supported_features.push_back({"metadata.version", 1, static_cast<std::int16_t>(g() % 30)});
        r.finalized_features_epoch = g() % 2 ? -1 : static_cast<std::int64_t>(g() % 100);
        r.zk_migration_ready = g() % 2 == 0;
      }
      const auto b = encoded(r, v);
      auto back = codec::decode<api_versions_response>(b, v);
      REQUIRE_OK(back);
      CHECK(*back == r);
      CHECK(encoded(*back, v) == b);
      for (std::size_t n = 0; n < b.size(); ++n) {  // every truncation is a named error
        auto cut = codec::decode<api_versions_response>(std::span<const std::byte>(b.data(), n), v);
        REQUIRE_FALSE(cut);
        CHECK(cut.error() == errc::corrupt_message);
      }
    }
  }
  // A count of elements the bytes cannot hold is refused before anything is allocated.
  auto huge = codec::decode<api_versions_response>(bytes_of({0, 0, 0x7f, 0xff, 0xff, 0xff}), 0);
  REQUIRE_FALSE(huge);
  CHECK(huge.error() == errc::corrupt_message);
  CHECK_THAT(huge.error().message(), Catch::Contains("ApiKeys"));
}

#include <catch2/catch.hpp>

#include <brook/protocol/describe_configs.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

namespace {
constexpr std::int8_t topic_resource = 2;  // ConfigResource.Type.TOPIC
}  // namespace

TEST_CASE("DescribeConfigs requests byte for byte: v0 v1 v3 and flexible v4", "[protocol][describe_configs]") {
  describe_configs_request q;
  q.resources = {{topic_resource, "t", std::nullopt}};  // every key
  CHECK(encoded(q, 0) == bytes_of({0, 0, 0, 1, 2, 0, 1, 't', 0xff, 0xff, 0xff, 0xff}));
  q.include_synonyms = true;
  auto v0 = codec::encode(q, 0);  // IncludeSynonyms (v1+) is not ignorable
  REQUIRE_FALSE(v0);
  CHECK(v0.error() == errc::unsupported_version);
  CHECK_THAT(v0.error().message(), Catch::Contains("IncludeSynonyms"));
  CHECK(encoded(q, 1) == bytes_of({0, 0, 0, 1, 2, 0, 1, 't', 0xff, 0xff, 0xff, 0xff, 1}));
  q.include_documentation = true;
  auto v2 = codec::encode(q, 2);  // nor is IncludeDocumentation (v3+)
  REQUIRE_FALSE(v2);
  CHECK(v2.error() == errc::unsupported_version);
  CHECK(encoded(q, 3) == bytes_of({0, 0, 0, 1, 2, 0, 1, 't', 0xff, 0xff, 0xff, 0xff, 1, 1}));
  CHECK(encoded(q, 4) == bytes_of({2, 2, 2, 't', 0, 0, 1, 1, 0}));
  q.resources[0].configuration_keys = std::vector<std::string>{"k"};
  CHECK(encoded(q, 4) == bytes_of({2, 2, 2, 't', 2, 2, 'k', 0, 1, 1, 0}));
  q.include_synonyms = q.include_documentation = false;
  CHECK(encoded(q, 0) == bytes_of({0, 0, 0, 1, 2, 0, 1, 't', 0, 0, 0, 1, 0, 1, 'k'}));
}

TEST_CASE("DescribeConfigs responses byte for byte: v0 v1 v3 and flexible v4", "[protocol][describe_configs]") {
  describe_configs_response r;
  describe_configs_response_result res;
  res.error_message.reset();
  res.resource_type = topic_resource;
  res.resource_name = "t";
  describe_configs_response_config c;
  c.name = "k";
  c.value = "v";
  c.is_default = true;
  res.configs = {c};
  r.results = {res};
  // ThrottleTimeMs | Results [ErrorCode | ErrorMessage | ResourceType | ResourceName
  // | Configs [Name | Value | ReadOnly | IsDefault | IsSensitive]]
  CHECK(encoded(r, 0) ==
        bytes_of({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 2, 0, 1, 't', 0, 0, 0, 1, 0, 1, 'k', 0, 1, 'v', 0, 1, 0}));
  auto v1 = codec::encode(r, 1);  // IsDefault exists only in v0 and is not ignorable
  REQUIRE_FALSE(v1);
  CHECK(v1.error() == errc::unsupported_version);
  CHECK_THAT(v1.error().message(), Catch::Contains("IsDefault"));
  auto& rc = r.results[0].configs[0];
  rc.is_default = false;
  rc.config_source = 1;  // DYNAMIC_TOPIC_CONFIG
  rc.synonyms = {{"k", "v", 1}};
  // v0 drops the ignorable ConfigSource and Synonyms.
  CHECK(encoded(r, 0) ==
        bytes_of({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xff, 0xff, 2, 0, 1, 't', 0, 0, 0, 1, 0, 1, 'k', 0, 1, 'v', 0, 0, 0}));
  // v1: Name | Value | ReadOnly | ConfigSource | IsSensitive | Synonyms [Name | Value | Source]
  CHECK(encoded(r, 1) == bytes_of({0, 0, 0,   0, 0, 0,   0, 1, 0, 0, 0xff, 0xff, 2, 0, 1, 't', 0, 0, 0,   1,
                                   0, 1, 'k', 0, 1, 'v', 0, 1, 0, 0, 0,    0,    1, 0, 1, 'k', 0, 1, 'v', 1}));
  rc.config_type = 2;  // STRING
  rc.documentation.reset();
  // v3 adds ConfigType | Documentation.
  CHECK(encoded(r, 3) ==
        bytes_of({0,   0, 0, 0,   0, 0, 0, 1, 0, 0, 0xff, 0xff, 2, 0,   1, 't', 0,   0, 0, 1,    0,   1,
                  'k', 0, 1, 'v', 0, 1, 0, 0, 0, 0, 1,    0,    1, 'k', 0, 1,   'v', 1, 2, 0xff, 0xff}));
  CHECK(encoded(r, 4) == bytes_of({0, 0, 0, 0, 2, 0,   0, 0,   2, 2, 't', 2, 2, 'k', 2, 'v',
                                   0, 1, 0, 2, 2, 'k', 2, 'v', 1, 0, 2,   0, 0, 0,   0}));
}

TEST_CASE("DescribeConfigs round-trips at every version", "[protocol][describe_configs]") {
  for (std::int16_t v = 0; v <= 4; ++v) {
    INFO("v" << v);
    describe_configs_request q;
    q.resources = {{topic_resource, "orders", std::nullopt},
                   {4, "1", std::vector<std::string>{"log.retention.ms", "num.io.threads"}}};  // BROKER
    if (v >= 1) q.include_synonyms = true;
    if (v >= 3) q.include_documentation = true;
    check_round_trip(q, v);

    describe_configs_response r;
    r.throttle_time_ms = 20 + v;
    describe_configs_response_result topic;
    topic.error_message.reset();
    topic.resource_type = topic_resource;
    topic.resource_name = "orders";
    describe_configs_response_config retention;
    retention.name = "retention.ms";
    retention.value = "604800000";
    describe_configs_response_config secret;
    secret.name = "sasl.jaas.config";
    secret.value.reset();
    secret.read_only = true;
    secret.is_sensitive = true;
    if (v == 0) {
      retention.is_default = true;
    } else {
      retention.config_source = 5;  // DEFAULT_CONFIG
      secret.config_source = 4;     // STATIC_BROKER_CONFIG
      retention.synonyms = {{"log.retention.ms", "604800000", 4}, {"log.retention.hours", std::nullopt, 5}};
    }
    if (v >= 3) {
      retention.config_type = 5;  // LONG
      retention.documentation = "How long to keep a log segment.";
      secret.config_type = 9;  // PASSWORD
      secret.documentation.reset();
    }
    topic.configs = {retention, secret};
    describe_configs_response_result denied;
    denied.error_code = 29;  // TOPIC_AUTHORIZATION_FAILED
    denied.error_message = "denied";
    denied.resource_type = topic_resource;
    denied.resource_name = "secret";
    r.results = {topic, denied};
    check_round_trip(r, v);
  }
}

TEST_CASE("DescribeConfigs refuses lying counts and lengths", "[protocol][describe_configs]") {
  // v4: ConfigurationKeys announces 126 keys, one present.
  auto keys = codec::decode<describe_configs_request>(bytes_of({2, 2, 2, 't', 0x7f, 2, 'k', 0, 1, 1, 0}), 4);
  REQUIRE_FALSE(keys);
  CHECK(keys.error() == errc::corrupt_message);
  CHECK_THAT(keys.error().message(), Catch::Contains("ConfigurationKeys"));
  // v1: Synonyms announces 1000 synonyms.
  auto synonyms = codec::decode<describe_configs_response>(
      bytes_of({0, 0, 0,   0, 0, 0,   0, 1, 0, 0, 0xff, 0xff, 2,    0, 1, 't', 0, 0, 0,   1,
                0, 1, 'k', 0, 1, 'v', 0, 1, 0, 0, 0,    3,    0xe8, 0, 1, 'k', 0, 1, 'v', 1}),
      1);
  REQUIRE_FALSE(synonyms);
  CHECK(synonyms.error() == errc::corrupt_message);
  CHECK_THAT(synonyms.error().message(), Catch::Contains("Synonyms"));
  // v3: Documentation claims 200 bytes, none present.
  auto doc = codec::decode<describe_configs_response>(
      bytes_of({0, 0, 0, 0, 0,   0, 0, 1,   0, 0, 0xff, 0xff, 2, 0, 1, 't', 0, 0,
                0, 1, 0, 1, 'k', 0, 1, 'v', 0, 1, 0,    0,    0, 0, 0, 2,   0, 200}),
      3);
  REQUIRE_FALSE(doc);
  CHECK(doc.error() == errc::corrupt_message);
  CHECK_THAT(doc.error().message(), Catch::Contains("Documentation"));
}

// DescribeConfigs (key 32): the configuration of topics, brokers and other resources, with
// (v1+) where each value comes from and (v3+) its type and documentation. Transcribed from
// apache/kafka's DescribeConfigsRequest.json and DescribeConfigsResponse.json (1eb7644):
// v0-3 classic, v4 flexible (v0 deprecated).
//
//   request   Resources [ResourceType int8 | ResourceName string
//             | ConfigurationKeys nullable [string]] | IncludeSynonyms bool (v1+)
//             | IncludeDocumentation bool (v3+)
//   response  ThrottleTimeMs int32 | Results [ErrorCode int16 | ErrorMessage nullable string
//             | ResourceType int8 | ResourceName string | Configs [Name string
//             | Value nullable string | ReadOnly bool | IsDefault bool (v0 only)
//             | ConfigSource int8 (v1+, default -1) | IsSensitive bool
//             | Synonyms [Name string | Value nullable string | Source int8] (v1+)
//             | ConfigType int8 (v3+, default 0) | Documentation nullable string (v3+)]]
//
// Null ConfigurationKeys lists every key of the resource. IncludeSynonyms,
// IncludeDocumentation and IsDefault are not ignorable: asking for what a version cannot
// carry, or answering IsDefault after v0 (where ConfigSource replaces it), is
// unsupported_version. ConfigSource does not exist in v0: a v0 answer decodes with its default
// -1, which Kafka's JSON gives as a value that stands for "unknown". Nullable strings without
// a JSON default start empty and the
// nullable ConfigurationKeys starts as an empty array, as in Kafka's generated code.
//
// Worked example, DescribeConfigsResponse v4 (flexible): topic "t" has config "k" = "v", a
// dynamic topic config (source 1) of type STRING (2) without documentation, and one synonym:
//
//   00 00 00 00                    ThrottleTimeMs 0
//   02                             Results: compact array, 1 element + 1
//     00 00                        ErrorCode 0
//     00                           ErrorMessage: null (compact nullable string 0)
//     02                           ResourceType 2 (topic)
//     02 74                        ResourceName: compact string, length 1 + 1, "t"
//     02                           Configs: 1 element + 1
//       02 6b                      Name "k"
//       02 76                      Value "v"
//       00                         ReadOnly false
//       01                         ConfigSource 1 (DYNAMIC_TOPIC_CONFIG)
//       00                         IsSensitive false
//       02                         Synonyms: 1 element + 1
//         02 6b                    Name "k"
//         02 76                    Value "v"
//         01                       Source 1
//         00                       the synonym's tagged fields: none
//       02                         ConfigType 2 (STRING)
//       00                         Documentation: null
//       00                         the config's tagged fields: none
//     00                           the result's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/describe_configs_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>

namespace brook::protocol {

/// DescribeConfigsResource.
struct describe_configs_request_resource {
  std::int8_t resource_type = 0;
  std::string resource_name{};
  std::optional<std::vector<std::string>> configuration_keys{std::vector<std::string>{}};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_configs_request_resource;
    return structure<r>(field("ResourceType", &r::resource_type), field("ResourceName", &r::resource_name),
                        field("ConfigurationKeys", &r::configuration_keys));
  }
  friend bool operator==(const describe_configs_request_resource&, const describe_configs_request_resource&) = default;
};

struct describe_configs_request {
  std::vector<describe_configs_request_resource> resources{};
  bool include_synonyms = false;
  bool include_documentation = false;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_configs_request;
    return message<r>({.name = "DescribeConfigsRequest", .valid = between(0, 4), .flexible = since(4), .api_key = 32},
                      field("Resources", &r::resources), field("IncludeSynonyms", &r::include_synonyms).in(since(1)),
                      field("IncludeDocumentation", &r::include_documentation).in(since(3)));
  }
  friend bool operator==(const describe_configs_request&, const describe_configs_request&) = default;
};

/// DescribeConfigsSynonym (v1+).
struct describe_configs_response_synonym {
  std::string name{};
  std::optional<std::string> value{std::string()};
  std::int8_t source = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_configs_response_synonym;
    return structure<r>(field("Name", &r::name).in(since(1)), field("Value", &r::value).in(since(1)),
                        field("Source", &r::source).in(since(1)));
  }
  friend bool operator==(const describe_configs_response_synonym&, const describe_configs_response_synonym&) = default;
};

/// DescribeConfigsResourceResult: one configuration.
struct describe_configs_response_config {
  std::string name{};
  std::optional<std::string> value{std::string()};
  bool read_only = false;
  bool is_default = false;
  std::int8_t config_source = -1;
  bool is_sensitive = false;
  std::vector<describe_configs_response_synonym> synonyms{};
  std::int8_t config_type = 0;
  std::optional<std::string> documentation{std::string()};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_configs_response_config;
    return structure<r>(field("Name", &r::name), field("Value", &r::value), field("ReadOnly", &r::read_only),
                        field("IsDefault", &r::is_default).in(only(0)),
                        field("ConfigSource", &r::config_source).in(since(1)).ignorable(),
                        field("IsSensitive", &r::is_sensitive),
                        field("Synonyms", &r::synonyms).in(since(1)).ignorable(),
                        field("ConfigType", &r::config_type).in(since(3)).ignorable(),
                        field("Documentation", &r::documentation).in(since(3)).ignorable());
  }
  friend bool operator==(const describe_configs_response_config&, const describe_configs_response_config&) = default;
};

/// DescribeConfigsResult: one resource.
struct describe_configs_response_result {
  std::int16_t error_code = 0;
  std::optional<std::string> error_message{std::string()};
  std::int8_t resource_type = 0;
  std::string resource_name{};
  std::vector<describe_configs_response_config> configs{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_configs_response_result;
    return structure<r>(field("ErrorCode", &r::error_code), field("ErrorMessage", &r::error_message),
                        field("ResourceType", &r::resource_type), field("ResourceName", &r::resource_name),
                        field("Configs", &r::configs));
  }
  friend bool operator==(const describe_configs_response_result&, const describe_configs_response_result&) = default;
};

struct describe_configs_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<describe_configs_response_result> results{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = describe_configs_response;
    return message<r>({.name = "DescribeConfigsResponse", .valid = between(0, 4), .flexible = since(4), .api_key = 32},
                      field("ThrottleTimeMs", &r::throttle_time_ms), field("Results", &r::results));
  }
  friend bool operator==(const describe_configs_response&, const describe_configs_response&) = default;
};

}  // namespace brook::protocol

// ApiVersions (key 18): a client asks which versions of each API the broker answers, and
// then uses the highest both sides know. Transcribed from apache/kafka's
// ApiVersionsRequest.json and ApiVersionsResponse.json (1eb7644); v0-2 are classic, v3+
// flexible.
//
//   request  v0-2  (no fields)
//            v3+   ClientSoftwareName compact string | ClientSoftwareVersion compact string
//                  | tagged fields
//   response v0    ErrorCode int16 | ApiKeys [ApiKey int16 | MinVersion int16 | MaxVersion int16]
//            v1-2  v0 | ThrottleTimeMs int32
//            v3+   the same with compact arrays and tagged fields in each element and at the
//                  end: SupportedFeatures (tag 0), FinalizedFeaturesEpoch (tag 1, default -1),
//                  FinalizedFeatures (tag 2), ZkMigrationReady (tag 3)
//
// The rule for versions (Kafka's ApiVersionsRequest.getErrorResponse): a broker accepts an
// ApiVersions request of any version. One it does not support is not parsed; it is answered
// with unsupported_version_answer(): a v0 body with error UNSUPPORTED_VERSION (35) and an
// ApiKeys array that holds only the ApiVersions range. The answer's header is v0 whatever the
// version (api_keys.hpp), so a client can read it and retry with a version it finds there.
//
// Worked example, ApiVersionsResponse v3 (flexible), no error, listing ApiVersions
// (key 18) at versions 0-3, throttled 7 ms, with the tagged FinalizedFeaturesEpoch 5:
//
//   00 00                          ErrorCode 0
//   02                             ApiKeys: compact array, 1 element + 1
//     00 12                        ApiKey 18
//     00 00                        MinVersion 0
//     00 03                        MaxVersion 3
//     00                           the element's tagged fields: none
//   00 00 00 07                    ThrottleTimeMs 7
//   01                             the message's tagged fields: 1 field
//     01                           tag 1: FinalizedFeaturesEpoch
//     08                           size: 8 bytes
//     00 00 00 00 00 00 00 05      FinalizedFeaturesEpoch 5 (int64)
//
// (tests/protocol/api_versions_test.cpp checks these bytes.)
//
// Thread-safety: plain values; the functions are reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/error.hpp>
#include <brook/protocol/api_keys.hpp>

namespace brook::protocol {

struct api_versions_request {
  std::string client_software_name{};
  std::string client_software_version{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = api_versions_request;
    return message<r>({.name = "ApiVersionsRequest", .valid = between(0, 4), .flexible = since(3), .api_key = 18},
                      field("ClientSoftwareName", &r::client_software_name).in(since(3)).ignorable(),
                      field("ClientSoftwareVersion", &r::client_software_version).in(since(3)).ignorable());
  }
  friend bool operator==(const api_versions_request&, const api_versions_request&) = default;
};

/// One API's range in an ApiVersions answer.
struct api_version_range {
  std::int16_t api_key = 0;
  std::int16_t min_version = 0;
  std::int16_t max_version = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = api_version_range;
    return structure<r>(field("ApiKey", &r::api_key), field("MinVersion", &r::min_version),
                        field("MaxVersion", &r::max_version));
  }
  friend bool operator==(const api_version_range&, const api_version_range&) = default;
};

struct supported_feature {
  std::string name{};
  std::int16_t min_version = 0;
  std::int16_t max_version = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = supported_feature;
    return structure<r>(field("Name", &r::name), field("MinVersion", &r::min_version),
                        field("MaxVersion", &r::max_version));
  }
  friend bool operator==(const supported_feature&, const supported_feature&) = default;
};

struct finalized_feature {
  std::string name{};
  std::int16_t max_version_level = 0;
  std::int16_t min_version_level = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = finalized_feature;
    return structure<r>(field("Name", &r::name), field("MaxVersionLevel", &r::max_version_level),
                        field("MinVersionLevel", &r::min_version_level));
  }
  friend bool operator==(const finalized_feature&, const finalized_feature&) = default;
};

struct api_versions_response {
  std::int16_t error_code = 0;
  std::vector<api_version_range> api_keys{};
  std::int32_t throttle_time_ms = 0;
  std::vector<supported_feature> supported_features{};
  std::int64_t finalized_features_epoch = -1;
  std::vector<finalized_feature> finalized_features{};
  bool zk_migration_ready = false;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = api_versions_response;
    return message<r>({.name = "ApiVersionsResponse", .valid = between(0, 4), .flexible = since(3), .api_key = 18},
                      field("ErrorCode", &r::error_code), field("ApiKeys", &r::api_keys),
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("SupportedFeatures", &r::supported_features).tagged(0, since(3)).ignorable(),
                      field("FinalizedFeaturesEpoch", &r::finalized_features_epoch).tagged(1, since(3)).ignorable(),
                      field("FinalizedFeatures", &r::finalized_features).tagged(2, since(3)).ignorable(),
                      field("ZkMigrationReady", &r::zk_migration_ready).tagged(3, since(3)).ignorable());
  }
  friend bool operator==(const api_versions_response&, const api_versions_response&) = default;
};

/// The answer to an ApiVersions request whose version the broker does not support: encode it
/// at version 0, whatever the request's version, after a v0 response header. `supported` is
/// the ApiVersions range the broker answers.
inline api_versions_response unsupported_version_answer(codec::versions supported) {
  api_versions_response out;
  out.error_code = static_cast<std::int16_t>(errc::unsupported_version);
  out.api_keys.push_back({static_cast<std::int16_t>(api_key::api_versions), supported.lo, supported.hi});
  return out;
}

}  // namespace brook::protocol

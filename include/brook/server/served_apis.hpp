// Which APIs and versions a broker answers: what its ApiVersions answer advertises, and the
// test every request passes before it is handled. A custom broker chooses its own table (an
// API it does not serve is closed on, as Kafka does); each range must lie within the versions
// brook's protocol layer describes (protocol/messages.hpp), which the constructor asserts.
//
//   served_apis t({{api_key::api_versions, {0, 3}}, {api_key::metadata, {0, 12}}});
//   t.serves(api_key::metadata, 4)      true
//   t.api_versions_answer()             the ApiVersions response listing the table
//
// Thread-safety: immutable after construction; share it between connections.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include <brook/codec/schema.hpp>
#include <brook/core/assert.hpp>
#include <brook/protocol/api_keys.hpp>
#include <brook/protocol/api_versions.hpp>
#include <brook/protocol/messages.hpp>

namespace brook::server {

/// One served API: its key and the versions answered.
struct served_api {
  protocol::api_key key;
  codec::versions versions;
};

class served_apis {
 public:
  /// REQUIRES: ApiVersions among them; each key once; each range non-empty and within what
  /// protocol/messages.hpp describes for the key.
  explicit served_apis(std::initializer_list<served_api> apis) : apis_(apis) {
    std::sort(apis_.begin(), apis_.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    for (std::size_t i = 0; i < apis_.size(); ++i) {
      const served_api& a = apis_[i];
      BROOK_ASSERT(i == 0 || apis_[i - 1].key != a.key, "API key {} served twice", static_cast<int>(a.key));
      const auto described = described_versions(a.key);
      BROOK_ASSERT(described && !a.versions.empty() && a.versions.lo >= described->lo && a.versions.hi <= described->hi,
                   "API key {} served at {}-{}, outside what brook describes", static_cast<int>(a.key), a.versions.lo,
                   a.versions.hi);
    }
    BROOK_ASSERT(find(protocol::api_key::api_versions), "a broker must serve ApiVersions");
  }

  /// The versions of `key` this broker answers; none when it does not serve the key.
  std::optional<codec::versions> find(protocol::api_key key) const {
    for (const served_api& a : apis_)
      if (a.key == key) return a.versions;
    return std::nullopt;
  }
  /// Whether a request of `key` at `version` is answered.
  bool serves(protocol::api_key key, std::int16_t version) const {
    const auto v = find(key);
    return v && v->contains(version);
  }
  /// The ApiVersions answer advertising this table, in API-key order. One exception, Kafka
  /// 4.0's (KAFKA-18659): Produce served from v3 is advertised from v0, because librdkafka
  /// before 2.11 compresses gzip, snappy and lz4 batches only when the broker's Produce range
  /// starts at v0 (librdkafka issue 4956); clients use the highest common version, and a
  /// Produce request below v3 is still refused like any version the table does not serve.
  protocol::api_versions_response api_versions_answer() const {
    protocol::api_versions_response r;
    for (const served_api& a : apis_) {
      const bool produce_from_v0 = a.key == protocol::api_key::produce && a.versions.lo == 3;
      r.api_keys.push_back(
          {static_cast<std::int16_t>(a.key), produce_from_v0 ? std::int16_t{0} : a.versions.lo, a.versions.hi});
    }
    return r;
  }
  /// The answer to an ApiVersions request of a version this table does not serve (KIP-511).
  protocol::api_versions_response unsupported_api_versions_answer() const {
    return protocol::unsupported_version_answer(*find(protocol::api_key::api_versions));
  }
  const std::vector<served_api>& apis() const noexcept { return apis_; }

 private:
  static std::optional<codec::versions> described_versions(protocol::api_key key) {
    std::optional<codec::versions> out;
    protocol::for_each_api([&](auto api) {
      using A = decltype(api);
      if (A::key == key) out = codec::schema_of<typename A::request>.info.valid;
    });
    return out;
  }

  std::vector<served_api> apis_;
};

}  // namespace brook::server

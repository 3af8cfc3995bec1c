// Kafka's request types (API keys), the versions Kafka's message definitions give each,
// and which request and response header a version uses.
//
// The table is transcribed from the "apiKey", "validVersions" and "flexibleVersions" of
// apache/kafka clients/src/main/resources/common/message/<Name>Request.json (at 1eb7644,
// the commit ../shared/KAFKA-PROTOCOL.md cites). It lists the APIs brook's protocol layer
// describes, plus ControlledShutdown, whose v0 is the one user of request header v0. Which
// of these versions a brook server answers is the server's choice (ApiVersions); this is
// what Kafka defines.
//
// Header versions, as Kafka's generator derives them (ApiMessageTypeGenerator
// generateHeaderVersion): a flexible request version uses request header v2 and response
// header v1, any other version request header v1 and response header v0, with two
// exceptions: ControlledShutdown v0 requests use request header v0, and ApiVersions
// responses always use response header v0 (KIP-511: a client must read the answer of a
// broker that does not support its version).
//
// Thread-safety: constexpr data and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <brook/codec/schema.hpp>

namespace brook::protocol {

/// Kafka's API keys (ApiKeys.java) for the requests brook's protocol layer knows.
enum class api_key : std::int16_t {
  produce = 0,
  fetch = 1,
  list_offsets = 2,
  metadata = 3,
  controlled_shutdown = 7,
  offset_commit = 8,
  offset_fetch = 9,
  find_coordinator = 10,
  join_group = 11,
  heartbeat = 12,
  leave_group = 13,
  sync_group = 14,
  describe_groups = 15,
  list_groups = 16,
  api_versions = 18,
  create_topics = 19,
  delete_topics = 20,
  init_producer_id = 22,
  describe_configs = 32,
  delete_groups = 42,
};

/// One API: its key, Kafka's name, and the versions Kafka defines for it.
struct api_info {
  api_key key;
  std::string_view name;     ///< "Produce", as in Kafka's JSON and errors
  codec::versions valid;     ///< "validVersions"
  codec::versions flexible;  ///< "flexibleVersions"
};

// clang-format off
inline constexpr api_info known_apis[] = {
    {api_key::produce,             "Produce",            codec::between(0, 11), codec::since(9)},
    {api_key::fetch,               "Fetch",              codec::between(0, 17), codec::since(12)},
    {api_key::list_offsets,        "ListOffsets",        codec::between(0, 10), codec::since(6)},
    {api_key::metadata,            "Metadata",           codec::between(0, 12), codec::since(9)},
    {api_key::controlled_shutdown, "ControlledShutdown", codec::between(0, 3),  codec::since(3)},
    {api_key::offset_commit,       "OffsetCommit",       codec::between(0, 9),  codec::since(8)},
    {api_key::offset_fetch,        "OffsetFetch",        codec::between(0, 9),  codec::since(6)},
    {api_key::find_coordinator,    "FindCoordinator",    codec::between(0, 6),  codec::since(3)},
    {api_key::join_group,          "JoinGroup",          codec::between(0, 9),  codec::since(6)},
    {api_key::heartbeat,           "Heartbeat",          codec::between(0, 4),  codec::since(4)},
    {api_key::leave_group,         "LeaveGroup",         codec::between(0, 5),  codec::since(4)},
    {api_key::sync_group,          "SyncGroup",          codec::between(0, 5),  codec::since(4)},
    {api_key::describe_groups,     "DescribeGroups",     codec::between(0, 5),  codec::since(5)},
    {api_key::list_groups,         "ListGroups",         codec::between(0, 5),  codec::since(3)},
    {api_key::api_versions,        "ApiVersions",        codec::between(0, 4),  codec::since(3)},
    {api_key::create_topics,       "CreateTopics",       codec::between(0, 7),  codec::since(5)},
    {api_key::delete_topics,       "DeleteTopics",       codec::between(0, 6),  codec::since(4)},
    {api_key::init_producer_id,    "InitProducerId",     codec::between(0, 5),  codec::since(2)},
    {api_key::describe_configs,    "DescribeConfigs",    codec::between(0, 4),  codec::since(4)},
    {api_key::delete_groups,       "DeleteGroups",       codec::between(0, 2),  codec::since(2)},
};
// clang-format on

/// The table entry of `key`; none for a key brook does not know.
constexpr const api_info* find_api(std::int16_t key) noexcept {
  for (const api_info& a : known_apis)
    if (static_cast<std::int16_t>(a.key) == key) return &a;
  return nullptr;
}
constexpr const api_info& api(api_key key) noexcept { return *find_api(static_cast<std::int16_t>(key)); }

/// Whether `version` of `key` is one Kafka defines.
constexpr bool is_valid_version(api_key key, std::int16_t version) noexcept { return api(key).valid.contains(version); }

/// The request header version of `version` of `key` (0, 1 or 2).
constexpr std::int16_t request_header_version(api_key key, std::int16_t version) noexcept {
  if (key == api_key::controlled_shutdown && version == 0) return 0;
  return api(key).flexible.contains(version) ? 2 : 1;
}

/// The response header version of `version` of `key` (0 or 1).
constexpr std::int16_t response_header_version(api_key key, std::int16_t version) noexcept {
  if (key == api_key::api_versions) return 0;
  return api(key).flexible.contains(version) ? 1 : 0;
}

}  // namespace brook::protocol

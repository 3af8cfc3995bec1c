// Which request and response types belong to which API key: the one table the request
// decoder (request.hpp), the tests and the fuzzer walk, so that an API is added to all of
// them by adding a line here.
//
//   api_messages<api_key::fetch>::request    fetch_request
//   api_messages<api_key::fetch>::response   fetch_response
//   for_each_api([](auto api) { using M = decltype(api); ... M::key, M::request ... });
//
// ControlledShutdown is in api_keys.hpp only for its header rule; brook does not describe
// its messages, so it has no entry here.
//
// Thread-safety: types and a constexpr walk.
#pragma once

#include <type_traits>
#include <variant>

#include <brook/protocol/api_keys.hpp>
#include <brook/protocol/api_versions.hpp>
#include <brook/protocol/create_topics.hpp>
#include <brook/protocol/delete_groups.hpp>
#include <brook/protocol/delete_topics.hpp>
#include <brook/protocol/describe_configs.hpp>
#include <brook/protocol/describe_groups.hpp>
#include <brook/protocol/fetch.hpp>
#include <brook/protocol/find_coordinator.hpp>
#include <brook/protocol/heartbeat.hpp>
#include <brook/protocol/init_producer_id.hpp>
#include <brook/protocol/join_group.hpp>
#include <brook/protocol/leave_group.hpp>
#include <brook/protocol/list_groups.hpp>
#include <brook/protocol/list_offsets.hpp>
#include <brook/protocol/metadata.hpp>
#include <brook/protocol/offset_commit.hpp>
#include <brook/protocol/offset_fetch.hpp>
#include <brook/protocol/produce.hpp>
#include <brook/protocol/sync_group.hpp>

namespace brook::protocol {

/// One API: its key and its two message types.
template <api_key K, typename Request, typename Response>
struct api_pair {
  static constexpr api_key key = K;
  using request = Request;
  using response = Response;
  static_assert(codec::schema_of<Request>.info.api_key == static_cast<std::int16_t>(K));
  static_assert(codec::schema_of<Response>.info.api_key == static_cast<std::int16_t>(K));
};

/// A list of api_pairs.
template <typename... Apis>
struct api_list {
  /// Calls fn(Api{}) for each API, in the list's order.
  template <typename Fn>
  static constexpr void for_each(Fn&& fn) {
    (fn(Apis{}), ...);
  }
  using request_variant = std::variant<typename Apis::request...>;
  using response_variant = std::variant<typename Apis::response...>;
};

// clang-format off
/// Every API whose messages brook describes, in API-key order.
using described_apis = api_list<
    api_pair<api_key::produce,          produce_request,          produce_response>,
    api_pair<api_key::fetch,            fetch_request,            fetch_response>,
    api_pair<api_key::list_offsets,     list_offsets_request,     list_offsets_response>,
    api_pair<api_key::metadata,         metadata_request,         metadata_response>,
    api_pair<api_key::offset_commit,    offset_commit_request,    offset_commit_response>,
    api_pair<api_key::offset_fetch,     offset_fetch_request,     offset_fetch_response>,
    api_pair<api_key::find_coordinator, find_coordinator_request, find_coordinator_response>,
    api_pair<api_key::join_group,       join_group_request,       join_group_response>,
    api_pair<api_key::heartbeat,        heartbeat_request,        heartbeat_response>,
    api_pair<api_key::leave_group,      leave_group_request,      leave_group_response>,
    api_pair<api_key::sync_group,       sync_group_request,       sync_group_response>,
    api_pair<api_key::describe_groups,  describe_groups_request,  describe_groups_response>,
    api_pair<api_key::list_groups,      list_groups_request,      list_groups_response>,
    api_pair<api_key::api_versions,     api_versions_request,     api_versions_response>,
    api_pair<api_key::create_topics,    create_topics_request,    create_topics_response>,
    api_pair<api_key::delete_topics,    delete_topics_request,    delete_topics_response>,
    api_pair<api_key::init_producer_id, init_producer_id_request, init_producer_id_response>,
    api_pair<api_key::describe_configs, describe_configs_request, describe_configs_response>,
    api_pair<api_key::delete_groups,    delete_groups_request,    delete_groups_response>>;
// clang-format on

/// Calls fn(api_pair<...>{}) for every described API.
template <typename Fn>
constexpr void for_each_api(Fn&& fn) {
  described_apis::for_each(fn);
}

namespace detail {
template <api_key K, typename List>
struct find_api;
template <api_key K>
struct find_api<K, api_list<>> {
  static_assert(K != K, "brook does not describe this API key");
};
template <api_key K, typename First, typename... Rest>
struct find_api<K, api_list<First, Rest...>>
    : std::conditional_t<First::key == K, std::type_identity<First>, find_api<K, api_list<Rest...>>> {};
}  // namespace detail

/// The api_pair of key K.
template <api_key K>
using api_messages = typename detail::find_api<K, described_apis>::type;

/// Any request or response body brook describes.
using request_body = described_apis::request_variant;
using response_body = described_apis::response_variant;

}  // namespace brook::protocol

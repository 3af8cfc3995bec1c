// ListGroups (key 16): every group a broker coordinates, with its protocol type and (v4+) its
// state and (v5+) its type, optionally filtered. Transcribed from apache/kafka's
// ListGroupsRequest.json and ListGroupsResponse.json (1eb7644): v0-2 classic, v3+ flexible;
// v4 (KIP-518) filters by state, v5 (KIP-848) by type ("classic", "consumer").
//
//   request   StatesFilter [string] (v4+) | TypesFilter [string] (v5+)
//   response  ThrottleTimeMs int32 (v1+) | ErrorCode int16 | Groups [GroupId string
//             | ProtocolType string | GroupState string (v4+) | GroupType string (v5+)]
//
// An empty filter lists every group; the v0-2 request has no fields at all. StatesFilter and
// TypesFilter are not ignorable: a filter a version cannot carry is unsupported_version,
// never silently a list of every group. GroupState and GroupType are ignorable and dropped by
// versions without them.
//
// Worked example, ListGroupsResponse v5 (flexible): one group "g" of protocol type "c", in
// state "S", of type "T", throttled 4 ms:
//
//   00 00 00 04                    ThrottleTimeMs 4
//   00 00                          ErrorCode 0
//   02                             Groups: compact array, 1 element + 1
//     02 67                        GroupId: compact string, length 1 + 1, "g"
//     02 63                        ProtocolType "c"
//     02 53                        GroupState "S"
//     02 54                        GroupType "T"
//     00                           the element's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/list_groups_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>

namespace brook::protocol {

struct list_groups_request {
  std::vector<std::string> states_filter{};
  std::vector<std::string> types_filter{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_groups_request;
    return message<r>({.name = "ListGroupsRequest", .valid = between(0, 5), .flexible = since(3), .api_key = 16},
                      field("StatesFilter", &r::states_filter).in(since(4)),
                      field("TypesFilter", &r::types_filter).in(since(5)));
  }
  friend bool operator==(const list_groups_request&, const list_groups_request&) = default;
};

struct listed_group {
  std::string group_id{};
  std::string protocol_type{};
  std::string group_state{};
  std::string group_type{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = listed_group;
    return structure<r>(field("GroupId", &r::group_id), field("ProtocolType", &r::protocol_type),
                        field("GroupState", &r::group_state).in(since(4)).ignorable(),
                        field("GroupType", &r::group_type).in(since(5)).ignorable());
  }
  friend bool operator==(const listed_group&, const listed_group&) = default;
};

struct list_groups_response {
  std::int32_t throttle_time_ms = 0;
  std::int16_t error_code = 0;
  std::vector<listed_group> groups{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = list_groups_response;
    return message<r>({.name = "ListGroupsResponse", .valid = between(0, 5), .flexible = since(3), .api_key = 16},
                      field("ThrottleTimeMs", &r::throttle_time_ms).in(since(1)).ignorable(),
                      field("ErrorCode", &r::error_code), field("Groups", &r::groups));
  }
  friend bool operator==(const list_groups_response&, const list_groups_response&) = default;
};

}  // namespace brook::protocol

// DeleteGroups (key 42): an admin deletes empty groups and their committed offsets.
// Transcribed from apache/kafka's DeleteGroupsRequest.json and DeleteGroupsResponse.json
// (1eb7644): v0-1 classic, v2+ flexible; v1 only changes throttling (the broker answers
// before throttling).
//
//   request   GroupsNames [string]
//   response  ThrottleTimeMs int32 | Results [GroupId string | ErrorCode int16]
//
// Kafka keys Results by GroupId ("mapKey"); brook keeps them in order in a vector, which has
// the same wire form. Every field exists in every version, so none needs to be ignorable;
// unlike most responses, ThrottleTimeMs is there from v0.
//
// Worked example, DeleteGroupsResponse v2 (flexible): group "g" deleted, group "h" not
// (NON_EMPTY_GROUP, 68), throttled 4 ms:
//
//   00 00 00 04                    ThrottleTimeMs 4
//   03                             Results: compact array, 2 elements + 1
//     02 67                        GroupId: compact string, length 1 + 1, "g"
//     00 00                        ErrorCode 0
//     00                           the element's tagged fields: none
//     02 68                        GroupId "h"
//     00 44                        ErrorCode 68
//     00                           the element's tagged fields: none
//   00                             the message's tagged fields: none
//
// (tests/protocol/delete_groups_test.cpp checks these bytes.)
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <brook/codec/schema.hpp>

namespace brook::protocol {

struct delete_groups_request {
  std::vector<std::string> groups_names{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = delete_groups_request;
    return message<r>({.name = "DeleteGroupsRequest", .valid = between(0, 2), .flexible = since(2), .api_key = 42},
                      field("GroupsNames", &r::groups_names));
  }
  friend bool operator==(const delete_groups_request&, const delete_groups_request&) = default;
};

struct deletable_group_result {
  std::string group_id{};
  std::int16_t error_code = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = deletable_group_result;
    return structure<r>(field("GroupId", &r::group_id), field("ErrorCode", &r::error_code));
  }
  friend bool operator==(const deletable_group_result&, const deletable_group_result&) = default;
};

struct delete_groups_response {
  std::int32_t throttle_time_ms = 0;
  std::vector<deletable_group_result> results{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = delete_groups_response;
    return message<r>({.name = "DeleteGroupsResponse", .valid = between(0, 2), .flexible = since(2), .api_key = 42},
                      field("ThrottleTimeMs", &r::throttle_time_ms), field("Results", &r::results));
  }
  friend bool operator==(const delete_groups_response&, const delete_groups_response&) = default;
};

}  // namespace brook::protocol

// Where a partition's leadership went (KIP-951): the current leader and epoch that a
// Produce or Fetch answer carries in a tagged field when it says NOT_LEADER_OR_FOLLOWER or
// FENCED_LEADER_EPOCH, and the endpoints of those leaders, so that a client need not ask
// Metadata first. Transcribed from the LeaderIdAndEpoch and NodeEndpoint structs of apache/
// kafka's ProduceResponse.json (tagged from v10) and FetchResponse.json (tagged from v12 and
// v16), which declare the same fields:
//
//   LeaderIdAndEpoch   LeaderId int32 (default -1) | LeaderEpoch int32 (default -1)
//   NodeEndpoint       NodeId int32 | Host string | Port int32 | Rack nullable string
//                      (default null)
//
// The structs exist only in flexible versions, as tagged fields, so their own fields are
// present in every version the struct is.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <brook/codec/schema.hpp>
#include <brook/core/types.hpp>

namespace brook::protocol {

struct leader_id_and_epoch {
  broker_id leader_id{-1};
  leader_epoch leader_epoch_value{-1};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = leader_id_and_epoch;
    return structure<r>(field("LeaderId", &r::leader_id), field("LeaderEpoch", &r::leader_epoch_value));
  }
  friend bool operator==(const leader_id_and_epoch&, const leader_id_and_epoch&) = default;
};

struct node_endpoint {
  broker_id node_id{0};
  std::string host{};
  std::int32_t port = 0;
  std::optional<std::string> rack{};

  static constexpr auto schema() {
    using namespace brook::codec;
    using r = node_endpoint;
    return structure<r>(field("NodeId", &r::node_id), field("Host", &r::host), field("Port", &r::port),
                        field("Rack", &r::rack));
  }
  friend bool operator==(const node_endpoint&, const node_endpoint&) = default;
};

}  // namespace brook::protocol

// The group coordinator's requests and answers: Kafka's JoinGroup, SyncGroup, OffsetCommit,
// DescribeGroups, ListGroups and the consumer-groups tool's lag, as in-process values
// (protocol metadata and assignments are opaque bytes; group/consumer_protocol.hpp encodes
// them for consumers). The coordinator is group/group_coordinator.hpp.
//
// Thread-safety: values, except member_liveness (atomics shared by a member and the
// coordinator).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/group/group_state.hpp>
#include <brook/group/offset_and_metadata.hpp>

namespace brook {

/// An in-process member's liveness, shared between the member and the coordinator.
/// Thread-safety: atomics; any thread.
struct member_liveness {
  std::atomic<bool> alive{true};              ///< cleared when the member stops (or simulates a crash)
  std::atomic<bool> in_poll{false};           ///< the member is inside poll()
  std::atomic<std::int64_t> last_poll_ms{0};  ///< clock time the member last entered or left poll()
  std::atomic<bool> rejoin_needed{false};     ///< set by the coordinator: a rebalance began or the member was removed
};

struct group_protocol {
  std::string name;                 ///< e.g. "range"
  std::vector<std::byte> metadata;  ///< e.g. a consumer-protocol subscription
};

struct join_group_request {
  std::string group_id{};
  std::string member_id{};                         ///< empty for a new member
  std::optional<std::string> group_instance_id{};  ///< static membership
  std::string client_id = "brook";
  std::chrono::milliseconds session_timeout{45000};
  std::chrono::milliseconds rebalance_timeout{300000};  ///< the consumer's max.poll.interval.ms
  std::string protocol_type = "consumer";
  std::vector<group_protocol> protocols{};      ///< in preference order
  std::shared_ptr<member_liveness> liveness{};  ///< in-process members; null: the member heartbeats
  /// KIP-394 (JoinGroup v4+): a new member without group.instance.id is not added yet; it is
  /// given a member id and refused with member_id_required, and joins again with that id. A
  /// pending id that does not come back within session_timeout is dropped.
  bool require_known_member_id = false;
};

struct join_group_member {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::vector<std::byte> metadata;  ///< the member's metadata for the chosen protocol
};

struct join_group_response {
  generation_id generation{-1};
  std::string protocol_type;
  std::string protocol_name;
  std::string leader;
  std::string member_id;
  std::vector<join_group_member> members;  ///< filled for the leader only
};

struct sync_group_request {
  std::string group_id{};
  generation_id generation{-1};
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::map<std::string, std::vector<std::byte>> assignments{};  ///< the leader's: member id -> assignment
  /// SyncGroup v5+: when set, they must be the group's (inconsistent_group_protocol otherwise).
  std::optional<std::string> protocol_type{};
  std::optional<std::string> protocol_name{};
};

struct offset_commit_request {
  std::string group_id{};
  generation_id generation{-1};  ///< -1 with an empty member id: a commit outside group management
  std::string member_id{};
  std::optional<std::string> group_instance_id{};
  std::map<topic_partition, offset_and_metadata> offsets{};
};

struct member_description {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::vector<std::byte> metadata;    ///< for the chosen protocol
  std::vector<std::byte> assignment;  ///< from the last completed rebalance
};

struct group_description {
  std::string group_id;
  group_state state = group_state::dead;
  std::string protocol_type;
  std::string protocol_name;
  generation_id generation{0};
  std::string leader;
  std::vector<member_description> members;
};

struct group_listing {
  std::string group_id;
  group_state state;
  std::string protocol_type;
};

struct partition_lag {
  topic_partition tp;
  std::optional<offset> committed;
  offset log_end{0};     ///< the high watermark: what a consumer can read
  std::int64_t lag = 0;  ///< log_end - committed (log_end - log start without a commit)
};

/// A join's answer, run once: at once, or when the join phase completes.
using join_callback = std::function<void(result<join_group_response>)>;
/// A sync's answer (the member's assignment), run once.
using sync_callback = std::function<void(result<std::vector<std::byte>>)>;

}  // namespace brook

// Kafka's group APIs on brook's group coordinator: JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit, OffsetFetch, FindCoordinator, DescribeGroups, ListGroups and
// DeleteGroups, translated from their wire messages (protocol/) to the in-process
// coordinator (group/group_coordinator.hpp) and back, at every version the messages define.
// A broker hands each decoded request here with its version and sends what comes back.
//
//   group_apis apis(coordinator);
//   apis.join_group(req, version, client_id, [](protocol::join_group_response r) { send(r); });
//   auto hb = apis.heartbeat(req, version);
//
// Error codes go where the version has room for them: a top-level ErrorCode, or the code of
// each partition, group or member (brook's errc values are Kafka's codes; brook's own codes
// and storage errors become the code Kafka's coordinator would answer, see server/wire_error.hpp).
//
// What each API does, as Kafka's coordinator (apache/kafka 1eb7644, GroupCoordinatorService,
// GroupMetadataManager, OffsetMetadataManager, KafkaApis):
//   - JoinGroup: members from the wire have no in-process liveness: they heartbeat, a member
//     silent for its session timeout is removed, and a join phase ends after the rebalance
//     timeout (v0 has none: the session timeout is used, as Kafka does). v4+ (KIP-394): a new
//     member without group.instance.id is answered MEMBER_ID_REQUIRED with the id to join
//     again with. v5+ group.instance.id (static membership). An empty group id is
//     INVALID_GROUP_ID. Errors carry the request's member id, generation -1, no protocol.
//   - SyncGroup: v5+ must name ProtocolType and ProtocolName (INCONSISTENT_GROUP_PROTOCOL
//     when missing or not the group's); the answer repeats them.
//   - LeaveGroup: v0-2 one member, its code at the top level; v3+ a batch, a code per member
//     (a group that does not exist: UNKNOWN_MEMBER_ID for each).
//   - OffsetCommit: partitions of topics or partitions that do not exist get
//     UNKNOWN_TOPIC_OR_PARTITION and the others are committed, as KafkaApis does before it asks
//     the coordinator; metadata over offset.metadata.max.bytes gets OFFSET_METADATA_TOO_LARGE
//     per partition. brook's commit is all-or-nothing, so the rest is one commit and the
//     coordinator's refusal (a stale generation, a rebalance) is every such partition's code.
//     v1's CommitTimestamp is stored as the commit time; v2-4's RetentionTimeMs is ignored
//     (offsets.retention.minutes applies). v9+ answers GROUP_ID_NOT_FOUND for a member's
//     commit to a group that does not exist (older versions ILLEGAL_GENERATION).
//   - OffsetFetch: v0-7 one group (null topics = all, v2+), v8+ the Groups array; partitions
//     without a commit answer offset -1, leader epoch -1, metadata "". An unknown group has no
//     commits (no error). v0 reads the coordinator like v1 (Kafka's read ZooKeeper).
//   - FindCoordinator: v0-3 one Key, v4+ CoordinatorKeys; a group key (any id, "" too, as
//     Kafka) answers `self`.
//   - DescribeGroups: an unknown group is state "Dead" with error 0 (Kafka's answer up to v5);
//     member metadata and ProtocolData only for a Stable group, assignments always.
//   - ListGroups: v4+ StatesFilter (case-insensitive), v5+ TypesFilter (every brook group is
//     "classic"; another type matches none).
//   - DeleteGroups: per group NONE, GROUP_ID_NOT_FOUND or NON_EMPTY_GROUP; names are deduplicated.
//
// Decisions where Kafka leaves room (or brook cannot follow it):
//   - FindCoordinator for transactions (key type 1), and any other key type, answers
//     INVALID_REQUEST: brook has no transaction coordinator, and INVALID_REQUEST is what Kafka
//     answers for a coordinator type it does not run (share groups without a share
//     coordinator); a client then fails at once instead of retrying COORDINATOR_NOT_AVAILABLE.
//   - OffsetCommit with a negative offset answers INVALID_REQUEST for that partition (brook's
//     coordinator refuses negative offsets; Kafka would store them); with an empty group id,
//     INVALID_GROUP_ID for every partition (Kafka accepts the group "").
//   - A negative RebalanceTimeoutMs (v1+) is taken as the session timeout.
//   - DescribeGroups' ClientHost is "" (the coordinator does not know the member's address);
//     AuthorizedOperations, when asked for (v3+), are all of a group's (no authorizer).
//   - DeleteGroups never answers INVALID_GROUP_ID: Kafka reserves it for a null name, which the
//     wire cannot carry in these versions; "" is a group that does not exist.
//
// Thread-safety: any thread (the coordinator synchronises; this class holds only a reference).
#pragma once

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <brook/core/error.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/group/group_requests.hpp>
#include <brook/group/group_state.hpp>
#include <brook/protocol/delete_groups.hpp>
#include <brook/protocol/describe_groups.hpp>
#include <brook/protocol/find_coordinator.hpp>
#include <brook/protocol/heartbeat.hpp>
#include <brook/protocol/join_group.hpp>
#include <brook/protocol/leave_group.hpp>
#include <brook/protocol/list_groups.hpp>
#include <brook/protocol/offset_commit.hpp>
#include <brook/protocol/offset_fetch.hpp>
#include <brook/protocol/sync_group.hpp>
#include <brook/server/wire_error.hpp>

namespace brook::server {

/// Where this broker's group coordinator is reached: what FindCoordinator answers.
struct coordinator_address {
  broker_id id{0};
  std::string host;
  std::int32_t port = 0;
};

class group_apis {
 public:
  /// `c` must outlive this object.
  explicit group_apis(group_coordinator& c) : coordinator_(c) {}

  /// Called exactly once, maybe later, from any thread.
  template <typename T>
  using answer = std::function<void(T)>;

  /// Every group operation Kafka's ACLs know, as DescribeGroups' AuthorizedOperations bit
  /// field (READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11).
  static constexpr std::int32_t all_group_operations = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);

  // ------------------------------------------------------------------ membership

  void join_group(const protocol::join_group_request& req, std::int16_t version, std::string client_id,
                  answer<protocol::join_group_response> done) {
    if (req.group_id.empty()) return done(join_error(version, errc::invalid_group_id, req.member_id));
    // MEMBER_ID_REQUIRED is answered inside join_group(), before it returns the id to join
    // again with: the answer waits for the id (either order is handled).
    struct pending_answer {
      std::mutex mu;
      bool returned = false;
      std::string id;
      bool member_id_required = false;
    };
    auto state = std::make_shared<pending_answer>();
    auto on_join = [state, done, version, member = req.member_id](result<join_group_response> r) {
      if (r) return done(join_success(*r, version));
      if (r.error() == errc::member_id_required) {
        std::unique_lock lk(state->mu);
        if (!state->returned) {
          state->member_id_required = true;
          return;
        }
        const std::string id = state->id;
        lk.unlock();
        return done(join_error(version, errc::member_id_required, id));
      }
      done(join_error(version, static_cast<errc>(coordinator_wire_error_code(r.error())), member));
    };
    std::string id = coordinator_.join_group(to_join(req, version, std::move(client_id)), on_join);
    std::unique_lock lk(state->mu);
    state->returned = true;
    state->id = id;
    if (state->member_id_required) {
      lk.unlock();
      done(join_error(version, errc::member_id_required, id));
    }
  }

  void sync_group(const protocol::sync_group_request& req, std::int16_t version,
                  answer<protocol::sync_group_response> done) {
    auto fail = [&](errc code) {
      protocol::sync_group_response r;
      r.error_code = static_cast<std::int16_t>(code);
      done(std::move(r));
    };
    if (req.group_id.empty()) return fail(errc::invalid_group_id);
    // Since v5 ProtocolType and ProtocolName are mandatory (KafkaApis' areMandatoryProtocolTypeAndNamePresent).
    if (version >= 5 && (!req.protocol_type || !req.protocol_name)) return fail(errc::inconsistent_group_protocol);
    sync_group_request s;
    s.group_id = req.group_id;
    s.generation = req.generation;
    s.member_id = req.member_id;
    s.group_instance_id = req.group_instance_id;
    for (const auto& a : req.assignments) s.assignments[a.member_id] = a.assignment;
    if (version >= 5) {
      s.protocol_type = req.protocol_type;
      s.protocol_name = req.protocol_name;
    }
    coordinator_.sync_group(std::move(s), [done, version, type = req.protocol_type,
                                           name = req.protocol_name](result<std::vector<std::byte>> r) {
      protocol::sync_group_response out;
      if (!r) {
        out.error_code = coordinator_wire_error_code(r.error());
      } else {
        out.assignment = std::move(*r);
        if (version >= 5) {  // checked against the group's: they are the group's
          out.protocol_type = type;
          out.protocol_name = name;
        }
      }
      done(std::move(out));
    });
  }

  protocol::heartbeat_response heartbeat(const protocol::heartbeat_request& req, std::int16_t /*version*/) {
    protocol::heartbeat_response out;
    if (req.group_id.empty()) {
      out.error_code = static_cast<std::int16_t>(errc::invalid_group_id);
      return out;
    }
    auto r = coordinator_.heartbeat(req.group_id, req.generation, req.member_id, req.group_instance_id);
    if (!r) out.error_code = coordinator_wire_error_code(r.error());
    return out;
  }

  protocol::leave_group_response leave_group(const protocol::leave_group_request& req, std::int16_t version) {
    protocol::leave_group_response out;
    if (req.group_id.empty()) {
      out.error_code = static_cast<std::int16_t>(errc::invalid_group_id);
      return out;
    }
    if (version <= 2) {  // one member, by member id; its code is the answer's
      auto r = coordinator_.leave_group(req.group_id, req.member_id);
      if (!r) out.error_code = coordinator_wire_error_code(r.error());
      return out;
    }
    for (const auto& m : req.members) {
      protocol::leave_group_member_response mr;
      mr.member_id = m.member_id;
      mr.group_instance_id = m.group_instance_id;
      auto r = coordinator_.leave_group(req.group_id, m.member_id, m.group_instance_id);
      if (!r) mr.error_code = coordinator_wire_error_code(r.error());
      out.members.push_back(std::move(mr));
    }
    return out;
  }

  // ------------------------------------------------------------------ offsets

  protocol::offset_commit_response offset_commit(const protocol::offset_commit_request& req, std::int16_t version) {
    protocol::offset_commit_response out;
    // Each partition's code; `to_commit` marks those the coordinator decides.
    std::vector<std::vector<std::int16_t>> codes(req.topics.size());
    std::vector<std::vector<bool>> to_commit(req.topics.size());
    offset_commit_request c;
    c.group_id = req.group_id;
    c.generation = req.generation_id_or_member_epoch;
    c.member_id = req.member_id;
    c.group_instance_id = req.group_instance_id;
    bool any_known = false;
    for (std::size_t t = 0; t < req.topics.size(); ++t) {
      const auto& topic = req.topics[t];
      auto count = coordinator_.source().partition_count(topic.name);
      for (const auto& p : topic.partitions) {
        std::int16_t code = check_commit_partition(count, p);
        const bool known = code != static_cast<std::int16_t>(errc::unknown_topic_or_partition);
        any_known = any_known || known;
        to_commit[t].push_back(known);
        if (code == 0) c.offsets[{topic.name, p.partition_index}] = to_committed(p, version);
        codes[t].push_back(code);
      }
    }
    if (any_known) {
      std::int16_t refused = 0;
      if (req.group_id.empty()) {
        refused = static_cast<std::int16_t>(errc::invalid_group_id);
      } else if (auto r = coordinator_.commit_offsets(c); !r) {
        refused = commit_refusal(r.error(), req.group_id, version);
      }
      for (std::size_t t = 0; t < codes.size(); ++t)
        for (std::size_t i = 0; i < codes[t].size(); ++i)
          if (to_commit[t][i] && refused != 0) codes[t][i] = refused;
    }
    for (std::size_t t = 0; t < req.topics.size(); ++t) {
      protocol::offset_commit_response_topic rt;
      rt.name = req.topics[t].name;
      for (std::size_t i = 0; i < req.topics[t].partitions.size(); ++i)
        rt.partitions.push_back({req.topics[t].partitions[i].partition_index, codes[t][i]});
      out.topics.push_back(std::move(rt));
    }
    return out;
  }

  protocol::offset_fetch_response offset_fetch(const protocol::offset_fetch_request& req, std::int16_t version) {
    protocol::offset_fetch_response out;
    if (version >= 8) {
      for (const auto& g : req.groups) out.groups.push_back(fetch_group(g));
      return out;
    }
    protocol::offset_fetch_request_group g;
    g.group_id = req.group_id;
    if (req.topics) {
      g.topics.emplace();
      for (const auto& t : *req.topics) g.topics->push_back({t.name, t.partition_indexes});
    } else {
      g.topics.reset();
    }
    auto answered = fetch_group(g);
    out.error_code = answered.error_code;  // v2+ (0: brook's fetch does not fail)
    for (auto& t : answered.topics) {
      protocol::offset_fetch_response_topic rt;
      rt.name = std::move(t.name);
      for (auto& p : t.partitions)
        rt.partitions.push_back(
            {p.partition_index, p.committed_offset, p.committed_leader_epoch, std::move(p.metadata), p.error_code});
      out.topics.push_back(std::move(rt));
    }
    return out;
  }

  // ------------------------------------------------------------------ discovery and administration

  protocol::find_coordinator_response find_coordinator(const protocol::find_coordinator_request& req,
                                                       std::int16_t version, const coordinator_address& self) {
    protocol::find_coordinator_response out;
    if (version < 4) {
      auto c = coordinator_for(req.key, req.key_type, self);
      out.error_code = c.error_code;
      out.error_message = c.error_message;
      out.node_id = c.node_id;
      out.host = c.host;
      out.port = c.port;
      return out;
    }
    for (const auto& key : req.coordinator_keys) out.coordinators.push_back(coordinator_for(key, req.key_type, self));
    return out;
  }

  protocol::describe_groups_response describe_groups(const protocol::describe_groups_request& req,
                                                     std::int16_t version) {
    protocol::describe_groups_response out;
    for (const auto& id : req.groups) {
      protocol::described_group g = describe(id);
      if (version >= 3 && req.include_authorized_operations && g.error_code == 0)
        g.authorized_operations = all_group_operations;
      out.groups.push_back(std::move(g));
    }
    return out;
  }

  protocol::list_groups_response list_groups(const protocol::list_groups_request& req, std::int16_t version) {
    protocol::list_groups_response out;
    std::set<std::string> states;
    if (version >= 4)
      for (const auto& s : req.states_filter) states.insert(lower(trim(s)));
    bool classic_wanted = true;
    if (version >= 5 && !req.types_filter.empty())
      classic_wanted = std::any_of(req.types_filter.begin(), req.types_filter.end(),
                                   [](const std::string& t) { return lower(t) == "classic"; });
    if (!classic_wanted) return out;
    for (const auto& g : coordinator_.list_groups()) {
      const std::string state(group_state_name(g.state));
      if (!states.empty() && !states.count(lower(state))) continue;
      out.groups.push_back({g.group_id, g.protocol_type, state, "classic"});
    }
    return out;
  }

  protocol::delete_groups_response delete_groups(const protocol::delete_groups_request& req, std::int16_t /*version*/) {
    protocol::delete_groups_response out;
    std::set<std::string> seen;
    for (const auto& id : req.groups_names) {
      if (!seen.insert(id).second) continue;  // Kafka answers each name once
      auto r = coordinator_.delete_group(id);
      out.results.push_back({id, r ? std::int16_t{0} : coordinator_wire_error_code(r.error())});
    }
    return out;
  }

 private:
  // ------------------------------------------------------------------ JoinGroup

  static join_group_request to_join(const protocol::join_group_request& req, std::int16_t version,
                                    std::string client_id) {
    join_group_request j;
    j.group_id = req.group_id;
    j.member_id = req.member_id;
    j.group_instance_id = req.group_instance_id;
    j.client_id = std::move(client_id);
    j.session_timeout = std::chrono::milliseconds(req.session_timeout_ms);
    // v0 has no rebalance timeout: Kafka uses the session timeout (JoinGroupRequest).
    j.rebalance_timeout = std::chrono::milliseconds(
        version == 0 || req.rebalance_timeout_ms < 0 ? req.session_timeout_ms : req.rebalance_timeout_ms);
    j.protocol_type = req.protocol_type;
    for (const auto& p : req.protocols) j.protocols.push_back({p.name, p.metadata});
    j.liveness = nullptr;  // a remote member: it heartbeats
    j.require_known_member_id = version >= 4;
    return j;
  }

  static protocol::join_group_response join_success(const join_group_response& r, std::int16_t version) {
    protocol::join_group_response out;
    out.generation = r.generation;
    if (version >= 7) out.protocol_type = r.protocol_type;
    // Before v7 the protocol name is a plain string; since v7 "" goes as null (JoinGroupResponse).
    out.protocol_name = version >= 7 && r.protocol_name.empty() ? std::nullopt : std::optional(r.protocol_name);
    out.leader = r.leader;
    out.member_id = r.member_id;
    for (const auto& m : r.members) out.members.push_back({m.member_id, m.group_instance_id, m.metadata});
    return out;
  }

  static protocol::join_group_response join_error(std::int16_t version, errc code, std::string member_id) {
    protocol::join_group_response out;
    out.error_code = static_cast<std::int16_t>(code);
    out.generation = generation_id(-1);
    out.protocol_name = version >= 7 ? std::nullopt : std::optional<std::string>(std::string());
    out.member_id = std::move(member_id);
    return out;
  }

  // ------------------------------------------------------------------ OffsetCommit

  /// A partition's code before the group is asked: unknown partitions, and what brook's
  /// coordinator would refuse for the whole commit but Kafka answers per partition.
  std::int16_t check_commit_partition(const result<std::int32_t>& partitions,
                                      const protocol::offset_commit_request_partition& p) const {
    if (!partitions || p.partition_index.value() < 0 || p.partition_index.value() >= *partitions)
      return static_cast<std::int16_t>(errc::unknown_topic_or_partition);
    if (p.committed_metadata && p.committed_metadata->size() > coordinator_.config().offset_metadata_max_bytes)
      return static_cast<std::int16_t>(errc::offset_metadata_too_large);
    if (p.committed_offset.value() < 0) return static_cast<std::int16_t>(errc::invalid_request);
    return 0;
  }

  static offset_and_metadata to_committed(const protocol::offset_commit_request_partition& p, std::int16_t version) {
    offset_and_metadata om;
    om.off = p.committed_offset;
    om.leader_epoch = p.committed_leader_epoch.value();
    om.metadata = p.committed_metadata.value_or("");
    om.commit_timestamp = version == 1 ? p.commit_timestamp : -1;  // -1: the coordinator's clock
    return om;
  }

  /// The code of a refused commit; v9+ tells a member that its group does not exist.
  std::int16_t commit_refusal(const error& e, const std::string& group_id, std::int16_t version) const {
    if (version >= 9 && e == errc::illegal_generation && !coordinator_.describe_group(group_id))
      return static_cast<std::int16_t>(errc::group_id_not_found);
    return coordinator_wire_error_code(e);
  }

  // ------------------------------------------------------------------ OffsetFetch

  /// One group's committed offsets in the v8+ form (the older form is converted from it).
  protocol::offset_fetch_response_group fetch_group(const protocol::offset_fetch_request_group& g) const {
    protocol::offset_fetch_response_group out;
    out.group_id = g.group_id;
    auto to_partition = [](partition_id p, const offset_and_metadata* om) {
      protocol::offset_fetch_response_partitions rp;
      rp.partition_index = p;
      rp.committed_offset = om ? om->off : offset(-1);
      rp.committed_leader_epoch = leader_epoch(om ? om->leader_epoch : -1);
      rp.metadata = om ? om->metadata : std::string();
      return rp;
    };
    if (!g.topics) {  // every partition the group committed, by topic
      for (const auto& [tp, om] : coordinator_.fetch_offsets(g.group_id)) {
        if (out.topics.empty() || out.topics.back().name != tp.topic) out.topics.push_back({tp.topic, {}});
        out.topics.back().partitions.push_back(to_partition(tp.partition, &om));
      }
      return out;
    }
    std::vector<topic_partition> wanted;
    for (const auto& t : *g.topics)
      for (partition_id p : t.partition_indexes) wanted.push_back({t.name, p});
    const auto committed = coordinator_.fetch_offsets(g.group_id, wanted);
    for (const auto& t : *g.topics) {
      protocol::offset_fetch_response_topics rt;
      rt.name = t.name;
      for (partition_id p : t.partition_indexes) {
        auto it = committed.find({t.name, p});
        rt.partitions.push_back(to_partition(p, it == committed.end() ? nullptr : &it->second));
      }
      out.topics.push_back(std::move(rt));
    }
    return out;
  }

  // ------------------------------------------------------------------ FindCoordinator, DescribeGroups

  static protocol::coordinator coordinator_for(const std::string& key, std::int8_t key_type,
                                               const coordinator_address& self) {
    protocol::coordinator c;
    c.key = key;
    if (key_type != static_cast<std::int8_t>(protocol::coordinator_type::group)) {
      c.error_code = static_cast<std::int16_t>(errc::invalid_request);
      c.error_message = key_type == static_cast<std::int8_t>(protocol::coordinator_type::transaction)
                            ? "brook has no transaction coordinator"
                            : "unknown coordinator key type";
      c.node_id = broker_id(-1);  // Kafka's Node.noNode()
      c.host = "";
      c.port = -1;
      return c;
    }
    c.error_message = std::nullopt;
    c.node_id = self.id;
    c.host = self.host;
    c.port = self.port;
    return c;
  }

  protocol::described_group describe(const std::string& id) const {
    protocol::described_group g;
    g.group_id = id;
    auto d = coordinator_.describe_group(id);
    if (!d) {
      if (d.error() == errc::group_id_not_found) {
        g.group_state = std::string(group_state_name(group_state::dead));
      } else {
        g.error_code = coordinator_wire_error_code(d.error());
      }
      return g;
    }
    const bool stable = d->state == group_state::stable;
    g.group_state = std::string(group_state_name(d->state));
    g.protocol_type = d->protocol_type;
    if (stable) g.protocol_data = d->protocol_name;
    for (const auto& m : d->members) {
      protocol::described_group_member dm;
      dm.member_id = m.member_id;
      dm.group_instance_id = m.group_instance_id;
      dm.client_id = m.client_id;
      if (stable) dm.member_metadata = m.metadata;  // Kafka's describeNoMetadata() otherwise
      dm.member_assignment = m.assignment;
      g.members.push_back(std::move(dm));
    }
    return g;
  }

  static std::string lower(std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  }
  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
  }

  group_coordinator& coordinator_;
};

}  // namespace brook::server

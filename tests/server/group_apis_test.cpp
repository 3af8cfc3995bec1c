// The group APIs driven purely through their wire messages: each API at an old and a new
// version, the error paths, KIP-394's MEMBER_ID_REQUIRED round trip, a two-member rebalance
// with consumer-protocol metadata, session expiry of a silent remote member, and per-partition
// commit errors. Time is a manual clock; the coordinator's tick() applies the timeouts.
#include <catch2/catch.hpp>

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <brook/group/consumer_protocol.hpp>
#include <brook/group/range_assignor.hpp>
#include <brook/protocol/response.hpp>
#include <brook/server/group_apis.hpp>

#include "group/group_support.hpp"
#include "support/checks.hpp"

using namespace brook;
using namespace std::chrono_literals;
using brook::server::coordinator_address;
using brook::server::group_apis;
using brook::test::tp;

namespace {

constexpr std::int16_t code(errc c) { return static_cast<std::int16_t>(c); }

/// An answer that may come later.
template <typename T>
struct pending {
  std::shared_ptr<std::optional<T>> slot = std::make_shared<std::optional<T>>();
  group_apis::answer<T> callback() {
    return [s = slot](T r) {
      REQUIRE_FALSE(s->has_value());  // exactly once
      *s = std::move(r);
    };
  }
  bool ready() const { return slot->has_value(); }
  const T& get() const {
    REQUIRE(ready());
    return **slot;
  }
};

struct fixture {
  brook::test::group_env env;
  group_apis apis{*env.coord};

  fixture() { env.create_topic("t", 4); }

  static protocol::join_group_request join_req(const std::string& member = "", std::int32_t session_ms = 10000,
                                               std::int32_t rebalance_ms = 60000,
                                               std::vector<std::string> topics = {"t"}) {
    protocol::join_group_request r;
    r.group_id = "g";
    r.member_id = member;
    r.session_timeout_ms = session_ms;
    r.rebalance_timeout_ms = rebalance_ms;
    r.protocol_type = "consumer";
    member_subscription s;
    s.topics = std::move(topics);
    r.protocols.push_back({"range", encode_subscription(s)});
    return r;
  }
  pending<protocol::join_group_response> join(const protocol::join_group_request& r, std::int16_t version) {
    pending<protocol::join_group_response> out;
    apis.join_group(r, version, "client", out.callback());
    return out;
  }
  /// A new member's join at `version`, through the MEMBER_ID_REQUIRED round trip for v4+.
  pending<protocol::join_group_response> join_new(std::int16_t version, protocol::join_group_request r = join_req()) {
    if (version >= 4 && !r.group_instance_id) {
      auto first = join(r, version);
      REQUIRE(first.ready());
      REQUIRE(first.get().error_code == code(errc::member_id_required));
      r.member_id = first.get().member_id;
    }
    return join(r, version);
  }
  pending<protocol::sync_group_response> sync(const std::string& member, generation_id gen, std::int16_t version,
                                              std::vector<protocol::sync_group_assignment> assignments = {}) {
    protocol::sync_group_request r;
    r.group_id = "g";
    r.generation = gen;
    r.member_id = member;
    if (version >= 5) {
      r.protocol_type = "consumer";
      r.protocol_name = "range";
    }
    r.assignments = std::move(assignments);
    pending<protocol::sync_group_response> out;
    apis.sync_group(r, version, out.callback());
    return out;
  }
  std::int16_t heartbeat(const std::string& member, generation_id gen, std::int16_t version = 1) {
    protocol::heartbeat_request r;
    r.group_id = "g";
    r.generation = gen;
    r.member_id = member;
    return apis.heartbeat(r, version).error_code;
  }
  void tick() { REQUIRE_OK(env.coord->tick()); }
  /// One member alone in a Stable group at generation 1, joined at `version`.
  std::string stable_single(std::int16_t version = 5) {
    auto j = join_new(version);
    REQUIRE(j.ready());
    REQUIRE(j.get().error_code == 0);
    const std::string m = j.get().member_id;
    auto s = sync(m, j.get().generation, 3, {{m, encode_assignment({tp("t", 0), tp("t", 1)})}});
    REQUIRE(s.ready());
    REQUIRE(s.get().error_code == 0);
    return m;
  }
  std::string state() {
    protocol::describe_groups_request r;
    r.groups = {"g"};
    return apis.describe_groups(r, 0).groups.at(0).group_state;
  }
};

protocol::offset_commit_request_partition commit_partition(int p, std::int64_t off, std::string metadata = "") {
  protocol::offset_commit_request_partition out;
  out.partition_index = partition_id(p);
  out.committed_offset = offset(off);
  out.committed_metadata = std::move(metadata);
  return out;
}

}  // namespace

// ------------------------------------------------------------------ JoinGroup

TEST_CASE("JoinGroup v0 to v3 join at once and v4+ take the MEMBER_ID_REQUIRED round trip",
          "[server][group_apis][join]") {
  fixture f;
  SECTION("v3: one request") {
    auto j = f.join(fixture::join_req(), 3);
    REQUIRE(j.ready());
    CHECK(j.get().error_code == 0);
    CHECK(j.get().generation == generation_id(1));
    CHECK(j.get().leader == j.get().member_id);
    CHECK(j.get().protocol_name == std::optional<std::string>("range"));
    CHECK(j.get().members.size() == 1);
  }
  SECTION("v4: MEMBER_ID_REQUIRED with the id and then the join with it") {
    auto first = f.join(fixture::join_req(), 4);
    REQUIRE(first.ready());
    CHECK(first.get().error_code == code(errc::member_id_required));
    const std::string id = first.get().member_id;
    REQUIRE_FALSE(id.empty());
    CHECK(first.get().generation == generation_id(-1));
    CHECK(first.get().protocol_name == std::optional<std::string>(""));  // v4: not nullable
    CHECK(f.state() == "Empty");                                         // the pending id is no member yet
    auto second = f.join(fixture::join_req(id), 4);
    REQUIRE(second.ready());
    CHECK(second.get().error_code == 0);
    CHECK(second.get().member_id == id);
    CHECK(second.get().generation == generation_id(1));
  }
  SECTION("v7: errors carry a null protocol name and a static member (v5+) joins at once") {
    auto first = f.join(fixture::join_req(), 7);
    REQUIRE(first.ready());
    CHECK(first.get().error_code == code(errc::member_id_required));
    CHECK_FALSE(first.get().protocol_name.has_value());
    auto r = fixture::join_req();
    r.group_instance_id = "instance-1";
    auto j = f.join(r, 7);
    // The pending id holds the initial join phase open until it comes back or expires.
    CHECK_FALSE(j.ready());
    auto again = f.join(fixture::join_req(first.get().member_id), 7);
    REQUIRE(j.ready());
    REQUIRE(again.ready());
    CHECK(j.get().error_code == 0);
    CHECK(j.get().protocol_type == std::optional<std::string>("consumer"));
    CHECK(j.get().members.size() == 2);
    bool static_listed = false;
    for (const auto& m : j.get().members)
      static_listed |= m.group_instance_id == std::optional<std::string>("instance-1");
    CHECK(static_listed);
  }
}

TEST_CASE("JoinGroup: a pending member id that never rejoins expires after its session", "[server][group_apis][join]") {
  fixture f;
  const std::string a = f.stable_single();
  auto first = f.join(fixture::join_req("", 6000), 5);
  REQUIRE(first.get().error_code == code(errc::member_id_required));
  // The group stays Stable meanwhile: a pending id is no member.
  CHECK(f.heartbeat(a, generation_id(1)) == 0);
  f.env.clk->advance(6000);
  CHECK(f.heartbeat(a, generation_id(1)) == 0);
  f.tick();
  auto late = f.join(fixture::join_req(first.get().member_id), 5);
  REQUIRE(late.ready());
  CHECK(late.get().error_code == code(errc::unknown_member_id));
  CHECK(f.state() == "Stable");
}

TEST_CASE("JoinGroup errors: group id and session timeout and protocol type", "[server][group_apis][join]") {
  fixture f;
  auto r = fixture::join_req();
  r.group_id = "";
  auto empty = f.join(r, 2);
  REQUIRE(empty.ready());
  CHECK(empty.get().error_code == code(errc::invalid_group_id));
  auto short_session = f.join(fixture::join_req("", 10), 5);
  REQUIRE(short_session.ready());
  CHECK(short_session.get().error_code == code(errc::invalid_session_timeout));
  f.stable_single();
  auto other_type = fixture::join_req();
  other_type.protocol_type = "connect";
  auto inconsistent = f.join(other_type, 1);
  REQUIRE(inconsistent.ready());
  CHECK(inconsistent.get().error_code == code(errc::inconsistent_group_protocol));
  auto unknown = f.join(fixture::join_req("nobody"), 1);
  REQUIRE(unknown.ready());
  CHECK(unknown.get().error_code == code(errc::unknown_member_id));
  CHECK(unknown.get().member_id == "nobody");
}

TEST_CASE("JoinGroup v0 uses the session timeout as its rebalance timeout", "[server][group_apis][join]") {
  fixture f;
  const std::int16_t version = GENERATE(std::int16_t{0}, std::int16_t{1});
  CAPTURE(version);
  const std::string a = f.stable_single(version);
  auto jb = f.join(fixture::join_req("", 10000, 60000), version);
  CHECK_FALSE(jb.ready());
  // a keeps its session with heartbeats but never rejoins.
  for (int i = 0; i < 3; ++i) {
    f.env.clk->advance(3000);
    CHECK(f.heartbeat(a, generation_id(1)) == code(errc::rebalance_in_progress));
    f.tick();
  }
  CHECK_FALSE(jb.ready());
  f.env.clk->advance(1000);  // 10 s since the rebalance began
  f.tick();
  if (version == 0) {
    REQUIRE(jb.ready());
    CHECK(jb.get().error_code == 0);
    CHECK(jb.get().members.size() == 1);  // a did not rejoin in time and was removed
    CHECK(f.heartbeat(a, generation_id(1)) == code(errc::unknown_member_id));
  } else {
    CHECK_FALSE(jb.ready());  // v1's rebalance timeout is 60 s
    f.env.clk->advance(50000);
    f.tick();
    REQUIRE(jb.ready());
    CHECK(jb.get().members.size() == 1);
  }
}

// ------------------------------------------------------------------ a whole rebalance

TEST_CASE("two remote members rebalance through the wire messages alone", "[server][group_apis][rebalance]") {
  fixture f;
  auto ja = f.join_new(5);
  REQUIRE(ja.ready());
  const std::string a = ja.get().member_id;
  REQUIRE(f.sync(a, generation_id(1), 5, {{a, encode_assignment({tp("t", 0), tp("t", 1), tp("t", 2), tp("t", 3)})}})
              .ready());
  CHECK(f.state() == "Stable");
  // b arrives: a learns of the rebalance from its heartbeat and rejoins.
  auto jb = f.join_new(5);
  CHECK_FALSE(jb.ready());
  CHECK(f.state() == "PreparingRebalance");
  CHECK(f.heartbeat(a, generation_id(1), 3) == code(errc::rebalance_in_progress));
  auto ja2 = f.join(fixture::join_req(a), 5);
  REQUIRE(ja2.ready());
  REQUIRE(jb.ready());
  const auto& leader = ja2.get();
  REQUIRE(leader.error_code == 0);
  CHECK(leader.generation == generation_id(2));
  CHECK(leader.leader == a);
  REQUIRE(leader.members.size() == 2);
  CHECK(jb.get().members.empty());
  const std::string b = jb.get().member_id;
  // The leader runs the assignor over the members' consumer-protocol subscriptions.
  std::vector<member_subscription> subs;
  for (const auto& m : leader.members) {
    auto s = decode_subscription(m.metadata);
    REQUIRE_OK(s);
    s->member_id = m.member_id;
    subs.push_back(*s);
  }
  range_assignor range;
  auto plan = range.assign({{"t", 4}}, subs);
  auto sb = f.sync(b, generation_id(2), 5);
  CHECK_FALSE(sb.ready());  // waits for the leader's assignment
  std::vector<protocol::sync_group_assignment> assignments;
  for (const auto& [member, tps] : plan) assignments.push_back({member, encode_assignment(tps)});
  auto sa = f.sync(a, generation_id(2), 5, assignments);
  REQUIRE(sa.ready());
  REQUIRE(sb.ready());
  CHECK(sa.get().protocol_name == std::optional<std::string>("range"));
  CHECK(sb.get().protocol_type == std::optional<std::string>("consumer"));
  auto got_a = decode_assignment(sa.get().assignment);
  auto got_b = decode_assignment(sb.get().assignment);
  REQUIRE_OK(got_a);
  REQUIRE_OK(got_b);
  CHECK(*got_a == std::vector<topic_partition>{tp("t", 0), tp("t", 1)});
  CHECK(*got_b == std::vector<topic_partition>{tp("t", 2), tp("t", 3)});
  CHECK(f.heartbeat(a, generation_id(2), 4) == 0);
  CHECK(f.heartbeat(b, generation_id(2), 0) == 0);
  CHECK(f.state() == "Stable");
}

TEST_CASE("a silent remote member is removed when its session times out", "[server][group_apis][session]") {
  fixture f;
  const std::string a = f.stable_single();
  auto jb = f.join_new(5);
  auto ja = f.join(fixture::join_req(a), 5);
  REQUIRE(jb.ready());
  REQUIRE(ja.ready());
  const std::string b = jb.get().member_id;
  REQUIRE(f.sync(a, generation_id(2), 5).ready());
  REQUIRE(f.sync(b, generation_id(2), 5).ready());
  CHECK(f.state() == "Stable");
  // b heartbeats every 3 s; a sends nothing. Its session is 10 s.
  for (int i = 0; i < 3; ++i) {
    f.env.clk->advance(3000);
    CHECK(f.heartbeat(b, generation_id(2)) == 0);
    f.tick();
  }
  CHECK(f.state() == "Stable");
  f.env.clk->advance(1000);
  f.tick();
  CHECK(f.state() == "PreparingRebalance");
  CHECK(f.heartbeat(a, generation_id(2)) == code(errc::unknown_member_id));
  CHECK(f.heartbeat(b, generation_id(2)) == code(errc::rebalance_in_progress));
  auto jb2 = f.join(fixture::join_req(b), 5);
  REQUIRE(jb2.ready());
  CHECK(jb2.get().generation == generation_id(3));
  CHECK(jb2.get().members.size() == 1);
}

// ------------------------------------------------------------------ SyncGroup, Heartbeat, LeaveGroup

TEST_CASE("SyncGroup v5 checks ProtocolType and ProtocolName and v3 carries group.instance.id",
          "[server][group_apis][sync]") {
  fixture f;
  auto j = f.join_new(5);
  REQUIRE(j.ready());
  const std::string m = j.get().member_id;
  protocol::sync_group_request r;
  r.group_id = "g";
  r.generation = generation_id(1);
  r.member_id = m;
  auto send = [&](std::int16_t version) {
    pending<protocol::sync_group_response> out;
    f.apis.sync_group(r, version, out.callback());
    REQUIRE(out.ready());
    return out.get();
  };
  CHECK(send(5).error_code == code(errc::inconsistent_group_protocol));  // both are mandatory in v5
  r.protocol_type = "consumer";
  r.protocol_name = "roundrobin";
  CHECK(send(5).error_code == code(errc::inconsistent_group_protocol));
  r.group_instance_id = "someone";
  r.protocol_name = "range";
  CHECK(send(3).error_code == code(errc::unknown_member_id));  // no such static member
  r.group_instance_id.reset();
  r.generation = generation_id(7);
  CHECK(send(0).error_code == code(errc::illegal_generation));
  r.generation = generation_id(1);
  r.group_id = "";
  CHECK(send(1).error_code == code(errc::invalid_group_id));
  r.group_id = "g";
  const auto ok = send(5);
  CHECK(ok.error_code == 0);
  CHECK(ok.protocol_name == std::optional<std::string>("range"));
}

TEST_CASE("Heartbeat codes at v0 and v4", "[server][group_apis][heartbeat]") {
  fixture f;
  const std::string m = f.stable_single();
  const std::int16_t version = GENERATE(std::int16_t{0}, std::int16_t{4});
  CHECK(f.heartbeat(m, generation_id(1), version) == 0);
  CHECK(f.heartbeat(m, generation_id(0), version) == code(errc::illegal_generation));
  CHECK(f.heartbeat("nobody", generation_id(1), version) == code(errc::unknown_member_id));
  protocol::heartbeat_request r;
  r.member_id = m;
  CHECK(f.apis.heartbeat(r, version).error_code == code(errc::invalid_group_id));
  r.group_id = "no-such-group";
  CHECK(f.apis.heartbeat(r, version).error_code == code(errc::unknown_member_id));
}

TEST_CASE("LeaveGroup v0 leaves one member and v3 answers per member", "[server][group_apis][leave]") {
  fixture f;
  SECTION("v0") {
    const std::string m = f.stable_single();
    protocol::leave_group_request r;
    r.group_id = "g";
    r.member_id = "nobody";
    CHECK(f.apis.leave_group(r, 0).error_code == code(errc::unknown_member_id));
    r.member_id = m;
    CHECK(f.apis.leave_group(r, 0).error_code == 0);
    CHECK(f.state() == "Empty");
    r.group_id = "";
    CHECK(f.apis.leave_group(r, 1).error_code == code(errc::invalid_group_id));
  }
  SECTION("v3 batch: by member id and by group.instance.id") {
    auto r1 = fixture::join_req();
    r1.group_instance_id = "i1";
    auto j1 = f.join(r1, 5);
    REQUIRE(j1.ready());
    const std::string m1 = j1.get().member_id;
    REQUIRE(f.sync(m1, generation_id(1), 5).ready());
    protocol::leave_group_request r;
    r.group_id = "g";
    r.members.push_back({"", std::optional<std::string>("i1"), std::nullopt});
    r.members.push_back({"nobody", std::nullopt, std::nullopt});
    r.members.push_back({"", std::optional<std::string>("i2"), std::nullopt});
    auto out = f.apis.leave_group(r, 3);
    CHECK(out.error_code == 0);
    REQUIRE(out.members.size() == 3);
    CHECK(out.members[0].error_code == 0);
    CHECK(out.members[0].group_instance_id == std::optional<std::string>("i1"));
    CHECK(out.members[1].error_code == code(errc::unknown_member_id));
    CHECK(out.members[1].member_id == "nobody");
    CHECK(out.members[2].error_code == code(errc::unknown_member_id));
    CHECK(f.state() == "Empty");
    r.group_id = "no-such-group";
    auto none = f.apis.leave_group(r, 5);
    CHECK(none.error_code == 0);
    for (const auto& m : none.members) CHECK(m.error_code == code(errc::unknown_member_id));
  }
}

// ------------------------------------------------------------------ OffsetCommit and OffsetFetch

TEST_CASE("OffsetCommit answers per partition: unknown ones fail and the rest is committed",
          "[server][group_apis][commit]") {
  fixture f;
  protocol::offset_commit_request r;
  r.group_id = "g";  // a simple commit: generation -1, no member
  r.topics.push_back({"t",
                      {commit_partition(0, 5, "m0"), commit_partition(9, 1), commit_partition(1, 7),
                       commit_partition(2, 3, std::string(5000, 'x')), commit_partition(3, -2)}});
  r.topics.push_back({"missing", {commit_partition(0, 1), commit_partition(1, 1)}});
  const std::int16_t version = GENERATE(std::int16_t{2}, std::int16_t{8});
  auto out = f.apis.offset_commit(r, version);
  REQUIRE(out.topics.size() == 2);
  REQUIRE(out.topics[0].partitions.size() == 5);
  CHECK(out.topics[0].partitions[0].error_code == 0);
  CHECK(out.topics[0].partitions[1].partition_index == partition_id(9));
  CHECK(out.topics[0].partitions[1].error_code == code(errc::unknown_topic_or_partition));
  CHECK(out.topics[0].partitions[2].error_code == 0);
  CHECK(out.topics[0].partitions[3].error_code == code(errc::offset_metadata_too_large));
  CHECK(out.topics[0].partitions[4].error_code == code(errc::invalid_request));
  CHECK(out.topics[1].name == "missing");
  for (const auto& p : out.topics[1].partitions) CHECK(p.error_code == code(errc::unknown_topic_or_partition));
  auto committed = f.env.coord->fetch_offsets("g");
  CHECK(committed.size() == 2);
  CHECK(committed.at(tp("t", 0)).off == offset(5));
  CHECK(committed.at(tp("t", 0)).metadata == "m0");
  CHECK(committed.at(tp("t", 1)).off == offset(7));
}

TEST_CASE("OffsetCommit: the group's refusal is every known partition's code", "[server][group_apis][commit]") {
  fixture f;
  const std::string m = f.stable_single();
  protocol::offset_commit_request r;
  r.group_id = "g";
  r.generation_id_or_member_epoch = generation_id(0);
  r.member_id = m;
  r.topics.push_back({"t", {commit_partition(0, 5), commit_partition(1, 1, std::string(5000, 'x'))}});
  r.topics.push_back({"missing", {commit_partition(0, 1)}});
  auto out = f.apis.offset_commit(r, 7);
  CHECK(out.topics[0].partitions[0].error_code == code(errc::illegal_generation));
  CHECK(out.topics[0].partitions[1].error_code == code(errc::illegal_generation));
  CHECK(out.topics[1].partitions[0].error_code == code(errc::unknown_topic_or_partition));
  CHECK(f.env.coord->fetch_offsets("g").empty());
  r.generation_id_or_member_epoch = generation_id(1);
  out = f.apis.offset_commit(r, 7);
  CHECK(out.topics[0].partitions[0].error_code == 0);
  CHECK(out.topics[0].partitions[1].error_code == code(errc::offset_metadata_too_large));
  // A member's commit to a group that does not exist: v9 says so, older versions as before.
  r.group_id = "no-such-group";
  CHECK(f.apis.offset_commit(r, 8).topics[0].partitions[0].error_code == code(errc::illegal_generation));
  CHECK(f.apis.offset_commit(r, 9).topics[0].partitions[0].error_code == code(errc::group_id_not_found));
  r.group_id = "";
  CHECK(f.apis.offset_commit(r, 2).topics[0].partitions[0].error_code == code(errc::invalid_group_id));
}

TEST_CASE("OffsetCommit v1 stores its CommitTimestamp and OffsetFetch returns the metadata",
          "[server][group_apis][commit][fetch]") {
  fixture f;
  protocol::offset_commit_request r;
  r.group_id = "g";
  auto p = commit_partition(0, 42, "where I was");
  p.commit_timestamp = 1'600'000'000'000;
  r.topics.push_back({"t", {p}});
  CHECK(f.apis.offset_commit(r, 1).topics[0].partitions[0].error_code == 0);
  CHECK(f.env.coord->fetch_offsets("g").at(tp("t", 0)).commit_timestamp == 1'600'000'000'000);
  CHECK(f.apis.offset_commit(r, 3).topics[0].partitions[0].error_code == 0);  // v3 has no timestamp: now
  CHECK(f.env.coord->fetch_offsets("g").at(tp("t", 0)).commit_timestamp == f.env.clk->now_ms());
  protocol::offset_fetch_request q;
  q.group_id = "g";
  q.topics = std::vector<protocol::offset_fetch_request_topic>{{"t", {partition_id(0), partition_id(1)}}};
  auto out = f.apis.offset_fetch(q, 1);
  REQUIRE(out.topics.size() == 1);
  REQUIRE(out.topics[0].partitions.size() == 2);
  CHECK(out.topics[0].partitions[0].committed_offset == offset(42));
  CHECK(out.topics[0].partitions[0].metadata == std::optional<std::string>("where I was"));
  CHECK(out.topics[0].partitions[1].committed_offset == offset(-1));
  CHECK(out.topics[0].partitions[1].metadata == std::optional<std::string>(""));
  CHECK(out.topics[0].partitions[1].committed_leader_epoch == leader_epoch(-1));
}

TEST_CASE("OffsetFetch: null topics mean all (v2+) and v8 fetches several groups", "[server][group_apis][fetch]") {
  fixture f;
  for (const std::string g : {"g", "h"}) {
    protocol::offset_commit_request r;
    r.group_id = g;
    auto p = commit_partition(2, g == "g" ? 10 : 20, "m");
    p.committed_leader_epoch = leader_epoch(3);
    r.topics.push_back({"t", {commit_partition(1, 1), p}});
    REQUIRE(f.apis.offset_commit(r, 7).topics[0].partitions[1].error_code == 0);
  }
  SECTION("v5: all of one group with the leader epoch") {
    protocol::offset_fetch_request q;
    q.group_id = "g";
    q.topics.reset();
    auto out = f.apis.offset_fetch(q, 5);
    CHECK(out.error_code == 0);
    REQUIRE(out.topics.size() == 1);
    REQUIRE(out.topics[0].partitions.size() == 2);
    CHECK(out.topics[0].partitions[1].partition_index == partition_id(2));
    CHECK(out.topics[0].partitions[1].committed_offset == offset(10));
    CHECK(out.topics[0].partitions[1].committed_leader_epoch == leader_epoch(3));
    q.group_id = "unknown-group";
    auto none = f.apis.offset_fetch(q, 5);
    CHECK(none.error_code == 0);
    CHECK(none.topics.empty());
  }
  SECTION("v8: groups") {
    protocol::offset_fetch_request q;
    protocol::offset_fetch_request_group g;
    g.group_id = "g";
    g.topics = std::vector<protocol::offset_fetch_request_topics>{{"t", {partition_id(2), partition_id(3)}}};
    protocol::offset_fetch_request_group h;
    h.group_id = "h";
    h.topics.reset();
    q.groups = {g, h};
    auto out = f.apis.offset_fetch(q, 8);
    REQUIRE(out.groups.size() == 2);
    CHECK(out.groups[0].group_id == "g");
    CHECK(out.groups[0].error_code == 0);
    REQUIRE(out.groups[0].topics.at(0).partitions.size() == 2);
    CHECK(out.groups[0].topics[0].partitions[0].committed_offset == offset(10));
    CHECK(out.groups[0].topics[0].partitions[1].committed_offset == offset(-1));
    CHECK(out.groups[1].topics.at(0).partitions.size() == 2);
    CHECK(out.groups[1].topics[0].partitions[1].committed_offset == offset(20));
  }
}

// ------------------------------------------------------------------ FindCoordinator

TEST_CASE("FindCoordinator answers this broker for groups and refuses transactions", "[server][group_apis][find]") {
  fixture f;
  const coordinator_address self{broker_id(7), "10.0.0.1", 9093};
  SECTION("v0 and v2: one key") {
    protocol::find_coordinator_request r;
    r.key = "g";
    auto out = f.apis.find_coordinator(r, 0, self);
    CHECK(out.error_code == 0);
    CHECK(out.node_id == broker_id(7));
    CHECK(out.host == "10.0.0.1");
    CHECK(out.port == 9093);
    r.key = "";  // Kafka finds a coordinator for any group id
    CHECK(f.apis.find_coordinator(r, 2, self).error_code == 0);
    r.key = "txn";
    r.key_type = 1;
    auto txn = f.apis.find_coordinator(r, 2, self);
    CHECK(txn.error_code == code(errc::invalid_request));
    CHECK(txn.node_id == broker_id(-1));
    CHECK(txn.port == -1);
  }
  SECTION("v4: batched keys") {
    protocol::find_coordinator_request r;
    r.coordinator_keys = {"a", "b"};
    auto out = f.apis.find_coordinator(r, 4, self);
    REQUIRE(out.coordinators.size() == 2);
    CHECK(out.coordinators[1].key == "b");
    CHECK(out.coordinators[1].node_id == broker_id(7));
    CHECK(out.coordinators[1].error_code == 0);
    r.key_type = 1;
    auto txn = f.apis.find_coordinator(r, 4, self);
    REQUIRE(txn.coordinators.size() == 2);
    CHECK(txn.coordinators[0].error_code == code(errc::invalid_request));
    r.key_type = 9;
    CHECK(f.apis.find_coordinator(r, 5, self).coordinators[0].error_code == code(errc::invalid_request));
  }
}

// ------------------------------------------------------------------ DescribeGroups, ListGroups, DeleteGroups

TEST_CASE("DescribeGroups: Dead for unknown groups and metadata only when Stable", "[server][group_apis][describe]") {
  fixture f;
  const std::string a = f.stable_single();
  protocol::describe_groups_request r;
  r.groups = {"g", "nope"};
  auto out = f.apis.describe_groups(r, 0);
  REQUIRE(out.groups.size() == 2);
  const auto& g = out.groups[0];
  CHECK(g.error_code == 0);
  CHECK(g.group_state == "Stable");
  CHECK(g.protocol_type == "consumer");
  CHECK(g.protocol_data == "range");
  REQUIRE(g.members.size() == 1);
  CHECK(g.members[0].member_id == a);
  CHECK(g.members[0].client_id == "client");
  CHECK(decode_subscription(g.members[0].member_metadata));
  auto assigned = decode_assignment(g.members[0].member_assignment);
  REQUIRE_OK(assigned);
  CHECK(assigned->size() == 2);
  CHECK(out.groups[1].error_code == 0);
  CHECK(out.groups[1].group_state == "Dead");
  CHECK(out.groups[1].members.empty());
  CHECK(g.authorized_operations == std::numeric_limits<std::int32_t>::min());
  // A rebalance under way: no protocol data, no member metadata.
  auto jb = f.join_new(5);
  r.include_authorized_operations = true;
  auto during = f.apis.describe_groups(r, 5);
  CHECK(during.groups[0].group_state == "PreparingRebalance");
  CHECK(during.groups[0].protocol_data.empty());
  for (const auto& m : during.groups[0].members) CHECK(m.member_metadata.empty());
  CHECK(during.groups[0].authorized_operations == group_apis::all_group_operations);
  CHECK(during.groups[1].authorized_operations == group_apis::all_group_operations);
}

TEST_CASE("ListGroups filters by state from v4 and by type from v5", "[server][group_apis][list]") {
  fixture f;
  f.stable_single();
  protocol::offset_commit_request c;
  c.group_id = "simple";
  c.topics.push_back({"t", {commit_partition(0, 1)}});
  REQUIRE(f.apis.offset_commit(c, 2).topics[0].partitions[0].error_code == 0);
  protocol::list_groups_request r;
  r.states_filter = {"stable"};
  auto all = f.apis.list_groups(r, 0);  // v0 has no filter
  CHECK(all.error_code == 0);
  CHECK(all.groups.size() == 2);
  auto stable = f.apis.list_groups(r, 4);
  REQUIRE(stable.groups.size() == 1);
  CHECK(stable.groups[0].group_id == "g");
  CHECK(stable.groups[0].group_state == "Stable");
  CHECK(stable.groups[0].protocol_type == "consumer");
  r.states_filter = {" Empty "};
  auto empty = f.apis.list_groups(r, 4);
  REQUIRE(empty.groups.size() == 1);
  CHECK(empty.groups[0].group_id == "simple");
  CHECK(empty.groups[0].protocol_type.empty());
  r.states_filter.clear();
  r.types_filter = {"Classic"};
  auto classic = f.apis.list_groups(r, 5);
  CHECK(classic.groups.size() == 2);
  CHECK(classic.groups[0].group_type == "classic");
  r.types_filter = {"consumer"};
  CHECK(f.apis.list_groups(r, 5).groups.empty());
}

TEST_CASE("DeleteGroups answers per group", "[server][group_apis][delete]") {
  fixture f;
  f.stable_single();
  protocol::offset_commit_request c;
  c.group_id = "simple";
  c.topics.push_back({"t", {commit_partition(0, 1)}});
  REQUIRE(f.apis.offset_commit(c, 2).topics[0].partitions[0].error_code == 0);
  protocol::delete_groups_request r;
  r.groups_names = {"simple", "g", "nope", "simple", ""};
  auto out = f.apis.delete_groups(r, 0);
  REQUIRE(out.results.size() == 4);
  CHECK(out.results[0].group_id == "simple");
  CHECK(out.results[0].error_code == 0);
  CHECK(out.results[1].error_code == code(errc::non_empty_group));
  CHECK(out.results[2].error_code == code(errc::group_id_not_found));
  CHECK(out.results[3].group_id == "");
  CHECK(out.results[3].error_code == code(errc::group_id_not_found));
  CHECK(f.env.coord->fetch_offsets("simple").empty());
  CHECK(f.apis.delete_groups(r, 2).results[0].error_code == code(errc::group_id_not_found));
}

TEST_CASE("every answer encodes at every version of its API", "[server][group_apis][encode]") {
  fixture f;
  auto encodes = [](const auto& body, std::int16_t version) {
    INFO("version " << version);
    CHECK_OK(protocol::encode_response(1, body, version));
  };
  for (std::int16_t v = 0; v <= 9; ++v) {
    auto r = fixture::join_req();
    r.group_id = "g" + std::to_string(v);
    auto j = f.join_new(v, r);
    REQUIRE(j.ready());
    REQUIRE(j.get().error_code == 0);
    encodes(j.get(), v);
    r.group_id = "";
    encodes(f.join(r, v).get(), v);
    if (v <= 5) {
      protocol::sync_group_request s;
      s.group_id = "g" + std::to_string(v);
      s.generation = j.get().generation;
      s.member_id = j.get().member_id;
      s.protocol_type = "consumer";
      s.protocol_name = "range";
      pending<protocol::sync_group_response> out;
      f.apis.sync_group(s, v, out.callback());
      REQUIRE(out.get().error_code == 0);
      encodes(out.get(), v);
    }
    if (v <= 4) {
      protocol::heartbeat_request h;
      h.group_id = "g" + std::to_string(v);
      h.member_id = j.get().member_id;
      encodes(f.apis.heartbeat(h, v), v);
    }
    if (v <= 5) {
      protocol::leave_group_request l;
      l.group_id = "g" + std::to_string(v);
      l.member_id = "nobody";
      l.members.push_back({"nobody", std::nullopt, std::nullopt});
      encodes(f.apis.leave_group(l, v), v);
    }
    protocol::offset_commit_request c;
    c.group_id = "simple";
    c.topics.push_back({"t", {commit_partition(0, 1), commit_partition(7, 1)}});
    encodes(f.apis.offset_commit(c, v), v);
    protocol::offset_fetch_request q;
    q.group_id = "simple";
    if (v >= 2) q.topics.reset();
    protocol::offset_fetch_request_group g;
    g.group_id = "simple";
    g.topics.reset();
    q.groups = {g};
    encodes(f.apis.offset_fetch(q, v), v);
    if (v <= 6) {
      protocol::find_coordinator_request fc;
      fc.key = "g";
      fc.coordinator_keys = {"g"};
      fc.key_type = v >= 1 ? 1 : 0;
      encodes(f.apis.find_coordinator(fc, v, {broker_id(1), "h", 1}), v);
    }
    if (v <= 5) {
      protocol::describe_groups_request d;
      d.groups = {"g0", "nope"};
      d.include_authorized_operations = v >= 3;
      encodes(f.apis.describe_groups(d, v), v);
      encodes(f.apis.list_groups({}, v), v);
    }
    if (v <= 2) encodes(f.apis.delete_groups({{"nope"}}, v), v);
  }
}

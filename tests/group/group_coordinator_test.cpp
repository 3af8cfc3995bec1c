#include <catch2/catch.hpp>

#include <brook/group/group_coordinator.hpp>

#include "group_support.hpp"
#include "support/checks.hpp"

using namespace brook;
using namespace std::chrono_literals;
using brook::test::group_env;
using brook::test::reply;
using brook::test::tp;

namespace {

offset_and_metadata om(std::int64_t o) { return offset_and_metadata{offset(o), -1, {}}; }

join_group_request join_req(const std::string& group, const std::string& member = "",
                            std::vector<std::string> protocols = {"range"}, std::vector<std::string> topics = {"t"}) {
  join_group_request r;
  r.group_id = group;
  r.member_id = member;
  r.client_id = "c";
  member_subscription s;
  s.topics = std::move(topics);
  for (const auto& p : protocols) r.protocols.push_back({p, encode_subscription(s)});
  return r;
}

reply<join_group_response> join(group_coordinator& c, join_group_request r) {
  reply<join_group_response> out;
  c.join_group(std::move(r), out.callback());
  return out;
}

reply<std::vector<std::byte>> sync(group_coordinator& c, const std::string& group, generation_id gen,
                                   const std::string& member,
                                   std::map<std::string, std::vector<std::byte>> assignments = {}) {
  reply<std::vector<std::byte>> out;
  sync_group_request r;
  r.group_id = group;
  r.generation = gen;
  r.member_id = member;
  r.assignments = std::move(assignments);
  c.sync_group(std::move(r), out.callback());
  return out;
}

reply<std::vector<std::byte>> sync(group_coordinator& c, const std::string& group, std::int32_t gen,
                                   const std::string& member,
                                   std::map<std::string, std::vector<std::byte>> assignments = {}) {
  return sync(c, group, generation_id(gen), member, std::move(assignments));
}

group_state state_of(group_coordinator& c, const std::string& g) {
  auto d = c.describe_group(g);
  REQUIRE(d);
  return d->state;
}

offset_commit_request commit_req(const std::string& group, std::int32_t gen, const std::string& member,
                                 std::map<topic_partition, offset_and_metadata> offs) {
  offset_commit_request r;
  r.group_id = group;
  r.generation = generation_id(gen);
  r.member_id = member;
  r.offsets = std::move(offs);
  return r;
}

/// One member alone in a Stable group; returns its member id.
std::string stable_single(group_env& env, const std::string& group) {
  auto j = join(*env.coord, join_req(group));
  REQUIRE(j.ready());
  REQUIRE(j.get());
  auto s = sync(*env.coord, group, j.get()->generation, j.get()->member_id,
                {{j.get()->member_id, encode_assignment({tp("t", 0)})}});
  REQUIRE(s.ready());
  REQUIRE(s.get());
  return j.get()->member_id;
}

}  // namespace

TEST_CASE("one member: join, sync, Stable, generation 1", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  auto j = join(*env.coord, join_req("g"));
  REQUIRE(j.ready());
  REQUIRE(j.get());
  const auto& jr = *j.get();
  CHECK(jr.generation == generation_id(1));
  CHECK(jr.leader == jr.member_id);
  CHECK(jr.protocol_name == "range");
  CHECK(jr.protocol_type == "consumer");
  REQUIRE(jr.members.size() == 1);
  CHECK(state_of(*env.coord, "g") == group_state::completing_rebalance);
  auto s = sync(*env.coord, "g", 1, jr.member_id, {{jr.member_id, encode_assignment({tp("t", 0), tp("t", 1)})}});
  REQUIRE(s.ready());
  REQUIRE(s.get());
  auto a = decode_assignment(*s.get());
  REQUIRE(a);
  CHECK(a->size() == 2);
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  CHECK(env.coord->heartbeat("g", generation_id(1), jr.member_id));
  auto stale = env.coord->heartbeat("g", generation_id(0), jr.member_id);
  REQUIRE_FALSE(stale);
  CHECK(stale.error() == errc::illegal_generation);
  auto unknown = env.coord->heartbeat("g", generation_id(1), "nobody");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error() == errc::unknown_member_id);
}

TEST_CASE("a second member triggers a rebalance that waits for every member", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  const std::string a = stable_single(env, "g");
  auto jb = join(*env.coord, join_req("g"));
  CHECK_FALSE(jb.ready());
  CHECK(state_of(*env.coord, "g") == group_state::preparing_rebalance);
  auto hb = env.coord->heartbeat("g", generation_id(1), a);
  REQUIRE_FALSE(hb);
  CHECK(hb.error() == errc::rebalance_in_progress);
  // Commits with the current generation are still accepted while members rejoin.
  CHECK(env.coord->commit_offsets(commit_req("g", 1, a, {{tp("t", 0), om(5)}})));
  auto ja = join(*env.coord, join_req("g", a));
  REQUIRE(ja.ready());
  REQUIRE(jb.ready());
  REQUIRE(ja.get());
  REQUIRE(jb.get());
  CHECK(ja.get()->generation == generation_id(2));
  CHECK(jb.get()->generation == generation_id(2));
  CHECK(ja.get()->leader == a);  // the first member stays leader
  CHECK(ja.get()->members.size() == 2);
  CHECK(jb.get()->members.empty());
  const std::string b = jb.get()->member_id;
  // The follower's sync waits for the leader's.
  auto sb = sync(*env.coord, "g", 2, b);
  CHECK_FALSE(sb.ready());
  // Commits while the leader's assignment is awaited are refused.
  auto during = env.coord->commit_offsets(commit_req("g", 2, a, {{tp("t", 0), om(6)}}));
  REQUIRE_FALSE(during);
  CHECK(during.error() == errc::rebalance_in_progress);
  auto sa = sync(*env.coord, "g", 2, a, {{a, encode_assignment({tp("t", 0)})}, {b, encode_assignment({tp("t", 1)})}});
  REQUIRE(sa.ready());
  REQUIRE(sb.ready());
  auto ab = decode_assignment(*sb.get());
  REQUIRE(ab);
  CHECK(*ab == std::vector<topic_partition>{tp("t", 1)});
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  CHECK(env.coord->fetch_offsets("g").at(tp("t", 0)).off == offset(5));
}

TEST_CASE("the protocol is chosen by vote among those every member supports", "[group][coordinator]") {
  group_env env;
  auto j1 = join(*env.coord, join_req("g", "", {"roundrobin", "range"}));
  REQUIRE(j1.ready());
  const std::string m1 = j1.get()->member_id;
  auto j2 = join(*env.coord, join_req("g", "", {"range", "roundrobin"}));
  auto j3 = join(*env.coord, join_req("g", "", {"sticky"}));
  REQUIRE(j3.ready());
  REQUIRE_FALSE(j3.get());
  CHECK(j3.get().error() == errc::inconsistent_group_protocol);
  auto j4 = join(*env.coord, join_req("g", "", {"range"}));
  auto j1b = join(*env.coord, join_req("g", m1, {"roundrobin", "range"}));
  REQUIRE(j1b.ready());
  REQUIRE(j2.ready());
  REQUIRE(j4.ready());
  // Candidates: range only (j4 supports nothing else).
  CHECK(j1b.get()->protocol_name == "range");
  auto other = join_req("g", "", {"range"});
  other.protocol_type = "connect";
  auto j5 = join(*env.coord, other);
  REQUIRE(j5.ready());
  REQUIRE_FALSE(j5.get());
  CHECK(j5.get().error() == errc::inconsistent_group_protocol);
}

TEST_CASE("invalid joins are refused with Kafka's codes", "[group][coordinator]") {
  group_env env;
  auto bad_group = join(*env.coord, join_req(""));
  REQUIRE(bad_group.ready());
  CHECK(bad_group.get().error() == errc::invalid_group_id);
  auto r = join_req("g");
  r.session_timeout = 1000ms;
  auto bad_session = join(*env.coord, r);
  REQUIRE(bad_session.ready());
  CHECK(bad_session.get().error() == errc::invalid_session_timeout);
  auto unknown = join(*env.coord, join_req("g", "ghost"));
  REQUIRE(unknown.ready());
  CHECK(unknown.get().error() == errc::unknown_member_id);
  auto none = join_req("g");
  none.protocols.clear();
  auto no_protocols = join(*env.coord, none);
  REQUIRE(no_protocols.ready());
  CHECK(no_protocols.get().error() == errc::inconsistent_group_protocol);
}

TEST_CASE("group.max.size refuses the member past the limit", "[group][coordinator]") {
  auto cfg = group_env::default_coordinator_config();
  cfg.group_max_size = 1;
  group_env env(cfg);
  (void)stable_single(env, "g");
  auto j = join(*env.coord, join_req("g"));
  REQUIRE(j.ready());
  CHECK(j.get().error() == errc::group_max_size_reached);
}

TEST_CASE("a member that stops heartbeating is removed after session.timeout.ms", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  const std::string a = stable_single(env, "g");
  auto jb = join(*env.coord, join_req("g"));
  auto ja = join(*env.coord, join_req("g", a));
  REQUIRE(jb.ready());
  const std::string b = jb.get()->member_id;
  REQUIRE(sync(*env.coord, "g", 2, a, {}).ready());
  REQUIRE(sync(*env.coord, "g", 2, b).ready());
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  // b heartbeats, a does not.
  for (int i = 0; i < 14; ++i) {
    env.clk->advance(3000);
    CHECK(env.coord->heartbeat("g", generation_id(2), b));
    REQUIRE(env.coord->tick());
  }
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  env.clk->advance(3000);  // a's last heartbeat is now 45 s old
  CHECK(env.coord->heartbeat("g", generation_id(2), b));
  REQUIRE(env.coord->tick());
  CHECK(state_of(*env.coord, "g") == group_state::preparing_rebalance);
  auto hb = env.coord->heartbeat("g", generation_id(2), a);
  REQUIRE_FALSE(hb);
  CHECK(hb.error() == errc::unknown_member_id);
  auto jb2 = join(*env.coord, join_req("g", b));
  REQUIRE(jb2.ready());
  CHECK(jb2.get()->generation == generation_id(3));
  CHECK(jb2.get()->leader == b);
  CHECK(jb2.get()->members.size() == 1);
  // a is gone: its commits are refused and cannot overwrite b's.
  REQUIRE(env.coord->commit_offsets(commit_req("g", 3, b, {{tp("t", 0), om(9)}})).error() ==
          errc::rebalance_in_progress);
  REQUIRE(sync(*env.coord, "g", 3, b, {{b, encode_assignment({tp("t", 0), tp("t", 1)})}}).ready());
  REQUIRE(env.coord->commit_offsets(commit_req("g", 3, b, {{tp("t", 0), om(9)}})));
  auto stale = env.coord->commit_offsets(commit_req("g", 2, a, {{tp("t", 0), om(3)}}));
  REQUIRE_FALSE(stale);
  CHECK(stale.error() == errc::unknown_member_id);
  auto stale_gen = env.coord->commit_offsets(commit_req("g", 2, b, {{tp("t", 0), om(3)}}));
  REQUIRE_FALSE(stale_gen);
  CHECK(stale_gen.error() == errc::illegal_generation);
  CHECK(env.coord->fetch_offsets("g").at(tp("t", 0)).off == offset(9));
}

TEST_CASE("members that do not rejoin within the rebalance timeout are dropped", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 1);
  auto r = join_req("g");
  r.rebalance_timeout = 10000ms;
  auto ja = join(*env.coord, r);
  REQUIRE(ja.ready());
  const std::string a = ja.get()->member_id;
  REQUIRE(sync(*env.coord, "g", 1, a, {}).ready());
  auto rb = join_req("g");
  rb.rebalance_timeout = 10000ms;
  auto jb = join(*env.coord, rb);
  CHECK_FALSE(jb.ready());
  env.clk->advance(5000);
  CHECK(env.coord->heartbeat("g", generation_id(1), a).error() ==
        errc::rebalance_in_progress);  // a keeps its session...
  REQUIRE(env.coord->tick());
  CHECK_FALSE(jb.ready());
  env.clk->advance(5000);  // ...but never rejoins
  REQUIRE(env.coord->tick());
  REQUIRE(jb.ready());
  CHECK(jb.get()->generation == generation_id(2));
  CHECK(jb.get()->members.size() == 1);
  CHECK(jb.get()->leader == jb.get()->member_id);
}

TEST_CASE("group.initial.rebalance.delay.ms holds a new group's first rebalance", "[group][coordinator]") {
  auto cfg = group_env::default_coordinator_config();
  cfg.group_initial_rebalance_delay = 3000ms;
  group_env env(cfg);
  auto j1 = join(*env.coord, join_req("g"));
  CHECK_FALSE(j1.ready());
  env.clk->advance(2000);
  auto j2 = join(*env.coord, join_req("g"));
  REQUIRE(env.coord->tick());
  CHECK_FALSE(j1.ready());
  env.clk->advance(1000);  // first delay over, but a member arrived during it: one more delay
  REQUIRE(env.coord->tick());
  CHECK_FALSE(j1.ready());
  env.clk->advance(3000);
  REQUIRE(env.coord->tick());
  REQUIRE(j1.ready());
  REQUIRE(j2.ready());
  CHECK(j1.get()->generation == generation_id(1));
  CHECK(j2.get()->generation == generation_id(1));
}

TEST_CASE("in-process members: alive means heartbeating, a slow poll means removal", "[group][coordinator]") {
  auto cfg = group_env::default_coordinator_config();
  cfg.offsets_retention_check_interval = std::chrono::hours(24);  // keep the empty group around
  group_env env(cfg);
  env.create_topic("t", 1);
  auto live = std::make_shared<member_liveness>();
  live->last_poll_ms = env.clk->now_ms();
  auto r = join_req("g");
  r.liveness = live;
  auto j = join(*env.coord, r);
  REQUIRE(j.ready());
  const std::string m = j.get()->member_id;
  REQUIRE(sync(*env.coord, "g", 1, m, {}).ready());
  // No heartbeats for 100 s, but alive and polling: stays.
  for (int i = 0; i < 10; ++i) {
    env.clk->advance(10000);
    live->last_poll_ms = env.clk->now_ms();
    REQUIRE(env.coord->tick());
  }
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  // Inside a long poll counts as polling.
  live->in_poll = true;
  env.clk->advance(400000);
  REQUIRE(env.coord->tick());
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  live->in_poll = false;
  live->last_poll_ms = env.clk->now_ms();
  env.clk->advance(300001);  // out of poll for longer than max.poll.interval.ms
  REQUIRE(env.coord->tick());
  CHECK(live->rejoin_needed.load());
  CHECK(env.coord->heartbeat("g", generation_id(1), m).error() == errc::unknown_member_id);
  CHECK(state_of(*env.coord, "g") == group_state::empty);
  // A member that died (not alive) expires by its session.
  auto live2 = std::make_shared<member_liveness>();
  live2->last_poll_ms = env.clk->now_ms();
  auto r2 = join_req("g");
  r2.liveness = live2;
  auto j2 = join(*env.coord, r2);
  REQUIRE(j2.ready());
  REQUIRE(sync(*env.coord, "g", j2.get()->generation, j2.get()->member_id, {}).ready());
  live2->alive = false;
  env.clk->advance(44000);
  REQUIRE(env.coord->tick());
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  env.clk->advance(2000);
  REQUIRE(env.coord->tick());
  CHECK(state_of(*env.coord, "g") == group_state::empty);
}

TEST_CASE("leaving: the others rebalance, the last one leaves the group Empty", "[group][coordinator]") {
  group_env env;
  const std::string a = stable_single(env, "g");
  CHECK(env.coord->leave_group("g", "ghost").error() == errc::unknown_member_id);
  REQUIRE(env.coord->leave_group("g", a));
  auto d = env.coord->describe_group("g");
  REQUIRE(d);
  CHECK(d->state == group_state::empty);
  CHECK(d->members.empty());
  CHECK(d->generation == generation_id(2));
}

TEST_CASE("static membership: a restart within the session keeps the assignment without a rebalance",
          "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  auto r = join_req("g");
  r.group_instance_id = "host-1";
  auto j = join(*env.coord, r);
  REQUIRE(j.ready());
  const std::string old_id = j.get()->member_id;
  REQUIRE(sync(*env.coord, "g", 1, old_id, {{old_id, encode_assignment({tp("t", 0), tp("t", 1)})}}).ready());
  env.clk->advance(20000);  // the instance restarts: no leave, a new join with the same instance id
  auto again = join(*env.coord, r);
  REQUIRE(again.ready());
  REQUIRE(again.get());
  CHECK(again.get()->generation == generation_id(1));  // no rebalance
  const std::string new_id = again.get()->member_id;
  CHECK(new_id != old_id);
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  auto s = sync(*env.coord, "g", 1, new_id);
  REQUIRE(s.ready());
  auto a = decode_assignment(*s.get());
  REQUIRE(a);
  CHECK(a->size() == 2);
  // The old incarnation is fenced.
  CHECK(env.coord->heartbeat("g", generation_id(1), old_id, std::string("host-1")).error() == errc::fenced_instance_id);
  auto c = commit_req("g", 1, old_id, {{tp("t", 0), om(1)}});
  c.group_instance_id = "host-1";
  CHECK(env.coord->commit_offsets(c).error() == errc::fenced_instance_id);
  // Past the session timeout without heartbeats the static member is removed.
  env.clk->advance(46000);
  REQUIRE(env.coord->tick());
  CHECK(state_of(*env.coord, "g") == group_state::empty);
}

TEST_CASE("offset commit validation: nothing is written unless all of it is valid", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  CHECK(env.coord->commit_offsets(commit_req("g", -1, "", {{tp("t", 0), om(3)}})));
  auto bad_tp = env.coord->commit_offsets(commit_req("g", -1, "", {{tp("t", 1), om(4)}, {tp("t", 7), om(1)}}));
  CHECK(bad_tp.error() == errc::unknown_topic_or_partition);
  auto neg = env.coord->commit_offsets(commit_req("g", -1, "", {{tp("t", 1), om(-2)}}));
  CHECK(neg.error() == errc::invalid_argument);
  offset_and_metadata big{offset(1), -1, std::string(5000, 'x')};
  CHECK(env.coord->commit_offsets(commit_req("g", -1, "", {{tp("t", 1), big}})).error() ==
        errc::offset_metadata_too_large);
  auto offs = env.coord->fetch_offsets("g");
  CHECK(offs.size() == 1);
  CHECK(offs.at(tp("t", 0)).off == offset(3));
  CHECK(env.coord->commit_offsets(commit_req("", -1, "", {{tp("t", 0), om(3)}})).error() == errc::invalid_group_id);
  CHECK(env.coord->commit_offsets(commit_req("nogroup", 4, "m", {{tp("t", 0), om(3)}})).error() ==
        errc::illegal_generation);
  // Generation -1 with a member id is a simple commit too (Kafka's rule): a missing group is created.
  CHECK(env.coord->commit_offsets(commit_req("with-member", -1, "m", {{tp("t", 0), om(5)}})));
  CHECK(env.coord->fetch_offsets("with-member").at(tp("t", 0)).off == offset(5));
  CHECK(env.coord->commit_offsets(commit_req("with-member", -1, "other", {{tp("t", 0), om(6)}})));  // still Empty
  CHECK(env.coord->fetch_offsets("with-member").at(tp("t", 0)).off == offset(6));
  // A simple commit is refused once the group has members.
  (void)stable_single(env, "g");
  CHECK(env.coord->commit_offsets(commit_req("g", -1, "", {{tp("t", 0), om(8)}})).error() == errc::unknown_member_id);
  CHECK(env.coord->commit_offsets(commit_req("g", -1, "stranger", {{tp("t", 0), om(8)}})).error() ==
        errc::unknown_member_id);
  CHECK(env.coord->fetch_offsets("g").at(tp("t", 0)).off == offset(3));
}

TEST_CASE("committed offsets and generations survive a restart", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  const std::string a = stable_single(env, "g");
  REQUIRE(env.coord->commit_offsets(commit_req("g", 1, a, {{tp("t", 0), {offset(10), 4, "meta"}}})));
  REQUIRE(env.coord->commit_offsets(commit_req("g", 1, a, {{tp("t", 0), om(12)}, {tp("t", 1), om(2)}})));
  REQUIRE(env.coord->commit_offsets(commit_req("other", -1, "", {{tp("t", 1), om(7)}})));
  env.reopen();
  auto offs = env.coord->fetch_offsets("g");
  REQUIRE(offs.size() == 2);
  CHECK(offs.at(tp("t", 0)).off == offset(12));
  CHECK(offs.at(tp("t", 1)).off == offset(2));
  CHECK(env.coord->fetch_offsets("other").at(tp("t", 1)).off == offset(7));
  auto d = env.coord->describe_group("g");
  REQUIRE(d);
  CHECK(d->state == group_state::empty);  // the members belonged to the previous process
  CHECK(d->generation == generation_id(1));
  auto j = join(*env.coord, join_req("g"));
  REQUIRE(j.ready());
  CHECK(j.get()->generation == generation_id(2));
}

TEST_CASE("lag is the high watermark minus the committed offset", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  env.produce("t", 0, 10);
  env.produce("t", 1, 4);
  REQUIRE(env.coord->commit_offsets(commit_req("g", -1, "", {{tp("t", 0), om(6)}})));
  auto lag = env.coord->lag("g");
  REQUIRE(lag);
  REQUIRE(lag->size() == 1);
  CHECK((*lag)[0].committed == offset(6));
  CHECK((*lag)[0].log_end == offset(10));
  CHECK((*lag)[0].lag == 4);
  CHECK(env.coord->lag("nope").error() == errc::group_id_not_found);
}

TEST_CASE("admin: offsets reset only without members, delete_group", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 1);
  const std::string a = stable_single(env, "g");
  auto refused = env.coord->alter_offsets("g", {{tp("t", 0), om(0)}});
  REQUIRE_FALSE(refused);
  CHECK(refused.error() == errc::non_empty_group);
  CHECK(env.coord->delete_group("g").error() == errc::non_empty_group);
  REQUIRE(env.coord->leave_group("g", a));
  REQUIRE(env.coord->alter_offsets("g", {{tp("t", 0), om(0)}}));
  CHECK(env.coord->fetch_offsets("g").at(tp("t", 0)).off == offset(0));
  REQUIRE(env.coord->delete_group("g"));
  CHECK(env.coord->delete_group("g").error() == errc::group_id_not_found);
  env.reopen();
  CHECK(env.coord->fetch_offsets("g").empty());
  CHECK(env.coord->list_groups().empty());
}

TEST_CASE("offsets.retention.minutes expires the offsets of an empty group", "[group][coordinator]") {
  auto cfg = group_env::default_coordinator_config();
  cfg.offsets_retention = std::chrono::minutes(10);
  cfg.offsets_retention_check_interval = 60000ms;
  group_env env(cfg);
  env.create_topic("t", 1);
  const std::string a = stable_single(env, "g");
  REQUIRE(env.coord->commit_offsets(commit_req("g", 1, a, {{tp("t", 0), om(4)}})));
  // Stable groups keep their offsets however old.
  for (int i = 0; i < 40; ++i) {
    env.clk->advance(30000);
    REQUIRE(env.coord->heartbeat("g", generation_id(1), a));
    REQUIRE(env.coord->tick());
  }
  CHECK(env.coord->fetch_offsets("g").size() == 1);
  REQUIRE(env.coord->leave_group("g", a));
  env.clk->advance(9 * 60000);
  REQUIRE(env.coord->tick());
  CHECK(env.coord->fetch_offsets("g").size() == 1);
  env.clk->advance(2 * 60000);
  REQUIRE(env.coord->tick());
  CHECK(env.coord->fetch_offsets("g").empty());
  CHECK(env.coord->list_groups().empty());
  env.reopen();
  CHECK(env.coord->fetch_offsets("g").empty());
}

TEST_CASE("a subscribed topic gaining partitions triggers a rebalance", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 2);
  auto live = std::make_shared<member_liveness>();
  live->last_poll_ms = env.clk->now_ms();
  auto r = join_req("g");
  r.liveness = live;
  auto j = join(*env.coord, r);
  REQUIRE(j.ready());
  REQUIRE(sync(*env.coord, "g", 1, j.get()->member_id, {}).ready());
  env.create_topic("unrelated", 1);
  REQUIRE(env.coord->tick());
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  REQUIRE(env.dd->create_partitions("t", 4));
  REQUIRE(env.coord->tick());
  CHECK(state_of(*env.coord, "g") == group_state::preparing_rebalance);
  CHECK(live->rejoin_needed.load());
}

// Issue 11 #12: one garbage record in __consumer_offsets made every later open fail with
// CORRUPT_MESSAGE, so every group of the directory was dead. Clients can no longer write it
// (producer_test), and a damaged record that gets there anyway is skipped and reported.
TEST_CASE("a record of __consumer_offsets that does not decode is skipped and reported", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 1);
  REQUIRE(env.coord->commit_offsets(commit_req("before", -1, "", {{tp("t", 0), om(5)}})));
  const std::int32_t p = offsets_topic_partition_for("before", env.coord->config().offsets_topic_num_partitions);
  auto part = env.dd->get_partition(std::string(offsets_topic_name), partition_id(p));
  REQUIRE_OK(part);
  record_batch_builder b;
  const std::string key("\x00\x01garbage", 9);  // an offset-commit key whose group is cut short
  b.append(1, nullable_bytes(std::string_view(key.data(), key.size())), nullable_bytes(std::string_view("v")));
  REQUIRE_OK((*part)->append(b.finish()));
  REQUIRE(env.coord->commit_offsets(commit_req("after", -1, "", {{tp("t", 0), om(9)}})));
  env.reopen();
  REQUIRE(env.coord->skipped_records().size() == 1);
  CHECK(env.coord->skipped_records()[0] == errc::corrupt_message);
  CHECK_THAT(env.coord->skipped_records()[0].message(), Catch::Contains("__consumer_offsets-"));
  CHECK(env.coord->fetch_offsets("before").at(tp("t", 0)).off == offset(5));
  CHECK(env.coord->fetch_offsets("after").at(tp("t", 0)).off == offset(9));
}

TEST_CASE("KIP-394: a new member is given an id and joins again with it", "[group][coordinator][kip394]") {
  group_env env;
  env.create_topic("t", 2);
  const std::string a = stable_single(env, "g");
  auto r = join_req("g");
  r.require_known_member_id = true;
  reply<join_group_response> first;
  const std::string pending = env.coord->join_group(r, first.callback());
  REQUIRE(first.ready());
  REQUIRE_FALSE(first.get());
  CHECK(first.get().error() == errc::member_id_required);
  REQUIRE_FALSE(pending.empty());
  // A pending id is no member yet: the group stays Stable and does not describe it.
  CHECK(state_of(*env.coord, "g") == group_state::stable);
  CHECK(env.coord->describe_group("g")->members.size() == 1);
  CHECK(env.coord->heartbeat("g", generation_id(1), pending).error() == errc::unknown_member_id);
  // Joining with the id makes it a member and starts a rebalance that a's rejoin completes.
  auto again = join(*env.coord, join_req("g", pending));
  CHECK_FALSE(again.ready());
  auto ja = join(*env.coord, join_req("g", a));
  REQUIRE(again.ready());
  REQUIRE(again.get());
  CHECK(again.get()->member_id == pending);
  CHECK(again.get()->generation == generation_id(2));
  REQUIRE(ja.ready());
  CHECK(ja.get()->members.size() == 2);
}

TEST_CASE("KIP-394: the join phase waits for a pending id until its session passes", "[group][coordinator][kip394]") {
  group_env env;
  env.create_topic("t", 1);
  const std::string a = stable_single(env, "g");
  auto b = join_req("g");
  b.require_known_member_id = true;
  b.session_timeout = 10s;
  reply<join_group_response> first;
  const std::string pending = env.coord->join_group(b, first.callback());
  REQUIRE(first.ready());
  // A third member joins (without KIP-394); a rejoins; the pending id holds the phase open.
  auto jc = join(*env.coord, join_req("g"));
  auto ja = join(*env.coord, join_req("g", a));
  CHECK_FALSE(ja.ready());
  CHECK_FALSE(jc.ready());
  env.clk->advance(9999);
  REQUIRE_OK(env.coord->tick());
  CHECK_FALSE(ja.ready());
  env.clk->advance(1);
  REQUIRE_OK(env.coord->tick());
  REQUIRE(ja.ready());
  REQUIRE(ja.get());
  CHECK(ja.get()->members.size() == 2);
  // The expired id is forgotten: joining with it now is an unknown member.
  auto late = join(*env.coord, join_req("g", pending));
  REQUIRE(late.ready());
  CHECK(late.get().error() == errc::unknown_member_id);
}

TEST_CASE("KIP-394: a pending id may leave and no longer holds the join phase", "[group][coordinator][kip394]") {
  group_env env;
  env.create_topic("t", 1);
  const std::string a = stable_single(env, "g");
  auto b = join_req("g");
  b.require_known_member_id = true;
  reply<join_group_response> first;
  const std::string pending = env.coord->join_group(b, first.callback());
  auto jc = join(*env.coord, join_req("g"));
  auto ja = join(*env.coord, join_req("g", a));
  CHECK_FALSE(ja.ready());
  REQUIRE_OK(env.coord->leave_group("g", pending));
  REQUIRE(ja.ready());
  REQUIRE(jc.ready());
  CHECK(ja.get()->members.size() == 2);
  CHECK(env.coord->leave_group("g", pending).error() == errc::unknown_member_id);
}

TEST_CASE("KIP-394: static members and old joins are added at once", "[group][coordinator][kip394]") {
  group_env env;
  env.create_topic("t", 1);
  auto r = join_req("g");
  r.require_known_member_id = true;
  r.group_instance_id = "i";
  auto j = join(*env.coord, r);
  REQUIRE(j.ready());
  REQUIRE(j.get());
  CHECK(j.get()->generation == generation_id(1));
}

TEST_CASE("sync: a protocol type or name that is not the group's is inconsistent", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 1);
  auto j = join(*env.coord, join_req("g"));
  REQUIRE(j.ready());
  const std::string m = j.get()->member_id;
  auto sync_with = [&](std::optional<std::string> type, std::optional<std::string> name) {
    reply<std::vector<std::byte>> out;
    sync_group_request r;
    r.group_id = "g";
    r.generation = generation_id(1);
    r.member_id = m;
    r.protocol_type = std::move(type);
    r.protocol_name = std::move(name);
    env.coord->sync_group(std::move(r), out.callback());
    return out;
  };
  auto bad_type = sync_with("connect", "range");
  REQUIRE(bad_type.ready());
  CHECK(bad_type.get().error() == errc::inconsistent_group_protocol);
  auto bad_name = sync_with("consumer", "roundrobin");
  REQUIRE(bad_name.ready());
  CHECK(bad_name.get().error() == errc::inconsistent_group_protocol);
  auto good = sync_with("consumer", "range");
  REQUIRE(good.ready());
  CHECK_OK(good.get());
  CHECK(state_of(*env.coord, "g") == group_state::stable);
}

TEST_CASE("a commit may carry its own commit timestamp", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 1);
  offset_commit_request r;
  r.group_id = "g";
  r.offsets[tp("t", 0)] = offset_and_metadata{offset(4), -1, "m", 1234};
  REQUIRE_OK(env.coord->commit_offsets(r));
  CHECK(env.coord->fetch_offsets("g").at(tp("t", 0)).commit_timestamp == 1234);
  r.offsets[tp("t", 0)].commit_timestamp = -1;
  REQUIRE_OK(env.coord->commit_offsets(r));
  CHECK(env.coord->fetch_offsets("g").at(tp("t", 0)).commit_timestamp == env.clk->now_ms());
}

TEST_CASE("a group.instance.id the group does not know is an unknown member", "[group][coordinator]") {
  group_env env;
  env.create_topic("t", 1);
  const std::string a = stable_single(env, "g");
  CHECK(env.coord->heartbeat("g", generation_id(1), a, std::string("nobody")).error() == errc::unknown_member_id);
  CHECK(env.coord
            ->commit_offsets([&] {
              auto r = commit_req("g", 1, a, {{tp("t", 0), om(1)}});
              r.group_instance_id = "nobody";
              return r;
            }())
            .error() == errc::unknown_member_id);
  CHECK_OK(env.coord->heartbeat("g", generation_id(1), a));
}

// One group's state machine, driven directly (no coordinator): the join and sync phases,
// generations, fencing and expiry. The coordinator's routing is group_coordinator_test.cpp.
#include <catch2/catch.hpp>

#include <brook/group/classic_group.hpp>

#include "group_support.hpp"
#include "support/checks.hpp"

using namespace brook;
using namespace std::chrono_literals;
using brook::test::reply;

namespace {

struct fixture {
  brook::test::group_env env;
  std::unique_ptr<offset_store> store = [&] {
    auto s = offset_store::open(*env.dd, 1);
    REQUIRE_OK(s);
    return std::move(*s);
  }();
  member_id_source ids;
  data_dir_source source{*env.dd};
  group_services services{env.ccfg, *env.clk, source, *store, ids};
  classic_group g{"g", services};

  join_group_request req(const std::string& member = "", std::optional<std::string> instance = std::nullopt,
                         std::string protocol = "range") {
    join_group_request r;
    r.group_id = "g";
    r.member_id = member;
    r.group_instance_id = std::move(instance);
    r.session_timeout = 10s;
    r.rebalance_timeout = 20s;
    r.protocols.push_back({std::move(protocol), {}});
    return r;
  }
  reply<join_group_response> join(join_group_request r, std::string* id = nullptr) {
    reply<join_group_response> out;
    group_completions c;
    auto got = g.join(std::move(r), out.callback(), c);
    if (id) *id = got;
    c.run();
    return out;
  }
  reply<std::vector<std::byte>> sync(const std::string& member, generation_id gen,
                                     std::map<std::string, std::vector<std::byte>> assignments = {}) {
    reply<std::vector<std::byte>> out;
    group_completions c;
    sync_group_request r;
    r.group_id = "g";
    r.member_id = member;
    r.generation = gen;
    r.assignments = std::move(assignments);
    g.sync(std::move(r), out.callback(), c);
    c.run();
    return out;
  }
  /// Members `a` (the leader) and `b`, joined and synced: Stable at generation 2.
  void two_stable_members(std::string& a, std::string& b) {
    join(req(), &a);
    sync(a, generation_id(1));
    join(req(), &b);
    join(req(a));
    sync(a, generation_id(2));
    sync(b, generation_id(2));
    REQUIRE(g.state() == group_state::stable);
  }
  void tick() {
    group_completions c;
    g.tick(env.clk->now_ms(), false, c);
    c.run();
  }
};

std::vector<std::byte> bytes(const std::string& s) {
  std::vector<std::byte> out;
  for (char ch : s) out.push_back(std::byte(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

TEST_CASE("classic_group: one member joins, syncs and is Stable at generation 1", "[group][classic_group]") {
  fixture f;
  CHECK(f.g.state() == group_state::empty);
  std::string a;
  auto j = f.join(f.req(), &a);
  REQUIRE(j.ready());
  REQUIRE_OK(j.get());
  CHECK(j.get()->generation == generation_id(1));
  CHECK(j.get()->leader == a);
  CHECK(j.get()->members.size() == 1);
  CHECK(f.g.state() == group_state::completing_rebalance);
  auto s = f.sync(a, generation_id(1), {{a, bytes("mine")}});
  REQUIRE(s.ready());
  REQUIRE_OK(s.get());
  CHECK(*s.get() == bytes("mine"));
  CHECK(f.g.state() == group_state::stable);
  CHECK_OK(f.g.heartbeat(generation_id(1), a, std::nullopt));
  CHECK(f.g.heartbeat(generation_id(0), a, std::nullopt).error() == errc::illegal_generation);
  CHECK(f.g.heartbeat(generation_id(1), "x", std::nullopt).error() == errc::unknown_member_id);
}

TEST_CASE("classic_group: a second member starts generation 2, the first must rejoin", "[group][classic_group]") {
  fixture f;
  std::string a, b;
  f.join(f.req(), &a);
  f.sync(a, generation_id(1), {{a, bytes("all")}});
  auto jb = f.join(f.req(), &b);
  CHECK_FALSE(jb.ready());  // waits for a
  CHECK(f.g.state() == group_state::preparing_rebalance);
  CHECK(f.g.heartbeat(generation_id(1), a, std::nullopt).error() == errc::rebalance_in_progress);
  auto ja = f.join(f.req(a));
  REQUIRE(ja.ready());
  REQUIRE(jb.ready());
  CHECK(ja.get()->generation == generation_id(2));
  CHECK(jb.get()->generation == generation_id(2));
  CHECK(ja.get()->leader == a);  // the leader rejoined and keeps its role
  CHECK(jb.get()->members.empty());
  auto sb = f.sync(b, generation_id(2));
  CHECK_FALSE(sb.ready());  // waits for the leader's assignment
  auto sa = f.sync(a, generation_id(2), {{a, bytes("p0")}, {b, bytes("p1")}});
  REQUIRE(sb.ready());
  CHECK(*sb.get() == bytes("p1"));
  CHECK(*sa.get() == bytes("p0"));
  CHECK(f.g.describe().members.size() == 2);
}

TEST_CASE("classic_group: a member that misses its session is removed, the group rebalances",
          "[group][classic_group]") {
  fixture f;
  std::string a, b;
  f.two_stable_members(a, b);
  f.env.clk->advance(5000);
  REQUIRE_OK(f.g.heartbeat(generation_id(2), a, std::nullopt));
  f.env.clk->advance(5000);  // b: 10 s without a heartbeat
  f.tick();
  CHECK(f.g.member_count() == 1);
  CHECK(f.g.state() == group_state::preparing_rebalance);
  CHECK(f.g.heartbeat(generation_id(2), b, std::nullopt).error() == errc::unknown_member_id);
  auto ja = f.join(f.req(a));
  REQUIRE(ja.ready());
  CHECK(ja.get()->generation == generation_id(3));
}

TEST_CASE("classic_group: a stale generation is ILLEGAL_GENERATION even while rebalancing and keeps no session",
          "[group][classic_group]") {
  fixture f;  // Kafka's classicGroupHeartbeat checks the generation before the group's state
  std::string a, b;
  f.two_stable_members(a, b);
  std::string c;
  f.join(f.req(), &c);  // a third member: the group prepares generation 3, a and b must rejoin
  REQUIRE(f.g.state() == group_state::preparing_rebalance);
  CHECK(f.g.heartbeat(generation_id(2), a, std::nullopt).error() == errc::rebalance_in_progress);
  for (int i = 0; i < 3; ++i) {  // b heartbeats with generation 1 only: that keeps it alive no longer
    f.env.clk->advance(4000);
    CHECK(f.g.heartbeat(generation_id(1), b, std::nullopt).error() == errc::illegal_generation);
    REQUIRE(f.g.heartbeat(generation_id(2), a, std::nullopt).error() == errc::rebalance_in_progress);
  }
  f.tick();  // 12 s since b's last valid heartbeat: its 10 s session is over
  CHECK(f.g.heartbeat(generation_id(2), b, std::nullopt).error() == errc::unknown_member_id);
  CHECK(f.g.heartbeat(generation_id(2), a, std::nullopt).error() == errc::rebalance_in_progress);
}

TEST_CASE("classic_group: the last member leaving empties the group, the generation still grows",
          "[group][classic_group]") {
  fixture f;
  std::string a;
  f.join(f.req(), &a);
  f.sync(a, generation_id(1));
  group_completions c;
  REQUIRE_OK(f.g.leave(a, std::nullopt, c));
  c.run();
  CHECK(f.g.state() == group_state::empty);
  CHECK(f.g.generation() == generation_id(2));
  CHECK(f.g.member_count() == 0);
}

TEST_CASE("classic_group: static members", "[group][classic_group]") {
  fixture f;
  std::string a;
  f.join(f.req("", std::string("host-1")), &a);
  f.sync(a, generation_id(1), {{a, bytes("p0")}});
  REQUIRE(f.g.state() == group_state::stable);

  SECTION("coming back with a new member id fences the old one without a rebalance") {
    std::string a2;
    auto j = f.join(f.req("", std::string("host-1")), &a2);
    REQUIRE(j.ready());
    CHECK(a2 != a);
    CHECK(j.get()->generation == generation_id(1));
    CHECK(f.g.state() == group_state::stable);
    CHECK(*f.sync(a2, generation_id(1)).get() == bytes("p0"));
    CHECK(f.g.heartbeat(generation_id(1), a, std::string("host-1")).error() == errc::fenced_instance_id);
  }
  SECTION("a rejoin with another group.instance.id is refused") {
    auto j = f.join(f.req(a, std::string("host-2")));
    REQUIRE(j.ready());
    CHECK(j.get().error() == errc::fenced_instance_id);
    auto k = f.join(f.req(a));  // none at all
    CHECK(k.get().error() == errc::fenced_instance_id);
    CHECK(f.g.state() == group_state::stable);
  }
}

TEST_CASE("classic_group: commits are fenced by member and generation", "[group][classic_group]") {
  fixture f;
  std::string a, b;
  f.join(f.req(), &a);
  CHECK(f.g.check_commit(generation_id(1), a, std::nullopt).error() == errc::rebalance_in_progress);
  f.sync(a, generation_id(1));
  CHECK_OK(f.g.check_commit(generation_id(1), a, std::nullopt));
  CHECK(f.g.check_commit(generation_id(0), a, std::nullopt).error() == errc::illegal_generation);
  CHECK(f.g.check_commit(generation_id(1), "stranger", std::nullopt).error() == errc::unknown_member_id);
}

TEST_CASE("classic_group: the metadata record round-trips the generation, a restored group is Empty",
          "[group][classic_group]") {
  fixture f;
  std::string a;
  f.join(f.req(), &a);
  f.sync(a, generation_id(1));
  const auto md = f.g.metadata();
  CHECK(md.generation == 1);
  REQUIRE(md.members.size() == 1);
  CHECK(md.members[0].member_id == a);
  classic_group again("g", f.services);
  CHECK(again.restore(md));  // it named members
  CHECK(again.generation() == generation_id(1));
  CHECK(again.state() == group_state::empty);
  CHECK(again.protocol_type() == "consumer");
}

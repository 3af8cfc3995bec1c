#include <catch2/catch.hpp>

#include <brook/group/group_consumer.hpp>
#include <brook/group/round_robin_assignor.hpp>

#include "group_support.hpp"

using namespace brook;
using namespace std::chrono_literals;
using brook::test::group_env;
using brook::test::tp;

namespace {

offset_and_metadata om(std::int64_t o) { return offset_and_metadata{offset(o), -1, {}}; }

struct recording_listener : rebalance_listener {
  std::vector<std::string> events;
  group_consumer* consumer = nullptr;
  std::map<topic_partition, offset> seek_on_assign;
  static std::string names(const std::vector<topic_partition>& tps) {
    std::string s;
    for (const auto& t : tps) s += fmt::format("{}{}-{}", s.empty() ? "" : ",", t.topic, t.partition);
    return s;
  }
  void on_partitions_revoked(const std::vector<topic_partition>& tps) override {
    events.push_back("revoked:" + names(tps));
  }
  void on_partitions_assigned(const std::vector<topic_partition>& tps) override {
    events.push_back("assigned:" + names(tps));
    for (const auto& t : tps)
      if (auto it = seek_on_assign.find(t); it != seek_on_assign.end()) REQUIRE(consumer->seek(t, it->second));
  }
  void on_partitions_lost(const std::vector<topic_partition>& tps) override { events.push_back("lost:" + names(tps)); }
};

std::vector<std::string> values(const consumer_records& recs) {
  std::vector<std::string> out;
  for (const auto& r : recs) out.push_back(r.value().to_string());
  return out;
}

std::size_t poll_count(group_consumer& c, std::chrono::milliseconds t = 0ms) {
  auto r = c.poll(t);
  REQUIRE(r);
  return r->size();
}

/// Polls every consumer in turn until none has a rebalance pending (simulated rounds).
void settle(std::vector<group_consumer*> cs, int rounds = 6) {
  for (int i = 0; i < rounds; ++i)
    for (auto* c : cs) REQUIRE(c->poll(0ms));
}

}  // namespace

TEST_CASE("a lone member gets every partition and resumes from its commits after a restart", "[group][consumer]") {
  group_env env;
  env.create_topic("t", 2);
  env.produce("t", 0, 5);
  env.produce("t", 1, 3);
  {
    group_consumer c(*env.dd, *env.coord, env.consumer_config("g"));
    REQUIRE(c.subscribe({"t"}));
    auto recs = c.poll(0ms);
    REQUIRE(recs);
    CHECK(recs->size() == 8);
    CHECK(c.assignment() == std::vector<topic_partition>{tp("t", 0), tp("t", 1)});
    CHECK(c.group_metadata().generation == generation_id(1));
    CHECK(env.coord->fetch_offsets("g").empty());  // auto-commit happens at the next poll boundary
    env.clk->advance(5000);
    CHECK(poll_count(c) == 0);
    auto offs = env.coord->fetch_offsets("g");
    CHECK(offs.at(tp("t", 0)).off == offset(5));
    CHECK(offs.at(tp("t", 1)).off == offset(3));
    env.produce("t", 0, 2, "w");
    CHECK(poll_count(c) == 2);
    REQUIRE(c.close());  // commits what was returned
  }
  CHECK(env.coord->fetch_offsets("g").at(tp("t", 0)).off == offset(7));
  env.produce("t", 1, 1, "x");
  env.reopen();
  group_consumer c(*env.dd, *env.coord, env.consumer_config("g"));
  REQUIRE(c.subscribe({"t"}));
  auto recs = c.poll(0ms);
  REQUIRE(recs);
  CHECK(values(*recs) == std::vector<std::string>{"x0"});
}

TEST_CASE("auto.offset.reset applies only where the group has no committed offset", "[group][consumer]") {
  group_env env;
  env.create_topic("t", 2);
  env.produce("t", 0, 4);
  env.produce("t", 1, 4);
  REQUIRE(env.coord->alter_offsets("g", {{tp("t", 0), om(3)}}));
  auto cfg = env.consumer_config("g");
  cfg.consumer.auto_offset_reset = offset_reset::latest;
  group_consumer c(*env.dd, *env.coord, cfg);
  REQUIRE(c.subscribe({"t"}));
  auto recs = c.poll(0ms);
  REQUIRE(recs);
  CHECK(values(*recs) == std::vector<std::string>{"v3"});  // t-0 from its commit, t-1 from the end
  CHECK(*c.position(tp("t", 1)) == offset(4));
}

TEST_CASE("members share partitions, joins and leaves rebalance with listener callbacks", "[group][consumer]") {
  group_env env;
  env.create_topic("t", 4);
  recording_listener la, lb;
  group_consumer a(*env.dd, *env.coord, env.consumer_config("g"));
  group_consumer b(*env.dd, *env.coord, env.consumer_config("g"));
  la.consumer = &a;
  lb.consumer = &b;
  REQUIRE(a.subscribe({"t"}, &la));
  REQUIRE(b.subscribe({"t"}, &lb));
  settle({&a, &b});
  CHECK(a.assignment().size() + b.assignment().size() == 4);
  CHECK(a.assignment().size() == 2);
  CHECK(a.group_metadata().generation == b.group_metadata().generation);
  CHECK(a.group_metadata().generation == generation_id(2));
  CHECK(la.events ==
        std::vector<std::string>{"assigned:t-0,t-1,t-2,t-3", "revoked:t-0,t-1,t-2,t-3", "assigned:t-0,t-1"});
  CHECK(lb.events == std::vector<std::string>{"assigned:t-2,t-3"});
  REQUIRE(b.close());
  CHECK(lb.events.back() == "revoked:t-2,t-3");
  settle({&a});
  CHECK(a.assignment().size() == 4);
  CHECK(a.group_metadata().generation == generation_id(3));
}

TEST_CASE("C1 exceeds its poll interval, its partitions move to C2, C1's commit is refused and C2's progress stands",
          "[group][consumer][rebalance-problem]") {
  group_env env;
  env.create_topic("t", 2);
  auto cfg = env.consumer_config("g");
  cfg.enable_auto_commit = false;
  cfg.consumer.max_poll_records = 3;
  recording_listener l1;
  group_consumer c1(*env.dd, *env.coord, cfg);
  group_consumer c2(*env.dd, *env.coord, cfg);
  l1.consumer = &c1;
  REQUIRE(c1.subscribe({"t"}, &l1));
  REQUIRE(c2.subscribe({"t"}));
  settle({&c1, &c2});
  REQUIRE(c1.assignment().size() == 1);
  REQUIRE(c2.assignment().size() == 1);
  const topic_partition mine = c1.assignment()[0];
  env.produce("t", 0, 10);
  env.produce("t", 1, 10);
  // C1 takes records, then gets stuck processing them for longer than max.poll.interval.ms.
  auto got = c1.poll(0ms);
  REQUIRE(got);
  REQUIRE(got->size() == 3);
  std::size_t n = 0;
  auto c2_poll = [&] {  // C2 processes, then commits (at-least-once)
    n += poll_count(c2);
    auto r = c2.commit_sync();
    CHECK((r || r.error() == errc::rebalance_in_progress));
  };
  for (int i = 0; i < 11; ++i) {  // 330 s; C2 keeps polling
    env.clk->advance(30000);
    c2_poll();
    REQUIRE(env.coord->tick());
  }
  // C1 was removed; C2 rebalanced and owns both partitions, consumes t-0 from the start
  // (nothing committed) and commits.
  for (int i = 0; i < 10; ++i) c2_poll();
  REQUIRE(c2.assignment() == std::vector<topic_partition>{tp("t", 0), tp("t", 1)});
  REQUIRE(c2.commit_sync());
  REQUIRE(n == 20);
  const auto progress = env.coord->fetch_offsets("g");
  REQUIRE(progress.at(mine).off == offset(10));
  // C1 finishes its batch and commits: refused, nothing overwritten.
  auto late = c1.commit_sync();
  REQUIRE_FALSE(late);
  CHECK((late.error() == errc::unknown_member_id || late.error() == errc::illegal_generation));
  CHECK(env.coord->fetch_offsets("g").at(mine).off == offset(10));
  // On its next poll C1 learns it lost its partitions and rejoins.
  REQUIRE(c1.poll(0ms));
  CHECK(std::find(l1.events.begin(), l1.events.end(), "lost:" + recording_listener::names({mine})) != l1.events.end());
  settle({&c1, &c2});
  CHECK(c1.assignment().size() + c2.assignment().size() == 2);
  CHECK(env.coord->fetch_offsets("g").at(mine).off == offset(10));
}

TEST_CASE("cooperative-sticky revokes only the partitions that move", "[group][consumer]") {
  group_env env;
  env.create_topic("t", 4);
  auto cfg = env.consumer_config("g");
  cfg.assignors = {std::make_shared<cooperative_sticky_assignor>()};
  recording_listener la, lb;
  group_consumer a(*env.dd, *env.coord, cfg);
  la.consumer = &a;
  REQUIRE(a.subscribe({"t"}, &la));
  settle({&a});
  REQUIRE(a.assignment().size() == 4);
  group_consumer b(*env.dd, *env.coord, cfg);
  lb.consumer = &b;
  REQUIRE(b.subscribe({"t"}, &lb));
  settle({&a, &b}, 8);
  CHECK(a.assignment().size() == 2);
  CHECK(b.assignment().size() == 2);
  // a never revoked the two partitions it kept.
  for (const auto& e : la.events)
    if (e.rfind("revoked:", 0) == 0) CHECK(std::count(e.begin(), e.end(), ',') == 1);
  CHECK(la.events.front() == "assigned:t-0,t-1,t-2,t-3");
}

TEST_CASE("a subscription change rebalances, partitions of a topic that grows reach members unasked",
          "[group][consumer]") {
  group_env env;
  env.create_topic("t", 2);
  env.create_topic("u", 1);
  group_consumer a(*env.dd, *env.coord, env.consumer_config("g"));
  REQUIRE(a.subscribe({"t"}));
  settle({&a});
  REQUIRE(a.assignment().size() == 2);
  REQUIRE(a.subscribe({"t", "u"}));
  settle({&a});
  CHECK(a.assignment().size() == 3);
  REQUIRE(env.dd->create_partitions("t", 3));
  REQUIRE(env.coord->tick());
  settle({&a});
  CHECK(a.assignment().size() == 4);
  env.produce("t", 2, 2);
  CHECK(poll_count(a) == 2);
}

TEST_CASE("a static member restarting within the session keeps its partitions without a rebalance",
          "[group][consumer]") {
  group_env env;
  env.create_topic("t", 2);
  auto cfg = env.consumer_config("g");
  auto a_cfg = cfg;
  a_cfg.group_instance_id = "a";
  auto b_cfg = cfg;
  b_cfg.group_instance_id = "b";
  group_consumer b(*env.dd, *env.coord, b_cfg);
  REQUIRE(b.subscribe({"t"}));
  std::vector<topic_partition> before;
  generation_id gen{0};
  {
    group_consumer a(*env.dd, *env.coord, a_cfg);
    REQUIRE(a.subscribe({"t"}));
    settle({&a, &b});
    before = a.assignment();
    gen = a.group_metadata().generation;
    REQUIRE(before.size() == 1);
  }  // closed: a static member does not leave
  env.clk->advance(10000);
  REQUIRE(env.coord->tick());
  CHECK(env.coord->describe_group("g")->state == group_state::stable);
  group_consumer a2(*env.dd, *env.coord, a_cfg);
  REQUIRE(a2.subscribe({"t"}));
  settle({&a2, &b});
  CHECK(a2.assignment() == before);
  CHECK(a2.group_metadata().generation == gen);
  CHECK(b.group_metadata().generation == gen);
}

TEST_CASE("a member that dies is replaced after its session, the survivor resumes from the commits",
          "[group][consumer]") {
  group_env env;
  env.create_topic("t", 2);
  env.produce("t", 0, 6);
  env.produce("t", 1, 6);
  auto cfg = env.consumer_config("g");
  cfg.enable_auto_commit = false;
  group_consumer a(*env.dd, *env.coord, cfg);
  group_consumer b(*env.dd, *env.coord, cfg);
  REQUIRE(a.subscribe({"t"}));
  REQUIRE(b.subscribe({"t"}));
  settle({&a, &b});
  auto ra = a.poll(0ms);
  REQUIRE(ra);
  REQUIRE(a.commit_sync(std::map<topic_partition, offset_and_metadata>{{a.assignment().at(0), om(4)}}));
  const topic_partition lost = a.assignment().at(0);
  REQUIRE(a.close({.leave_group = false, .commit_and_revoke = false}));  // as a crashed process
  std::vector<std::string> seen;
  auto take = [&] {
    auto r = b.poll(0ms);
    REQUIRE(r);
    for (const auto& rec : *r)
      if (rec.partition() == lost.partition) seen.push_back(rec.value().to_string());
  };
  for (int i = 0; i < 14; ++i) {
    env.clk->advance(3000);
    take();
    REQUIRE(env.coord->tick());
  }
  CHECK(b.assignment().size() == 1);  // a's session (45 s) has not expired yet
  for (int i = 0; i < 4; ++i) {
    env.clk->advance(3000);
    take();
    REQUIRE(env.coord->tick());
  }
  REQUIRE(b.assignment().size() == 2);
  CHECK(seen == std::vector<std::string>{"v4", "v5"});
}

TEST_CASE("misuse gets clear errors", "[group][consumer]") {
  group_env env;
  auto cfg = env.consumer_config("");
  group_consumer c(*env.dd, *env.coord, cfg);
  CHECK(c.subscribe({"t"}).error() == errc::invalid_group_id);
  group_consumer d(*env.dd, *env.coord, env.consumer_config("g"));
  CHECK(d.poll(0ms).error() == errc::invalid_argument);
  CHECK(d.subscribe({"bad/name"}).error() == errc::invalid_topic);
  REQUIRE(d.subscribe({"missing"}));
  auto r = d.poll(0ms);  // subscribed topic does not exist yet: member of the group, nothing assigned
  REQUIRE(r);
  CHECK(d.assignment().empty());
  REQUIRE(d.close());
  CHECK(d.poll(0ms).error() == errc::closed);
}

TEST_CASE("closing while the join is pending leaves at once: the others do not wait for a timeout",
          "[group][consumer]") {
  group_env env;
  env.create_topic("t", 2);
  group_consumer a(*env.dd, *env.coord, env.consumer_config("g"));
  REQUIRE(a.subscribe({"t"}));
  settle({&a});
  {
    group_consumer b(*env.dd, *env.coord, env.consumer_config("g"));
    REQUIRE(b.subscribe({"t"}));
    REQUIRE(b.poll(0ms));  // joins; the group waits for a to rejoin
    CHECK(env.coord->describe_group("g")->state == group_state::preparing_rebalance);
    REQUIRE(b.close());
  }
  settle({&a});
  auto d = env.coord->describe_group("g");
  CHECK(d->state == group_state::stable);
  CHECK(d->members.size() == 1);
  CHECK(a.assignment().size() == 2);
}

TEST_CASE("wakeup() fails one poll, without losing records", "[group][consumer]") {
  group_env env;
  env.create_topic("t", 1);
  group_consumer c(*env.dd, *env.coord, env.consumer_config("g"));
  REQUIRE(c.subscribe({"t"}));
  settle({&c});
  c.wakeup();
  auto r = c.poll(0ms);
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::wakeup);
  env.produce("t", 0, 3);
  CHECK(poll_count(c) == 3);
  env.produce("t", 0, 2);
  c.wakeup();  // records already available are returned first
  CHECK(poll_count(c) == 2);
  CHECK(c.poll(0ms).error() == errc::wakeup);
  CHECK(poll_count(c) == 0);
}

TEST_CASE("a commit while the member is rejoining is refused locally and causes no extra rebalance",
          "[group][consumer]") {
  group_env env;
  env.create_topic("t", 4);
  group_consumer a(*env.dd, *env.coord, env.consumer_config("g"));
  group_consumer b(*env.dd, *env.coord, env.consumer_config("g"));
  REQUIRE(a.subscribe({"t"}));
  REQUIRE(b.subscribe({"t"}));
  settle({&a, &b});
  const generation_id gen = a.group_metadata().generation;
  group_consumer c(*env.dd, *env.coord, env.consumer_config("g"));
  REQUIRE(c.subscribe({"t"}));
  REQUIRE(c.poll(0ms));  // c waits in its join; a and b must rejoin
  REQUIRE(a.poll(0ms));  // a rejoins and waits for b
  auto refused = a.commit_sync(std::map<topic_partition, offset_and_metadata>{{tp("t", 0), om(0)}});
  REQUIRE_FALSE(refused);
  CHECK(refused.error() == errc::rebalance_in_progress);
  settle({&a, &b, &c});
  CHECK(a.group_metadata().generation == gen + 1);
  CHECK(c.group_metadata().generation == gen + 1);
  CHECK(a.assignment().size() + b.assignment().size() + c.assignment().size() == 4);
}

TEST_CASE("a topic deleted during a rebalance does not leave a member half-assigned", "[group][consumer]") {
  group_env env;
  env.create_topic("t", 2);
  env.create_topic("u", 2);
  auto cfg = env.consumer_config("g");
  cfg.assignors = {std::make_shared<cooperative_sticky_assignor>()};
  group_consumer a(*env.dd, *env.coord, cfg);
  REQUIRE(a.subscribe({"t", "u"}));
  settle({&a});
  REQUIRE(a.assignment().size() == 4);
  REQUIRE(env.dd->delete_topic("u"));
  REQUIRE(env.coord->tick());  // the coordinator sees the metadata change and rebalances
  for (int i = 0; i < 6; ++i) (void)a.poll(0ms);
  CHECK(a.assignment() == std::vector<topic_partition>{tp("t", 0), tp("t", 1)});
  env.produce("t", 1, 2);
  std::size_t n = 0;
  for (int i = 0; i < 3; ++i)
    if (auto r = a.poll(0ms); r) n += r->size();
  CHECK(n == 2);
}

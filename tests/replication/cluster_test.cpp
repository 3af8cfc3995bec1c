// cluster: brokers, controller, fetchers and failures in one process, stepped on a manual clock.
#include <catch2/catch.hpp>
#include <future>
#include <optional>
#include <thread>

#include <brook/client/consumer.hpp>
#include <brook/client/producer.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/replication/cluster.hpp>
#include <brook/testing/crash.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/log_builders.hpp"
#include "support/replication_helpers.hpp"
#include "support/test_codecs.hpp"

using namespace brook;
using brook::test::ids;
using brook::testing::crash_broker;
using brook::testing::crash_mode;
using brook::testing::manual_clock;

namespace {

struct fixture {
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>(1'000'000);
  brook::test::scratch_dir dir{"brook-cluster"};
  brook::testing::broker_disks disks;
  std::unique_ptr<cluster> c;

  explicit fixture(int min_isr = 1, bool unclean = false, ids brokers = {1, 2, 3}) {
    c = open(min_isr, unclean, std::move(brokers));
  }

  std::unique_ptr<cluster> open(int min_isr, bool unclean, ids brokers = {1, 2, 3}) {
    cluster_config cfg;
    cfg.broker_ids = std::move(brokers);
    cfg.broker.dir.defaults.clock = clk;
    cfg.broker.min_insync_replicas = min_isr;
    cfg.controller.unclean_leader_election_enable = unclean;
    cfg.controller.seed = 7;
    cfg.broker_files = disks.hook();
    auto r = cluster::open(dir.path(), cfg);
    REQUIRE(r);
    return std::move(*r);
  }

  /// Replaces the cluster with a fresh one (in its own directory) whose brokers were given
  /// every codec brook's tests use.
  /// `compression`: the brokers' compression.type (nullopt: Kafka's "producer").
  void reopen_with_all_codecs(int min_isr, std::optional<compression_type> compression = {}) {
    c.reset();
    cluster_config cfg;
    cfg.broker.dir.defaults.clock = clk;
    cfg.broker.dir.defaults.codecs = std::make_shared<const compression_codecs>(brook::test::all_codecs());
    cfg.broker.dir.defaults.compression = compression;
    cfg.broker.min_insync_replicas = min_isr;
    cfg.controller.seed = 7;
    cfg.broker_files = disks.hook();
    auto r = cluster::open(dir.path() / "codecs", cfg);
    REQUIRE(r);
    c = std::move(*r);
  }

  void steps(int n, std::int64_t ms = 100) {
    for (int i = 0; i < n; ++i) {
      clk->advance(ms);
      REQUIRE_OK(c->step());
    }
  }

  // Produces n records as one batch; returns the completion (empty until completed).
  std::shared_ptr<std::optional<result<append_result>>> produce(const std::string& t, int p, int n, acks_mode acks,
                                                                const std::string& tag = "v",
                                                                std::int64_t timeout = 30000) {
    auto out = std::make_shared<std::optional<result<append_result>>>();
    auto b = brook::test::make_batch(n, clk->now_ms(), tag);
    c->produce(t, partition_id(p), b, acks, std::chrono::milliseconds(timeout),
               [out](const result<append_result>& r) { *out = r; });
    return out;
  }

  std::vector<std::byte> log_bytes(int id, const std::string& t, int p) { return log_bytes(broker_id(id), t, p); }
  std::vector<std::byte> log_bytes(broker_id id, const std::string& t, int p) {
    auto b = c->broker(id);
    REQUIRE(b);
    auto r = b->replica(t, partition_id(p));
    REQUIRE(r);
    return brook::test::log_bytes(r->part()->log());
  }

  /// Sends each value (key = value) through a brook::producer with acks=all on the
  /// cluster's threads; returns how many were acknowledged. partition -1: the partitioner's.
  int send_all(const std::string& t, const std::vector<std::string>& values, int partition = -1) {
    cluster_target target(*c);
    producer_config pc;
    pc.acks = acks_mode::all;
    producer prod(target, pc);
    std::vector<std::future<result<record_metadata>>> acks;
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::optional<partition_id> p;
      if (partition >= 0)
        p = partition_id(partition);
      else if (partition == -2)
        p = partition_id(static_cast<std::int32_t>(i % 2));
      acks.push_back(prod.send(producer_record{t, p, values[i], values[i], {}, std::nullopt}));
    }
    int acked = 0;
    for (auto& a : acks) acked += a.get() ? 1 : 0;
    return acked;
  }

  const partition_state& state(const std::string& t, int p) {
    img = c->image();
    return *img->partition(t, partition_id(p));
  }
  std::shared_ptr<const cluster_image> img;
};

}  // namespace

TEST_CASE("a topic is placed by Kafka's round robin and every replica becomes leader or follower") {
  fixture f;
  REQUIRE_OK(f.c->create_topic("t", 3, 3));
  for (int p = 0; p < 3; ++p) {
    const auto& s = f.state("t", p);
    CHECK(s.replicas.size() == 3);
    CHECK(s.leader == s.replicas.front());
    CHECK(s.isr.size() == 3);
  }
  CHECK(f.state("t", 0).replicas == ids{1, 2, 3});
  CHECK(f.state("t", 1).replicas == ids{2, 3, 1});
  for (broker_id id : ids{1, 2, 3}) {
    auto r = f.c->broker(id)->replica("t", partition_id{0});
    REQUIRE(r);
    CHECK(r->role() == (id == broker_id{1} ? replica_role::leader : replica_role::follower));
  }
  const uuid id = f.c->image()->topic("t")->id;  // the controller's id is every replica's
  CHECK_FALSE(id.is_zero());
  for (broker_id b : ids{1, 2, 3}) CHECK(f.c->broker(b)->dir().topic_id("t").value() == id);
  auto bad = f.c->create_topic("u", 1, 4);
  REQUIRE(!bad);
  CHECK(bad.error() == errc::invalid_replication_factor);
  auto dup = f.c->create_topic("t", 1, 1);
  REQUIRE(!dup);
  CHECK(dup.error() == errc::topic_already_exists);
}

TEST_CASE("acks=all completes once every ISR member has the batch, replicas end byte-identical") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  auto a1 = f.produce("t", 0, 5, acks_mode::all);
  CHECK(!a1->has_value());  // followers have not fetched yet
  auto l1 = f.produce("t", 0, 3, acks_mode::leader);
  REQUIRE(l1->has_value());  // acks=1: at once
  CHECK((**l1)->base_offset == offset(5));
  f.steps(1);  // followers fetch 0..7; the HW moves on their next fetch
  f.steps(1);
  REQUIRE(a1->has_value());
  REQUIRE(**a1);
  CHECK((**a1)->base_offset == offset(0));
  CHECK((**a1)->last_offset == offset(4));
  CHECK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->high_watermark() == offset(8));
  f.steps(2);
  CHECK(f.log_bytes(1, "t", 0) == f.log_bytes(2, "t", 0));
  CHECK(f.log_bytes(1, "t", 0) == f.log_bytes(3, "t", 0));
  CHECK(f.c->broker(broker_id{3})->replica("t", partition_id{0})->high_watermark() == offset(8));
  // A consumer reading follower 3's directory sees what is committed.
  consumer cons(f.c->broker(broker_id{3})->dir());
  REQUIRE(cons.assign({{"t", partition_id(0)}}));
  REQUIRE(cons.seek({"t", partition_id(0)}, offset(0)));
  auto recs = cons.poll(std::chrono::milliseconds(0));
  REQUIRE(recs);
  CHECK(recs->size() == 8);
}

TEST_CASE("followers copy a compressed batch byte for byte") {
  fixture f(2);
  f.reopen_with_all_codecs(2);
  REQUIRE_OK(f.c->create_topic("z", 1, 3));
  const auto codecs = brook::test::all_codecs();
  record_batch_builder b;
  for (int i = 0; i < 50; ++i) b.append(f.clk->now_ms(), "key", fmt::format(R"({{"n":{}}})", i));
  auto zbatch = b.finish(**codecs.get(compression_type::zstd), 3);
  REQUIRE(zbatch);
  std::vector<std::byte> sent(zbatch->begin(), zbatch->end());
  auto out = std::make_shared<std::optional<result<append_result>>>();
  f.c->produce("z", partition_id(0), sent, acks_mode::all, std::chrono::milliseconds(30000),
               [out](const result<append_result>& r) { *out = r; });
  f.steps(4);
  REQUIRE(out->has_value());
  REQUIRE_OK(**out);
  const auto leader = f.log_bytes(1, "z", 0);
  CHECK(leader == f.log_bytes(2, "z", 0));
  CHECK(leader == f.log_bytes(3, "z", 0));
  // What every replica holds is the producer's zstd payload, as it came.
  REQUIRE(leader.size() == sent.size());
  CHECK(std::equal(leader.begin() + batch_layout::records, leader.end(), sent.begin() + batch_layout::records));
  CHECK(decode_batch_header_unchecked(leader.data()).compression() == compression_type::zstd);
}

TEST_CASE("min.insync.replicas refuses acks=all appends when the ISR is too small, and acks=1 still works") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{2}, crash_mode::process));
  REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{3}, crash_mode::process));
  f.steps(100);  // 10 s: past broker.session.timeout.ms (9 s): both fenced, out of the ISR
  CHECK(f.state("t", 0).isr == ids{1});
  CHECK(f.state("t", 0).leader == broker_id{1});
  auto a = f.produce("t", 0, 1, acks_mode::all);
  REQUIRE(a->has_value());
  REQUIRE(!**a);
  CHECK((**a).error() == errc::not_enough_replicas);
  CHECK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->log_end_offset() == offset(0));  // nothing appended
  auto l = f.produce("t", 0, 1, acks_mode::leader);
  REQUIRE(l->has_value());
  CHECK(**l);
  // The followers come back, catch up and rejoin the ISR; acks=all works again.
  REQUIRE_OK(f.c->restart_broker(broker_id{2}));
  REQUIRE_OK(f.c->restart_broker(broker_id{3}));
  f.steps(5);
  CHECK(f.state("t", 0).isr.size() == 3);
  auto a2 = f.produce("t", 0, 1, acks_mode::all);
  f.steps(3);
  REQUIRE(a2->has_value());
  CHECK(**a2);
}

TEST_CASE("the ISR shrinking while acks=all waits gives not_enough_replicas_after_append") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  f.c->isolate(broker_id{2});
  f.c->isolate(broker_id{3});
  auto a = f.produce("t", 0, 2, acks_mode::all, "v", 60000);
  // replica.lag.time.max.ms = 30 s: the leader drops both from the ISR (the controller
  // fences them even earlier: 9 s without heartbeats). The HW then reaches the batch with
  // an ISR of 1 < min.insync.replicas.
  f.steps(400);
  REQUIRE(a->has_value());
  REQUIRE(!**a);
  CHECK((**a).error() == errc::not_enough_replicas_after_append);
  CHECK(f.state("t", 0).isr == ids{1});
  // The batch is in the leader's log even so (Kafka's semantics: the client should not assume
  // either way).
  CHECK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->log_end_offset() == offset(2));
}

TEST_CASE("acks=all times out after request.timeout.ms when followers cannot fetch") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  f.c->set_fetch_delay(broker_id{2}, std::chrono::milliseconds(1'000'000));
  f.c->set_fetch_delay(broker_id{3}, std::chrono::milliseconds(1'000'000));
  f.steps(1);  // each fetches once now, then not for 1000 s
  auto a = f.produce("t", 0, 1, acks_mode::all, "v", 5000);
  f.steps(49);
  CHECK(!a->has_value());
  f.steps(2);
  REQUIRE(a->has_value());
  REQUIRE(!**a);
  CHECK((**a).error() == errc::request_timed_out);
}

TEST_CASE("a crashed leader is replaced from the ISR and no acknowledged record is lost") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  std::vector<std::shared_ptr<std::optional<result<append_result>>>> acks;
  for (int i = 0; i < 10; ++i) {
    acks.push_back(f.produce("t", 0, 3, acks_mode::all, fmt::format("a{}", i)));
    f.steps(1);
  }
  f.steps(2);
  for (auto& a : acks) REQUIRE((a->has_value() && **a));
  const auto before = f.log_bytes(2, "t", 0);
  REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{1}, crash_mode::flush_point));
  f.steps(100);  // fenced after the session timeout; 2 or 3 leads
  const auto& s = f.state("t", 0);
  CHECK(s.leader != broker_id{1});
  CHECK(s.leader != broker_id{-1});
  CHECK(s.leader_epoch == leader_epoch{1});
  CHECK(std::find(s.isr.begin(), s.isr.end(), broker_id{1}) == s.isr.end());
  CHECK(f.log_bytes(s.leader, "t", 0).size() == before.size());
  // The old leader returns, truncates what it lost (flush_point: everything since its last
  // flush), fetches, and rejoins the ISR.
  REQUIRE_OK(f.c->restart_broker(broker_id{1}));
  auto more = f.produce("t", 0, 2, acks_mode::all, "after");
  f.steps(5);
  REQUIRE((more->has_value() && **more));
  CHECK(f.state("t", 0).isr.size() == 3);
  CHECK(f.log_bytes(1, "t", 0) == f.log_bytes(2, "t", 0));
  CHECK(f.log_bytes(1, "t", 0) == f.log_bytes(3, "t", 0));
}

TEST_CASE("without unclean election a partition whose ISR is gone stays offline, with it, data is lost") {
  for (bool unclean : {false, true}) {
    DYNAMIC_SECTION("unclean.leader.election.enable=" << unclean) {
      fixture f(1, unclean);
      REQUIRE_OK(f.c->create_topic("t", 1, 2));  // replicas 1, 2
      auto a = f.produce("t", 0, 2, acks_mode::all, "early");
      f.steps(2);
      REQUIRE((a->has_value() && **a));
      REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{2}, crash_mode::process));
      f.steps(100);
      CHECK(f.state("t", 0).isr == ids{1});
      auto late = f.produce("t", 0, 3, acks_mode::all, "late");  // min.isr 1: acked by 1 alone
      f.steps(1);
      REQUIRE((late->has_value() && **late));
      REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{1}, crash_mode::process));
      REQUIRE_OK(f.c->restart_broker(broker_id{2}));
      f.steps(100);
      const auto& s = f.state("t", 0);
      if (!unclean) {
        CHECK(s.leader == broker_id{-1});
        CHECK(s.offline());
        CHECK(s.isr == ids{1});  // the last ISR member stays
        auto p = f.produce("t", 0, 1, acks_mode::leader);
        REQUIRE(p->has_value());
        CHECK((**p).error() == errc::leader_not_available);
        // Its ISR member returns: it leads again with everything.
        REQUIRE_OK(f.c->restart_broker(broker_id{1}));
        f.steps(5);
        CHECK(f.state("t", 0).leader == broker_id{1});
        CHECK(f.c->broker(broker_id{2})->replica("t", partition_id{0})->log_end_offset() == offset(5));
      } else {
        CHECK(s.leader == broker_id{2});
        CHECK(s.leader_recovery_state == 1);
        CHECK(f.c->broker(broker_id{2})->replica("t", partition_id{0})->log_end_offset() ==
              offset(2));  // "late" is lost
        auto p = f.produce("t", 0, 1, acks_mode::all, "new");
        f.steps(1);
        REQUIRE((p->has_value() && **p));
        // The old leader returns and truncates the records the new leader never had.
        REQUIRE_OK(f.c->restart_broker(broker_id{1}));
        f.steps(5);
        CHECK(f.log_bytes(1, "t", 0) == f.log_bytes(2, "t", 0));
        CHECK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->log_end_offset() == offset(3));
      }
    }
  }
}

TEST_CASE("preferred leader election moves leadership back to the first replica") {
  fixture f(1);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  REQUIRE_OK(f.c->stop_broker(broker_id{1}));  // controlled: fenced at once, 2 leads
  CHECK(f.state("t", 0).leader == broker_id{2});
  REQUIRE_OK(f.c->restart_broker(broker_id{1}));
  f.steps(5);
  CHECK(f.state("t", 0).isr.size() == 3);
  auto r = f.c->elect_leaders(election_type::preferred);
  REQUIRE(r);
  REQUIRE(r->at({"t", partition_id{0}}));
  CHECK(f.state("t", 0).leader == broker_id{1});
  auto again = f.c->elect_leaders(election_type::preferred);
  REQUIRE(again);
  CHECK(again->at({"t", partition_id{0}}).error() == errc::election_not_needed);
}

TEST_CASE("a restarted broker's high watermark comes from replication-offset-checkpoint") {
  fixture f(1);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  auto a = f.produce("t", 0, 4, acks_mode::all);
  f.steps(60);  // past replica.high.watermark.checkpoint.interval.ms
  REQUIRE((a->has_value() && **a));
  auto ck = brook::read_checkpoint(*posix_file_system::shared(),
                                   f.c->broker(broker_id{3})->replica("t", partition_id{0})->part()->log().dir() /
                                       partition_files::replication_offset_checkpoint,
                                   3);
  REQUIRE(ck);
  REQUIRE(ck->size() == 1);
  CHECK((*ck)[0][2] == "4");
  REQUIRE_OK(f.c->stop_broker(broker_id{3}));
  REQUIRE_OK(f.c->restart_broker(broker_id{3}));
  CHECK(f.c->broker(broker_id{3})->replica("t", partition_id{0})->high_watermark() == offset(4));
}

TEST_CASE("a torn tail from a power loss is truncated on restart and fetched again") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    fixture f(2);
    REQUIRE_OK(f.c->create_topic("t", 1, 3));
    for (int i = 0; i < 6; ++i) {
      f.produce("t", 0, 4, acks_mode::all, fmt::format("s{}-{}", seed, i));
      f.steps(1);
    }
    f.steps(2);
    REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{3}, crash_mode::random_byte, seed));
    REQUIRE_OK(f.c->restart_broker(broker_id{3}));
    f.steps(4);
    CHECK(f.log_bytes(3, "t", 0) == f.log_bytes(1, "t", 0));
  }
}

TEST_CASE("the leader's log start reaches its followers") {
  fixture f(1);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  f.produce("t", 0, 10, acks_mode::all);
  f.steps(3);
  REQUIRE_OK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->part()->log().delete_records_before(offset(6)));
  f.steps(2);
  CHECK(f.c->broker(broker_id{2})->replica("t", partition_id{0})->log_start_offset() == offset(6));
  CHECK(f.c->broker(broker_id{3})->replica("t", partition_id{0})->log_start_offset() == offset(6));
}

TEST_CASE("an isolated leader cannot acknowledge acks=all, acks=1 records it took are lost after the heal") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  auto a = f.produce("t", 0, 2, acks_mode::all, "base");
  f.steps(2);
  REQUIRE((a->has_value() && **a));
  // A client that still reaches the old leader: broker(broker_id{1}) directly, as a stale client would.
  auto old = f.c->broker(broker_id{1});
  f.c->isolate(broker_id{1});
  std::optional<result<append_result>> one, all;
  auto b1 = brook::test::make_batch(2, f.clk->now_ms(), "lost");
  old->produce("t", partition_id{0}, b1, acks_mode::leader, std::chrono::milliseconds(30000),
               [&](const result<append_result>& r) { one = r; });
  auto b2 = brook::test::make_batch(2, f.clk->now_ms(), "never");
  old->produce("t", partition_id{0}, b2, acks_mode::all, std::chrono::milliseconds(30000),
               [&](const result<append_result>& r) { all = r; });
  REQUIRE(one);
  CHECK(*one);   // acks=1: acknowledged by the isolated leader alone
  f.steps(100);  // fenced; 2 or 3 leads
  CHECK(f.state("t", 0).leader != broker_id{1});
  f.c->heal(broker_id{1});
  f.steps(5);
  REQUIRE(all);
  CHECK(!*all);  // never acknowledged: it failed when leadership moved
  CHECK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->log_end_offset() == offset(2));  // "lost" truncated
  CHECK(f.log_bytes(1, "t", 0) == f.log_bytes(2, "t", 0));
}

TEST_CASE("a brook::producer sends through the cluster with acks=all on threads") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 2, 3));
  f.c->start();
  {
    cluster_target target(*f.c);
    producer_config pc;
    pc.acks = acks_mode::all;
    pc.linger = std::chrono::milliseconds(1);
    producer prod(target, pc);
    std::atomic<int> ok{0}, bad{0};
    for (int i = 0; i < 500; ++i) {
      std::string v = fmt::format("r{}", i);
      prod.send(producer_record{"t", std::nullopt, v, v, {}, std::nullopt},
                [&](const result<record_metadata>& r) { (r ? ok : bad)++; });
    }
    REQUIRE(prod.flush());
    CHECK(ok == 500);
    CHECK(bad == 0);
  }
  f.c->stop();
  std::int64_t total = 0;
  for (int p = 0; p < 2; ++p)
    total += f.c->broker(f.state("t", p).leader)->replica("t", partition_id(p))->high_watermark().value();
  CHECK(total == 500);
}

TEST_CASE("a cluster closed and reopened replays its metadata and keeps every committed record") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 2, 3));
  auto a = f.produce("t", 1, 6, acks_mode::all);
  f.steps(3);
  REQUIRE((a->has_value() && **a));
  const auto before = f.state("t", 1);
  const auto bytes = f.log_bytes(before.leader, "t", 1);
  REQUIRE_OK(f.c->close());
  f.c.reset();
  f.c = f.open(2, false);
  // Re-registering fences each broker's old incarnation (as a restart does in KRaft), so the
  // ISRs shrink on open; the followers rejoin once they have fetched.
  f.steps(3);
  const auto after = f.state("t", 1);
  CHECK(after.replicas == before.replicas);
  CHECK(after.isr.size() == 3);
  CHECK(after.leader_epoch >= before.leader_epoch);
  for (broker_id id : ids{1, 2, 3}) {
    CHECK(f.log_bytes(id, "t", 1) == bytes);
    CHECK(f.c->broker(id)->replica("t", partition_id{1})->high_watermark() == offset(6));  // from the checkpoint
  }
  auto more = f.produce("t", 1, 1, acks_mode::all);
  f.steps(3);
  REQUIRE((more->has_value() && **more));
  CHECK((**more)->base_offset == offset(6));
}

TEST_CASE("bad input to the cluster gets Kafka's errors") {
  fixture f(1);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  auto unknown = f.produce("nope", 0, 1, acks_mode::all);
  REQUIRE(unknown->has_value());
  CHECK((**unknown).error() == errc::unknown_topic_or_partition);
  auto bad_partition = f.produce("t", 5, 1, acks_mode::all);
  REQUIRE(bad_partition->has_value());
  CHECK((**bad_partition).error() == errc::unknown_topic_or_partition);
  auto garbage = std::make_shared<std::optional<result<append_result>>>();
  std::vector<std::byte> junk(80, std::byte{0x5a});
  f.c->produce("t", partition_id{0}, junk, acks_mode::all, std::chrono::milliseconds(1000),
               [garbage](const result<append_result>& r) { *garbage = r; });
  REQUIRE(garbage->has_value());
  CHECK(!**garbage);
  CHECK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->log_end_offset() == offset(0));
  auto bad_name = f.c->create_topic("bad name", 1, 1);
  REQUIRE(!bad_name);
  CHECK(bad_name.error() == errc::invalid_topic);
  CHECK(crash_broker(*f.c, f.disks, broker_id{9}, crash_mode::process).error() == errc::broker_not_available);
  CHECK(f.c->restart_broker(broker_id{1}).error() == errc::invalid_request);  // running
  cluster_config cfg;
  cfg.broker_heartbeat_interval = std::chrono::milliseconds(10000);  // not below the session timeout (9000)
  brook::test::scratch_dir d2("brook-cluster-bad");
  auto bad = cluster::open(d2.path(), cfg);
  REQUIRE(!bad);
  CHECK(bad.error() == errc::invalid_config);
  cfg = cluster_config{};
  cfg.broker_ids = ids{1, 1};
  auto dup = cluster::open(d2.path(), cfg);
  REQUIRE(!dup);
  CHECK(dup.error() == errc::invalid_argument);
}

// Found by review (KAFKA-14139 / KIP-903): a follower that lost power and restarted must not
// rejoin the ISR on what its previous incarnation had fetched.
TEST_CASE("a restarted follower rejoins the ISR only after its new incarnation has fetched") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  auto a = f.produce("t", 0, 10, acks_mode::all, "acked");
  f.steps(3);
  REQUIRE((a->has_value() && **a));
  REQUIRE(f.c->broker(broker_id{3})->replica("t", partition_id{0})->log_end_offset() == offset(10));
  f.c->set_fetch_delay(broker_id{3},
                       std::chrono::milliseconds(60000));  // a slow follower: its next fetch is a minute away
  f.steps(1);
  REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{3}, crash_mode::flush_point));  // nothing was flushed
  REQUIRE_OK(f.c->restart_broker(broker_id{3}));
  REQUIRE(f.c->broker(broker_id{3})->replica("t", partition_id{0})->log_end_offset() == offset(0));
  f.steps(1);
  auto isr = f.state("t", 0).isr;
  CHECK(std::find(isr.begin(), isr.end(), broker_id{3}) == isr.end());  // it holds nothing yet
  CHECK(f.c->broker(broker_id{1})->replica("t", partition_id{0})->follower(broker_id{3})->log_end_offset == offset(-1));
  // Were it back, losing 1 and 2 would make it the leader with an empty log. It catches up first.
  f.c->set_fetch_delay(broker_id{3}, std::chrono::milliseconds(0));
  f.steps(3);
  isr = f.state("t", 0).isr;
  CHECK(std::find(isr.begin(), isr.end(), broker_id{3}) != isr.end());
  CHECK(f.c->broker(broker_id{3})->replica("t", partition_id{0})->log_end_offset() == offset(10));
}

// Found by review: a broker elected again after missing epochs (it was isolated) must forget
// its followers' log ends, which other leaders may have truncated meanwhile.
TEST_CASE("a leader re-elected after missed epochs does not commit what its followers truncated meanwhile") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 2, 3));
  const int p = 1;  // replicas [2,3,1]
  REQUIRE(f.state("t", p).replicas == ids{2, 3, 1});
  REQUIRE_OK(f.c->stop_broker(broker_id{2}));  // 3 leads (epoch 1)
  REQUIRE(f.state("t", p).leader == broker_id{3});
  REQUIRE_OK(f.c->restart_broker(broker_id{2}));
  f.steps(5);
  REQUIRE(f.state("t", p).isr.size() == 3);
  f.c->set_fetch_delay(broker_id{2}, std::chrono::milliseconds(600000));  // 2 is slow
  f.steps(1);
  auto out = f.produce("t", p, 5, acks_mode::all, "B");
  f.steps(2);
  REQUIRE(f.c->broker(broker_id{1})->replica("t", partition_id(p))->log_end_offset() ==
          offset(5));  // 1 has B, 2 does not
  REQUIRE(!out->has_value());
  // 3 is cut off; a preferred election makes 2 leader (epoch 2) and 1 truncates B.
  f.c->isolate(broker_id{3});
  auto el = f.c->elect_leaders(election_type::preferred, {{"t", partition_id(p)}});
  REQUIRE(el);
  REQUIRE(f.state("t", p).leader == broker_id{2});
  f.steps(2);
  REQUIRE(f.c->broker(broker_id{1})->replica("t", partition_id(p))->log_end_offset() == offset(0));
  // 1 is cut off too and 2 stops: the controller elects 3 (epoch 3) among the unfenced ISR.
  f.c->isolate(broker_id{1});
  REQUIRE_OK(f.c->stop_broker(broker_id{2}));
  REQUIRE(f.state("t", p).leader == broker_id{3});
  f.c->heal(broker_id{3});
  f.steps(1);
  // 3 must not count 1 as holding B: no acknowledgement, no HW over B.
  CHECK_FALSE((out->has_value() && **out));
  CHECK(f.c->broker(broker_id{3})->replica("t", partition_id(p))->high_watermark() == offset(0));
}

TEST_CASE("a broker restarted while isolated registers only once it can reach the controller") {
  fixture f(1);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  f.c->isolate(broker_id{3});
  REQUIRE_OK(crash_broker(*f.c, f.disks, broker_id{3}, crash_mode::process));
  REQUIRE_OK(f.c->restart_broker(broker_id{3}));
  f.steps(100);  // past the session timeout: the old incarnation is fenced, the new one unknown
  const auto* b3 = f.c->image()->broker(broker_id{3});
  REQUIRE(b3);
  CHECK(b3->fenced);
  CHECK(f.state("t", 0).isr == ids{1, 2});
  const auto old_epoch = b3->epoch;
  f.c->heal(broker_id{3});
  f.steps(5);
  b3 = f.c->image()->broker(broker_id{3});
  CHECK(!b3->fenced);
  CHECK(b3->epoch > old_epoch);
  CHECK(f.state("t", 0).isr.size() == 3);
}

namespace {
consumer_config poll_now() {
  consumer_config cc;
  cc.auto_offset_reset = offset_reset::earliest;
  cc.fetch_max_wait = std::chrono::milliseconds(0);
  return cc;
}
std::vector<owned_record> poll_once(consumer& con) {
  auto r = con.poll(std::chrono::milliseconds(0));
  REQUIRE_OK(r);
  std::vector<owned_record> out;
  for (const auto& rec : *r) out.push_back(rec.to_owned());
  return out;
}
}  // namespace

TEST_CASE("cluster_source: a consumer reads committed records from the leader and follows a failover") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  cluster_source src(*f.c);
  consumer con(src, poll_now());
  const topic_partition tp{"t", partition_id(0)};
  REQUIRE_OK(con.assign({tp}));
  auto a = f.produce("t", 0, 3, acks_mode::all, "a");
  CHECK(poll_once(con).empty());  // on the leader, not yet committed: above the high watermark
  f.steps(2);
  REQUIRE((a->has_value() && **a));
  auto first = poll_once(con);
  REQUIRE(first.size() == 3);
  CHECK(first[0].value == "a-0");

  // The leader crashes: until the controller notices, it is unreachable; poll skips the
  // partition instead of failing, and bounds() names the reason.
  const broker_id old = f.state("t", 0).leader;
  REQUIRE_OK(crash_broker(*f.c, f.disks, old, crash_mode::process));
  CHECK(poll_once(con).empty());
  auto ends = con.end_offsets({tp});
  REQUIRE_FALSE(ends);
  CHECK(ends.error() == errc::broker_not_available);
  f.steps(100);  // fenced after the session timeout; another ISR member leads
  REQUIRE(f.state("t", 0).leader != old);
  REQUIRE(f.state("t", 0).has_leader());
  auto b = f.produce("t", 0, 2, acks_mode::all, "b");
  f.steps(3);
  REQUIRE((b->has_value() && **b));
  auto second = poll_once(con);
  REQUIRE(second.size() == 2);
  CHECK(second[0].offset == offset(3));
  CHECK(second[1].value == "b-1");
  CHECK(*con.position(tp) == offset(5));
  auto bounds = src.bounds(tp);
  REQUIRE_OK(bounds);
  CHECK(bounds->high_watermark == offset(5));
}

TEST_CASE("cluster_source: errors for unknown and offline partitions, offsets_for_times from the leader") {
  fixture f(1, /*unclean=*/false, ids{1, 2});
  REQUIRE_OK(f.c->create_topic("t", 1, 1));
  cluster_source src(*f.c);
  auto count = src.partition_count("t");
  REQUIRE_OK(count);
  CHECK(*count == 1);
  CHECK(src.partition_count("nope").error() == errc::unknown_topic_or_partition);
  CHECK(src.bounds({"t", partition_id(1)}).error() == errc::unknown_topic_or_partition);
  consumer con(src, poll_now());
  CHECK(con.assign({{"t", partition_id(1)}}).error() == errc::unknown_topic_or_partition);
  auto a = f.produce("t", 0, 4, acks_mode::all, "a");
  f.steps(1);
  REQUIRE((a->has_value() && **a));
  auto ts = src.offset_for_timestamp({"t", partition_id(0)}, f.clk->now_ms() - 100 + 2);
  REQUIRE_OK(ts);
  REQUIRE(ts->has_value());
  CHECK((*ts)->off == offset(2));
  // The only replica is stopped: the partition goes offline (no ISR member left to lead).
  const broker_id only = f.state("t", 0).leader;
  REQUIRE_OK(f.c->stop_broker(only));
  f.steps(1);
  auto off = src.bounds({"t", partition_id(0)});
  REQUIRE_FALSE(off);
  CHECK(is_leader_change(off.error()));
}

TEST_CASE("cluster_source on threads: a long poll wakes when the high watermark moves") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 1, 3));
  f.c->start();
  cluster_source src(*f.c);
  consumer_config cc;
  cc.auto_offset_reset = offset_reset::earliest;
  // fetch.max.wait.ms and the polls are 2 minutes: the high watermark moves on a follower's
  // fetch that moves no bytes, so without the wake-up on that move (the brokers' data
  // directories share the cluster's notifier) the second poll would come back empty.
  cc.fetch_max_wait = std::chrono::minutes(2);
  consumer con(src, cc);
  REQUIRE_OK(con.assign({{"t", partition_id(0)}}));
  REQUIRE(f.send_all("t", {"x"}) == 1);
  // The record is committed already; the poll must see it at once. Then a second poll
  // waits and is woken by the next commit, which a follower's fetch (0 bytes) completes.
  auto first = con.poll(std::chrono::minutes(2));
  REQUIRE_OK(first);
  CHECK(first->size() == 1);
  std::thread later([&] { (void)f.send_all("t", {"y"}); });
  auto second = con.poll(std::chrono::minutes(2));
  later.join();
  f.c->stop();
  REQUIRE_OK(second);
  CHECK(second->size() == 1);
}

TEST_CASE("a topic created with config overrides gets them on every replica") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("compacted", 2, 3, {{"cleanup.policy", "compact"}, {"segment.bytes", "1048576"}}));
  CHECK(f.c->create_topic("bad", 1, 3, {{"cleanup.policy", "tidy"}}).error() == errc::invalid_config);
  for (int id = 1; id <= 3; ++id)
    for (int p = 0; p < 2; ++p) {
      auto r = f.c->broker(broker_id(id))->replica("compacted", partition_id(p));
      REQUIRE(r);
      CHECK(r->part()->log().config().cleanup == cleanup_policy::compact);
      CHECK(r->part()->log().config().segment_bytes == 1048576);
    }
}

TEST_CASE("a cluster's __consumer_offsets keeps the coordinator's batches whatever the brokers compress") {
  // Kafka's offsetsTopicConfigs: compression.type=producer on the topic, over the brokers' lz4.
  fixture f;
  f.reopen_with_all_codecs(1, compression_type::lz4);
  REQUIRE_OK(f.c->create_topic("plain", 1, 3));
  f.c->start();
  cluster_backend backend(*f.c);
  coordinator_config cc;
  cc.offsets_topic_num_partitions = 1;
  auto coord = group_coordinator::open(backend, cc);
  REQUIRE_OK(coord);
  for (int id = 1; id <= 3; ++id) {
    auto offsets = f.c->broker(broker_id(id))->replica(offset_store::topic_name, partition_id(0));
    auto plain = f.c->broker(broker_id(id))->replica("plain", partition_id(0));
    REQUIRE(offsets);
    REQUIRE(plain);
    CHECK(offsets->part()->log().config().compression == std::nullopt);
    CHECK(plain->part()->log().config().compression == compression_type::lz4);
  }
}

TEST_CASE("a group coordinator on the cluster: committed offsets survive the offsets leader's loss") {
  fixture f(2);
  REQUIRE_OK(f.c->create_topic("t", 2, 3));
  f.c->start();
  cluster_backend backend(*f.c);
  coordinator_config cc;
  cc.group_initial_rebalance_delay = std::chrono::milliseconds(0);  // the manual clock stands still
  cc.offsets_topic_num_partitions = 1;
  auto coord = group_coordinator::open(backend, cc);
  REQUIRE_OK(coord);
  // __consumer_offsets is a replicated, compacted topic of the cluster.
  for (int id = 1; id <= 3; ++id) {
    auto r = f.c->broker(broker_id(id))->replica(offset_store::topic_name, partition_id(0));
    REQUIRE(r);
    CHECK(r->part()->log().config().cleanup == cleanup_policy::compact);
  }
  std::vector<std::string> values;
  for (int i = 0; i < 10; ++i) values.push_back(fmt::format("r{}", i));
  REQUIRE(f.send_all("t", values, /*partition: alternate 0 and 1*/ -2) == 10);
  std::map<topic_partition, offset_and_metadata> committed;
  {
    group_consumer_config gc;
    gc.group_id = "g";
    gc.enable_auto_commit = false;
    gc.consumer.auto_offset_reset = offset_reset::earliest;
    gc.consumer.fetch_max_wait = std::chrono::milliseconds(10);
    group_consumer member(**coord, gc);
    REQUIRE_OK(member.subscribe({"t"}));
    std::size_t got = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (got < 10 && std::chrono::steady_clock::now() < deadline) {
      auto r = member.poll(std::chrono::milliseconds(100));
      REQUIRE_OK(r);
      got += r->size();
    }
    REQUIRE(got == 10);
    REQUIRE_OK(member.commit_sync());  // acks=all on the offsets partition
    committed = (*coord)->fetch_offsets("g");
    REQUIRE(committed.size() == 2);
    CHECK(committed.at({"t", partition_id(0)}).off + committed.at({"t", partition_id(1)}).off.value() == offset(10));
    REQUIRE_OK(member.close());
  }
  // The broker leading __consumer_offsets-0 stops; another in-sync replica leads it, and a
  // coordinator replaying the cluster from scratch finds every commit.
  const broker_id old = f.state(offset_store::topic_name, 0).leader;
  REQUIRE_OK(f.c->stop_broker(old));
  REQUIRE(f.state(offset_store::topic_name, 0).leader != old);
  auto replayed = group_coordinator::open(backend, cc);
  REQUIRE_OK(replayed);
  CHECK((*replayed)->fetch_offsets("g") == committed);
  f.c->stop();
}

TEST_CASE("cluster_source: consumers read compressed batches with the brokers' codecs") {
  // cluster_source::codecs() hands a consumer that names no codecs of its own (and the group
  // coordinator's offsets load) the codecs the brokers were given.
  fixture f(2);
  f.reopen_with_all_codecs(1);  // the default min.insync.replicas
  REQUIRE_OK(f.c->create_topic("z", 1, 3));
  const auto codecs = brook::test::all_codecs();
  record_batch_builder b;
  for (int i = 0; i < 20; ++i) b.append(f.clk->now_ms(), "key", fmt::format("v{}", i));
  auto lz4 = b.finish(**codecs.get(compression_type::lz4), 9);
  REQUIRE(lz4);
  std::vector<std::byte> sent(lz4->begin(), lz4->end());
  auto out = std::make_shared<std::optional<result<append_result>>>();
  f.c->produce("z", partition_id(0), sent, acks_mode::all, std::chrono::milliseconds(30000),
               [out](const result<append_result>& r) { *out = r; });
  f.steps(4);
  REQUIRE(out->has_value());
  REQUIRE_OK(**out);
  cluster_source src(*f.c);
  CHECK(src.codecs() == f.c->config().broker.dir.defaults.codecs);
  consumer con(src, poll_now());
  REQUIRE_OK(con.assign({{"z", partition_id(0)}}));
  const auto got = poll_once(con);
  REQUIRE(got.size() == 20);
  CHECK(got.front().value == "v0");
  CHECK(got.back().value == "v19");
}

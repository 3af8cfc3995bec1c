// broker: one node on its own, fed cluster images built by hand from metadata records (no
// controller), with followers' fetches made explicitly through broker::fetch. Covers roles
// per image, produce with acks 0/1/all and min.insync.replicas, delayed produces (completion,
// timeout, leadership loss, close, crash) and the replication-offset-checkpoint.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <brook/core/clock.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/replication/broker.hpp>
#include <brook/testing/crash.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/replication_helpers.hpp"

using namespace brook;
using brook::testing::manual_clock;

namespace {

using brook::test::ids;
using brook::test::image_builder;
namespace fs = std::filesystem;

/// One batch of `n` records (fmt rather than test::make_batch's string concatenation, which
/// trips GCC 12's false -Wrestrict when inlined here).
std::vector<std::byte> batch_of(int n, timestamp_ms ts) {
  record_batch_builder rb;
  for (int i = 0; i < n; ++i) rb.append(ts + i, fmt::format("k{}", i), fmt::format("v-{}", i));
  auto s = rb.finish();
  return {s.begin(), s.end()};
}

using completion = std::shared_ptr<std::optional<result<append_result>>>;

struct fixture {
  std::shared_ptr<manual_clock> clk = std::make_shared<manual_clock>(1'000'000);
  brook::test::scratch_dir root{"brook-broker"};
  mutable brook::testing::broker_disks disks;
  std::map<std::int32_t, std::shared_ptr<broker>> b;
  std::uint64_t version = 0;

  broker_config config(std::int32_t id, std::int32_t min_isr = 1) const {
    broker_config c;
    c.id = broker_id(id);
    c.min_insync_replicas = min_isr;
    c.dir.defaults.clock = clk;
    c.dir.defaults.files = disks.hook()(broker_id(id));
    return c;
  }
  /// Broker `id`'s disk, to crash it (brook/testing/crash.hpp).
  brook::testing::faulty_file_system& disk(std::int32_t id) { return disks.of(broker_id(id)); }
  fs::path dir_of(std::int32_t id) const { return root.path() / fmt::format("broker-{}", id); }

  std::shared_ptr<broker> open(std::int32_t id, std::int32_t min_isr = 1) {
    auto r = broker::open(dir_of(id), config(id, min_isr));
    if (!r) FAIL("broker::open " << id << ": " << r.error().to_string());
    b[id] = std::shared_ptr<broker>(std::move(*r));
    return b[id];
  }

  /// Every open broker gets `img` as the next version.
  void apply(const cluster_image& img) {
    ++version;
    for (auto& [id, br] : b) REQUIRE_OK(br->apply(img, version));
  }

  completion produce(std::int32_t id, const std::string& t, std::int32_t p, int n, acks_mode acks,
                     std::int64_t timeout_ms = 30000) {
    auto out = std::make_shared<std::optional<result<append_result>>>();
    auto batch = batch_of(n, clk->now_ms());
    b.at(id)->produce(t, partition_id(p), batch, acks, std::chrono::milliseconds(timeout_ms),
                      [out](const result<append_result>& r) {
                        CHECK_FALSE(out->has_value());  // a callback runs once
                        *out = r;
                      });
    return out;
  }

  /// One fetch of t-p by `follower` from `leader`, as the replica fetcher makes it.
  void fetch(std::int32_t follower, std::int32_t leader, const std::string& t, std::int32_t p) {
    auto rep = b.at(follower)->replica(t, partition_id(p));
    REQUIRE(rep);
    auto resp = b.at(leader)->fetch(t, partition_id(p), rep->make_fetch_request());
    if (!resp) FAIL("fetch: " << resp.error().to_string());
    REQUIRE_OK(rep->apply_fetch_response(*resp));
  }

  offset leo(std::int32_t id, const std::string& t, std::int32_t p) const {
    auto e = b.at(id)->log_end_offset(t, partition_id(p));
    REQUIRE(e);
    return *e;
  }
  offset hw(std::int32_t id, const std::string& t, std::int32_t p) const {
    auto r = b.at(id)->replica(t, partition_id(p));
    REQUIRE(r);
    return r->high_watermark();
  }
};

bool failed_with(const completion& c, errc e) { return c->has_value() && !**c && (**c).error() == e; }
std::string describe(const completion& c) {
  if (!c->has_value()) return "pending";
  return **c ? std::string("ok") : (**c).error().to_string();
}
// The completion must be an error `e` (evaluates `c` once).
#define CHECK_FAILED_WITH(c, e)        \
  do {                                 \
    const completion _c = (c);         \
    INFO("outcome: " << describe(_c)); \
    CHECK(failed_with(_c, (e)));       \
  } while (0)

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
void write_text(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::trunc);
  out << s;
  REQUIRE(out.good());
}

}  // namespace

// ------------------------------------------------------------------ configuration

TEST_CASE("broker::open refuses a bad config", "[replication][broker]") {
  fixture f;
  auto c = f.config(1, 0);
  auto r = broker::open(f.dir_of(1), c);
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::invalid_config);
  c.min_insync_replicas = -2;
  r = broker::open(f.dir_of(1), c);
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::invalid_config);
  c = f.config(-1);
  r = broker::open(f.dir_of(1), c);
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::invalid_argument);
  CHECK_FALSE(fs::exists(f.dir_of(1) / ".lock"));  // refused before touching the directory
  // A directory another broker holds.
  f.open(1);
  r = broker::open(f.dir_of(1), f.config(1));
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::log_dir_locked);
}

// ------------------------------------------------------------------ metadata

TEST_CASE("apply creates replicas only for the partitions assigned here and gives them their roles",
          "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1, 2, 3})
      .topic("mine", {{1, 2}, {2, 3}, {3, 1}})  // p0 led here, p1 not here, p2 followed here
      .topic("other", {{2, 3}});
  f.apply(ib.img);

  auto p0 = b1->replica("mine", partition_id{0});
  REQUIRE(p0);
  CHECK(p0->role() == replica_role::leader);
  CHECK(p0->isr() == ids{1, 2});
  CHECK(p0->current_leader_epoch() == leader_epoch(0));
  CHECK(b1->replica("mine", partition_id{1}) == nullptr);
  auto p2 = b1->replica("mine", partition_id{2});
  REQUIRE(p2);
  CHECK(p2->role() == replica_role::follower);
  CHECK(p2->leader_id() == broker_id{3});
  CHECK(b1->replica("other", partition_id{0}) == nullptr);
  CHECK(b1->replica("mine", partition_id{3}) == nullptr);
  CHECK_FALSE(b1->log_end_offset("mine", partition_id{1}).has_value());

  // The data directory holds every partition of "mine" (dense), nothing of "other".
  CHECK(b1->dir().list_topics() == std::vector<std::string>{"mine"});
  CHECK(*b1->dir().partition_count("mine") == 3);

  auto fol = b1->following();
  REQUIRE(fol.size() == 1);
  CHECK(fol[0].topic == "mine");
  CHECK(fol[0].partition == partition_id{2});
  CHECK(fol[0].leader == broker_id{3});
  CHECK(fol[0].needs_truncation);
  CHECK(b1->isr_proposals(true).empty());  // follower 2 of p0 has not fetched: nothing to propose yet

  // A partition added to the topic later gets a replica too.
  metadata::partition_record pr;
  pr.partition_id = partition_id(3);
  pr.topic_id = ib.topic_ids.at("mine");
  pr.replicas = ids{2, 1};
  pr.isr = ids{2, 1};
  pr.leader = broker_id{2};
  pr.leader_epoch = leader_epoch(0);
  pr.partition_epoch = 0;
  REQUIRE(ib.img.apply(pr));
  f.apply(ib.img);
  CHECK(*b1->dir().partition_count("mine") == 4);
  REQUIRE(b1->replica("mine", partition_id{3}));
  CHECK(b1->replica("mine", partition_id{3})->role() == replica_role::follower);
}

TEST_CASE("an image older than the one applied is ignored", "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  const cluster_image v1 = ib.img;
  ib.change("t", 0, 2, ids{2, 1});
  const cluster_image v2 = ib.img;

  REQUIRE_OK(b1->apply(v1, 10));
  CHECK(b1->replica("t", partition_id{0})->role() == replica_role::leader);
  REQUIRE_OK(b1->apply(v2, 9));  // older: no effect
  CHECK(b1->replica("t", partition_id{0})->role() == replica_role::leader);
  REQUIRE_OK(b1->apply(v2, 11));
  CHECK(b1->replica("t", partition_id{0})->role() == replica_role::follower);
  CHECK(b1->replica("t", partition_id{0})->current_leader_epoch() == leader_epoch(1));
  REQUIRE_OK(b1->apply(v1, 5));  // a late delivery cannot take leadership back
  CHECK(b1->replica("t", partition_id{0})->role() == replica_role::follower);
  CHECK(b1->replica("t", partition_id{0})->leader_id() == broker_id{2});
}

TEST_CASE("a closed broker refuses images and produces", "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1}).topic("t", {{1}});
  f.apply(ib.img);
  REQUIRE_OK(b1->close());
  REQUIRE_OK(b1->close());
  auto r = b1->apply(ib.img, 100);
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::closed);
  auto a = f.produce(1, "t", 0, 1, acks_mode::leader);
  REQUIRE(a->has_value());
  CHECK_FALSE(**a);
}

// ------------------------------------------------------------------ produce

TEST_CASE("produce is refused where this broker has no replica or does not lead", "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1, 2, 3}).topic("t", {{1, 2}, {2, 3}, {3, 1}});
  f.apply(ib.img);

  for (auto acks : {acks_mode::none, acks_mode::leader, acks_mode::all}) {
    CHECK_FAILED_WITH(f.produce(1, "nope", 0, 1, acks), errc::unknown_topic_or_partition);
    CHECK_FAILED_WITH(f.produce(1, "t", 1, 1, acks), errc::unknown_topic_or_partition);  // no replica here
    CHECK_FAILED_WITH(f.produce(1, "t", 7, 1, acks), errc::unknown_topic_or_partition);
    CHECK_FAILED_WITH(f.produce(1, "t", 2, 1, acks), errc::not_leader_or_follower);  // a follower here
  }
  CHECK(f.leo(1, "t", 2) == offset(0));

  // Junk is refused by the log and appends nothing.
  std::vector<std::byte> junk(40, std::byte{0x5a});
  std::optional<result<append_result>> out;
  b1->produce("t", partition_id{0}, junk, acks_mode::leader, std::chrono::milliseconds(1000),
              [&](const result<append_result>& r) { out = r; });
  REQUIRE(out);
  CHECK_FALSE(*out);
  CHECK(f.leo(1, "t", 0) == offset(0));

  // The other requests of a leader need a replica too.
  auto fr = b1->fetch("t", partition_id{1}, replica_fetch_request{});
  REQUIRE_FALSE(fr);
  CHECK(fr.error() == errc::unknown_topic_or_partition);
  auto oe = b1->offsets_for_leader_epoch("t", partition_id{1}, leader_epoch(0), leader_epoch(0));
  REQUIRE_FALSE(oe);
  CHECK(oe.error() == errc::unknown_topic_or_partition);
  auto of = b1->offsets_for_leader_epoch("t", partition_id{2}, leader_epoch(0), leader_epoch(0));  // not the leader
  REQUIRE_FALSE(of);
  CHECK(of.error() == errc::not_leader_or_follower);
}

TEST_CASE("acks=all with an ISR smaller than min.insync.replicas is refused and appends nothing",
          "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1, /*min_isr=*/2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}}).change("t", 0, std::nullopt, ids{1});
  f.apply(ib.img);
  REQUIRE(b1->replica("t", partition_id{0})->isr() == ids{1});
  auto a = f.produce(1, "t", 0, 3, acks_mode::all);
  CHECK_FAILED_WITH(a, errc::not_enough_replicas);
  CHECK(f.leo(1, "t", 0) == offset(0));
  // acks=1 and acks=0 do not look at the ISR.
  auto l = f.produce(1, "t", 0, 3, acks_mode::leader);
  REQUIRE(l->has_value());
  REQUIRE(**l);
  CHECK((**l)->base_offset == offset(0));
  auto z = f.produce(1, "t", 0, 2, acks_mode::none);
  REQUIRE(z->has_value());
  REQUIRE(**z);
  CHECK(f.leo(1, "t", 0) == offset(5));
}

TEST_CASE("acks=all completes once the followers' fetches move the high watermark past the batch",
          "[replication][broker]") {
  fixture f;
  f.open(1, /*min_isr=*/2);
  f.open(2, 2);
  f.open(3, 2);
  image_builder ib;
  ib.brokers({1, 2, 3}).topic("t", {{1, 2, 3}});
  f.apply(ib.img);

  auto a = f.produce(1, "t", 0, 3, acks_mode::all);
  CHECK_FALSE(a->has_value());
  auto l = f.produce(1, "t", 0, 2, acks_mode::leader);  // acks=1: at once
  REQUIRE(l->has_value());
  CHECK((**l)->base_offset == offset(3));
  CHECK(f.hw(1, "t", 0) == offset(0));

  f.fetch(2, 1, "t", 0);  // 2 has 0..4; the leader learns it on 2's next fetch
  f.fetch(3, 1, "t", 0);
  CHECK_FALSE(a->has_value());
  f.fetch(2, 1, "t", 0);
  CHECK(f.hw(1, "t", 0) == offset(0));  // 3 is in the ISR and has not confirmed yet
  CHECK_FALSE(a->has_value());
  f.fetch(3, 1, "t", 0);  // completes on the fetch that moved the HW
  CHECK(f.hw(1, "t", 0) == offset(5));
  REQUIRE(a->has_value());
  REQUIRE(**a);
  CHECK((**a)->base_offset == offset(0));
  CHECK((**a)->last_offset == offset(2));
  // The followers learn the HW one fetch later.
  CHECK(f.hw(2, "t", 0) == offset(0));
  f.fetch(2, 1, "t", 0);
  CHECK(f.hw(2, "t", 0) == offset(5));
}

TEST_CASE("acks=all fails with not_enough_replicas_after_append when the ISR shrinks below min.insync.replicas",
          "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1, /*min_isr=*/2);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  auto a = f.produce(1, "t", 0, 4, acks_mode::all);
  CHECK_FALSE(a->has_value());
  // The controller removes the silent follower and fences its broker: the HW no longer waits.
  ib.change("t", 0, std::nullopt, ids{1}).fence(2);
  f.apply(ib.img);
  CHECK(b1->replica("t", partition_id{0})->isr() == ids{1});
  CHECK(f.hw(1, "t", 0) == offset(4));
  CHECK_FAILED_WITH(a, errc::not_enough_replicas_after_append);
  CHECK(f.leo(1, "t", 0) == offset(4));  // written, only not acknowledged
}

TEST_CASE("a delayed produce times out in tick() at request.timeout.ms", "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  auto a = f.produce(1, "t", 0, 2, acks_mode::all, /*timeout_ms=*/1500);
  f.clk->advance(1499);
  REQUIRE_OK(b1->tick());
  CHECK_FALSE(a->has_value());
  f.clk->advance(1);
  REQUIRE_OK(b1->tick());
  CHECK_FAILED_WITH(a, errc::request_timed_out);
  CHECK(f.leo(1, "t", 0) == offset(2));
}

TEST_CASE("a delayed produce fails with not_leader_or_follower when a newer image makes this broker a follower",
          "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  auto a = f.produce(1, "t", 0, 2, acks_mode::all);
  auto same = ib.img;
  REQUIRE_OK(b1->apply(same, f.version));  // the same image again changes nothing
  CHECK_FALSE(a->has_value());
  ib.change("t", 0, 2, ids{2});
  f.apply(ib.img);
  CHECK(b1->replica("t", partition_id{0})->role() == replica_role::follower);
  CHECK_FAILED_WITH(a, errc::not_leader_or_follower);
}

TEST_CASE("close() fails waiting produces with not_leader_or_follower, an uncontrolled one with request_timed_out",
          "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  f.apply(ib.img);
  auto a = f.produce(1, "t", 0, 2, acks_mode::all);
  auto c = f.produce(1, "t", 0, 2, acks_mode::all);

  SECTION("close") {
    REQUIRE_OK(b1->close());
    CHECK_FAILED_WITH(a, errc::not_leader_or_follower);
    CHECK_FAILED_WITH(c, errc::not_leader_or_follower);
  }
  SECTION("uncontrolled close") {
    REQUIRE_OK(b1->close(shutdown_mode::uncontrolled));
    CHECK_FAILED_WITH(a, errc::request_timed_out);
    CHECK_FAILED_WITH(c, errc::request_timed_out);
    REQUIRE_OK(b1->close(shutdown_mode::uncontrolled));  // twice is fine
    REQUIRE_OK(b1->close());
  }
  SECTION("crash") {
    brook::testing::crash_close(*b1, f.disk(1));
    CHECK_FAILED_WITH(a, errc::request_timed_out);
    CHECK_FAILED_WITH(c, errc::request_timed_out);
    REQUIRE_OK(b1->close());
  }
  // Either way the directory is free for the next incarnation, with the records appended.
  f.b.clear();
  b1.reset();
  auto again = f.open(1);
  f.apply(ib.img);
  CHECK(f.leo(1, "t", 0) == offset(4));
}

namespace {

/// A clock that runs `hook` once, on the `fire_on`-th read after arm(): a way to act at a
/// chosen point inside a call that reads the clock (here: inside the log's append).
class hooked_clock final : public clock {
 public:
  explicit hooked_clock(timestamp_ms t) : now_(t) {}
  timestamp_ms now_ms() const override {
    if (armed_.load() && --countdown_ == 0) {
      armed_.store(false);
      hook_();
    }
    return now_;
  }
  void arm(int fire_on, std::function<void()> hook) {
    hook_ = std::move(hook);
    countdown_ = fire_on;
    armed_.store(true);
  }

 private:
  timestamp_ms now_;
  mutable std::atomic<bool> armed_{false};
  mutable int countdown_ = 0;
  std::function<void()> hook_;
};

}  // namespace

TEST_CASE("a produce whose append races an uncontrolled or a controlled close still completes",
          "[replication][broker]") {
  // broker::produce appends, then queues the delayed produce. A close (or a crash) that
  // fails every queued produce between those two steps used to leave this one queued on a
  // broker nothing ticks any more: its callback never ran and a producer's flush() hung
  // (the replication_cluster_threaded hang). The clock's second read in produce() is the
  // log's own, inside the append: the stop runs there, on another thread.
  auto clk = std::make_shared<hooked_clock>(1'000'000);
  brook::test::scratch_dir root{"brook-broker-race"};
  broker_config cfg;
  cfg.id = broker_id{1};
  cfg.dir.defaults.clock = clk;
  auto opened = broker::open(root.path() / "broker-1", cfg);
  if (!opened) FAIL("broker::open: " << opened.error().to_string());
  std::shared_ptr<broker> b1(std::move(*opened));
  image_builder ib;
  ib.brokers({1, 2}).topic("t", {{1, 2}});
  REQUIRE_OK(b1->apply(ib.img, 1));

  const bool crash = GENERATE(true, false);
  std::thread stopper;
  bool hooked = false;
  clk->arm(2, [&] {
    hooked = true;
    stopper = std::thread([&] { (void)b1->close(crash ? shutdown_mode::uncontrolled : shutdown_mode::controlled); });
    // Both mark the broker stopped and fail the queued produces before they touch the log
    // (whose writer lock this thread holds): wait for that mark.
    while (b1->checkpoint_high_watermarks()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  std::optional<result<append_result>> out;
  auto batch = batch_of(2, 1'000'000);
  b1->produce("t", partition_id{0}, batch, acks_mode::all, std::chrono::milliseconds(30000),
              [&](const result<append_result>& r) { out = r; });
  REQUIRE(hooked);
  stopper.join();
  REQUIRE(out.has_value());
  INFO("outcome: " << (*out ? std::string("ok") : out->error().to_string()));
  CHECK(!*out);
  CHECK((*out).error() == (crash ? errc::request_timed_out : errc::not_leader_or_follower));
}

// ------------------------------------------------------------------ high watermark checkpoint

TEST_CASE("the high watermark is checkpointed, restored on open and clamped to the log end", "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1}).topic("t", {{1}, {1}});
  f.apply(ib.img);
  const fs::path ckpt = f.dir_of(1) / "t-0" / partition_files::replication_offset_checkpoint;
  REQUIRE((**f.produce(1, "t", 0, 5, acks_mode::leader)));
  CHECK(f.hw(1, "t", 0) == offset(5));
  CHECK_FALSE(fs::exists(ckpt));

  // tick() writes it every replica.high.watermark.checkpoint.interval.ms (5000).
  f.clk->advance(4999);
  REQUIRE_OK(b1->tick());
  CHECK_FALSE(fs::exists(ckpt));
  f.clk->advance(1);
  REQUIRE_OK(b1->tick());
  CHECK(slurp(ckpt) == "0\n1\nt 0 5\n");
  CHECK(slurp(f.dir_of(1) / "t-1" / partition_files::replication_offset_checkpoint) == "0\n1\nt 1 0\n");

  REQUIRE((**f.produce(1, "t", 0, 3, acks_mode::leader)));
  REQUIRE_OK(b1->checkpoint_high_watermarks());
  CHECK(slurp(ckpt) == "0\n1\nt 0 8\n");
  REQUIRE((**f.produce(1, "t", 0, 2, acks_mode::leader)));  // HW 10, not checkpointed

  SECTION("a crash restores the last checkpoint, below the log end") {
    brook::testing::crash_close(*b1, f.disk(1));
    f.b.clear();
    b1.reset();
    auto again = f.open(1);
    auto part = again->dir().get_partition("t", partition_id(0));
    REQUIRE(part);
    CHECK((*part)->log_end_offset() == offset(10));
    CHECK((*part)->high_watermark() == offset(8));
    CHECK(broker::read_high_watermark(**part).value() == offset(8));
  }
  SECTION("close checkpoints the final high watermark") {
    REQUIRE_OK(b1->close());
    CHECK(slurp(ckpt) == "0\n1\nt 0 10\n");
  }
  SECTION("a checkpoint above the log end is clamped to it") {
    REQUIRE_OK(b1->close());
    f.b.clear();
    b1.reset();
    write_text(ckpt, "0\n1\nt 0 1000\n");
    auto again = f.open(1);
    auto part = again->dir().get_partition("t", partition_id(0));
    REQUIRE(part);
    CHECK((*part)->high_watermark() == offset(10));
  }
  SECTION("no checkpoint means 0") {
    REQUIRE_OK(b1->close());
    f.b.clear();
    b1.reset();
    fs::remove(ckpt);
    auto again = f.open(1);
    CHECK((*again->dir().get_partition("t", partition_id(0)))->high_watermark() == offset(0));
  }
}

// Regression (found by this test, fixed): checkpoint_high_watermarks() does not check closed_, so a
// broker that crashed (or closed) still rewrites replication-offset-checkpoint in a directory
// whose lock it released, possibly under the next incarnation of the broker.
TEST_CASE("a crashed broker writes no more checkpoints", "[replication][broker]") {
  fixture f;
  auto b1 = f.open(1);
  image_builder ib;
  ib.brokers({1}).topic("t", {{1}});
  f.apply(ib.img);
  const fs::path ckpt = f.dir_of(1) / "t-0" / partition_files::replication_offset_checkpoint;
  REQUIRE((**f.produce(1, "t", 0, 5, acks_mode::leader)));
  REQUIRE_OK(b1->checkpoint_high_watermarks());
  REQUIRE((**f.produce(1, "t", 0, 3, acks_mode::leader)));
  brook::testing::crash_close(*b1, f.disk(1));
  (void)b1->checkpoint_high_watermarks();
  CHECK(slurp(ckpt) == "0\n1\nt 0 5\n");
}

TEST_CASE("acks=all on a partition without followers completes at once", "[replication][broker]") {
  fixture f;
  f.open(1);
  image_builder ib;
  ib.brokers({1}).topic("t", {{1}});
  f.apply(ib.img);
  auto a = f.produce(1, "t", 0, 3, acks_mode::all);
  REQUIRE(a->has_value());
  REQUIRE(**a);
  CHECK((**a)->last_offset == offset(2));
  CHECK(f.hw(1, "t", 0) == offset(3));
  // A request timeout of 0 still succeeds when nothing needs to be waited for.
  auto z = f.produce(1, "t", 0, 1, acks_mode::all, 0);
  REQUIRE(z->has_value());
  CHECK(**z);
}

TEST_CASE("a malformed replication-offset-checkpoint fails the open with kafka_storage_error",
          "[replication][broker]") {
  fixture f;
  {
    auto b1 = f.open(1);
    image_builder ib;
    ib.brokers({1}).topic("t", {{1}});
    f.apply(ib.img);
    REQUIRE((**f.produce(1, "t", 0, 5, acks_mode::leader)));
    REQUIRE_OK(b1->close());
    f.b.clear();
  }
  const fs::path ckpt = f.dir_of(1) / "t-0" / partition_files::replication_offset_checkpoint;
  const std::string bad =
      GENERATE(as<std::string>{}, "garbage", "1\n1\nt 0 5\n", "0\n2\nt 0 5\n", "0\n1\nt 0 x\n", "0\n1\nt 0\n",
               "0\n1\nt 0 -3\n", "0\n1\nt 0 5 6\n", "0\nx\n", "0\n1\nt 0 99999999999999999999\n");
  INFO("checkpoint: " << bad);
  write_text(ckpt, bad);
  auto r = broker::open(f.dir_of(1), f.config(1));
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::kafka_storage_error);
  // The failed open released the directory: a good checkpoint opens again.
  write_text(ckpt, "0\n1\nt 0 2\n");
  auto ok = broker::open(f.dir_of(1), f.config(1));
  REQUIRE(ok);
  CHECK((*(*ok)->dir().get_partition("t", partition_id(0)))->high_watermark() == offset(2));
}

// partition_replica from several threads at once: a producer appending on the leader, two
// follower threads fetching, a consumer reading below the high watermark, and a thread
// proposing and applying ISR changes. Checks the mutex claims (run under TSan) and that the
// followers end byte-identical to the leader.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <brook/core/clock.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/replication/partition_replica.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/temp_dir.hpp"

using namespace brook;
using brook::testing::manual_clock;

namespace {

struct node {
  std::unique_ptr<test::temp_dir> dir = std::make_unique<test::temp_dir>("brook-replica-mt");
  std::shared_ptr<partition> part;
  std::unique_ptr<partition_replica> rep;
};

node make_node(std::int32_t id, std::shared_ptr<const brook::clock> c) {
  node n;
  log_config cfg;
  cfg.clock = std::move(c);
  auto log = partition_log::open(n.dir->path() / "t-0", cfg);
  REQUIRE(log);
  n.part = std::make_shared<partition>("t", partition_id(0), std::move(*log), nullptr);
  auto r = partition_replica::open(broker_id(id), n.part, leader_epoch_cache::in_memory());
  REQUIRE(r);
  n.rep = std::move(*r);
  return n;
}

std::vector<std::byte> all_bytes(const partition_log& log) {
  std::vector<std::byte> out;
  offset at = log.log_start_offset();
  while (at < log.log_end_offset()) {
    auto s = log.read(at, read_options{1 << 30, std::nullopt});
    REQUIRE(s);
    auto b = s->bytes();
    out.insert(out.end(), b.begin(), b.end());
    at = s->next_offset();
  }
  return out;
}

}  // namespace

TEST_CASE("leader, followers, consumer and ISR housekeeping on separate threads", "[replication][partition_replica]") {
  auto clk = std::make_shared<manual_clock>();
  std::vector<node> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(make_node(i, clk));
  partition_replica& leader = *nodes[0].rep;
  const std::vector<broker_id> all{broker_id{0}, broker_id{1}, broker_id{2}};
  REQUIRE(leader.become_leader(leader_epoch(1), all, all, clk->now_ms()));
  REQUIRE(nodes[1].rep->become_follower(broker_id{0}, leader_epoch(1)));
  REQUIRE(nodes[2].rep->become_follower(broker_id{0}, leader_epoch(1)));

  constexpr int batches = 300;
  std::atomic<bool> produced{false};
  // Catch assertions are not thread-safe: the threads report here, the main thread checks.
  std::mutex errors_mu;
  std::vector<std::string> errors;
  auto report = [&](std::string e) {
    std::lock_guard lk(errors_mu);
    errors.push_back(std::move(e));
  };
  // A thread that made no progress naps instead of spinning: two spinning threads would
  // starve whatever test ctest -j2 runs beside this one.
  auto nap = [] { std::this_thread::sleep_for(std::chrono::microseconds(100)); };
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    record_batch_builder b;
    for (int i = 0; i < batches; ++i) {
      b.reset();
      b.append(1'000, fmt::format("k{}", i), fmt::format("v{}", i));
      auto span = b.finish();
      auto r = leader.append_as_leader(span, clk->now_ms());
      if (!r) report("append: " + r.error().to_string());
      clk->advance(10);
    }
    produced = true;
  });
  for (int f = 1; f <= 2; ++f)
    threads.emplace_back([&, f] {
      partition_replica& me = *nodes[static_cast<std::size_t>(f)].rep;
      while (!produced || me.high_watermark() < leader.log_end_offset() ||
             me.log_end_offset() < leader.log_end_offset()) {
        const auto end_before = me.log_end_offset();
        const auto hw_before = me.high_watermark();
        auto resp = leader.fetch_as_leader(me.make_fetch_request(512), clk->now_ms());
        if (!resp) return report(fmt::format("follower {} fetch: {}", f, resp.error().to_string()));
        auto a = me.apply_fetch_response(*resp);
        if (!a) return report(fmt::format("follower {} apply: {}", f, a.error().to_string()));
        if (me.log_end_offset() == end_before && me.high_watermark() == hw_before) nap();
      }
    });
  threads.emplace_back([&] {  // consumer: never sees past the high watermark
    offset at(0);
    while (!produced || at < leader.log_end_offset()) {
      auto s = leader.part()->read(at);
      if (!s) return report("read: " + s.error().to_string());
      if (s->next_offset() > leader.high_watermark())
        report(fmt::format("read up to {}, past the high watermark {}", s->next_offset(), leader.high_watermark()));
      if (s->next_offset() == at) nap();
      at = s->next_offset();
    }
  });
  threads.emplace_back([&] {  // ISR housekeeping
    while (!produced) {
      auto out = leader.maybe_shrink_isr(clk->now_ms());
      auto in = leader.maybe_expand_isr();
      (void)out;
      (void)in;
      (void)leader.set_isr({broker_id{0}, broker_id{1}, broker_id{2}}, clk->now_ms());
      nap();
    }
  });
  for (auto& t : threads) t.join();
  INFO(fmt::format("{}", fmt::join(errors, "\n")));
  CHECK(errors.empty());

  CHECK(leader.log_end_offset() == offset(batches));
  CHECK(leader.high_watermark() == offset(batches));
  for (int f = 1; f <= 2; ++f) {
    CHECK(nodes[static_cast<std::size_t>(f)].rep->high_watermark() == offset(batches));
    CHECK(all_bytes(nodes[static_cast<std::size_t>(f)].part->log()) == all_bytes(nodes[0].part->log()));
  }
}

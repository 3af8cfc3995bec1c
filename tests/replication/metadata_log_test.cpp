// metadata_log: appends as whole batches in Kafka's bytes, reopen replays to an
// equal image, watchers fire once per append in order (also re-entrantly and
// from several threads), a refused batch writes nothing, a crash at every byte
// of the last batch leaves the image before it, a damaged record stops the
// open, a read-only open next to the writer (no lock, nothing written, a torn
// tail ignored, appends refused), and a seeded property test of random record
// sequences against an independent model.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <brook/format/record_batch.hpp>
#include <brook/replication/metadata_log.hpp>

#include "support/crash_helpers.hpp"
#include "support/format_helpers.hpp"
#include "support/replication_helpers.hpp"
#include "support/seeds.hpp"

using namespace brook;
using brook::test::ids;
using namespace brook::metadata;
namespace sfs = std::filesystem;
using brook::test::scratch_dir;

namespace {

register_broker_record broker(std::int32_t id, std::int64_t epoch, bool fenced = false) {
  register_broker_record r;
  r.broker_id = broker_id(id);
  r.broker_epoch = epoch;
  r.fenced = fenced;
  return r;
}

partition_record part(const uuid& t, std::int32_t p, ids replicas, ids isr, std::int32_t leader) {
  partition_record r;
  r.partition_id = partition_id(p);
  r.topic_id = t;
  r.replicas = std::move(replicas);
  r.isr = std::move(isr);
  r.leader = broker_id(leader);
  r.leader_epoch = leader_epoch(0);
  r.partition_epoch = 0;
  return r;
}

/// Small preallocated indexes: thousands of opens stay fast.
metadata_log_options small() {
  metadata_log_options o;
  o.log.segment_index_bytes = 4096;
  return o;
}

std::unique_ptr<metadata_log> open_ok(const sfs::path& root) {
  auto m = metadata_log::open(root, small());
  if (!m) FAIL(m.error().to_string());
  return std::move(*m);
}

sfs::path segment_file(const sfs::path& root) {
  return root / metadata_log::partition_dir_name / "00000000000000000000.log";
}

}  // namespace

TEST_CASE("append then reopen replays to an equal image", "[replication][metadata_log]") {
  scratch_dir dir("brook-mlog");
  std::mt19937_64 rng(1);
  const uuid t = uuid::random(rng);
  cluster_image expected;
  {
    auto m = open_ok(dir.path());
    CHECK(m->image()->brokers().empty());
    CHECK(m->end_offset() == offset(0));
    auto a = m->append({broker(1, 1), broker(2, 2), broker(3, 3)}, 1);
    REQUIRE(a.has_value());
    CHECK(a->base_offset == offset(0));
    CHECK(a->last_offset == offset(2));
    auto b = m->append(
        {topic_record{"orders", t}, part(t, 0, {1, 2, 3}, {1, 2, 3}, 1), part(t, 1, {2, 3, 1}, {2, 3, 1}, 2)});
    REQUIRE(b.has_value());
    CHECK(b->base_offset == offset(3));
    partition_change_record c;
    c.topic_id = t;
    c.partition_id = partition_id(0);
    c.isr = ids{2, 3};
    c.leader = broker_id{2};
    REQUIRE(m->append({c, fence_broker_record{broker_id{1}, 1}}, 4).has_value());
    expected = *m->image();
    CHECK(expected.controller_epoch() == 4);
    CHECK(expected.partition("orders", partition_id{0})->leader_epoch == leader_epoch{1});
    CHECK(expected.partition("orders", partition_id{0})->controller_epoch == 4);
    CHECK(expected.partition("orders", partition_id{1})->controller_epoch == 1);
    CHECK(b->image->partition("orders", partition_id{0})->leader == broker_id{1});  // snapshots are immutable
  }
  auto m = open_ok(dir.path());
  CHECK(*m->image() == expected);
  CHECK(m->end_offset() == offset(8));

  SECTION("each append is one batch: Kafka's bytes, null keys, controller epoch as partitionLeaderEpoch") {
    auto bytes = brook::test::read_file_bytes(segment_file(dir.path()));
    std::vector<std::int32_t> epochs;
    std::vector<std::size_t> counts;
    std::size_t pos = 0;
    while (pos < bytes.size()) {
      auto v = record_batch_view::parse(std::span<const std::byte>(bytes).subspan(pos));
      REQUIRE(v.has_value());
      epochs.push_back(v->header().partition_leader_epoch);
      counts.push_back(v->record_count());
      for (const auto& r : *v) {
        CHECK(r.key().is_null());
        CHECK(decode_metadata_record(r.value().span()).has_value());
      }
      pos += v->size_bytes();
    }
    CHECK(epochs == std::vector<std::int32_t>{1, 1, 4});
    CHECK(counts == std::vector<std::size_t>{3, 3, 2});
  }
  SECTION("a stale controller epoch is refused") {
    auto r = m->append({no_op_record{}}, 3);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == errc::invalid_request);
    REQUIRE(m->append({no_op_record{}}, 5).has_value());
    CHECK(m->image()->controller_epoch() == 5);
    CHECK(m->append({no_op_record{}}).has_value());  // default: the current epoch
    CHECK(m->image()->controller_epoch() == 5);
  }
  SECTION("bad arguments") {
    CHECK(m->append({}).error() == errc::invalid_argument);
    CHECK(m->append({no_op_record{}}, -1).error() == errc::invalid_argument);
    REQUIRE(m->close().has_value());
    CHECK(m->append({no_op_record{}}).error() == errc::closed);
  }
}

TEST_CASE("a refused batch writes nothing and notifies nobody", "[replication][metadata_log]") {
  scratch_dir dir("brook-mlog");
  auto m = open_ok(dir.path());
  int calls = 0;
  m->watch([&](const auto&, const auto&) { ++calls; });
  REQUIRE(m->append({broker(1, 1)}).has_value());
  const auto size = sfs::file_size(segment_file(dir.path()));
  const auto before = m->image();
  auto r =
      m->append({broker(2, 1), topic_record{"t", uuid::from_parts(5, 5)}, unregister_broker_record{broker_id{9}, 1}});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error() == errc::invalid_request);
  CHECK(r.error().message().find("record 2 of 3") != std::string::npos);
  CHECK(m->image() == before);
  CHECK(m->end_offset() == offset(1));
  CHECK(sfs::file_size(segment_file(dir.path())) == size);
  CHECK(calls == 1);

  SECTION("a batch over max.message.bytes is refused without poisoning the log") {
    register_broker_record big = broker(7, 1);
    for (int i = 0; i < 40; ++i) big.endpoints.push_back({fmt::format("e{}", i), std::string(30000, 'h'), 1, 0});
    auto t = m->append({big});
    REQUIRE_FALSE(t.has_value());
    CHECK(t.error() == errc::record_too_large);
    CHECK(m->image() == before);
    REQUIRE(m->append({broker(2, 1)}).has_value());
    CHECK(calls == 2);
  }
  SECTION("a string Kafka could not encode is refused before encoding") {
    register_broker_record rb = broker(7, 1);
    rb.rack = std::string(40000, 'r');
    CHECK(m->append({rb}).error() == errc::invalid_request);
  }
}

TEST_CASE("watchers fire once per append with the new image, in order", "[replication][metadata_log]") {
  scratch_dir dir("brook-mlog");
  auto m = open_ok(dir.path());
  std::vector<std::pair<std::shared_ptr<const cluster_image>, std::vector<metadata_record>>> seen;
  auto id = m->watch([&](const auto& img, const auto& recs) { seen.emplace_back(img, recs); });
  auto a = m->append({broker(1, 1)});
  auto b = m->append({broker(2, 2), fence_broker_record{broker_id{1}, 1}});
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].first == a->image);
  CHECK(seen[1].first == b->image);
  CHECK(seen[1].second == std::vector<metadata_record>{broker(2, 2), fence_broker_record{broker_id{1}, 1}});
  CHECK(m->unwatch(id));
  CHECK_FALSE(m->unwatch(id));
  REQUIRE(m->append({broker(3, 3)}).has_value());
  CHECK(seen.size() == 2);

  SECTION("a watcher may append: delivered after it returns, no deadlock") {
    std::vector<std::size_t> broker_counts;
    m->watch([&](const auto& img, const auto&) {
      broker_counts.push_back(img->brokers().size());
      if (img->brokers().size() == 4) REQUIRE(m->append({broker(5, 5)}).has_value());
    });
    REQUIRE(m->append({broker(4, 4)}).has_value());
    CHECK(broker_counts == std::vector<std::size_t>{4, 5});
  }
  SECTION("appends from several threads: one call per append, in offset order") {
    std::mutex mu;
    std::vector<std::size_t> counts;
    m->watch([&](const auto& img, const auto&) {
      std::lock_guard lk(mu);
      counts.push_back(img->brokers().size());
    });
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {  // Catch assertions are not thread-safe: count failures instead
        for (int i = 0; i < 25; ++i)
          if (!m->append({broker(100 + t * 100 + i, 1)})) ++failures;
      });
    for (auto& th : threads) th.join();
    CHECK(failures == 0);
    REQUIRE(counts.size() == 100);
    for (std::size_t i = 0; i < counts.size(); ++i) CHECK(counts[i] == 3 + 1 + i);
  }
}

TEST_CASE("a crash at every byte of the last batch leaves the image before it", "[replication][metadata_log]") {
  scratch_dir dir("brook-mlog");
  std::mt19937_64 rng(3);
  const uuid t = uuid::random(rng);
  auto m = open_ok(dir.path());
  REQUIRE(m->append({broker(1, 1), broker(2, 2)}, 1).has_value());
  REQUIRE(m->append({topic_record{"orders", t}, part(t, 0, {1, 2}, {1, 2}, 1)}, 1).has_value());
  const cluster_image before = *m->image();
  const offset end_before = m->end_offset();
  const auto size_before = sfs::file_size(segment_file(dir.path()));
  partition_change_record c;
  c.topic_id = t;
  c.partition_id = partition_id(0);
  c.leader = broker_id{2};
  REQUIRE(m->append({c, part(t, 1, {2, 1}, {2, 1}, 2), unfence_broker_record{broker_id{1}, 1}}, 2).has_value());
  const cluster_image after = *m->image();
  const auto size_after = sfs::file_size(segment_file(dir.path()));
  REQUIRE(size_after > size_before);

  for (auto cut = size_before; cut <= size_after; ++cut) {
    INFO("cut at byte " << cut << " of " << size_after);
    scratch_dir copy("brook-mlog-cut");
    brook::test::copy_dir_files(dir.path() / metadata_log::partition_dir_name,
                                copy.path() / metadata_log::partition_dir_name);
    brook::test::cut_file(segment_file(copy.path()), cut);
    auto r = metadata_log::open(copy.path(), small());
    REQUIRE(r.has_value());
    if (cut == size_after) {
      CHECK(*(*r)->image() == after);
    } else {
      CHECK(*(*r)->image() == before);
      CHECK((*r)->end_offset() == end_before);
      REQUIRE((*r)->append({no_op_record{}}, 2).has_value());  // and the log goes on from there
    }
  }
}

TEST_CASE("an undecodable record stops the open, naming its offset", "[replication][metadata_log]") {
  scratch_dir dir("brook-mlog");
  {
    auto log = partition_log::open(dir.path() / metadata_log::partition_dir_name);
    REQUIRE(log.has_value());
    record_batch_builder b;
    b.append(0, nullable_bytes::null(),
             nullable_bytes(std::span<const std::byte>(encode_metadata_record(broker(1, 1)))));
    const auto bad = brook::test::from_hex("010c00");  // FeatureLevelRecord: not one brook reads
    b.append(0, nullable_bytes::null(), nullable_bytes(std::span<const std::byte>(bad)));
    REQUIRE((*log)->append(b.finish()).has_value());
  }
  auto m = metadata_log::open(dir.path());
  REQUIRE_FALSE(m.has_value());
  CHECK(m.error() == errc::corrupt_message);
  INFO(m.error().message());
  CHECK(m.error().message().find("offset 1") != std::string::npos);
}

// ------------------------------------------------------------------ property test

namespace {

/// An independent model of the image: just what the records say, replayed by hand.
struct model {
  struct part_m {
    std::vector<broker_id> replicas, isr;
    broker_id leader{-1};
    brook::leader_epoch leader_epoch{0};
    std::int32_t partition_epoch = 0;
  };
  struct topic_m {
    uuid id;
    std::vector<part_m> parts;
  };
  std::map<broker_id, std::pair<std::int64_t, bool>> brokers;  // id -> (epoch, fenced)
  std::map<std::string, topic_m> topics;
  std::int32_t epoch = -1;  // until the first batch
};

void check_equal(const cluster_image& img, const model& m) {
  REQUIRE(img.brokers().size() == m.brokers.size());
  for (const auto& [id, eb] : m.brokers) {
    const broker_registration* b = img.broker(id);
    REQUIRE(b != nullptr);
    CHECK(b->epoch == eb.first);
    CHECK(b->fenced == eb.second);
  }
  REQUIRE(img.topics().size() == m.topics.size());
  for (const auto& [name, tm] : m.topics) {
    const topic_state* t = img.topic(name);
    REQUIRE(t != nullptr);
    CHECK(t->id == tm.id);
    REQUIRE(t->partitions.size() == tm.parts.size());
    for (std::size_t i = 0; i < tm.parts.size(); ++i) {
      const auto& p = t->partitions[i];
      const auto& q = tm.parts[i];
      CHECK(p.replicas == q.replicas);
      CHECK(p.isr == q.isr);
      CHECK(p.leader == q.leader);
      CHECK(p.leader_epoch == q.leader_epoch);
      CHECK(p.partition_epoch == q.partition_epoch);
      CHECK(p.offline() == (q.leader == broker_id{-1}));
      CHECK(p.under_replicated() == (q.isr.size() < q.replicas.size()));
    }
  }
  CHECK(img.controller_epoch() == m.epoch);
}

std::vector<broker_id> random_subset(std::mt19937_64& rng, const std::vector<broker_id>& of, bool nonempty) {
  std::vector<broker_id> out;
  for (auto x : of)
    if (rng() % 3 != 0) out.push_back(x);
  if (nonempty && out.empty()) out.push_back(of[rng() % of.size()]);
  return out;
}

/// One valid record against m (and applies it to m).
metadata_record valid_record(std::mt19937_64& rng, model& m, std::int64_t& next_epoch, int& next_topic) {
  for (;;) {
    switch (rng() % 8) {
      case 0: {  // register a new or re-register a known broker
        const broker_id id{static_cast<std::int32_t>(rng() % 8)};
        const bool fenced = rng() % 2;
        const std::int64_t e = next_epoch++;
        m.brokers[id] = {e, fenced};
        return broker(id.value(), e, fenced);
      }
      case 1:
      case 2: {  // fence / unfence / unregister
        if (m.brokers.empty()) continue;
        auto it = std::next(m.brokers.begin(), static_cast<long>(rng() % m.brokers.size()));
        const auto id = it->first;
        const auto e = it->second.first;
        switch (rng() % 4) {
          case 0: it->second.second = true; return fence_broker_record{id, e};
          case 1: it->second.second = false; return unfence_broker_record{id, e};
          case 2: it->second.second = false; return broker_registration_change_record{id, e, -1, 0};
          default: m.brokers.erase(it); return unregister_broker_record{id, e};
        }
      }
      case 3: {  // a topic
        std::string name = fmt::format("t{}", next_topic++);
        const uuid id = uuid::random(rng);
        m.topics[name] = model::topic_m{id, {}};
        return topic_record{name, id};
      }
      case 4: {  // a partition of a topic
        if (m.topics.empty()) continue;
        auto it = std::next(m.topics.begin(), static_cast<long>(rng() % m.topics.size()));
        ids replicas;
        for (std::int32_t b = 0; b < 6; ++b)
          if (rng() % 2) replicas.push_back(broker_id(b));
        if (replicas.empty()) replicas.push_back(broker_id(0));
        std::shuffle(replicas.begin(), replicas.end(), rng);
        auto isr = random_subset(rng, replicas, true);
        const broker_id leader = rng() % 5 == 0 ? broker_id{-1} : isr[rng() % isr.size()];
        const auto p = static_cast<std::int32_t>(it->second.parts.size());
        it->second.parts.push_back({replicas, isr, leader, leader_epoch{0}, 0});
        return part(it->second.id, p, replicas, isr, leader.value());
      }
      case 5:
      case 6: {  // a partition change
        if (m.topics.empty()) continue;
        auto it = std::next(m.topics.begin(), static_cast<long>(rng() % m.topics.size()));
        if (it->second.parts.empty()) continue;
        const auto p = rng() % it->second.parts.size();
        auto& q = it->second.parts[p];
        partition_change_record c;
        c.topic_id = it->second.id;
        c.partition_id = partition_id(static_cast<std::int32_t>(p));
        if (rng() % 2) {
          c.isr = random_subset(rng, q.replicas, true);
          q.isr = *c.isr;
        }
        const bool leader_ok =
            q.leader == broker_id{-1} || std::find(q.isr.begin(), q.isr.end(), q.leader) != q.isr.end();
        if (!leader_ok || rng() % 2) {
          c.leader = rng() % 6 == 0 ? broker_id{-1} : q.isr[rng() % q.isr.size()];
          q.leader = c.leader;
          ++q.leader_epoch;
        }
        ++q.partition_epoch;
        return c;
      }
      default: {  // remove a topic
        if (m.topics.empty()) continue;
        auto it = std::next(m.topics.begin(), static_cast<long>(rng() % m.topics.size()));
        const uuid id = it->second.id;
        m.topics.erase(it);
        return remove_topic_record{id};
      }
    }
  }
}

/// A record the model says must be refused.
metadata_record invalid_record(std::mt19937_64& rng, const model& m) {
  switch (rng() % 4) {
    case 0:
      if (!m.topics.empty()) return topic_record{m.topics.begin()->first, uuid::random(rng)};
      return remove_topic_record{uuid::random(rng)};
    case 1:
      if (!m.brokers.empty())
        return fence_broker_record{m.brokers.begin()->first, m.brokers.begin()->second.first + 1000};
      return unfence_broker_record{broker_id{1}, 1};
    case 2: {
      partition_change_record c;
      c.topic_id = m.topics.empty() ? uuid::random(rng) : m.topics.begin()->second.id;
      c.partition_id =
          partition_id(m.topics.empty() ? 0 : static_cast<std::int32_t>(m.topics.begin()->second.parts.size()));
      return c;
    }
    default: return unregister_broker_record{broker_id{99}, 1};
  }
}

}  // namespace

TEST_CASE("random record sequences match a model, across reopens", "[replication][metadata_log]") {
  const auto seed = brook::test::property_seed(1);
  INFO("seed " << seed << " (BROOK_SEED_BASE " << brook::test::seed_base() << " + 1: rerun with the same base)");
  std::mt19937_64 rng(seed);
  scratch_dir dir("brook-mlog-prop");
  auto m = open_ok(dir.path());
  model mod;
  std::int64_t next_epoch = 1;
  int next_topic = 0;
  std::size_t notified = 0, appended = 0;
  m->watch([&](const auto&, const auto&) { ++notified; });
  for (int step = 0; step < 300; ++step) {
    INFO("step " << step);
    model next = mod;
    std::vector<metadata_record> recs;
    const auto n = 1 + rng() % 4;
    const bool poison = rng() % 6 == 0;
    const auto poison_at = rng() % n;
    for (std::size_t i = 0; i < n; ++i) {
      if (poison && i == poison_at)
        recs.push_back(invalid_record(rng, next));
      else
        recs.push_back(valid_record(rng, next, next_epoch, next_topic));
    }
    next.epoch = std::max(mod.epoch, 0) + (rng() % 10 == 0 ? 1 : 0);
    const offset end = m->end_offset();
    auto r = m->append(recs, next.epoch);
    if (poison) {
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error() == errc::invalid_request);
      CHECK(m->end_offset() == end);
    } else {
      if (!r) FAIL(r.error().to_string());
      mod = std::move(next);
      ++appended;
      CHECK(m->end_offset() == end + static_cast<std::int64_t>(n));
    }
    check_equal(*m->image(), mod);
    if (step % 60 == 59) {
      const cluster_image before = *m->image();
      REQUIRE(m->close().has_value());
      m.reset();
      m = open_ok(dir.path());
      CHECK(*m->image() == before);
      m->watch([&](const auto&, const auto&) { ++notified; });
    }
  }
  CHECK(notified == appended);
}

namespace {

/// Every file under `dir` with its bytes and modification time: what "writes nothing" compares.
std::map<std::string, std::pair<std::vector<std::byte>, sfs::file_time_type>> dir_state(const sfs::path& dir) {
  std::map<std::string, std::pair<std::vector<std::byte>, sfs::file_time_type>> out;
  for (const auto& de : sfs::recursive_directory_iterator(dir))
    if (de.is_regular_file())
      out[sfs::relative(de.path(), dir).string()] = {brook::test::read_file_bytes(de.path()),
                                                     sfs::last_write_time(de.path())};
  return out;
}

metadata_log_options read_only() {
  metadata_log_options o = small();
  o.read_only = true;
  return o;
}

}  // namespace

TEST_CASE("a read-only open replays next to the writer, takes no lock and writes nothing",
          "[replication][metadata_log]") {
  scratch_dir dir("brook-mlog");
  std::mt19937_64 rng(5);
  const uuid t = uuid::random(rng);
  auto w = open_ok(dir.path());
  REQUIRE(w->append({broker(1, 1), broker(2, 2)}, 1).has_value());
  REQUIRE(w->append({topic_record{"orders", t}, part(t, 0, {1, 2}, {1, 2}, 1)}, 1).has_value());
  const auto before = dir_state(dir.path());

  // The writer holds the log's lock: a second writable open fails, a read-only one does not.
  auto second = metadata_log::open(dir.path(), small());
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error() == errc::log_dir_locked);
  auto ro = metadata_log::open(dir.path(), read_only());
  if (!ro) FAIL(ro.error().to_string());
  auto& r = **ro;
  CHECK(*r.image() == *w->image());
  CHECK(r.end_offset() == w->end_offset());

  auto refused = r.append({no_op_record{}});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == errc::invalid_request);
  CHECK(refused.error().message().find("read-only") != std::string::npos);
  CHECK(r.append({broker(3, 3)}, 2).error() == errc::invalid_request);
  CHECK(*r.image() == *w->image());  // the refused records changed nothing
  REQUIRE(r.close().has_value());
  ro->reset();
  CHECK(dir_state(dir.path()) == before);

  // The writer goes on while a reader is open, and a later read-only open sees its appends.
  auto ro2 = metadata_log::open(dir.path(), read_only());
  REQUIRE(ro2.has_value());
  partition_change_record shrink;
  shrink.topic_id = t;
  shrink.partition_id = partition_id(0);
  shrink.isr = ids{1};
  REQUIRE(w->append({shrink}, 2).has_value());
  CHECK((*ro2)->image()->partition("orders", partition_id{0})->isr.size() == 2);  // a snapshot of when it opened
  auto ro3 = metadata_log::open(dir.path(), read_only());
  REQUIRE(ro3.has_value());
  CHECK(*(*ro3)->image() == *w->image());
  CHECK((*ro3)->image()->partition("orders", partition_id{0})->isr == ids{1});
  CHECK((*ro3)->image()->controller_epoch() == 2);
}

TEST_CASE("a read-only open ignores a torn tail without cutting it, and creates nothing",
          "[replication][metadata_log]") {
  scratch_dir dir("brook-mlog");

  SECTION("a missing log is log_dir_not_found and nothing is created") {
    auto r = metadata_log::open(dir.path() / "nowhere", read_only());
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error() == errc::log_dir_not_found);
    CHECK_FALSE(sfs::exists(dir.path() / "nowhere"));
  }
  SECTION("a batch cut short is left on disk and out of the image") {
    {
      auto m = open_ok(dir.path());
      REQUIRE(m->append({broker(1, 1)}, 1).has_value());
      REQUIRE(m->close().has_value());
    }
    const auto whole = sfs::file_size(segment_file(dir.path()));
    std::vector<cluster_image> images;
    {
      auto m = open_ok(dir.path());
      images.push_back(*m->image());
      REQUIRE(m->append({broker(2, 2), broker(3, 3)}, 1).has_value());
      images.push_back(*m->image());
      REQUIRE(m->close().has_value());
    }
    const auto full = sfs::file_size(segment_file(dir.path()));
    brook::test::cut_file(segment_file(dir.path()), whole + (full - whole) / 2);  // a crash mid-append
    const auto before = dir_state(dir.path());
    {
      auto r = metadata_log::open(dir.path(), read_only());
      if (!r) FAIL(r.error().to_string());
      CHECK(*(*r)->image() == images[0]);
      CHECK((*r)->end_offset() == offset(1));
    }
    CHECK(dir_state(dir.path()) == before);  // the torn bytes are still there
    auto m = open_ok(dir.path());            // a writable open cuts them
    CHECK(*m->image() == images[0]);
    CHECK(sfs::file_size(segment_file(dir.path())) == whole);
  }
}

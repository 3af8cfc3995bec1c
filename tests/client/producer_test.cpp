#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <brook/client/producer.hpp>

#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"

using namespace brook;
using brook::test::temp_dir;

namespace {
std::unique_ptr<data_dir> make_dd(const fs::path& p, int partitions = 4, std::string topic = "t") {
  auto dd = data_dir::open(p);
  REQUIRE(dd);
  topic_config tc;
  tc.partitions = partitions;
  REQUIRE((*dd)->create_topic(topic, tc));
  return std::move(*dd);
}
std::vector<test::plain_record> read_partition(data_dir& dd, const std::string& topic, int p) {
  return test::read_all((*dd.get_partition(topic, partition_id(p)))->log());
}
}  // namespace

TEST_CASE("keyed records go to murmur2(key) % partitions, in send order", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 5);
  producer p(*dd);
  std::vector<std::future<result<record_metadata>>> futs;
  for (int i = 0; i < 200; ++i) {
    std::string key = "key-" + std::to_string(i % 17);
    std::string value = std::to_string(i);
    futs.push_back(p.send(producer_record{"t", std::nullopt, key, value, {}, 1000 + i}));
  }
  REQUIRE(p.flush());
  std::map<int, std::int64_t> next_offset;
  for (int i = 0; i < 200; ++i) {
    auto r = futs[i].get();
    REQUIRE(r);
    std::string key = "key-" + std::to_string(i % 17);
    CHECK(r->partition == partition_for_key(key, 5));
    CHECK(r->topic == "t");
    CHECK(r->timestamp == 1000 + i);
    CHECK(r->offset == offset(next_offset[r->partition.value()]++));  // gapless, in send order
  }
  std::size_t total = 0;
  for (int part = 0; part < 5; ++part) {
    for (const auto& rec : read_partition(*dd, "t", part)) {
      CHECK(partition_for_key(rec.key, 5) == partition_id(part));
      ++total;
    }
  }
  CHECK(total == 200);
}

TEST_CASE("explicit partitions, callbacks and headers", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 3);
  producer p(*dd);
  record_header hs[2] = {{"trace", "abc"}, {"trace", nullable_bytes::null()}};
  std::atomic<int> ok_count{0};
  for (int i = 0; i < 10; ++i)
    p.send(producer_record{"t", partition_id(2), nullable_bytes::null(), "v", hs, std::nullopt},
           [&](const result<record_metadata>& r) {
             if (r && r->partition == partition_id(2)) ++ok_count;
           });
  REQUIRE(p.flush());
  CHECK(ok_count == 10);
  auto s = (*dd->get_partition("t", partition_id(2)))->read(offset(0));
  REQUIRE(s);
  std::size_t n = 0;
  REQUIRE(s->for_each_record([&](const record_view& r) {
    CHECK(r.key().is_null());
    std::vector<std::pair<std::string, bool>> got;
    for (const auto& h : r.headers()) got.emplace_back(std::string(h.key), h.value.is_null());
    CHECK(got == std::vector<std::pair<std::string, bool>>{{"trace", false}, {"trace", true}});
    ++n;
  }));
  CHECK(n == 10);
}

TEST_CASE("send errors reach the callback or future, never vanish", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 2);
  producer_config pc;
  pc.max_request_size = 1000;
  producer p(*dd, pc);
  SECTION("unknown topic") {
    auto r = p.send(producer_record{"nope", std::nullopt, "k", "v", {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::unknown_topic_or_partition);
  }
  SECTION("unknown partition") {
    auto r = p.send(producer_record{"t", partition_id(7), "k", "v", {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::unknown_topic_or_partition);
  }
  SECTION("record_too_large") {
    std::string big(2000, 'x');
    auto r = p.send(producer_record{"t", std::nullopt, "k", big, {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::record_too_large);
  }
  SECTION("the log refuses the batch (max.message.bytes of the topic)") {
    topic_config tc;
    tc.overrides["max.message.bytes"] = "200";
    REQUIRE(dd->create_topic("small", tc));
    std::string v(300, 'y');
    auto r = p.send(producer_record{"small", std::nullopt, "k", v, {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::record_too_large);
  }
  SECTION("a negative timestamp, alone: its neighbours are written") {  // issue 11 #17
    auto before = p.send(producer_record{"t", partition_id(0), "k", "a", {}, std::nullopt});
    auto bad = p.send(producer_record{"t", partition_id(0), "k", "b", {}, timestamp_ms{-5}});
    auto after = p.send(producer_record{"t", partition_id(0), "k", "c", {}, std::nullopt});
    auto r = bad.get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_timestamp);
    CHECK(before.get());
    CHECK(after.get());
    CHECK(read_partition(*dd, "t", 0).size() == 2);
  }
  SECTION("a record without a key on a compacted topic") {  // a built batch: the log checks the builder's facts
    topic_config tc;
    tc.overrides["cleanup.policy"] = "compact";
    REQUIRE(dd->create_topic("compacted", tc));
    auto keyed = p.send(producer_record{"compacted", partition_id(0), "k", "a", {}, std::nullopt}).get();
    REQUIRE(keyed);
    auto r = p.send(producer_record{"compacted", partition_id(0), nullable_bytes::null(), "b", {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_record);
    CHECK(read_partition(*dd, "compacted", 0).size() == 1);
  }
  SECTION("an internal topic, as Kafka refuses it") {  // issue 11 #12
    REQUIRE(dd->create_internal_topic("__consumer_offsets", topic_config{}));
    auto r = p.send(producer_record{"__consumer_offsets", std::nullopt, "k", "garbage", {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_topic);
    CHECK(read_partition(*dd, "__consumer_offsets", 0).empty());
  }
  SECTION("after the data directory is gone") {  // issue 11 #10: closed, never a use after free
    dd.reset();
    auto r = p.send(producer_record{"t", std::nullopt, "k", "v", {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::closed);
  }
  SECTION("after close") {
    REQUIRE(p.close());
    auto r = p.send(producer_record{"t", std::nullopt, "k", "v", {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::closed);
  }
}

TEST_CASE("a batch refused as too large is split: small records never fail with a big neighbour",
          "[client][producer]") {  // issue 11 #18
  temp_dir t;
  auto dd = make_dd(t.path(), 1);
  topic_config tc;
  tc.overrides["max.message.bytes"] = "1000";
  REQUIRE(dd->create_topic("small", tc));
  producer_config pc;
  pc.linger = std::chrono::milliseconds(60'000);  // the four records share one batch
  producer p(*dd, pc);
  std::vector<std::future<result<record_metadata>>> futs;
  const std::string big(2000, 'B');
  const record_header hs[] = {{"h", nullable_bytes(std::string_view("hv"))}};
  futs.push_back(p.send(producer_record{"small", partition_id(0), "k0", "a", hs, 10}));
  futs.push_back(p.send(producer_record{"small", partition_id(0), "k1", big, {}, 11}));
  futs.push_back(p.send(producer_record{"small", partition_id(0), nullable_bytes::null(), "c", {}, 12}));
  futs.push_back(p.send(producer_record{"small", partition_id(0), "k3", "d", {}, 13}));
  REQUIRE(p.flush());
  auto r0 = futs[0].get(), r1 = futs[1].get(), r2 = futs[2].get(), r3 = futs[3].get();
  REQUIRE(r0);
  REQUIRE_FALSE(r1);
  CHECK(r1.error() == errc::record_too_large);
  REQUIRE(r2);
  REQUIRE(r3);
  CHECK(r0->offset == offset(0));  // in send order
  CHECK(r2->offset == offset(1));
  CHECK(r3->offset == offset(2));
  auto part = *dd->get_partition("small", partition_id(0));
  auto s = part->log().read(offset(0));
  REQUIRE(s);
  std::vector<std::string> got;
  bool key_null = false, header_kept = false;
  REQUIRE(s->for_each_record([&](const record_view& rv) {
    got.push_back(rv.value().to_string());
    if (rv.offset() == offset(1)) key_null = rv.key().is_null();
    if (rv.offset() == offset(0))
      for (const auto& hh : rv.headers()) header_kept = hh.key == "h" && hh.value.to_string() == "hv";
  }));
  CHECK(got == std::vector<std::string>{"a", "c", "d"});
  CHECK(key_null);
  CHECK(header_kept);
}

TEST_CASE("batches fill to batch.size, linger closes partial ones", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 1);
  producer_config pc;
  pc.batch_size = 1024;
  pc.linger = std::chrono::milliseconds(60'000);  // only size, flush and close close batches here
  producer p(*dd, pc);
  std::vector<std::future<result<record_metadata>>> futs;
  std::string v(100, 'v');
  for (int i = 0; i < 50; ++i) futs.push_back(p.send(producer_record{"t", std::nullopt, "k", v, {}, 1}));
  REQUIRE(p.flush());
  for (auto& f : futs) REQUIRE(f.get());
  auto part = *dd->get_partition("t", partition_id(0));
  auto s = part->log().read(offset(0), read_options{1 << 20, std::nullopt});
  REQUIRE(s);
  std::vector<std::size_t> sizes;
  REQUIRE(s->for_each_batch([&](const record_batch_view& b) { sizes.push_back(b.size_bytes()); }));
  REQUIRE(sizes.size() > 1);
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    CHECK(sizes[i] <= 1024);
    CHECK(sizes[i] > 1024 - 200);  // full: another record would not have fit
  }
}

TEST_CASE("acks=0 reports offset -1, sticky null keys stay on one partition per batch", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 4);
  producer_config pc;
  pc.acks = acks_mode::none;
  pc.linger = std::chrono::milliseconds(60'000);
  pc.partitioner = std::make_shared<default_partitioner>(42);
  producer p(*dd, pc);
  std::vector<std::future<result<record_metadata>>> futs;
  for (int i = 0; i < 20; ++i)
    futs.push_back(p.send(producer_record{"t", std::nullopt, nullable_bytes::null(), "v", {}, std::nullopt}));
  REQUIRE(p.flush());
  std::set<int> parts;
  for (auto& f : futs) {
    auto r = f.get();
    REQUIRE(r);
    CHECK(r->offset == offset(-1));
    parts.insert(r->partition.value());
  }
  CHECK(parts.size() == 1);  // 20 small records never fill a batch: one sticky partition
}

TEST_CASE("a host partitioner runs without the producer's lock", "[client][producer]") {
  // partition() below waits until another thread's send() got through the producer's lock:
  // had the producer held its lock around partition(), the wait would time out.
  struct gate_partitioner final : brook::partitioner {
    std::promise<void> entered;
    std::shared_future<void> go;
    std::atomic<bool> released{false};
    int calls = 0;  // the first record asks twice (Kafka's abortOnNewBatch): wait on the first
    partition_id partition(std::string_view, nullable_bytes, nullable_bytes, std::int32_t) override {
      if (calls++ == 0) {
        entered.set_value();
        released = go.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
      }
      return partition_id(0);
    }
  };
  temp_dir t;
  auto dd = make_dd(t.path(), 2);
  auto gate = std::make_shared<gate_partitioner>();
  std::promise<void> go;
  gate->go = go.get_future().share();
  CHECK_FALSE(gate->runs_under_producer_lock());
  producer_config pc;
  pc.partitioner = gate;
  producer p(*dd, pc);
  std::future<result<record_metadata>> first;
  auto entered = gate->entered.get_future();  // before the thread that sets it starts
  std::thread sender([&] { first = p.send(producer_record{"t", std::nullopt, nullable_bytes::null(), "a", {}, {}}); });
  // (CHECK, not REQUIRE: the sender thread is joined below whatever happens.)
  CHECK(entered.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  auto second = p.send(producer_record{"t", partition_id(1), nullable_bytes::null(), "b", {}, {}});
  go.set_value();
  sender.join();
  CHECK(gate->released);
  REQUIRE(p.flush());
  CHECK(first.get()->partition == partition_id(0));
  CHECK(second.get()->partition == partition_id(1));
}

TEST_CASE("buffer.memory blocks send() up to max.block.ms, then fails with timeout", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 1);
  producer_config pc;
  pc.buffer_memory = 300;  // less than two of the records below
  pc.linger = std::chrono::milliseconds(60'000);
  pc.batch_size = 1 << 20;
  pc.max_block = std::chrono::milliseconds(50);
  producer p(*dd, pc);
  std::string v(150, 'x');
  SECTION("a stuck sender (its callback blocks) cannot free space: the next send times out") {
    std::promise<void> release;
    auto released = release.get_future().share();
    std::promise<void> entered;
    p.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt}, [&](const result<record_metadata>& r) {
      CHECK(r);
      entered.set_value();
      released.wait();  // callbacks run on the sender thread: it is stuck until released
    });
    auto second = p.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt});
    entered.get_future().wait();
    auto third = p.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt});
    release.set_value();
    auto r2 = second.get();
    auto r3 = third.get();
    // While the first batch's bytes were held, at most one of the later sends could fit.
    CHECK((!r2 || !r3));
    if (!r3) CHECK(r3.error() == errc::timeout);
    if (!r2) CHECK(r2.error() == errc::timeout);
    REQUIRE(p.flush());
  }
  SECTION("an exhausted buffer closes open batches at once, whatever linger.ms says") {
    // The second send waits for the sender thread to write the first batch: a bound of
    // 50 ms would measure the scheduler, not the producer. 30 s still fails the test if the
    // first batch lingered its 60 s.
    producer_config roomy = pc;
    roomy.max_block = std::chrono::milliseconds(30'000);
    producer q(*dd, roomy);
    auto first = q.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt});
    auto second = q.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt});
    CHECK(first.get());  // completes although its linger.ms is 60 s, and second is not refused
    REQUIRE(q.flush());  // second sits in a new batch that would linger 60 s
    CHECK(second.get());
  }
  SECTION("a record larger than buffer.memory is refused at once") {
    std::string huge(400, 'h');
    auto r = p.send(producer_record{"t", std::nullopt, "k", huge, {}, std::nullopt}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::record_too_large);
  }
}

// The sender thread releases each batch right after its callbacks, before it appends the
// next batch of the round, so a send() from a callback that must wait for buffer space gets
// the space of the round's earlier batches at once. (Releasing a round's batches together,
// tried in session 27, made it wait max.block.ms and fail with timeout.)
TEST_CASE("a send() from a callback gets the space of its round's earlier batches", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 1);
  const std::string v(1000, 'v'), big(1500, 'b');
  auto need = [](const std::string& value) {  // what send() counts against buffer.memory
    const producer_record rec{"t", std::nullopt, "k", value, {}, std::nullopt};
    return record_batch_builder::record_size(0, 0, rec.key, rec.value, rec.headers) + batch_layout::header_size;
  };
  producer_config pc;
  pc.buffer_memory = 3 * need(v);  // r0, r1 and r2 at once; r2 and r3 only once r0 and r1 are freed
  REQUIRE(need(v) + need(big) <= pc.buffer_memory);
  REQUIRE(2 * need(v) + need(big) > pc.buffer_memory);
  pc.batch_size = 1;  // each record is a batch of its own, ready at once
  pc.max_block = std::chrono::milliseconds(2'000);
  producer p(*dd, pc);
  std::promise<void> gate_open, in_gate;
  auto gate = gate_open.get_future().share();
  // r0's callback holds the sender thread until r1 and r2 wait in its queue: they are
  // appended in one round.
  p.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt}, [&](const result<record_metadata>& r) {
    CHECK(r);
    in_gate.set_value();
    gate.wait();
  });
  in_gate.get_future().wait();
  auto r1 = p.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt});
  std::promise<result<record_metadata>> r3_done;
  p.send(producer_record{"t", std::nullopt, "k", v, {}, std::nullopt}, [&](const result<record_metadata>& r) {
    CHECK(r);
    // On the sender thread, r2's bytes still held: r3 fits only in r1's freed space.
    p.send(producer_record{"t", std::nullopt, "k", big, {}, std::nullopt},
           [&](const result<record_metadata>& r3) { r3_done.set_value(r3); });
  });
  gate_open.set_value();
  CHECK(r1.get());
  auto r3 = r3_done.get_future().get();
  CHECK(r3);  // not errc::timeout after max.block.ms
  REQUIRE(p.flush());
  CHECK(read_partition(*dd, "t", 0).size() == 4);
}

TEST_CASE("close() drains everything sent from many threads", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 3);
  std::atomic<int> acked{0};
  {
    producer p(*dd);
    std::vector<std::thread> ts;
    for (int th = 0; th < 4; ++th)
      ts.emplace_back([&, th] {
        for (int i = 0; i < 500; ++i) {
          std::string k = std::to_string(th * 1000 + i);
          p.send(producer_record{"t", std::nullopt, k, "v", {}, std::nullopt}, [&](const result<record_metadata>& r) {
            if (r) ++acked;
          });
        }
      });
    for (auto& x : ts) x.join();
    REQUIRE(p.close());
  }
  CHECK(acked == 2000);
  std::size_t total = 0;
  for (int part = 0; part < 3; ++part) total += read_partition(*dd, "t", part).size();
  CHECK(total == 2000);
}

// Issue 11 #11: flush() or close() from the producer's own callback hung forever.
TEST_CASE("flush() and close() from the producer's own callback fail instead of hanging", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 1);
  producer p(*dd);
  std::promise<std::pair<result<void>, result<void>>> inside;
  p.send(producer_record{"t", std::nullopt, "k", "v", {}, std::nullopt}, [&](const result<record_metadata>&) {
    inside.set_value({p.flush(), p.close()});
  });
  auto [flushed, closed] = inside.get_future().get();
  CHECK(flushed.error() == errc::invalid_request);
  CHECK(closed.error() == errc::invalid_request);
  // The producer is still open, and flush() from this thread works.
  auto later = p.send(producer_record{"t", std::nullopt, "k", "w", {}, std::nullopt});
  REQUIRE(p.flush());
  CHECK(later.get());
  // Another producer's flush() from this producer's callback is allowed (it waits for
  // another sender thread).
  producer other(*dd);
  std::promise<result<void>> other_flushed;
  auto pending = other.send(producer_record{"t", std::nullopt, "k", "x", {}, std::nullopt});
  p.send(producer_record{"t", std::nullopt, "k", "y", {}, std::nullopt},
         [&](const result<record_metadata>&) { other_flushed.set_value(other.flush()); });
  CHECK(other_flushed.get_future().get());
  CHECK(pending.get());
  REQUIRE(p.close());
  REQUIRE(other.close());
  CHECK(read_partition(*dd, "t", 0).size() == 4);
}

TEST_CASE("append_in_caller: an idle send() appends in its caller, and callbacks still send", "[client][producer]") {
  temp_dir t;
  auto dd = make_dd(t.path(), 1);
  const auto me = std::this_thread::get_id();
  struct seen {
    std::atomic<int> calls{0};
    std::thread::id thread{};
    std::int64_t offset = -1;
  };
  auto note = [](seen& s) {
    return [&s](const result<record_metadata>& md) {
      s.thread = std::this_thread::get_id();
      if (md) s.offset = md->offset.value();
      s.calls.fetch_add(1, std::memory_order_release);
    };
  };

  SECTION("linger.ms 0: the first send() appends and completes before it returns") {
    producer_config pc;
    pc.linger = std::chrono::milliseconds(0);
    pc.append_in_caller = true;
    producer p(*dd, pc);
    seen first;
    p.send(producer_record{"t", std::nullopt, "k", "a", {}, std::nullopt}, note(first));
    CHECK(first.calls.load(std::memory_order_acquire) == 1);  // already, without flush()
    CHECK(first.thread == me);
    CHECK(first.offset == 0);
    // A send from a callback goes to the sender thread: no send() runs inside another's callback.
    static thread_local int depth = 0;
    seen nested;
    int nested_depth = -1;
    p.send(producer_record{"t", std::nullopt, "k", "b", {}, std::nullopt}, [&](const result<record_metadata>& md) {
      REQUIRE(md);
      // Widens the window in which flush() below may already be waiting when b went to the
      // sender thread: c is then sent after that flush() took its target.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ++depth;
      p.send(producer_record{"t", std::nullopt, "k", "c", {}, std::nullopt}, [&](const result<record_metadata>& inner) {
        nested_depth = depth;
        note(nested)(inner);
      });
      --depth;
    });
    // b may go to the sender thread (the idle rule is timing), and then c is sent after the
    // first flush() began, which does not wait for it. b counts as complete only after its
    // callback returned, so c was sent before the second flush().
    REQUIRE(p.flush());
    REQUIRE(p.flush());
    CHECK(nested.calls == 1);
    CHECK(nested_depth == 0);
    CHECK(nested.offset == 2);
    REQUIRE(p.close());
    auto recs = read_partition(*dd, "t", 0);
    REQUIRE(recs.size() == 3);
    CHECK(recs[0].value == "a");
    CHECK(recs[1].value == "b");
    CHECK(recs[2].value == "c");
  }
  SECTION("a burst after spaced sends still appends in its caller, each record before send() returns") {
    // A pacer that fell behind sends its late records back to back. Averaged over the
    // burst's last few sends the caller looks busy; the spaced sends before it banked the
    // sends that keep the burst in the caller instead of waking the sender thread.
    producer_config pc;
    pc.linger = std::chrono::milliseconds(0);
    pc.append_in_caller = true;
    producer p(*dd, pc);
    std::mutex mu;                         // the callbacks may run on the sender thread
    std::vector<std::thread::id> threads;  // by offset
    bool wrong = false;                    // an error, or an offset out of order
    bool late = false;                     // a callback that had not run when its send() returned
    auto completed = [&] {
      std::lock_guard lk(mu);
      return threads.size();
    };
    auto send = [&](int i) {
      const auto before = completed();
      const std::string value = std::to_string(i);
      p.send(producer_record{"t", std::nullopt, "k", value, {}, std::nullopt}, [&](const result<record_metadata>& md) {
        std::lock_guard lk(mu);
        if (!md || md->offset.value() != static_cast<std::int64_t>(threads.size())) wrong = true;
        threads.push_back(std::this_thread::get_id());
      });
      if (completed() != before + 1) late = true;
    };
    constexpr int spaced = 400, burst = 200;
    for (int i = 0; i < spaced; ++i) {
      send(i);
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    for (int i = spaced; i < spaced + burst; ++i) send(i);
    REQUIRE(p.flush());
    CHECK_FALSE(wrong);
    CHECK_FALSE(late);
    REQUIRE(threads.size() == static_cast<std::size_t>(spaced + burst));
    CHECK(std::count(threads.begin(), threads.end(), me) == spaced + burst);
    REQUIRE(p.close());
    CHECK(read_partition(*dd, "t", 0).size() == static_cast<std::size_t>(spaced + burst));
  }
  SECTION("append_in_caller false (the default), or linger.ms above 0: the sender thread appends") {
    producer_config pc;
    pc.linger = std::chrono::milliseconds(0);
    producer_config lingering;
    lingering.linger = std::chrono::milliseconds(1);
    lingering.append_in_caller = true;
    for (const auto& cfg : {pc, lingering}) {
      producer p(*dd, cfg);
      seen s;
      p.send(producer_record{"t", std::nullopt, "k", "v", {}, std::nullopt}, note(s));
      REQUIRE(p.flush());
      CHECK(s.calls == 1);
      CHECK(s.thread != me);
      REQUIRE(p.close());
    }
  }
}

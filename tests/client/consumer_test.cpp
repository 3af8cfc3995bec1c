#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <limits>
#include <thread>

#include <brook/client/consumer.hpp>
#include <brook/client/producer.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/checks.hpp"
#include "support/log_builders.hpp"
#include "support/temp_dir.hpp"
#include "support/test_codecs.hpp"

using namespace brook;
using brook::test::temp_dir;
using brook::testing::manual_clock;
using namespace std::chrono_literals;

namespace {
struct fixture {
  temp_dir t;
  std::unique_ptr<data_dir> dd;
  explicit fixture(int partitions = 2, topic_config tc = {}) {
    data_dir_options o;
    o.defaults.clock = clock;
    auto r = data_dir::open(t.path(), o);
    REQUIRE(r);
    dd = std::move(*r);
    tc.partitions = partitions;
    REQUIRE(dd->create_topic("t", tc));
  }
  std::shared_ptr<manual_clock> clock = std::make_shared<manual_clock>(1'000'000);
  /// Appends n records (values "<p>:<i>") to partition p directly.
  void fill(int p, int n, timestamp_ms ts = 1000) {
    auto part = *dd->get_partition("t", partition_id(p));
    record_batch_builder b;
    for (int i = 0; i < n; ++i) {
      b.reset();
      std::string v = std::to_string(p) + ":" + std::to_string(i);
      b.append(ts + i, "k", v);
      REQUIRE(part->append(b.finish()));
    }
  }
  consumer make(consumer_config cc = {}) { return consumer(*dd, cc); }
};
topic_partition tp(int p) { return {"t", partition_id(p)}; }
consumer_config earliest() {
  consumer_config cc;
  cc.auto_offset_reset = offset_reset::earliest;
  cc.fetch_max_wait = 0ms;
  return cc;
}
std::vector<owned_record> drain(consumer& c, std::size_t want) {
  std::vector<owned_record> out;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (out.size() < want && std::chrono::steady_clock::now() < deadline) {
    auto r = c.poll(100ms);
    REQUIRE(r);
    for (const auto& rec : *r) out.push_back(rec.to_owned());
  }
  return out;
}
}  // namespace

TEST_CASE("poll returns every record once, per partition in offset order", "[client][consumer]") {
  fixture f(3);
  for (int p = 0; p < 3; ++p) f.fill(p, 100 + p);
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0), tp(1), tp(2)}));
  auto all = drain(c, 303);
  REQUIRE(all.size() == 303);
  std::map<int, std::int64_t> next;
  for (const auto& r : all) {
    CHECK(r.offset.value() == next[r.partition.value()]++);
    CHECK(*r.value == std::to_string(r.partition.value()) + ":" + std::to_string(r.offset.value()));
    CHECK(r.topic == "t");
  }
  CHECK(*c.position(tp(2)) == offset(102));
  auto more = c.poll(0ms);
  REQUIRE(more);
  CHECK(more->empty());
}

TEST_CASE("max.poll.records bounds a poll and nothing is skipped", "[client][consumer]") {
  fixture f(1);
  f.fill(0, 50);
  auto cc = earliest();
  cc.max_poll_records = 7;
  consumer c(*f.dd, cc);
  REQUIRE(c.assign({tp(0)}));
  std::int64_t expect = 0;
  for (int i = 0; i < 8; ++i) {
    auto r = c.poll(0ms);
    REQUIRE(r);
    CHECK(r->size() == (i < 7 ? 7u : 1u));
    for (const auto& rec : *r) CHECK(rec.offset() == offset(expect++));
  }
  CHECK(expect == 50);
}

TEST_CASE("a poll over far-apart offsets sizes its records by the bytes, not the offsets", "[client][consumer]") {
  // Offsets 0..2, then 3,000,000,000..3,000,000,001 (a replica keeps the offsets it is
  // given; compaction leaves gaps the same way). A poll that reserved a record for every
  // offset of the slice would ask for hundreds of gigabytes here.
  fixture f(1);
  auto part = *f.dd->get_partition("t", partition_id(0));
  record_batch_builder b;
  b.reset(offset(0));
  for (int i = 0; i < 3; ++i) b.append(1000 + i, "k", "near" + std::to_string(i));
  REQUIRE_OK(part->append(b.finish(), append_options{.assign_offsets = false}));
  b.reset(offset(3'000'000'000));
  for (int i = 0; i < 2; ++i) b.append(2000 + i, "k", "far" + std::to_string(i));
  REQUIRE_OK(part->append(b.finish(), append_options{.assign_offsets = false}));
  auto cc = earliest();
  cc.max_poll_records = std::numeric_limits<std::size_t>::max();
  consumer c(*f.dd, cc);
  REQUIRE(c.assign({tp(0)}));
  auto all = drain(c, 5);
  REQUIRE(all.size() == 5);
  CHECK(all[2].offset == offset(2));
  CHECK(all[3].offset == offset(3'000'000'000));
  CHECK(all[4].value == "far1");
  CHECK(*c.position(tp(0)) == offset(3'000'000'002));
}

TEST_CASE("auto.offset.reset: earliest, latest, none", "[client][consumer]") {
  fixture f(1);
  f.fill(0, 10);
  SECTION("latest starts at the high watermark") {
    consumer_config cc;
    cc.fetch_max_wait = 0ms;
    consumer c(*f.dd, cc);
    REQUIRE(c.assign({tp(0)}));
    CHECK(*c.position(tp(0)) == offset(10));
    f.fill(0, 3);
    auto r = drain(c, 3);
    REQUIRE(r.size() == 3);
    CHECK(r[0].offset == offset(10));
  }
  SECTION("none has no position to start from") {
    consumer_config cc;
    cc.auto_offset_reset = offset_reset::none;
    consumer c(*f.dd, cc);
    REQUIRE(c.assign({tp(0)}));
    auto r = c.poll(0ms);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::offset_out_of_range);
    REQUIRE(c.seek(tp(0), offset(4)));
    auto ok = c.poll(0ms);
    REQUIRE(ok);
    CHECK(ok->size() == 6);
  }
}

TEST_CASE("a position below the log start resets by policy or fails, never reads garbage", "[client][consumer]") {
  fixture f(1);
  f.fill(0, 30);
  auto part = *f.dd->get_partition("t", partition_id(0));
  SECTION("earliest") {
    consumer c(*f.dd, earliest());
    REQUIRE(c.assign({tp(0)}));
    REQUIRE(c.seek(tp(0), offset(2)));
    REQUIRE(part->log().delete_records_before(offset(20)));
    auto r = c.poll(0ms);
    REQUIRE(r);
    REQUIRE_FALSE(r->empty());
    CHECK((*r)[0].offset() == offset(20));
  }
  SECTION("none") {
    consumer_config cc;
    cc.auto_offset_reset = offset_reset::none;
    consumer c(*f.dd, cc);
    REQUIRE(c.assign({tp(0)}));
    REQUIRE(c.seek(tp(0), offset(2)));
    REQUIRE(part->log().delete_records_before(offset(20)));
    auto r = c.poll(0ms);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::offset_out_of_range);
  }
}

TEST_CASE("reads stop at the high watermark", "[client][consumer]") {
  fixture f(1);
  f.fill(0, 10);
  auto part = *f.dd->get_partition("t", partition_id(0));
  // Append below the partition (as a follower would), without moving the high watermark.
  auto b = test::make_batch(5);
  REQUIRE(part->log().append(b));
  CHECK(part->log_end_offset() == offset(15));
  CHECK(part->high_watermark() == offset(10));
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0)}));
  auto r = drain(c, 10);
  CHECK(r.size() == 10);
  auto more = c.poll(0ms);
  REQUIRE(more);
  CHECK(more->empty());
  part->advance_high_watermark(offset(15));
  CHECK(drain(c, 5).size() == 5);
}

TEST_CASE("seek, pause/resume, beginning/end offsets, offsets_for_times", "[client][consumer]") {
  fixture f(2);
  f.fill(0, 20, 5000);
  f.fill(1, 10, 9000);
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0), tp(1)}));
  c.pause({tp(0)});
  CHECK(c.paused() == std::vector<topic_partition>{tp(0)});
  auto r = drain(c, 10);
  for (const auto& rec : r) CHECK(rec.partition == partition_id(1));
  c.resume({tp(0)});
  REQUIRE(c.seek(tp(0), offset(15)));
  auto r0 = drain(c, 5);
  REQUIRE(r0.size() == 5);
  CHECK(r0[0].offset == offset(15));
  REQUIRE(c.seek_to_beginning({tp(1)}));
  CHECK(*c.position(tp(1)) == offset(0));
  REQUIRE(c.seek_to_end({tp(1)}));
  CHECK(*c.position(tp(1)) == offset(10));
  auto ends = c.end_offsets({tp(0), tp(1)});
  REQUIRE(ends);
  CHECK(ends->at(tp(0)) == offset(20));
  auto t = c.offsets_for_times({{tp(0), 5007}, {tp(1), 99999}});
  REQUIRE(t);
  REQUIRE(t->at(tp(0)));
  CHECK(t->at(tp(0))->off == offset(7));
  CHECK_FALSE(t->at(tp(1)));
  auto bad = c.seek(tp(5), offset(0));
  REQUIRE_FALSE(bad);
  auto unknown = c.assign({{"nope", partition_id(0)}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error() == errc::unknown_topic_or_partition);
  CHECK(c.assignment().size() == 2);  // a failed assign changes nothing
}

TEST_CASE("records stay valid after the segments behind them are deleted", "[client][consumer]") {
  topic_config tc;
  tc.overrides = {{"segment.bytes", "1024"}, {"segment.index.bytes", "1024"}};
  fixture f(1, tc);
  f.fill(0, 60);
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0)}));
  auto r = c.poll(0ms);
  REQUIRE(r);
  REQUIRE_FALSE(r->empty());
  std::vector<std::string> before;
  for (const auto& rec : *r) before.push_back(rec.value().to_string());
  auto part = *f.dd->get_partition("t", partition_id(0));
  REQUIRE(part->log().delete_records_before(offset(59)));
  REQUIRE(part->log().segments().size() == 1);
  std::size_t i = 0;
  for (const auto& rec : *r) CHECK(rec.value().to_string() == before[i++]);
}

TEST_CASE("long poll: fetch.min.bytes waits for data, wakeup interrupts", "[client][consumer]") {
  fixture f(1);
  consumer_config cc = earliest();
  cc.fetch_max_wait = 60s;
  consumer c(*f.dd, cc);
  REQUIRE(c.assign({tp(0)}));
  SECTION("an append wakes the poll") {
    std::thread w([&] { f.fill(0, 1); });
    auto r = c.poll(60s);
    w.join();
    REQUIRE(r);
    CHECK(r->size() == 1);
  }
  SECTION("wakeup from another thread") {
    std::thread w([&] { c.wakeup(); });
    auto r = c.poll(60s);
    w.join();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::wakeup);
    auto again = c.poll(0ms);  // the wakeup is consumed
    REQUIRE(again);
  }
  SECTION("closing the data directory wakes the poll with closed") {  // issue 11 #19
    f.fill(0, 1);
    REQUIRE(c.poll(0ms));  // position past the one record: the next poll waits
    result<void> closed = ok();
    std::thread w([&] { closed = f.dd->close(); });  // Catch's macros stay on this thread
    auto r = c.poll(60s);                            // before the fix: empty success after 60 s
    w.join();
    CHECK_OK(closed);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::closed);
  }
  SECTION("destroying the data directory wakes the poll with closed, never a use after free") {  // issue 11 #10
    f.fill(0, 1);
    REQUIRE(c.poll(0ms));
    std::thread w([&] {
      std::this_thread::sleep_for(20ms);  // usually while the poll waits; either order must hold
      f.dd.reset();
    });
    auto r = c.poll(60s);
    w.join();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::closed);
    auto again = c.poll(0ms);  // the directory is gone: still a named error, under ASan too
    REQUIRE_FALSE(again);
    CHECK(again.error() == errc::closed);
  }
  SECTION("fetch.min.bytes larger than what arrives: returns at the poll timeout with what there is") {
    consumer_config big = earliest();
    big.fetch_min_bytes = 1 << 20;
    big.fetch_max_wait = 60s;
    consumer c2(*f.dd, big);
    REQUIRE(c2.assign({tp(0)}));
    f.fill(0, 2);
    auto r = c2.poll(20ms);
    REQUIRE(r);
    CHECK(r->size() == 2);
  }
}

TEST_CASE("poll_spin: a watching poll still wakes for records and wakeup, and keeps its deadlines",
          "[client][consumer]") {
  fixture f(1);
  consumer_config cc = earliest();
  cc.fetch_max_wait = 60s;
  cc.poll_spin = 50ms;
  consumer c(*f.dd, cc);
  REQUIRE(c.assign({tp(0)}));
  SECTION("records appended while it watches, or after it went to sleep") {
    for (auto delay : {0ms, 1ms, 120ms}) {
      std::thread w([&] {
        std::this_thread::sleep_for(delay);
        f.fill(0, 1);
      });
      auto r = c.poll(60s);
      w.join();
      REQUIRE(r);
      CHECK(r->size() == 1);
    }
  }
  SECTION("wakeup while it watches") {
    std::thread w([&] { c.wakeup(); });
    auto r = c.poll(60s);
    w.join();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::wakeup);
  }
  SECTION("a watch longer than the poll's timeout ends with the poll") {
    consumer_config longer = cc;
    longer.poll_spin = 3600s;
    consumer c2(*f.dd, longer);
    REQUIRE(c2.assign({tp(0)}));
    auto r = c2.poll(5ms);  // would hold the test for an hour if the watch ignored it
    REQUIRE(r);
    CHECK(r->empty());
  }
}

TEST_CASE("a damaged batch is corrupt_message from poll, with its file and byte", "[client][consumer]") {
  fixture f(1);
  f.fill(0, 5);
  auto part = *f.dd->get_partition("t", partition_id(0));
  auto path = part->log().segments().front().path;
  {
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(64);  // inside the first batch's record, under its CRC
    io.put('\x7f');
  }
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0)}));
  SECTION("a damaged record: the error names the file and byte") {
    auto r = c.poll(0ms);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::corrupt_message);
    CHECK_THAT(r.error().message(), Catch::Contains("00000000000000000000.log at byte"));
  }
}

TEST_CASE("a damaged header: the intact batches before it, then corrupt_message", "[client][consumer]") {
  // Issue 11 #6 and #7: byte 80 is in the second batch's header, outside the CRC (its
  // batchLength). The first batch is delivered, then the poll names the damage.
  fixture f(1);
  f.fill(0, 5);
  auto part = *f.dd->get_partition("t", partition_id(0));
  auto path = part->log().segments().front().path;
  {
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(80);
    io.put('\x7f');
  }
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0)}));
  auto first = c.poll(0ms);
  REQUIRE(first);
  REQUIRE(first->size() == 1);
  for (const auto& rec : *first) CHECK(rec.value().to_string() == "0:0");
  auto r = c.poll(0ms);
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::corrupt_message);
  CHECK_THAT(r.error().message(), Catch::Contains("00000000000000000000.log at byte 72"));
}

TEST_CASE("a hole before an empty segment is skipped, never an error", "[client][consumer]") {
  // The log ends at 5000 with offsets 5..4999 absent (as after a follower's roll to a far
  // offset whose append then failed). Before, poll reported corrupt_message at offset 5.
  fixture f(1);
  f.fill(0, 5);
  f.dd.reset();
  { std::ofstream(f.t.path() / "t-0" / "00000000000000005000.log"); }
  data_dir_options o;
  o.defaults.clock = f.clock;
  auto reopened = data_dir::open(f.t.path(), o);
  REQUIRE_OK(reopened);
  f.dd = std::move(*reopened);
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0)}));
  CHECK(drain(c, 5).size() == 5);
  auto empty = c.poll(0ms);
  REQUIRE_OK(empty);
  CHECK(empty->empty());
  CHECK(*c.position(tp(0)) == offset(5000));
  f.fill(0, 2);
  auto after = drain(c, 2);
  REQUIRE(after.size() == 2);
  CHECK(after[0].offset == offset(5000));
  CHECK(after[1].value == "0:1");
}

TEST_CASE("seek_to_beginning and seek_to_end are resolved at the next poll, as in Kafka", "[client][consumer]") {
  fixture f(1);
  f.fill(0, 5);
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0)}));
  REQUIRE_OK(c.seek_to_end({tp(0)}));
  CHECK(c.has_position(tp(0)));
  CHECK(c.awaiting_reset(tp(0)));
  f.fill(0, 3);  // lands before the lookup: the end is 8 now, so nothing is returned
  auto r = c.poll(0ms);
  REQUIRE_OK(r);
  CHECK(r->empty());
  CHECK(*c.position(tp(0)) == offset(8));
  REQUIRE_OK(c.seek_to_beginning({tp(0)}));
  REQUIRE_OK(c.seek(tp(0), offset(6)));  // a later seek replaces the pending one
  auto tail = drain(c, 2);
  REQUIRE(tail.size() == 2);
  CHECK(tail[0].offset == offset(6));
  REQUIRE_OK(c.seek(tp(0), offset(2)));
  auto unassigned = c.seek_to_end({tp(0), tp(3)});
  REQUIRE_FALSE(unassigned);
  CHECK(unassigned.error() == errc::invalid_argument);
  CHECK_FALSE(c.awaiting_reset(tp(0)));
  CHECK(*c.position(tp(0)) == offset(2));  // a refused call changes nothing
}

TEST_CASE("a poll that fails keeps a pending seek to the beginning", "[client][consumer]") {
  fixture f(2);
  f.fill(0, 4);
  f.fill(1, 4);
  consumer_config cc = earliest();
  cc.auto_offset_reset = offset_reset::none;
  consumer c(*f.dd, cc);
  REQUIRE(c.assign({tp(0), tp(1)}));
  REQUIRE_OK(c.seek_to_beginning({tp(0)}));
  // tp(1) has no position and reset policy none: the poll fails after tp(0) may have
  // resolved its seek; the seek must survive for the next poll.
  auto r = c.poll(0ms);
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::offset_out_of_range);
  REQUIRE_OK(c.seek(tp(1), offset(4)));
  auto got = drain(c, 4);
  REQUIRE(got.size() == 4);
  CHECK(got[0].offset == offset(0));
}

TEST_CASE("a partition whose topic is deleted is skipped by poll, not an error", "[client][consumer]") {
  fixture f(1);
  REQUIRE_OK(f.dd->create_topic("u", topic_config{}));
  f.fill(0, 3);
  consumer c(*f.dd, earliest());
  REQUIRE(c.assign({tp(0), {"u", partition_id(0)}}));
  REQUIRE_OK(f.dd->delete_topic("u"));
  auto r = c.poll(0ms);
  REQUIRE_OK(r);
  CHECK(r->size() == 3);
  auto ends = c.end_offsets({{"u", partition_id(0)}});
  REQUIRE_FALSE(ends);
  CHECK(ends.error() == errc::unknown_topic_or_partition);
}

TEST_CASE("a consumer reads any fetch_source: data_dir_source", "[client][consumer]") {
  fixture f(1);
  f.fill(0, 4);
  data_dir_source src(*f.dd);
  consumer c(src, earliest());
  REQUIRE(c.assign({tp(0)}));
  auto r = drain(c, 4);
  REQUIRE(r.size() == 4);
  CHECK(r[3].value == "0:3");
}

namespace {
// A data directory whose logs read (and producers write) all four codecs.
struct codec_fixture {
  temp_dir t;
  std::unique_ptr<data_dir> dd;
  explicit codec_fixture(bool with_codecs = true) {
    data_dir_options o;
    if (with_codecs) o.defaults.codecs = std::make_shared<const compression_codecs>(test::all_codecs());
    auto r = data_dir::open(t.path(), o);
    REQUIRE(r);
    dd = std::move(*r);
    topic_config tc;
    tc.partitions = 1;
    REQUIRE(dd->create_topic("t", tc));
  }
};
}  // namespace

TEST_CASE("compressed batches from the producer read back through the consumer", "[client][consumer][compression]") {
  for (auto type : test::every_compression_type) {
    INFO(compression_name(type));
    codec_fixture f;
    producer_config pc;
    pc.compression = type;
    pc.linger = 50ms;  // batches of many records
    producer p(*f.dd, pc);
    std::vector<std::future<result<record_metadata>>> futs;
    for (int i = 0; i < 300; ++i) {
      const std::string key = fmt::format("k{}", i % 7);
      const std::string value = fmt::format(R"({{"n":{},"pad":"{}"}})", i, std::string(i % 50, 'x'));
      futs.push_back(p.send(producer_record{"t", partition_id(0), key, value, {}, 1000 + i}));
    }
    REQUIRE(p.flush());
    for (auto& fu : futs) REQUIRE_OK(fu.get());
    // Stored compressed: every batch on disk carries the codec.
    auto part = *f.dd->get_partition("t", partition_id(0));
    auto slice = part->read(offset(0), read_options{});
    REQUIRE_OK(slice);
    std::size_t batches = 0;
    REQUIRE_OK(slice->for_each_batch(
        [&](const record_batch_view& v) {
          CHECK(v.compression() == type);
          ++batches;
        },
        batch_check{true, false}));
    CHECK(batches >= 1);
    // A consumer from the beginning, and one starting inside a compressed batch.
    auto c = consumer(*f.dd, earliest());
    REQUIRE(c.assign({tp(0)}));
    auto all = drain(c, 300);
    REQUIRE(all.size() == 300);
    for (int i = 0; i < 300; ++i) {
      CHECK(all[i].offset == offset(i));
      CHECK(*all[i].value == fmt::format(R"({{"n":{},"pad":"{}"}})", i, std::string(i % 50, 'x')));
      CHECK(all[i].timestamp == 1000 + i);
    }
    auto mid = consumer(*f.dd, earliest());
    REQUIRE(mid.assign({tp(0)}));
    REQUIRE(mid.seek(tp(0), offset(137)));
    auto rest = drain(mid, 163);
    REQUIRE(rest.size() == 163);
    CHECK(rest.front().offset == offset(137));
    CHECK(rest.back().offset == offset(299));
  }
}

TEST_CASE("a poll's records from many compressed batches stay valid together", "[client][consumer][compression]") {
  codec_fixture f;
  auto part = *f.dd->get_partition("t", partition_id(0));
  const auto codecs = test::all_codecs();
  record_batch_builder b;
  for (int i = 0; i < 20; ++i) {
    b.reset();
    for (int j = 0; j < 5; ++j) b.append(1000, "k", fmt::format("batch {} record {}", i, j));
    auto s = b.finish(**codecs.get(compression_type::zstd), 3);
    REQUIRE(s);
    REQUIRE(part->append(*s));
  }
  auto cc = earliest();
  cc.max_poll_records = 1000;
  auto c = consumer(*f.dd, cc);
  REQUIRE(c.assign({tp(0)}));
  auto r = c.poll(1s);
  REQUIRE(r);
  REQUIRE(r->size() == 100);
  // Read only after the poll: each record points into its own batch's decompressed bytes.
  for (std::size_t i = 0; i < r->size(); ++i)
    CHECK((*r)[i].value().to_string() == fmt::format("batch {} record {}", i / 5, i % 5));
}

TEST_CASE("codecs that are not enabled fail clearly", "[client][consumer][producer][compression]") {
  SECTION("a producer whose codec is not enabled fails every send") {
    codec_fixture f(false);
    producer_config pc;
    pc.compression = compression_type::snappy;
    producer p(*f.dd, pc);
    auto r = p.send(producer_record{"t", partition_id(0), "k", "v", {}, 1000}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::unsupported_compression_type);
    CHECK_THAT(r.error().message(), Catch::Contains("snappy"));
  }
  SECTION("a level out of range is invalid_config") {
    codec_fixture f;
    producer_config pc;
    pc.compression = compression_type::gzip;
    pc.compression_gzip_level = 10;
    producer p(*f.dd, pc);
    auto r = p.send(producer_record{"t", partition_id(0), "k", "v", {}, 1000}).get();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_config);
  }
  SECTION("a consumer without the codec fails the poll, naming it") {
    codec_fixture f;
    producer_config pc;
    pc.compression = compression_type::lz4;
    producer p(*f.dd, pc);
    REQUIRE_OK(p.send(producer_record{"t", partition_id(0), "k", "v", {}, 1000}).get());
    auto cc = earliest();
    cc.codecs.add(std::make_shared<codecs::gzip_codec>());  // its own codecs, without lz4
    auto c = consumer(*f.dd, cc);
    REQUIRE(c.assign({tp(0)}));
    auto r = c.poll(100ms);
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::unsupported_compression_type);
    CHECK_THAT(r.error().message(), Catch::Contains("lz4"));
  }
}

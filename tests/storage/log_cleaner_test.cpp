// The log cleaner (storage/log_cleaner.hpp) through partition_log::compact and
// data_dir::tick: configuration, keyless records, latest-per-key retention with exact
// offsets, KIP-534 tombstone horizons on a manual clock, min.compaction.lag.ms, the upper
// bound, indexes and reopen after cleaning, crashes at every step of the swap, and a
// seeded property test against an independent record-level model.
//
// Rerun one property seed: BROOK_CLEANER_SEED=17 ./brook_test_storage_log_cleaner
// More histories:          BROOK_CLEANER_CASES=5000 ./brook_test_storage_log_cleaner
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/log_cleaner.hpp>
#include <brook/storage/partition_log.hpp>
#include <brook/storage/topic_config.hpp>
#include <brook/testing/faulty_file_system.hpp>
#include <brook/testing/manual_clock.hpp>

#include "support/crash_helpers.hpp"
#include "support/log_builders.hpp"
#include "support/seeds.hpp"
#include "support/test_codecs.hpp"

namespace {

using namespace brook;
using brook::testing::manual_clock;
namespace sfs = std::filesystem;
using brook::test::full_record;
using brook::test::read_all_full;
using brook::test::scratch_dir;

constexpr timestamp_ms t0 = 1'700'000'000'000;
constexpr std::int64_t day = 86'400'000;

/// One record to append: a null `value` is a tombstone.
struct rec {
  std::string key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::string>> headers = {};
};

log_config compact_config(std::shared_ptr<manual_clock> clk, std::uint64_t segment_bytes = 400) {
  log_config c;
  c.cleanup = cleanup_policy::compact;
  c.segment_bytes = segment_bytes;
  c.segment_index_bytes = 4096;
  c.index_interval_bytes = 64;
  c.max_message_bytes = 8192;
  c.clock = std::move(clk);
  return c;
}

std::unique_ptr<partition_log> open_log(const sfs::path& dir, const log_config& c) {
  auto r = partition_log::open(dir, c);
  REQUIRE(r.has_value());
  return std::move(*r);
}

/// Appends one batch holding `rs`, timestamps ts, ts+1, ...
append_result append(partition_log& log, const std::vector<rec>& rs, timestamp_ms ts) {
  record_batch_builder b;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    std::vector<record_header> hs;
    for (const auto& [k, v] : rs[i].headers) hs.push_back({k, nullable_bytes(v)});
    b.append(ts + static_cast<timestamp_ms>(i), rs[i].key,
             rs[i].value ? nullable_bytes(*rs[i].value) : nullable_bytes::null(), hs);
  }
  auto r = log.append(b.finish());
  REQUIRE(r.has_value());
  return *r;
}

/// key -> value ("" + null flag) of what the log holds, checking each key appears once.
std::map<std::string, std::optional<std::string>> contents(const partition_log& log) {
  std::map<std::string, std::optional<std::string>> out;
  for (const auto& r : read_all_full(log)) {
    INFO(brook::test::describe(r));
    CHECK(out.count(r.rec.key) == 0);
    out[r.rec.key] = r.rec.value_null ? std::nullopt : std::optional<std::string>(r.rec.value);
  }
  return out;
}

std::vector<test::disk_batch> batches_of_dir(const sfs::path& dir) {
  std::vector<sfs::path> logs;
  for (const auto& de : sfs::directory_iterator(dir))
    if (de.path().extension() == ".log") logs.push_back(de.path());
  std::sort(logs.begin(), logs.end());
  std::vector<test::disk_batch> out;
  for (const auto& l : logs)
    for (const auto& b : test::scan_log_file(l)) out.push_back(b);
  return out;
}

std::string files_of(const sfs::path& dir) {
  std::vector<std::string> names;
  for (const auto& de : sfs::directory_iterator(dir)) names.push_back(de.path().filename().string());
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, " "));
}

}  // namespace

// ------------------------------------------------------------------ configuration

TEST_CASE("cleanup.policy and the cleaner settings parse and validate as Kafka's", "[storage][log_cleaner]") {
  for (auto [text, want] :
       std::vector<std::pair<std::string, cleanup_policy>>{{"delete", cleanup_policy::delete_},
                                                           {"compact", cleanup_policy::compact},
                                                           {"compact,delete", cleanup_policy::compact_delete},
                                                           {"delete,compact", cleanup_policy::compact_delete},
                                                           {"compact, delete", cleanup_policy::compact_delete}}) {
    INFO(text);
    auto p = parse_cleanup_policy(text);
    REQUIRE(p);
    CHECK(*p == want);
  }
  for (const char* bad : {"", "compacted", "delete,", "compact;delete", "Compact"}) {
    INFO(bad);
    auto p = parse_cleanup_policy(bad);
    REQUIRE_FALSE(p);
    CHECK(p.error() == errc::invalid_config);
    CHECK_THAT(p.error().message(), Catch::Contains("cleanup.policy"));
  }

  log_config d;
  CHECK(d.cleanup == cleanup_policy::delete_);
  CHECK(d.deletes());
  CHECK_FALSE(d.compacts());
  CHECK(d.delete_retention == std::chrono::milliseconds(86400000));
  CHECK(d.min_cleanable_dirty_ratio == 0.5);
  CHECK(d.min_compaction_lag == std::chrono::milliseconds(0));

  topic_config tc;
  tc.overrides = {{"cleanup.policy", "compact,delete"},
                  {"delete.retention.ms", "1000"},
                  {"min.cleanable.dirty.ratio", "0.25"},
                  {"min.compaction.lag.ms", "60000"}};
  auto c = tc.apply(log_config{});
  REQUIRE(c);
  CHECK(c->compacts());
  CHECK(c->deletes());
  CHECK(c->delete_retention == std::chrono::milliseconds(1000));
  CHECK(c->min_cleanable_dirty_ratio == 0.25);
  CHECK(c->min_compaction_lag == std::chrono::milliseconds(60000));
  for (const char* k :
       {"cleanup.policy", "delete.retention.ms", "min.cleanable.dirty.ratio", "min.compaction.lag.ms"}) {
    const auto& keys = topic_config::known_keys();
    CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
  }

  for (auto [k, v, what] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"cleanup.policy", "shred", "cleanup.policy"},
           {"delete.retention.ms", "-1", "delete.retention.ms"},
           {"delete.retention.ms", "soon", "delete.retention.ms"},
           {"min.cleanable.dirty.ratio", "1.5", "min.cleanable.dirty.ratio"},
           {"min.cleanable.dirty.ratio", "-0.1", "min.cleanable.dirty.ratio"},
           {"min.cleanable.dirty.ratio", "half", "min.cleanable.dirty.ratio"},
           {"min.cleanable.dirty.ratio", "nan", "min.cleanable.dirty.ratio"},
           {"min.compaction.lag.ms", "-5", "min.compaction.lag.ms"}}) {
    topic_config t;
    t.overrides[k] = v;
    INFO(k << "=" << v);
    auto r = t.apply(log_config{});
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_config);
    CHECK_THAT(r.error().message(), Catch::Contains(what));
  }

  scratch_dir tmp;
  log_config bad;
  bad.min_cleanable_dirty_ratio = 2;
  auto o = partition_log::open(tmp / "t-0", bad);
  REQUIRE_FALSE(o);
  CHECK(o.error() == errc::invalid_config);
}

TEST_CASE("a compacted log refuses records without a key and appends nothing", "[storage][log_cleaner]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  auto log = open_log(tmp / "t-0", compact_config(clk));
  append(*log, {{"a", "1"}}, t0);
  record_batch_builder b;
  b.append(t0, "k", "v");
  b.append(t0, nullable_bytes::null(), "no key");
  auto r = log->append(b.finish());
  REQUIRE_FALSE(r);
  CHECK(r.error() == errc::invalid_record);
  CHECK_THAT(r.error().message(), Catch::Contains("compacted topic cannot accept a record without a key"));
  CHECK(log->log_end_offset() == offset(1));
  CHECK(read_all_full(*log).size() == 1);

  SECTION("a delete-policy log takes them, and refuses to be compacted") {
    scratch_dir t2;
    log_config c = compact_config(clk);
    c.cleanup = cleanup_policy::delete_;
    auto l2 = open_log(t2 / "t-0", c);
    record_batch_builder b2;
    b2.append(t0, nullable_bytes::null(), "no key");
    CHECK(l2->append(b2.finish()));
    REQUIRE(l2->roll());
    auto st = l2->compact();
    REQUIRE_FALSE(st);
    CHECK(st.error() == errc::invalid_request);
    CHECK_THAT(st.error().message(), Catch::Contains("cleanup.policy is delete"));
    CHECK(read_all_full(*l2).size() == 1);
  }
}

// ------------------------------------------------------------------ cleaning

TEST_CASE("cleaning keeps the latest record per key at its exact offset", "[storage][log_cleaner]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  const auto dir = tmp / "t-0";
  auto log = open_log(dir, compact_config(clk));
  // 3 keys, 8 rounds of 3-record batches with headers; the last round is in the active segment.
  std::map<std::string, full_record> latest;
  for (int round = 0; round < 8; ++round) {
    std::vector<rec> rs;
    for (int k = 0; k < 3; ++k)
      rs.push_back(
          {fmt::format("key-{}", (k + round) % 3), fmt::format("v{}-{}", round, k), {{"h", fmt::format("{}", round)}}});
    append(*log, rs, t0 + round * 10);
  }
  for (const auto& r : read_all_full(*log)) latest[r.rec.key] = r;
  const auto before = read_all_full(*log);
  const auto segs_before = log->segments();
  REQUIRE(segs_before.size() >= 3);

  auto st = log->compact();
  REQUIRE(st);
  CHECK(st->segments_cleanable == segs_before.size() - 1);
  CHECK(st->records_read == st->records_kept + st->records_removed);
  CHECK(st->tombstones_removed == 0);
  CHECK(st->bytes_after < st->bytes_before);
  CHECK(st->first_dirty_before == offset(0));
  CHECK(st->first_dirty_after == segs_before.back().base_offset);

  const auto after = read_all_full(*log);
  // Every kept record is byte-for-byte a record of before (offset, timestamp, key, value, headers).
  std::map<std::int64_t, full_record> by_offset;
  for (const auto& r : before) by_offset[r.rec.offset] = r;
  std::int64_t prev = -1;
  std::map<std::string, int> per_key;
  for (const auto& r : after) {
    INFO(test::describe(r));
    CHECK(r.rec.offset > prev);
    prev = r.rec.offset;
    REQUIRE(by_offset.count(r.rec.offset));
    CHECK(by_offset[r.rec.offset] == r);
    if (r.rec.offset < segs_before.back().base_offset.value()) ++per_key[r.rec.key];
  }
  for (const auto& [k, n] : per_key) CHECK(n == 1);
  // The latest record of each key survives.
  for (const auto& [k, r] : latest) CHECK(std::find(after.begin(), after.end(), r) != after.end());
  CHECK(log->log_end_offset() == offset(24));

  // Every surviving batch keeps its original baseOffset and lastOffsetDelta.
  std::set<std::pair<std::int64_t, std::int64_t>> orig;
  for (int i = 0; i < 8; ++i) orig.insert({i * 3, i * 3 + 2});
  for (const auto& b : batches_of_dir(dir)) CHECK(orig.count({b.base, b.last}) == 1);

  SECTION("a second pass with nothing new changes nothing") {
    auto files = files_of(dir);
    auto again = log->compact();
    REQUIRE(again);
    CHECK(again->segments_cleaned == 0);
    CHECK(read_all_full(*log) == after);
    CHECK(files_of(dir) == files);
  }
  SECTION("indexes are valid and lookups work; reopen is clean") {
    for (const auto& r : after) {
      auto s = log->read(offset(r.rec.offset));
      REQUIRE(s);
      REQUIRE_FALSE(s->empty());
      std::optional<std::int64_t> first;
      REQUIRE(s->for_each_record([&](const record_view& v) {
        if (!first) first = v.offset().value();
      }));
      CHECK(first == r.rec.offset);
    }
    // Reading from inside a gap finds the next record (possibly after an emptied batch).
    std::optional<std::int64_t> first;
    for (offset at(1); !first && at < log->log_end_offset();) {
      auto gap = log->read(at);
      REQUIRE(gap);
      REQUIRE_FALSE(gap->empty());
      REQUIRE(gap->for_each_record([&](const record_view& v) {
        if (!first) first = v.offset().value();
      }));
      at = gap->next_offset();
    }
    REQUIRE(first);
    CHECK(*first ==
          std::find_if(after.begin(), after.end(), [](const full_record& r) { return r.rec.offset >= 1; })->rec.offset);
    for (const auto& r : after) {
      auto t = log->offset_for_timestamp(r.rec.timestamp);
      REQUIRE(t);
      REQUIRE(*t);
      CHECK((*t)->off.value() <= r.rec.offset);
      CHECK((*t)->timestamp >= r.rec.timestamp);
    }
    REQUIRE(log->close());
    log.reset();
    CHECK(test::check_closed_indexes(dir) == "");
    CHECK(sfs::exists(dir / partition_files::cleaner_offset_checkpoint));
    auto re = open_log(dir, compact_config(clk));
    INFO(fmt::format("{}", fmt::join(re->recovery().events, "\n")));
    CHECK(re->recovery().clean);
    CHECK(read_all_full(*re) == after);
    auto info = re->cleanable();
    REQUIRE(info);
    CHECK(info->first_dirty == segs_before.back().base_offset);
    // Appends continue at the log end.
    auto a = append(*re, {{"key-0", "new"}}, t0 + 1000);
    CHECK(a.base_offset == offset(24));
  }
}

TEST_CASE("compressed batches are cleaned into batches of the same codec", "[storage][log_cleaner][compression]") {
  const auto codecs = std::make_shared<const compression_codecs>(test::all_codecs());
  for (auto type : test::every_compression_type) {
    if (type == compression_type::none) continue;
    INFO(compression_name(type));
    scratch_dir tmp;
    auto clk = std::make_shared<manual_clock>(t0);
    const auto dir = tmp / "t-0";
    auto cfg = compact_config(clk, 400);
    cfg.codecs = codecs;
    auto log = open_log(dir, cfg);
    const auto& codec = **codecs->get(type);
    // 4 keys over 12 rounds of 4-record compressed batches; tombstones for key-3 in round 5.
    for (int round = 0; round < 12; ++round) {
      record_batch_builder b;
      for (int k = 0; k < 4; ++k) {
        const std::string key = fmt::format("key-{}", k);
        const std::string value = fmt::format("v{}-{}-{}", round, k, std::string(40, 'x'));
        b.append(t0 + round, key, (round == 5 && k == 3) ? nullable_bytes::null() : nullable_bytes(value));
      }
      auto batch = b.finish(codec, codec.default_level());
      REQUIRE(batch);
      REQUIRE(log->append(*batch));
    }
    batch_decompressor d(*codecs);
    const auto before = read_all_full(*log, &d);
    REQUIRE(log->segments().size() >= 3);
    auto st = log->compact();
    REQUIRE(st);
    CHECK(st->records_removed > 0);
    const auto after = read_all_full(*log, &d);
    // Below the active segment exactly the latest record of each key there stays, at its
    // offset with its value; the active segment is untouched.
    const offset active = log->segments().back().base_offset;
    std::map<std::string, std::int64_t> latest_below;
    std::map<std::int64_t, full_record> by_offset;
    std::vector<std::int64_t> want, got;
    for (const auto& r : before) {
      by_offset[r.rec.offset] = r;
      if (offset(r.rec.offset) < active)
        latest_below[r.rec.key] = r.rec.offset;
      else
        want.push_back(r.rec.offset);
    }
    for (const auto& [k, o] : latest_below) want.push_back(o);
    std::sort(want.begin(), want.end());
    for (const auto& r : after) {
      INFO(test::describe(r));
      REQUIRE(by_offset.count(r.rec.offset) == 1);
      CHECK(by_offset[r.rec.offset].rec.value == r.rec.value);
      CHECK(by_offset[r.rec.offset].rec.timestamp == r.rec.timestamp);
      got.push_back(r.rec.offset);
    }
    CHECK(got == want);
    std::set<std::string> keys;
    for (const auto& r : after) keys.insert(r.rec.key);
    CHECK(keys.size() == 4);
    // Every batch on disk keeps the codec, except emptied ones (written uncompressed, as Kafka).
    std::size_t compressed = 0;
    for (const auto& b : batches_of_dir(dir)) {
      if (b.records == 0) continue;
      CHECK(b.compression == static_cast<int>(type));
      ++compressed;
    }
    CHECK(compressed > 0);
    // Reopened, the cleaned log reads the same.
    log.reset();
    log = open_log(dir, cfg);
    CHECK(read_all_full(*log, &d).size() == after.size());
  }
}

TEST_CASE("cleaning a compressed batch without its codec fails and changes nothing",
          "[storage][log_cleaner][compression]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  const auto dir = tmp / "t-0";
  auto with = compact_config(clk, 400);
  with.codecs = std::make_shared<const compression_codecs>(test::all_codecs());
  {
    auto log = open_log(dir, with);
    const auto& zstd = **with.codecs->get(compression_type::zstd);
    for (int round = 0; round < 10; ++round) {
      record_batch_builder b;
      b.append(t0, "k", fmt::format("value {} {}", round, std::string(100, 'y')));
      auto batch = b.finish(zstd, 3);
      REQUIRE(batch);
      REQUIRE(log->append(*batch));
    }
  }
  const auto files_before = files_of(dir);
  auto log = open_log(dir, compact_config(clk, 400));  // no codecs
  auto st = log->compact();
  REQUIRE_FALSE(st);
  CHECK(st.error() == errc::unsupported_compression_type);
  CHECK(files_of(dir) == files_before);
}

TEST_CASE("a segment whose records all went keeps its last batch, empty", "[storage][log_cleaner]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  const auto dir = tmp / "t-0";
  auto log = open_log(dir, compact_config(clk));
  for (int i = 0; i < 4; ++i) {
    append(*log, {{"same", fmt::format("v{}", i)}, {"same", fmt::format("w{}", i)}}, t0 + 10 * i);
    REQUIRE(log->roll());
  }
  REQUIRE(log->segment_count() == 5);
  auto st = log->compact();
  REQUIRE(st);
  CHECK(st->segments_cleaned == 4);  // the last sealed one loses its first record
  CHECK(st->records_kept == 1);
  CHECK(log->segment_count() == 5);
  auto segs = log->segments();
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(segs[i].size_bytes == batch_layout::header_size);
    CHECK(segs[i].next_offset == segs[i + 1].base_offset);  // no gap between segments
  }
  for (const auto& b : batches_of_dir(dir)) {
    CHECK(b.last == b.base + 1);
    if (b.base < 6) CHECK(b.max_ts == t0 + 10 * (b.base / 2) + 1);  // Kafka's empty batch keeps maxTimestamp
  }
  auto all = read_all_full(*log);
  REQUIRE(all.size() == 1);
  CHECK(all[0].rec.offset == 7);
  CHECK(all[0].rec.value == "w3");
  REQUIRE(log->close());
  log.reset();
  auto re = open_log(dir, compact_config(clk));
  CHECK(re->recovery().clean);
  CHECK(read_all_full(*re).size() == 1);
  CHECK(re->log_end_offset() == offset(8));
}

TEST_CASE("tombstones stay until delete.retention.ms after their first cleaning (KIP-534)", "[storage][log_cleaner]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  const auto dir = tmp / "t-0";
  log_config cfg = compact_config(clk);
  cfg.delete_retention = std::chrono::milliseconds(day);
  auto log = open_log(dir, cfg);
  append(*log, {{"a", "1"}, {"b", "1"}}, t0);
  append(*log, {{"a", std::nullopt}, {"c", "1"}}, t0 + 5);
  REQUIRE(log->roll());

  clk->advance(1000);
  auto p1 = log->compact();
  REQUIRE(p1);
  CHECK(p1->records_removed == 1);  // a=1, superseded by the tombstone
  CHECK(p1->tombstones_removed == 0);
  auto c1 = contents(*log);
  CHECK(c1.size() == 3);
  CHECK(c1["a"] == std::nullopt);
  // The tombstone's batch carries the horizon: bit 6 and baseTimestamp = first cleaning + D.
  const timestamp_ms horizon = t0 + 1000 + day;
  bool found = false;
  for (const auto& de : sfs::directory_iterator(dir)) {
    if (de.path().extension() != ".log") continue;
    auto bytes = test::read_file_bytes(de.path());
    for (std::size_t p = 0; p < bytes.size();) {
      auto v = record_batch_view::parse(std::span<const std::byte>(bytes).subspan(p));
      REQUIRE(v);
      if (v->base_offset() == offset(2)) {
        found = true;
        CHECK((v->header().attributes & batch_attr::delete_horizon) != 0);
        CHECK(v->header().base_timestamp == horizon);
        CHECK(v->header().max_timestamp == t0 + 6);
        CHECK(v->header().last_offset_delta == 1);
        CHECK(v->record_count() == 2);
        std::vector<timestamp_ms> ts;
        for (const auto& r : *v) ts.push_back(r.timestamp());
        CHECK(ts == std::vector<timestamp_ms>{t0 + 5, t0 + 6});  // timestamps survive re-basing
      } else {
        CHECK((v->header().attributes & batch_attr::delete_horizon) == 0);
      }
      p += v->size_bytes();
    }
  }
  CHECK(found);

  SECTION("before the horizon it stays, at the horizon it goes") {
    clk->set(horizon - 1);
    auto p2 = log->compact();
    REQUIRE(p2);
    CHECK(p2->tombstones_removed == 0);
    CHECK(contents(*log).count("a") == 1);
    clk->set(horizon);
    auto p3 = log->compact();
    REQUIRE(p3);
    CHECK(p3->tombstones_removed == 1);
    auto c3 = contents(*log);
    CHECK(c3.count("a") == 0);
    CHECK(c3.size() == 2);
  }
  SECTION("the horizon survives a reopen and a later rewrite of its batch") {
    REQUIRE(log->close());
    log.reset();
    log = open_log(dir, cfg);
    append(*log, {{"c", "2"}}, t0 + 10);  // supersedes c=1 in the tombstone's batch
    REQUIRE(log->roll());
    clk->set(horizon - 10);
    auto p2 = log->compact();
    REQUIRE(p2);
    CHECK(p2->records_removed == 1);
    CHECK(contents(*log).count("a") == 1);
    clk->set(horizon);  // the horizon set by the first pass still applies
    REQUIRE(log->compact());
    CHECK(contents(*log).count("a") == 0);
  }
  SECTION("a newer value for the key removes the tombstone at once") {
    append(*log, {{"a", "2"}}, t0 + 20);
    REQUIRE(log->roll());
    auto p2 = log->compact();
    REQUIRE(p2);
    CHECK(p2->tombstones_removed == 1);
    CHECK(contents(*log)["a"] == std::optional<std::string>("2"));
  }
}

TEST_CASE("min.compaction.lag.ms and the upper bound keep recent segments untouched", "[storage][log_cleaner]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  const auto dir = tmp / "t-0";
  log_config cfg = compact_config(clk);
  cfg.min_compaction_lag = std::chrono::milliseconds(60'000);
  auto log = open_log(dir, cfg);
  for (int i = 0; i < 6; ++i) {
    append(*log, {{"k", fmt::format("v{}", i)}}, t0 + i * 20'000);
    REQUIRE(log->roll());
  }
  // Segments hold timestamps t0, +20s, ... +100s; now = +100s: only those <= now - 60s clean.
  clk->set(t0 + 100'000);
  auto info = log->cleanable();
  REQUIRE(info);
  CHECK(info->segments == 3);  // t0, +20s, +40s; the +60s one is too young (60s > 100s - 60s)
  CHECK(info->first_uncleanable == offset(3));
  CHECK(info->dirty_ratio() == 1.0);
  const auto young = test::read_file_bytes(partition_files::log(dir, offset(3)));
  auto st = log->compact();
  REQUIRE(st);
  CHECK(st->first_dirty_after == offset(3));
  CHECK(test::read_file_bytes(partition_files::log(dir, offset(3))) == young);
  auto all = read_all_full(*log);
  std::vector<std::int64_t> offs;
  for (const auto& r : all) offs.push_back(r.rec.offset);
  CHECK(offs == std::vector<std::int64_t>{2, 3, 4, 5});  // 2 is the latest of the cleaned part

  SECTION("an explicit upper bound inside a segment excludes that segment") {
    clk->set(t0 + 10'000'000);
    const auto seg4 = test::read_file_bytes(partition_files::log(dir, offset(4)));
    compact_options co;
    co.upper_bound = offset(4);  // segments [3,4) is wholly below; [4,5) holds 4
    auto s2 = log->compact(co);
    REQUIRE(s2);
    CHECK(s2->first_dirty_after == offset(4));
    CHECK(test::read_file_bytes(partition_files::log(dir, offset(4))) == seg4);
    offs.clear();
    for (const auto& r : read_all_full(*log)) offs.push_back(r.rec.offset);
    CHECK(offs == std::vector<std::int64_t>{3, 4, 5});
  }
}

TEST_CASE("retention follows cleanup.policy", "[storage][log_cleaner]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  for (auto policy : {cleanup_policy::compact, cleanup_policy::compact_delete, cleanup_policy::delete_}) {
    DYNAMIC_SECTION(to_string(policy)) {
      log_config cfg = compact_config(clk);
      cfg.cleanup = policy;
      cfg.retention_time = std::chrono::milliseconds(1000);
      cfg.retention_bytes = 10;
      auto log = open_log(tmp / fmt::format("t{}-0", static_cast<int>(policy)), cfg);
      for (int i = 0; i < 3; ++i) {
        append(*log, {{"k", "v"}}, t0);
        REQUIRE(log->roll());
      }
      clk->set(t0 + 10'000);
      auto n = log->enforce_retention();
      REQUIRE(n);
      CHECK(*n == (policy == cleanup_policy::compact ? 0u : 3u));
    }
  }
}

// ------------------------------------------------------------------ crash safety

TEST_CASE("a crash at any write of a cleaner pass leaves the old or the new segment", "[storage][log_cleaner][crash]") {
  // The pass writes the .cleaned files, renames them to .swap (the commit point), renames the
  // indexes and then the log into place, syncing the directory around the renames. A crash
  // is the log's file system stopping at its Nth write of the pass (brook/testing: nothing
  // from there on reaches the files); N walks over every write of the pass.
  auto clk = std::make_shared<manual_clock>(t0);
  auto disk = std::make_shared<testing::faulty_file_system>();
  log_config cfg = compact_config(clk);
  cfg.files = disk;
  auto build = [&](const sfs::path& dir) {
    auto log = open_log(dir, cfg);
    for (int round = 0; round < 6; ++round) {
      std::vector<rec> rs;
      for (int k = 0; k < 4; ++k)
        rs.push_back({fmt::format("k{}", k),
                      round == 4 && k == 1 ? std::nullopt : std::optional<std::string>(fmt::format("r{}", round))});
      append(*log, rs, t0 + round);
    }
    REQUIRE(log->roll());
    return log;
  };
  scratch_dir tmp;
  // What a complete pass gives, the original records, and how many writes the pass makes.
  std::vector<full_record> original, cleaned;
  std::uint64_t writes = 0;
  {
    auto log = build(tmp / "ref-0");
    original = read_all_full(*log);
    const auto before = disk->mutations();
    REQUIRE(log->compact());
    writes = disk->mutations() - before;
    cleaned = read_all_full(*log);
  }
  REQUIRE(cleaned.size() < original.size());
  REQUIRE(writes >= 2 * 8);  // two segments: 3 files written and synced, 6 renames, 2 directory syncs each
  auto latest_of = [](const std::vector<full_record>& rs) {
    std::map<std::string, full_record> m;
    for (const auto& r : rs) m[r.rec.key] = r;
    return m;
  };
  const auto want_latest = latest_of(original);

  auto check_recovered = [&](const std::vector<full_record>& got) {
    // Only original records, in order, and the latest of every key.
    std::int64_t prev = -1;
    for (const auto& g : got) {
      CHECK(g.rec.offset > prev);
      prev = g.rec.offset;
      CHECK(std::find(original.begin(), original.end(), g) != original.end());
    }
    CHECK(latest_of(got) == want_latest);
  };
  for (std::uint64_t n = 1; n <= writes; ++n) {
    INFO("the pass's write " << n << " of " << writes << " fails, and every one after it");
    const auto dir = tmp / fmt::format("c{}-0", n);
    auto log = build(dir);
    disk->fail_at(n, EIO, /*sticky=*/true);
    auto r = log->compact();
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::kafka_storage_error);
    (void)log->close();  // writes nothing: the disk is stopped
    log.reset();
    disk->revive();
    auto re = open_log(dir, cfg);
    INFO(files_of(dir) << "\n" << fmt::format("{}", fmt::join(re->recovery().events, "\n")));
    auto got = read_all_full(*re);
    for (const auto& de : sfs::directory_iterator(dir)) {
      CHECK(de.path().extension() != ".cleaned");
      CHECK(de.path().extension() != ".swap");
    }
    check_recovered(got);
    if (n == 1) CHECK(got == original);  // nothing of the pass reached the files
    // The recovered log cleans to the same result.
    REQUIRE(re->compact());
    CHECK(read_all_full(*re) == cleaned);
    REQUIRE(re->close());
    re.reset();
    CHECK(test::check_closed_indexes(dir) == "");
  }
  for (std::uint64_t n = 1; n <= writes; ++n) {
    INFO("the pass's write " << n << " of " << writes << " fails once (ENOSPC); the log goes on");
    const auto dir = tmp / fmt::format("e{}-0", n);
    auto log = build(dir);
    const auto failures_before = disk->failures().size();
    disk->fail_at(n, ENOSPC);
    auto r = log->compact();
    const auto failed = disk->failures();
    REQUIRE(failed.size() == failures_before + 1);
    INFO("failed: " << failed.back());
    if (r) {
      // The pass absorbed the failure: a removal (a leftover the next open deletes), or the
      // new segment's index files (rebuilt from its log).
      CHECK(read_all_full(*log) == cleaned);
    } else {
      CHECK(r.error() == errc::kafka_storage_error);
      check_recovered(read_all_full(*log));  // the log still serves the old segment or the new one
    }
    REQUIRE(log->compact());  // the next pass finishes the work
    CHECK(read_all_full(*log) == cleaned);
    REQUIRE(log->close());
    log.reset();
    auto re = open_log(dir, cfg);
    CHECK(read_all_full(*re) == cleaned);
    REQUIRE(re->close());
    re.reset();
    CHECK(test::check_closed_indexes(dir) == "");
  }
}

TEST_CASE("recovery completes only swaps that are whole, and never the active segment's",
          "[storage][log_cleaner][crash]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  const log_config cfg = compact_config(clk);
  const auto dir = tmp / "t-0";
  std::vector<full_record> before;
  std::vector<segment_info> segs;
  {
    auto log = open_log(dir, cfg);
    for (int i = 0; i < 12; ++i) append(*log, {{fmt::format("k{}", i % 3), fmt::format("v{}", i)}}, t0 + i);
    before = read_all_full(*log);
    segs = log->segments();
    REQUIRE(segs.size() >= 3);
    REQUIRE(log->close());
  }
  std::mt19937_64 g(7);
  const auto middle = segs[1].path;
  const auto middle_bytes = test::read_file_bytes(middle);
  std::vector<std::pair<std::string, std::vector<std::byte>>> cases = {
      {"garbage", test::random_bytes(g, 200)},
      {"a torn copy", std::vector<std::byte>(middle_bytes.begin(), middle_bytes.end() - 7)},
      {"batches from another segment", test::read_file_bytes(segs[0].path)},
  };
  for (const auto& [what, bytes] : cases) {
    DYNAMIC_SECTION(what) {
      test::write_file_bytes(sfs::path(middle.string() + ".swap"), bytes);
      test::write_file_bytes(sfs::path(segs.back().path.string() + ".swap"), std::vector<std::byte>{});
      test::write_file_bytes(sfs::path(partition_files::index(dir, segs[1].base_offset).string() + ".swap"), bytes);
      test::write_file_bytes(sfs::path(middle.string() + ".cleaned"), bytes);
      auto log = open_log(dir, cfg);
      CHECK(read_all_full(*log) == before);
      CHECK(files_of(dir).find(".swap") == std::string::npos);
      CHECK(files_of(dir).find(".cleaned") == std::string::npos);
    }
  }
  SECTION("a whole cleaned copy is completed and the indexes rebuilt") {
    // A "cleaned" middle segment that keeps only its last batch.
    auto bs = test::scan_log_file(middle);
    REQUIRE(bs.size() >= 2);
    std::vector<std::byte> last(middle_bytes.begin() + static_cast<std::ptrdiff_t>(bs.back().pos), middle_bytes.end());
    test::write_file_bytes(sfs::path(middle.string() + ".swap"), last);
    auto log = open_log(dir, cfg);
    CHECK_FALSE(log->recovery().clean);
    auto got = read_all_full(*log);
    CHECK(got.size() == before.size() - (bs.size() - 1));
    CHECK(log->log_end_offset() == offset(12));
    REQUIRE(log->close());
    log.reset();
    CHECK(test::check_closed_indexes(dir) == "");
  }
}

TEST_CASE("on a compacted log a gap between segments is reported, later segments kept",
          "[storage][log_cleaner][crash]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  const log_config cfg = compact_config(clk);
  const auto dir = tmp / "t-0";
  std::vector<segment_info> segs;
  {
    auto log = open_log(dir, cfg);
    for (int i = 0; i < 16; ++i) append(*log, {{fmt::format("k{}", i % 8), "v"}}, t0 + i);
    REQUIRE(log->compact());
    segs = log->segments();
    REQUIRE(segs.size() >= 3);
    REQUIRE(log->close());
  }
  // Cut a cleaned segment after its first batch: a hole before the next segment.
  std::size_t k = 0;
  while (k + 1 < segs.size() && test::scan_log_file(segs[k].path).size() < 2) ++k;
  REQUIRE(k + 1 < segs.size());
  auto bs = test::scan_log_file(segs[k].path);
  test::cut_file(segs[k].path, bs[0].size);
  std::filesystem::remove(partition_files::index(dir, segs[k].base_offset));
  const offset end_before = segs.back().next_offset;
  auto log = open_log(dir, cfg);
  // Kafka's loader keeps the segments after a hole; the report names the missing offsets.
  CHECK(log->log_end_offset() == end_before);
  CHECK(log->segment_count() == segs.size());
  const auto& ev = log->recovery().events;
  CHECK(std::any_of(ev.begin(), ev.end(), [](const std::string& e) { return e.find("are missing") != e.npos; }));
}

// ------------------------------------------------------------------ housekeeping

TEST_CASE("data_dir::tick cleans compacted topics once the dirty ratio is reached",
          "[storage][log_cleaner][data_dir]") {
  scratch_dir tmp;
  auto clk = std::make_shared<manual_clock>(t0);
  data_dir_options o;
  o.defaults = compact_config(clk);
  o.defaults.cleanup = cleanup_policy::delete_;
  auto dd = data_dir::open(tmp / "data", o);
  REQUIRE(dd);
  topic_config tc;
  tc.overrides = {{"cleanup.policy", "compact"}, {"min.cleanable.dirty.ratio", "0.6"}};
  REQUIRE((*dd)->create_topic("offsets", tc));
  REQUIRE((*dd)->create_topic("plain"));
  auto p = (*dd)->get_partition("offsets", partition_id(0)).value();
  auto q = (*dd)->get_partition("plain", partition_id(0)).value();
  auto put = [&](partition& part, const std::string& k, int i) {
    record_batch_builder b;
    b.append(t0, k, fmt::format("value-{:04}", i));
    REQUIRE(part.append(b.finish()));
  };
  for (int i = 0; i < 16; ++i) put(*p, "g1", i);
  for (int i = 0; i < 16; ++i) put(*q, "g1", i);
  REQUIRE(p->log().segment_count() >= 3);
  REQUIRE((*dd)->tick());
  CHECK(read_all_full(p->log()).size() < 16);   // all dirty: ratio 1 >= 0.6
  CHECK(read_all_full(q->log()).size() == 16);  // delete policy: never cleaned
  const auto after_first = read_all_full(p->log());
  auto info = p->log().cleanable(p->high_watermark());
  REQUIRE(info);
  CHECK(info->dirty_bytes == 0);
  // One more sealed segment of dirty data: below the ratio, nothing happens.
  put(*p, "g1", 100);
  REQUIRE(p->log().roll());
  info = p->log().cleanable(p->high_watermark());
  REQUIRE(info);
  REQUIRE(info->dirty_bytes > 0);
  if (info->dirty_ratio() < 0.6) {
    REQUIRE((*dd)->tick());
    CHECK(read_all_full(p->log()).size() == after_first.size() + 1);
  }
  // Enough dirty data: cleaned again, only the latest stays below the active segment.
  int i = 200;
  do {
    put(*p, "g1", i++);
    REQUIRE(p->log().roll());
    info = p->log().cleanable(p->high_watermark());
    REQUIRE(info);
  } while (info->dirty_ratio() < 0.6);
  REQUIRE((*dd)->tick());
  auto all = read_all_full(p->log());
  REQUIRE(all.size() == 1);
  CHECK(all[0].rec.value == fmt::format("value-{:04}", i - 1));
}

// ------------------------------------------------------------------ property test

namespace {

/// An independent record-level model of a compacted log: the records it must hold and the
/// delete horizon of each batch, updated by Kafka's rules one record at a time.
struct model {
  struct mrec {
    std::int64_t offset;
    std::int64_t batch;  // base offset of its batch
    full_record full;
  };
  std::vector<mrec> recs;                           // in offset order
  std::map<std::int64_t, std::int64_t> batch_last;  // base -> last offset
  std::map<std::int64_t, timestamp_ms> horizon;     // base -> delete horizon, once set
  std::map<std::string, full_record> latest_written;
  std::int64_t first_dirty = 0;

  /// A pass over the records below `end` with the map built from [first_dirty, end).
  void clean(std::int64_t end, timestamp_ms now, std::int64_t retention) {
    std::map<std::string, std::int64_t> m;
    for (const auto& r : recs)
      if (r.offset >= first_dirty && r.offset < end) m[r.full.rec.key] = r.offset;
    std::vector<mrec> out;
    std::map<std::int64_t, bool> batch_keeps_tombstone;
    for (const auto& r : recs) {
      if (r.offset >= end) {
        out.push_back(r);
        continue;
      }
      auto it = m.find(r.full.rec.key);
      bool latest = it == m.end() || r.offset >= it->second;
      bool tomb = r.full.rec.value_null;
      bool expired = tomb && horizon.count(r.batch) && now >= horizon[r.batch];
      if (latest && !expired) {
        out.push_back(r);
        if (tomb) batch_keeps_tombstone[r.batch] = true;
      }
    }
    for (const auto& [b, yes] : batch_keeps_tombstone)
      if (yes && !horizon.count(b)) horizon[b] = now + retention;
    recs = std::move(out);
    first_dirty = std::max(first_dirty, end);
  }
};

}  // namespace

TEST_CASE("property: random histories clean to the latest value per key, offsets intact",
          "[storage][log_cleaner][property]") {
  const auto fixed_seed = test::env_int("BROOK_CLEANER_SEED");
  const std::int64_t cases = fixed_seed ? 1 : test::env_int("BROOK_CLEANER_CASES").value_or(500);
  scratch_dir tmp("brook-cleaner");
  std::int64_t total_passes = 0, total_removed = 0, total_tombstones_removed = 0, total_reopens = 0;
  for (std::int64_t c = 0; c < cases; ++c) {
    const std::uint64_t seed =
        fixed_seed ? static_cast<std::uint64_t>(*fixed_seed) : test::seed_base() + static_cast<std::uint64_t>(c + 1);
    std::mt19937_64 g(seed);
    auto below = [&](std::uint64_t n) { return g() % n; };
    auto clk = std::make_shared<manual_clock>(t0);
    log_config cfg = compact_config(clk, 200 + below(600));
    cfg.delete_retention = std::chrono::milliseconds(static_cast<std::int64_t>(below(3)) * 1000);
    cfg.index_interval_bytes = static_cast<std::uint32_t>(32 + below(200));
    if (below(4) == 0) cfg.message_timestamp_type = timestamp_type::log_append_time;
    const auto dir = tmp / fmt::format("s{}-0", seed);
    auto log = open_log(dir, cfg);
    model m;
    const int nkeys = 1 + static_cast<int>(below(6));
    std::string story;
    const int ops = 20 + static_cast<int>(below(40));
    for (int op = 0; op < ops; ++op) {
      const auto kind = below(10);
      if (kind < 6) {  // append a batch of 1..4 records
        const int n = 1 + static_cast<int>(below(4));
        record_batch_builder b;
        std::vector<full_record> fr;
        for (int i = 0; i < n; ++i) {
          full_record f;
          f.rec.key = fmt::format("key{}", below(static_cast<std::uint64_t>(nkeys)));
          f.rec.value_null = below(5) == 0;
          if (!f.rec.value_null) f.rec.value = fmt::format("{}-{}-{}", seed, op, i) + std::string(below(40), 'x');
          f.rec.timestamp = clk->now_ms() - static_cast<timestamp_ms>(below(50));
          if (below(3) == 0) f.headers.emplace_back("h", std::optional<std::string>(fmt::format("{}", op)));
          std::vector<record_header> hs;
          for (const auto& [hk, hv] : f.headers) hs.push_back({hk, nullable_bytes(*hv)});
          b.append(f.rec.timestamp, f.rec.key, f.rec.value_null ? nullable_bytes::null() : nullable_bytes(f.rec.value),
                   hs);
          fr.push_back(std::move(f));
        }
        auto r = log->append(b.finish());
        REQUIRE(r);
        m.batch_last[r->base_offset.value()] = r->last_offset.value();
        for (int i = 0; i < n; ++i) {
          fr[i].rec.offset = r->base_offset.value() + i;
          if (cfg.message_timestamp_type == timestamp_type::log_append_time) fr[i].rec.timestamp = r->log_append_time;
          m.recs.push_back({fr[i].rec.offset, r->base_offset.value(), fr[i]});
          m.latest_written[fr[i].rec.key] = fr[i];
        }
        story += fmt::format(" a{}", n);
      } else if (kind == 6) {
        REQUIRE(log->roll());
        story += " roll";
      } else if (kind == 7) {
        clk->advance(static_cast<std::int64_t>(below(2500)));
        story += " tick";
      } else if (kind == 8) {  // a pass, maybe bounded
        auto segs = log->segments();
        compact_options co;
        if (below(2) == 0)
          co.upper_bound =
              offset(static_cast<std::int64_t>(below(static_cast<std::uint64_t>(log->log_end_offset().value()) + 1)));
        // The model's end: the base of the first segment not wholly below the bound.
        offset bound = co.upper_bound ? std::min(*co.upper_bound, segs.back().base_offset) : segs.back().base_offset;
        std::int64_t end = segs.front().base_offset.value();
        for (std::size_t i = 0; i + 1 < segs.size() && segs[i + 1].base_offset <= bound; ++i)
          end = segs[i + 1].base_offset.value();
        // Bytes of the untouchable segments, to compare after.
        std::map<std::string, std::vector<std::byte>> untouched;
        for (const auto& s : segs)
          if (s.base_offset.value() >= end) untouched[s.path.string()] = test::read_file_bytes(s.path);
        auto st = log->compact(co);
        REQUIRE(st);
        ++total_passes;
        total_removed += static_cast<std::int64_t>(st->records_removed);
        total_tombstones_removed += static_cast<std::int64_t>(st->tombstones_removed);
        if (end > m.first_dirty || st->segments_cleanable > 0)
          m.clean(end, clk->now_ms(), cfg.delete_retention.count());
        CHECK(st->first_dirty_after.value() == std::max<std::int64_t>(m.first_dirty, end));
        for (const auto& [p, bytes] : untouched) {
          INFO("seed " << seed << " (replay: BROOK_CLEANER_SEED=" << seed << ")" << story << " | " << p);
          CHECK(test::read_file_bytes(p) == bytes);
        }
        story += fmt::format(" clean<{}", end);
      } else {
        REQUIRE(log->close());
        log.reset();
        log = open_log(dir, cfg);
        CHECK(log->recovery().clean);
        ++total_reopens;
        story += " reopen";
      }

      // After every step the log holds exactly the model's records.
      INFO("seed " << seed << " (replay: BROOK_CLEANER_SEED=" << seed << ")"
                   << ":" << story);
      auto got = read_all_full(*log);
      std::vector<full_record> want;
      for (const auto& r : m.recs) want.push_back(r.full);
      REQUIRE(got == want);
    }

    // A full clean at the end: roll, then clean everything.
    INFO("seed " << seed << " (replay: BROOK_CLEANER_SEED=" << seed << ")"
                 << ":" << story << " | final");
    REQUIRE(log->roll());
    const std::int64_t end = log->log_end_offset().value();
    REQUIRE(log->compact());
    m.clean(end, clk->now_ms(), cfg.delete_retention.count());
    auto got = read_all_full(*log);
    std::vector<full_record> want;
    for (const auto& r : m.recs) want.push_back(r.full);
    REQUIRE(got == want);
    // Independently of the model: one record per key, the latest written; tombstoned keys
    // are absent or still a tombstone; offsets strictly increase.
    std::int64_t prev = -1;
    std::set<std::string> keys;
    for (const auto& r : got) {
      CHECK(r.rec.offset > prev);
      prev = r.rec.offset;
      CHECK(keys.insert(r.rec.key).second);
      CHECK(r == m.latest_written.at(r.rec.key));
    }
    for (const auto& [k, r] : m.latest_written)
      if (!r.rec.value_null) CHECK(keys.count(k) == 1);
    // Batches keep their original baseOffset/lastOffsetDelta; horizons are stamped as Kafka does.
    for (const auto& de : sfs::directory_iterator(dir)) {
      if (de.path().extension() != ".log") continue;
      auto bytes = test::read_file_bytes(de.path());
      for (std::size_t p = 0; p < bytes.size();) {
        auto v = record_batch_view::parse(std::span<const std::byte>(bytes).subspan(p));
        REQUIRE(v);
        const auto& h = v->header();
        REQUIRE(m.batch_last.count(h.base_offset.value()));
        CHECK(m.batch_last[h.base_offset.value()] == h.last_offset().value());
        const bool has = (h.attributes & batch_attr::delete_horizon) != 0;
        if (v->record_count() == 0) {
          CHECK_FALSE(has);  // Kafka's empty batch: no horizon
          CHECK(h.base_timestamp == h.max_timestamp);
        } else {
          CHECK(has == (m.horizon.count(h.base_offset.value()) == 1));
          if (has) CHECK(h.base_timestamp == m.horizon[h.base_offset.value()]);
        }
        p += v->size_bytes();
      }
    }
    REQUIRE(log->close());
    log.reset();
    CHECK(test::check_closed_indexes(dir) == "");
    sfs::remove_all(dir);
  }
  INFO(total_passes << " passes, " << total_removed << " records removed, " << total_tombstones_removed
                    << " tombstones removed, " << total_reopens << " reopens");
  CHECK(total_passes > cases);
  CHECK(total_tombstones_removed > 0);
}

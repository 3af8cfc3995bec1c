// leader_epoch_cache: the cases of Kafka's LeaderEpochFileCacheTest
// (storage/src/test/java/org/apache/kafka/storage/internals/epoch/), the checkpoint file (round
// trip, corrupt files, failed writes), then two seeded property tests: random operation
// sequences against a naive model, and a simulated replica log whose record epochs the cache
// must describe.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <brook/replication/leader_epoch_cache.hpp>

#include "support/temp_dir.hpp"

using namespace brook;

namespace Catch {
template <>
struct StringMaker<epoch_entry> {
  static std::string convert(const epoch_entry& e) { return fmt::format("{}", e); }
};
template <>
struct StringMaker<epoch_end_offset> {
  static std::string convert(const epoch_end_offset& e) { return fmt::format("{}", e); }
};
template <>
struct StringMaker<std::optional<leader_epoch>> {
  static std::string convert(const std::optional<leader_epoch>& e) {
    return e ? fmt::format("{}", *e) : std::string("empty");
  }
};
}  // namespace Catch

namespace {

epoch_entry ee(std::int32_t epoch, std::int64_t start) { return {leader_epoch{epoch}, offset{start}}; }
epoch_end_offset eo(std::int32_t epoch, std::int64_t end) { return {leader_epoch{epoch}, offset{end}}; }
std::optional<leader_epoch> ep(std::int32_t e) { return leader_epoch{e}; }
const std::optional<leader_epoch> no_epoch;
const epoch_end_offset undefined{undefined_epoch, undefined_epoch_offset};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A cache backed by a file in a fresh directory, as in Kafka's test setup.
struct fixture {
  test::temp_dir dir{"brook-epoch"};
  std::unique_ptr<leader_epoch_cache> c = open();

  std::unique_ptr<leader_epoch_cache> open() {
    auto r = leader_epoch_cache::open(dir.path(), *posix_file_system::shared());
    REQUIRE(r);
    return std::move(*r);
  }
  void assign(std::int32_t epoch, std::int64_t start) { REQUIRE(c->assign(leader_epoch{epoch}, offset{start})); }
  void truncate_from_end(std::int64_t o) { REQUIRE(c->truncate_from_end(offset{o})); }
  void truncate_from_start(std::int64_t o) { REQUIRE(c->truncate_from_start(offset{o})); }
  epoch_end_offset end_offset_for(std::int32_t epoch, std::int64_t leo) const {
    return c->end_offset_for(leader_epoch{epoch}, offset{leo});
  }
  std::vector<epoch_entry> entries() const { return c->entries(); }
};

using entry_list = std::vector<epoch_entry>;

}  // namespace

TEST_CASE_METHOD(fixture, "epoch cache: previous epoch (testPreviousEpoch)", "[replication][epoch_cache]") {
  CHECK(c->previous_epoch() == no_epoch);
  assign(2, 10);
  CHECK(c->previous_epoch() == no_epoch);
  assign(4, 15);
  CHECK(c->previous_epoch() == ep(2));
  assign(10, 20);
  CHECK(c->previous_epoch() == ep(4));
  truncate_from_end(18);
  CHECK(c->previous_epoch() == ep(2));
}

TEST_CASE_METHOD(fixture, "epoch cache: Kafka's assign and end offset cases", "[replication][epoch_cache]") {
  SECTION("shouldAddEpochAndMessageOffsetToCache") {
    assign(2, 10);
    CHECK(c->latest_epoch() == ep(2));
    CHECK(entries() == entry_list{ee(2, 10)});
    CHECK(end_offset_for(2, 11) == eo(2, 11));
  }
  SECTION("shouldReturnLogEndOffsetIfLatestEpochRequested") {
    assign(2, 11);
    assign(2, 12);
    CHECK(end_offset_for(2, 14) == eo(2, 14));
  }
  SECTION("shouldReturnUndefinedOffsetIfUndefinedEpochRequested") {
    assign(2, 11);
    assign(3, 12);
    CHECK(c->end_offset_for(undefined_epoch, offset{0}) == undefined);
  }
  SECTION("shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned") {
    assign(2, 9);
    auto r = c->assign(leader_epoch{2}, offset{10});
    REQUIRE(r);
    CHECK_FALSE(*r);  // nothing changed
    CHECK(entries() == entry_list{ee(2, 9)});
  }
  SECTION("shouldEnforceMonotonicallyIncreasingStartOffsets") {
    assign(2, 9);
    assign(3, 9);
    CHECK(entries() == entry_list{ee(3, 9)});
  }
  SECTION("shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned") {
    assign(2, 6);
    assign(2, 10);
    CHECK(entries() == entry_list{ee(2, 6)});
  }
  SECTION("shouldReturnUnsupportedIfNoEpochRecorded") { CHECK(end_offset_for(0, 0) == undefined); }
  SECTION("shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested") {
    CHECK(end_offset_for(-1, 73) == undefined);
  }
  SECTION("shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch") {
    assign(5, 11);
    assign(6, 12);
    assign(7, 13);
    CHECK(end_offset_for(4, 0) == eo(4, 11));  // the requested epoch is echoed
  }
  SECTION("shouldTruncateIfMatchingEpochButEarlierStartingOffset") {
    assign(5, 11);
    assign(6, 12);
    assign(7, 13);
    assign(7, 12);
    CHECK(entries() == entry_list{ee(5, 11), ee(7, 12)});
    CHECK(end_offset_for(5, 0) == eo(5, 12));
    CHECK(end_offset_for(6, 0) == eo(5, 12));
  }
  SECTION("shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch") {
    assign(1, 11);
    assign(1, 12);
    assign(2, 13);
    assign(2, 14);
    assign(3, 15);
    assign(3, 16);
    CHECK(end_offset_for(2, 17) == eo(2, 15));
  }
  SECTION("shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested") {
    assign(0, 10);
    assign(2, 13);
    assign(4, 17);
    CHECK(end_offset_for(1, 0) == eo(0, 13));
    CHECK(end_offset_for(2, 0) == eo(2, 17));
    CHECK(end_offset_for(3, 0) == eo(2, 17));
  }
  SECTION("shouldNotUpdateEpochAndStartOffsetIfItDidNotChange") {
    assign(2, 6);
    assign(2, 7);
    CHECK(entries() == entry_list{ee(2, 6)});
  }
  SECTION("shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked") {
    assign(2, 100);
    CHECK(end_offset_for(3, 100) == undefined);
  }
  SECTION("shouldSupportEpochsThatDoNotStartFromZero") {
    assign(2, 6);
    CHECK(end_offset_for(2, 7) == eo(2, 7));
    CHECK(entries() == entry_list{ee(2, 6)});
  }
  SECTION("shouldEnforceMonotonicallyIncreasingEpochs (a lower epoch drops the newer ones)") {
    assign(1, 5);
    assign(2, 6);
    assign(1, 7);
    CHECK(c->latest_epoch() == ep(1));
    CHECK(end_offset_for(1, 8) == eo(1, 8));
    CHECK(end_offset_for(2, 8) == undefined);
    CHECK(entries() == entry_list{ee(1, 7)});
  }
  SECTION("shouldEnforceOffsetsIncreaseMonotonically") {
    assign(2, 6);
    assign(3, 5);
    CHECK(entries() == entry_list{ee(3, 5)});
  }
  SECTION("shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes") {
    assign(0, 0);
    assign(1, 0);
    CHECK(c->latest_epoch() == ep(1));
    CHECK(end_offset_for(1, 0) == eo(1, 0));
    CHECK(end_offset_for(0, 0) == eo(0, 0));
    CHECK(end_offset_for(1, 5) == eo(1, 5));
    CHECK(end_offset_for(0, 5) == eo(0, 0));
    assign(2, 5);
    CHECK(end_offset_for(2, 10) == eo(2, 10));
    CHECK(end_offset_for(1, 10) == eo(1, 5));
    CHECK(end_offset_for(0, 10) == eo(0, 0));
  }
  SECTION("shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages") {
    assign(0, 0);
    assign(0, 1);
    assign(0, 2);
    CHECK(c->latest_epoch() == ep(0));
    CHECK(end_offset_for(0, 3) == eo(0, 3));
    assign(1, 3);
    assign(1, 4);
    assign(1, 5);
    CHECK(c->latest_epoch() == ep(1));
    CHECK(end_offset_for(1, 6) == eo(1, 6));
    assign(2, 6);
    assign(2, 7);
    assign(2, 8);
    CHECK(c->latest_epoch() == ep(2));
    CHECK(end_offset_for(2, 9) == eo(2, 9));
    CHECK(end_offset_for(0, 9) == eo(0, 3));
    CHECK(end_offset_for(1, 9) == eo(1, 6));
  }
  SECTION("assign(list) applies each entry in turn") {
    REQUIRE(c->assign(std::vector<epoch_entry>{ee(1, 0), ee(1, 4), ee(3, 9), ee(2, 12)}));
    CHECK(entries() == entry_list{ee(1, 0), ee(2, 12)});  // (2, 12) dropped the newer epoch 3
  }
}

TEST_CASE_METHOD(fixture, "epoch cache: truncation (Kafka's cases)", "[replication][epoch_cache]") {
  assign(2, 6);
  assign(3, 8);
  assign(4, 11);
  SECTION("shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries") {
    truncate_from_end(8);
    CHECK(entries() == entry_list{ee(2, 6)});
  }
  SECTION("shouldPreserveResetOffsetOnClearEarliestIfOneExists") {
    truncate_from_start(8);
    CHECK(entries() == entry_list{ee(3, 8), ee(4, 11)});
  }
  SECTION("shouldNotClearAnythingIfOffsetTooEarly") {
    auto r = c->truncate_from_start(offset{1});
    REQUIRE(r);
    CHECK_FALSE(*r);
    CHECK(entries() == entry_list{ee(2, 6), ee(3, 8), ee(4, 11)});
  }
  SECTION("shouldNotClearAnythingIfOffsetIsFirstOffset") {
    auto r = c->truncate_from_start(offset{6});
    REQUIRE(r);
    CHECK_FALSE(*r);
    CHECK(entries() == entry_list{ee(2, 6), ee(3, 8), ee(4, 11)});
  }
  SECTION("shouldRetainLatestEpochOnClearAllEarliest") {
    truncate_from_start(11);
    CHECK(entries() == entry_list{ee(4, 11)});
  }
  SECTION("shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest") {
    truncate_from_start(9);
    CHECK(entries() == entry_list{ee(3, 9), ee(4, 11)});
  }
  SECTION("shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset") {
    truncate_from_start(15);
    CHECK(entries() == entry_list{ee(4, 15)});
  }
  SECTION("shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest") {
    truncate_from_end(9);
    CHECK(c->latest_epoch() == ep(3));
    CHECK(entries() == entry_list{ee(2, 6), ee(3, 8)});
  }
  SECTION("truncate_from_end past the last start is a no-op") {
    auto r = c->truncate_from_end(offset{12});
    REQUIRE(r);
    CHECK_FALSE(*r);
    CHECK(entries().size() == 3);
  }
  SECTION("shouldClearAllEntries") {
    REQUIRE(c->clear());
    CHECK(entries().empty());
    CHECK(slurp(c->path()) == "0\n0\n");
  }
  SECTION("shouldNotResetEpochHistoryHeadIfUndefinedPassed") {
    truncate_from_start(undefined_epoch_offset.value());
    CHECK(entries().size() == 3);
  }
  SECTION("shouldNotResetEpochHistoryTailIfUndefinedPassed") {
    truncate_from_end(undefined_epoch_offset.value());
    CHECK(entries().size() == 3);
  }
  SECTION("shouldWriteCheckpointOnTruncation") {
    truncate_from_end(11);
    truncate_from_start(8);
    CHECK(slurp(c->path()) == "0\n1\n3 8\n");
  }
  SECTION("entries_in_range leaves the cache alone (epochEntriesInRange)") {
    CHECK(c->entries_in_range(offset{7}, offset{11}) == entry_list{ee(2, 7), ee(3, 8)});
    CHECK(c->entries_in_range(offset{-1}, offset{9}) == entry_list{ee(2, 6), ee(3, 8)});
    CHECK(entries() == entry_list{ee(2, 6), ee(3, 8), ee(4, 11)});
  }
}

TEST_CASE_METHOD(fixture, "epoch cache: empty cache and lookups", "[replication][epoch_cache]") {
  SECTION("shouldFetchLatestEpochOfEmptyCache / EndOffset / Clear*OnEmptyCache") {
    CHECK(c->latest_epoch() == no_epoch);
    CHECK(c->empty());
    CHECK(end_offset_for(7, 0) == undefined);
    truncate_from_start(7);
    truncate_from_end(7);
    CHECK(entries().empty());
    CHECK_FALSE(fs::exists(c->path()));  // nothing changed, nothing written
  }
  SECTION("testFindPreviousEpoch / testFindPreviousEntry") {
    CHECK(c->previous_epoch(leader_epoch{2}) == no_epoch);
    assign(2, 10);
    CHECK(c->previous_epoch(leader_epoch{2}) == no_epoch);
    CHECK_FALSE(c->previous_entry(leader_epoch{2}));
    assign(4, 15);
    CHECK(c->previous_epoch(leader_epoch{4}) == ep(2));
    CHECK(c->previous_entry(leader_epoch{4}) == ee(2, 10));
    assign(10, 20);
    CHECK(c->previous_epoch(leader_epoch{10}) == ep(4));
    CHECK(c->previous_entry(leader_epoch{10}) == ee(4, 15));
    truncate_from_end(18);
    CHECK(c->previous_epoch(*c->latest_epoch()) == ep(2));
    CHECK(c->previous_entry(*c->latest_epoch()) == ee(2, 10));
  }
  SECTION("testFindNextEpoch") {
    assign(0, 0);
    assign(1, 100);
    assign(2, 200);
    CHECK(c->next_epoch(leader_epoch{-1}) == ep(0));
    CHECK(c->next_epoch(leader_epoch{0}) == ep(1));
    CHECK(c->next_epoch(leader_epoch{1}) == ep(2));
    CHECK(c->next_epoch(leader_epoch{2}) == no_epoch);
    CHECK(c->next_epoch(leader_epoch{100}) == no_epoch);
  }
  SECTION("testGetEpochEntry") {
    assign(2, 100);
    assign(3, 500);
    assign(5, 1000);
    CHECK(c->entry_for(leader_epoch{2}) == ee(2, 100));
    CHECK(c->entry_for(leader_epoch{3}) == ee(3, 500));
    CHECK(c->entry_for(leader_epoch{5}) == ee(5, 1000));
    CHECK_FALSE(c->entry_for(leader_epoch{4}));
    CHECK(c->earliest_entry() == ee(2, 100));
    CHECK(c->latest_entry() == ee(5, 1000));
  }
  SECTION("shouldFetchEpochForGivenOffset") {
    assign(0, 10);
    assign(1, 20);
    assign(5, 30);
    CHECK(c->epoch_for_offset(offset{25}) == ep(1));
    CHECK(c->epoch_for_offset(offset{20}) == ep(1));
    CHECK(c->epoch_for_offset(offset{30}) == ep(5));
    CHECK(c->epoch_for_offset(offset{50}) == ep(5));
    CHECK(c->epoch_for_offset(offset{5}) == no_epoch);
  }
  SECTION("negative epoch or offset is invalid_argument (Kafka: IllegalArgumentException)") {
    assign(1, 5);
    auto r = c->assign(leader_epoch{-1}, offset{6});
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_argument);
    r = c->assign(leader_epoch{2}, offset{-1});
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::invalid_argument);
    // A list with one bad entry applies none of them.
    r = c->assign(std::vector<epoch_entry>{ee(3, 10), ee(4, -5)});
    REQUIRE_FALSE(r);
    CHECK(entries() == entry_list{ee(1, 5)});
  }
  SECTION("negative requested epochs other than -1 fall under 'below the first epoch', as in Kafka") {
    assign(3, 40);
    assign(4, 50);
    CHECK(end_offset_for(-2, 60) == eo(-2, 40));
  }
}

TEST_CASE("epoch cache: the checkpoint file", "[replication][epoch_cache]") {
  test::temp_dir dir{"brook-epoch"};
  const fs::path file = dir / "leader-epoch-checkpoint";
  auto open = [&]() { return leader_epoch_cache::open(dir.path(), *posix_file_system::shared()); };

  SECTION("round trip in Kafka's format (shouldPersistEpochsBetweenInstances)") {
    auto c = open();
    REQUIRE(c);
    CHECK((*c)->path() == file);
    REQUIRE((*c)->assign(leader_epoch{2}, offset{6}));
    REQUIRE((*c)->assign(leader_epoch{3}, offset{8}));
    REQUIRE((*c)->assign(leader_epoch{2147483647}, offset{9223372036854775807}));
    CHECK(slurp(file) == "0\n3\n2 6\n3 8\n2147483647 9223372036854775807\n");
    CHECK_FALSE(fs::exists(dir / "leader-epoch-checkpoint.tmp"));
    auto c2 = open();
    REQUIRE(c2);
    CHECK((*c2)->entries() == (*c)->entries());
  }
  SECTION("a file Kafka wrote is read") {
    std::ofstream(file) << "0\n2\n0 0\n5 1234\n";
    auto c = open();
    REQUIRE(c);
    CHECK((*c)->entries() == entry_list{ee(0, 0), ee(5, 1234)});
  }
  SECTION("a missing file is an empty cache; a leftover .tmp is ignored") {
    std::ofstream(dir / "leader-epoch-checkpoint.tmp") << "0\n1\n9 9";  // torn write of a crashed flush
    auto c = open();
    REQUIRE(c);
    CHECK((*c)->empty());
  }
  SECTION("corrupt files are kafka_storage_error with file and line, and are left as they are") {
    auto bad = [&](const std::string& text, const std::string& where) {
      std::ofstream(file, std::ios::trunc) << text;
      auto c = open();
      REQUIRE_FALSE(c);
      CHECK(c.error() == errc::kafka_storage_error);
      CHECK_THAT(c.error().message(), Catch::Contains(file.string()));
      CHECK_THAT(c.error().message(), Catch::Contains(where));
      CHECK(slurp(file) == text);  // never silently reset
    };
    bad("", "line 1");
    bad("1\n0\n", "line 1");                              // unknown version
    bad("0\nx\n", "line 2");                              // bad count
    bad("0\n2\n0 0\n", "line 4");                         // fewer entries than counted
    bad("0\n1\n1 2 3\n", "line 3");                       // three fields
    bad("0\n1\nx 5\n", "line 3: leader epoch 'x'");       // not a number
    bad("0\n1\n2147483648 0\n", "line 3: leader epoch");  // epoch beyond int32
    bad("0\n1\n1 9223372036854775808\n", "line 3: start offset");
    bad("0\n1\n-1 5\n", "line 3: negative");
    bad("0\n1\n1 -5\n", "line 3: negative");
    bad("0\n2\n2 10\n1 20\n", "line 4");      // epochs go down
    bad("0\n2\n1 10\n1 20\n", "line 4");      // epoch repeated
    bad("0\n2\n1 10\n2 10\n", "line 4");      // offsets do not increase
    bad("0\n1\n1 10\ntrailing\n", "line 4");  // garbage after the entries
  }
  SECTION("a failed write returns the error, keeps the change in memory, and flush() retries") {
    const fs::path sub = dir / "p-0";
    fs::create_directories(sub);
    auto c = leader_epoch_cache::open(sub, *posix_file_system::shared());
    REQUIRE(c);
    REQUIRE((*c)->assign(leader_epoch{1}, offset{0}));
    fs::remove_all(sub);
    auto r = (*c)->assign(leader_epoch{2}, offset{10});
    REQUIRE_FALSE(r);
    CHECK((*c)->entries() == entry_list{ee(1, 0), ee(2, 10)});
    fs::create_directories(sub);
    REQUIRE((*c)->flush());
    CHECK(slurp(sub / "leader-epoch-checkpoint") == "0\n2\n1 0\n2 10\n");
  }
  SECTION("in_memory caches write nothing") {
    auto c = leader_epoch_cache::in_memory();
    CHECK(c->path().empty());
    REQUIRE(c->assign(leader_epoch{1}, offset{0}));
    REQUIRE(c->flush());
    CHECK_FALSE(fs::exists(file));
  }
}

namespace {

// A deliberately naive model of Kafka's LeaderEpochFileCache: a std::map, linear scans, each
// method transcribed from the Java without the brook code's shortcuts.
struct naive_cache {
  std::map<std::int32_t, std::int64_t> m;  // epoch -> start offset

  void assign(std::int32_t e, std::int64_t s) {
    if (!m.empty()) {
      auto [le, ls] = *m.rbegin();
      if (!(e != le || s < ls)) return;
    }
    while (!m.empty()) {
      auto it = std::prev(m.end());
      if (it->first >= e || it->second >= s)
        m.erase(it);
      else
        break;
    }
    m[e] = s;
  }
  void truncate_from_end(std::int64_t o) {
    if (o < 0 || m.empty() || m.rbegin()->second < o) return;
    while (!m.empty() && m.rbegin()->second >= o) m.erase(std::prev(m.end()));
  }
  void truncate_from_start(std::int64_t o) {
    std::optional<std::int32_t> last;
    while (!m.empty() && m.begin()->second <= o) {
      last = m.begin()->first;
      m.erase(m.begin());
    }
    if (last) m[*last] = o;
  }
  epoch_end_offset end_offset_for(std::int32_t req, std::int64_t leo) const {
    if (req == -1) return eo(-1, -1);
    if (!m.empty() && m.rbegin()->first == req) return eo(req, leo);
    std::optional<std::pair<std::int32_t, std::int64_t>> floor, higher;
    for (auto [e, s] : m) {
      if (e <= req) floor = std::pair{e, s};
      if (e > req && !higher) higher = std::pair{e, s};
    }
    if (!higher) return eo(-1, -1);
    if (!floor) return eo(req, higher->second);
    return eo(floor->first, higher->second);
  }
  std::optional<leader_epoch> epoch_for_offset(std::int64_t o) const {
    std::optional<leader_epoch> prev;
    for (auto [e, s] : m) {
      if (s == o) return leader_epoch{e};
      if (s > o) return prev;
      prev = leader_epoch{e};
    }
    return prev;
  }
  entry_list list() const {
    entry_list v;
    for (auto [e, s] : m) v.push_back(ee(e, s));
    return v;
  }
};

void check_monotonic(const entry_list& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    REQUIRE(v[i - 1].epoch < v[i].epoch);
    REQUIRE(v[i - 1].start_offset < v[i].start_offset);
  }
}

}  // namespace

TEST_CASE("epoch cache: seeded random operations match a naive model", "[replication][epoch_cache]") {
  const std::uint32_t seed = 0xe90c4;
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int run = 0; run < 400; ++run) {
    auto c = leader_epoch_cache::in_memory();
    naive_cache model;
    for (int step = 0; step < 80; ++step) {
      const int op = pick(0, 9);
      std::string what;
      if (op < 6) {
        const int e = pick(0, 12);
        const int s = pick(0, 60);
        what = fmt::format("assign({}, {})", e, s);
        REQUIRE(c->assign(leader_epoch{e}, offset{s}));
        model.assign(e, s);
      } else if (op < 8) {
        const int o = pick(-2, 62);
        what = fmt::format("truncate_from_end({})", o);
        REQUIRE(c->truncate_from_end(offset{o}));
        model.truncate_from_end(o);
      } else {
        const int o = pick(-2, 62);
        what = fmt::format("truncate_from_start({})", o);
        REQUIRE(c->truncate_from_start(offset{o}));
        model.truncate_from_start(o);
      }
      INFO("seed " << seed << " run " << run << " step " << step << ": " << what);
      const auto got = c->entries();
      REQUIRE(got == model.list());
      check_monotonic(got);
      const std::int64_t leo = got.empty() ? pick(0, 70) : got.back().start_offset.value() + pick(0, 5);
      for (int req = -3; req <= 14; ++req)
        REQUIRE(c->end_offset_for(leader_epoch{req}, offset{leo}) == model.end_offset_for(req, leo));
      for (int o = -1; o <= 64; ++o) REQUIRE(c->epoch_for_offset(offset{o}) == model.epoch_for_offset(o));
    }
  }
}

TEST_CASE("epoch cache: a simulated replica log, file backed, reopened as it goes", "[replication][epoch_cache]") {
  // The replica's log holds records [log_start, leo), each stamped with the epoch of the leader
  // that wrote it. The partition calls assign(epoch, leo) when it becomes leader and before
  // each append, truncate_from_end(t) when the log is truncated to t, truncate_from_start(s)
  // when the log start moves to s. Then for every record the cache must name its epoch, and for
  // every epoch that has records (other than the latest) end_offset_for must return that epoch
  // and the offset of the first record of a later epoch (or the log end): what a follower
  // truncates to.
  const std::uint32_t seed = 0x10c5eed;
  std::mt19937 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int run = 0; run < 80; ++run) {
    // Every 16th run is file backed and reopens the file now and then; the rest stay in memory
    // (each change of a file-backed cache costs two fsyncs).
    const bool on_disk = run % 16 == 0;
    test::temp_dir dir{"brook-epoch-sim"};
    std::unique_ptr<leader_epoch_cache> c;
    if (on_disk) {
      auto opened = leader_epoch_cache::open(dir.path(), *posix_file_system::shared());
      REQUIRE(opened);
      c = std::move(*opened);
    } else {
      c = leader_epoch_cache::in_memory();
    }
    std::int64_t log_start = 0;
    std::vector<std::int32_t> record_epoch;  // record_epoch[o - log_start]
    std::int32_t leader = 0;
    REQUIRE(c->assign(leader_epoch{leader}, offset{0}));
    auto leo = [&] { return log_start + static_cast<std::int64_t>(record_epoch.size()); };
    for (int step = 0; step < 60; ++step) {
      const auto op = pick(0, 19);
      std::string what;
      if (op < 3) {
        leader += static_cast<std::int32_t>(pick(1, 3));
        what = fmt::format("leader epoch {} at {}", leader, leo());
        REQUIRE(c->assign(leader_epoch{leader}, offset{leo()}));
      } else if (op < 12) {
        const auto n = pick(1, 5);
        what = fmt::format("append {} in epoch {} at {}", n, leader, leo());
        REQUIRE(c->assign(leader_epoch{leader}, offset{leo()}));
        record_epoch.insert(record_epoch.end(), static_cast<std::size_t>(n), leader);
      } else if (op < 15) {
        const auto t = pick(log_start, leo());
        what = fmt::format("truncate to {}", t);
        record_epoch.resize(static_cast<std::size_t>(t - log_start));
        REQUIRE(c->truncate_from_end(offset{t}));
      } else if (op < 18) {
        const auto s = pick(log_start, leo());
        what = fmt::format("log start to {}", s);
        record_epoch.erase(record_epoch.begin(), record_epoch.begin() + (s - log_start));
        log_start = s;
        REQUIRE(c->truncate_from_start(offset{s}));
      } else if (on_disk) {
        what = "reopen";
        const auto before = c->entries();
        c.reset();
        auto r = leader_epoch_cache::open(dir.path(), *posix_file_system::shared());
        REQUIRE(r);
        c = std::move(*r);
        REQUIRE(c->entries() == before);
      } else {
        what = "nothing";
      }
      INFO("seed " << seed << " run " << run << " step " << step << ": " << what);
      const auto v = c->entries();
      check_monotonic(v);
      if (!record_epoch.empty()) {
        REQUIRE(!v.empty());
        REQUIRE(v.front().start_offset.value() <= log_start);  // truncate_from_start moved it up
      }
      for (std::size_t i = 0; i < record_epoch.size(); ++i) {
        const auto o = log_start + static_cast<std::int64_t>(i);
        INFO("offset " << o);
        REQUIRE(c->epoch_for_offset(offset{o}) == leader_epoch{record_epoch[i]});
      }
      const auto latest = c->latest_epoch();
      for (std::size_t i = 0; i < record_epoch.size(); ++i) {
        const std::int32_t e = record_epoch[i];
        if (latest && *latest == leader_epoch{e}) continue;  // the latest epoch answers the log end
        std::int64_t end = leo();
        for (std::size_t k = i; k < record_epoch.size(); ++k)
          if (record_epoch[k] > e) {
            end = log_start + static_cast<std::int64_t>(k);
            break;
          }
        INFO("epoch " << e);
        REQUIRE(c->end_offset_for(leader_epoch{e}, offset{leo()}) == eo(e, end));
      }
    }
  }
}

TEST_CASE("epoch cache: concurrent readers see consistent states while a writer changes it",
          "[replication][epoch_cache]") {
  auto c = leader_epoch_cache::in_memory();
  std::atomic<bool> done{false};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t)
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        auto v = c->entries();
        for (std::size_t i = 1; i < v.size(); ++i)
          if (!(v[i - 1].epoch < v[i].epoch && v[i - 1].start_offset < v[i].start_offset)) std::abort();
        auto latest = c->latest_epoch();
        if (latest) {
          auto r = c->end_offset_for(*latest, offset{1'000'000});
          // The latest may change between the two calls; the answer is one of Kafka's shapes.
          if (r.epoch.value() > latest->value()) std::abort();
        }
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  while (reads.load(std::memory_order_relaxed) < 3) std::this_thread::yield();  // readers running
  for (std::int32_t e = 0; e < 20'000; ++e) {
    REQUIRE(c->assign(leader_epoch{e}, offset{e * 10}));
    if (e % 100 == 99) REQUIRE(c->truncate_from_start(offset{e * 10 - 500}));
    if (e % 1000 == 999) REQUIRE(c->truncate_from_end(offset{e * 10 - 50}));
  }
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  CHECK(reads.load() > 0);
  check_monotonic(c->entries());
}

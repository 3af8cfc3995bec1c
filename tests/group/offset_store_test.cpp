#include <catch2/catch.hpp>
#include <thread>

#include <brook/group/offset_store.hpp>

#include "group_support.hpp"
#include "support/checks.hpp"
#include "support/temp_dir.hpp"
#include "support/test_codecs.hpp"

using namespace brook;
using brook::test::tp;

namespace {
std::unique_ptr<offset_store> open_store(data_dir& dd, std::int32_t partitions = 3) {
  auto s = offset_store::open(dd, partitions);
  REQUIRE_OK(s);
  return std::move(*s);
}
offset_and_metadata om(std::int64_t o, std::string md = {}, timestamp_ms t = 100) {
  return offset_and_metadata{offset(o), 4, std::move(md), t};
}
}  // namespace

TEST_CASE("offset_store: creates a compacted __consumer_offsets and keeps its partition count",
          "[group][offset_store]") {
  brook::test::group_env env;  // its coordinator created the topic with 3 partitions
  auto s = open_store(*env.dd, 7);
  CHECK(s->partitions() == 3);  // an existing topic keeps its count: the group mapping depends on it
  CHECK(s->partition_for("my-consumer-group") == offsets_topic_partition_for("my-consumer-group", 3));
  auto p = env.dd->get_partition(offset_store::topic_name, partition_id(0));
  REQUIRE_OK(p);
  CHECK((*p)->log().config().compacts());
  CHECK(offset_store::open(*env.dd, 0).error() == errc::invalid_partitions);
}

TEST_CASE("offset_store: load replays offsets, metadata and tombstones to the latest state", "[group][offset_store]") {
  brook::test::group_env env;
  env.create_topic("t", 2);
  auto s = open_store(*env.dd);
  REQUIRE_OK(s->append_offsets("g", {{tp("t", 0), om(5, "first")}, {tp("t", 1), om(9)}}, 100));
  REQUIRE_OK(s->append_offsets("g", {{tp("t", 0), om(7, "second", 200)}}, 200));
  REQUIRE_OK(s->append_offsets("h", {{tp("t", 0), om(1)}}, 100));
  group_metadata_value md;
  md.protocol_type = "consumer";
  md.generation = 3;
  REQUIRE_OK(s->append_group_metadata("g", md, 300));
  REQUIRE_OK(s->append_tombstones("g", {tp("t", 1)}, false, 400));
  REQUIRE_OK(s->append_tombstones("h", {tp("t", 0)}, true, 400));

  auto loaded = s->load();
  REQUIRE_OK(loaded);
  REQUIRE(loaded->size() == 1);  // h: its only offset and its metadata deleted
  const stored_group& g = loaded->at("g");
  REQUIRE(g.metadata);
  CHECK(g.metadata->generation == 3);
  REQUIRE(g.offsets.size() == 1);
  CHECK(g.offsets.at(tp("t", 0)) == om(7, "second", 200));

  env.reopen();  // the same state after a restart, read from the files
  auto again = open_store(*env.dd)->load();
  REQUIRE_OK(again);
  CHECK(again->at("g").offsets.at(tp("t", 0)) == om(7, "second", 200));
}

namespace {
/// The compression of the first batch the store wrote for group `g`.
compression_type first_batch_codec(data_dir& dd, const offset_store& s, const std::string& g) {
  auto part = dd.get_partition(offset_store::topic_name, partition_id(s.partition_for(g)));
  REQUIRE_OK(part);
  auto slice = (*part)->log().read((*part)->log().log_start_offset());
  REQUIRE_OK(slice);
  auto first = record_batch_view::parse(slice->bytes(), batch_check{true, false});
  REQUIRE_OK(first);
  return first->compression();
}
}  // namespace

TEST_CASE("offset_store: a broker-wide compression.type leaves the offsets uncompressed", "[group][offset_store]") {
  // Kafka creates __consumer_offsets with compression.type=producer, so the coordinator's
  // batches stay as it writes them (uncompressed) whatever the broker's default.
  test::temp_dir dir{"brook-offsets-producer"};
  data_dir_options o;
  o.defaults.codecs = std::make_shared<const compression_codecs>(test::all_codecs());
  o.defaults.compression = compression_type::lz4;
  auto dd = data_dir::open(dir.path(), o);
  REQUIRE_OK(dd);
  auto s = open_store(**dd);
  REQUIRE_OK(s->append_offsets("g", {{tp("t", 0), om(5)}}, 100));
  CHECK(first_batch_codec(**dd, *s, "g") == compression_type::none);
  auto desc = (*dd)->describe_topic(offset_store::topic_name);
  REQUIRE_OK(desc);
  CHECK(desc->config.overrides.at("compression.type") == "producer");
  REQUIRE_OK((*dd)->close());
}

TEST_CASE("offset_store: load reads offsets stored compressed", "[group][offset_store]") {
  // A __consumer_offsets whose own compression.type names a codec (set by whoever created it)
  // has the coordinator's batches recompressed on append; the load after a restart reads
  // them with the data directory's codecs.
  test::temp_dir dir{"brook-offsets-lz4"};
  data_dir_options o;
  o.defaults.codecs = std::make_shared<const compression_codecs>(test::all_codecs());
  {
    auto dd = data_dir::open(dir.path(), o);
    REQUIRE_OK(dd);
    topic_config tc;
    tc.partitions = 3;
    tc.overrides = offsets_topic_spec{}.configs();
    tc.overrides["compression.type"] = "lz4";
    REQUIRE_OK((*dd)->create_internal_topic(offset_store::topic_name, std::move(tc)));
    REQUIRE_OK((*dd)->close());
  }
  for (int round = 0; round < 2; ++round) {  // written, then read again after a reopen
    auto dd = data_dir::open(dir.path(), o);
    REQUIRE_OK(dd);
    auto s = open_store(**dd);
    if (round == 0) {
      REQUIRE_OK(s->append_offsets("g", {{tp("t", 0), om(5, "first")}, {tp("t", 1), om(9)}}, 100));
      REQUIRE_OK(s->append_offsets("g", {{tp("t", 0), om(7, "second", 200)}}, 200));
      CHECK(first_batch_codec(**dd, *s, "g") == compression_type::lz4);  // the case under test
    }
    auto loaded = s->load();
    REQUIRE_OK(loaded);
    REQUIRE(loaded->count("g") == 1);
    CHECK(loaded->at("g").offsets.at(tp("t", 0)) == om(7, "second", 200));
    CHECK(loaded->at("g").offsets.at(tp("t", 1)) == om(9));
    REQUIRE_OK((*dd)->close());
  }
}

TEST_CASE("offset_store: a record that does not decode fails the load naming where", "[group][offset_store]") {
  brook::test::group_env env;
  auto s = open_store(*env.dd);
  auto part = env.dd->get_partition(offset_store::topic_name, partition_id(s->partition_for("g")));
  REQUIRE_OK(part);
  record_batch_builder b;
  const std::string key("\x00\x01garbage", 9);  // a version-1 (offset commit) key whose group is cut short
  b.append(1, nullable_bytes(std::string_view(key.data(), key.size())), nullable_bytes(std::string_view("v")));
  REQUIRE_OK((*part)->append(b.finish()));
  auto r = s->load();
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == errc::corrupt_message);
  CHECK_THAT(r.error().message(), Catch::Contains("__consumer_offsets-"));
}

namespace {
/// A data directory whose appends fail with a chosen error, or complete later on another
/// thread (as a cluster's acks=all does).
class scripted_backend final : public coordinator_backend {
 public:
  explicit scripted_backend(data_dir& dd) : inner_(dd) {}
  scripted_backend(const scripted_backend&) = delete;
  scripted_backend& operator=(const scripted_backend&) = delete;
  ~scripted_backend() override {
    for (auto& t : threads_) t.join();
  }
  std::optional<errc> fail_with;
  bool complete_on_thread = false;
  bool never_answer = false;  ///< keeps the callback in `unanswered` instead
  append_callback unanswered;
  fetch_source& source() override { return inner_.source(); }
  std::chrono::milliseconds append_timeout() const override { return std::chrono::milliseconds(0); }
  std::shared_ptr<const brook::clock> clock() const override { return inner_.clock(); }
  bool read_only() const override { return false; }
  result<std::int32_t> open_offsets_topic(const offsets_topic_spec& spec) override {
    return inner_.open_offsets_topic(spec);
  }
  void append_offsets(partition_id p, std::span<std::byte> batch, append_callback done) override {
    if (fail_with) {
      done(make_error(*fail_with, "scripted"));
      return;
    }
    if (never_answer) {
      unanswered = std::move(done);
      return;
    }
    if (!complete_on_thread) {
      inner_.append_offsets(p, batch, std::move(done));
      return;
    }
    std::vector<std::byte> copy(batch.begin(), batch.end());
    threads_.emplace_back([this, p, copy = std::move(copy), done = std::move(done)]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the caller is already waiting
      inner_.append_offsets(p, copy, std::move(done));
    });
  }

 private:
  data_dir_backend inner_;
  std::vector<std::thread> threads_;
};
}  // namespace

TEST_CASE("offset_store: append errors come back as Kafka's coordinator answers a commit", "[group][offset_store]") {
  brook::test::group_env env;
  env.create_topic("t", 1);
  scripted_backend backend(*env.dd);
  auto s = offset_store::open(backend, 3);
  REQUIRE_OK(s);
  const std::vector<std::pair<errc, errc>> cases = {
      {errc::leader_not_available, errc::coordinator_not_available},
      {errc::broker_not_available, errc::coordinator_not_available},
      {errc::not_enough_replicas, errc::coordinator_not_available},
      {errc::not_enough_replicas_after_append, errc::coordinator_not_available},
      {errc::unknown_topic_or_partition, errc::coordinator_not_available},
      {errc::not_leader_or_follower, errc::not_coordinator},
      {errc::record_too_large, errc::invalid_commit_offset_size},
      {errc::record_list_too_large, errc::invalid_commit_offset_size},
      {errc::request_timed_out, errc::request_timed_out},
      {errc::kafka_storage_error, errc::not_coordinator},
      {errc::corrupt_message, errc::corrupt_message},
  };
  for (const auto& [from, to] : cases) {
    INFO(errc_name(from));
    backend.fail_with = from;
    auto r = (*s)->append_offsets("g", {{tp("t", 0), om(5)}}, 100);
    REQUIRE_FALSE(r);
    CHECK(r.error() == to);
  }
  backend.fail_with.reset();
  backend.complete_on_thread = true;  // the store waits for a completion from elsewhere
  REQUIRE_OK((*s)->append_offsets("g", {{tp("t", 0), om(6)}}, 100));
  auto loaded = (*s)->load();
  REQUIRE_OK(loaded);
  CHECK(loaded->at("g").offsets.at(tp("t", 0)).off == offset(6));
  // A backend that never answers: the store gives up after append_timeout() + append_margin,
  // and the late answer harms nothing.
  backend.complete_on_thread = false;
  backend.never_answer = true;
  auto silent = (*s)->append_offsets("g", {{tp("t", 0), om(7)}}, 100);
  REQUIRE_FALSE(silent);
  CHECK(silent.error() == errc::request_timed_out);
  REQUIRE(backend.unanswered);
  backend.unanswered(make_error(errc::request_timed_out, "late"));
}

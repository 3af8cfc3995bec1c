// Writes the seed corpus of brook_fuzz_broker (broker_fuzz.cpp), whose scratch node has
// topics "a" (1 partition) and "b" (3 partitions):
//   - <Api>-v<N>.bin: for every API and version kafka_broker::apis() serves, one request of
//     seeded random values (as corpus_request/ holds; most take the error paths: unknown
//     topics, bad names, random record bytes);
//   - scenario-<name>.bin: byte streams of several frames that reach the paths a random
//     request does not: a valid batch produced to a and b then fetched, listed by offset and
//     time, a long-poll Fetch past the end, topics created (with configs), described and
//     deleted, Metadata auto-creating a topic, acks=0 and a Fetch of several partitions.
// tests/fuzz/corpus_broker/ is its committed output.
//
//   brook_fuzz_make_broker_corpus <dir>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <brook/protocol/request.hpp>
#include <brook/server/kafka_broker.hpp>

#include "support/log_builders.hpp"
#include "support/random_message.hpp"

namespace {

using namespace brook;
using namespace brook::protocol;

/// Frames appended one after another, as a client pipelines them.
class stream {
 public:
  template <typename Req>
  stream& add(const Req& req, std::int16_t version) {
    constexpr auto key = static_cast<std::int16_t>(codec::schema_of<Req>.info.api_key);
    auto f = encode_request({key, version, ++correlation_, "fuzz"}, req);
    if (!f) {
      std::fprintf(stderr, "key %d v%d: %s\n", key, version, f.error().to_string().c_str());
      std::exit(1);
    }
    bytes_.insert(bytes_.end(), f->begin(), f->end());
    return *this;
  }
  const std::vector<std::byte>& bytes() const noexcept { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
  std::int32_t correlation_ = 0;
};

produce_request produce_of(const std::string& topic, std::int32_t partition, const std::vector<std::byte>& batch,
                           std::int16_t acks = 1) {
  produce_request r;
  r.acks = acks;
  r.timeout_ms = 1000;
  r.topic_data.push_back({topic, {{partition_id(partition), records::view(batch)}}});
  return r;
}

fetch_request fetch_of(const std::string& topic, std::vector<std::int32_t> partitions, std::int64_t from,
                       std::int32_t max_wait = 0, std::int32_t min_bytes = 1) {
  fetch_request r;
  r.max_wait_ms = max_wait;
  r.min_bytes = min_bytes;
  r.max_bytes = 1 << 20;
  fetch_request_topic t{topic, {}, {}};
  for (auto p : partitions) {
    fetch_request_partition fp;
    fp.partition = partition_id(p);
    fp.fetch_offset = offset(from);
    fp.partition_max_bytes = 64 * 1024;
    t.partitions.push_back(fp);
  }
  r.topics.push_back(std::move(t));
  return r;
}

list_offsets_request list_offsets_of(const std::string& topic, std::vector<timestamp_ms> stamps) {
  list_offsets_request r;
  r.replica_id = broker_id(-1);
  list_offsets_request_topic t{topic, {}};
  for (auto ts : stamps) t.partitions.push_back({partition_id(0), leader_epoch(-1), ts, 1});
  r.topics.push_back(std::move(t));
  return r;
}

metadata_request metadata_of(std::vector<std::string> names) {
  metadata_request r;
  r.topics = std::vector<metadata_request_topic>{};
  for (auto& n : names) r.topics->push_back({{}, n});
  return r;
}

std::vector<std::pair<std::string, std::vector<std::byte>>> scenarios() {
  const auto batch = brook::test::make_batch(3, 1'000);
  const auto later = brook::test::make_batch(2, 5'000, "w");
  std::vector<std::pair<std::string, std::vector<std::byte>>> out;
  out.emplace_back("produce-fetch", stream()
                                        .add(produce_of("a", 0, batch), 9)
                                        .add(fetch_of("a", {0}, 0), 12)
                                        .add(produce_of("b", 2, later, -1), 11)
                                        .add(fetch_of("b", {0, 1, 2}, 0), 11)
                                        .bytes());
  out.emplace_back("produce-list-offsets", stream()
                                               .add(produce_of("a", 0, batch), 8)
                                               .add(produce_of("a", 0, later), 8)
                                               .add(list_offsets_of("a", {-1, -2, -3, 1'001, 4'000, 9'000}), 7)
                                               .add(list_offsets_of("a", {-1, -2, 0}), 1)
                                               .bytes());
  out.emplace_back("long-poll", stream().add(fetch_of("a", {0}, 0, 30'000, 1 << 20), 12).bytes());
  out.emplace_back("fetch-out-of-range", stream().add(fetch_of("b", {1, 7}, 42, 100), 4).bytes());
  out.emplace_back("acks0", stream().add(produce_of("a", 0, batch, 0), 3).add(metadata_of({"a"}), 1).bytes());
  create_topics_request create;
  create.topics.push_back({"c1", 2, 1, {}, {{"segment.bytes", "1024"}, {"cleanup.policy", "compact"}}});
  create.topics.push_back({"c2", -1, -1, {}, {{"retention.ms", "-1"}}});
  create.topics.push_back({"bad name!", 1, 1, {}, {}});
  describe_configs_request describe;
  describe.resources.push_back({2, "c1", std::nullopt});
  describe.resources.push_back({4, "0", std::vector<std::string>{"num.partitions"}});
  delete_topics_request drop;
  drop.topic_names = {"c1", "c2", "missing"};
  out.emplace_back("admin", stream()
                                .add(create, 5)
                                .add(describe, 4)
                                .add(describe, 0)
                                .add(produce_of("c1", 1, batch), 9)
                                .add(drop, 4)
                                .add(metadata_of({}), 0)
                                .bytes());
  out.emplace_back("auto-create", stream()
                                      .add(metadata_of({"auto-1", "__consumer_offsets", ""}), 9)
                                      .add(produce_of("auto-1", 0, batch), 9)
                                      .add(metadata_request{std::nullopt}, 12)
                                      .bytes());
  return out;
}

void write(const std::filesystem::path& p, const std::vector<std::byte>& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: brook_fuzz_make_broker_corpus <dir>\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  brook::test::message_randomizer rnd(20261203);
  int written = 0;
  for_each_api([&](auto m) {
    using A = decltype(m);
    const auto served = server::kafka_broker::apis().find(A::key);
    if (!served) return;
    for (std::int16_t v = served->lo; v <= served->hi; ++v) {
      stream s;
      s.add(rnd.make<typename A::request>(v), v);
      write(dir / (std::string(protocol::api(A::key).name) + "-v" + std::to_string(v) + ".bin"), s.bytes());
      ++written;
    }
  });
  for (const auto& [name, bytes] : scenarios()) {
    write(dir / ("scenario-" + name + ".bin"), bytes);
    ++written;
  }
  std::printf("wrote %d inputs to %s\n", written, dir.c_str());
  return 0;
}

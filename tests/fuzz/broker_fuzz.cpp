// libFuzzer target for brook's broker behind the request decoder: a client's byte stream is
// cut into frames (frame_reader, limit 1 MiB) and decoded as tcp_server's connection_state
// does (header, then the body only for an API and version kafka_broker::apis() serves);
// each request is then executed by kafka_broker::handle on a scratch node, and its answer,
// flattened as a connection would send it, must decode again as that API's response (built
// as brook_fuzz_broker with -DBROOK_BUILD_FUZZERS=ON and Clang, and as
// brook_fuzz_broker_replay, which ctest runs over corpus_broker/, written by
// brook_fuzz_make_broker_corpus). Invariants, for every served request:
//   - handle() answers exactly once, before it returns (see "no waiting" below);
//   - no answer only for Produce with acks=0, and then always none;
//   - the answer is one frame: its size prefix counts the rest, its header carries the
//     request's correlation id, and its body decodes as the API's response at the request's
//     version with no byte left over;
//   - nothing crashes, asserts (BROOK_ASSERT aborts), trips ASan/UBSan or leaks.
//
// The scratch node: opened once per process in a fresh temporary directory with topics "a"
// (1 partition) and "b" (3 partitions), housekeeping off. State carries over from one input
// to the next (an append stays for the next Fetch), which is the point, and is bounded:
//   - a topic created by Metadata (auto-creation) or CreateTopics lives until the end of the
//     input that created it: its configs may be anything (segment.bytes=14 rolls a segment,
//     with its mapped index files, at every batch), so only a and b, with the defaults, carry
//     data from input to input; a and b are recreated when an input deleted them;
//   - an input's first max_frames_per_input frames are executed, the rest ignored;
//   - before a request is handled, CreateTopics names at most max_new_topics topics of at
//     most max_new_partitions partitions each (a larger count is lowered to it; -1, 0 and
//     negative counts go through unchanged, they are error paths worth fuzzing) and
//     Metadata names at most max_metadata_topics topics: otherwise one 1 MiB input could ask
//     for 2^31-1 partition directories or tens of thousands of topics;
//   - the node is closed, its directory removed and a fresh one opened after
//     inputs_per_node inputs or once max_frame_bytes_per_node bytes of Produce frames were
//     handled (appended bytes are at most those): the disk holds at most about 64 MiB of log.
// A crash that depends on earlier inputs may not reproduce from its one input; rerun with
// BROOK_BROKER_FUZZ_FRESH=1, which opens a fresh node for every input (slower) to tell.
// BROOK_BROKER_FUZZ_TRACE=1 prints every answer as JSON (tests/support/message_json.hpp).
//
// No waiting: the broker's purgatory is stopped as soon as the broker is made, so a Fetch
// below min_bytes is answered at once with what there is, by the same delayed_fetch::expire
// that answers it when max_wait_ms passes (request_purgatory::park after stop()). A long
// poll (max_wait_ms up to 2^31-1) thus never stalls the fuzzer, and every answer comes
// before handle() returns. Parking and waking are covered by the threaded server tests.
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <brook/codec/message_codec.hpp>
#include <brook/core/error.hpp>
#include <brook/embedded.hpp>
#include <brook/format/bytes.hpp>
#include <brook/protocol/frame.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/request.hpp>
#include <brook/protocol/response_header.hpp>
#include <brook/server/kafka_broker.hpp>

#include "fuzz_check.hpp"
#include "support/message_json.hpp"
#include "support/test_codecs.hpp"

namespace {

using namespace brook;

constexpr std::size_t max_frames_per_input = 16;
constexpr std::size_t max_new_topics = 8;
constexpr std::int32_t max_new_partitions = 4;
constexpr std::size_t max_metadata_topics = 8;
constexpr std::uint64_t inputs_per_node = 2'000;
constexpr std::size_t max_frame_bytes_per_node = 64 << 20;
const std::vector<std::string> base_topics = {"a", "b"};

/// The scratch node and its broker; one per process, renewed within the bounds above.
class scratch {
 public:
  scratch() : fresh_each_input_(std::getenv("BROOK_BROKER_FUZZ_FRESH") != nullptr) { open(); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() { close(); }

  server::kafka_broker& broker() { return *broker_; }

  /// Before an input: a fresh node when this one reached its bounds.
  void begin_input() {
    if (fresh_each_input_ || inputs_ >= inputs_per_node || produce_bytes_ >= max_frame_bytes_per_node) {
      close();
      open();
    }
    ++inputs_;
  }
  void count_produce(std::size_t frame_bytes) { produce_bytes_ += frame_bytes; }

  /// After an input: the topics it created deleted, a and b back.
  void end_input() {
    auto& dir = node_->dir();
    for (const auto& t : dir.list_topics())
      if (!is_base(t) && !is_internal_topic(t)) FUZZ_CHECK(dir.delete_topic(t).has_value());
    ensure_base_topics();
  }

 private:
  static bool is_base(const std::string& t) { return t == base_topics[0] || t == base_topics[1]; }

  void open() {
    dir_ = std::filesystem::temp_directory_path() / fmt::format("brook-broker-fuzz-{}-{}", ::getpid(), generation_++);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    node_options o;
    o.housekeeping_interval = std::chrono::milliseconds(0);
    o.dir.defaults.codecs = std::make_shared<const compression_codecs>(test::all_codecs());  // compressed produce too
    auto n = node::open(dir_, std::move(o));
    if (!n) {
      std::fprintf(stderr, "broker_fuzz: node::open %s: %s\n", dir_.c_str(), n.error().to_string().c_str());
      std::abort();
    }
    node_ = std::move(*n);
    ensure_base_topics();
    broker_ = std::make_unique<server::kafka_broker>(*node_);
    broker_->stop();  // no waiting: see the file comment
    inputs_ = 0;
    produce_bytes_ = 0;
  }

  void ensure_base_topics() {
    auto& dir = node_->dir();
    for (std::size_t i = 0; i < base_topics.size(); ++i) {
      if (dir.partition_count(base_topics[i])) continue;
      const std::int32_t partitions = i == 0 ? 1 : 3;
      FUZZ_CHECK(node_->create_topic(base_topics[i], {.partitions = partitions}).has_value());
    }
  }

  void close() {
    if (!node_) return;
    broker_.reset();
    FUZZ_CHECK(node_->close().has_value());
    node_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  bool fresh_each_input_;
  std::filesystem::path dir_;
  std::uint64_t generation_ = 0;
  std::unique_ptr<node> node_;
  std::unique_ptr<server::kafka_broker> broker_;
  std::uint64_t inputs_ = 0;
  std::size_t produce_bytes_ = 0;
};

scratch& the_scratch() {
  static scratch s;  // closed and removed at exit
  return s;
}

// Lowers what one request may make the node grow by (see the file comment).
void bound(protocol::request_body& body) {
  if (auto* c = std::get_if<protocol::create_topics_request>(&body)) {
    if (c->topics.size() > max_new_topics) c->topics.resize(max_new_topics);
    for (auto& t : c->topics)
      if (t.num_partitions > max_new_partitions) t.num_partitions = max_new_partitions;
  } else if (auto* m = std::get_if<protocol::metadata_request>(&body)) {
    if (m->topics && m->topics->size() > max_metadata_topics) m->topics->resize(max_metadata_topics);
  }
}

// The answer decodes as response `Resp` of the request's API and version, with nothing left.
template <typename Resp>
void check_answer(const protocol::request_header& h, std::span<const std::byte> frame) {
  FUZZ_CHECK(frame.size() >= protocol::frame_prefix_size);
  FUZZ_CHECK(static_cast<std::size_t>(brook::detail::load_be32(frame.data())) ==
             frame.size() - protocol::frame_prefix_size);
  codec::message_reader r(frame.subspan(protocol::frame_prefix_size), "response");
  const auto key = static_cast<protocol::api_key>(h.api_key);
  auto rh = protocol::read_response_header(r, key, h.api_version);
  FUZZ_CHECK(rh.has_value());
  FUZZ_CHECK(rh->correlation_id == h.correlation_id);
  Resp out{};
  auto read = codec::read(r, out, h.api_version);
  if (!read) std::fprintf(stderr, "broker_fuzz: the answer does not decode: %s\n", read.error().to_string().c_str());
  FUZZ_CHECK(read.has_value());
  FUZZ_CHECK(r.expect_end().has_value());
  static const bool trace = std::getenv("BROOK_BROKER_FUZZ_TRACE") != nullptr;
  if (trace)
    std::fprintf(stderr, "%s v%d -> %s\n", std::string(protocol::api(key).name).c_str(), h.api_version,
                 brook::test::message_json(out, h.api_version).c_str());
}

void check_answer_of(const protocol::request_header& h, std::span<const std::byte> frame) {
  bool found = false;
  protocol::for_each_api([&](auto api) {
    using A = decltype(api);
    if (static_cast<std::int16_t>(A::key) != h.api_key) return;
    found = true;
    check_answer<typename A::response>(h, frame);
  });
  FUZZ_CHECK(found);
}

// One frame, as connection_state admits it, then through the broker.
void execute(scratch& s, std::span<const std::byte> frame_bytes) {
  std::vector<std::byte> frame(frame_bytes.begin(), frame_bytes.end());  // the request owns it
  codec::message_reader r(frame, "request header");
  auto h = protocol::read_request_header(r);
  if (!h) return;
  if (!server::kafka_broker::apis().serves(static_cast<protocol::api_key>(h->api_key), h->api_version)) return;
  auto body = protocol::read_request_body(r, *h);
  if (!body) return;
  bound(*body);
  const auto* produce = std::get_if<protocol::produce_request>(&*body);
  const bool silent = produce != nullptr && produce->acks == 0;
  if (produce) s.count_produce(frame.size());
  const protocol::request_header header = *h;
  int answers = 0;
  std::optional<std::vector<std::byte>> answer;
  server::incoming_request q(0, std::move(frame), std::move(*h), std::move(*body));
  s.broker().handle(std::move(q), server::reply([&](std::optional<protocol::response_frame> f) {
                      ++answers;
                      if (f) answer = f->flatten();
                    }));
  FUZZ_CHECK(answers == 1);
  FUZZ_CHECK(answer.has_value() != silent);
  if (answer) check_answer_of(header, *answer);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  scratch& s = the_scratch();
  s.begin_input();
  protocol::frame_reader reader(1 << 20);
  reader.feed(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  for (std::size_t frames = 0; frames < max_frames_per_input; ++frames) {
    auto f = reader.next();
    if (!f || !*f) break;  // refused (the connection would close) or no whole frame left
    execute(s, **f);
  }
  s.end_input();
  return 0;
}

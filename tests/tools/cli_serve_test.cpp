// End-to-end tests of `brook serve`: the broker runs as a child process (support/
// cli_runner.hpp) on a temporary data directory and port 0; the test reads its first
// stdout line, talks Kafka's protocol to it over a loopback socket, and stops it with a
// signal. Every wait is bounded (poll with a deadline); nothing asserts on time.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <brook/format/bytes.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/protocol/produce.hpp>
#include <brook/protocol/request.hpp>
#include <brook/storage/data_dir.hpp>

#include "support/checks.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_codecs.hpp"

#ifndef BROOK_CLI_PATH
TEST_CASE("brook serve tests need BROOK_BUILD_TOOLS=ON", "[tools][cli][serve]") {
  WARN("the brook tool is not built (BROOK_BUILD_TOOLS=OFF): serve tests not run");
}
#else

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using namespace brook::test::cli;

/// A running `brook serve --data-dir D --listen 127.0.0.1:0 <extra...>` and its port.
struct server {
  child proc;
  std::uint16_t port = 0;

  explicit server(const fs::path& d, std::vector<std::string> extra = {})
      : proc([&] {
          std::vector<std::string> a{"serve", "--data-dir", d.string(), "--listen", "127.0.0.1:0"};
          a.insert(a.end(), extra.begin(), extra.end());
          return a;
        }()) {
    const auto line = proc.wait_stdout_line();
    REQUIRE(line.has_value());
    const std::string prefix = "listening on 127.0.0.1:";
    REQUIRE(line->starts_with(prefix));
    const int p = std::stoi(line->substr(prefix.size()));
    REQUIRE(p > 0);
    REQUIRE(p < 65536);
    port = static_cast<std::uint16_t>(p);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
  /// Sends `sig` and collects the exit.
  run_result stop(int sig) {
    proc.send_signal(sig);
    auto r = proc.finish();
    INFO("stderr:\n" << r.err);
    REQUIRE(r.exit_code != -1);
    return r;
  }
};

/// A loopback Kafka client socket whose reads poll with a deadline.
class kafka_socket {
 public:
  explicit kafka_socket(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~kafka_socket() { ::close(fd_); }
  kafka_socket(const kafka_socket&) = delete;

  void send(const std::vector<std::byte>& b) {
    REQUIRE(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size()));
  }
  /// The next response frame without its size prefix; nullopt on EOF or after 20 s.
  std::optional<std::vector<std::byte> > frame() {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    std::vector<std::byte> size(4);
    if (!read_exactly(size, deadline)) return std::nullopt;
    const std::int32_t n = brook::detail::load_be32(size.data());
    REQUIRE(n >= 0);
    std::vector<std::byte> body(static_cast<std::size_t>(n));
    if (!read_exactly(body, deadline)) return std::nullopt;
    return body;
  }

 private:
  bool read_exactly(std::vector<std::byte>& out, std::chrono::steady_clock::time_point deadline) {
    std::size_t have = 0;
    while (have < out.size()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      const ssize_t k = ::recv(fd_, out.data() + have, out.size() - have, 0);
      if (k <= 0) return false;
      have += static_cast<std::size_t>(k);
    }
    return true;
  }
  int fd_;
};

/// Sends ApiVersions v0 with `correlation_id` and checks the answer: that correlation id,
/// no error, and ApiVersions (key 18) among the APIs listed.
void check_api_versions(std::uint16_t port, std::int32_t correlation_id) {
  using namespace brook::protocol;
  kafka_socket s(port);
  auto request = encode_request({18, 0, correlation_id, "cli-serve-test"}, api_versions_request{});
  REQUIRE_OK(request);
  s.send(*request);
  const auto f = s.frame();
  REQUIRE(f.has_value());
  // Response header v0: CorrelationId int32; body v0: ErrorCode int16, ApiKeys [int16 x3].
  REQUIRE(f->size() >= 10);
  CHECK(brook::detail::load_be32(f->data()) == correlation_id);
  CHECK(brook::detail::load_be16(f->data() + 4) == 0);
  const std::int32_t count = brook::detail::load_be32(f->data() + 6);
  REQUIRE(f->size() == 10 + 6 * static_cast<std::size_t>(count));
  bool lists_api_versions = false;
  for (std::int32_t i = 0; i < count; ++i)
    lists_api_versions = lists_api_versions || brook::detail::load_be16(f->data() + 10 + 6 * i) == 18;
  CHECK(lists_api_versions);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// `brook topics --data-dir D <args...>`.
run_result topics(const fs::path& d, std::vector<std::string> args) {
  args.insert(args.begin(), {"topics", "--data-dir", d.string()});
  return brook_cli(args);
}

}  // namespace

TEST_CASE("brook serve answers ApiVersions and a signal stops it cleanly", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  const int sig = GENERATE(SIGTERM, SIGINT);
  INFO("signal " << sig);
  server s(d);
  check_api_versions(s.port, 7);
  check_api_versions(s.port, 8);  // a second connection, after the first closed
  CHECK(read_file(d / ".brook-serve") == s.address() + "\n");

  auto r = s.stop(sig);
  INFO("stderr:\n" << r.err);
  CHECK(r.exit_code == 0);
  CHECK(lines_of(r.out) == std::vector<std::string>{"listening on " + s.address()});
  CHECK(contains(r.err, "INFO started: data directory "));
  CHECK(contains(r.err, sig == SIGINT ? "INFO stopping on SIGINT" : "INFO stopping on SIGTERM"));
  CHECK(contains(r.err, "INFO stopped: data directory "));
  CHECK_FALSE(fs::exists(d / ".brook-serve"));
  // Closed cleanly: a writable open takes the lock and finds everything in place.
  auto reopened = brook::data_dir::open(d);
  REQUIRE_OK(reopened);
  CHECK((*reopened)->list_topics() == std::vector<std::string>{"__consumer_offsets"});
}

TEST_CASE("brook serve --log-level filters what goes to stderr", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  SECTION("error: nothing on a clean run") {
    server s(tmp / "data", {"--log-level", "error"});
    check_api_versions(s.port, 1);
    auto r = s.stop(SIGTERM);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
  SECTION("debug: the configs given and one line per request") {
    server s(tmp / "data", {"--log-level", "debug", "--config", "num.partitions=3"});
    check_api_versions(s.port, 1);
    auto r = s.stop(SIGTERM);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.err, "DEBUG config num.partitions=3"));
    CHECK(contains(r.err, "DEBUG request ApiVersions v0 correlation_id 1 client_id cli-serve-test"));
  }
}

TEST_CASE("while brook serve runs the directory is locked and commands name the broker", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  REQUIRE(topics(d, {"--create", "--topic", "orders"}).exit_code == 0);
  server s(d);
  const std::string hint = "use a Kafka client instead, e.g. `kcat -b " + s.address() + " -L`";

  SECTION("a second serve") {
    auto r = brook_cli({"serve", "--data-dir", d.string(), "--listen", "127.0.0.1:0"});
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "LOG_DIR_LOCKED"));
    CHECK(contains(r.err, hint));
  }
  SECTION("topics --create") {
    auto r = topics(d, {"--create", "--topic", "more"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "LOG_DIR_LOCKED"));
    CHECK(contains(r.err, "it is held by `brook serve`, a Kafka broker listening on " + s.address()));
    CHECK(contains(r.err, hint));
  }
  SECTION("produce to a partition directory") {
    auto r = brook_cli({"produce", (d / "orders-0").string()}, "v\n");
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "LOG_DIR_LOCKED"));
    CHECK(contains(r.err, hint));
  }
  SECTION("consume --group") {
    auto r = brook_cli({"consume", "--data-dir", d.string(), "--topic", "orders", "--group", "g"});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, hint));
  }
  SECTION("topics --list still works: it opens the directory read-only") {
    auto r = topics(d, {"--list"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "__consumer_offsets\norders\n");
  }
  CHECK(s.stop(SIGTERM).exit_code == 0);
}

TEST_CASE("the hint names --advertised-listener when one is given", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  server s(d, {"--advertised-listener", "broker.example:19092"});
  CHECK(read_file(d / ".brook-serve") == "broker.example:19092\n");
  auto r = topics(d, {"--create", "--topic", "orders"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "`kcat -b broker.example:19092 -L`"));
  CHECK(s.stop(SIGTERM).exit_code == 0);
}

TEST_CASE("brook serve on a port in use fails and leaves the directory closed", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  const int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(taken >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(taken, 1) == 0);
  REQUIRE(::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  const std::string listen = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));

  auto r = brook_cli({"serve", "--data-dir", d.string(), "--listen", listen});
  ::close(taken);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(contains(r.err, "ERROR brook: "));
  CHECK(contains(r.err, "--listen " + listen + ": bind: "));
  CHECK_FALSE(fs::exists(d / ".brook-serve"));
  REQUIRE_OK(brook::data_dir::open(d));  // closed: the lock is free
}

TEST_CASE("a .brook-serve left by a killed serve names no broker", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  {
    server s(d);
    CHECK(s.stop(SIGKILL).exit_code == 128 + SIGKILL);
  }
  REQUIRE(fs::exists(d / ".brook-serve"));  // nothing removed it
  // The lock died with the process: writing commands work again.
  REQUIRE(topics(d, {"--create", "--topic", "orders"}).exit_code == 0);
  // Another owner holds the lock now (this test process): the stale address is not shown.
  auto held = brook::data_dir::open(d);
  REQUIRE_OK(held);
  auto r = topics(d, {"--create", "--topic", "more"});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "LOG_DIR_LOCKED"));
  CHECK_FALSE(contains(r.err, "brook serve"));
  CHECK_FALSE(contains(r.err, "kcat"));
}

TEST_CASE("brook serve applies the configs of --config and --config-file", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  const fs::path file = tmp / "server.properties";
  std::ofstream(file) << "# log.* set every topic's defaults\nlog.index.size.max.bytes = 4800\n";
  server s(d, {"--config-file", file.string(), "--config", "offsets.topic.num.partitions=2"});
  // The coordinator created __consumer_offsets with the partitions asked for, and its
  // indexes are preallocated to the size the file gave (the default is 10 MiB).
  CHECK(fs::is_directory(d / "__consumer_offsets-1"));
  CHECK_FALSE(fs::exists(d / "__consumer_offsets-2"));
  CHECK(fs::file_size(d / "__consumer_offsets-0" / "00000000000000000000.index") == 4800);
  CHECK(s.stop(SIGTERM).exit_code == 0);
}

TEST_CASE("brook serve refuses bad configs and addresses as usage errors", "[tools][cli][serve]") {
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  const fs::path file = tmp / "server.properties";
  std::ofstream(file) << "# a comment\n! another\n\nnum.partitions = abc\nlog.retention.hours=1\n";
  const fs::path bad_file = tmp / "bad.properties";
  std::ofstream(bad_file) << "num.partitions=2\nno equals sign here\n";
  struct bad_case {
    std::vector<std::string> args;
    std::string named;  // what stderr must name
  };
  const std::vector<bad_case> cases = {
      {{"--config", "no.such.key=1"}, "no.such.key"},
      {{"--config", "num.partitions=0"}, "num.partitions"},
      {{"--config", "num.partitions=abc"}, "num.partitions"},
      {{"--config", "auto.create.topics.enable=maybe"}, "auto.create.topics.enable"},
      {{"--config", "log.segment.bytes=10"}, "log.segment.bytes"},
      {{"--config", "log.retention.hours=soon"}, "log.retention.hours"},
      {{"--config", "log.cleanup.policy=keep"}, "log.cleanup.policy"},
      {{"--config", "message.max.bytes=3000000000"}, "message.max.bytes"},
      {{"--config", "socket.request.max.bytes=-1"}, "socket.request.max.bytes"},
      {{"--config", "node.id=1", "--config", "broker.id=2"}, "broker.id"},
      {{"--config", "num.partitions"}, "key=value"},
      {{"--config", "num.partitions=2", "--config", "num.partitions=3"}, "num.partitions"},
      {{"--config-file", file.string()}, "num.partitions"},  // the file's bad value, not overridden
      {{"--config-file", bad_file.string()}, "line 2"},
      {{"--config-file", (tmp / "missing.properties").string()}, "missing.properties"},
      {{"--listen", "localhost:9092"}, "--listen"},
      {{"--listen", "127.0.0.1"}, "--listen"},
      {{"--listen", "127.0.0.1:65536"}, "--listen"},
      {{"--listen", "0.0.0.0:0"}, "--advertised-listener"},
      {{"--advertised-listener", "0.0.0.0:9092"}, "--advertised-listener"},
      {{"--log-level", "loud"}, "--log-level"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"serve", "--data-dir", d.string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = brook_cli(args);
    INFO(args.back() << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, c.named));
    CHECK(r.out.empty());
  }
  CHECK_FALSE(fs::exists(d));  // refused before anything was opened

  SECTION("--config overrides the file's value") {
    server s(d, {"--config-file", file.string(), "--config", "num.partitions=2"});
    check_api_versions(s.port, 3);
    CHECK(s.stop(SIGTERM).exit_code == 0);
  }
}

TEST_CASE("brook serve accepts and stores a Kafka client's compressed batches", "[tools][cli][serve][compression]") {
  using namespace brook::protocol;
  const auto type = GENERATE(brook::compression_type::gzip, brook::compression_type::snappy,
                             brook::compression_type::lz4, brook::compression_type::zstd);
  const std::string name(brook::compression_name(type));
  INFO("codec " << name);
  brook::test::temp_dir tmp;
  const fs::path d = tmp / "data";
  REQUIRE(topics(d, {"--create", "--topic", "t"}).exit_code == 0);
  server s(d);

  const brook::compression_codecs codecs = brook::test::all_codecs();
  brook::record_batch_builder b;
  b.append(1'700'000'000'000, "k0", std::string(400, 'q'));
  b.append(1'700'000'000'001, "k1", "short");
  const brook::compression_codec& codec = **codecs.get(type);
  auto batch = b.finish(codec, codec.default_level());
  REQUIRE_OK(batch);
  produce_request req;
  req.acks = 1;
  req.timeout_ms = 10'000;
  req.topic_data.push_back({"t", {{brook::partition_id(0), records::view(*batch)}}});
  // zstd needs Produce v7 (KIP-110): v3 is refused with UNSUPPORTED_COMPRESSION_TYPE.
  if (type == brook::compression_type::zstd) {
    auto v3 = encode_request({0, 3, 10, "cli-serve-test"}, req);
    REQUIRE_OK(v3);
    kafka_socket sock(s.port);
    sock.send(*v3);
    const auto f = sock.frame();
    REQUIRE(f.has_value());
    CHECK(brook::detail::load_be16(f->data() + 19) == 76);
  }
  const std::int16_t version = type == brook::compression_type::zstd ? 7 : 3;
  auto frame = encode_request({0, version, 11, "cli-serve-test"}, req);
  REQUIRE_OK(frame);
  {
    kafka_socket sock(s.port);
    sock.send(*frame);
    const auto f = sock.frame();
    REQUIRE(f.has_value());
    // Response header v0: CorrelationId; ProduceResponse v3: [Name [Index ErrorCode
    // BaseOffset LogAppendTimeMs]] ThrottleTimeMs; v5+ adds LogStartOffset after
    // LogAppendTimeMs.
    REQUIRE(f->size() == 4 + 4 + 2 + 1 + 4 + 4 + 2 + 8 + 8 + (version >= 5 ? 8 : 0) + 4);
    CHECK(brook::detail::load_be32(f->data()) == 11);
    CHECK(brook::detail::load_be16(f->data() + 19) == 0);  // ErrorCode NONE
    CHECK(brook::detail::load_be64(f->data() + 21) == 0);  // BaseOffset
  }
  REQUIRE(s.stop(SIGTERM).exit_code == 0);

  auto dump = brook_cli({"dump-log", (d / "t-0" / "00000000000000000000.log").string()});
  REQUIRE(dump.exit_code == 0);
  CHECK(contains(dump.out, "compresscodec: " + name + " "));
  CHECK(contains(dump.out, "key: \"k0\" value: \"" + std::string(400, 'q') + "\""));
  auto c = brook_cli({"consume", "--data-dir", d.string(), "--topic", "t", "--from-beginning", "--print-key"});
  REQUIRE(c.exit_code == 0);
  CHECK(c.out == "k0\t" + std::string(400, 'q') + "\nk1\tshort\n");
}

#endif  // BROOK_CLI_PATH

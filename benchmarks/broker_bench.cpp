// brook's Kafka broker over loopback, next to the loopback itself, in one run.
//
// The broker runs in a process of its own (brook_bench_broker, broker_bench_server.cpp: a
// node, kafka_broker and tcp_server with one network thread), started afresh for every
// benchmark on a fresh data directory under $BROOK_BENCH_DIR (default /tmp). Its CPU time
// is its getrusage(RUSAGE_SELF), asked for over a pipe before and after the timed part;
// the client's is this process's getrusage(RUSAGE_SELF) (every thread, librdkafka's too).
// Every benchmark runs one timed iteration and reports rates against wall time.
//
//   BM_BrokerProduce/value:V/acks:A  librdkafka 2.0 producer, acks A, linger.ms 1, its
//                                    default batch.size (1,000,000 bytes), V-byte values,
//                                    null keys, partition 0, RD_KAFKA_MSG_F_COPY; timed from
//                                    the first produce() to the end of flush()
//   BM_BrokerProduceBigReads/value:V the same, acks 1, with the broker's read_buffer_bytes
//                                    1 MiB instead of 64 KiB
//   BM_BrokerConsume/value:V         librdkafka's simple consumer (rd_kafka_consume_start at
//                                    offset 0: assignment without a group, which the broker
//                                    does not serve yet) reading records preloaded in 16 KiB
//                                    batches, until it has them all
//   BM_BrokerFetch/sendfile:B/max_KiB:M  a raw client walking a 64 MiB log with Fetch v11
//                                    of at most M KiB each (4096, and 1024 as librdkafka
//                                    asks), one in flight, broker with sendfile on or off
//                                    (server_options::sendfile)
//   BM_BrokerProduceLatency          librdkafka producer, acks=-1, linger.ms 0, 100-byte
//                                    values at 10,000 records/s for 3 s: delivery-report
//                                    latency from each record's scheduled send time
//   BM_LoopbackTcp/chunk:C           the ceiling: a writer thread send()s C-byte chunks into
//                                    a loopback TCP connection (TCP_NODELAY, as the server
//                                    sets), the benchmark thread recv()s them
//   BM_LoopbackSendfile/chunk:C      the same with sendfile(2) of C-byte chunks of a 64 MiB
//                                    file in the page cache: the ceiling of the sendfile fetch
//
// Counters: items_per_second (records/s) and bytes_per_second (value bytes for the
// librdkafka benchmarks, answer bytes for the fetch, moved bytes for the loopback);
// broker_us/MiB and client_us/MiB, CPU microseconds per MiB of those bytes; broker/client,
// their ratio; broker_cores and client_cores, CPU seconds per wall second;
// broker_switches/MiB, the broker's context switches per MiB.
//
// Without librdkafka (pkg-config rdkafka, benchmarks/CMakeLists.txt) the librdkafka
// benchmarks are not compiled; the raw ones still are.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <brook/codec/message_codec.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/request.hpp>
#include <brook/protocol/response_header.hpp>

#if BROOK_BENCH_HAVE_RDKAFKA
#include <librdkafka/rdkafka.h>
#endif

#include "bench_support.hpp"

extern char** environ;

namespace {

using namespace brook;
using clock_type = std::chrono::steady_clock;

constexpr double mib = 1024.0 * 1024.0;
const std::string topic_name = "bench";

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// User + system CPU seconds of this process, every thread.
double self_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// ------------------------------------------------------------------ the broker's process

/// brook_bench_broker on a fresh data directory, for as long as this object lives.
class broker_process {
 public:
  /// read_buffer_bytes 0: server_options' default.
  explicit broker_process(bool sendfile, std::size_t read_buffer_bytes = 0) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t fa;
    ::posix_spawn_file_actions_init(&fa);
    ::posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    ::posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    const std::string dir = (dir_.path() / "data").string();
    std::vector<char*> argv = {const_cast<char*>(BROOK_BENCH_BROKER), const_cast<char*>(dir.c_str())};
    const std::string read_buffer = std::to_string(read_buffer_bytes);
    if (!sendfile) argv.push_back(const_cast<char*>("--copy"));
    if (read_buffer_bytes != 0) {
      argv.push_back(const_cast<char*>("--read-buffer-bytes"));
      argv.push_back(const_cast<char*>(read_buffer.c_str()));
    }
    argv.push_back(nullptr);
    const int e = ::posix_spawn(&pid_, BROOK_BENCH_BROKER, &fa, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    to_ = ::fdopen(in[1], "w");
    from_ = ::fdopen(out[0], "r");
    if (e != 0) throw std::runtime_error(std::string("posix_spawn " BROOK_BENCH_BROKER ": ") + std::strerror(e));
    if (std::fscanf(from_, "port %hu", &port_) != 1) throw std::runtime_error("brook_bench_broker did not start");
  }
  broker_process(const broker_process&) = delete;
  broker_process& operator=(const broker_process&) = delete;
  ~broker_process() {
    std::fclose(to_);  // end of input: the broker stops and exits
    int status = 0;
    ::waitpid(pid_, &status, 0);
    std::fclose(from_);
  }

  std::uint16_t port() const noexcept { return port_; }
  std::string bootstrap() const { return "127.0.0.1:" + std::to_string(port_); }

  struct usage {
    double cpu_seconds = 0;  ///< user + system
    double switches = 0;     ///< context switches, voluntary and not
  };
  /// What the broker has used so far.
  usage used() {
    std::fputs("cpu\n", to_);
    std::fflush(to_);
    long long user_us = 0, sys_us = 0, switches = 0;
    if (std::fscanf(from_, "%lld %lld %lld", &user_us, &sys_us, &switches) != 3)
      throw std::runtime_error("brook_bench_broker: no cpu");
    return {static_cast<double>(user_us + sys_us) / 1e6, static_cast<double>(switches)};
  }

 private:
  bench::scratch_dir dir_;
  pid_t pid_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
  std::uint16_t port_ = 0;
};

/// CPU and wall time of a timed part, for the broker and for this process.
class cpu_meter {
 public:
  explicit cpu_meter(broker_process& b) : broker_(b) {}
  void start() {
    broker0_ = broker_.used();
    client0_ = self_cpu_seconds();
    t0_ = clock_type::now();
  }
  /// Stops the clocks and sets the counters for `bytes` moved and `items` records.
  void stop(benchmark::State& state, double bytes, double items) {
    const double wall = seconds_since(t0_);
    const double client = self_cpu_seconds() - client0_;
    const auto used = broker_.used();
    const double broker = used.cpu_seconds - broker0_.cpu_seconds;
    state.SetIterationTime(wall);
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
    state.SetItemsProcessed(static_cast<std::int64_t>(items));
    state.counters["broker_us/MiB"] = broker * 1e6 / (bytes / mib);
    state.counters["client_us/MiB"] = client * 1e6 / (bytes / mib);
    state.counters["broker/client"] = broker / client;
    state.counters["broker_cores"] = broker / wall;
    state.counters["client_cores"] = client / wall;
    state.counters["broker_switches/MiB"] = (used.switches - broker0_.switches) / (bytes / mib);
  }

 private:
  broker_process& broker_;
  broker_process::usage broker0_;
  double client0_ = 0;
  clock_type::time_point t0_;
};

// ------------------------------------------------------------------ a raw client

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void write_all(int fd, const std::byte* p, std::size_t n) {
  while (n > 0) {
    const auto w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void write_all_file(int fd, const std::vector<std::byte>& b) {
  if (::write(fd, b.data(), b.size()) != static_cast<ssize_t>(b.size()))
    throw std::runtime_error(std::string("write: ") + std::strerror(errno));
}

void read_all(int fd, std::byte* p, std::size_t n) {
  while (n > 0) {
    const auto r = ::recv(fd, p, n, 0);
    if (r <= 0) throw std::runtime_error("recv: the broker closed the connection or failed");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

/// Blocking Kafka frames over one loopback connection.
class raw_client {
 public:
  explicit raw_client(std::uint16_t port) : fd_(connect_loopback(port)) {}
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;
  ~raw_client() { ::close(fd_); }

  template <typename Req>
  void send(const Req& req, std::int16_t key, std::int16_t version) {
    auto f = protocol::encode_request({key, version, ++correlation_, "brook-bench"}, req);
    if (!f) throw std::runtime_error(f.error().to_string());
    write_all(fd_, f->data(), f->size());
  }
  /// The next answer's bytes after its size prefix, valid until the next call.
  std::span<const std::byte> frame() {
    std::byte size[4];
    read_all(fd_, size, 4);
    buffer_.resize(brook::detail::load_be32(size));
    read_all(fd_, buffer_.data(), buffer_.size());
    return buffer_;
  }
  /// Reads the next answer as a `Resp` of `key` at `version`; its views point into frame().
  template <typename Resp>
  Resp answer(protocol::api_key key, std::int16_t version) {
    codec::message_reader r(frame(), "response");
    auto h = protocol::read_response_header(r, key, version);
    if (!h) throw std::runtime_error(h.error().to_string());
    if (h->correlation_id != correlation_)
      throw std::runtime_error(fmt::format("answer to request {}, expected {}", h->correlation_id, correlation_));
    Resp out{};
    if (auto d = codec::read(r, out, version); !d) throw std::runtime_error(d.error().to_string());
    return out;
  }
  /// The size of the last answer, without its size prefix.
  std::size_t frame_bytes() const noexcept { return buffer_.size(); }

 private:
  int fd_;
  std::int32_t correlation_ = 0;
  std::vector<std::byte> buffer_;
};

/// How many records with `value_bytes`-byte values and null keys fill a 16 KiB batch.
std::int32_t records_per_batch(std::size_t value_bytes) {
  std::size_t size = batch_layout::header_size;
  for (std::int32_t n = 0;; ++n) {
    const std::size_t r = record_batch_builder::record_size(
        0, n, nullable_bytes::null(), nullable_bytes(static_cast<const std::byte*>(nullptr), value_bytes));
    if (size + r > bench::batch_target_bytes) return std::max(n, 1);
    size += r;
  }
}

/// Appends at least `bytes` of values as 16 KiB batches (Produce v7, acks 1, one batch a
/// request) to partition 0 of the topic; returns how many records.
std::int64_t preload(std::uint16_t port, std::size_t value_bytes, std::size_t bytes) {
  raw_client c(port);
  record_batch_builder b;
  const auto value = bench::make_value(value_bytes);
  const std::int32_t per_batch = records_per_batch(value_bytes);
  // Stamped now: older records would fall to retention.ms (7 days) at the next housekeeping.
  const std::int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  std::int64_t records = 0;
  for (std::size_t done = 0; done < bytes; done += per_batch * value_bytes) {
    const auto batch = bench::build_batch(b, value, now_ms, per_batch);
    protocol::produce_request q;
    q.acks = 1;
    q.timeout_ms = 30'000;
    q.topic_data = {{topic_name, {{partition_id{0}, protocol::records::view(batch)}}}};
    c.send(q, 0, 7);
    auto a = c.answer<protocol::produce_response>(protocol::api_key::produce, 7);
    const auto code = a.responses.at(0).partition_responses.at(0).error_code;
    if (code != 0) throw std::runtime_error("preload: produce error " + std::to_string(code));
    records += per_batch;
  }
  return records;
}

// ------------------------------------------------------------------ Fetch: sendfile or copied

constexpr std::size_t fetch_log_bytes = 64u << 20;
constexpr std::int32_t fetch_max_bytes = 4 << 20;
constexpr std::size_t fetch_total_bytes = 1024u << 20;

/// The offset after the last whole batch in `records`.
std::int64_t next_offset(std::span<const std::byte> records, std::int64_t from) {
  std::int64_t next = from;
  for (std::size_t at = 0; at + batch_layout::header_size <= records.size();) {
    const std::byte* b = records.data() + at;
    const std::size_t length = brook::detail::load_be32(b + batch_layout::batch_length) + batch_layout::log_overhead;
    if (at + length > records.size()) break;
    next = static_cast<std::int64_t>(brook::detail::load_be64(b + batch_layout::base_offset)) +
           static_cast<std::int32_t>(brook::detail::load_be32(b + batch_layout::last_offset_delta)) + 1;
    at += length;
  }
  return next;
}

void BM_BrokerFetch(benchmark::State& state) {
  broker_process broker(state.range(0) != 0);
  const auto max_bytes = static_cast<std::int32_t>(state.range(1) * 1024);
  const std::int64_t end = preload(broker.port(), bench::record_value_bytes, fetch_log_bytes);
  raw_client c(broker.port());
  protocol::fetch_request q;
  q.max_wait_ms = 0;
  q.min_bytes = 1;
  q.max_bytes = max_bytes;
  protocol::fetch_request_partition p;
  p.partition_max_bytes = max_bytes;
  q.topics.push_back({topic_name, {}, {p}});
  cpu_meter meter(broker);
  double bytes = 0, records = 0;
  for (auto _ : state) {
    std::int64_t from = 0;
    meter.start();
    while (bytes < static_cast<double>(fetch_total_bytes)) {
      q.topics[0].partitions[0].fetch_offset = offset(from);
      c.send(q, 1, 11);
      auto a = c.answer<protocol::fetch_response>(protocol::api_key::fetch, 11);
      const auto& part = a.responses.at(0).partitions.at(0);
      if (part.error_code != 0)
        return state.SkipWithError(fmt::format("fetch at {}: error {}", from, part.error_code).c_str());
      const std::int64_t next = next_offset(part.records.bytes(), from);
      bytes += static_cast<double>(4 + c.frame_bytes());
      records += static_cast<double>(next - from);
      from = next >= end ? 0 : next;
    }
    meter.stop(state, bytes, records);
  }
}
BENCHMARK(BM_BrokerFetch)
    ->ArgNames({"sendfile", "max_KiB"})
    ->Args({1, fetch_max_bytes / 1024})
    ->Args({0, fetch_max_bytes / 1024})
    ->Args({1, 1024})  // librdkafka's max.partition.fetch.bytes: the cost per Fetch shows
    ->Args({0, 1024})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// ------------------------------------------------------------------ the loopback ceiling

/// A connected loopback TCP pair {writing end, reading end}, TCP_NODELAY on both.
std::pair<int, int> loopback_pair() {
  const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (l < 0 || ::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 1) != 0 ||
      ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
  const int w = connect_loopback(ntohs(a.sin_port));
  const int r = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(l);
  if (r < 0) throw std::runtime_error(std::string("accept: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(r, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return {w, r};
}

/// A file of `bytes` in the page cache, for sendfile.
int page_cache_file(const bench::scratch_dir& dir, std::size_t bytes) {
  const int fd = ::open((dir.path() / "file").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const auto chunk = bench::make_value(1 << 20);
  for (std::size_t done = 0; fd >= 0 && done < bytes; done += chunk.size()) write_all_file(fd, chunk);
  if (fd < 0) throw std::runtime_error("open the sendfile source");
  return fd;
}

/// Writes `total` bytes into `w` in chunks of data.size(): the chunk itself, or with
/// sendfile the next chunk of `file` (fetch_log_bytes long) when file >= 0. False on failure.
bool write_chunks(int w, int file, const std::vector<std::byte>& data, std::size_t total) {
  const std::size_t chunk = data.size();
  off_t at = 0;
  for (std::size_t sent = 0; sent < total; sent += chunk) {
    if (static_cast<std::size_t>(at) + chunk > fetch_log_bytes) at = 0;
    for (std::size_t left = chunk; left > 0;) {
      const auto n =
          file >= 0 ? ::sendfile(w, file, &at, left) : ::send(w, data.data() + (chunk - left), left, MSG_NOSIGNAL);
      if (n <= 0) return false;
      left -= static_cast<std::size_t>(n);
    }
  }
  return true;
}

void loopback(benchmark::State& state, bool use_sendfile) {
  const auto chunk = static_cast<std::size_t>(state.range(0));
  const std::size_t total = chunk < 16384 ? chunk * 100'000 : fetch_total_bytes;
  bench::scratch_dir dir;
  const int file = use_sendfile ? page_cache_file(dir, fetch_log_bytes) : -1;
  const auto data = bench::make_value(chunk);
  std::vector<std::byte> in(std::max<std::size_t>(64 * 1024, std::min<std::size_t>(chunk, fetch_max_bytes)));
  for (auto _ : state) {
    auto [w, r] = loopback_pair();
    double writer_cpu = 0;
    const auto t0 = clock_type::now();
    const double reader0 = thread_cpu_seconds();
    std::thread writer([&, w = w] {
      const double c0 = thread_cpu_seconds();
      if (write_chunks(w, use_sendfile ? file : -1, data, total)) writer_cpu = thread_cpu_seconds() - c0;
      ::shutdown(w, SHUT_WR);  // a failed writer ends the reader's loop too
    });
    std::size_t got = 0;
    while (got < total) {
      const auto n = ::recv(r, in.data(), std::min(in.size(), total - got), 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    const double reader_cpu = thread_cpu_seconds() - reader0;
    writer.join();
    const double wall = seconds_since(t0);
    ::close(w);
    ::close(r);
    if (got < total) return state.SkipWithError("the loopback connection broke");
    state.SetIterationTime(wall);
    const double bytes = static_cast<double>(total);
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
    state.counters["writer_us/MiB"] = writer_cpu * 1e6 / (bytes / mib);
    state.counters["reader_us/MiB"] = reader_cpu * 1e6 / (bytes / mib);
    state.counters["writer_cores"] = writer_cpu / wall;
    state.counters["reader_cores"] = reader_cpu / wall;
  }
  if (file >= 0) ::close(file);
}

void BM_LoopbackTcp(benchmark::State& state) { loopback(state, false); }
BENCHMARK(BM_LoopbackTcp)
    ->ArgName("chunk")
    ->Arg(100)
    ->Arg(1024)
    ->Arg(16384)
    ->Arg(1 << 20)
    ->Arg(fetch_max_bytes)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_LoopbackSendfile(benchmark::State& state) { loopback(state, true); }
BENCHMARK(BM_LoopbackSendfile)
    ->ArgName("chunk")
    ->Arg(fetch_max_bytes)
    ->Arg(1 << 20)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

#if BROOK_BENCH_HAVE_RDKAFKA

// ------------------------------------------------------------------ librdkafka

/// Value bytes each produce and consume run moves.
constexpr std::size_t kafka_run_bytes = 256u << 20;

rd_kafka_conf_t* kafka_conf(const broker_process& b, std::initializer_list<std::pair<const char*, const char*>> kv) {
  rd_kafka_conf_t* c = rd_kafka_conf_new();
  char err[512];
  const std::string bootstrap = b.bootstrap();
  auto set = [&](const char* k, const char* v) {
    if (rd_kafka_conf_set(c, k, v, err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(c);
      throw std::runtime_error(std::string("librdkafka ") + k + ": " + err);
    }
  };
  set("bootstrap.servers", bootstrap.c_str());
  for (const auto& [k, v] : kv) set(k, v);
  return c;
}

/// What the delivery reports said; written by whichever thread polls.
struct deliveries {
  std::atomic<std::int64_t> delivered{0}, failed{0};
  std::string first_error;
  const std::vector<clock_type::time_point>* scheduled = nullptr;  // latency runs: when record i was due
  std::vector<double>* latency_us = nullptr;                       // and how long it took
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto& d = *static_cast<deliveries*>(opaque);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (d.failed.fetch_add(1) == 0) d.first_error = rd_kafka_err2str(m->err);
    return;
  }
  if (d.latency_us != nullptr) {
    const auto i = reinterpret_cast<std::uintptr_t>(m->_private);
    (*d.latency_us)[i] = std::chrono::duration<double, std::micro>(clock_type::now() - (*d.scheduled)[i]).count();
  }
  d.delivered.fetch_add(1);
}

/// A librdkafka client and its handle on the topic, with the topic's metadata fetched.
class kafka_client {
 public:
  kafka_client(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
    char err[512];
    rk_ = rd_kafka_new(type, conf, err, sizeof err);  // owns conf from here on success
    if (rk_ == nullptr) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string("rd_kafka_new: ") + err);
    }
    rkt_ = rd_kafka_topic_new(rk_, topic_name.c_str(), nullptr);
    const struct rd_kafka_metadata* md = nullptr;
    if (auto e = rd_kafka_metadata(rk_, 0, rkt_, &md, 10'000); e != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw std::runtime_error(std::string("metadata: ") + rd_kafka_err2str(e));
    rd_kafka_metadata_destroy(md);
  }
  kafka_client(const kafka_client&) = delete;
  kafka_client& operator=(const kafka_client&) = delete;
  ~kafka_client() {
    rd_kafka_topic_destroy(rkt_);
    rd_kafka_destroy(rk_);
  }
  rd_kafka_t* handle() const noexcept { return rk_; }
  rd_kafka_topic_t* topic() const noexcept { return rkt_; }

  /// Produces one record to partition 0, waiting for room in the queue; `tag` comes back
  /// in its delivery report.
  void produce(const std::vector<std::byte>& value, std::uintptr_t tag = 0) {
    while (rd_kafka_produce(rkt_, 0, RD_KAFKA_MSG_F_COPY, const_cast<std::byte*>(value.data()), value.size(), nullptr,
                            0, reinterpret_cast<void*>(tag)) == -1) {
      const auto e = rd_kafka_last_error();
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) throw std::runtime_error(std::string("produce: ") + rd_kafka_err2str(e));
      rd_kafka_poll(rk_, 1);
    }
  }
  void flush() {
    if (auto e = rd_kafka_flush(rk_, 60'000); e != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw std::runtime_error(std::string("flush: ") + rd_kafka_err2str(e));
  }

 private:
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_topic_t* rkt_ = nullptr;
};

kafka_client make_producer(const broker_process& b, deliveries& d, const char* acks, const char* linger_ms) {
  rd_kafka_conf_t* c = kafka_conf(b, {{"acks", acks}, {"linger.ms", linger_ms}});
  rd_kafka_conf_set_dr_msg_cb(c, on_delivery);
  rd_kafka_conf_set_opaque(c, &d);
  return kafka_client(RD_KAFKA_PRODUCER, c);
}

void produce_run(benchmark::State& state, std::size_t value_bytes, std::int64_t acks_value,
                 std::size_t read_buffer_bytes) {
  const std::string acks = std::to_string(acks_value);
  const auto value = bench::make_value(value_bytes);
  const auto records = static_cast<std::int64_t>(kafka_run_bytes / value_bytes);
  broker_process broker(true, read_buffer_bytes);
  deliveries d;
  kafka_client p = make_producer(broker, d, acks.c_str(), "1");
  for (int i = 0; i < 1000; ++i) p.produce(value);  // connect to the leader before timing
  p.flush();
  cpu_meter meter(broker);
  for (auto _ : state) {
    meter.start();
    for (std::int64_t i = 0; i < records; ++i) {
      p.produce(value);
      if ((i & 1023) == 0) rd_kafka_poll(p.handle(), 0);
    }
    p.flush();
    meter.stop(state, static_cast<double>(records * value_bytes), static_cast<double>(records));
  }
  if (d.failed > 0) state.SkipWithError(("delivery failed: " + d.first_error).c_str());
  if (d.delivered != records + 1000) state.SkipWithError("not every record was delivered");
}
void BM_BrokerProduce(benchmark::State& state) {
  produce_run(state, static_cast<std::size_t>(state.range(0)), state.range(1), 0);
}
BENCHMARK(BM_BrokerProduce)
    ->ArgNames({"value", "acks"})
    ->Args({100, 1})
    ->Args({100, -1})
    ->Args({1024, 1})
    ->Args({1024, -1})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The same with acks=1 and a broker reading 1 MiB per recv instead of 64 KiB
// (server_options::read_buffer_bytes): what fewer reads would save.
void BM_BrokerProduceBigReads(benchmark::State& state) {
  produce_run(state, static_cast<std::size_t>(state.range(0)), 1, 1 << 20);
}
BENCHMARK(BM_BrokerProduceBigReads)
    ->ArgName("value")
    ->Arg(100)
    ->Arg(1024)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

struct consumed {
  std::int64_t records = 0, bytes = 0, errors = 0;
  std::string first_error;
};

void on_message(rd_kafka_message_t* m, void* opaque) {
  auto& c = *static_cast<consumed*>(opaque);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (c.errors++ == 0) c.first_error = rd_kafka_message_errstr(m);
    return;
  }
  ++c.records;
  c.bytes += static_cast<std::int64_t>(m->len);
}

void BM_BrokerConsume(benchmark::State& state) {
  const auto value_bytes = static_cast<std::size_t>(state.range(0));
  broker_process broker(state.range(1) != 0);
  const std::int64_t records = preload(broker.port(), value_bytes, kafka_run_bytes);
  kafka_client k(RD_KAFKA_CONSUMER, kafka_conf(broker, {{"enable.auto.commit", "false"},
                                                        {"enable.auto.offset.store", "false"},
                                                        {"enable.partition.eof", "false"}}));
  cpu_meter meter(broker);
  consumed c;
  for (auto _ : state) {
    meter.start();
    if (rd_kafka_consume_start(k.topic(), 0, 0) == -1)
      return state.SkipWithError(rd_kafka_err2str(rd_kafka_last_error()));
    const auto deadline = clock_type::now() + std::chrono::seconds(60);
    while (c.records < records && c.errors == 0 && clock_type::now() < deadline)
      rd_kafka_consume_callback(k.topic(), 0, 100, on_message, &c);
    meter.stop(state, static_cast<double>(c.bytes), static_cast<double>(c.records));
    rd_kafka_consume_stop(k.topic(), 0);
  }
  if (c.errors > 0) return state.SkipWithError(("consume: " + c.first_error).c_str());
  if (c.records != records) state.SkipWithError("not every record was consumed");
}
BENCHMARK(BM_BrokerConsume)
    ->ArgNames({"value", "sendfile"})
    ->Args({100, 1})
    ->Args({1024, 1})
    ->Args({1024, 0})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void BM_BrokerProduceLatency(benchmark::State& state) {
  constexpr std::int64_t rate = 10'000, records = 3 * rate;
  const auto value = bench::make_value(bench::record_value_bytes);
  broker_process broker(true);
  deliveries d;
  kafka_client p = make_producer(broker, d, "-1", "0");
  for (int i = 0; i < 100; ++i) p.produce(value);  // connect to the leader before timing
  p.flush();
  const std::int64_t warm = d.delivered;
  std::vector<clock_type::time_point> scheduled(records);
  std::vector<double> latency_us(records, -1);
  cpu_meter meter(broker);
  for (auto _ : state) {
    std::atomic<bool> done{false};
    std::thread poller([&] {  // delivery reports as soon as they come
      while (!done) rd_kafka_poll(p.handle(), 100);
    });
    meter.start();
    const auto t0 = clock_type::now();
    for (std::int64_t i = 0; i < records; ++i) scheduled[i] = t0 + std::chrono::microseconds(i * 1'000'000 / rate);
    d.scheduled = &scheduled;
    d.latency_us = &latency_us;
    for (std::int64_t i = 0; i < records; ++i) {
      std::this_thread::sleep_until(scheduled[i]);
      p.produce(value, static_cast<std::uintptr_t>(i));
    }
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    while (d.delivered + d.failed < warm + records && clock_type::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    meter.stop(state, static_cast<double>(records * bench::record_value_bytes), static_cast<double>(records));
    done = true;
    poller.join();
  }
  if (d.failed > 0) return state.SkipWithError(("delivery failed: " + d.first_error).c_str());
  if (d.delivered != warm + records) return state.SkipWithError("not every record was delivered");
  state.counters["p50_us"] = percentile(latency_us, 0.50);
  state.counters["p99_us"] = percentile(latency_us, 0.99);
  state.counters["p999_us"] = percentile(latency_us, 0.999);
  state.counters["max_us"] = *std::max_element(latency_us.begin(), latency_us.end());
}
BENCHMARK(BM_BrokerProduceLatency)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

#endif  // BROOK_BENCH_HAVE_RDKAFKA

}  // namespace

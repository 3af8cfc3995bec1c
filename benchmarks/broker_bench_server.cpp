// brook_bench_broker: brook's Kafka broker alone in a process, so that broker_bench.cpp can
// measure its CPU apart from the client's.
//
//   brook_bench_broker DIR [--copy] [--read-buffer-bytes N]
//
// Opens a node on DIR (default node_options: housekeeping every second), creates topic
// "bench" with one partition, serves it with kafka_broker behind a tcp_server on
// 127.0.0.1, port 0, one network thread (server_options' defaults; `--copy` turns sendfile
// off, `--read-buffer-bytes` sets read_buffer_bytes), and prints "port P" on stdout. Then it reads commands on stdin,
// one a line:
//
//   cpu   answers "U S C": the user and the system CPU time of this process so far, in
//         microseconds, and its context switches, voluntary and not (getrusage
//         RUSAGE_SELF: every thread of the broker, the network thread, the purgatory's,
//         housekeeping, and this one, which only waits on stdin)
//
// At the end of its input it stops the server and the broker, closes the node and exits 0.
// Any failure before "port" is printed exits 1 with the reason on stderr.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include <brook/embedded.hpp>
#include <brook/server/kafka_broker.hpp>
#include <brook/server/tcp_server.hpp>

namespace {

long long microseconds(const timeval& t) { return static_cast<long long>(t.tv_sec) * 1'000'000 + t.tv_usec; }

int fail(const std::string& what) {
  std::cerr << "brook_bench_broker: " << what << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  brook::server::server_options o{.port = 0};
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--copy") == 0) {
      o.sendfile = false;
    } else if (std::strcmp(argv[i], "--read-buffer-bytes") == 0 && i + 1 < argc) {
      o.read_buffer_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else {
      argc = 0;
    }
  }
  if (argc < 2 || o.read_buffer_bytes == 0)
    return fail("usage: brook_bench_broker DIR [--copy] [--read-buffer-bytes N]");

  auto n = brook::node::open(std::filesystem::path(argv[1]));
  if (!n) return fail("node::open: " + n.error().to_string());
  if (auto t = (*n)->create_topic("bench", {}); !t) return fail("create_topic: " + t.error().to_string());

  brook::server::kafka_broker broker(**n);
  brook::server::tcp_server tcp(broker, broker.apis(), o);
  if (auto s = tcp.start(); !s) return fail("start: " + s.error().to_string());
  broker.advertise("127.0.0.1", tcp.port());
  std::cout << "port " << tcp.port() << std::endl;

  for (std::string line; std::getline(std::cin, line);) {
    if (line == "cpu") {
      rusage u{};
      ::getrusage(RUSAGE_SELF, &u);
      std::cout << microseconds(u.ru_utime) << ' ' << microseconds(u.ru_stime) << ' ' << u.ru_nvcsw + u.ru_nivcsw
                << std::endl;
    } else {
      std::cout << "unknown command" << std::endl;
    }
  }
  tcp.stop();
  broker.stop();
  if (auto c = (*n)->close(); !c) return fail("close: " + c.error().to_string());
  return 0;
}

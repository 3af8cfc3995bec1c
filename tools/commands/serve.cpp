// brook serve --data-dir D [--listen HOST:PORT] [--advertised-listener HOST:PORT]
//             [--config key=value]... [--config-file FILE] [--log-level LEVEL]
//
// A Kafka broker on a data directory: a brook::node, server::kafka_broker answering from it,
// and server::tcp_server in front. The first line on stdout is "listening on HOST:PORT"
// (the bound port), flushed once the socket accepts; logs go to stderr. SIGTERM or SIGINT
// stops it cleanly: no new connections, the broker's parked requests answered, the node
// closed (flushed, checkpoints written), exit 0.
//
// Signals: SIGTERM and SIGINT are blocked before the node starts its threads (so every
// thread inherits the mask and none of them takes the signal) and the main thread waits
// for them in sigwait: no handler, no polling.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <boost/asio/ip/address.hpp>

#include <brook/core/printable.hpp>
#include <brook/embedded/node.hpp>
#include <brook/protocol/api_keys.hpp>
#include <brook/server/kafka_broker.hpp>
#include <brook/server/tcp_server.hpp>

#include "commands/commands.hpp"
#include "commands/serve_address.hpp"
#include "commands/serve_config.hpp"

namespace brook::cli {

namespace {
// The key table is constant-initialized (serve_config.cpp), so this may read it here.
const std::string serve_help =
    std::string(R"txt(Opens the data directory (creating it when missing) as brook::node does, with its
group coordinator and housekeeping, and answers Kafka clients on --listen. The first
line on stdout is "listening on HOST:PORT" with the port actually bound, printed once
the socket accepts. Logs go to stderr: one line each for the start, the stop and
errors (--log-level debug adds the settings and one line per request).

While it runs the directory is locked: commands that write it fail with LOG_DIR_LOCKED
and name the broker's address (kept in D/.brook-serve until a clean stop), so a Kafka
client can be used instead, e.g. `kcat -b HOST:PORT -L`. Read-only commands (topics
--list/--describe, consume without --group, groups --list/--describe) still work.

SIGTERM or SIGINT: stop accepting, close the connections, stop the broker, close the
node (flush, checkpoints), exit 0.

Options:
  --data-dir D                   the data directory (required)
  --listen HOST:PORT             the IP address and port to bind (default 127.0.0.1:9092;
                                 port 0 picks a free one; IPv6 as [::1]:9092)
  --advertised-listener H:P      the address Metadata hands to clients (default: the
                                 listen address with the bound port; required when
                                 listening on 0.0.0.0 or ::)
  --config key=value             a Kafka broker config (repeatable; overrides the file)
  --config-file FILE             Kafka's server.properties format: key=value lines,
                                 comments starting with # or !
  --log-level LEVEL              error, warn, info (default) or debug
  -h, --help                     this help

Broker configs (Kafka's names; the default in parentheses, Kafka's where serve differs;
log.* set the defaults of every topic, which topic configs override; an unknown key or
a bad value is a usage error):
)txt") +
    serve_config_help() +
    R"txt(
Exit: 0 stopped cleanly by a signal, 1 error (logged on stderr), 2 usage error.)txt";
}  // namespace

const command_spec serve_spec{
    "serve",
    "--data-dir D [--listen HOST:PORT] [--advertised-listener HOST:PORT]\n"
    "       [--config key=value ...] [--config-file FILE] [--log-level error|warn|info|debug]",
    "Run a Kafka broker on a data directory until SIGTERM or SIGINT.",
    serve_help,
    {{"--data-dir", true},
     {"--listen", true},
     {"--advertised-listener", true},
     {"--config", true, true},
     {"--config-file", true},
     {"--log-level", true}},
    0,
    0};

namespace {

enum class log_level { error = 0, warn = 1, info = 2, debug = 3 };

/// One line per event on stderr, "[2026-12-03T16:20:00.123Z] INFO text", if at or above
/// the level. Thread-safety: any thread (one fmt::print, which stdio locks, per line).
class logger {
 public:
  explicit logger(log_level l) : level_(l) {}
  bool enabled(log_level l) const { return l <= level_; }
  template <typename... Args>
  void log(log_level l, fmt::format_string<Args...> f, Args&&... args) const {
    if (!enabled(l)) return;
    static constexpr const char* names[] = {"ERROR", "WARN", "INFO", "DEBUG"};
    fmt::print(stderr, "[{}] {} {}\n", now_text(), names[static_cast<int>(l)],
               fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  static std::string now_text() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                       tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  }
  log_level level_;
};

log_level parse_level(std::string_view s) {
  if (s == "error") return log_level::error;
  if (s == "warn") return log_level::warn;
  if (s == "info") return log_level::info;
  if (s == "debug") return log_level::debug;
  throw usage_error(fmt::format("--log-level expects error, warn, info or debug, got '{}'", s));
}

struct host_port {
  std::string host;  ///< without brackets
  std::uint16_t port = 0;
};

/// "HOST:PORT" as clients write it: an IPv6 host in brackets.
std::string address_text(const std::string& host, std::uint16_t port) {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

/// Parses HOST:PORT or [IPV6]:PORT. `ip_only`: the host must be an IP address (what a
/// socket binds); `min_port` 0 allows "pick a free port".
host_port parse_host_port(std::string_view flag, std::string_view text, bool ip_only, std::int64_t min_port) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw usage_error(fmt::format("{} expects HOST:PORT, got '{}'", flag, text));
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || (host.find(':') != std::string_view::npos && text.front() != '['))
    throw usage_error(fmt::format("{} expects HOST:PORT (IPv6 as [::1]:9092), got '{}'", flag, text));
  host_port out{std::string(host),
                static_cast<std::uint16_t>(parse_int(flag, text.substr(colon + 1), min_port, 65535))};
  boost::system::error_code ec;
  const auto ip = boost::asio::ip::make_address(out.host, ec);
  if (ip_only && ec) throw usage_error(fmt::format("{}: '{}' is not an IP address", flag, out.host));
  if (!ip_only && !ec && ip.is_unspecified())
    throw usage_error(fmt::format("{}: clients cannot connect to '{}'", flag, out.host));
  return out;
}

/// At debug level: logs each request, then hands it to the broker.
class logging_handler final : public server::request_handler {
 public:
  logging_handler(server::request_handler& next, const logger& log) : next_(next), log_(log) {}
  void handle(server::incoming_request req, reply done) override {
    const auto* api = protocol::find_api(req.header.api_key);
    log_.log(log_level::debug, "request {} v{} correlation_id {} client_id {}", api ? api->name : "?",
             req.header.api_version, req.header.correlation_id,
             req.header.client_id ? brook::detail::printable(*req.header.client_id) : "null");
    next_.handle(std::move(req), std::move(done));
  }

 private:
  server::request_handler& next_;
  const logger& log_;
};

/// Everything the command line says, checked before anything is opened.
struct serve_plan {
  std::filesystem::path dir;
  host_port listen{"127.0.0.1", 9092};
  std::optional<host_port> advertised;
  config_map configs;  ///< as given, for the debug log
  serve_settings settings;
};

serve_plan plan_of(const parsed_args& args) {
  serve_plan p;
  if (!args.has("--data-dir")) throw usage_error("missing --data-dir D");
  p.dir = *args.get("--data-dir");
  if (auto l = args.get("--listen")) p.listen = parse_host_port("--listen", *l, /*ip_only=*/true, 0);
  if (auto a = args.get("--advertised-listener"))
    p.advertised = parse_host_port("--advertised-listener", *a, /*ip_only=*/false, 1);
  boost::system::error_code ec;
  if (!p.advertised && boost::asio::ip::make_address(p.listen.host, ec).is_unspecified())
    throw usage_error(
        fmt::format("listening on {} needs --advertised-listener: clients cannot connect to it", p.listen.host));
  config_map configs;
  if (auto f = args.get("--config-file")) configs = read_config_file(*f);
  add_config_pairs(configs, args.get_all("--config"));
  p.settings = make_serve_settings(configs);
  p.configs = std::move(configs);
  p.settings.server.host = p.listen.host;
  p.settings.server.port = p.listen.port;
  return p;
}

/// Blocks SIGTERM and SIGINT in the calling thread; threads started later inherit it.
sigset_t block_stop_signals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  const int r = ::pthread_sigmask(SIG_BLOCK, &s, nullptr);
  BROOK_ASSERT(r == 0, "pthread_sigmask: {}", r);
  return s;
}

int wait_for_stop_signal(const sigset_t& s) {
  int sig = 0;
  const int r = ::sigwait(&s, &sig);
  BROOK_ASSERT(r == 0, "sigwait: {}", r);
  return sig;
}

/// Serves until a stop signal. Exit code 0 after a clean stop, 1 when something failed.
int serve(const serve_plan& p, const sigset_t& stop_signals, const logger& log) {
  auto opened = node::open(p.dir, p.settings.node);
  if (!opened) {
    log.log(log_level::error, "brook: {}", describe(with_serve_hint(opened.error(), p.dir)));
    return exit_failure;
  }
  node& n = **opened;
  server::kafka_broker broker(n, p.settings.broker);
  logging_handler logged(broker, log);
  server::request_handler& handler =
      log.enabled(log_level::debug) ? static_cast<server::request_handler&>(logged) : broker;
  server::tcp_server tcp(handler, broker.apis(), p.settings.server);
  auto fail_started = [&](const brook::error& e) {
    log.log(log_level::error, "brook: {}", describe(e));
    tcp.stop();
    broker.stop();
    (void)n.close();
    return exit_failure;
  };
  if (auto s = tcp.start(); !s)
    return fail_started(
        brook::error(s.error().code(),
                     fmt::format("--listen {}: {}", address_text(p.listen.host, p.listen.port), s.error().message())));
  const host_port advertised = p.advertised.value_or(host_port{p.listen.host, tcp.port()});
  broker.advertise(advertised.host, advertised.port);
  const std::string advertised_text = address_text(advertised.host, advertised.port);
  auto published = serve_address::publish(p.dir, advertised_text);
  if (!published) return fail_started(published.error());
  std::optional<serve_address> address_file(std::move(*published));

  fmt::print("listening on {}\n", address_text(p.listen.host, tcp.port()));
  std::fflush(stdout);
  log.log(log_level::info, "started: data directory {}, listening on {}, advertised as {}, node.id {}", p.dir.string(),
          address_text(p.listen.host, tcp.port()), advertised_text, p.settings.broker.id.value());

  const int sig = wait_for_stop_signal(stop_signals);
  log.log(log_level::info, "stopping on {}", sig == SIGINT ? "SIGINT" : "SIGTERM");
  address_file.reset();  // removed while the directory is still locked
  tcp.stop();
  broker.stop();
  if (auto h = n.last_housekeeping_error()) log.log(log_level::warn, "last housekeeping error: {}", describe(*h));
  if (auto c = n.close(); !c) {
    log.log(log_level::error, "brook: {}", describe(c.error()));
    return exit_failure;
  }
  log.log(log_level::info, "stopped: data directory {} closed cleanly", p.dir.string());
  return exit_ok;
}

}  // namespace

int run_serve(const parsed_args& args) {
  const logger log(args.has("--log-level") ? parse_level(*args.get("--log-level")) : log_level::info);
  const serve_plan plan = plan_of(args);
  for (const auto& [key, value] : plan.configs) log.log(log_level::debug, "config {}={}", key, value);
  // Before node::open and tcp_server::start start threads, so that none of them takes the
  // signals; the main thread waits for them. SIGPIPE: a reader of stdout that went away
  // must not kill the broker.
  const sigset_t stop_signals = block_stop_signals();
  ::signal(SIGPIPE, SIG_IGN);
  return serve(plan, stop_signals, log);
}

}  // namespace brook::cli

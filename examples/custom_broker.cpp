// custom_broker: a Kafka broker of your own, built from brook's parts. brook's broker
// (server::kafka_broker) is a request_handler; wrapping it in another handler adds policy
// in front of it. This one logs every request's API and refuses Produce requests to topics
// named "audit.*" unless the client id is "auditor", answering them as Kafka's authorizer
// does (TOPIC_AUTHORIZATION_FAILED for each partition). It serves on 127.0.0.1 (a free
// port), checks itself once and exits; drop the checks and wait for a signal instead to
// keep it running (tools/commands/serve.cpp shows how).
//
// Usage: custom_broker [DIR]   (default: /tmp/brook-custom-broker)
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <vector>

#include <brook/brook.hpp>

using namespace brook;
using namespace brook::protocol;

// Kafka's TOPIC_AUTHORIZATION_FAILED (29), as it goes on the wire.
constexpr auto topic_authorization_failed = static_cast<std::int16_t>(errc::topic_authorization_failed);

class audit_guard final : public server::request_handler {
 public:
  explicit audit_guard(server::request_handler& next) : next_(next) {}

  // Called on a network thread, concurrently for different connections: keep it short and
  // share nothing mutable without a lock.
  void handle(server::incoming_request req, reply done) override {
    std::printf("request: %s v%d from %s\n", std::string(api(static_cast<api_key>(req.header.api_key)).name).c_str(),
                req.header.api_version, req.header.client_id.value_or("(null)").c_str());
    const auto* produce = std::get_if<produce_request>(&req.body);
    if (produce == nullptr || req.header.client_id == "auditor" || !names_audit_topic(*produce))
      return next_.handle(std::move(req), std::move(done));
    // Refuse the whole request (Kafka's authorizer would still write the allowed topics).
    if (produce->acks == 0) return done(std::nullopt);  // acks=0: the client reads no answer
    produce_response refusal;
    for (const auto& t : produce->topic_data) {
      auto& topic = refusal.responses.emplace_back();
      topic.name = t.name;
      for (const auto& p : t.partition_data)
        topic.partition_responses.push_back({.index = p.index, .error_code = topic_authorization_failed});
    }
    auto frame = encode_response(req.header.correlation_id, refusal, req.header.api_version);
    done(std::move(frame).value());  // value(): an answer we built always encodes
  }

 private:
  static bool names_audit_topic(const produce_request& p) {
    for (const auto& t : p.topic_data)
      if (t.name.starts_with("audit.")) return true;
    return false;
  }
  server::request_handler& next_;
};

// Self-check 1, over TCP: an ApiVersions v0 request, as any Kafka client's first one.
static bool api_versions_answered(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{10, 0};  // never hang: examples run in CI
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  auto request = encode_request({18, 0, /*correlation id*/ 42, "custom-broker-check"}, api_versions_request{});
  std::uint32_t head[2] = {};  // the answer's size and correlation id, big-endian
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::send(fd, request->data(), request->size(), MSG_NOSIGNAL) == std::ssize(*request) &&
                  ::recv(fd, head, sizeof head, MSG_WAITALL) == sizeof head;
  ::close(fd);
  return ok && ntohl(head[1]) == 42;
}

// Self-check 2, without a socket: hand the guard a Produce to "audit.log" as a connection
// would (bytes decoded into a request whose records view them) and read its error code.
static std::optional<std::int16_t> audit_produce_error(server::request_handler& h, const char* client_id) {
  produce_request p{.acks = 1, .timeout_ms = 1000, .topic_data = {{.name = "audit.log", .partition_data = {{}}}}};
  auto frame = encode_request({0, 7, /*correlation id*/ 7, client_id}, p).value();
  std::vector<std::byte> body(frame.begin() + frame_prefix_size, frame.end());
  codec::message_reader r(body, "request");
  auto header = read_request_header(r).value();
  auto decoded = read_request_body(r, header).value();
  std::optional<std::int16_t> error;
  h.handle(server::incoming_request(0, std::move(body), std::move(header), std::move(decoded)),
           [&](std::optional<response_frame> f) {
             auto bytes = f.value().flatten();
             codec::message_reader answer(std::span<const std::byte>(bytes).subspan(frame_prefix_size), "response");
             produce_response out;
             if (read_response_header(answer, api_key::produce, 7) && codec::read(answer, out, 7))
               error = out.responses.at(0).partition_responses.at(0).error_code;
           });
  return error;  // the guard answers before handle() returns
}

int main(int argc, char** argv) {
  auto n = node::open(argc > 1 ? argv[1] : "/tmp/brook-custom-broker");
  if (!n) return std::fprintf(stderr, "open: %s\n", n.error().to_string().c_str()), 1;
  server::kafka_broker broker(**n);
  audit_guard guard(broker);
  // The table of APIs is still the broker's: requests it does not serve never reach the guard.
  server::tcp_server tcp(guard, broker.apis(), {.host = "127.0.0.1", .port = 0});
  if (auto s = tcp.start(); !s) return std::fprintf(stderr, "start: %s\n", s.error().to_string().c_str()), 1;
  broker.advertise("127.0.0.1", tcp.port());
  std::printf("listening on 127.0.0.1:%u\n", tcp.port());

  const bool checks_pass =
      api_versions_answered(tcp.port()) && audit_produce_error(guard, "intruder") == topic_authorization_failed;
  std::printf("self-check: %s\n", checks_pass ? "ok" : "FAILED");

  tcp.stop();  // stop accepting and close connections, then the broker, then the node
  broker.stop();
  if (auto c = (*n)->close(); !c) return std::fprintf(stderr, "close: %s\n", c.error().to_string().c_str()), 1;
  return checks_pass ? 0 : 1;
}

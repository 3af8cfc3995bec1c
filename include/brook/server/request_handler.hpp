// What a server does with a request: the seam between the network (server/tcp_server.hpp)
// and whatever answers (brook's broker, a custom broker, a test).
//
// The server calls handle() on the connection's network thread with a decoded request (its
// frame travels with it). The handler answers by calling `done` exactly once, from any
// thread, now or later: a group join waits for its rebalance, a fetch for data or its
// max_wait_ms. done(std::nullopt) sends nothing (Produce with acks=0). The server writes the
// answers of one connection in request order whatever order they come in. A handler must not
// block the network thread for long: work that waits uses a timer or a callback, never a
// sleeping thread.
//
// A handler may instead close the connection (done.close()), as Kafka does when a Produce
// with acks=0 fails: the answers to earlier requests are written first (Kafka answers a
// connection's requests one at a time), then the connection closes.
//
// When the connection closes before the answer is sent (the client went away), the reply is
// abandoned: calling it does nothing, and a handler that parked the request can learn it at
// once through on_abandon() and drop its wait (a long-poll Fetch's timer, a held join).
//
// Thread-safety: handle() is called concurrently from several network threads (one per
// io_context), for different connections; an implementation synchronises what it shares.
// A reply may be called, copied and asked about from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

#include <brook/protocol/response.hpp>
#include <brook/server/connection_state.hpp>

namespace brook::server {

/// Whether an answer is still wanted: shared by a reply and the connection it answers.
/// Thread-safety: all members are thread-safe.
class answer_watch {
 public:
  /// Marks the answer unwanted and runs the abandon hook (once, outside the lock).
  void abandon() {
    std::function<void()> hook;
    {
      std::lock_guard l(mu_);
      if (abandoned_) return;
      abandoned_ = true;
      hook = std::move(hook_);
    }
    if (hook) hook();
  }
  bool abandoned() const {
    std::lock_guard l(mu_);
    return abandoned_;
  }
  /// Runs `hook` when the answer is abandoned (at once if it already is). One hook; a new
  /// one replaces the old.
  void on_abandon(std::function<void()> hook) {
    {
      std::lock_guard l(mu_);
      if (!abandoned_) {
        hook_ = std::move(hook);
        return;
      }
    }
    if (hook) hook();
  }

 private:
  mutable std::mutex mu_;
  bool abandoned_ = false;
  std::function<void()> hook_;
};

/// How a handler answers one request.
class reply {
 public:
  using send_fn = std::function<void(std::optional<protocol::response_frame>)>;

  /// A reply that sends through `send`; `watch` tells whether the answer is still wanted
  /// (none: always wanted, as in a test calling a handler directly); `close` closes the
  /// connection in the request's place (none: close() sends nothing).
  template <typename Fn>
  requires std::is_invocable_v<Fn&, std::optional<protocol::response_frame>> reply(
      Fn send, std::shared_ptr<answer_watch> watch = {},  // NOLINT: a lambda is a reply
      std::function<void()> close = {})
      : send_(std::move(send)), close_(std::move(close)), watch_(std::move(watch)) {}

  /// Sends the answer (none: no answer, acks=0) and drops the abandon hook. Call once.
  void operator()(std::optional<protocol::response_frame> f) const {
    if (watch_) watch_->on_abandon({});
    send_(std::move(f));
  }
  /// Instead of an answer: the connection closes once the earlier answers are written.
  /// Call once, instead of operator().
  void close() const {
    if (watch_) watch_->on_abandon({});
    if (close_) {
      close_();
    } else {
      send_(std::nullopt);
    }
  }
  /// Whether the connection went away, so that the answer would be dropped.
  bool abandoned() const { return watch_ && watch_->abandoned(); }
  /// Runs `hook` (on the network thread, or at once) when the connection goes away first.
  void on_abandon(std::function<void()> hook) const {
    if (watch_) watch_->on_abandon(std::move(hook));
  }

 private:
  send_fn send_;
  std::function<void()> close_;
  std::shared_ptr<answer_watch> watch_;
};

class request_handler {
 public:
  using reply = server::reply;

  virtual ~request_handler() = default;
  virtual void handle(incoming_request request, reply done) = 0;
};

}  // namespace brook::server

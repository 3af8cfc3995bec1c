// A TCP server speaking Kafka's protocol: Boost.Asio (header-only) under connection_state,
// answering through a request_handler.
//
// Threading: `network_threads` io_contexts, one thread each. The acceptor lives on the
// first; each accepted connection is given to the next io_context in turn and stays on its
// thread for its whole life, so a connection's state needs no lock. Handlers answer from any
// thread: the answer is posted to the connection's io_context.
//
// A connection reads while its connection_state wants to (back-pressure at max_in_flight),
// hands each request to the handler, and writes answers in request order. It closes, alone,
// on anything connection_state refuses, on a read or write error, when the peer closes, and
// after `idle_timeout` without a complete read or write (Kafka's connections.max.idle.ms,
// default 10 minutes). Past `max_connections` open connections a new one is accepted and
// closed at once. What a connection holds is bounded by connection_state's bounds plus one
// read buffer and the answer being written. When it closes, the replies of its unanswered
// requests are abandoned (request_handler.hpp), so parked requests drop their waits.
//
// Answers are written in parts: the in-memory bytes with writes, and the log slices of a
// Fetch answer with sendfile(2) from their segment files (log_slice::send_to), so record
// bytes never pass through user space. With `sendfile` off, each answer is copied into one
// buffer first (response_frame::flatten): the comparison path, and the one for platforms
// without sendfile.
//
// Thread-safety: start() and stop() from one controlling thread; the rest runs on the
// network threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pthread.h>
#include <signal.h>

#include <boost/asio.hpp>

#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/server/connection_state.hpp>
#include <brook/server/request_handler.hpp>
#include <brook/server/served_apis.hpp>

namespace brook::server {

struct server_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  ///< 0: a free port (see tcp_server::port())
  std::size_t network_threads = 1;
  std::size_t max_connections = 1000;
  std::chrono::milliseconds idle_timeout{600'000};  ///< connections.max.idle.ms
  std::size_t read_buffer_bytes = 64 * 1024;
  bool sendfile = true;  ///< send Fetch record bytes with sendfile(2); false: copy them
  connection_limits limits{};
};

namespace detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// One accepted connection, living on one io_context. Open, it is held by the server's list
/// and by its pending read, write and idle timer; replies handed to the handler hold it only
/// weakly, so a closed connection goes away even while a handler still holds a reply.
class tcp_connection : public std::enable_shared_from_this<tcp_connection> {
 public:
  using on_closed = std::function<void(tcp_connection*)>;

  tcp_connection(std::shared_ptr<asio::io_context> ctx, tcp::socket socket, request_handler& handler,
                 const served_apis& apis, const server_options& o, on_closed closed)
      : ctx_(std::move(ctx)),
        socket_(std::move(socket)),
        timer_(*ctx_),
        handler_(handler),
        state_(apis, o.limits),
        buffer_(o.read_buffer_bytes),
        idle_(o.idle_timeout),
        sendfile_(o.sendfile),
        on_closed_(std::move(closed)) {}

  void start() {
    boost::system::error_code ignored;
    socket_.native_non_blocking(true, ignored);  // sendfile must not block the thread
    arm_idle_timer();
    read();
  }
  /// Closes the socket and leaves the server's list. On the connection's thread; idempotent.
  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    timer_.cancel();
    for (auto& [seq, w] : std::exchange(watches_, {})) w->abandon();
    if (on_closed_) std::exchange(on_closed_, nullptr)(this);
  }
  asio::io_context& context() noexcept { return *ctx_; }

 private:
  void read() {
    if (closed_ || reading_ || !state_.wants_read()) return;
    reading_ = true;
    socket_.async_read_some(asio::buffer(buffer_), [self = shared_from_this()](auto ec, std::size_t n) {
      self->reading_ = false;
      if (ec) return self->close();
      self->last_activity_ = std::chrono::steady_clock::now();
      self->state_.feed(std::span<const std::byte>(self->buffer_.data(), n));
      self->dispatch();
      self->read();
    });
  }

  void dispatch() {
    while (!closed_) {
      auto q = state_.next_request();
      if (!q) return close();   // what Kafka closes on
      if (!*q) return write();  // connection_state may have answered one itself (ApiVersions)
      const std::uint64_t seq = (*q)->seq;
      std::weak_ptr<tcp_connection> weak = weak_from_this();
      auto watch = std::make_shared<answer_watch>();
      watches_.emplace(seq, watch);
      reply done(
          [weak, seq](std::optional<protocol::response_frame> f) {
            auto self = weak.lock();
            if (!self) return;  // closed and gone
            asio::post(self->context(), [weak, seq, f = std::move(f)]() mutable {
              if (auto c = weak.lock()) c->answered(seq, std::move(f));
            });
          },
          std::move(watch),
          [weak, seq] {
            auto self = weak.lock();
            if (!self) return;
            asio::post(self->context(), [weak, seq] {
              if (auto c = weak.lock()) c->close_asked(seq);
            });
          });
      handler_.handle(std::move(**q), std::move(done));
    }
  }

  void answered(std::uint64_t seq, std::optional<protocol::response_frame> f) {
    if (closed_) return;
    watches_.erase(seq);
    state_.answer(seq, std::move(f));
    write();
    read();  // a slot may have freed up
  }

  void close_asked(std::uint64_t seq) {
    if (closed_) return;
    watches_.erase(seq);
    state_.close_after(seq);
    write();
  }

  void write() {
    if (closed_ || writing_) return;
    if (state_.close_due()) return close();
    if (!state_.has_write()) return;
    writing_ = true;
    current_ = state_.pop_write();
    if (!sendfile_ || current_->slices().empty()) {
      out_ = current_->flatten();
      current_.reset();
      asio::async_write(socket_, asio::buffer(out_), [self = shared_from_this()](auto ec, std::size_t) {
        if (ec) return self->close();
        self->written();
      });
      return;
    }
    part_ = 0;
    part_sent_ = 0;
    write_parts();
  }

  // The frame's parts in order: bytes before slice 0, slice 0, bytes before slice 1, ...,
  // the bytes after the last slice. Even parts are written, odd parts sendfile'd.
  void write_parts() {
    const auto& f = *current_;
    const auto& slices = f.slices();
    while (!closed_ && part_ < 2 * slices.size() + 1) {
      const std::size_t k = part_ / 2;
      if (part_ % 2 == 0) {
        const std::size_t from = k == 0 ? 0 : slices[k - 1].at;
        const std::size_t to = k < slices.size() ? slices[k].at : f.bytes().size();
        ++part_;
        if (from == to) continue;
        asio::async_write(socket_, asio::buffer(f.bytes().data() + from, to - from),
                          [self = shared_from_this()](auto ec, std::size_t) {
                            if (ec) return self->close();
                            self->write_parts();
                          });
        return;
      }
      const log_slice& s = slices[k].slice;
      auto sent = s.send_to(socket_.native_handle(), part_sent_);
      if (!sent) return close();
      part_sent_ += *sent;
      if (part_sent_ < s.size_bytes()) {  // the socket is full: go on when it drains
        socket_.async_wait(tcp::socket::wait_write, [self = shared_from_this()](auto ec) {
          if (ec) return self->close();
          self->write_parts();
        });
        return;
      }
      part_sent_ = 0;
      ++part_;
    }
    current_.reset();
    if (!closed_) written();
  }

  void written() {
    writing_ = false;
    last_activity_ = std::chrono::steady_clock::now();
    write();
    read();
  }

  void arm_idle_timer() {
    if (closed_) return;
    timer_.expires_at(last_activity_ + idle_);
    timer_.async_wait([self = shared_from_this()](auto ec) {
      if (ec || self->closed_) return;
      if (std::chrono::steady_clock::now() - self->last_activity_ >= self->idle_) return self->close();
      self->arm_idle_timer();
    });
  }

  std::shared_ptr<asio::io_context> ctx_;  // outlives the socket and timer below
  tcp::socket socket_;
  asio::steady_timer timer_;
  request_handler& handler_;
  connection_state state_;
  std::vector<std::byte> buffer_;
  std::vector<std::byte> out_;                       // the answer being written, copied
  std::optional<protocol::response_frame> current_;  // or sent in parts
  std::size_t part_ = 0, part_sent_ = 0;
  std::chrono::milliseconds idle_;
  bool sendfile_ = true;
  std::chrono::steady_clock::time_point last_activity_ = std::chrono::steady_clock::now();
  on_closed on_closed_;
  std::unordered_map<std::uint64_t, std::shared_ptr<answer_watch>> watches_;  // requests not answered yet
  bool reading_ = false;
  bool writing_ = false;
  bool closed_ = false;
};

}  // namespace detail

class tcp_server {
 public:
  /// `handler` and `apis` must outlive the server.
  tcp_server(request_handler& handler, const served_apis& apis, server_options o = {})
      : handler_(handler), apis_(apis), options_(std::move(o)) {
    BROOK_ASSERT(options_.network_threads > 0, "a server without network threads");
  }
  tcp_server(const tcp_server&) = delete;
  tcp_server& operator=(const tcp_server&) = delete;
  ~tcp_server() { stop(); }

  /// Binds, listens and starts the network threads. Errors: invalid_config for an address
  /// that is not an IP address; the OS error when it cannot be bound.
  result<void> start() {
    namespace asio = boost::asio;
    BROOK_ASSERT(threads_.empty(), "started twice");
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(options_.host, ec);
    if (ec) return make_error(errc::invalid_config, "listen address '{}': {}", options_.host, ec.message());
    for (std::size_t i = 0; i < options_.network_threads; ++i)
      contexts_.push_back(std::make_shared<asio::io_context>(1));
    acceptor_.emplace(*contexts_[0]);
    const detail::tcp::endpoint ep(address, options_.port);
    if (acceptor_->open(ep.protocol(), ec); ec) return os_error("open", ec);
    acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
    if (acceptor_->bind(ep, ec); ec) return os_error("bind", ec);
    if (acceptor_->listen(asio::socket_base::max_listen_connections, ec); ec) return os_error("listen", ec);
    port_ = acceptor_->local_endpoint().port();
    for (auto& c : contexts_) guards_.emplace_back(asio::make_work_guard(*c));
    accept();
    for (auto& c : contexts_)
      threads_.emplace_back([ctx = c] {
        // sendfile(2) has no MSG_NOSIGNAL: a peer that resets mid-answer would raise SIGPIPE,
        // whose default kills the host. Blocked here, it stays pending on this thread alone
        // and the call fails with EPIPE, which closes the connection.
        sigset_t pipe;
        sigemptyset(&pipe);
        sigaddset(&pipe, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
        ctx->run();
      });
    return ok();
  }

  /// The port it listens on (the one picked for port 0). REQUIRES: started.
  std::uint16_t port() const noexcept { return port_; }
  /// Connections open now.
  std::size_t connections() const {
    std::lock_guard lock(mu_);
    return live_.size();
  }

  /// Stops accepting, closes every connection, joins the network threads. Replies that come
  /// later are dropped. Idempotent.
  void stop() {
    if (threads_.empty()) return;
    boost::asio::post(*contexts_[0], [this] {
      boost::system::error_code ignored;
      acceptor_->close(ignored);
    });
    std::vector<std::shared_ptr<detail::tcp_connection>> open;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;  // a connection accepted from now on is closed at once
      for (auto& [raw, c] : live_) open.push_back(c);
    }
    for (auto& c : open) boost::asio::post(c->context(), [c] { c->close(); });
    open.clear();
    guards_.clear();  // each thread returns once its connections are closed and idle
    for (auto& t : threads_) t.join();
    threads_.clear();
    acceptor_.reset();
    contexts_.clear();  // a connection still held by a reply keeps its own io_context
  }

 private:
  static brook::error os_error(const char* what, const boost::system::error_code& ec) {
    return make_system_error(ec.value(), "{}", what);  // "bind: Address already in use"
  }

  void accept() {
    auto ctx = contexts_[next_++ % contexts_.size()];
    acceptor_->async_accept(*ctx, [this, ctx](boost::system::error_code ec, detail::tcp::socket s) {
      if (ec == boost::asio::error::operation_aborted || !acceptor_->is_open()) return;
      if (!ec) admit(std::move(s), ctx);
      accept();
    });
  }

  void admit(detail::tcp::socket s, const std::shared_ptr<boost::asio::io_context>& ctx) {
    boost::system::error_code ignored;
    std::lock_guard lock(mu_);
    if (stopping_ || live_.size() >= options_.max_connections) {
      s.close(ignored);
      return;
    }
    s.set_option(detail::tcp::no_delay(true), ignored);
    auto c = std::make_shared<detail::tcp_connection>(ctx, std::move(s), handler_, apis_, options_,
                                                      [this](detail::tcp_connection* gone) {
                                                        std::lock_guard l(mu_);
                                                        live_.erase(gone);
                                                      });
    live_.emplace(c.get(), c);
    boost::asio::post(*ctx, [c] { c->start(); });
  }

  request_handler& handler_;
  const served_apis& apis_;
  server_options options_;
  std::vector<std::shared_ptr<boost::asio::io_context>> contexts_;
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guards_;
  std::optional<detail::tcp::acceptor> acceptor_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::unordered_map<detail::tcp_connection*, std::shared_ptr<detail::tcp_connection>> live_;  // open ones
  bool stopping_ = false;                                                                      // under mu_
  std::size_t next_ = 0;
  std::uint16_t port_ = 0;
};

}  // namespace brook::server

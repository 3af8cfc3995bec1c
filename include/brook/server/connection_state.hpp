// One client connection's protocol state, without the socket: the rules of Kafka's
// SocketServer and RequestChannel that do not depend on how bytes move.
//
//   socket bytes --feed()--> next_request(): whole frames, decoded, numbered in arrival order
//   a handler    --answer(seq, frame or none)-->  in any order
//   pop_write() <-- answers in request order, as Kafka's clients require
//
// Rules:
//   - A frame the reader refuses (a size below 0 or above the limit, Kafka's
//     socket.request.max.bytes), an unknown API key, an API or version the served_apis table
//     does not serve, or a body that does not decode: next_request() returns the error and
//     the connection is failed for good; the caller closes it without answering, as Kafka
//     does.
//   - An ApiVersions request of a version not served is answered here (KIP-511: a v0 body
//     with UNSUPPORTED_VERSION and the served ApiVersions range), in its place in the order,
//     and the connection stays open.
//   - Back-pressure: at most `max_in_flight` requests are handed out and not yet written.
//     At the bound next_request() hands out nothing and wants_read() is false, so the server
//     stops reading the socket and TCP holds the client back (librdkafka pipelines up to
//     1,000,000 requests). What the state holds is then bounded by the answers in flight,
//     the bytes of the last read and one partial frame (frame.hpp).
//   - answer(seq, std::nullopt) is a request that gets no answer (Produce with acks=0): it
//     is skipped in the order. close_after(seq) answers it by closing the connection, after
//     the answers before it (a failed acks=0 Produce, a test's dropped connection).
//
// A request's body may view its frame's bytes (a Produce request's records): the frame
// travels with it in incoming_request, which is move-only so that the view cannot be copied
// away from its bytes.
//
// Thread-safety: single-threaded; a server calls it from the connection's strand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <brook/codec/message_codec.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/result.hpp>
#include <brook/protocol/frame.hpp>
#include <brook/protocol/request.hpp>
#include <brook/protocol/response.hpp>
#include <brook/server/served_apis.hpp>

namespace brook::server {

/// A decoded request with the frame its body views.
struct incoming_request {
  std::uint64_t seq = 0;  ///< its place in the connection's order
  std::vector<std::byte> frame;
  protocol::request_header header;
  protocol::request_body body;

  incoming_request(std::uint64_t s, std::vector<std::byte> f, protocol::request_header h, protocol::request_body b)
      : seq(s), frame(std::move(f)), header(std::move(h)), body(std::move(b)) {}
  incoming_request(incoming_request&&) noexcept = default;
  incoming_request& operator=(incoming_request&&) noexcept = default;
  incoming_request(const incoming_request&) = delete;
  incoming_request& operator=(const incoming_request&) = delete;
};

/// A connection's bounds.
struct connection_limits {
  std::int32_t max_frame_size = protocol::default_max_frame_size;  ///< socket.request.max.bytes
  std::size_t max_in_flight = 100;                                 ///< requests handed out and not yet written
};

class connection_state {
 public:
  /// `apis` must outlive the state.
  explicit connection_state(const served_apis& apis, connection_limits l = {})
      : apis_(apis), limits_(l), reader_(l.max_frame_size) {
    BROOK_ASSERT(l.max_in_flight > 0, "a connection that can never take a request");
  }

  /// Bytes as read from the socket.
  void feed(std::span<const std::byte> bytes) { reader_.feed(bytes); }

  /// The next request to handle, in arrival order; none until a whole frame is buffered or
  /// while max_in_flight requests are out. An error fails the connection: close it.
  result<std::optional<incoming_request>> next_request() {
    while (!failed_ && in_flight() < limits_.max_in_flight) {
      auto f = reader_.next();
      if (!f) return fail(f.error());
      if (!*f) return std::optional<incoming_request>();
      auto r = admit(std::move(**f));
      if (!r) return fail(r.error());
      if (*r) return r;
      // An unsupported ApiVersions request was answered here: go on with the next frame.
    }
    if (failed_) return *failed_;
    return std::optional<incoming_request>();
  }

  /// The answer to request `seq`; none for a request that gets no answer.
  /// REQUIRES: `seq` was handed out and not answered yet.
  void answer(std::uint64_t seq, std::optional<protocol::response_frame> frame) {
    BROOK_ASSERT(seq >= base_ && seq < base_ + pending_.size(), "answer to request {} not in flight", seq);
    slot& s = pending_[static_cast<std::size_t>(seq - base_)];
    BROOK_ASSERT(!s.answered, "request {} answered twice", seq);
    s.answered = true;
    s.frame = std::move(frame);
    drop_silent_head();
  }

  /// Request `seq` is answered by closing the connection once the answers before it are
  /// written (close_due()). REQUIRES: as for answer().
  void close_after(std::uint64_t seq) {
    BROOK_ASSERT(seq >= base_ && seq < base_ + pending_.size(), "close for request {} not in flight", seq);
    slot& s = pending_[static_cast<std::size_t>(seq - base_)];
    BROOK_ASSERT(!s.answered, "request {} answered twice", seq);
    s.answered = true;
    s.close = true;
  }
  /// Whether every answer before a close_after() request is written: close now.
  bool close_due() const noexcept { return !pending_.empty() && pending_.front().answered && pending_.front().close; }

  /// Whether the next answer in request order is ready to write.
  bool has_write() const noexcept {
    return !pending_.empty() && pending_.front().answered && pending_.front().frame.has_value();
  }
  /// The next answer in request order. REQUIRES: has_write().
  protocol::response_frame pop_write() {
    BROOK_ASSERT(has_write(), "nothing to write");
    protocol::response_frame f = std::move(*pending_.front().frame);
    pending_.pop_front();
    ++base_;
    drop_silent_head();
    return f;
  }

  /// Whether the server should read the socket now.
  bool wants_read() const noexcept { return !failed_ && in_flight() < limits_.max_in_flight; }
  /// Requests handed out (or answered here) and not yet written.
  std::size_t in_flight() const noexcept { return pending_.size(); }
  /// Bytes fed and not yet taken as frames.
  std::size_t buffered() const noexcept { return reader_.buffered(); }
  bool failed() const noexcept { return failed_.has_value(); }

 private:
  struct slot {
    bool answered = false;
    bool close = false;  // answered by closing the connection
    std::optional<protocol::response_frame> frame;
  };

  // Decodes one frame: a request to hand out, none when it was answered here, or an error.
  result<std::optional<incoming_request>> admit(std::vector<std::byte> frame) {
    codec::message_reader r(frame, "request header");
    BROOK_TRY_ASSIGN(auto h, protocol::read_request_header(r));
    const auto key = static_cast<protocol::api_key>(h.api_key);
    if (!apis_.serves(key, h.api_version)) {
      if (key == protocol::api_key::api_versions) {
        auto answer = protocol::encode_response(h.correlation_id, apis_.unsupported_api_versions_answer(), 0);
        BROOK_ASSERT(answer.has_value(), "{}", answer.error());
        pending_.push_back({true, false, std::move(*answer)});
        return std::optional<incoming_request>();
      }
      return make_error(apis_.find(key) ? errc::unsupported_version : errc::invalid_request,
                        "{} v{} is not served here", protocol::api(key).name, h.api_version);
    }
    BROOK_TRY_ASSIGN(auto body, protocol::read_request_body(r, h));
    pending_.push_back({});
    const std::uint64_t seq = base_ + pending_.size() - 1;
    return std::optional<incoming_request>(std::in_place, seq, std::move(frame), std::move(h), std::move(body));
  }

  error fail(error e) {
    failed_ = e;
    return e;
  }

  void drop_silent_head() {
    while (!pending_.empty() && pending_.front().answered && !pending_.front().frame && !pending_.front().close) {
      pending_.pop_front();
      ++base_;
    }
  }

  const served_apis& apis_;
  connection_limits limits_;
  protocol::frame_reader reader_;
  std::deque<slot> pending_;  // requests base_, base_ + 1, ... in arrival order
  std::uint64_t base_ = 0;
  std::optional<error> failed_;
};

}  // namespace brook::server

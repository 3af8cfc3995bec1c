// Calling a request_handler the way a connection does, without a socket: a request is
// encoded into a frame, decoded back into an incoming_request (so a body views its frame as
// on the wire) and handed to the handler; the answer frame is flattened and decoded as a
// client would.
//
//   auto r = call(broker, metadata_request{}, 4);        // the answer, at most 10 s later
//   REQUIRE(r); CHECK(r->brokers.size() == 1);
//   auto p = start_call(broker, fetch, 11);              // an answer to wait for later
//   ... append ...; auto f = p.get();
//
// Thread-safety: a pending_call is waited on by one thread; the handler may answer from any.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/result.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/request.hpp>
#include <brook/protocol/response_header.hpp>
#include <brook/server/request_handler.hpp>

namespace brook::test {

/// The response type of request type Req.
template <typename Req>
using response_of_t =
    typename protocol::api_messages<static_cast<protocol::api_key>(codec::schema_of<Req>.info.api_key)>::response;

/// An answer on its way: none when the handler answered with nothing (acks=0).
template <typename Resp>
class pending_call {
 public:
  pending_call(std::future<std::optional<std::vector<std::byte>>> f, protocol::api_key key, std::int16_t version,
               std::int32_t correlation_id)
      : future_(std::move(f)), key_(key), version_(version), correlation_id_(correlation_id) {}

  /// Whether the answer came within `d`.
  bool ready_within(std::chrono::milliseconds d) { return future_.wait_for(d) == std::future_status::ready; }

  /// The decoded answer (waiting at most `limit`); an error when none came, none was sent or
  /// it does not decode.
  result<Resp> get(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    if (!ready_within(limit)) return make_error(errc::request_timed_out, "no answer within {} ms", limit.count());
    auto answer = future_.get();
    if (!answer) return make_error(errc::invalid_request, "the handler answered with nothing");
    // A decoded Fetch answer's records view these bytes: they live as long as the test.
    const std::vector<std::byte>* bytes = &keep(std::move(*answer));
    if (bytes->empty()) return make_error(errc::invalid_request, "the handler closed the connection");
    codec::message_reader r(std::span<const std::byte>(*bytes).subspan(protocol::frame_prefix_size), "response");
    BROOK_TRY_ASSIGN(auto h, protocol::read_response_header(r, key_, version_));
    if (h.correlation_id != correlation_id_)
      return make_error(errc::corrupt_message, "correlation id {} for {}", h.correlation_id, correlation_id_);
    Resp out{};
    BROOK_TRY(codec::read(r, out, version_));
    BROOK_TRY(r.expect_end());
    return out;
  }
  /// Keeps `b` until the process ends and returns it (a test's answers are few and small).
  static const std::vector<std::byte>& keep(std::vector<std::byte> b) {
    static std::mutex mu;
    static std::deque<std::vector<std::byte>> kept;
    std::lock_guard l(mu);
    return kept.emplace_back(std::move(b));
  }

  /// Whether the handler answered with nothing (waits at most `limit`).
  bool silent(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    return ready_within(limit) && !future_.get().has_value();
  }
  /// Whether the handler closed the connection instead of answering (waits at most `limit`).
  bool closed(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    if (!ready_within(limit)) return false;
    auto f = future_.get();
    return f.has_value() && f->empty();  // a frame is never empty: empty stands for close()
  }

 private:
  std::future<std::optional<std::vector<std::byte>>> future_;
  protocol::api_key key_;
  std::int16_t version_;
  std::int32_t correlation_id_;
};

/// Hands `req` at `version` to `h` and returns its answer to come.
template <typename Req>
pending_call<response_of_t<Req>> start_call(server::request_handler& h, const Req& req, std::int16_t version,
                                            std::string client_id = "brook-test") {
  static std::atomic<std::int32_t> next_correlation{1};
  const std::int32_t corr = next_correlation.fetch_add(1);
  constexpr auto key = static_cast<protocol::api_key>(codec::schema_of<Req>.info.api_key);
  protocol::request_header header{static_cast<std::int16_t>(key), version, corr, std::move(client_id)};
  auto frame = protocol::encode_request(header, req);
  BROOK_ASSERT(frame.has_value(), "{}", frame.error());
  std::vector<std::byte> body(frame->begin() + protocol::frame_prefix_size, frame->end());
  codec::message_reader r(body, "request header");
  auto decoded_header = protocol::read_request_header(r);
  BROOK_ASSERT(decoded_header.has_value(), "{}", decoded_header.error());
  auto decoded_body = protocol::read_request_body(r, *decoded_header);
  BROOK_ASSERT(decoded_body.has_value(), "{}", decoded_body.error());
  auto promise = std::make_shared<std::promise<std::optional<std::vector<std::byte>>>>();
  pending_call<response_of_t<Req>> out(promise->get_future(), key, version, corr);
  server::incoming_request q(0, std::move(body), std::move(*decoded_header), std::move(*decoded_body));
  server::reply done(
      [promise](std::optional<protocol::response_frame> f) {
        if (f) {
          promise->set_value(f->flatten());
        } else {
          promise->set_value(std::nullopt);
        }
      },
      {}, [promise] { promise->set_value(std::vector<std::byte>()); });
  h.handle(std::move(q), std::move(done));
  return out;
}

/// Hands `req` to `h` and waits (at most 10 s) for the decoded answer.
template <typename Req>
result<response_of_t<Req>> call(server::request_handler& h, const Req& req, std::int16_t version) {
  return start_call(h, req, version).get();
}

}  // namespace brook::test

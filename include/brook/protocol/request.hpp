// A request frame, decoded: the header (request_header.hpp), then the body its API key and
// version call for (messages.hpp). A server does this in two steps, so that it can answer
// an ApiVersions request of a version it does not serve before parsing the body:
//
//   codec::message_reader r(frame, "request");
//   BROOK_TRY_ASSIGN(auto h, read_request_header(r));        // unknown key: close
//   if (h.api_key == ApiVersions && !served(h.api_version))  // answer unsupported_version_answer()
//   BROOK_TRY_ASSIGN(auto body, read_request_body(r, h));    // then handle it
//
// decode_request() does both. Errors, and what Kafka's broker does with them:
//   invalid_request      an unknown API key; a key brook knows but does not describe
//                        (ControlledShutdown): the connection is closed
//   unsupported_version  a version Kafka does not define for the key: closed, except for
//                        ApiVersions (answered)
//   corrupt_message      a header or body that does not parse, or bytes left after the body,
//                        naming the field, the API and version, and the byte
//
// The body may view the frame's bytes (a Produce request's records): the frame must
// outlive the request.
//
// Thread-safety: plain values; the functions are reentrant.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <fmt/format.h>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/result.hpp>
#include <brook/protocol/frame.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/request_header.hpp>

namespace brook::protocol {

/// A decoded request: its header and its body.
struct request {
  request_header header{};
  request_body body{};
};

/// Reads the body `h` announces from r's position to the end of r's buffer.
inline result<request_body> read_request_body(codec::message_reader& r, const request_header& h) {
  std::optional<result<request_body>> out;
  for_each_api([&](auto api) {
    using A = decltype(api);
    if (out || static_cast<std::int16_t>(A::key) != h.api_key) return;
    typename A::request body{};
    r.set_what(fmt::format("{} v{}", codec::schema_of<typename A::request>.info.name, h.api_version));
    auto read = codec::read(r, body, h.api_version);
    if (read) read = r.expect_end();
    if (!read) {
      out.emplace(read.error());
    } else {
      out.emplace(request_body(std::move(body)));
    }
  });
  if (!out) return make_error(errc::invalid_request, "brook does not serve API key {}", h.api_key);
  return std::move(*out);
}

/// Decodes a request frame (the bytes after the size prefix).
inline result<request> decode_request(std::span<const std::byte> frame) {
  codec::message_reader r(frame, "request header");
  BROOK_TRY_ASSIGN(auto h, read_request_header(r));
  BROOK_TRY_ASSIGN(auto body, read_request_body(r, h));
  return request{std::move(h), std::move(body)};
}

/// A request frame, size prefix included: what a client sends. `h.api_key` and
/// `h.api_version` must name Body's API and a version of it.
template <codec::described_message Body>
result<std::vector<std::byte>> encode_request(const request_header& h, const Body& body) {
  constexpr auto info = codec::schema_of<Body>.info;
  BROOK_ASSERT(h.api_key == info.api_key, "a {} in a request header for API key {}", info.name, h.api_key);
  codec::message_writer w;
  w.int32(0);  // the size, filled in below
  BROOK_TRY(write_request_header(w, h));
  BROOK_TRY(codec::write(w, body, h.api_version));
  auto bytes = std::move(w).finish();
  brook::detail::store_be32(bytes.data(), static_cast<std::int32_t>(bytes.size() - frame_prefix_size));
  return bytes;
}

}  // namespace brook::protocol

// The header at the front of every response frame (frame.hpp), Kafka's ResponseHeader.json:
//
//   v0   correlation_id int32 (the request's, so a client matches answers to requests)
//   v1   v0 | tagged fields (uvarint count, then uvarint tag | uvarint size | bytes each)
//
// Which version follows from the request's api_key and api_version (api_keys.hpp:
// response_header_version; ApiVersions answers always use v0).
//
// Thread-safety: a plain value; the functions are reentrant.
#pragma once

#include <cstdint>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/result.hpp>
#include <brook/protocol/api_keys.hpp>

namespace brook::protocol {

struct response_header {
  std::int32_t correlation_id = 0;

  static constexpr auto schema() {
    using namespace brook::codec;
    return message<response_header>({.name = "ResponseHeader", .valid = between(0, 1), .flexible = since(1)},
                                    field("CorrelationId", &response_header::correlation_id));
  }
  friend bool operator==(const response_header&, const response_header&) = default;
};

/// Reads the header of the answer to `version` of `key` and leaves r at the body.
inline result<response_header> read_response_header(codec::message_reader& r, api_key key, std::int16_t version) {
  response_header h;
  BROOK_TRY(codec::read(r, h, response_header_version(key, version)));
  return h;
}

/// Writes the header of the answer to `version` of `key`.
inline void write_response_header(codec::message_writer& w, const response_header& h, api_key key,
                                  std::int16_t version) {
  auto written = codec::write(w, h, response_header_version(key, version));
  BROOK_ASSERT(written.has_value(), "{}", written.error());  // an int32 in version 0 or 1
}

}  // namespace brook::protocol

// The header at the front of every request frame (frame.hpp), Kafka's RequestHeader.json:
//
//   v0   api_key int16 | api_version int16 | correlation_id int32
//   v1   v0 | client_id: nullable string (int16 length N, N bytes; N = -1 is null)
//   v2   v1 | tagged fields (uvarint count, then uvarint tag | uvarint size | bytes each)
//
// Which version a request uses follows from its api_key and api_version
// (api_keys.hpp: request_header_version), so a reader takes the key and version first. In v2
// client_id stays a classic string (the field's "flexibleVersions" is "none"), so that a
// broker can read the header of an ApiVersions request of any version: brook's table
// declares the header non-flexible and adds v2's tagged-field section around the codec.
//
// Thread-safety: a plain value; the functions are reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/result.hpp>
#include <brook/protocol/api_keys.hpp>

namespace brook::protocol {

struct request_header {
  std::int16_t api_key = 0;  ///< raw: a request may name a key brook does not know
  std::int16_t api_version = 0;
  std::int32_t correlation_id = 0;
  std::optional<std::string> client_id{};

  static constexpr auto schema() {
    using namespace brook::codec;
    return message<request_header>({.name = "RequestHeader", .valid = between(0, 2)},
                                   field("RequestApiKey", &request_header::api_key),
                                   field("RequestApiVersion", &request_header::api_version),
                                   field("CorrelationId", &request_header::correlation_id),
                                   field("ClientId", &request_header::client_id).in(since(1)).ignorable());
  }
  friend bool operator==(const request_header&, const request_header&) = default;
};

/// Reads the header at r's position and leaves r at the body. invalid_request for an API key
/// brook does not know (Kafka closes such a connection without an answer); corrupt_message
/// for a header cut short.
inline result<request_header> read_request_header(codec::message_reader& r) {
  codec::message_reader peek = r;
  std::int16_t key = 0, version = 0;
  BROOK_TRY(peek.int16("RequestApiKey", key));
  BROOK_TRY(peek.int16("RequestApiVersion", version));
  const api_info* a = find_api(key);
  if (a == nullptr) return make_error(errc::invalid_request, "unknown API key {} (version {})", key, version);
  const std::int16_t hv = request_header_version(a->key, version);
  request_header h;
  BROOK_TRY(codec::read(r, h, hv));
  if (hv >= 2) BROOK_TRY(r.skip_tagged_fields("RequestHeader._tagged_fields"));
  return h;
}

/// Writes `h` in the header version its key and version call for. REQUIRES: a known key.
inline result<void> write_request_header(codec::message_writer& w, const request_header& h) {
  const api_info* a = find_api(h.api_key);
  BROOK_ASSERT(a != nullptr, "request header for unknown API key {}", h.api_key);
  const std::int16_t hv = request_header_version(a->key, h.api_version);
  BROOK_TRY(codec::write(w, h, hv));
  if (hv >= 2) w.no_tagged_fields();
  return ok();
}

}  // namespace brook::protocol

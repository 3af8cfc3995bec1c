// A response frame ready to send: the size prefix, the header and the body, with the
// record batches of a Fetch answer left where they are (protocol/records.hpp).
//
//   frame  = bytes[0, at_1) | slice_1 | bytes[at_1, at_2) | slice_2 | ... | bytes[at_n, end)
//
// A server writes the in-memory bytes and sends each slice from its segment file
// (log_slice::send_to, sendfile(2)) or, where it cannot, copies them from the slice's
// mapping: flatten() is that copy path. The slices keep their
// segments alive until the frame is sent. The size prefix counts the slices' bytes.
//
// Thread-safety: a value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include <brook/codec/message_codec.hpp>
#include <brook/codec/schema.hpp>
#include <brook/core/result.hpp>
#include <brook/format/bytes.hpp>
#include <brook/protocol/frame.hpp>
#include <brook/protocol/response_header.hpp>
#include <brook/storage/log_slice.hpp>

namespace brook::protocol {

class response_frame {
 public:
  /// A slice of a segment that belongs at byte `at` of bytes().
  struct slice_part {
    std::size_t at = 0;
    log_slice slice;
  };

  response_frame(std::vector<std::byte> bytes, std::vector<slice_part> slices)
      : bytes_(std::move(bytes)), slices_(std::move(slices)) {}

  /// The frame without the slices' bytes.
  const std::vector<std::byte>& bytes() const noexcept { return bytes_; }
  /// The slices, in frame order.
  const std::vector<slice_part>& slices() const noexcept { return slices_; }
  /// Bytes on the wire, size prefix and slices included.
  std::size_t size_bytes() const noexcept {
    std::size_t n = bytes_.size();
    for (const auto& s : slices_) n += s.slice.size_bytes();
    return n;
  }
  /// The whole frame in one buffer, the slices copied from their mappings.
  std::vector<std::byte> flatten() const {
    std::vector<std::byte> out;
    out.reserve(size_bytes());
    std::size_t from = 0;
    for (const auto& s : slices_) {
      out.insert(out.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(from),
                 bytes_.begin() + static_cast<std::ptrdiff_t>(s.at));
      const auto b = s.slice.bytes();
      out.insert(out.end(), b.begin(), b.end());
      from = s.at;
    }
    out.insert(out.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(from), bytes_.end());
    return out;
  }

 private:
  std::vector<std::byte> bytes_;
  std::vector<slice_part> slices_;
};

/// The frame answering request `correlation_id` with `body` at `version` (the header version
/// follows from Body's API and the version). Errors as codec::write, and invalid_request for
/// a frame over 2 GiB.
template <codec::described_message Body>
result<response_frame> encode_response(std::int32_t correlation_id, const Body& body, std::int16_t version) {
  constexpr auto info = codec::schema_of<Body>.info;
  static_assert(info.api_key >= 0, "a response of an API");
  codec::message_writer w;
  w.int32(0);  // the size, filled in below
  write_response_header(w, response_header{correlation_id}, static_cast<api_key>(info.api_key), version);
  BROOK_TRY(codec::write(w, body, version));
  const std::size_t size = w.message_size() - frame_prefix_size;
  if (size > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    return make_error(errc::invalid_request, "a {} v{} of {} bytes exceeds a frame", info.name, version, size);
  std::vector<response_frame::slice_part> slices;
  slices.reserve(w.externals().size());
  for (const codec::external_part& e : w.externals())  // only records write external parts
    slices.push_back({e.at, *static_cast<const log_slice*>(e.source)});
  auto bytes = std::move(w).release();
  brook::detail::store_be32(bytes.data(), static_cast<std::int32_t>(size));
  return response_frame(std::move(bytes), std::move(slices));
}

}  // namespace brook::protocol

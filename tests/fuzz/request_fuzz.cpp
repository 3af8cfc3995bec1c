// libFuzzer target for what a broker reads from a client: frame -> request header -> request
// body, for every API key and version brook describes (built as brook_fuzz_request with
// -DBROOK_BUILD_FUZZERS=ON and Clang; see CMakeLists.txt). The same entry point is linked
// with replay_main.cpp into brook_fuzz_request_replay, which ctest runs over corpus_request/
// (a valid request of every API and version, written by brook_fuzz_make_request_corpus).
//
// The input is a byte stream as a connection delivers it, fed to a frame_reader (limit
// 1 MiB) in two reads split in the middle. Invariants:
//   - the reader refuses a frame only with invalid_request, and then stays refused;
//   - a frame decode_request refuses is invalid_request, unsupported_version or
//     corrupt_message: nothing else, no crash, no allocation past what the bytes can hold;
//   - a request it accepts encodes again (encode_request, the same header), and that frame
//     decodes to the same header and the same body. (The bytes may differ: unknown tagged
//     fields are dropped, a bool byte other than 0 or 1 becomes 1.)
#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>

#include <brook/core/error.hpp>
#include <brook/protocol/frame.hpp>
#include <brook/protocol/request.hpp>

#include "fuzz_check.hpp"

namespace {

using namespace brook;

void check_frame(std::span<const std::byte> frame) {
  auto q = protocol::decode_request(frame);
  if (!q) {
    const auto& e = q.error();
    FUZZ_CHECK(e == errc::invalid_request || e == errc::unsupported_version || e == errc::corrupt_message);
    return;
  }
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        auto again = protocol::encode_request(q->header, body);
        FUZZ_CHECK(again.has_value());
        auto back = protocol::decode_request(std::span<const std::byte>(*again).subspan(protocol::frame_prefix_size));
        FUZZ_CHECK(back.has_value());
        FUZZ_CHECK(back->header == q->header);
        FUZZ_CHECK(std::holds_alternative<T>(back->body));
        FUZZ_CHECK(std::get<T>(back->body) == body);
      },
      q->body);
}

// Takes every whole frame; false once the reader refused the stream.
bool drain(protocol::frame_reader& reader) {
  for (;;) {
    auto f = reader.next();
    if (!f) {
      FUZZ_CHECK(f.error() == errc::invalid_request);
      FUZZ_CHECK(!reader.next());  // refused for good
      return false;
    }
    if (!*f) return true;
    check_frame(**f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  protocol::frame_reader reader(1 << 20);
  reader.feed(in.first(size / 2));
  if (!drain(reader)) return 0;
  reader.feed(in.subspan(size / 2));
  drain(reader);
  return 0;
}

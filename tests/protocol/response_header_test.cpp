#include <catch2/catch.hpp>
#include <vector>

#include <brook/protocol/response_header.hpp>

#include "support/checks.hpp"

using namespace brook;
using namespace brook::protocol;

namespace {
std::vector<std::byte> written(std::int32_t id, api_key key, std::int16_t version) {
  codec::message_writer w;
  write_response_header(w, response_header{id}, key, version);
  return std::move(w).finish();
}
}  // namespace

TEST_CASE("response headers: v0 for classic versions and ApiVersions, v1 with tagged fields",
          "[protocol][response_header]") {
  const auto v0 = written(0x01020304, api_key::metadata, 8);
  CHECK(v0 == std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}});
  const auto v1 = written(0x01020304, api_key::metadata, 9);
  CHECK(v1 == std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}, std::byte{0}});
  CHECK(written(5, api_key::api_versions, 3).size() == 4);  // KIP-511: always v0
  codec::message_reader r(v1, "response");
  auto back = read_response_header(r, api_key::metadata, 9);
  REQUIRE_OK(back);
  CHECK(back->correlation_id == 0x01020304);
  CHECK(r.remaining() == 0);
  codec::message_reader shortr(std::span<const std::byte>(v1.data(), 4), "response");
  auto cut = read_response_header(shortr, api_key::metadata, 9);  // the tagged section is missing
  REQUIRE_FALSE(cut);
  CHECK(cut.error() == errc::corrupt_message);
}

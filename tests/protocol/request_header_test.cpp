#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include <brook/protocol/request_header.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::encoded;

namespace {
std::vector<std::byte> written(const request_header& h) {
  codec::message_writer w;
  REQUIRE_OK(write_request_header(w, h));
  return std::move(w).finish();
}
result<request_header> read_all(const std::vector<std::byte>& b, std::size_t* body_at = nullptr) {
  codec::message_reader r(b, "request");
  auto h = read_request_header(r);
  if (body_at != nullptr) *body_at = r.position();
  return h;
}
}  // namespace

TEST_CASE("request headers byte for byte: v0, v1, v2", "[protocol][request_header]") {
  // Worked examples from RequestHeader.json.
  SECTION("v1: Metadata v1 from client \"abc\"") {
    const request_header h{3, 1, 7, "abc"};
    const auto want = bytes_of({0, 3, 0, 1, 0, 0, 0, 7, 0, 3, 'a', 'b', 'c'});
    CHECK(written(h) == want);
    auto back = read_all(want);
    REQUIRE_OK(back);
    CHECK(*back == h);
  }
  SECTION("v1 with a null client id") {
    const request_header h{0, 3, 1, std::nullopt};
    const auto want = bytes_of({0, 0, 0, 3, 0, 0, 0, 1, 0xff, 0xff});
    CHECK(written(h) == want);
    CHECK(*read_all(want) == h);
  }
  SECTION("v2: ApiVersions v3; client_id stays a classic string, then the tagged fields") {
    const request_header h{18, 3, 42, "k"};
    const auto want = bytes_of({0, 18, 0, 3, 0, 0, 0, 42, 0, 1, 'k', 0});
    CHECK(written(h) == want);
    CHECK(*read_all(want) == h);
  }
  SECTION("v0: ControlledShutdown v0 has no client id") {
    const request_header h{7, 0, 5, "ignored"};  // client_id is ignorable: not written in v0
    const auto want = bytes_of({0, 7, 0, 0, 0, 0, 0, 5});
    CHECK(written(h) == want);
    auto back = read_all(want);
    REQUIRE_OK(back);
    CHECK_FALSE(back->client_id);
  }
  SECTION("v2 skips unknown tagged fields and leaves the reader at the body") {
    auto b = bytes_of({0, 1, 0, 12, 0, 0, 0, 9, 0xff, 0xff, 2, 5, 1, 0xaa, 9, 0, 0xbe, 0xef});
    std::size_t body = 0;
    auto back = read_all(b, &body);
    REQUIRE_OK(back);
    CHECK(*back == request_header{1, 12, 9, std::nullopt});
    CHECK(body == b.size() - 2);
  }
}

TEST_CASE("request headers: unknown keys and short or damaged headers are named errors", "[protocol][request_header]") {
  auto unknown = read_all(bytes_of({0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0, 0}));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error() == errc::invalid_request);
  CHECK_THAT(unknown.error().message(), Catch::Contains("unknown API key 32512"));
  const auto good = written(request_header{18, 3, 42, "client"});
  for (std::size_t n = 0; n < good.size(); ++n) {  // every truncation
    INFO(n);
    auto r = read_all(std::vector<std::byte>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)));
    REQUIRE_FALSE(r);
    CHECK(r.error() == errc::corrupt_message);
  }
  auto bad_len = read_all(bytes_of({0, 3, 0, 1, 0, 0, 0, 7, 0xff, 0xfe}));  // client_id length -2
  REQUIRE_FALSE(bad_len);
  CHECK(bad_len.error() == errc::corrupt_message);
  CHECK_THAT(bad_len.error().message(), Catch::Contains("ClientId"));
}

TEST_CASE("request headers round-trip for every known API and version", "[protocol][request_header]") {
  std::mt19937_64 g(11);
  for (const api_info& a : known_apis)
    for (std::int16_t v = a.valid.lo; v <= a.valid.hi; ++v) {
      INFO(a.name << " v" << v);
      request_header h{static_cast<std::int16_t>(a.key), v, static_cast<std::int32_t>(g())};
      if (request_header_version(a.key, v) >= 1 && g() % 4 != 0) h.client_id = std::string(g() % 40, 'c');
      const auto b = written(h);
      std::size_t body = 0;
      auto back = read_all(b, &body);
      REQUIRE_OK(back);
      CHECK(*back == h);
      CHECK(body == b.size());
    }
}

#include <catch2/catch.hpp>

#include <brook/protocol/request.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;

namespace {
std::vector<std::byte> frame_of(std::int16_t key, std::int16_t version, const auto& body) {
  auto f = encode_request({key, version, 42, "client"}, body);
  REQUIRE_OK(f);
  return *f;
}
std::span<const std::byte> without_prefix(const std::vector<std::byte>& f) {
  return std::span<const std::byte>(f).subspan(frame_prefix_size);
}
}  // namespace

TEST_CASE("decode_request reads the header and the body its key and version name", "[protocol][request]") {
  heartbeat_request hb{"g", generation_id{3}, "m"};
  for (std::int16_t v = 0; v <= 4; ++v) {
    const auto f = frame_of(12, v, hb);
    CHECK(brook::detail::load_be32(f.data()) == static_cast<std::int32_t>(f.size() - 4));
    auto q = decode_request(without_prefix(f));
    REQUIRE_OK(q);
    CHECK(q->header.api_key == 12);
    CHECK(q->header.api_version == v);
    CHECK(q->header.correlation_id == 42);
    CHECK(q->header.client_id == "client");
    REQUIRE(std::holds_alternative<heartbeat_request>(q->body));
    CHECK(std::get<heartbeat_request>(q->body) == hb);
  }
  // A produce request's records view the frame.
  const auto batch = bytes_of({1, 2, 3, 4});
  produce_request pr;
  pr.acks = -1;
  pr.topic_data = {{"t", {{partition_id{0}, records::view(batch)}}}};
  const auto f = frame_of(0, 9, pr);
  auto q = decode_request(without_prefix(f));
  REQUIRE_OK(q);
  const auto& got = std::get<produce_request>(q->body).topic_data[0].partition_data[0].records;
  CHECK(got == pr.topic_data[0].partition_data[0].records);
  CHECK(got.bytes().data() > f.data());
  CHECK(got.bytes().data() < f.data() + f.size());
}

TEST_CASE("decode_request names what it refuses", "[protocol][request]") {
  // An unknown key: the connection is closed.
  auto unknown = decode_request(bytes_of({0, 99, 0, 0, 0, 0, 0, 1, 0xff, 0xff}));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error() == errc::invalid_request);
  // ControlledShutdown: known for its header, not served.
  auto shutdown = decode_request(bytes_of({0, 7, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 1}));
  REQUIRE_FALSE(shutdown);
  CHECK(shutdown.error() == errc::invalid_request);
  // A version Kafka does not define.
  auto future = decode_request(bytes_of({0, 12, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0}));  // header v2
  REQUIRE_FALSE(future);
  CHECK(future.error() == errc::unsupported_version);
  // Trailing bytes after a body.
  auto f = frame_of(12, 0, heartbeat_request{"g", generation_id{1}, "m"});
  f.push_back(std::byte{0});
  auto trailing = decode_request(without_prefix(f));
  REQUIRE_FALSE(trailing);
  CHECK(trailing.error() == errc::corrupt_message);
  CHECK_THAT(trailing.error().message(), Catch::Contains("HeartbeatRequest v0"));
  // A body cut short names the API, the version and the field.
  auto cut = frame_of(12, 4, heartbeat_request{"g", generation_id{1}, "m"});
  cut.resize(cut.size() - 3);
  auto short_body = decode_request(without_prefix(cut));
  REQUIRE_FALSE(short_body);
  CHECK(short_body.error() == errc::corrupt_message);
  CHECK_THAT(short_body.error().message(), Catch::Contains("HeartbeatRequest v4") && Catch::Contains("MemberId"));
}

TEST_CASE("Every described API decodes at every version Kafka defines for it", "[protocol][request]") {
  int apis = 0;
  for_each_api([&](auto api) {
    using A = decltype(api);
    ++apis;
    const api_info& info = protocol::api(A::key);
    for (std::int16_t v = info.valid.lo; v <= info.valid.hi; ++v) {
      INFO(info.name << " v" << v);
      typename A::request body{};
      auto q = decode_request(without_prefix(frame_of(static_cast<std::int16_t>(A::key), v, body)));
      REQUIRE_OK(q);
      CHECK(std::get<typename A::request>(q->body) == body);
    }
    CHECK(codec::schema_of<typename A::request>.info.valid.lo == info.valid.lo);
    CHECK(codec::schema_of<typename A::request>.info.valid.hi == info.valid.hi);
    CHECK(codec::schema_of<typename A::response>.info.valid.hi == info.valid.hi);
    CHECK(codec::schema_of<typename A::request>.info.flexible.lo == info.flexible.lo);
  });
  CHECK(apis == static_cast<int>(std::size(known_apis)) - 1);  // all but ControlledShutdown
}

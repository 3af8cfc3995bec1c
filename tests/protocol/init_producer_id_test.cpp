#include <catch2/catch.hpp>

#include <brook/protocol/init_producer_id.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("InitProducerId byte for byte: v0 and flexible v2 v3", "[protocol][init_producer_id]") {
  init_producer_id_request q;
  q.transactional_id.reset();        // idempotent only
  q.transaction_timeout_ms = 60000;  // 0xea60
  CHECK(encoded(q, 0) == bytes_of({0xff, 0xff, 0, 0, 0xea, 0x60}));
  CHECK(encoded(q, 1) == encoded(q, 0));
  CHECK(encoded(q, 2) == bytes_of({0, 0, 0, 0xea, 0x60, 0}));
  // v3 writes the default ProducerId and ProducerEpoch (-1).
  CHECK(encoded(q, 3) ==
        bytes_of({0, 0, 0, 0xea, 0x60, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0}));
  q.transactional_id.emplace("t");  // emplace: GCC 12 -Wrestrict misfires on assigning a literal
  q.producer_id = 0x0102030405060708;
  q.producer_epoch = 9;
  CHECK(encoded(q, 5) == bytes_of({2, 't', 0, 0, 0xea, 0x60, 1, 2, 3, 4, 5, 6, 7, 8, 0, 9, 0}));
  auto v2 = codec::encode(q, 2);  // resuming an id needs v3
  REQUIRE_FALSE(v2);
  CHECK(v2.error() == errc::unsupported_version);
  CHECK_THAT(v2.error().message(), Catch::Contains("ProducerId"));

  init_producer_id_response r;
  r.throttle_time_ms = 3;
  r.producer_id = 1000;  // 0x3e8
  r.producer_epoch = 2;
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0xe8, 0, 2}));
  CHECK(encoded(r, 2) == bytes_of({0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0xe8, 0, 2, 0}));
  r = init_producer_id_response{};
  r.error_code = 90;  // PRODUCER_FENCED: ProducerId stays -1
  CHECK(encoded(r, 4) == bytes_of({0, 0, 0, 0, 0, 90, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0}));
}

TEST_CASE("InitProducerId round-trips at every version", "[protocol][init_producer_id]") {
  for (std::int16_t v = 0; v <= 5; ++v) {
    INFO("v" << v);
    init_producer_id_request idempotent;
    idempotent.transactional_id.reset();
    idempotent.transaction_timeout_ms = 1000 + v;
    check_round_trip(idempotent, v);
    init_producer_id_request transactional;
    transactional.transactional_id = "payments-tx";
    transactional.transaction_timeout_ms = 900000;
    if (v >= 3) {
      transactional.producer_id = 4242;
      transactional.producer_epoch = 7;
    }
    check_round_trip(transactional, v);

    init_producer_id_response r;
    r.throttle_time_ms = 10 + v;
    r.producer_id = 4243;
    r.producer_epoch = 8;
    check_round_trip(r, v);
  }
}

TEST_CASE("InitProducerId refuses lying lengths and short messages", "[protocol][init_producer_id]") {
  // A TransactionalId claiming 9 bytes with 5 left.
  auto id = codec::decode<init_producer_id_request>(bytes_of({0, 9, 't', 0, 0, 0xea, 0x60}), 0);
  REQUIRE_FALSE(id);
  CHECK(id.error() == errc::corrupt_message);
  CHECK_THAT(id.error().message(), Catch::Contains("TransactionalId"));
  // v3 cut inside ProducerEpoch.
  auto epoch = codec::decode<init_producer_id_request>(
      bytes_of({0, 0, 0, 0xea, 0x60, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), 3);
  REQUIRE_FALSE(epoch);
  CHECK(epoch.error() == errc::corrupt_message);
  CHECK_THAT(epoch.error().message(), Catch::Contains("ProducerEpoch"));
  // A compact string length of 2^35 (a varint the string cannot hold).
  auto huge = codec::decode<init_producer_id_request>(bytes_of({0x81, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0, 0}), 2);
  REQUIRE_FALSE(huge);
  CHECK(huge.error() == errc::corrupt_message);
  CHECK_THAT(huge.error().message(), Catch::Contains("TransactionalId"));
  // Trailing bytes after a complete v0 response.
  auto trailing =
      codec::decode<init_producer_id_response>(bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 7}), 0);
  REQUIRE_FALSE(trailing);
  CHECK(trailing.error() == errc::corrupt_message);
}

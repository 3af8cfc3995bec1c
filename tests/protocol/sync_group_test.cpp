#include <catch2/catch.hpp>

#include <brook/protocol/sync_group.hpp>

#include "support/checks.hpp"
#include "support/wire_bytes.hpp"

using namespace brook;
using namespace brook::protocol;
using brook::test::bytes_of;
using brook::test::check_round_trip;
using brook::test::encoded;

TEST_CASE("SyncGroup byte for byte: v0, v3, flexible v4 and v5", "[protocol][sync_group]") {
  sync_group_request q;
  q.group_id = "g";
  q.generation = generation_id{1};
  q.member_id = "m";
  q.assignments = {{"m", bytes_of({0xab})}};
  CHECK(encoded(q, 0) == bytes_of({0, 1, 'g', 0, 0, 0, 1, 0, 1, 'm', 0, 0, 0, 1, 0, 1, 'm', 0, 0, 0, 1, 0xab}));
  CHECK(encoded(q, 3) ==
        bytes_of({0, 1, 'g', 0, 0, 0, 1, 0, 1, 'm', 0xff, 0xff, 0, 0, 0, 1, 0, 1, 'm', 0, 0, 0, 1, 0xab}));
  CHECK(encoded(q, 4) == bytes_of({2, 'g', 0, 0, 0, 1, 2, 'm', 0, 2, 2, 'm', 2, 0xab, 0, 0}));
  q.protocol_type = "consumer";
  q.protocol_name = "range";
  CHECK(encoded(q, 5) == bytes_of({2,   'g', 0, 0,   0,   1,   2,   'm', 0, 9, 'c', 'o', 'n',  's', 'u', 'm',
                                   'e', 'r', 6, 'r', 'a', 'n', 'g', 'e', 2, 2, 'm', 2,   0xab, 0,   0}));
  q.group_instance_id = "i";
  CHECK_FALSE(codec::encode(q, 2));  // a static member needs v3
  sync_group_response r{0, 0, "consumer", "range", bytes_of({1, 2})};
  CHECK(encoded(r, 0) == bytes_of({0, 0, 0, 0, 0, 2, 1, 2}));  // the protocol names are ignorable
  CHECK(encoded(r, 5) == bytes_of({0,   0,   0, 0,   0,   0,   9,   'c', 'o', 'n', 's', 'u', 'm',
                                   'e', 'r', 6, 'r', 'a', 'n', 'g', 'e', 3,   1,   2,   0}));
}

TEST_CASE("SyncGroup round-trips at every version and refuses a lying assignment length", "[protocol][sync_group]") {
  for (std::int16_t v = 0; v <= 5; ++v) {
    INFO("v" << v);
    sync_group_request q;
    q.group_id = "group";
    q.generation = generation_id{v + 3};
    q.member_id = "leader";
    q.assignments = {{"leader", bytes_of({0, 1, 2})}, {"other", {}}};
    if (v >= 3) q.group_instance_id = "static";
    sync_group_response r{v >= 1 ? 4 : 0, 0, std::nullopt, std::nullopt, bytes_of({9, 9})};
    if (v >= 5) {
      q.protocol_type = r.protocol_type = "consumer";
      q.protocol_name = r.protocol_name = "cooperative-sticky";
    }
    check_round_trip(q, v);
    check_round_trip(r, v);
  }
  // An assignment claiming more bytes than the message holds.
  auto lying = codec::decode<sync_group_response>(bytes_of({0, 0, 0x7f, 0, 0, 0, 1}), 0);
  REQUIRE_FALSE(lying);
  CHECK(lying.error() == errc::corrupt_message);
  CHECK_THAT(lying.error().message(), Catch::Contains("Assignment"));
}

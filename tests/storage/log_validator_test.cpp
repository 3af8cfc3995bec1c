#include <catch2/catch.hpp>
#include <chrono>
#include <limits>
#include <random>
#include <string>

#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/log_validator.hpp>

#include "support/checks.hpp"
#include "support/format_helpers.hpp"
#include "support/log_builders.hpp"
#include "support/seeds.hpp"
#include "support/test_codecs.hpp"

using namespace brook;
using brook::test::make_batch;

namespace {
std::vector<std::byte> concat(std::initializer_list<std::vector<std::byte>> parts) {
  std::vector<std::byte> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
result<validated_append> validate(std::vector<std::byte>& b, const log_config& cfg, offset log_end,
                                  append_options ao = {}, timestamp_ms now = 5'000) {
  return validate_append(b, ao, cfg, log_end, now, "t-0");
}
}  // namespace

TEST_CASE("validate_append assigns consecutive offsets from the log end", "[storage][log_validator]") {
  log_config cfg;
  auto b = concat({make_batch(3, 100), make_batch(2, 200)});
  auto v = validate(b, cfg, offset(40));
  REQUIRE_OK(v);
  CHECK(v->result.base_offset == offset(40));
  CHECK(v->result.last_offset == offset(44));
  CHECK(v->result.records == 5);
  CHECK(v->result.bytes == b.size());
  CHECK(v->result.log_append_time == -1);
  CHECK(v->max_timestamp == 201);
  const auto first = decode_batch_header_unchecked(b.data());
  const auto second = decode_batch_header_unchecked(b.data() + first.size_bytes());
  CHECK(first.base_offset == offset(40));
  CHECK(second.base_offset == offset(43));
  CHECK_OK(record_batch_view::parse(b));  // the CRC does not cover the base offset
}

TEST_CASE("validate_append stamps LogAppendTime and a new CRC", "[storage][log_validator]") {
  log_config cfg;
  cfg.message_timestamp_type = timestamp_type::log_append_time;
  auto b = make_batch(2, 100);
  auto v = validate(b, cfg, offset(0), {}, 7'777);
  REQUIRE_OK(v);
  CHECK(v->result.log_append_time == 7'777);
  CHECK(v->max_timestamp == 7'777);
  auto view = record_batch_view::parse(b);
  REQUIRE_OK(view);
  CHECK(view->header().timestamp_type() == timestamp_type::log_append_time);
  for (const record_view& r : *view) CHECK(r.timestamp() == 7'777);
}

TEST_CASE("validate_append refuses what Kafka's LogValidator refuses", "[storage][log_validator]") {
  log_config cfg;
  SECTION("a control batch from a producer") {
    record_batch_builder bb(batch_options{.control = true});
    bb.append(1, "k", "v");
    auto s = bb.finish();
    std::vector<std::byte> b(s.begin(), s.end());
    CHECK(validate(b, cfg, offset(0)).error().code() == errc::invalid_record);
  }
  SECTION("a record count that disagrees with lastOffsetDelta") {
    auto b = make_batch(3);
    detail::store_be32(b.data() + batch_layout::last_offset_delta, 5);
    update_batch_crc(b);
    auto r = validate(b, cfg, offset(0));
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::invalid_record);
  }
  SECTION("a keyless record on a compacted log") {
    record_batch_builder bb;
    bb.append(1, "k", "v");
    bb.append(2, nullable_bytes(), "v");
    auto s = bb.finish();
    std::vector<std::byte> b(s.begin(), s.end());
    cfg.cleanup = cleanup_policy::compact;
    auto r = validate(b, cfg, offset(0));
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::invalid_record);
    CHECK_THAT(r.error().message(), Catch::Contains("without a key"));
  }
  SECTION("a batch over max.message.bytes") {
    auto b = make_batch(1, 1, "v", 2000);
    cfg.max_message_bytes = 1000;
    CHECK(validate(b, cfg, offset(0)).error().code() == errc::record_too_large);
  }
  SECTION("a damaged CRC") {
    auto b = make_batch(2);
    b.back() ^= std::byte{1};
    CHECK(validate(b, cfg, offset(0)).error().code() == errc::corrupt_message);
  }
  SECTION("a truncated batch") {
    auto b = make_batch(2);
    b.resize(b.size() - 3);
    CHECK(validate(b, cfg, offset(0)).error().code() == errc::corrupt_message);
  }
}

TEST_CASE("validate_append keeps a replica's offsets, never below the log end", "[storage][log_validator]") {
  log_config cfg;
  auto b = make_batch(3);
  set_batch_base_offset(b, offset(10));
  auto ok_ = validate(b, cfg, offset(10), append_options{.assign_offsets = false});
  REQUIRE_OK(ok_);
  CHECK(ok_->result.base_offset == offset(10));
  CHECK(ok_->result.last_offset == offset(12));
  auto gap = validate(b, cfg, offset(8), append_options{.assign_offsets = false});  // a gap is allowed
  REQUIRE_OK(gap);
  CHECK(gap->result.base_offset == offset(10));
  auto below = validate(b, cfg, offset(11), append_options{.assign_offsets = false});
  REQUIRE_FALSE(below);
  CHECK(below.error().code() == errc::offset_out_of_range);
  CHECK(decode_batch_header_unchecked(b.data()).base_offset == offset(10));  // untouched
}

namespace {
std::vector<std::byte> batch_with_timestamps(std::initializer_list<timestamp_ms> stamps) {
  record_batch_builder bb;
  for (timestamp_ms t : stamps) bb.append(t, "k", "v");
  auto s = bb.finish();
  return {s.begin(), s.end()};
}
}  // namespace

// Issue 11 #17: negative timestamps were accepted; Kafka's timestamp bounds were not applied.
TEST_CASE("validate_append applies Kafka's timestamp rules to producer batches", "[storage][log_validator]") {
  log_config cfg;  // CreateTime; before.max unlimited, after.max 1 hour (Kafka 4.0)
  const timestamp_ms now = 1'700'000'000'000;
  for (timestamp_ms bad : {timestamp_ms{-5}, timestamp_ms{-2}, std::numeric_limits<timestamp_ms>::min()}) {
    INFO(bad);
    auto b = batch_with_timestamps({bad});
    auto r = validate(b, cfg, offset(0), {}, now);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::invalid_timestamp);
  }
  SECTION("-1 is Kafka's no-timestamp and passes") {
    auto b = batch_with_timestamps({-1, 1'000});
    CHECK_OK(validate(b, cfg, offset(0), {}, now));
    auto none = batch_with_timestamps({-1, -1});
    auto v = validate(none, cfg, offset(0), {}, now);
    REQUIRE_OK(v);
    CHECK(v->max_timestamp == -1);
  }
  SECTION("a negative timestamp beside good ones") {
    auto b = batch_with_timestamps({1'000, -5, 2'000});
    CHECK(validate(b, cfg, offset(0), {}, now).error().code() == errc::invalid_timestamp);
  }
  SECTION("message.timestamp.after.max.ms") {
    auto in_range = batch_with_timestamps({now + 3'600'000});
    CHECK_OK(validate(in_range, cfg, offset(0), {}, now));
    auto future = batch_with_timestamps({now, now + 3'600'001});
    auto r = validate(future, cfg, offset(0), {}, now);
    REQUIRE_FALSE(r);
    CHECK(r.error().code() == errc::invalid_timestamp);
    CHECK_THAT(r.error().message(), Catch::Contains("after.max.ms"));
    auto far = batch_with_timestamps({std::numeric_limits<timestamp_ms>::max()});
    CHECK(validate(far, cfg, offset(0), {}, now).error().code() == errc::invalid_timestamp);
  }
  SECTION("message.timestamp.before.max.ms") {
    cfg.message_timestamp_before_max = std::chrono::hours(24);
    auto old = batch_with_timestamps({now - 86'400'001});
    CHECK(validate(old, cfg, offset(0), {}, now).error().code() == errc::invalid_timestamp);
    auto day = batch_with_timestamps({now - 86'400'000});
    CHECK_OK(validate(day, cfg, offset(0), {}, now));
  }
  SECTION("a producer batch may not claim LogAppendTime") {
    auto b = batch_with_timestamps({1'000});
    set_batch_log_append_time(b, 1'000);
    CHECK(validate(b, cfg, offset(0), {}, now).error().code() == errc::invalid_timestamp);
  }
  SECTION("a LogAppendTime log stamps the time whatever the records say") {
    cfg.message_timestamp_type = timestamp_type::log_append_time;
    auto b = batch_with_timestamps({now + 99'999'999});
    CHECK_OK(validate(b, cfg, offset(0), {}, now));
  }
  SECTION("a replica's batch keeps its timestamps") {
    auto b = batch_with_timestamps({now + 99'999'999});
    CHECK_OK(validate(b, cfg, offset(0), append_options{.assign_offsets = false}, now));
  }
}

// Issue 11 #15: the builder overflowed at `ts - base` (UB, caught by the asan stage's UBSan).
TEST_CASE("a batch with timestamps INT64_MAX then INT64_MIN is built, then refused", "[storage][log_validator]") {
  auto b = batch_with_timestamps({std::numeric_limits<timestamp_ms>::max(), std::numeric_limits<timestamp_ms>::min()});
  auto r = validate(b, log_config{}, offset(0), {}, 5'000);
  REQUIRE_FALSE(r);
  CHECK((r.error().code() == errc::corrupt_message || r.error().code() == errc::invalid_timestamp));
}

// Issue 11 #16: a maxTimestamp of INT64_MAX over records of 1000 was written as is.
TEST_CASE("validate_append corrects a producer's maxTimestamp to its records' largest", "[storage][log_validator]") {
  auto b = batch_with_timestamps({1'000, 3'000, 2'000});
  set_batch_max_timestamp(b, std::numeric_limits<timestamp_ms>::max());  // a lie, with a valid CRC
  auto v = validate(b, log_config{}, offset(0), {}, 5'000);
  REQUIRE_OK(v);
  CHECK(v->max_timestamp == 3'000);
  CHECK(decode_batch_header_unchecked(b.data()).max_timestamp == 3'000);
  CHECK_OK(record_batch_view::parse(b));  // the CRC was recomputed
}

// Issue 11 #3: `next + (delta + 1)` wrapped past INT64_MAX and wrote base offset INT64_MIN.
TEST_CASE("validate_append refuses offsets past 2^63-1", "[storage][log_validator]") {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  auto two = make_batch(2);
  auto r = validate(two, log_config{}, offset(max - 1));
  REQUIRE_FALSE(r);
  CHECK(r.error().code() == errc::offset_out_of_range);
  CHECK(decode_batch_header_unchecked(two.data()).base_offset == offset(0));  // untouched
  auto at_end = make_batch(1);
  CHECK(validate(at_end, log_config{}, offset(max)).error().code() == errc::offset_out_of_range);
  auto last = make_batch(1);
  auto ok_ = validate(last, log_config{}, offset(max - 1));
  REQUIRE_OK(ok_);
  CHECK(ok_->result.last_offset == offset(max - 1));
}

namespace {
// n records "k<i>" -> "v-<i>" at ts.. compressed with `t`.
std::vector<std::byte> make_compressed(int n, compression_type t, std::int64_t ts = 1'000) {
  const auto codecs = test::all_codecs();
  record_batch_builder b;
  for (int i = 0; i < n; ++i) {
    std::string k = "k", v = "v-";  // appended piecewise: `"k" + ...` trips GCC 12's false -Wrestrict
    k += std::to_string(i);
    v += std::to_string(i);
    b.append(ts + i, k, v);
  }
  auto s = b.finish(**codecs.get(t), (*codecs.get(t))->default_level());
  REQUIRE(s);
  return {s->begin(), s->end()};
}
log_config with_codecs() {
  log_config cfg;
  cfg.codecs = std::make_shared<const compression_codecs>(test::all_codecs());
  return cfg;
}
}  // namespace

TEST_CASE("validate_append keeps a producer's compressed batch as it came", "[storage][log_validator][compression]") {
  const auto cfg = with_codecs();
  for (auto t : test::every_compression_type) {
    INFO(compression_name(t));
    auto b = make_compressed(4, t, 100);
    const auto payload = std::vector<std::byte>(b.begin() + batch_layout::records, b.end());
    auto v = validate(b, cfg, offset(10));
    REQUIRE_OK(v);
    CHECK(v->result.base_offset == offset(10));
    CHECK(v->result.last_offset == offset(13));
    CHECK(v->result.records == 4);
    CHECK(v->max_timestamp == 103);
    // In place: the codec payload is untouched; only the base offset moved.
    CHECK(std::vector<std::byte>(b.begin() + batch_layout::records, b.end()) == payload);
    batch_decompressor d(test::all_codecs());
    auto view = record_batch_view::parse(b, d);
    REQUIRE_OK(view);
    CHECK(view->compression() == t);
    std::vector<std::int64_t> offs;
    for (const record_view& r : *view) offs.push_back(r.offset().value());
    CHECK(offs == std::vector<std::int64_t>{10, 11, 12, 13});
  }
}

TEST_CASE("validate_append checks a compressed batch's records as Kafka's LogValidator does",
          "[storage][log_validator][compression]") {
  const auto cfg = with_codecs();
  SECTION("a codec the log was not given is unsupported_compression_type") {
    auto b = make_compressed(2, compression_type::lz4);
    auto v = validate(b, log_config{}, offset(0));
    REQUIRE_FALSE(v);
    CHECK(v.error() == errc::unsupported_compression_type);
    CHECK_THAT(v.error().message(), Catch::Contains("lz4"));
  }
  SECTION("recordsCount that disagrees with the inner records is corrupt_message") {
    auto three = make_compressed(3, compression_type::zstd);
    auto two = make_compressed(2, compression_type::zstd);
    // Two records' payload under a header claiming three.
    std::vector<std::byte> b(three.begin(), three.begin() + batch_layout::records);
    b.insert(b.end(), two.begin() + batch_layout::records, two.end());
    detail::store_be32(b.data() + batch_layout::batch_length,
                       static_cast<std::int32_t>(b.size() - batch_layout::log_overhead));
    update_batch_crc(b);
    auto v = validate(b, cfg, offset(0));
    REQUIRE_FALSE(v);
    CHECK(v.error() == errc::corrupt_message);
  }
  SECTION("a key-less record on a compacted log is invalid_record") {
    record_batch_builder bld;
    bld.append(1, nullable_bytes::null(), "v");
    auto s = bld.finish(**cfg.codecs->get(compression_type::gzip), -1);
    REQUIRE(s);
    std::vector<std::byte> b(s->begin(), s->end());
    auto compacted = cfg;
    compacted.cleanup = cleanup_policy::compact;
    auto v = validate(b, compacted, offset(0));
    REQUIRE_FALSE(v);
    CHECK(v.error() == errc::invalid_record);
  }
  SECTION("timestamps out of range are invalid_timestamp") {
    auto b = make_compressed(2, compression_type::snappy, 1);
    auto strict = cfg;
    strict.message_timestamp_before_max = std::chrono::milliseconds(10);
    auto v = validate(b, strict, offset(0), {}, 5'000);
    REQUIRE_FALSE(v);
    CHECK(v.error() == errc::invalid_timestamp);
  }
  SECTION("a replica's compressed batch is copied by its CRC, without the codec") {
    auto b = make_compressed(3, compression_type::zstd);
    set_batch_base_offset(b, offset(7));
    const auto before = b;
    append_options ao;
    ao.assign_offsets = false;
    auto v = validate(b, log_config{}, offset(7), ao);
    REQUIRE_OK(v);
    CHECK(v->result.last_offset == offset(9));
    CHECK(b == before);
    b.back() ^= std::byte{1};
    auto bad = validate(b, log_config{}, offset(7), ao);
    REQUIRE_FALSE(bad);
    CHECK(bad.error() == errc::corrupt_message);
  }
}

TEST_CASE("validate_append recompresses for a topic's compression.type", "[storage][log_validator][compression]") {
  for (auto target : test::every_compression_type) {
    for (auto source : test::every_compression_type) {
      INFO("topic " << compression_name(target) << " producer " << compression_name(source));
      auto cfg = with_codecs();
      cfg.compression = target;
      auto b = make_compressed(5, source, 200);
      const auto original = b;
      auto v = validate(b, cfg, offset(30));
      REQUIRE_OK(v);
      CHECK(v->result.base_offset == offset(30));
      CHECK(v->result.last_offset == offset(34));
      CHECK(v->max_timestamp == 204);
      if (target == source) {
        CHECK(v->rebuilt.empty());  // in place: the producer's payload is kept
        CHECK(std::equal(b.begin() + batch_layout::records, b.end(), original.begin() + batch_layout::records));
        continue;
      }
      REQUIRE_FALSE(v->rebuilt.empty());
      CHECK(v->result.bytes == v->rebuilt.size());
      batch_decompressor d(test::all_codecs());
      auto view = record_batch_view::parse(v->rebuilt, d);
      REQUIRE_OK(view);
      CHECK(view->size_bytes() == v->rebuilt.size());
      CHECK(view->compression() == target);
      CHECK(view->header().producer_id == -1);
      CHECK(view->header().max_timestamp == 204);
      int i = 0;
      for (const record_view& r : *view) {
        CHECK(r.offset() == offset(30 + i));
        CHECK(r.timestamp() == 200 + i);
        CHECK(r.key().to_string() == fmt::format("k{}", i));
        CHECK(r.value().to_string() == fmt::format("v-{}", i));
        ++i;
      }
      CHECK(i == 5);
    }
  }
}

TEST_CASE("validate_append recompression keeps every batch of the append in order",
          "[storage][log_validator][compression]") {
  auto cfg = with_codecs();
  cfg.compression = compression_type::gzip;
  cfg.message_timestamp_type = timestamp_type::log_append_time;
  auto b = concat({make_compressed(2, compression_type::gzip, 10), make_compressed(3, compression_type::none, 20),
                   make_compressed(1, compression_type::lz4, 30)});
  auto v = validate(b, cfg, offset(0), {}, 9'000);
  REQUIRE_OK(v);
  REQUIRE_FALSE(v->rebuilt.empty());
  batch_decompressor d(test::all_codecs());
  std::vector<std::int64_t> offs;
  std::size_t pos = 0, batches = 0;
  while (pos < v->rebuilt.size()) {
    auto view = record_batch_view::parse(std::span<const std::byte>(v->rebuilt).subspan(pos), d);
    REQUIRE_OK(view);
    CHECK(view->compression() == compression_type::gzip);
    CHECK(view->header().timestamp_type() == timestamp_type::log_append_time);
    for (const record_view& r : *view) {
      offs.push_back(r.offset().value());
      CHECK(r.timestamp() == 9'000);
    }
    pos += view->size_bytes();
    ++batches;
  }
  CHECK(batches == 3);
  CHECK(offs == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("validate_append recompression needs the topic's codec and must fit",
          "[storage][log_validator][compression]") {
  SECTION("a topic codec the log was not given is unsupported_compression_type") {
    log_config cfg;
    cfg.compression = compression_type::zstd;
    auto b = make_batch(2);
    auto v = validate(b, cfg, offset(0));
    REQUIRE_FALSE(v);
    CHECK(v.error() == errc::unsupported_compression_type);
    CHECK_THAT(v.error().message(), Catch::Contains("zstd"));
  }
  SECTION("a rebuilt batch over max.message.bytes is record_too_large") {
    auto cfg = with_codecs();
    cfg.compression = compression_type::none;
    // 200 records of 100 equal bytes: small compressed, 20 KiB and more uncompressed.
    record_batch_builder bld;
    for (int i = 0; i < 200; ++i) bld.append(1, "k", std::string(100, 'a'));
    auto s = bld.finish(**cfg.codecs->get(compression_type::zstd), 3);
    REQUIRE(s);
    std::vector<std::byte> b(s->begin(), s->end());
    cfg.max_message_bytes = static_cast<std::uint32_t>(b.size() + 100);
    auto v = validate(b, cfg, offset(0));
    REQUIRE_FALSE(v);
    CHECK(v.error() == errc::record_too_large);
  }
}

namespace {

/// A log_config drawn for the built-batch property: each producer rule on or off.
log_config draw_config(std::mt19937_64& rng) {
  log_config cfg;
  if (rng() % 3 == 0) cfg.cleanup = cleanup_policy::compact;
  if (rng() % 4 == 0) cfg.message_timestamp_type = timestamp_type::log_append_time;
  if (rng() % 3 == 0) cfg.message_timestamp_before_max = std::chrono::milliseconds(rng() % 100'000);
  if (rng() % 3 == 0) cfg.message_timestamp_after_max = std::chrono::milliseconds(rng() % 100'000);
  if (rng() % 4 == 0) cfg.max_message_bytes = static_cast<std::uint32_t>(100 + rng() % 2'000);
  if (rng() % 5 == 0) cfg.compression = compression_type::none;  // uncompressed: kept as built
  return cfg;
}

/// Fills `b` with a batch drawn for the same property: keys sometimes null, timestamps
/// around `now`, sometimes -1, negative or far off.
void draw_batch(std::mt19937_64& rng, record_batch_builder& b, timestamp_ms now) {
  b.reset();
  const int n = 1 + static_cast<int>(rng() % 20);
  for (int i = 0; i < n; ++i) {
    timestamp_ms ts = now - 60'000 + static_cast<timestamp_ms>(rng() % 120'000);
    if (rng() % 10 == 0) ts = no_timestamp;
    if (rng() % 40 == 0) ts = -2 - static_cast<timestamp_ms>(rng() % 100);
    if (rng() % 40 == 0) ts = now + 10'000'000;
    const std::string key = "k" + std::to_string(rng() % 50), value(rng() % 200, 'v');
    b.append(ts, rng() % 8 == 0 ? nullable_bytes::null() : nullable_bytes(std::string_view(key)), value);
  }
  b.set_options(batch_options{.control = rng() % 30 == 0});
  b.finish();
}

}  // namespace

// A batch built in this process skips the CRC and the walk of its records on append
// (validate_built_append): it must get exactly the verdict, the result and the bytes that
// validate_append gives the same batch as bytes.
TEST_CASE("validate_built_append gives validate_append's verdict result and bytes", "[storage][log_validator]") {
  const auto seed = brook::test::property_seed(23);
  std::mt19937_64 rng(seed);
  const timestamp_ms now = 1'700'000'000'000;
  record_batch_builder b;
  int ok = 0, refused = 0;
  for (int i = 0; i < 600; ++i) {
    INFO("seed " << seed << " (" << brook::test::seed_base_hint() << ") case " << i);
    const log_config cfg = draw_config(rng);
    draw_batch(rng, b, now);
    const built_batch built = b.built();
    REQUIRE(can_append_built(built, cfg));
    std::vector<std::byte> copy(built.bytes().begin(), built.bytes().end());
    const offset log_end(static_cast<std::int64_t>(rng() % 1'000'000));
    auto walked = validate_append(copy, {}, cfg, log_end, now, "t-0");
    auto trusted = validate_built_append(built, cfg, log_end, now, "t-0");
    REQUIRE(walked.has_value() == trusted.has_value());
    if (!walked) {
      ++refused;
      CHECK(trusted.error().code() == walked.error().code());
      CHECK(trusted.error().message() == walked.error().message());
      continue;
    }
    ++ok;
    CHECK(trusted->rebuilt.empty());
    CHECK(walked->rebuilt.empty());
    CHECK(trusted->result.base_offset == walked->result.base_offset);
    CHECK(trusted->result.last_offset == walked->result.last_offset);
    CHECK(trusted->result.records == walked->result.records);
    CHECK(trusted->result.bytes == walked->result.bytes);
    CHECK(trusted->result.log_append_time == walked->result.log_append_time);
    CHECK(trusted->max_timestamp == walked->max_timestamp);
    CHECK(std::equal(copy.begin(), copy.end(), built.bytes().begin(), built.bytes().end()));
    CHECK_OK(record_batch_view::parse(built.bytes()));  // offsets and times rewritten, CRC still right
  }
  CHECK(ok > 100);
  CHECK(refused > 100);
}

TEST_CASE("a built batch the topic recompresses or the builder does not vouch for is walked",
          "[storage][log_validator]") {
  record_batch_builder b;
  b.append(1'000, "k", "v");
  b.finish();
  log_config cfg;
  CHECK(can_append_built(b.built(), cfg));
  cfg.compression = compression_type::gzip;
  CHECK_FALSE(can_append_built(b.built(), cfg));
  b.reset();
  b.append(no_timestamp, "k", "v");
  b.append(std::numeric_limits<timestamp_ms>::max(), "k", "v");  // the delta wraps
  b.finish();
  cfg.compression.reset();
  CHECK_FALSE(can_append_built(b.built(), cfg));
}

TEST_CASE("validate_append refuses a producer batch with no records, whatever its codec bits",
          "[storage][log_validator]") {
  // Kafka's LogValidator: INVALID_RECORD for a count that is not lastOffsetDelta + 1 (at least
  // 1). An empty batch reads as empty (format/record_batch.hpp); a producer may not send one.
  log_config with_codecs;
  with_codecs.codecs = std::make_shared<const compression_codecs>(test::all_codecs());
  const log_config none_only;
  for (const auto codec : {compression_type::none, compression_type::lz4}) {
    for (const log_config* cfg : std::array<const log_config*, 2>{&with_codecs, &none_only}) {
      INFO(compression_name(codec) << (cfg == &none_only ? ", no codecs" : ", all codecs"));
      auto b = make_batch(1);
      test::be_write(b, batch_layout::records_count, 4, 0);
      // No payload when uncompressed (an empty batch); garbage that is never decoded for lz4.
      b = test::with_payload(b, codec,
                             codec == compression_type::none ? test::bytes{} : test::bytes(16, std::byte{0x5a}));
      auto v = validate(b, *cfg, offset(0));
      REQUIRE_FALSE(v);
      CHECK(v.error() == errc::invalid_record);
    }
  }
}

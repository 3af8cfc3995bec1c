// libFuzzer target for the data directory's topic-configs file (built as brook_fuzz_topic_config
// with -DBROOK_BUILD_FUZZERS=ON and Clang; see CMakeLists.txt). The same entry point is linked
// with replay_main.cpp into brook_fuzz_topic_config_replay, which ctest runs over
// corpus_topic_config/.
//
// The input is the file's text, parsed by detail::parse_topic_configs as data_dir::load does; a
// refusal must be kafka_storage_error. An accepted file must keep the parser's promises: every
// topic name passes validate_topic_name, every partition count is >= 1, and
// format_topic_configs (what the data directory writes) of the result parses back to the same
// topics. Each topic's overrides then go through topic_config::apply on the default log_config,
// as data_dir::load and the controller do. A refusal must be invalid_config; an accepted config
// passes log_config::validate, holds only known keys, and holds each value exactly as the text
// says: an integer past what its field takes (the four int-typed keys past 2^31-1, a negative
// one) is refused, never narrowed or wrapped; compression.type is held as parsed and each
// compression.<codec>.level is within its codec's range.
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <brook/compression/compression_type.hpp>
#include <brook/core/result.hpp>
#include <brook/storage/log_config.hpp>
#include <brook/storage/topic_config.hpp>

#include "fuzz_check.hpp"

namespace {

using topics = std::map<std::string, brook::topic_config>;

std::optional<std::int64_t> as_int64(const std::string& v) {
  std::int64_t n = 0;
  auto [p, e] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (e != std::errc() || p != v.data() + v.size()) return std::nullopt;
  return n;
}

bool same(const topics& a, const topics& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || ia->second.partitions != ib->second.partitions ||
        ia->second.overrides != ib->second.overrides)
      return false;
  return true;
}

struct field {
  const char* key;
  std::int64_t held;  // the value the config holds
  bool kafka_int;
};

// `cfg` was accepted by apply for `tc`: every override is a known key and is held exactly.
void check_applied(const brook::topic_config& tc, const brook::log_config& cfg) {
  FUZZ_CHECK(cfg.validate());
  constexpr std::int64_t int_max = std::numeric_limits<std::int32_t>::max();
  for (const auto& [k, v] : tc.overrides) {
    bool known = false;
    for (const auto& key : brook::topic_config::known_keys()) known = known || key == k;
    FUZZ_CHECK(known);
    if (k == "message.timestamp.type") {
      FUZZ_CHECK(v == "CreateTime" || v == "LogAppendTime");
      FUZZ_CHECK(cfg.message_timestamp_type ==
                 (v == "CreateTime" ? brook::timestamp_type::create_time : brook::timestamp_type::log_append_time));
      continue;
    }
    if (k == "cleanup.policy") {
      auto p = brook::parse_cleanup_policy(v);
      FUZZ_CHECK(p && *p == cfg.cleanup);
      continue;
    }
    if (k == "min.cleanable.dirty.ratio") {
      double d = 0;
      auto [p, e] = std::from_chars(v.data(), v.data() + v.size(), d);
      FUZZ_CHECK(e == std::errc() && p == v.data() + v.size());
      FUZZ_CHECK(d >= 0.0 && d <= 1.0 && cfg.min_cleanable_dirty_ratio == d);
      continue;
    }
    if (k == "compression.type") {
      auto c = brook::parse_topic_compression(v);
      FUZZ_CHECK(c && *c == cfg.compression);
      continue;
    }
    const auto n = as_int64(v);
    FUZZ_CHECK(n.has_value());
    // What each integer key sets, and whether Kafka's type for it is int (0..2^31-1 here).
    const field fields[] = {{"segment.bytes", static_cast<std::int64_t>(cfg.segment_bytes), true},
                            {"segment.index.bytes", static_cast<std::int64_t>(cfg.segment_index_bytes), true},
                            {"index.interval.bytes", cfg.index_interval_bytes, true},
                            {"max.message.bytes", cfg.max_message_bytes, true},
                            {"segment.ms", cfg.segment_time.count(), false},
                            {"retention.ms", cfg.retention_time.count(), false},
                            {"retention.bytes", cfg.retention_bytes, false},
                            {"flush.messages", cfg.flush_messages, false},
                            {"flush.ms", cfg.flush_interval.count(), false},
                            {"message.timestamp.before.max.ms", cfg.message_timestamp_before_max.count(), false},
                            {"message.timestamp.after.max.ms", cfg.message_timestamp_after_max.count(), false},
                            {"delete.retention.ms", cfg.delete_retention.count(), false},
                            {"min.compaction.lag.ms", cfg.min_compaction_lag.count(), false},
                            {"compression.gzip.level", cfg.compression_gzip_level, false},
                            {"compression.lz4.level", cfg.compression_lz4_level, false},
                            {"compression.zstd.level", cfg.compression_zstd_level, false}};
    bool checked = false;
    for (const auto& f : fields) {
      if (k != f.key) continue;
      checked = true;
      if (f.kafka_int) FUZZ_CHECK(*n >= 0 && *n <= int_max);
      FUZZ_CHECK(f.held == *n);
    }
    for (auto t : {brook::compression_type::gzip, brook::compression_type::lz4, brook::compression_type::zstd})
      if (k == fmt::format("compression.{}.level", brook::compression_name(t)))
        FUZZ_CHECK(brook::valid_kafka_compression_level(t, static_cast<int>(*n)));
    FUZZ_CHECK(checked);  // a known key this fuzzer does not check fails here, until it does
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = brook::detail::parse_topic_configs(text, "fuzz");
  if (!r) {
    FUZZ_CHECK(r.error() == brook::errc::kafka_storage_error);
    return 0;
  }
  for (const auto& [name, tc] : *r) {
    FUZZ_CHECK(brook::validate_topic_name(name));
    FUZZ_CHECK(tc.partitions >= 1);
  }
  const std::string formatted = brook::detail::format_topic_configs(*r);
  auto back = brook::detail::parse_topic_configs(formatted, "formatted");
  FUZZ_CHECK(back);
  FUZZ_CHECK(same(*back, *r));
  FUZZ_CHECK(brook::detail::format_topic_configs(*back) == formatted);

  for (const auto& [name, tc] : *r) {
    auto cfg = tc.apply(brook::log_config{});
    if (!cfg) {
      FUZZ_CHECK(cfg.error() == brook::errc::invalid_config);
      continue;
    }
    check_applied(tc, *cfg);
  }
  return 0;
}

// Topic names and per-topic settings, and how a data directory persists them.
//
// Names follow Kafka's Topic.validate: 1..249 characters from [a-zA-Z0-9._-], not "."
// or "..". Such a name can never reach outside the data directory.
//
// A topic's settings are its partition count plus overrides of log_config, named as
// Kafka's topic configs are (segment.bytes, retention.ms, cleanup.policy, ...). A data
// directory keeps all of them in one text file, `topic-configs`, rewritten atomically:
//
//   0                                   <- version
//   orders partitions=3                 <- one line per topic: name, then key=value pairs
//   orders retention.ms=86400000
//   audit partitions=1
//
// Thread-safety: values and pure functions.
#pragma once

#include <charconv>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/core/printable.hpp>
#include <brook/core/result.hpp>
#include <brook/storage/log_config.hpp>

namespace brook {

inline constexpr std::size_t max_topic_name_length = 249;

/// invalid_topic unless `name` is a legal Kafka topic name.
inline result<void> validate_topic_name(std::string_view name) {
  if (name.empty()) return make_error(errc::invalid_topic, "topic name is empty");
  if (name == "." || name == "..") return make_error(errc::invalid_topic, "topic name cannot be '{}'", name);
  if (name.size() > max_topic_name_length)
    return make_error(errc::invalid_topic, "topic name is {} characters; the maximum is {}", name.size(),
                      max_topic_name_length);
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      return make_error(errc::invalid_topic, "topic name '{}' has the character '{}'; only [a-zA-Z0-9._-] are legal",
                        detail::printable(name), detail::printable(std::string_view(&c, 1)));
  }
  return ok();
}

/// Kafka's internal topics (Topic.isInternal): the group coordinator's offsets, the
/// transaction coordinator's state and the share-group state. Only brook itself creates
/// them or appends to them; a client that tries gets invalid_topic, as from Kafka.
inline bool is_internal_topic(std::string_view name) noexcept {
  return name == "__consumer_offsets" || name == "__transaction_state" || name == "__share_group_state";
}

/// A topic's `compression.type` (Kafka's BrokerCompressionType): "producer" (nullopt: keep
/// the producer's codec), "uncompressed" (none), "gzip", "snappy", "lz4", "zstd", in any ASCII
/// case. "none" is the producer's name, not the topic's: invalid_config, as in Kafka.
inline result<std::optional<compression_type>> parse_topic_compression(std::string_view v) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (auto& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
  };
  const std::string l = lower(v);
  if (l == "producer") return std::optional<compression_type>();
  if (l == "uncompressed") return std::optional<compression_type>(compression_type::none);
  if (l != "none")
    if (auto t = parse_compression_type(l)) return std::optional<compression_type>(*t);
  return make_error(errc::invalid_config,
                    "compression.type '{}' is not one of uncompressed, zstd, lz4, snappy, gzip, producer",
                    detail::printable(v));
}
/// The text of a topic's compression.type, as Kafka prints it.
constexpr std::string_view topic_compression_name(std::optional<compression_type> t) noexcept {
  if (!t) return "producer";
  if (*t == compression_type::none) return "uncompressed";
  return compression_name(*t);
}

/// A topic's partition count and its log_config overrides (Kafka names -> values as text).
struct topic_config {
  std::int32_t partitions = 1;
  std::map<std::string, std::string> overrides{};

  /// The names overrides may use.
  static const std::vector<std::string>& known_keys() {
    static const std::vector<std::string> keys = {"segment.bytes",
                                                  "segment.ms",
                                                  "segment.index.bytes",
                                                  "index.interval.bytes",
                                                  "max.message.bytes",
                                                  "retention.ms",
                                                  "retention.bytes",
                                                  "flush.messages",
                                                  "flush.ms",
                                                  "message.timestamp.type",
                                                  "message.timestamp.before.max.ms",
                                                  "message.timestamp.after.max.ms",
                                                  "cleanup.policy",
                                                  "delete.retention.ms",
                                                  "min.cleanable.dirty.ratio",
                                                  "min.compaction.lag.ms",
                                                  "compression.type",
                                                  "compression.gzip.level",
                                                  "compression.lz4.level",
                                                  "compression.zstd.level"};
    return keys;
  }

  /// Applies the overrides on top of `base`. invalid_config names a bad key or value.
  result<log_config> apply(log_config base) const {
    for (const auto& kv : overrides) {
      // Named references, not a structured binding: the int_of lambda below uses `k`, and
      // Clang before 16 cannot capture a structured binding.
      const std::string& k = kv.first;
      const std::string& v = kv.second;
      if (k == "message.timestamp.type") {
        if (v == "CreateTime")
          base.message_timestamp_type = timestamp_type::create_time;
        else if (v == "LogAppendTime")
          base.message_timestamp_type = timestamp_type::log_append_time;
        else
          return make_error(errc::invalid_config, "message.timestamp.type '{}' is not CreateTime or LogAppendTime",
                            detail::printable(v));
        continue;
      }
      if (k == "compression.type") {
        BROOK_TRY_ASSIGN(base.compression, parse_topic_compression(v));
        continue;
      }
      if (k == "cleanup.policy") {
        BROOK_TRY_ASSIGN(auto p, parse_cleanup_policy(v));
        base.cleanup = p;
        continue;
      }
      if (k == "min.cleanable.dirty.ratio") {
        double d = 0;
        auto [p, e] = std::from_chars(v.data(), v.data() + v.size(), d);
        if (e != std::errc() || p != v.data() + v.size())
          return make_error(errc::invalid_config, "min.cleanable.dirty.ratio='{}' is not a number",
                            detail::printable(v));
        base.min_cleanable_dirty_ratio = d;
        continue;
      }
      std::int64_t n = 0;
      auto [p, e] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (e != std::errc() || p != v.data() + v.size())
        return make_error(errc::invalid_config, "{}='{}' is not an integer", k, detail::printable(v));
      // Kafka's type for these four is int: a value past 2^31-1 is refused, never narrowed.
      auto int_of = [&](auto& field) -> result<void> {
        if (n < 0) return make_error(errc::invalid_config, "{}={} is negative", k, n);
        if (n > std::numeric_limits<std::int32_t>::max())
          return make_error(errc::invalid_config, "{}={} is out of range: Kafka's type for it is int (at most {})", k,
                            n, std::numeric_limits<std::int32_t>::max());
        field = static_cast<std::remove_reference_t<decltype(field)>>(n);
        return ok();
      };
      if (k == "segment.bytes")
        BROOK_TRY(int_of(base.segment_bytes));
      else if (k == "segment.ms")
        base.segment_time = std::chrono::milliseconds(n);
      else if (k == "segment.index.bytes")
        BROOK_TRY(int_of(base.segment_index_bytes));
      else if (k == "index.interval.bytes")
        BROOK_TRY(int_of(base.index_interval_bytes));
      else if (k == "max.message.bytes")
        BROOK_TRY(int_of(base.max_message_bytes));
      else if (k == "message.timestamp.before.max.ms")
        base.message_timestamp_before_max = std::chrono::milliseconds(n);
      else if (k == "message.timestamp.after.max.ms")
        base.message_timestamp_after_max = std::chrono::milliseconds(n);
      else if (k == "retention.ms")
        base.retention_time = std::chrono::milliseconds(n);
      else if (k == "retention.bytes")
        base.retention_bytes = n;
      else if (k == "flush.messages")
        base.flush_messages = n;
      else if (k == "flush.ms")
        base.flush_interval = std::chrono::milliseconds(n);
      else if (k == "delete.retention.ms")
        base.delete_retention = std::chrono::milliseconds(n);
      else if (k == "min.compaction.lag.ms")
        base.min_compaction_lag = std::chrono::milliseconds(n);
      else if (k == "compression.gzip.level" || k == "compression.lz4.level" || k == "compression.zstd.level") {
        if (n < std::numeric_limits<std::int32_t>::min() || n > std::numeric_limits<std::int32_t>::max())
          return make_error(errc::invalid_config, "{}={} is out of range", k, n);
        (k == "compression.gzip.level"  ? base.compression_gzip_level
         : k == "compression.lz4.level" ? base.compression_lz4_level
                                        : base.compression_zstd_level) = static_cast<int>(n);
      } else
        return make_error(errc::invalid_config, "unknown topic config '{}'", detail::printable(k));
    }
    BROOK_TRY(base.validate());
    return base;
  }
};

/// The value of every topic config a log holds, as Kafka prints it (DescribeConfigs,
/// `kafka-configs --describe --all`), in known_keys() order. Kafka's "never" for flush.* is
/// Long.MAX_VALUE, which milliseconds::max() and int64 max print as.
inline std::vector<std::pair<std::string, std::string>> topic_config_values(const log_config& c) {
  auto ms = [](std::chrono::milliseconds d) { return fmt::format("{}", d.count()); };
  return {{"segment.bytes", fmt::format("{}", c.segment_bytes)},
          {"segment.ms", ms(c.segment_time)},
          {"segment.index.bytes", fmt::format("{}", c.segment_index_bytes)},
          {"index.interval.bytes", fmt::format("{}", c.index_interval_bytes)},
          {"max.message.bytes", fmt::format("{}", c.max_message_bytes)},
          {"retention.ms", ms(c.retention_time)},
          {"retention.bytes", fmt::format("{}", c.retention_bytes)},
          {"flush.messages", fmt::format("{}", c.flush_messages)},
          {"flush.ms", ms(c.flush_interval)},
          {"message.timestamp.type",
           c.message_timestamp_type == timestamp_type::log_append_time ? "LogAppendTime" : "CreateTime"},
          {"message.timestamp.before.max.ms", ms(c.message_timestamp_before_max)},
          {"message.timestamp.after.max.ms", ms(c.message_timestamp_after_max)},
          {"cleanup.policy", std::string(to_string(c.cleanup))},
          {"delete.retention.ms", ms(c.delete_retention)},
          {"min.cleanable.dirty.ratio", fmt::format("{}", c.min_cleanable_dirty_ratio)},
          {"min.compaction.lag.ms", ms(c.min_compaction_lag)},
          {"compression.type", std::string(topic_compression_name(c.compression))},
          {"compression.gzip.level", fmt::format("{}", c.compression_gzip_level)},
          {"compression.lz4.level", fmt::format("{}", c.compression_lz4_level)},
          {"compression.zstd.level", fmt::format("{}", c.compression_zstd_level)}};
}

namespace detail {

/// Text of the topic-configs file for `topics`.
inline std::string format_topic_configs(const std::map<std::string, topic_config>& topics) {
  std::string out = "0\n";
  for (const auto& [name, tc] : topics) {
    out += fmt::format("{} partitions={}\n", name, tc.partitions);
    for (const auto& [k, v] : tc.overrides) out += fmt::format("{} {}={}\n", name, k, v);
  }
  return out;
}

/// Parses the topic-configs file text; `where` names the file in errors.
inline result<std::map<std::string, topic_config>> parse_topic_configs(std::string_view text, std::string_view where) {
  std::map<std::string, topic_config> out;
  std::size_t lineno = 0;
  bool version_seen = false;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++lineno;
    if (line.empty()) continue;
    if (!version_seen) {
      if (line != "0")
        return make_error(errc::kafka_storage_error, "{} line {}: unsupported version '{}'", where, lineno,
                          detail::printable(line));
      version_seen = true;
      continue;
    }
    auto sp = line.find(' ');
    auto eq = line.find('=', sp == std::string_view::npos ? 0 : sp);
    if (sp == std::string_view::npos || eq == std::string_view::npos)
      return make_error(errc::kafka_storage_error, "{} line {}: expected '<topic> <key>=<value>'", where, lineno);
    std::string topic(line.substr(0, sp));
    std::string key(line.substr(sp + 1, eq - sp - 1));
    std::string value(line.substr(eq + 1));
    if (auto v = validate_topic_name(topic); !v)
      return make_error(errc::kafka_storage_error, "{} line {}: {}", where, lineno, v.error().message());
    auto& tc = out[topic];
    if (key == "partitions") {
      std::int32_t n = 0;
      auto [p, e] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (e != std::errc() || p != value.data() + value.size() || n < 1)
        return make_error(errc::kafka_storage_error, "{} line {}: bad partition count '{}'", where, lineno,
                          detail::printable(value));
      tc.partitions = n;
    } else {
      tc.overrides[key] = value;
    }
  }
  if (!version_seen && !out.empty()) return make_error(errc::kafka_storage_error, "{}: missing version line", where);
  return out;
}

}  // namespace detail
}  // namespace brook

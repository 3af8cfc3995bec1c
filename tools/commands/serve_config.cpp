#include "commands/serve_config.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include <brook/storage/topic_config.hpp>

#include "commands/cli.hpp"
#include "commands/cli_codecs.hpp"

namespace brook::cli {

namespace {

constexpr std::int64_t int_max = std::numeric_limits<std::int32_t>::max();

std::int64_t int_of(const std::string& key, const std::string& v, std::int64_t min, std::int64_t max) {
  return parse_int(fmt::format("--config {}", key), v, min, max);
}
std::chrono::milliseconds ms_of(const std::string& key, const std::string& v, std::int64_t min, std::int64_t max) {
  return std::chrono::milliseconds(int_of(key, v, min, max));
}
/// Kafka's BOOLEAN: "true" or "false", any case.
bool bool_of(const std::string& key, const std::string& v) {
  std::string lower;
  for (char c : v) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true") return true;
  if (lower == "false") return false;
  throw usage_error(fmt::format("--config {} expects true or false, got '{}'", key, v));
}

/// One key serve knows. A log default (topic_key set) goes through topic_config::apply on
/// data_dir_options::defaults, so it gets exactly the topic config's checks; `unit_ms`
/// turns Kafka's log.*.hours/.minutes into topic_key's milliseconds.
struct key_spec {
  std::string_view name;
  std::string_view help;  ///< default and where it goes
  void (*apply)(serve_settings&, const std::string& key, const std::string& value) = nullptr;
  std::string_view topic_key{};
  std::int64_t unit_ms = 0;
};

void set_log_default(serve_settings& s, const key_spec& k, const std::string& key, const std::string& value) {
  std::string v = value;
  if (k.unit_ms != 0 || k.topic_key == "retention.ms") {
    // Kafka reads log.*.hours and .minutes as ints, and any negative retention as unlimited.
    const bool is_int = k.unit_ms != 0;
    const std::int64_t n = int_of(key, value, is_int ? -int_max - 1 : std::numeric_limits<std::int64_t>::min(),
                                  is_int ? int_max : std::numeric_limits<std::int64_t>::max());
    const bool unlimited = n < 0 && k.topic_key == "retention.ms";
    v = unlimited ? "-1" : std::to_string(n * std::max<std::int64_t>(k.unit_ms, 1));
  }
  topic_config tc;
  tc.overrides.emplace(std::string(k.topic_key), v);
  auto r = tc.apply(s.node.dir.defaults);
  if (!r) throw usage_error(fmt::format("--config {}={}: {}", key, value, r.error().message()));
  s.node.dir.defaults = std::move(*r);
}

// Order matters where Kafka gives precedence: a later entry overwrites an earlier one, so
// log.retention.ms beats .minutes beats .hours, and log.roll.ms beats log.roll.hours.
// clang-format off
constexpr key_spec keys[] = {
    {"broker.id", "the broker id (0); node.id's older name", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.broker.id = broker_id(static_cast<std::int32_t>(int_of(k, v, 0, int_max))); }},
    {"node.id", "the broker id Metadata reports (0)", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.broker.id = broker_id(static_cast<std::int32_t>(int_of(k, v, 0, int_max))); }},
    {"num.partitions", "partitions of auto-created topics and of CreateTopics with -1 (1)",
     [](serve_settings& s, const std::string& k, const std::string& v) {
       s.broker.num_partitions = static_cast<std::int32_t>(int_of(k, v, 1, int_max)); }},
    {"auto.create.topics.enable", "Metadata and Produce create unknown topics (true)",
     [](serve_settings& s, const std::string& k, const std::string& v) { s.broker.auto_create_topics = bool_of(k, v); }},
    {"offsets.topic.num.partitions", "__consumer_offsets partitions when created (serve: 1; Kafka: 50)",
     [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.offsets_topic_num_partitions = static_cast<std::int32_t>(int_of(k, v, 1, int_max)); }},
    {"group.initial.rebalance.delay.ms", "a new group's wait for more members (serve: 0; Kafka: 3000)",
     [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.group_initial_rebalance_delay = ms_of(k, v, 0, int_max); }},
    {"group.min.session.timeout.ms", "(6000)", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.group_min_session_timeout = ms_of(k, v, 0, int_max); }},
    {"group.max.session.timeout.ms", "(1800000)", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.group_max_session_timeout = ms_of(k, v, 0, int_max); }},
    {"group.max.size", "members per group (2147483647)", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.group_max_size = static_cast<std::size_t>(int_of(k, v, 1, int_max)); }},
    {"offsets.retention.minutes", "(10080)", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.offsets_retention = std::chrono::minutes(int_of(k, v, 1, int_max)); }},
    {"offsets.retention.check.interval.ms", "(600000)", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.offsets_retention_check_interval = ms_of(k, v, 1, std::numeric_limits<std::int64_t>::max()); }},
    {"offset.metadata.max.bytes", "(4096)", [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.groups.offset_metadata_max_bytes = static_cast<std::size_t>(int_of(k, v, 0, int_max)); }},
    {"socket.request.max.bytes", "largest request frame; larger closes the connection (104857600)",
     [](serve_settings& s, const std::string& k, const std::string& v) {
       s.server.limits.max_frame_size = static_cast<std::int32_t>(int_of(k, v, 1, int_max)); }},
    {"connections.max.idle.ms", "close a connection idle this long (600000; at most 2^31-1 here)",
     [](serve_settings& s, const std::string& k, const std::string& v) { s.server.idle_timeout = ms_of(k, v, 1, int_max); }},
    {"max.connections", "open connections; more are closed at once (serve: 1000; Kafka: 2147483647)",
     [](serve_settings& s, const std::string& k, const std::string& v) {
       s.server.max_connections = static_cast<std::size_t>(int_of(k, v, 1, int_max)); }},
    {"num.network.threads", "network threads, each with its connections (3, at most 256 here)",
     [](serve_settings& s, const std::string& k, const std::string& v) {
       s.server.network_threads = static_cast<std::size_t>(int_of(k, v, 1, 256)); }},
    {"log.retention.check.interval.ms", "how often housekeeping runs (serve: 1000; Kafka: 300000)",
     [](serve_settings& s, const std::string& k, const std::string& v) {
       s.node.housekeeping_interval = ms_of(k, v, 1, std::numeric_limits<std::int64_t>::max()); }},
    {"log.segment.bytes", "-> segment.bytes (1073741824)", nullptr, "segment.bytes"},
    {"log.roll.hours", "-> segment.ms (168)", nullptr, "segment.ms", 3'600'000},
    {"log.roll.ms", "-> segment.ms (wins over log.roll.hours)", nullptr, "segment.ms"},
    {"log.index.size.max.bytes", "-> segment.index.bytes (10485760)", nullptr, "segment.index.bytes"},
    {"log.index.interval.bytes", "-> index.interval.bytes (4096)", nullptr, "index.interval.bytes"},
    {"message.max.bytes", "-> max.message.bytes (1048588)", nullptr, "max.message.bytes"},
    {"log.retention.hours", "-> retention.ms (168)", nullptr, "retention.ms", 3'600'000},
    {"log.retention.minutes", "-> retention.ms (wins over .hours)", nullptr, "retention.ms", 60'000},
    {"log.retention.ms", "-> retention.ms (wins over .minutes and .hours; negative: unlimited)", nullptr, "retention.ms"},
    {"log.retention.bytes", "-> retention.bytes (-1)", nullptr, "retention.bytes"},
    {"log.flush.interval.messages", "-> flush.messages (never)", nullptr, "flush.messages"},
    {"log.flush.interval.ms", "-> flush.ms (never)", nullptr, "flush.ms"},
    {"log.message.timestamp.type", "-> message.timestamp.type (CreateTime)", nullptr, "message.timestamp.type"},
    {"log.message.timestamp.before.max.ms", "-> message.timestamp.before.max.ms (unlimited)", nullptr, "message.timestamp.before.max.ms"},
    {"log.message.timestamp.after.max.ms", "-> message.timestamp.after.max.ms (3600000)", nullptr, "message.timestamp.after.max.ms"},
    {"log.cleanup.policy", "-> cleanup.policy (delete)", nullptr, "cleanup.policy"},
    {"log.cleaner.delete.retention.ms", "-> delete.retention.ms (86400000)", nullptr, "delete.retention.ms"},
    {"log.cleaner.min.cleanable.ratio", "-> min.cleanable.dirty.ratio (0.5)", nullptr, "min.cleanable.dirty.ratio"},
    {"log.cleaner.min.compaction.lag.ms", "-> min.compaction.lag.ms (0)", nullptr, "min.compaction.lag.ms"},
    {"compression.type", "-> compression.type (producer)", nullptr, "compression.type"},
    {"compression.gzip.level", "-> compression.gzip.level (-1)", nullptr, "compression.gzip.level"},
    {"compression.lz4.level", "-> compression.lz4.level (9)", nullptr, "compression.lz4.level"},
    {"compression.zstd.level", "-> compression.zstd.level (3)", nullptr, "compression.zstd.level"},
};
// clang-format on

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

serve_settings make_serve_settings(const config_map& configs) {
  serve_settings s;
  s.node.dir.defaults.codecs = cli_codecs();  // serve accepts and validates what it was built with
  s.server.network_threads = 3;               // Kafka's num.network.threads
  for (const auto& [key, value] : configs) {
    bool known = false;
    for (const auto& k : keys) known = known || k.name == key;
    if (!known) throw usage_error(fmt::format("--config {}: unknown key (brook serve --help lists them)", key));
  }
  for (const auto& k : keys) {
    auto it = configs.find(k.name);
    if (it == configs.end()) continue;
    if (k.apply != nullptr)
      k.apply(s, it->first, it->second);
    else
      set_log_default(s, k, it->first, it->second);
  }
  auto node_id = configs.find("node.id"), broker_id = configs.find("broker.id");
  if (node_id != configs.end() && broker_id != configs.end() &&
      int_of("node.id", node_id->second, 0, int_max) != int_of("broker.id", broker_id->second, 0, int_max))
    throw usage_error("--config node.id and broker.id differ (they name the same id)");
  if (s.node.groups.group_min_session_timeout > s.node.groups.group_max_session_timeout)
    throw usage_error("--config group.min.session.timeout.ms is above group.max.session.timeout.ms");
  return s;
}

std::string serve_config_help() {
  std::string out;
  for (const auto& k : keys) out += fmt::format("  {:<36} {}\n", k.name, k.help);
  return out;
}

void add_config_pairs(config_map& into, const std::vector<std::string>& pairs) {
  config_map given;
  for (const auto& kv : pairs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw usage_error(fmt::format("--config expects key=value, got '{}'", kv));
    std::string key = kv.substr(0, eq);
    if (!given.emplace(key, kv.substr(eq + 1)).second) throw usage_error(fmt::format("--config {} given twice", key));
  }
  for (auto& [k, v] : given) into[k] = v;
}

config_map read_config_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw usage_error(fmt::format("--config-file {}: cannot be read", file.string()));
  config_map out;
  std::string line;
  for (std::size_t lineno = 1; std::getline(in, line); ++lineno) {
    const std::string_view l = trim(line);
    if (l.empty() || l.front() == '#' || l.front() == '!') continue;
    const auto eq = l.find('=');
    if (eq == std::string_view::npos || trim(l.substr(0, eq)).empty())
      throw usage_error(fmt::format("--config-file {} line {}: expected key=value", file.string(), lineno));
    out[std::string(trim(l.substr(0, eq)))] = std::string(trim(l.substr(eq + 1)));
  }
  return out;
}

}  // namespace brook::cli

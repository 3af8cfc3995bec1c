// brook topics --data-dir D (--create | --list | --describe | --alter | --delete) ...
//
// Kafka's kafka-topics.sh on a data directory. --list and --describe open it read-only
// (no lock, nothing written), so they work while another process owns it; --create,
// --alter and --delete open it for writing and fail with LOG_DIR_LOCKED meanwhile.
#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/storage/data_dir.hpp>
#include <brook/storage/topic_config.hpp>

#include "commands/commands.hpp"
#include "commands/topic_mode.hpp"

namespace brook::cli {

const command_spec topics_spec{"topics",
                               "--data-dir D --create --topic T [--partitions N] [--config key=value ...]\n"
                               "       brook topics --data-dir D --list\n"
                               "       brook topics --data-dir D --describe [--topic T]\n"
                               "       brook topics --data-dir D --alter --topic T --partitions N\n"
                               "       brook topics --data-dir D --delete --topic T",
                               "Create, list, describe, grow and delete the topics of a data directory.",
                               R"txt(A data directory holds one <topic>-<partition> directory per partition (each a
partition log, as the DIR of produce/consume/verify) and a topic-configs file.
Topic names are 1..249 characters from [a-zA-Z0-9._-], not "." or ".."; any other
name is INVALID_TOPIC_EXCEPTION.

--list and --describe open the directory read-only: no lock, nothing written, so they
work while another process has it open. --create, --alter and --delete open it for
writing and fail with LOG_DIR_LOCKED while another process holds its lock (naming
the broker's address when that process is `brook serve`: use a Kafka client then).

Actions (exactly one):
  --create      create topic --topic with --partitions N (default 1, Kafka's
                num.partitions) and the given --config overrides; creates the data
                directory if missing. Prints "Created topic T.". An existing topic
                is TOPIC_ALREADY_EXISTS.
  --list        print the topic names, one per line, sorted
  --describe    per topic (all, or only --topic): a line with its name, topic id (as
                kafka-topics prints it), partition count and config overrides, then a
                table with one row per partition: log start offset, log end offset,
                high watermark, size in bytes, segment count
  --alter       grow topic --topic to --partitions N partitions (N must be larger than
                the current count; partitions are never removed, as in Kafka)
  --delete      delete topic --topic and all its records

Options:
  --data-dir D         the data directory (required)
  --topic T            the topic
  --partitions N       --create: partition count; --alter: the new, larger count
  --config key=value   --create, may be repeated: a topic config override, one of
                       segment.bytes, segment.ms, segment.index.bytes,
                       index.interval.bytes, max.message.bytes, retention.ms,
                       retention.bytes, flush.messages, flush.ms,
                       message.timestamp.type (CreateTime|LogAppendTime),
                       message.timestamp.before.max.ms, message.timestamp.after.max.ms,
                       cleanup.policy, delete.retention.ms,
                       min.cleanable.dirty.ratio, min.compaction.lag.ms; an unknown key
                       or a bad value is INVALID_CONFIG
  -h, --help           this help

Commands that write the data directory (topics --create/--alter/--delete, produce,
consume --group, groups --reset-offsets) apply retention.ms/retention.bytes,
segment.ms, flush.ms and compaction once before they exit.

Exit: 0 ok, 1 error (one line on stderr: "brook: CODE: ..."), 2 usage error.)txt",
                               {{"--data-dir", true},
                                {"--create", false},
                                {"--list", false},
                                {"--describe", false},
                                {"--alter", false},
                                {"--delete", false},
                                {"--topic", true},
                                {"--partitions", true},
                                {"--config", true, true}},
                               0,
                               0};

namespace {

/// --config values as topic_config overrides. Usage errors for a malformed pair or a key
/// given twice; unknown keys and bad values are left to topic_config (INVALID_CONFIG).
std::map<std::string, std::string> parse_configs(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const auto& kv : pairs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw usage_error(fmt::format("--config expects key=value, got '{}'", kv));
    std::string key = kv.substr(0, eq);
    if (!out.emplace(key, kv.substr(eq + 1)).second) throw usage_error(fmt::format("--config {} given twice", key));
  }
  return out;
}

std::int32_t parse_partitions(const parsed_args& args) {
  // The range is the type's; the library decides what is valid (INVALID_PARTITIONS).
  return static_cast<std::int32_t>(parse_int("--partitions", *args.get("--partitions"),
                                             std::numeric_limits<std::int32_t>::min(),
                                             std::numeric_limits<std::int32_t>::max()));
}

/// "retention.ms=1000,segment.bytes=1048576", as kafka-topics --describe prints configs.
std::string configs_text(const topic_config& tc) {
  std::string out;
  for (const auto& [k, v] : tc.overrides) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", k, v);
  }
  return out;
}

/// One topic for --describe: a header line, then an aligned table of its partitions.
std::string describe_text(const topic_description& d) {
  std::string out = fmt::format("Topic: {}\tTopicId: {}\tPartitionCount: {}\tConfigs: {}\n", d.name,
                                d.topic_id.to_string(), d.config.partitions, configs_text(d.config));
  constexpr std::size_t columns = 6;
  const std::array<std::string, columns> head{"Partition",     "LogStartOffset", "LogEndOffset",
                                              "HighWatermark", "SizeBytes",      "Segments"};
  std::vector<std::array<std::string, columns>> rows{head};
  for (const auto& p : d.partitions)
    rows.push_back({std::to_string(p.id.value()), std::to_string(p.log_start.value()),
                    std::to_string(p.log_end.value()), std::to_string(p.high_watermark.value()),
                    std::to_string(p.size_bytes), std::to_string(p.segments)});
  std::array<std::size_t, columns> width{};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < columns; ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    std::string line = "  ";
    for (std::size_t c = 0; c < columns; ++c) {
      // Numbers right-aligned under their heading, two spaces between columns.
      line += c == 0 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("  {:>{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

int create(const parsed_args& args, const fs::path& data, const std::string& topic) {
  topic_config tc;
  if (args.has("--partitions")) tc.partitions = parse_partitions(args);
  tc.overrides = parse_configs(args.get_all("--config"));
  // Checked before opening, so a bad name neither creates the directory nor waits for the lock.
  if (auto v = validate_topic_name(topic); !v) return fail(v.error());
  auto dd = open_data_dir(data, /*read_only=*/false, /*create=*/true);
  if (!dd) return fail(dd.error());
  auto r = (*dd)->create_topic(topic, tc);
  auto c = housekeep_and_close(**dd);
  if (!r) return fail(r.error());
  if (!c) return fail(c.error());
  fmt::print("Created topic {}.\n", topic);
  return exit_ok;
}

int alter(const parsed_args& args, const fs::path& data, const std::string& topic) {
  const std::int32_t total = parse_partitions(args);
  if (auto v = validate_topic_name(topic); !v) return fail(v.error());
  auto dd = open_data_dir(data, /*read_only=*/false);
  if (!dd) return fail(dd.error());
  auto r = (*dd)->create_partitions(topic, total);
  auto c = housekeep_and_close(**dd);
  if (!r) return fail(r.error());
  if (!c) return fail(c.error());
  fmt::print("Topic {} now has {} partitions.\n", topic, total);
  return exit_ok;
}

int remove(const fs::path& data, const std::string& topic) {
  if (auto v = validate_topic_name(topic); !v) return fail(v.error());
  auto dd = open_data_dir(data, /*read_only=*/false);
  if (!dd) return fail(dd.error());
  auto r = (*dd)->delete_topic(topic);
  auto c = housekeep_and_close(**dd);
  if (!r) return fail(r.error());
  if (!c) return fail(c.error());
  fmt::print("Deleted topic {}.\n", topic);
  return exit_ok;
}

int list(const fs::path& data) {
  auto dd = open_data_dir(data, /*read_only=*/true);
  if (!dd) return fail(dd.error());
  std::string out;
  for (const auto& t : (*dd)->list_topics()) out += t + '\n';  // list_topics is sorted (a std::map)
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_ok;
}

int describe(const fs::path& data, const std::optional<std::string>& topic) {
  if (topic)
    if (auto v = validate_topic_name(*topic); !v) return fail(v.error());
  auto dd = open_data_dir(data, /*read_only=*/true);
  if (!dd) return fail(dd.error());
  const std::vector<std::string> names = topic ? std::vector<std::string>{*topic} : (*dd)->list_topics();
  std::string out;
  for (const auto& name : names) {
    auto d = (*dd)->describe_topic(name);
    if (!d) return fail(brook::error(d.error().code(), fmt::format("{}: {}", data.string(), d.error().message())));
    if (!out.empty()) out += '\n';
    out += describe_text(*d);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_ok;
}

}  // namespace

int run_topics(const parsed_args& args) {
  const std::array<std::string_view, 5> actions{"--create", "--list", "--describe", "--alter", "--delete"};
  std::vector<std::string_view> given;
  for (auto a : actions)
    if (args.has(a)) given.push_back(a);
  if (given.size() != 1)
    throw usage_error(given.empty() ? "give one of --create, --list, --describe, --alter, --delete"
                                    : fmt::format("{} and {} exclude each other", given[0], given[1]));
  const std::string_view action = given[0];
  if (!args.has("--data-dir")) throw usage_error("missing --data-dir D");
  const fs::path data = *args.get("--data-dir");
  const auto topic = args.get("--topic");
  const bool needs_topic = action == "--create" || action == "--alter" || action == "--delete";
  if (needs_topic && !topic) throw usage_error(fmt::format("{} needs --topic T", action));
  if (action == "--list" && topic) throw usage_error("--list takes no --topic (use --describe --topic T)");
  if (args.has("--partitions") && action != "--create" && action != "--alter")
    throw usage_error("--partitions is for --create and --alter");
  if (action == "--alter" && !args.has("--partitions")) throw usage_error("--alter needs --partitions N");
  if (args.has("--config") && action != "--create") throw usage_error("--config is for --create");

  if (action == "--create") return create(args, data, *topic);
  if (action == "--alter") return alter(args, data, *topic);
  if (action == "--delete") return remove(data, *topic);
  if (action == "--list") return list(data);
  return describe(data, topic);
}

}  // namespace brook::cli

// brook groups --data-dir D (--list | --describe --group G | --reset-offsets --group G ...)
//
// Kafka's kafka-consumer-groups.sh on a data directory. The group coordinator lives in the
// process that owns the directory, so --list and --describe read what it stored in
// __consumer_offsets through a read-only data_dir (no lock, nothing written) and tell
// whether a process owns the directory (then the stored state is its last word; otherwise
// no group can have active members). --reset-offsets works only on an idle directory: with
// --execute it opens it for writing and sets the offsets through the coordinator; without,
// it reads the directory read-only and only prints the plan.
#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/group/consumer_protocol.hpp>
#include <brook/group/group_coordinator.hpp>

#include "commands/commands.hpp"
#include "commands/group_mode.hpp"
#include "commands/serve_address.hpp"
#include "commands/topic_mode.hpp"

namespace brook::cli {

const command_spec groups_spec{
    "groups",
    "--data-dir D --list\n"
    "       brook groups --data-dir D --describe --group G\n"
    "       brook groups --data-dir D --reset-offsets --group G --topic T\n"
    "                    (--to-earliest | --to-latest | --to-offset N | --to-datetime T)\n"
    "                    [--dry-run | --execute]",
    "List and describe consumer groups, and reset their offsets.",
    R"txt(Kafka's kafka-consumer-groups.sh on a data directory. A group's coordinator lives in
the process that owns the directory (has it open for writing, e.g. consume --group),
and keeps the groups' committed offsets and metadata in the internal topic
__consumer_offsets, as Kafka does.

--list and --describe read that topic read-only: no lock, nothing written, so they
work while a process owns the directory. The state they show is then what that
process last stored (a group's metadata is stored when a rebalance completes and when
the group becomes empty): a group stored with members is shown as Stable, "as last
stored by the running process". On an idle directory (no process owns it) no group
can have active members: every group is Empty. Whether a process owns the directory
is read from /proc/locks (the flock on D/.lock); the tool never takes that lock
except for --reset-offsets --execute, so it never makes a starting process fail.

Actions (exactly one):
  --list           one line per group, sorted: its name and state
  --describe       --group G: a line with its state, protocol type, protocol
                   (assignor), generation and member count; its members (consumer
                   id, client id, assigned partitions), or a line saying it has no
                   active members; then one row per partition it committed or is
                   assigned: GROUP TOPIC PARTITION CURRENT-OFFSET (the committed
                   offset, - if none) LOG-END-OFFSET (the high watermark) LAG
                   CONSUMER-ID (- if unassigned). An unknown group is
                   GROUP_ID_NOT_FOUND.
  --reset-offsets  --group G --topic T and one --to-* option: sets the group's
                   committed offset of every partition of T. Prints the plan, one
                   row per partition: GROUP TOPIC PARTITION NEW-OFFSET. Only with
                   --execute are the offsets written; otherwise (--dry-run, the
                   default) nothing is, and it says so. As in Kafka, only a group
                   without active members can be reset: while a running process
                   owns the directory the tool cannot know the group's members, so
                   it refuses (LOG_DIR_LOCKED, dry run included); stop that process
                   first. A group that does not exist yet is created with the new
                   offsets, as Kafka does.

Reset targets (exactly one):
  --to-earliest    the partition's log start offset
  --to-latest      its log end (high watermark)
  --to-offset N    N, clamped into [log start, log end] (a note on stderr says so)
  --to-datetime T  the first offset whose record timestamp is at or after T; the log
                   end when there is none. T is Kafka's YYYY-MM-DDTHH:mm:SS.sss (the
                   .sss may be left out), optionally followed by Z or an offset
                   +hh:mm / -hh:mm. Without one T is UTC (Kafka's tool would use the
                   local time zone).

Options:
  --data-dir D     the data directory (required)
  --group G        the group
  --topic T        --reset-offsets: the topic whose offsets are reset
  --dry-run        --reset-offsets: only print the plan (the default)
  --execute        --reset-offsets: write the new offsets
  -h, --help       this help

Exit: 0 ok, 1 error (one line on stderr: "brook: CODE: ..."), 2 usage error.)txt",
    {{"--data-dir", true},
     {"--list", false},
     {"--describe", false},
     {"--reset-offsets", false},
     {"--group", true},
     {"--topic", true},
     {"--to-earliest", false},
     {"--to-latest", false},
     {"--to-offset", true},
     {"--to-datetime", true},
     {"--dry-run", false},
     {"--execute", false}},
    0,
    0};

namespace {

constexpr std::array<std::string_view, 4> reset_targets{"--to-earliest", "--to-latest", "--to-offset", "--to-datetime"};

// ------------------------------------------------------------------ --list

int list(const fs::path& data) {
  auto sg = load_stored_groups(data);
  if (!sg) return fail(sg.error());
  std::vector<std::vector<std::string>> rows;
  for (const auto& [id, g] : sg->groups) rows.push_back({id, view_of(g, sg->in_use).state});
  const std::string out = table_text(rows);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  if (sg->in_use && !rows.empty())
    fmt::print(stderr, "note: a running process owns {}: states are as it last stored them\n", data.string());
  return exit_ok;
}

// ------------------------------------------------------------------ --describe

/// "orders(0,1,2),audit(0)", as kafka-consumer-groups --members --verbose prints it.
std::string assignment_text(const std::vector<topic_partition>& tps) {
  std::map<std::string, std::vector<std::int32_t>> by_topic;
  for (const auto& tp : tps) by_topic[tp.topic].push_back(tp.partition.value());
  std::string out;
  for (auto& [t, ps] : by_topic) {
    std::sort(ps.begin(), ps.end());
    if (!out.empty()) out += ',';
    out += fmt::format("{}({})", t, fmt::join(ps, ","));
  }
  return out.empty() ? "-" : out;
}

int describe(const fs::path& data, const std::string& group) {
  auto sg = load_stored_groups(data);
  if (!sg) return fail(sg.error());
  auto it = sg->groups.find(group);
  if (it == sg->groups.end())
    return fail(make_error(errc::group_id_not_found, "{}: consumer group '{}' does not exist", data.string(), group));
  const stored_group& g = it->second;
  const group_view v = view_of(g, sg->in_use);
  const group_metadata_value md = g.metadata.value_or(group_metadata_value{});
  const bool consumer_protocol = md.protocol_type == consumer_protocol_type;

  std::string out = fmt::format("Group: {}\tState: {}\tProtocolType: {}\tProtocol: {}\tGeneration: {}\tMembers: {}\n",
                                group, v.state, md.protocol_type.empty() ? "-" : md.protocol_type,
                                md.protocol.value_or("-"), md.generation, v.has_members ? md.members.size() : 0);

  std::map<topic_partition, std::string> owner;  // partition -> consumer id
  if (v.has_members) {
    out += fmt::format("(as last stored by the running process that owns {})\n\n", data.string());
    std::vector<std::vector<std::string>> rows{{"CONSUMER-ID", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"}};
    for (const auto& m : md.members) {
      std::string count = "-", text = "-";
      if (consumer_protocol) {
        if (auto a = decode_assignment(m.assignment); a) {
          for (const auto& tp : *a) owner[tp] = m.member_id;
          count = std::to_string(a->size());
          text = assignment_text(*a);
        }
      }
      rows.push_back({m.member_id, m.client_id, count, text});
    }
    out += table_text(rows);
  } else if (sg->in_use) {
    out +=
        fmt::format("Consumer group '{}' has no active members (as last stored by the running process that owns {}).\n",
                    group, data.string());
  } else {
    out += fmt::format(
        "Consumer group '{}' has no active members: no running process owns {}{}.\n", group, data.string(),
        v.stale_members > 0 ? fmt::format(" (the {} member(s) its last owner stored are gone)", v.stale_members) : "");
  }

  std::set<topic_partition> tps;
  for (const auto& [tp, _] : g.offsets) tps.insert(tp);
  for (const auto& [tp, _] : owner) tps.insert(tp);
  out += '\n';
  if (tps.empty()) {
    out += fmt::format("Consumer group '{}' has no committed offsets.\n", group);
  } else {
    std::vector<std::vector<std::string>> rows{
        {"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID"}};
    for (const auto& tp : tps) {
      std::optional<std::int64_t> committed, end;
      if (auto c = g.offsets.find(tp); c != g.offsets.end()) committed = c->second.off.value();
      if (auto part = sg->dd->get_partition(tp.topic, tp.partition); part) end = (*part)->high_watermark().value();
      std::string lag = "-";
      if (committed && end) lag = std::to_string(std::max<std::int64_t>(0, *end - *committed));
      auto o = owner.find(tp);
      rows.push_back({group, tp.topic, std::to_string(tp.partition.value()),
                      committed ? std::to_string(*committed) : "-", end ? std::to_string(*end) : "-", lag,
                      o == owner.end() ? "-" : o->second});
    }
    out += table_text(rows);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_ok;
}

// ------------------------------------------------------------------ --reset-offsets

struct reset_target {
  std::string_view kind;   ///< one of reset_targets
  std::int64_t value = 0;  ///< --to-offset N, --to-datetime as ms since the epoch
};

reset_target parse_target(const parsed_args& args) {
  std::vector<std::string_view> given;
  for (auto t : reset_targets)
    if (args.has(t)) given.push_back(t);
  if (given.size() != 1)
    throw usage_error(given.empty() ? "--reset-offsets needs one of --to-earliest, --to-latest, --to-offset N, "
                                      "--to-datetime T"
                                    : fmt::format("{} and {} exclude each other", given[0], given[1]));
  reset_target t{given[0]};
  if (t.kind == "--to-offset") {
    t.value = parse_int("--to-offset", *args.get("--to-offset"), 0, std::numeric_limits<std::int64_t>::max());
  } else if (t.kind == "--to-datetime") {
    const std::string text = *args.get("--to-datetime");
    auto ms = parse_datetime(text);
    if (!ms)
      throw usage_error(fmt::format(
          "--to-datetime expects YYYY-MM-DDTHH:mm:SS.sss with an optional Z or +hh:mm/-hh:mm, got '{}'", text));
    t.value = *ms;
  }
  return t;
}

/// The new offset of every partition of `topic`. Notes about clamped offsets go to stderr.
result<std::map<topic_partition, offset>> plan(const data_dir& dd, const std::string& topic, const reset_target& t) {
  auto count = topic_partitions(dd, topic);
  if (!count) return count.error();
  std::map<topic_partition, offset> out;
  for (std::int32_t p = 0; p < *count; ++p) {
    auto part = dd.get_partition(topic, partition_id(p));
    if (!part) return part.error();
    const partition& pt = **part;
    const offset start = pt.log_start_offset(), end = pt.high_watermark();
    offset target = end;
    if (t.kind == "--to-earliest") {
      target = start;
    } else if (t.kind == "--to-offset") {
      target = offset(t.value);
      if (target < start) {
        fmt::print(stderr, "note: {}-{}: new offset {} is below the log start offset; it is set to {}\n", topic, p,
                   t.value, start);
        target = start;
      } else if (target > end) {
        fmt::print(stderr, "note: {}-{}: new offset {} is past the log end offset; it is set to {}\n", topic, p,
                   t.value, end);
        target = end;
      }
    } else if (t.kind == "--to-datetime") {
      auto found = pt.log().offset_for_timestamp(t.value, end);
      if (!found) return found.error();
      if (*found) target = (*found)->off;
    }
    out[{topic, partition_id(p)}] = target;
  }
  return out;
}

std::string plan_text(const std::string& group, const std::map<topic_partition, offset>& p) {
  std::vector<std::vector<std::string>> rows{{"GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"}};
  for (const auto& [tp, o] : p)
    rows.push_back({group, tp.topic, std::to_string(tp.partition.value()), std::to_string(o.value())});
  return table_text(rows);
}

brook::error in_use_error(const fs::path& data, const std::string& group) {
  return with_serve_hint(
      make_error(errc::log_dir_locked,
                 "{}: a running process owns the data directory, so consumer group '{}' may have active members "
                 "there (this tool cannot see them); offsets can be reset only while the group has none. Stop "
                 "the process that owns the directory, then retry",
                 data.string(), group),
      data);
}

int reset_dry_run(const fs::path& data, const std::string& group, const std::string& topic, const reset_target& t) {
  auto in_use = dir_in_use(data);
  if (!in_use) return fail(in_use.error());
  if (*in_use) return fail(in_use_error(data, group));
  auto dd = open_data_dir(data, /*read_only=*/true);
  if (!dd) return fail(dd.error());
  auto p = plan(**dd, topic, t);
  if (!p) return fail(p.error());
  auto store = offset_store::open(**dd);
  if (!store) return fail(store.error());
  auto groups = (*store)->load();
  if (!groups) return fail(groups.error());
  std::string out = plan_text(group, *p);
  out += "\nNo action was performed (dry run): add --execute to reset the offsets.\n";
  if (!groups->count(group))
    out += fmt::format("Consumer group '{}' does not exist yet: --execute creates it with these offsets.\n", group);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_ok;
}

int reset_execute(const fs::path& data, const std::string& group, const std::string& topic, const reset_target& t) {
  auto ddr = open_data_dir(data, /*read_only=*/false);
  if (!ddr) return fail(ddr.error() == errc::log_dir_locked ? in_use_error(data, group) : ddr.error());
  std::unique_ptr<data_dir> dd = std::move(*ddr);
  auto p = plan(*dd, topic, t);
  if (!p) return fail(p.error());
  auto opened = group_coordinator::open(*dd);
  if (!opened) return fail(opened.error());
  std::unique_ptr<group_coordinator> coord = std::move(*opened);
  const bool existed = static_cast<bool>(coord->describe_group(group));
  std::map<topic_partition, offset_and_metadata> offsets;
  for (const auto& [tp, o] : *p) offsets[tp] = offset_and_metadata{o, -1, {}};
  auto r = coord->alter_offsets(group, offsets);
  coord.reset();
  auto c = housekeep_and_close(*dd);
  if (!r) return fail(r.error());  // non_empty_group names the members the coordinator knows
  if (!c) return fail(c.error());
  std::string out = plan_text(group, *p);
  if (!existed) out += fmt::format("\nConsumer group '{}' did not exist: it was created with these offsets.\n", group);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return exit_ok;
}

}  // namespace

int run_groups(const parsed_args& args) {
  const std::array<std::string_view, 3> actions{"--list", "--describe", "--reset-offsets"};
  std::vector<std::string_view> given;
  for (auto a : actions)
    if (args.has(a)) given.push_back(a);
  if (given.size() != 1)
    throw usage_error(given.empty() ? "give one of --list, --describe, --reset-offsets"
                                    : fmt::format("{} and {} exclude each other", given[0], given[1]));
  const std::string_view action = given[0];
  if (!args.has("--data-dir")) throw usage_error("missing --data-dir D");
  const fs::path data = *args.get("--data-dir");
  const auto group = args.get("--group");
  const auto topic = args.get("--topic");
  if (action == "--list" && group) throw usage_error("--list takes no --group (use --describe --group G)");
  if (action != "--list" && !group) throw usage_error(fmt::format("{} needs --group G", action));
  if (group && group->empty()) throw usage_error("--group needs a non-empty group id");
  if (action != "--reset-offsets") {
    for (std::string_view f :
         {"--topic", "--to-earliest", "--to-latest", "--to-offset", "--to-datetime", "--dry-run", "--execute"})
      if (args.has(f)) throw usage_error(fmt::format("{} is for --reset-offsets", f));
  }
  if (action == "--list") return list(data);
  if (action == "--describe") return describe(data, *group);

  if (!topic) throw usage_error("--reset-offsets needs --topic T");
  if (args.has("--dry-run") && args.has("--execute")) throw usage_error("--dry-run and --execute exclude each other");
  const reset_target t = parse_target(args);
  if (auto v = validate_topic_name(*topic); !v) return fail(v.error());
  return args.has("--execute") ? reset_execute(data, *group, *topic, t) : reset_dry_run(data, *group, *topic, t);
}

}  // namespace brook::cli

// brook consume --data-dir D --topic T --group G [--from-beginning] [--max-records N]
//               [--follow] [--json] [--print-key]
//
// Consumes as a member of consumer group G through brook::group_consumer, as
// kafka-console-consumer --group does. The group coordinator lives in the process that
// owns the data directory, so this opens it for writing (LOG_DIR_LOCKED when a running
// process owns it) and runs the coordinator itself. Offsets are committed once, on exit,
// explicitly: per partition the offset after the last record printed (or, where none was
// printed, where the partition started), so the group's progress is exactly what was
// shown, whatever the consumer fetched beyond it.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/group/group_consumer.hpp>
#include <brook/group/group_coordinator.hpp>

#include "commands/commands.hpp"
#include "commands/serve_address.hpp"
#include "commands/topic_mode.hpp"

namespace brook::cli {

namespace {

using namespace std::chrono_literals;

/// How long one poll waits for records: also how quickly a signal is noticed.
constexpr auto poll_timeout = 200ms;
/// A lone member is assigned every partition in its first poll; if the group still has
/// given this member nothing after this long, something is wrong: fail rather than hang.
constexpr auto assignment_timeout = 30s;
/// max.poll.records (Kafka's default), lowered to --max-records.
constexpr std::uint64_t poll_records = 500;

volatile std::sig_atomic_t stop_requested = 0;
extern "C" void on_stop_signal(int) { stop_requested = 1; }

/// SIGINT and SIGTERM set stop_requested (no SA_RESTART: waits end early).
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

/// True once the member has an assignment and its position is at the end (high
/// watermark) of every assigned partition.
result<bool> at_end(group_consumer& c) {
  const auto tps = c.assignment();
  if (tps.empty()) return false;
  auto ends = c.end_offsets(tps);
  if (!ends) return ends.error();
  for (const auto& tp : tps) {
    auto pos = c.position(tp);
    if (!pos) return pos.error();
    if (*pos < ends->at(tp)) return false;
  }
  return true;
}

}  // namespace

int run_consume_group(const parsed_args& args) {
  if (args.has("--partition") || args.has("--offset"))
    throw usage_error("--partition and --offset are not for --group: the group assigns the partitions");
  const std::string group = *args.get("--group");
  if (group.empty()) throw usage_error("--group needs a non-empty group id");
  const fs::path data = *args.get("--data-dir");
  const std::string topic = *args.get("--topic");
  const bool json = args.has("--json");
  const bool print_key = args.has("--print-key");
  const bool follow = args.has("--follow");
  if (json && print_key) throw usage_error("--print-key is for plain output; --json always has the key");
  std::uint64_t max_records = std::numeric_limits<std::uint64_t>::max();
  if (auto v = args.get("--max-records"))
    max_records =
        static_cast<std::uint64_t>(parse_int("--max-records", *v, 0, std::numeric_limits<std::int64_t>::max()));
  if (auto v = validate_topic_name(topic); !v) return fail(v.error());

  auto ddr = open_data_dir(data, /*read_only=*/false);
  if (!ddr) {
    if (ddr.error() == errc::log_dir_locked)
      return fail(with_serve_hint(
          make_error(errc::log_dir_locked,
                     "{}: a running process owns the data directory (its .lock is held). consume --group "
                     "needs the directory for itself, because a group's coordinator lives in the process "
                     "that owns it; consume without --group reads it read-only",
                     data.string()),
          data));
    return fail(ddr.error());
  }
  std::unique_ptr<data_dir> dd = std::move(*ddr);
  if (auto n = topic_partitions(*dd, topic); !n) return fail(n.error());

  coordinator_config ccfg;
  ccfg.group_initial_rebalance_delay = 0ms;  // a lone CLI member need not wait for others
  auto opened = group_coordinator::open(*dd, ccfg);
  if (!opened) return fail(opened.error());
  std::unique_ptr<group_coordinator> coord = std::move(*opened);
  coord->start();  // runs the coordinator's timers (sessions, rebalance deadlines)

  group_consumer_config gcfg;
  gcfg.group_id = group;
  gcfg.client_id = "brook-consume";
  gcfg.enable_auto_commit = false;  // committed once, explicitly, on exit
  gcfg.consumer.auto_offset_reset = args.has("--from-beginning") ? offset_reset::earliest : offset_reset::latest;
  gcfg.consumer.max_poll_records = static_cast<std::size_t>(std::clamp<std::uint64_t>(max_records, 1, poll_records));

  result<void> outcome = ok();
  std::uint64_t printed = 0;
  std::map<topic_partition, offset_and_metadata> to_commit;  // where each partition stopped
  {
    group_consumer consumer(*dd, *coord, gcfg);
    outcome = consumer.subscribe({topic});
    install_stop_handlers();
    const auto started = std::chrono::steady_clock::now();
    std::string line;
    while (outcome && printed < max_records && !stop_requested) {
      auto records = consumer.poll(poll_timeout);
      if (!records) {
        outcome = records.error();
        break;
      }
      line.clear();
      for (const consumer_record& r : *records) {
        topic_partition tp{r.topic(), r.partition()};
        if (printed >= max_records) {
          // Fetched but not printed: the partition stops before it (unless it already
          // stopped after an earlier printed record, which is the same place or earlier).
          to_commit.try_emplace(std::move(tp), offset_and_metadata{r.offset(), -1, {}});
          continue;
        }
        ++printed;
        append_record_line(line, r, json, print_key);
        to_commit[std::move(tp)] = offset_and_metadata{r.offset() + 1, -1, {}};
      }
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fflush(stdout);
      // A partition that has given no record yet stays where it started: its committed
      // offset, or where auto.offset.reset put it. Committing that lets the next run go
      // on from there too (kafka-console-consumer's auto-commit does the same).
      for (const auto& tp : consumer.assignment()) {
        if (to_commit.count(tp)) continue;
        auto pos = consumer.position(tp);
        if (!pos) {
          outcome = pos.error();
          break;
        }
        to_commit[tp] = offset_and_metadata{*pos, -1, {}};
      }
      if (!outcome) break;
      if (follow) continue;
      auto end = at_end(consumer);
      if (!end) {
        outcome = end.error();
      } else if (*end) {
        break;
      } else if (consumer.assignment().empty() && std::chrono::steady_clock::now() - started > assignment_timeout) {
        outcome = make_error(errc::timeout, "group '{}' assigned this member no partition of '{}' within {} s", group,
                             topic, std::chrono::duration_cast<std::chrono::seconds>(assignment_timeout).count());
      }
    }
    // Commit what was printed, even after an error or a signal, then leave the group.
    if (!to_commit.empty()) {
      if (auto c = consumer.commit_sync(to_commit); !c) {
        if (outcome)
          outcome = brook::error(c.error().code(),
                                 fmt::format("committing the offsets of group '{}': {}", group, c.error().message()));
      }
    }
    if (auto c = consumer.close(); !c && outcome) outcome = c.error();
  }
  coord->stop();
  coord.reset();
  if (auto c = housekeep_and_close(*dd); !c && outcome) outcome = c.error();
  if (!outcome) return fail(outcome.error());
  return exit_ok;
}

}  // namespace brook::cli

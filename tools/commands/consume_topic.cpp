// brook consume --data-dir D --topic T [--from-beginning | --partition P [--offset O]]
//               [--max-records N] [--follow] [--json] [--print-key]
//
// Reads through brook::consumer with manual assignment on a read-only data_dir, so it
// takes no lock and works next to a producing process. A read-only data_dir is a snapshot:
// its high watermarks are the log ends at open. Reading stops once every position reached
// its high watermark; --follow then waits for the topic's files to change, re-opens the
// data directory read-only and carries on from the same positions with a new consumer.
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <brook/client/consumer.hpp>

#include "commands/commands.hpp"
#include "commands/log_file.hpp"
#include "commands/topic_mode.hpp"

namespace brook::cli {

namespace {

/// How often --follow looks for new data once it has reached the end of every partition.
constexpr auto follow_poll_interval = std::chrono::milliseconds(150);
/// Consecutive failed re-opens --follow tolerates (a writer may be creating, growing or
/// rolling; a deleted topic fails after this many).
constexpr int follow_reopen_attempts = 20;
/// max.poll.records of the consumer (Kafka's default), lowered to what --max-records leaves.
constexpr std::uint64_t poll_records = 500;

struct options {
  fs::path data;
  std::string topic;
  bool json = false;
  bool print_key = false;
  bool follow = false;
  bool from_beginning = false;
  std::optional<std::int32_t> partition;
  std::optional<std::int64_t> start_offset;
  std::uint64_t max_records = std::numeric_limits<std::uint64_t>::max();
};

options parse(const parsed_args& args) {
  options o;
  o.data = *args.get("--data-dir");
  o.topic = *args.get("--topic");
  o.json = args.has("--json");
  o.print_key = args.has("--print-key");
  o.follow = args.has("--follow");
  o.from_beginning = args.has("--from-beginning");
  if (o.json && o.print_key) throw usage_error("--print-key is for plain output; --json always has the key");
  if (auto v = args.get("--partition"))
    o.partition = static_cast<std::int32_t>(parse_int("--partition", *v, 0, std::numeric_limits<std::int32_t>::max()));
  if (auto v = args.get("--offset")) {
    if (!o.partition) throw usage_error("--offset needs --partition P");
    if (o.from_beginning) throw usage_error("--offset and --from-beginning exclude each other");
    o.start_offset = parse_int("--offset", *v, 0, std::numeric_limits<std::int64_t>::max());
  }
  if (auto v = args.get("--max-records"))
    o.max_records =
        static_cast<std::uint64_t>(parse_int("--max-records", *v, 0, std::numeric_limits<std::int64_t>::max()));
  return o;
}

/// The partition, or an error naming the topic.
result<std::shared_ptr<partition>> partition_of(const data_dir& dd, const std::string& topic, std::int32_t p) {
  auto part = dd.get_partition(topic, partition_id(p));
  if (!part)
    return brook::error(part.error().code(), fmt::format("{}: {}", dd.path().string(), part.error().message()));
  return part;
}

/// Where each partition starts (partition number -> offset), from the command line.
result<std::map<std::int32_t, offset>> start_positions(const data_dir& dd, const options& o, std::int32_t count) {
  std::map<std::int32_t, offset> next;
  if (o.partition && *o.partition >= count)
    return make_error(errc::unknown_topic_or_partition, "{}: topic '{}' has {} partition(s); there is no partition {}",
                      dd.path().string(), o.topic, count, *o.partition);
  for (std::int32_t p = 0; p < count; ++p) {
    if (o.partition && p != *o.partition) continue;
    auto part = partition_of(dd, o.topic, p);
    if (!part) return part.error();
    const partition& pt = **part;
    if (o.start_offset) {
      const offset at(*o.start_offset);
      if (at < pt.log_start_offset() || at > pt.high_watermark())
        return make_error(errc::offset_out_of_range, "{}-{}: offset {} is outside [{}, {}] (log start, high watermark)",
                          o.topic, p, at, pt.log_start_offset(), pt.high_watermark());
      next[p] = at;
    } else {
      next[p] = o.from_beginning ? pt.log_start_offset() : pt.high_watermark();
    }
  }
  return next;
}

/// After a re-open: adds partitions the topic gained (from their log start) and checks that
/// every position is still inside its partition.
result<void> revalidate(const data_dir& dd, const options& o, std::map<std::int32_t, offset>& next) {
  auto count = topic_partitions(dd, o.topic);
  if (!count) return count.error();
  if (!o.partition)
    for (std::int32_t p = 0; p < *count; ++p)
      if (!next.count(p)) {
        auto part = partition_of(dd, o.topic, p);
        if (!part) return part.error();
        next[p] = (*part)->log_start_offset();
      }
  for (const auto& [p, at] : next) {
    auto part = partition_of(dd, o.topic, p);
    if (!part) return part.error();
    const partition& pt = **part;
    if (at > pt.high_watermark())
      return make_error(errc::offset_out_of_range,
                        "{}-{}: the high watermark is now {}, below the next offset {} (the log was truncated)",
                        o.topic, p, pt.high_watermark(), at);
    if (at < pt.log_start_offset())
      return make_error(errc::offset_out_of_range,
                        "{}-{}: the log start is now {}, past the next offset {} (retention deleted records)", o.topic,
                        p, pt.log_start_offset(), at);
  }
  return ok();
}

/// Prints records from every position in `next` up to the high watermarks of `dd` (at
/// most o.max_records in all, counting `printed`), advancing the positions.
result<void> drain(data_dir& dd, const options& o, std::map<std::int32_t, offset>& next, std::uint64_t& printed) {
  consumer_config cc;
  cc.auto_offset_reset = offset_reset::none;  // a position outside the log is an error, never a silent skip
  cc.max_poll_records = static_cast<std::size_t>(std::min(poll_records, o.max_records - printed));
  if (cc.max_poll_records == 0) return ok();
  consumer c(dd, cc);
  std::vector<topic_partition> tps;
  for (const auto& [p, _] : next) tps.push_back({o.topic, partition_id(p)});
  BROOK_TRY(c.assign(tps));
  for (const auto& tp : tps) BROOK_TRY(c.seek(tp, next[tp.partition.value()]));
  auto ends = c.end_offsets(tps);
  if (!ends) return ends.error();

  std::string line;
  while (printed < o.max_records) {
    bool at_end = true;
    for (const auto& tp : tps)
      if (next[tp.partition.value()] < ends->at(tp)) at_end = false;
    if (at_end) break;
    auto records = c.poll(std::chrono::milliseconds(0));
    if (!records) return records.error();
    for (const consumer_record& r : *records) {
      if (printed >= o.max_records) break;
      ++printed;
      line.clear();
      append_record_line(line, r, o.json, o.print_key);
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
    bool moved = false;
    for (const auto& tp : tps) {
      auto pos = c.position(tp);
      if (!pos) return pos.error();
      offset& at = next[tp.partition.value()];
      if (*pos != at) moved = true;
      at = *pos;
    }
    if (!moved) break;  // nothing readable below the high watermarks (cannot happen; never spin)
  }
  return ok();
}

}  // namespace

void announce_following() {
  static bool announced = false;
  if (announced) return;
  announced = true;
  std::fputs("brook consume: reached the end, following (stop with Ctrl-C)\n", stderr);
  std::fflush(stderr);
}

void append_record_line(std::string& line, const consumer_record& r, bool json, bool print_key) {
  if (json) {
    line += record_json(r.view(), r.partition());
  } else {
    if (print_key) {
      line += r.key().is_null() ? std::string_view("null") : r.key().as_string_view();
      line += '\t';
    }
    line += r.value().is_null() ? std::string_view("null") : r.value().as_string_view();
  }
  line += '\n';
}

int run_consume_topic(const parsed_args& args) {
  if (args.has("--group")) return run_consume_group(args);
  const options o = parse(args);
  if (auto v = validate_topic_name(o.topic); !v) return fail(v.error());

  auto seen = topic_fingerprint(o.data, o.topic);
  auto ddr = open_data_dir(o.data, /*read_only=*/true);
  if (!ddr) return fail(ddr.error());
  std::unique_ptr<data_dir> dd = std::move(*ddr);
  auto count = topic_partitions(*dd, o.topic);
  if (!count) return fail(count.error());
  auto started = start_positions(*dd, o, *count);
  if (!started) return fail(started.error());
  std::map<std::int32_t, offset> next = std::move(*started);

  std::uint64_t printed = 0;
  for (;;) {
    auto r = drain(*dd, o, next, printed);
    std::fflush(stdout);
    if (!r) return fail(r.error());
    if (printed < o.max_records)  // issue 11 #22: never end quietly before damage
      for (const auto& [p, at] : next)
        if (auto part = dd->get_partition(o.topic, partition_id(p)); part && (*part)->log().recovery().damaged)
          return fail(make_error(errc::corrupt_message, "{}-{}: stopped at offset {}: the log after it is damaged ({})",
                                 o.topic, p, at, damage_event((*part)->log().recovery())));
    if (printed >= o.max_records || !o.follow) break;
    announce_following();

    // At the end of every partition: wait for the topic's files to change, re-open, go on.
    int failures = 0;
    for (;;) {
      std::this_thread::sleep_for(follow_poll_interval);
      auto now = topic_fingerprint(o.data, o.topic);
      if (now == seen) continue;
      auto reopened = open_data_dir(o.data, /*read_only=*/true);
      result<void> valid = reopened ? revalidate(**reopened, o, next) : result<void>(reopened.error());
      if (!valid) {
        // A writer may be mid-create, mid-roll or mid-delete: try again next tick (the
        // fingerprint still differs), and give up only when it stays broken.
        if (++failures >= follow_reopen_attempts) return fail(valid.error());
        continue;
      }
      seen = std::move(now);
      dd = std::move(*reopened);
      break;
    }
  }
  return exit_ok;
}

}  // namespace brook::cli

// brook consume DIR [--from-offset N] [--max-records N] [--follow] [--json] [--print-key]
// brook consume --data-dir D --topic T ... (the topic form is in consume_topic.cpp)
// brook consume --data-dir D --topic T --group G ... (the group form is in consume_group.cpp)
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <brook/storage/partition_files.hpp>
#include <brook/storage/partition_log.hpp>

#include "commands/cli_codecs.hpp"
#include "commands/commands.hpp"
#include "commands/log_file.hpp"

namespace brook::cli {

namespace {
/// How often --follow looks for new data once it has reached the log end.
constexpr auto follow_poll_interval = std::chrono::milliseconds(150);
/// Consecutive failed re-opens --follow tolerates (a writer may be rolling or recovering).
constexpr int follow_reopen_attempts = 20;
}  // namespace

const command_spec consume_spec{
    "consume",
    "DIR [--from-offset N] [--max-records N] [--follow] [--json] [--print-key]\n"
    "       brook consume --data-dir D --topic T [--from-beginning | --partition P [--offset O]]\n"
    "                     [--max-records N] [--follow] [--json] [--print-key]\n"
    "       brook consume --data-dir D --topic T --group G [--from-beginning]\n"
    "                     [--max-records N] [--follow] [--json] [--print-key]",
    "Print the records of a partition log DIR, or of a topic of a data directory.",
    R"txt(The DIR and topic forms open the log (or the data directory) read-only: no file is
modified, no recovery is written and no lock is taken, so they work next to a process
that is writing (the group form cannot, see below). Control batches are skipped.

DIR form: reads the partition log in DIR from --from-offset (default: the log start
offset) to the current log end.

Topic form (--data-dir D --topic T): reads every partition of topic T (only P with
--partition P), each in offset order; records of different partitions interleave.
Where each partition starts: with --from-beginning at its log start offset, with
--offset O at O (needs --partition), otherwise at its end (its high watermark), as
Kafka's console consumer does by default, so without --follow nothing is printed.
It stops once every partition has been read to its end, unless --follow. An unknown
topic is UNKNOWN_TOPIC_OR_PARTITION.

Group form (--data-dir D --topic T --group G): consumes as a member of consumer group
G, as kafka-console-consumer --group does, and commits what it printed, so the next
run goes on where this one stopped. It opens the directory for writing (the group
coordinator lives in the process that owns the directory): while it runs no other
process can write to the directory, and it fails with LOG_DIR_LOCKED when a running
process owns it. Each partition starts at the group's committed offset; where the
group has none, at its log start with --from-beginning (auto.offset.reset=earliest),
else at its end (latest); with a committed offset --from-beginning is ignored, as in
Kafka. It stops once it has read to the end of every partition assigned to it (or
after --max-records), or with --follow on SIGINT/SIGTERM, and then commits exactly
what it printed and leaves the group: per partition, the offset after its last
printed record, or where it printed none, the offset it started at. So with
--max-records N the next run starts right after the N-th record. Offsets are
committed only then (enable.auto.commit=false). A lone member gets every partition
at once: the group's initial rebalance delay (group.initial.rebalance.delay.ms, 3 s
in Kafka) is 0 here. `brook groups` shows and resets the group's offsets.

Output: one line per record. By default the value's raw bytes (a null value prints
"null"); a value containing '\n' spans lines, so use --json for exact output.

Options:
  --from-offset N    DIR form: first offset to print; outside [log start, log end] is an
                     OFFSET_OUT_OF_RANGE error
  --data-dir D       topic form: the data directory
  --topic T          topic form: the topic
  --from-beginning   topic form: start every partition at its log start offset;
                     group form: where the group has no committed offset
  --partition P      topic form: read only partition P
  --offset O         topic form, with --partition: start at offset O; outside [log
                     start, high watermark] is an OFFSET_OUT_OF_RANGE error
  --group G          group form: consume as a member of consumer group G (not with
                     --partition or --offset: the group assigns the partitions)
  --max-records N    exit after N records (default: no limit)
  --follow           at the end, keep waiting for new records like `tail -f`: the log
                     (or data directory) is re-opened read-only whenever its .log files
                     change (checked every 150 ms), and reading goes on from the next
                     offset of each partition. In the topic form, partitions added to
                     the topic meanwhile are read from their log start offset.
                     The first time it reaches the end it prints one line to stderr,
                     "brook consume: reached the end, following (...)": records
                     produced after that line are printed.
                     Group form: stay in the group, waiting for records, until
                     SIGINT or SIGTERM, then commit and exit 0. As it owns the
                     directory meanwhile, other processes cannot produce to it.
  --json             one JSON object per record, as dump-log --json prints them:
                     {"offset":N,"timestamp":N,"key":B64|null,"value":B64|null,"headers":[...]};
                     the topic form puts "partition":P first
  --print-key        plain mode: print key<TAB>value (null key: "null")
  -h, --help         this help

Exit: 0 ok, 1 error (missing log or topic, offset out of range, corrupt batch, the
log truncated or the topic deleted under --follow, the directory owned by a running
process in the group form), 2 usage error.)txt",
    {{"--from-offset", true},
     {"--max-records", true},
     {"--follow", false},
     {"--json", false},
     {"--print-key", false},
     {"--data-dir", true},
     {"--topic", true},
     {"--from-beginning", false},
     {"--partition", true},
     {"--offset", true},
     {"--group", true}},
    0,
    1};

namespace {

/// What the .log files of a directory look like: names and sizes. A change means new data
/// (or a roll, truncation, retention) and a reason to re-open.
std::vector<std::pair<std::string, std::uintmax_t>> fingerprint(const fs::path& dir) {
  std::vector<std::pair<std::string, std::uintmax_t>> out;
  std::error_code ec;
  for (const auto& de : fs::directory_iterator(dir, ec)) {
    if (de.path().extension() != partition_files::log_suffix) continue;
    std::error_code ec2;
    auto sz = de.file_size(ec2);
    out.emplace_back(de.path().filename().string(), ec2 ? 0 : sz);
  }
  std::sort(out.begin(), out.end());
  return out;
}

result<std::unique_ptr<partition_log>> open_read_only(const fs::path& dir) {
  return partition_log::open(dir, cli_log_config(), log_open_options{.read_only = true});
}

}  // namespace

int run_consume(const parsed_args& args) {
  if (is_topic_mode(args, {"--from-offset"}, {"--from-beginning", "--partition", "--offset", "--group"}))
    return run_consume_topic(args);
  const fs::path dir = args.positional.at(0);
  const bool json = args.has("--json");
  const bool follow = args.has("--follow");
  const bool print_key = args.has("--print-key");
  if (json && print_key) throw usage_error("--print-key is for plain output; --json always has the key");
  std::optional<std::int64_t> from;
  if (auto v = args.get("--from-offset"))
    from = parse_int("--from-offset", *v, 0, std::numeric_limits<std::int64_t>::max());
  std::uint64_t max_records = std::numeric_limits<std::uint64_t>::max();
  if (auto v = args.get("--max-records"))
    max_records =
        static_cast<std::uint64_t>(parse_int("--max-records", *v, 0, std::numeric_limits<std::int64_t>::max()));

  auto seen = fingerprint(dir);
  auto lr = open_read_only(dir);
  if (!lr) return fail(lr.error());
  std::unique_ptr<partition_log> log = std::move(*lr);

  offset next = from ? offset(*from) : log->log_start_offset();
  if (next < log->log_start_offset() || next > log->log_end_offset())
    return fail(make_error(errc::offset_out_of_range, "{}: offset {} is outside [{}, {}]", dir.string(), next,
                           log->log_start_offset(), log->log_end_offset()));

  std::uint64_t printed = 0;
  batch_decompressor decompressor = cli_decompressor();
  std::string line;
  auto emit = [&](const record_view& r) {
    if (printed >= max_records) return;
    ++printed;
    line.clear();
    if (json) {
      line = record_json(r);
    } else {
      if (print_key) {
        line += r.key().is_null() ? std::string_view("null") : r.key().as_string_view();
        line += '\t';
      }
      line += r.value().is_null() ? std::string_view("null") : r.value().as_string_view();
    }
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
  };

  for (;;) {
    while (printed < max_records && next < log->log_end_offset()) {
      auto s = log->read(next);
      if (!s) return fail(s.error());
      if (s->empty()) {
        if (s->next_offset() <= next) break;
        next = s->next_offset();  // offsets in a hole before an empty segment: none exists
        continue;
      }
      // Batch by batch rather than slice.for_each_record, so that --max-records stops
      // before validating (and failing on) batches it will not print.
      // A compressed batch's records live in `decompressor` until the next batch is parsed,
      // so each batch is printed before the next is read.
      const auto bytes = s->bytes();
      std::size_t pos = 0;
      while (pos < bytes.size() && printed < max_records) {
        auto v = parse_batch(bytes.subspan(pos), decompressor, s->source()->where(s->file_position() + pos));
        if (!v) return fail(v.error());
        if (!v->header().is_control())
          for (const record_view& r : *v)
            if (r.offset() >= s->start_offset()) emit(r);
        pos += v->size_bytes();
        next = v->header().next_offset();
      }
    }
    std::fflush(stdout);
    if (printed < max_records && log->recovery().damaged)  // issue 11 #22: never end quietly before damage
      return fail(make_error(errc::corrupt_message, "{}: stopped at offset {}: the log after it is damaged ({})",
                             dir.string(), log->log_end_offset(), damage_event(log->recovery())));
    if (printed >= max_records || !follow) break;
    announce_following();

    // At the end: wait for the .log files to change, then re-open and go on.
    int failures = 0;
    for (;;) {
      std::this_thread::sleep_for(follow_poll_interval);
      auto now = fingerprint(dir);
      if (now == seen) continue;
      auto r = open_read_only(dir);
      if (!r) {
        if (++failures >= follow_reopen_attempts) return fail(r.error());
        continue;  // the writer may be mid-roll: try again next tick
      }
      seen = std::move(now);
      log = std::move(*r);
      break;
    }
    if (next > log->log_end_offset())
      return fail(make_error(errc::offset_out_of_range,
                             "{}: the log end is now {}, below the next offset {} (the log was truncated)",
                             dir.string(), log->log_end_offset(), next));
    if (next < log->log_start_offset())
      return fail(make_error(errc::offset_out_of_range,
                             "{}: the log start is now {}, past the next offset {} (retention deleted records)",
                             dir.string(), log->log_start_offset(), next));
  }
  return exit_ok;
}

}  // namespace brook::cli

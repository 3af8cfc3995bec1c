// brook produce --data-dir D --topic T [--key-separator S] [--partition P] [--batch-size N]
//               [--compression C [--compression-level L]]
//
// Lines go through brook::producer. The tool, not linger.ms, decides when batches close:
// it flushes the producer after --batch-size records, when input is idle (linger.ms=0
// semantics, as the DIR form), and at EOF; batch.size (16384 bytes) still closes a batch
// early. After each flush it prints one line per record in input order and, as Kafka's
// producer did on every new batch from 2.4 to 3.2, tells the partitioner that the null-key
// batch was closed so the next null-key batch goes to another partition.
#include <chrono>
#include <cstdio>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include <brook/client/partitioner.hpp>
#include <brook/client/producer.hpp>

#include "commands/cli_codecs.hpp"
#include "commands/commands.hpp"
#include "commands/topic_mode.hpp"

namespace brook::cli {

namespace {

constexpr std::int64_t default_batch_records = 100;

/// One sent line: whether the partitioner chose its partition by stickiness, and its
/// outcome once its callback ran.
struct sent_record {
  std::optional<result<record_metadata>> outcome;
};

class topic_sender {
 public:
  topic_sender(data_dir& dd, std::string topic, std::int32_t partitions, std::optional<partition_id> fixed,
               std::optional<std::string> sep, std::size_t max_records, compression_type compression, int level)
      : topic_(std::move(topic)),
        partitions_(partitions),
        fixed_(fixed),
        sep_(std::move(sep)),
        max_records_(max_records),
        partitioner_(std::make_shared<default_partitioner>()),
        producer_(dd, config(partitioner_, compression, level)) {}

  result<void> add(std::string_view line) {
    auto [key, value] = split_line(line, sep_);
    producer_record rec;
    rec.topic = topic_;
    rec.partition = fixed_;
    rec.key = key;
    rec.value = value;
    sent_record& s = pending_.emplace_back();  // deque: the address stays valid
    producer_.send(rec, [&s](const result<record_metadata>& r) { s.outcome = r; });
    if (pending_.size() >= max_records_) return flush();
    return ok();
  }

  /// Closes the open batches, waits for every callback, prints one line per record in
  /// input order, and returns the first failure.
  result<void> flush() {
    if (pending_.empty()) return ok();
    BROOK_TRY(producer_.flush());
    std::optional<brook::error> first;
    std::string out;
    for (const sent_record& s : pending_) {
      if (!s.outcome) {  // flush() returned, so every callback has run
        if (!first) first = make_error(errc::unknown_server_error, "the producer lost a record's callback");
        continue;
      }
      if (!*s.outcome) {
        if (!first) first = s.outcome->error();
        continue;
      }
      const record_metadata& md = **s.outcome;
      out += fmt::format("partition {} offset {}\n", md.partition.value(), md.offset.value());
    }
    pending_.clear();
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (first) return *first;
    // The next null-key record starts a new batch, so the producer moves the sticky
    // partition on (Kafka's onNewBatch).
    return ok();
  }

  result<void> close() { return producer_.close(); }

 private:
  /// The producer compresses with the data directory's codecs (the tool's, cli_codecs.hpp).
  /// `level` is valid for `compression` (produce_compression_level checked it).
  static producer_config config(std::shared_ptr<partitioner> p, compression_type compression, int level) {
    producer_config cfg;
    cfg.partitioner = std::move(p);
    cfg.compression = compression;
    if (compression == compression_type::gzip) cfg.compression_gzip_level = level;
    if (compression == compression_type::lz4) cfg.compression_lz4_level = level;
    if (compression == compression_type::zstd) cfg.compression_zstd_level = level;
    cfg.linger = std::chrono::hours(1);  // batches are closed by flush(), see the file comment
    return cfg;
  }

  std::string topic_;
  std::int32_t partitions_;
  std::optional<partition_id> fixed_;
  std::optional<std::string> sep_;
  std::size_t max_records_;
  std::shared_ptr<default_partitioner> partitioner_;
  std::deque<sent_record> pending_;  // sent since the last flush, in input order
  producer producer_;                // last: destroyed (closed) first
};

}  // namespace

int run_produce_topic(const parsed_args& args) {
  const fs::path data = *args.get("--data-dir");
  const std::string topic = *args.get("--topic");
  std::optional<std::string> sep = args.get("--key-separator");
  if (sep && sep->empty()) throw usage_error("--key-separator must not be empty");
  const auto max_records = static_cast<std::size_t>(
      args.has("--batch-size") ? parse_int("--batch-size", *args.get("--batch-size"), 1, 1'000'000)
                               : default_batch_records);
  const auto [compression, level_arg] = produce_compression(args);
  std::optional<partition_id> fixed;
  if (auto v = args.get("--partition"))
    fixed = partition_id(
        static_cast<std::int32_t>(parse_int("--partition", *v, 0, std::numeric_limits<std::int32_t>::max())));

  if (auto v = validate_topic_name(topic); !v) return fail(v.error());
  auto codec = cli_codec(compression);
  if (!codec) return fail(codec.error());
  const int level = produce_compression_level(level_arg, **codec);
  auto ddr = open_data_dir(data, /*read_only=*/false);
  if (!ddr) return fail(ddr.error());
  data_dir& dd = **ddr;
  auto n = topic_partitions(dd, topic);
  if (!n)
    return fail(n.error() == errc::unknown_topic_or_partition
                    ? make_error(errc::unknown_topic_or_partition,
                                 "{}: unknown topic '{}' (produce does not create topics: run "
                                 "`brook topics --data-dir {} --create --topic {}`)",
                                 data.string(), topic, data.string(), topic)
                    : n.error());
  if (fixed && fixed->value() >= *n)
    return fail(make_error(errc::unknown_topic_or_partition, "topic '{}' has {} partition(s); there is no partition {}",
                           topic, *n, fixed->value()));

  result<void> r = ok();
  {
    topic_sender sender(dd, topic, *n, fixed, sep, max_records, compression, level);
    r = read_stdin_lines([&](std::string_view line) { return sender.add(line); }, [&] { return sender.flush(); });
    if (r) r = sender.flush();
    auto c = sender.close();
    if (r && !c) r = c.error();
  }
  auto c = housekeep_and_close(dd);
  if (!r) return fail(r.error());
  if (!c) return fail(c.error());
  return exit_ok;
}

}  // namespace brook::cli

// brook produce DIR [--key-separator S] [--batch-size N] [--compression C [--compression-level L]]
// brook produce --data-dir D --topic T [--key-separator S] [--partition P] [--batch-size N]
//               [--compression C [--compression-level L]]
//   (the topic form is in produce_topic.cpp)
#include <cstdio>
#include <limits>
#include <string>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/byte_buffer.hpp>
#include <brook/core/clock.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/partition_log.hpp>

#include "commands/cli_codecs.hpp"
#include "commands/commands.hpp"
#include "commands/serve_address.hpp"

namespace brook::cli {

namespace {
/// Kafka's producer batch.size default: a batch is closed once it holds this many bytes.
constexpr std::size_t batch_size_bytes = 16384;
constexpr std::int64_t default_batch_records = 100;
}  // namespace

const command_spec produce_spec{
    "produce",
    "DIR [--key-separator S] [--batch-size N] [--compression C [--compression-level L]]\n"
    "       brook produce --data-dir D --topic T [--key-separator S] [--partition P] [--batch-size N]\n"
    "                     [--compression C [--compression-level L]]",
    "Append one record per line of stdin to a partition log DIR, or to a topic of a data directory.",
    R"txt(Each line (without its '\n'; a '\r' is kept) becomes one record whose value is the
line and whose timestamp is the current time in ms (CreateTime). An empty line is an
empty value; a last line without '\n' still counts.

Lines are grouped into RecordBatch v2 batches: a batch is written when it holds
--batch-size records, when it reaches 16384 bytes (Kafka's batch.size), or as soon
as no more input is immediately available (like linger.ms=0), so interactive input
is written line by line. A line larger than max.message.bytes (1 MiB + 12) fails
with MESSAGE_TOO_LARGE.

DIR form: appends to the single partition log in DIR (created if missing).
Output: one line per batch written, "wrote offsets A..B" (first and last offset).

Topic form (--data-dir D --topic T): sends through brook's producer to topic T of the
data directory D, which this process opens for writing (it fails with LOG_DIR_LOCKED
while another process has D open). The topic must exist: produce never creates topics
(create one with `brook topics --data-dir D --create --topic T`); an unknown topic is
UNKNOWN_TOPIC_OR_PARTITION. Partitions are chosen as Kafka's default partitioner does:
a keyed record goes to toPositive(murmur2(key)) % partitions, so a key always lands in
the same partition; null-key records stick to one partition per batch, and the next
batch picks another (sticky partitioning, KIP-480). --partition P sends every record
to P instead. The tool waits for every record's acknowledgement.
Output: one line per record, in input order: "partition P offset O".

Options:
  --key-separator S  the part of a line before the first S is the key, the rest the
                     value; a line without S gets a null key. Without this option
                     every key is null.
  --batch-size N     at most N records per batch (1..1000000, default 100)
  --compression C    compress each batch's records with codec C, Kafka's
                     compression.type: none (default), gzip, snappy, lz4 or zstd, any
                     case, at Kafka's default level (gzip 6, lz4 9, zstd 3) unless
                     --compression-level says otherwise. The 16384 bytes above count
                     the records before compression. A codec this brook was built
                     without is UNSUPPORTED_COMPRESSION_TYPE (exit 1), an unknown name a
                     usage error.
  --compression-level L
                     the level --compression's codec compresses at, Kafka's
                     compression.<codec>.level: gzip -1 (zlib's default, 6) or 1..9,
                     lz4 1..17, zstd libzstd's minimum (a negative level)..22; none and
                     snappy have no level (only 0). Another level is a usage error.
  --data-dir D       topic form: the data directory (must exist)
  --topic T          topic form: the topic (must exist)
  --partition P      topic form: send every record to partition P (default: the
                     partitioner decides, see above)
  -h, --help         this help

Exit: 0 ok, 1 error (the records already written stay written; in the topic form every
record acknowledged before the error is printed), 2 usage error.)txt",
    {{"--key-separator", true},
     {"--batch-size", true},
     {"--data-dir", true},
     {"--topic", true},
     {"--partition", true},
     {"--compression", true},
     {"--compression-level", true}},
    0,
    1};

namespace {

/// Builds batches of lines and appends them to one partition log (DIR form).
class batch_writer {
 public:
  /// `codec`: the codec batches are compressed with at `level`, null for none.
  batch_writer(partition_log& log, std::optional<std::string> sep, std::int32_t max_records,
               const compression_codec* codec, int level)
      : log_(log), sep_(std::move(sep)), max_records_(max_records), codec_(codec), level_(level) {}

  result<void> add(std::string_view line) {
    auto [key, value] = split_line(line, sep_);
    const std::size_t need = record_batch_builder::record_size(0, builder_.record_count(), key, value) + 10;
    if (!builder_.empty() && builder_.size_bytes() + need > batch_size_bytes) BROOK_TRY(write());
    builder_.append(clock_.now_ms(), key, value);
    if (builder_.record_count() >= max_records_ || builder_.size_bytes() >= batch_size_bytes) BROOK_TRY(write());
    return ok();
  }

  /// Appends the pending batch, if any.
  result<void> write() {
    if (builder_.empty()) return ok();
    auto batch = codec_ != nullptr ? builder_.finish(*codec_, level_) : result<std::span<std::byte>>(builder_.finish());
    auto r = batch ? log_.append(*batch) : result<append_result>(batch.error());
    builder_.reset();
    if (!r) return r.error();
    fmt::print("wrote offsets {}..{}\n", r->base_offset, r->last_offset);
    std::fflush(stdout);
    return ok();
  }

 private:
  partition_log& log_;
  std::optional<std::string> sep_;
  std::int32_t max_records_;
  const compression_codec* codec_;
  int level_;
  record_batch_builder builder_;
  system_clock clock_;
};

}  // namespace

produce_compression_args produce_compression(const parsed_args& args) {
  produce_compression_args a;
  if (auto v = args.get("--compression")) {
    auto t = parse_compression_type(*v);
    if (!t) throw usage_error(fmt::format("--compression: {}", t.error().message()));
    a.type = *t;
  }
  if (auto v = args.get("--compression-level")) {
    a.level = static_cast<int>(parse_int("--compression-level", *v, std::numeric_limits<std::int32_t>::min(),
                                         std::numeric_limits<std::int32_t>::max()));
  }
  return a;
}

int produce_compression_level(std::optional<int> level_arg, const compression_codec& codec) {
  if (!level_arg) return codec.default_level();
  const int level = *level_arg;
  if (codec.valid_level(level)) return level;
  byte_buffer unused;  // compress() names the codec's range in its error, and writes nothing
  auto r = codec.compress({}, level, unused);
  BROOK_ASSERT(!r, "a level valid_level refuses was accepted by compress");
  throw usage_error(fmt::format("--compression-level: {}", r.error().message()));
}

int run_produce(const parsed_args& args) {
  if (is_topic_mode(args, {}, {"--partition"})) return run_produce_topic(args);
  const fs::path dir = args.positional.at(0);
  std::optional<std::string> sep = args.get("--key-separator");
  if (sep && sep->empty()) throw usage_error("--key-separator must not be empty");
  const auto max_records = static_cast<std::int32_t>(
      args.has("--batch-size") ? parse_int("--batch-size", *args.get("--batch-size"), 1, 1'000'000)
                               : default_batch_records);
  const auto [compression, level_arg] = produce_compression(args);
  auto codec = cli_codec(compression);
  if (!codec) return fail(codec.error());
  const int level = produce_compression_level(level_arg, **codec);

  auto lr = partition_log::open(dir, cli_log_config());
  if (!lr) return fail(with_partition_serve_hint(lr.error(), dir));
  partition_log& log = **lr;
  batch_writer writer(log, sep, max_records, compression == compression_type::none ? nullptr : *codec, level);

  auto r = read_stdin_lines([&](std::string_view line) { return writer.add(line); }, [&] { return writer.write(); });
  if (r) r = writer.write();
  auto c = log.close();
  if (!r) return fail(r.error());
  if (!c) return fail(c.error());
  return exit_ok;
}

}  // namespace brook::cli

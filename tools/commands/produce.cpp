// brook produce DIR [--key-separator S] [--batch-size N]
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include <brook/clock.hpp>
#include <brook/format/record_batch_builder.hpp>
#include <brook/storage/partition_log.hpp>

#include "commands/commands.hpp"

namespace brook::cli {

namespace {
/// Kafka's producer batch.size default: a batch is closed once it holds this many bytes.
constexpr std::size_t batch_size_bytes = 16384;
constexpr std::int64_t default_batch_records = 100;
}  // namespace

const command_spec produce_spec{"produce",
                                "DIR [--key-separator S] [--batch-size N]",
                                "Append one record per line of stdin to the partition log in DIR (created if missing).",
                                R"txt(Each line (without its '\n'; a '\r' is kept) becomes one record whose value is the
line and whose timestamp is the current time in ms (CreateTime). An empty line is an
empty value; a last line without '\n' still counts.

Lines are grouped into RecordBatch v2 batches: a batch is written when it holds
--batch-size records, when it reaches 16384 bytes (Kafka's batch.size), or as soon
as no more input is immediately available (like linger.ms=0), so interactive input
is written line by line. A line larger than max.message.bytes (1 MiB + 12) fails
with MESSAGE_TOO_LARGE.

Output: one line per batch written, "wrote offsets A..B" (first and last offset).
The log is closed cleanly (flushed, indexes trimmed, checkpoints written) at EOF.

Options:
  --key-separator S  the part of a line before the first S is the key, the rest the
                     value; a line without S gets a null key. Without this option
                     every key is null.
  --batch-size N     at most N records per batch (1..1000000, default 100)
  -h, --help         this help

Exit: 0 ok, 1 error (the records already written stay written), 2 usage error.)txt",
                                {{"--key-separator", true}, {"--batch-size", true}},
                                1,
                                1};

namespace {

/// Whether read(0) would return at once (data or EOF).
bool input_ready() {
  pollfd p{0, POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return r != 0;
}

class producer {
 public:
  producer(partition_log& log, std::optional<std::string> sep, std::int32_t max_records)
      : log_(log), sep_(std::move(sep)), max_records_(max_records) {}

  result<void> add(std::string_view line) {
    nullable_bytes key = nullable_bytes::null();
    nullable_bytes value = line;
    if (sep_) {
      if (auto at = line.find(*sep_); at != std::string_view::npos) {
        key = line.substr(0, at);
        value = line.substr(at + sep_->size());
      }
    }
    const std::size_t need = record_batch_builder::record_size(0, builder_.record_count(), key, value) + 10;
    if (!builder_.empty() && builder_.size_bytes() + need > batch_size_bytes) BROOK_TRY(write());
    builder_.append(clock_.now_ms(), key, value);
    if (builder_.record_count() >= max_records_ || builder_.size_bytes() >= batch_size_bytes) BROOK_TRY(write());
    return ok();
  }

  /// Appends the pending batch, if any.
  result<void> write() {
    if (builder_.empty()) return ok();
    auto batch = builder_.finish();
    auto r = log_.append(batch);
    builder_.reset();
    if (!r) return r.error();
    fmt::print("wrote offsets {}..{}\n", r->base_offset, r->last_offset);
    std::fflush(stdout);
    return ok();
  }

  bool pending() const noexcept { return !builder_.empty(); }

 private:
  partition_log& log_;
  std::optional<std::string> sep_;
  std::int32_t max_records_;
  record_batch_builder builder_;
  system_clock clock_;
};

}  // namespace

int run_produce(const parsed_args& args) {
  const fs::path dir = args.positional.at(0);
  std::optional<std::string> sep = args.get("--key-separator");
  if (sep && sep->empty()) throw usage_error("--key-separator must not be empty");
  const auto max_records = static_cast<std::int32_t>(
      args.has("--batch-size") ? parse_int("--batch-size", *args.get("--batch-size"), 1, 1'000'000)
                               : default_batch_records);

  auto lr = partition_log::open(dir);
  if (!lr) return fail(lr.error());
  partition_log& log = **lr;
  producer prod(log, sep, max_records);

  auto run = [&]() -> result<void> {
    std::string buf;
    std::size_t start = 0;  // first unconsumed byte of buf
    char chunk[65536];
    for (;;) {
      for (std::size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1)
        BROOK_TRY(prod.add(std::string_view(buf).substr(start, nl - start)));
      buf.erase(0, start);
      start = 0;
      // linger.ms = 0: write what we have when the next read would block.
      if (prod.pending() && !input_ready()) BROOK_TRY(prod.write());
      ssize_t n = ::read(0, chunk, sizeof chunk);
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_system_error(errno, "read stdin");
      }
      if (n == 0) break;
      buf.append(chunk, static_cast<std::size_t>(n));
    }
    if (!buf.empty()) BROOK_TRY(prod.add(buf));
    return prod.write();
  };
  auto r = run();
  auto c = log.close();
  if (!r) return fail(r.error());
  if (!c) return fail(c.error());
  return exit_ok;
}

}  // namespace brook::cli

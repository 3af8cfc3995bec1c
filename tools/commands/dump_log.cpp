// brook dump-log FILE.log [--json] [--verify-index]
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include <brook/storage/partition_files.hpp>
#include <brook/storage/segment.hpp>

#include "commands/commands.hpp"
#include "commands/log_file.hpp"

namespace brook::cli {

const command_spec dump_log_spec{
    "dump-log",
    "FILE.log [--json] [--verify-index]",
    "Print the batches and records of one segment file, like Kafka's kafka-dump-log.",
    R"txt(Reads FILE directly (never modifies it, takes no lock), batch by batch from byte 0,
validating each (header, CRC-32C, every record). Stops at the first bad batch with
a message naming the byte position, after printing the valid ones, and exits 1.

Output without --json: a "baseOffset: ... position: ... crcValid: true" line per
batch, then "| offset: ..." lines for its records. Keys, values and header values
are shown as "text" when they are printable UTF-8, as 0x<hex> otherwise, or null.

Compressed batches: "compresscodec:" names the batch's codec (none, gzip, snappy,
lz4, zstd) and "size:" its bytes on disk; its records are decompressed and shown
like any others (with --json too). A codec this brook was built without is
UNSUPPORTED_COMPRESSION_TYPE naming it: the batches before it are printed, then
exit 1.

Options:
  --json          one JSON object per record and nothing else on stdout:
                  {"offset":N,"timestamp":N,"key":B64|null,"value":B64|null,
                   "headers":[{"key":"...","value":B64|null}]}
                  key, value and header values are base64 of the raw bytes; header
                  keys are JSON strings. Control batches (transaction markers) are
                  left out, as a consumer would skip them.
  --verify-index  also check the sibling .index and .timeindex (same stem): every
                  entry must point at a valid batch whose last offset is the entry's
                  offset (and, for .timeindex, whose largest timestamp is the entry's).
                  An all-zero tail of a preallocated (live) index is unused space.
                  Mismatches are listed on stdout (unless --json); exit 1 on any.
  -h, --help      this help

Exit: 0 ok, 1 bad batch / index mismatch / I/O error, 2 usage error.)txt",
    {{"--json", false}, {"--verify-index", false}},
    1,
    1};

namespace {

void print_batch_human(const record_batch_view& v, std::uint64_t position) {
  const batch_header& h = v.header();
  const bool log_append = h.timestamp_type() == timestamp_type::log_append_time;
  const std::int32_t last_seq =
      h.base_sequence < 0 ? -1 : static_cast<std::int32_t>(h.base_sequence + h.last_offset_delta);
  fmt::print(
      "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} "
      "partitionLeaderEpoch: {} isTransactional: {} isControl: {} position: {} {}: {} baseTimestamp: {} "
      "maxTimestamp: {} size: {} magic: {} compresscodec: {} crc: {:#010x} crcValid: true\n",
      h.base_offset, h.last_offset(), h.records_count, h.base_sequence, last_seq, h.producer_id, h.producer_epoch,
      h.partition_leader_epoch, h.is_transactional(), h.is_control(), position,
      log_append ? "LogAppendTime" : "CreateTime", h.max_timestamp, h.base_timestamp, h.max_timestamp, v.size_bytes(),
      static_cast<int>(h.magic), compression_name(h.compression()), h.crc);
  for (const record_view& r : v) {
    std::string line =
        fmt::format("| offset: {} {}: {} keySize: {} valueSize: {} key: {} value: {} headers: [", r.offset(),
                    log_append ? "LogAppendTime" : "CreateTime", r.timestamp(), r.key().wire_length(),
                    r.value().wire_length(), display_bytes(r.key()), display_bytes(r.value()));
    bool first = true;
    for (const record_header& hd : r.headers()) {
      if (!first) line += ", ";
      first = false;
      append_json_string(line, hd.key);
      line += '=';
      line += display_bytes(hd.value);
    }
    line += "]\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
}

}  // namespace

int run_dump_log(const parsed_args& args) {
  const fs::path path = args.positional.at(0);
  const bool json = args.has("--json");
  const bool verify_index = args.has("--verify-index");

  auto rr = log_file_reader::open(path);
  if (!rr) return fail(rr.error());
  log_file_reader& reader = *rr;

  if (!json) {
    fmt::print("Dumping {}\n", path.string());
    if (reader.segment_base())
      fmt::print("Log starting offset: {}\n", *reader.segment_base());
    else
      fmt::print("Log starting offset: unknown (the file name is not a 20-digit base offset)\n");
  }
  std::size_t batches = 0, records = 0;
  std::optional<brook::error> bad;
  for (;;) {
    const std::uint64_t at = reader.position();
    auto v = reader.next();
    if (!v) {
      bad = v.error();
      break;
    }
    if (!*v) break;
    const record_batch_view& b = **v;
    ++batches;
    records += b.record_count();
    if (json) {
      if (b.header().is_control()) continue;
      for (const record_view& r : b) {
        std::string line = record_json(r);
        line += '\n';
        std::fwrite(line.data(), 1, line.size(), stdout);
      }
    } else {
      print_batch_human(b, at);
    }
  }
  if (!json)
    fmt::print("{} valid batches, {} records, {} of {} bytes\n", batches, records, reader.position(),
               reader.file_size());
  if (bad) return fail(*bad);

  if (verify_index) {
    if (!reader.segment_base())
      return fail(make_error(errc::invalid_argument,
                             "{}: --verify-index needs a segment file named by its 20-digit base offset",
                             path.string()));
    fs::path stem = path;
    stem.replace_extension();
    const brook::offset base = *reader.segment_base();
    index_check checks[] = {check_offset_index(fs::path(stem.string() + std::string(partition_files::index_suffix)),
                                               base, reader.batches(), reader.position()),
                            check_time_index(fs::path(stem.string() + std::string(partition_files::time_index_suffix)),
                                             base, reader.batches())};
    std::size_t problems = 0;
    const std::string* first = nullptr;
    for (const auto& c : checks) {
      if (!json) {
        if (c.problems.empty())
          fmt::print("{}: ok, {} entries in use{}\n", c.path.string(), c.entries,
                     c.unused_entries > 0 ? fmt::format(", {} unused (preallocated)", c.unused_entries) : "");
        for (const auto& p : c.problems) fmt::print("mismatch: {}\n", p);
      }
      problems += c.problems.size();
      if (!first && !c.problems.empty()) first = &c.problems.front();
    }
    if (problems > 0)
      return fail(make_error(errc::corrupt_message, "{}{}", *first,
                             problems > 1 ? fmt::format(" (and {} more index problems)", problems - 1) : ""));
  }
  std::fflush(stdout);
  return exit_ok;
}

}  // namespace brook::cli

// brook's side of the kafkajs compatibility check (driven by kafkajs_roundtrip.js).
//
//   compat_tool build   stdin: one batch spec per line   stdout: one hex batch per line
//   compat_tool parse   stdin: one hex batch per line    stdout: one JSON object per line
//
// Batch spec (space-separated tokens):
//   baseOffset partitionLeaderEpoch producerId producerEpoch baseSequence transactional(0|1)
//   appendTime(~ = none, else a timestamp stamped with set_batch_log_append_time) recordCount
//   then per record: timestamp key value headerCount { headerKey headerValue }*
// Byte strings: "~" = null, "." = empty, otherwise lowercase hex.
//
// parse verifies the CRC and walks every record (record_batch_view::parse defaults) and
// prints every header field and record, 64-bit numbers as strings:
//   {"ok":true,"baseOffset":"0",...,"records":[{"offset":"0","timestamp":"5","key":null,
//    "value":"6869","headers":[["6b",null]]}]}
// or {"ok":false,"code":"CORRUPT_MESSAGE","message":"..."}.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <brook/format/record_batch.hpp>
#include <brook/format/record_batch_builder.hpp>

namespace {

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "compat_tool: %s\n", msg.c_str());
  std::exit(2);
}

std::vector<std::byte> from_hex(const std::string& h) {
  if (h.size() % 2 != 0) die("odd-length hex: " + h);
  std::vector<std::byte> out(h.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    unsigned v = 0;
    if (std::sscanf(h.c_str() + 2 * i, "%2x", &v) != 1) die("bad hex: " + h);
    out[i] = static_cast<std::byte>(v);
  }
  return out;
}

std::string to_hex(std::span<const std::byte> b) {
  std::string s;
  s.reserve(b.size() * 2);
  for (auto x : b) s += fmt::format("{:02x}", static_cast<unsigned>(x));
  return s;
}

std::optional<std::string> read_bytes_token(std::istream& in) {
  std::string t;
  if (!(in >> t)) die("spec ended early");
  if (t == "~") return std::nullopt;
  if (t == ".") return std::string();
  auto b = from_hex(t);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

template <typename T>
T read_int(std::istream& in) {
  long long v = 0;
  if (!(in >> v)) die("spec: expected an integer");
  return static_cast<T>(v);
}

brook::nullable_bytes nb(const std::optional<std::string>& s) {
  return s ? brook::nullable_bytes(std::string_view(*s)) : brook::nullable_bytes::null();
}

std::string build(const std::string& line) {
  std::istringstream in(line);
  brook::batch_options o;
  const auto base = read_int<std::int64_t>(in);
  o.partition_leader_epoch = read_int<std::int32_t>(in);
  o.producer_id = read_int<std::int64_t>(in);
  o.producer_epoch = read_int<std::int16_t>(in);
  o.base_sequence = read_int<std::int32_t>(in);
  o.transactional = read_int<int>(in) != 0;
  std::string append;
  in >> append;
  const auto n = read_int<int>(in);
  brook::record_batch_builder b(o);
  b.reset(brook::offset{base});
  for (int i = 0; i < n; ++i) {
    const auto ts = read_int<std::int64_t>(in);
    auto key = read_bytes_token(in);
    auto value = read_bytes_token(in);
    const auto nh = read_int<int>(in);
    std::vector<std::string> hkeys;
    std::vector<std::optional<std::string>> hvals;
    for (int k = 0; k < nh; ++k) {
      auto hk = read_bytes_token(in);
      if (!hk) die("null header key in spec");
      hkeys.push_back(*hk);
      hvals.push_back(read_bytes_token(in));
    }
    std::vector<brook::record_header> hs;
    for (int k = 0; k < nh; ++k) hs.push_back({hkeys[k], nb(hvals[k])});
    b.append(ts, nb(key), nb(value), hs);
  }
  auto out = b.finish();
  if (append != "~") brook::set_batch_log_append_time(out, std::stoll(append));
  return to_hex(out);
}

std::string json_escape(std::string_view s) {
  std::string o;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      o += fmt::format("\\u{:04x}", c);
    } else {
      o += static_cast<char>(c);
    }
  }
  return o;
}

std::string json_bytes(const brook::nullable_bytes& b) { return b.is_null() ? "null" : "\"" + to_hex(b.span()) + "\""; }

std::string parse(const std::string& line) {
  const auto bytes = from_hex(line);
  auto r = brook::record_batch_view::parse(bytes);  // CRC and every record checked
  if (!r) {
    return fmt::format(R"({{"ok":false,"code":"{}","message":"{}"}})",
                       brook::errc_name(static_cast<brook::errc>(r.error().code().value())),
                       json_escape(r.error().message()));
  }
  const auto& h = r->header();
  std::string o = fmt::format(
      R"({{"ok":true,"sizeBytes":{},"baseOffset":"{}","batchLength":{},"partitionLeaderEpoch":{},"magic":{},)"
      R"("crc":{},"attributes":{},"lastOffsetDelta":{},"baseTimestamp":"{}","maxTimestamp":"{}",)"
      R"("producerId":"{}","producerEpoch":{},"baseSequence":{},"recordsCount":{},"records":[)",
      r->size_bytes(), h.base_offset.value(), h.batch_length, h.partition_leader_epoch, int{h.magic}, h.crc,
      h.attributes, h.last_offset_delta, h.base_timestamp, h.max_timestamp, h.producer_id, h.producer_epoch,
      h.base_sequence, h.records_count);
  bool first = true;
  for (const auto& rec : *r) {
    if (!first) o += ',';
    first = false;
    o += fmt::format(R"({{"offset":"{}","timestamp":"{}","key":{},"value":{},"headers":[)", rec.offset().value(),
                     rec.timestamp(), json_bytes(rec.key()), json_bytes(rec.value()));
    bool hfirst = true;
    for (const auto& hd : rec.headers()) {
      if (!hfirst) o += ',';
      hfirst = false;
      o += fmt::format(R"(["{}",{}])", to_hex(brook::as_bytes(hd.key)), json_bytes(hd.value));
    }
    o += "]}";
  }
  o += "]}";
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) die("usage: compat_tool build|parse < input");
  const std::string mode = argv[1];
  if (mode != "build" && mode != "parse") die("unknown mode " + mode);
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << (mode == "build" ? build(line) : parse(line)) << '\n';
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}

#include "commands/cli.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

#include <fmt/format.h>

namespace brook::cli {

parsed_args parse_args(const command_spec& spec, int argc, char** argv, int first) {
  parsed_args out;
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    std::string_view a = argv[i];
    if (!options_done && (a == "-h" || a == "--help")) {
      out.help = true;
      return out;
    }
  }
  for (int i = first; i < argc; ++i) {
    std::string_view a = argv[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      out.positional.emplace_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    std::string_view name = a;
    std::optional<std::string_view> inline_value;
    if (auto eq = a.find('='); eq != std::string_view::npos && a.starts_with("--")) {
      name = a.substr(0, eq);
      inline_value = a.substr(eq + 1);
    }
    const flag_spec* f = nullptr;
    for (const auto& s : spec.flags)
      if (s.name == name) f = &s;
    if (f == nullptr) throw usage_error(fmt::format("unknown option '{}'", name));
    if (out.has(name) && !f->repeatable) throw usage_error(fmt::format("option '{}' given twice", name));
    std::string value;
    if (f->takes_value) {
      if (inline_value) {
        value = std::string(*inline_value);
      } else {
        if (i + 1 >= argc) throw usage_error(fmt::format("option '{}' needs a value", name));
        value = argv[++i];
      }
    } else if (inline_value) {
      throw usage_error(fmt::format("option '{}' takes no value", name));
    }
    if (f->repeatable) out.repeated[std::string(name)].push_back(value);
    out.options.emplace(std::string(name), std::move(value));
  }
  if (out.positional.size() < spec.min_positional)
    throw usage_error(spec.min_positional == 1 ? "missing argument" : "missing arguments");
  if (out.positional.size() > spec.max_positional)
    throw usage_error(fmt::format("unexpected argument '{}'", out.positional[spec.max_positional]));
  return out;
}

bool is_topic_mode(const parsed_args& args, std::initializer_list<std::string_view> dir_only,
                   std::initializer_list<std::string_view> topic_only) {
  const bool has_dir = !args.positional.empty();
  const bool has_data_dir = args.has("--data-dir");
  if (has_dir && has_data_dir) throw usage_error("give either DIR or --data-dir D --topic T, not both");
  if (!has_dir && !has_data_dir) throw usage_error("missing DIR (or --data-dir D --topic T)");
  if (has_data_dir) {
    if (!args.has("--topic")) throw usage_error("--data-dir needs --topic T");
    for (auto f : dir_only)
      if (args.has(f)) throw usage_error(fmt::format("{} is for the DIR form; with --data-dir see --help", f));
    return true;
  }
  if (args.has("--topic")) throw usage_error("--topic needs --data-dir D (DIR is a single partition directory)");
  for (auto f : topic_only)
    if (args.has(f)) throw usage_error(fmt::format("{} needs --data-dir D --topic T", f));
  return false;
}

std::int64_t parse_int(std::string_view flag, std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty())
    throw usage_error(fmt::format("{} expects an integer, got '{}'", flag, text));
  if (v < min || v > max) throw usage_error(fmt::format("{} must be in [{}, {}], got {}", flag, min, max, v));
  return v;
}

std::string usage_line(const command_spec& spec) { return fmt::format("usage: brook {} {}", spec.name, spec.synopsis); }

std::string help_text(const command_spec& spec) {
  return fmt::format("{}\n\n{}\n\n{}", usage_line(spec), spec.summary, spec.help);
}

std::string describe(const brook::error& e) {
  if (e.code().category() == brook::error_category()) return e.to_string();
  // OS errors are KAFKA_STORAGE_ERROR (error == errc::kafka_storage_error matches them);
  // make_system_error already appended strerror to the message.
  return fmt::format("KAFKA_STORAGE_ERROR: {}", e.message().empty() ? e.code().message() : e.message());
}

int fail(const brook::error& e) {
  std::fflush(stdout);
  fmt::print(stderr, "brook: {}\n", describe(e));
  return exit_failure;
}

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
}  // namespace

result<void> read_stdin_lines(const std::function<result<void>(std::string_view)>& on_line,
                              const std::function<result<void>()>& on_idle) {
  std::string buf;
  std::size_t start = 0;    // first unconsumed byte of buf
  bool handed_out = false;  // lines given to on_line since the last on_idle
  char chunk[65536];
  for (;;) {
    for (std::size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
      BROOK_TRY(on_line(std::string_view(buf).substr(start, nl - start)));
      handed_out = true;
    }
    buf.erase(0, start);
    start = 0;
    if (handed_out && !input_ready()) {
      BROOK_TRY(on_idle());
      handed_out = false;
    }
    ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_system_error(errno, "read stdin");
    }
    if (n == 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
  if (!buf.empty()) BROOK_TRY(on_line(buf));
  return ok();
}

key_value split_line(std::string_view line, const std::optional<std::string>& separator) {
  key_value kv;
  kv.value = line;
  if (separator) {
    if (auto at = line.find(*separator); at != std::string_view::npos) {
      kv.key = line.substr(0, at);
      kv.value = line.substr(at + separator->size());
    }
  }
  return kv;
}

std::string base64(std::span<const std::byte> b) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((b.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[k])); };
  for (; i + 3 <= b.size(); i += 3) {
    std::uint32_t v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  if (std::size_t rest = b.size() - i; rest > 0) {
    std::uint32_t v = at(i) << 16;
    if (rest == 2) v |= at(i + 1) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

namespace {

/// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 if it is not one
/// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto c = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = c(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((c(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c(i + k) & 0x3F);
  }
  static constexpr std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    auto ch = static_cast<unsigned char>(s[i]);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
      ++i;
    } else if (ch < 0x20) {
      out += fmt::format("\\u{:04x}", ch);
      ++i;
    } else if (ch < 0x80) {
      out += static_cast<char>(ch);
      ++i;
    } else if (std::size_t n = utf8_sequence(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    }
  }
  out += '"';
}

namespace {
void append_b64_or_null(std::string& out, const nullable_bytes& b) {
  if (b.is_null()) {
    out += "null";
    return;
  }
  out += '"';
  out += base64(b.span());
  out += '"';
}
}  // namespace

std::string record_json(const record_view& r) {
  std::string out;
  out.reserve(64 + r.key().size() * 4 / 3 + r.value().size() * 4 / 3);
  out += fmt::format("{{\"offset\":{},\"timestamp\":{},\"key\":", r.offset().value(), r.timestamp());
  append_b64_or_null(out, r.key());
  out += ",\"value\":";
  append_b64_or_null(out, r.value());
  out += ",\"headers\":[";
  bool first = true;
  for (const record_header& h : r.headers()) {
    if (!first) out += ',';
    first = false;
    out += "{\"key\":";
    append_json_string(out, h.key);
    out += ",\"value\":";
    append_b64_or_null(out, h.value);
    out += '}';
  }
  out += "]}";
  return out;
}

std::string record_json(const record_view& r, partition_id p) {
  std::string body = record_json(r);  // {"offset":...}
  return fmt::format("{{\"partition\":{},", p.value()) + body.substr(1);
}

bool is_printable_text(std::span<const std::byte> b) {
  std::string_view s(reinterpret_cast<const char*>(b.data()), b.size());
  std::size_t i = 0;
  while (i < s.size()) {
    auto ch = static_cast<unsigned char>(s[i]);
    if (ch < 0x20 || ch == 0x7F) return false;
    std::size_t n = utf8_sequence(s, i);
    if (n == 0) return false;
    if (n == 2 && ch == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) return false;  // C1 controls
    i += n;
  }
  return true;
}

std::string display_bytes(const nullable_bytes& b) {
  if (b.is_null()) return "null";
  if (is_printable_text(b.span())) {
    std::string out = "\"";
    for (char c : b.as_string_view()) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
    return out;
  }
  std::string out = "0x";
  for (std::byte x : b.span()) out += fmt::format("{:02x}", static_cast<unsigned>(x));
  return out;
}

}  // namespace brook::cli

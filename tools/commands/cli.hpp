// Shared plumbing of the `brook` command-line tool: a small argument parser,
// error reporting (one line on stderr, exit 1; usage errors exit 2), and the
// encoders the commands print with (base64, JSON strings, a record as one
// JSON line, bytes shown as text or hex).
//
// Thread-safety: the tool is single-threaded; these are values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <brook/error.hpp>
#include <brook/format/bytes.hpp>
#include <brook/format/record.hpp>

namespace brook::cli {

/// Exit codes shared by every command.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  ///< the command ran and found or hit an error
inline constexpr int exit_usage = 2;    ///< bad command line

/// One option of a command: `--name` or, when it takes a value, `--name V` / `--name=V`.
struct flag_spec {
  std::string_view name;  ///< with the leading dashes: "--json"
  bool takes_value = false;
};

/// A command's grammar and help text.
struct command_spec {
  std::string_view name;      ///< "dump-log"
  std::string_view synopsis;  ///< "FILE.log [--json] [--verify-index]"
  std::string_view summary;   ///< one line for `brook --help`
  std::string_view help;      ///< the rest of `brook <command> --help`
  std::vector<flag_spec> flags;
  std::size_t min_positional = 0;
  std::size_t max_positional = 0;
};

/// A parsed command line.
struct parsed_args {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> options;  ///< flag name -> value ("" for switches)
  bool help = false;

  bool has(std::string_view flag) const { return options.find(flag) != options.end(); }
  std::optional<std::string> get(std::string_view flag) const {
    auto it = options.find(flag);
    if (it == options.end()) return std::nullopt;
    return it->second;
  }
};

/// A bad command line: main prints the message and the command's usage, and exits 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses argv[first..argc) against `spec`. `-h`/`--help` anywhere sets help and stops
/// checking. Throws usage_error on unknown options, missing values, repeated options or a
/// wrong number of positional arguments. `--` ends the options.
parsed_args parse_args(const command_spec& spec, int argc, char** argv, int first);

/// Parses a decimal integer option value in [min, max]; throws usage_error naming the flag.
std::int64_t parse_int(std::string_view flag, std::string_view text, std::int64_t min, std::int64_t max);

/// "usage: brook <name> <synopsis>".
std::string usage_line(const command_spec& spec);
/// The full help text of a command.
std::string help_text(const command_spec& spec);

/// One human line for an error: "CORRUPT_MESSAGE: <message>" for brook codes, the message
/// (which already names the file and the OS reason) for OS errors.
std::string describe(const brook::error& e);
/// Prints "brook: <describe(e)>" on stderr and returns exit_failure.
int fail(const brook::error& e);

/// RFC 4648 base64 with padding.
std::string base64(std::span<const std::byte> b);
/// Appends `s` as a JSON string literal (quotes included). Valid UTF-8 passes through;
/// '"', '\\' and control characters are escaped (controls as \uXXXX); bytes that are
/// not valid UTF-8 become U+FFFD, as a Java String decode of a header key would.
void append_json_string(std::string& out, std::string_view s);
/// The record as one JSON object (no newline):
/// {"offset":N,"timestamp":N,"key":B64|null,"value":B64|null,"headers":[{"key":"…","value":B64|null}]}
std::string record_json(const record_view& r);

/// True if `b` is valid UTF-8 without control characters (so it can be shown as text).
bool is_printable_text(std::span<const std::byte> b);
/// For humans: null, "text" (quoted, \" and \\ escaped) when printable, else 0x<hex>.
std::string display_bytes(const nullable_bytes& b);

}  // namespace brook::cli

// Shared plumbing of the `brook` command-line tool: a small argument parser,
// error reporting (one line on stderr, exit 1; usage errors exit 2), and the
// encoders the commands print with (base64, JSON strings, a record as one
// JSON line, bytes shown as text or hex).
//
// Thread-safety: the tool is single-threaded; these are values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
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
  bool repeatable = false;  ///< may be given more than once (values kept in order)
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
  std::map<std::string, std::string, std::less<>> options;  ///< flag name -> value ("" for switches); first value
  std::map<std::string, std::vector<std::string>, std::less<>> repeated;  ///< repeatable flags: every value, in order
  bool help = false;

  bool has(std::string_view flag) const { return options.find(flag) != options.end(); }
  std::optional<std::string> get(std::string_view flag) const {
    auto it = options.find(flag);
    if (it == options.end()) return std::nullopt;
    return it->second;
  }
  /// Every value of a repeatable flag, in command-line order (empty if absent).
  std::vector<std::string> get_all(std::string_view flag) const {
    auto it = repeated.find(flag);
    return it == repeated.end() ? std::vector<std::string>{} : it->second;
  }
};

/// A bad command line: main prints the message and the command's usage, and exits 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses argv[first..argc) against `spec`. `-h`/`--help` anywhere sets help and stops
/// checking. Throws usage_error on unknown options, missing values, repeated options or a
/// wrong number of positional arguments. `--` ends the options. Only flags marked
/// repeatable may be given twice.
parsed_args parse_args(const command_spec& spec, int argc, char** argv, int first);

/// Which form a produce/consume command line uses: false for `DIR` (one partition
/// directory), true for `--data-dir D --topic T` (a topic of a data directory). Throws
/// usage_error when neither or both are given, one of --data-dir/--topic is missing, or an
/// option of one form (`dir_only`, `topic_only`) is used with the other.
bool is_topic_mode(const parsed_args& args, std::initializer_list<std::string_view> dir_only,
                   std::initializer_list<std::string_view> topic_only);

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

/// Reads stdin to EOF and calls on_line for each line (without its '\n'; a '\r' is kept;
/// a last line without '\n' still counts). on_idle is called whenever lines were handed
/// out and the next read would block, so interactive input is not held back (linger.ms=0).
/// Stops at the first error either callback returns, or a read error.
result<void> read_stdin_lines(const std::function<result<void>(std::string_view)>& on_line,
                              const std::function<result<void>()>& on_idle);

/// A stdin line split into key and value for produce: with a separator, the part before
/// its first occurrence is the key and the rest the value; otherwise (or when the line has
/// no separator) the key is null and the line is the value. The views borrow `line`.
struct key_value {
  nullable_bytes key = nullable_bytes::null();
  nullable_bytes value = nullable_bytes::null();
};
key_value split_line(std::string_view line, const std::optional<std::string>& separator);

/// RFC 4648 base64 with padding.
std::string base64(std::span<const std::byte> b);
/// Appends `s` as a JSON string literal (quotes included). Valid UTF-8 passes through;
/// '"', '\\' and control characters are escaped (controls as \uXXXX); bytes that are
/// not valid UTF-8 become U+FFFD, as a Java String decode of a header key would.
void append_json_string(std::string& out, std::string_view s);
/// The record as one JSON object (no newline):
/// {"offset":N,"timestamp":N,"key":B64|null,"value":B64|null,"headers":[{"key":"…","value":B64|null}]}
std::string record_json(const record_view& r);
/// The same object with the partition first: {"partition":P,"offset":N,...} (topic mode).
std::string record_json(const record_view& r, partition_id p);

/// True if `b` is valid UTF-8 without control characters (so it can be shown as text).
bool is_printable_text(std::span<const std::byte> b);
/// For humans: null, "text" (quoted, \" and \\ escaped) when printable, else 0x<hex>.
std::string display_bytes(const nullable_bytes& b);

}  // namespace brook::cli

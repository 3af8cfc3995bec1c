// Running the `brook` tool from tests: a child process (fork + exec) with its stdin fed and
// stdout/stderr captured under a deadline after which it is killed, plus decoding of the
// JSON record lines `consume --json` and `dump-log --json` print.
//
// Empty unless BROOK_CLI_PATH (the tool's path) is defined: tests/tools/CMakeLists.txt
// defines it for the CLI test executables when the tool is built.
//
// Thread-safety: none; one test thread.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#ifdef BROOK_CLI_PATH

namespace brook::test::cli {

using namespace std::chrono_literals;

struct run_result {
  int exit_code = -1;  ///< -1: killed at the deadline
  std::string out;
  std::string err;
};

/// A running `brook` child with pipes to its stdin, stdout and stderr.
class child {
 public:
  explicit child(const std::vector<std::string>& args) {
    int in[2], out[2], err[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    std::vector<std::string> argv_s{BROOK_CLI_PATH};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    // A child may exit before reading all its input (e.g. it refuses a bad flag): writing to
    // its stdin then must fail with EPIPE, not kill the test with SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
    ::fcntl(in_, F_SETFL, O_NONBLOCK);
  }
  child(const child&) = delete;
  ~child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
    }
    for (int fd : {in_, out_, err_})
      if (fd >= 0) ::close(fd);
  }

  /// Sends `sig` to the child (e.g. SIGTERM to end a `--follow`); finish() then collects it.
  void send_signal(int sig) {
    if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
  }

  /// Reads the child's output until its stderr contains `needle` (true) or the deadline
  /// passes or both pipes close (false). What was read is kept for finish().
  bool wait_stderr(std::string_view needle, std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (err_buf_.find(needle) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms || (out_ < 0 && err_ < 0)) return false;
      pump("", nullptr, left);
    }
    return true;
  }

  /// Reads the child's output until its stdout holds a whole first line, and returns that
  /// line (without '\n'); nullopt when the deadline passes or both pipes close first. What
  /// was read is kept for finish().
  std::optional<std::string> wait_stdout_line(std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out_buf_.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms || (out_ < 0 && err_ < 0)) return std::nullopt;
      pump("", nullptr, left);
    }
    return out_buf_.substr(0, out_buf_.find('\n'));
  }

  /// Feeds `input` then closes stdin, collects output until the child exits or the deadline.
  run_result finish(const std::string& input = "", std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::size_t written = 0;
    if (input.empty()) close_fd(in_);
    run_result r;
    while (out_ >= 0 || err_ >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) {
        ::kill(pid_, SIGKILL);
        int st;
        ::waitpid(pid_, &st, 0);
        reaped_ = true;
        r.exit_code = -1;
        take_output(r);
        return r;
      }
      pump(input, &written, left);
    }
    take_output(r);
    // Both pipes closed: the child is exiting.
    for (;;) {
      int st = 0;
      pid_t w = ::waitpid(pid_, &st, WNOHANG);
      if (w == pid_) {
        reaped_ = true;
        r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return r;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        reaped_ = true;
        return r;
      }
      std::this_thread::sleep_for(5ms);
    }
  }

 private:
  /// One poll round (at most 100 ms): appends what stdout and stderr have to the buffers
  /// and, unless `written` is null, feeds stdin from `input` at `*written` (closing it once
  /// all is written).
  void pump(const std::string& input, std::size_t* written, std::chrono::milliseconds left) {
    std::vector<pollfd> fds;
    if (in_ >= 0 && written) fds.push_back({in_, POLLOUT, 0});
    if (out_ >= 0) fds.push_back({out_, POLLIN, 0});
    if (err_ >= 0) fds.push_back({err_, POLLIN, 0});
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left.count(), 100)));
    if (n <= 0) return;
    for (auto& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in_) {
        ssize_t w = ::write(in_, input.data() + *written, input.size() - *written);
        if (w > 0) *written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN) *written = input.size();
        if (*written >= input.size()) close_fd(in_);
      } else {
        char buf[65536];
        ssize_t k = ::read(p.fd, buf, sizeof buf);
        std::string& dst = p.fd == out_ ? out_buf_ : err_buf_;
        if (k > 0) {
          dst.append(buf, static_cast<std::size_t>(k));
        } else if (k == 0 || errno != EINTR) {
          close_fd(p.fd == out_ ? out_ : err_);
        }
      }
    }
  }
  void take_output(run_result& r) {
    r.out = std::move(out_buf_);
    r.err = std::move(err_buf_);
    out_buf_.clear();
    err_buf_.clear();
  }
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  pid_t pid_ = -1;
  bool reaped_ = false;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string out_buf_, err_buf_;  // read so far
};

inline run_result brook_cli(const std::vector<std::string>& args, const std::string& input = "",
                            std::chrono::milliseconds timeout = 20s) {
  child c(args);
  auto r = c.finish(input, timeout);
  INFO("brook " <<
       [&] {
         std::string s;
         for (const auto& a : args) s += a + " ";
         return s;
       }() << "\nstdout:\n"
                << r.out << "\nstderr:\n"
                << r.err);
  REQUIRE(r.exit_code != -1);  // killed at the deadline
  return r;
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    auto nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

inline std::optional<std::string> base64_decode(const std::string& s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (s.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < s.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = s[i + k];
      if (c == '=') {
        if (i + 4 != s.size() || k < 2) return std::nullopt;
        v[k] = 0;
        ++pad;
      } else {
        if (pad > 0) return std::nullopt;
        v[k] = val(c);
        if (v[k] < 0) return std::nullopt;
      }
    }
    std::uint32_t x = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>((x >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((x >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(x & 0xff);
  }
  return out;
}

// --- a small JSON reader, enough for the record lines -------------------------------
struct json {
  enum kind_t { null_v, number_v, string_v, array_v, object_v, bool_v } kind = null_v;
  long long number = 0;
  std::string str;
  std::vector<json> items;
  std::map<std::string, json> fields;
  const json& operator[](const std::string& k) const { return fields.at(k); }
};

class json_parser {
 public:
  explicit json_parser(std::string_view s) : s_(s) {}
  json parse_document() {
    json v = value();
    ws();
    if (i_ != s_.size()) throw std::runtime_error("trailing characters");
    return v;
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  char peek() {
    ws();
    if (i_ >= s_.size()) throw std::runtime_error("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) throw std::runtime_error(std::string("expected ") + c);
    ++i_;
  }
  json value() {
    char c = peek();
    json v;
    if (c == '{') {
      v.kind = json::object_v;
      ++i_;
      if (peek() == '}') return ++i_, v;
      for (;;) {
        json k = value();
        if (k.kind != json::string_v) throw std::runtime_error("object key not a string");
        expect(':');
        v.fields[k.str] = value();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = json::array_v;
      ++i_;
      if (peek() == ']') return ++i_, v;
      for (;;) {
        v.items.push_back(value());
        if (peek() == ',') {
          ++i_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = json::string_v;
      ++i_;
      for (;;) {
        if (i_ >= s_.size()) throw std::runtime_error("unterminated string");
        unsigned char ch = static_cast<unsigned char>(s_[i_++]);
        if (ch == '"') return v;
        if (ch < 0x20) throw std::runtime_error("raw control character in a string");
        if (ch != '\\') {
          v.str += static_cast<char>(ch);
          continue;
        }
        char e = s_.at(i_++);
        switch (e) {
          case '"': v.str += '"'; break;
          case '\\': v.str += '\\'; break;
          case '/': v.str += '/'; break;
          case 'n': v.str += '\n'; break;
          case 't': v.str += '\t'; break;
          case 'r': v.str += '\r'; break;
          case 'b': v.str += '\b'; break;
          case 'f': v.str += '\f'; break;
          case 'u': {
            unsigned cp = static_cast<unsigned>(std::stoul(std::string(s_.substr(i_, 4)), nullptr, 16));
            i_ += 4;
            if (cp >= 0x80) throw std::runtime_error("test parser only decodes \\u escapes below 0x80");
            v.str += static_cast<char>(cp);
            break;
          }
          default: throw std::runtime_error("bad escape");
        }
      }
    }
    if (s_.substr(i_, 4) == "null") {
      i_ += 4;
      return v;
    }
    if (s_.substr(i_, 4) == "true" || s_.substr(i_, 5) == "false") {
      v.kind = json::bool_v;
      i_ += s_[i_] == 't' ? 4 : 5;
      return v;
    }
    std::size_t start = i_;
    if (s_[i_] == '-') ++i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    if (start == i_) throw std::runtime_error("unexpected character");
    v.kind = json::number_v;
    v.number = std::stoll(std::string(s_.substr(start, i_ - start)));
    return v;
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

inline json parse_json(const std::string& line) {
  INFO("json line: " << line);
  try {
    return json_parser(line).parse_document();
  } catch (const std::exception& e) {
    FAIL("invalid JSON: " << e.what());
  }
  return {};
}

/// A record as the JSON line carries it, decoded.
struct decoded_record {
  std::optional<long long> partition;  ///< topic-mode lines only
  long long offset = -1;
  long long timestamp = -1;
  std::optional<std::string> key, value;
  std::vector<std::pair<std::string, std::optional<std::string> > > headers;
};

inline std::optional<std::string> decode_b64_field(const json& j) {
  if (j.kind == json::null_v) return std::nullopt;
  REQUIRE(j.kind == json::string_v);
  auto d = base64_decode(j.str);
  REQUIRE(d.has_value());
  return d;
}

/// `with_partition`: the line is from a topic-mode consume and must carry "partition".
inline decoded_record decode_record_line(const std::string& line, bool with_partition = false) {
  json j = parse_json(line);
  REQUIRE(j.kind == json::object_v);
  REQUIRE(j.fields.size() == (with_partition ? 6u : 5u));
  decoded_record r;
  if (with_partition) {
    REQUIRE(j["partition"].kind == json::number_v);
    r.partition = j["partition"].number;
  }
  REQUIRE(j["offset"].kind == json::number_v);
  REQUIRE(j["timestamp"].kind == json::number_v);
  r.offset = j["offset"].number;
  r.timestamp = j["timestamp"].number;
  r.key = decode_b64_field(j["key"]);
  r.value = decode_b64_field(j["value"]);
  REQUIRE(j["headers"].kind == json::array_v);
  for (const auto& h : j["headers"].items) {
    REQUIRE(h["key"].kind == json::string_v);
    r.headers.emplace_back(h["key"].str, decode_b64_field(h["value"]));
  }
  return r;
}

inline std::vector<decoded_record> decode_records(const std::string& out, bool with_partition = false) {
  std::vector<decoded_record> rs;
  for (const auto& l : lines_of(out)) rs.push_back(decode_record_line(l, with_partition));
  return rs;
}

}  // namespace brook::test::cli

#endif  // BROOK_CLI_PATH

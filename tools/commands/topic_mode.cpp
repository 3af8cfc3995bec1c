#include "commands/topic_mode.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include <brook/storage/partition_files.hpp>
#include <brook/storage/topic_config.hpp>

#include "commands/cli_codecs.hpp"
#include "commands/serve_address.hpp"

namespace brook::cli {

result<std::unique_ptr<data_dir>> open_data_dir(const fs::path& dir, bool read_only, bool create) {
  std::error_code ec;
  if (!create && !fs::is_directory(dir, ec))
    return make_error(errc::log_dir_not_found, "{}: no such data directory", dir.string());
  data_dir_options opts = cli_data_dir_options();
  opts.read_only = read_only;
  auto d = data_dir::open(dir, std::move(opts));
  if (!d && d.error() == errc::log_dir_locked)  // the library's message names the holder
    return make_error(errc::log_dir_locked,
                      "{}; topics --list/--describe and consume still work, they open it read-only",
                      with_serve_hint(d.error(), dir).message());
  return d;
}

result<void> housekeep_and_close(data_dir& dd) {
  auto t = dd.tick();
  auto c = dd.close();
  if (!t) return t.error();
  return c;
}

result<std::int32_t> topic_partitions(const data_dir& dd, const std::string& topic) {
  BROOK_TRY(validate_topic_name(topic));
  auto n = dd.partition_count(topic);
  if (!n) return brook::error(n.error().code(), fmt::format("{}: unknown topic '{}'", dd.path().string(), topic));
  return *n;
}

std::vector<std::pair<std::string, std::uintmax_t>> topic_fingerprint(const fs::path& dir, const std::string& topic) {
  std::vector<std::pair<std::string, std::uintmax_t>> out;
  std::error_code ec;
  const std::string prefix = topic + "-";
  for (const auto& de : fs::directory_iterator(dir, ec)) {
    const std::string name = de.path().filename().string();
    if (!name.starts_with(prefix) || name.size() == prefix.size() ||
        name.find_first_not_of("0123456789", prefix.size()) != std::string::npos)
      continue;  // another topic, or "<topic>-<n>-delete"
    std::error_code ec2;
    for (const auto& f : fs::directory_iterator(de.path(), ec2)) {
      if (f.path().extension() != partition_files::log_suffix) continue;
      std::error_code ec3;
      auto sz = f.file_size(ec3);
      out.emplace_back(name + "/" + f.path().filename().string(), ec3 ? 0 : sz);
    }
    out.emplace_back(name, 0);  // a new, still empty partition counts too
  }
  const fs::path cfg = dir / data_dir::configs_file;
  std::error_code ec_size, ec_time;
  const auto size = fs::file_size(cfg, ec_size);
  const auto mtime = fs::last_write_time(cfg, ec_time);
  out.emplace_back(
      std::string(data_dir::configs_file) + "@" + (ec_time ? "" : std::to_string(mtime.time_since_epoch().count())),
      ec_size ? 0 : size);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace brook::cli

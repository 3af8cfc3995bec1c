#include "commands/group_mode.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "commands/topic_mode.hpp"

namespace brook::cli {

namespace {

/// The exclusive flock of /proc/locks on the file with this device and inode: nullopt when
/// /proc/locks cannot be read. Lines look like
///   "1: FLOCK  ADVISORY  WRITE 26140 fe:00:11341349 0 EOF"   (major:minor in hex, inode)
/// and "1: -> FLOCK ..." for a process waiting for a lock (not a holder).
std::optional<bool> exclusive_flock_listed(dev_t dev, ino_t ino) {
  std::FILE* f = std::fopen("/proc/locks", "re");
  if (f == nullptr) return std::nullopt;
  bool found = false;
  char buf[512];
  while (!found && std::fgets(buf, sizeof buf, f) != nullptr) {
    std::vector<std::string_view> fields;
    std::string_view line(buf);
    for (std::size_t pos = 0; pos < line.size();) {
      const std::size_t start = line.find_first_not_of(" \t\n", pos);
      if (start == std::string_view::npos) break;
      const std::size_t end = std::min(line.find_first_of(" \t\n", start), line.size());
      fields.push_back(line.substr(start, end - start));
      pos = end;
    }
    // id: TYPE MODE ACCESS PID MAJ:MIN:INODE START END
    if (fields.size() < 6 || fields[1] != "FLOCK" || fields[3] != "WRITE") continue;
    const std::string_view id = fields[5];
    const std::size_t c1 = id.find(':'), c2 = id.find(':', c1 == std::string_view::npos ? 0 : c1 + 1);
    if (c1 == std::string_view::npos || c2 == std::string_view::npos) continue;
    unsigned maj = 0, min = 0;
    unsigned long long inode = 0;
    auto hex = [](std::string_view t, unsigned& v) {
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, 16);
      return ec == std::errc() && p == t.data() + t.size();
    };
    auto [p, ec] = std::from_chars(id.data() + c2 + 1, id.data() + id.size(), inode);
    if (!hex(id.substr(0, c1), maj) || !hex(id.substr(c1 + 1, c2 - c1 - 1), min) || ec != std::errc() ||
        p != id.data() + id.size())
      continue;
    found = maj == major(dev) && min == minor(dev) && inode == ino;
  }
  std::fclose(f);
  return found;
}

}  // namespace

result<bool> dir_in_use(const fs::path& dir) {
  const fs::path lock = dir / data_dir::lock_file;
  struct stat st {};
  if (::stat(lock.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;  // never opened for writing
    return make_system_error(errno, "stat {}", lock.string());
  }
  if (auto listed = exclusive_flock_listed(st.st_dev, st.st_ino)) return *listed;
  // No /proc/locks: probe with a shared lock, released at once.
  int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_system_error(errno, "open {}", lock.string());
  int r;
  do {
    r = ::flock(fd, LOCK_SH | LOCK_NB);
  } while (r != 0 && errno == EINTR);
  const int e = errno;
  ::close(fd);  // releases the shared lock if it was taken
  if (r == 0) return false;
  if (e == EWOULDBLOCK) return true;
  return make_system_error(e, "flock {}", lock.string());
}

result<stored_groups> load_stored_groups(const fs::path& dir) {
  stored_groups out;
  auto in_use = dir_in_use(dir);
  if (!in_use) return in_use.error();
  out.in_use = *in_use;
  auto dd = open_data_dir(dir, /*read_only=*/true);
  if (!dd) return dd.error();
  out.dd = std::move(*dd);
  auto store = offset_store::open(*out.dd);
  if (!store) return store.error();
  auto groups = (*store)->load();
  if (!groups) return groups.error();
  out.groups = std::move(*groups);
  return out;
}

group_view view_of(const stored_group& g, bool dir_in_use) {
  group_view v;
  const std::size_t stored = g.metadata ? g.metadata->members.size() : 0;
  if (stored > 0 && dir_in_use) {
    // Metadata with members is stored when a rebalance completes: the group was Stable.
    v.state = "Stable";
    v.has_members = true;
  } else {
    // No process owns the directory: members of the process that stored them are gone
    // (a coordinator opening the directory would restart the group Empty).
    v.state = "Empty";
    v.stale_members = stored;
  }
  return v;
}

std::string table_text(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) line += fmt::format("{:<{}}  ", row[c], width[c]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

namespace {
/// The decimal number of exactly `digits` digits at text[pos...].
std::optional<int> digits_at(std::string_view text, std::size_t pos, std::size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}
}  // namespace

std::optional<std::int64_t> parse_datetime(std::string_view text) {
  // 0123456789012345678901234
  // YYYY-MM-DDTHH:mm:SS.sss+hh:mm
  auto y = digits_at(text, 0, 4), mo = digits_at(text, 5, 2), d = digits_at(text, 8, 2);
  auto h = digits_at(text, 11, 2), mi = digits_at(text, 14, 2), s = digits_at(text, 17, 2);
  if (!y || !mo || !d || !h || !mi || !s || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':')
    return std::nullopt;
  std::size_t pos = 19;
  int ms = 0;
  if (pos < text.size() && text[pos] == '.') {
    auto f = digits_at(text, pos + 1, 3);
    if (!f) return std::nullopt;
    ms = *f;
    pos += 4;
  }
  std::int64_t zone_ms = 0;
  std::string_view zone = text.substr(pos);
  if (zone == "Z") {
    // UTC
  } else if (!zone.empty()) {
    auto zh = digits_at(zone, 1, 2), zm = digits_at(zone, 4, 2);
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' || !zh || !zm || *zh > 23 || *zm > 59)
      return std::nullopt;
    zone_ms = (std::int64_t{*zh} * 60 + *zm) * 60'000 * (zone[0] == '+' ? 1 : -1);
  }
  using namespace std::chrono;
  const year_month_day ymd{year(*y), month(static_cast<unsigned>(*mo)), day(static_cast<unsigned>(*d))};
  if (!ymd.ok() || *h > 23 || *mi > 59 || *s > 59) return std::nullopt;
  const std::int64_t days = sys_days(ymd).time_since_epoch().count();
  // Local time at offset +hh:mm is UTC + offset: subtract it to get UTC.
  return ((days * 24 + *h) * 60 + *mi) * 60'000 + std::int64_t{*s} * 1000 + ms - zone_ms;
}

}  // namespace brook::cli

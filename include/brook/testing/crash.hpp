// Crashes for tests, behind the I/O seam: a process crash is an object whose file system
// stopped (faulty_file_system::kill) and that then closes, so nothing more reaches its
// files; a power loss then cuts what was not flushed.
//
//   brook::testing::broker_disks disks;                 // one faulty_file_system per broker
//   cluster_config cfg;
//   cfg.broker_files = disks.hook();
//   auto c = cluster::open(root, cfg);
//   brook::testing::crash_broker(**c, disks, broker_id{2}, crash_mode::flush_point);
//
// crash_mode::process keeps what was written (the page cache survives a process crash);
// flush_point cuts every log at its last flush (power loss); random_byte cuts at a random
// byte between the last flush and the end (a torn write). The controller notices a crashed
// broker by its session timeout (or a restart's re-registration).
//
// Part of the opt-in testing/ layer: the library never includes it.
// Thread-safety: broker_disks is thread-safe; crash_broker as cluster::stop_broker.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/replication/cluster.hpp>
#include <brook/storage/file_system.hpp>
#include <brook/storage/partition_files.hpp>
#include <brook/storage/segment.hpp>
#include <brook/testing/faulty_file_system.hpp>

namespace brook::testing {

enum class crash_mode {
  process,      ///< kill -9: what was written survives
  flush_point,  ///< power loss: everything after the last flush is gone
  random_byte,  ///< power loss mid-write: cut at a random byte after the last flush
};

/// Closes `obj` (a partition_log, a data_dir, a broker: anything with close()) as a process
/// crash leaves it: its file system `files` stops first, so the close writes nothing (no
/// flush, no checkpoint) and only releases what it holds; then `files` works again.
template <class Closable>
void crash_close(Closable& obj, faulty_file_system& files) {
  files.kill();
  (void)obj.close();
  files.revive();
}

/// A broker's crash: as above, and closed uncontrolled, so delayed produces fail with
/// request_timed_out as the clients of a broker that vanished see them.
inline void crash_close(broker& b, faulty_file_system& files) {
  files.kill();
  (void)b.close(shutdown_mode::uncontrolled);
  files.revive();
}

/// One faulty_file_system per broker of a cluster (cluster_config::broker_files = hook()).
class broker_disks {
 public:
  /// What cluster_config::broker_files wants. The returned function shares this object's
  /// state, so it may outlive the object.
  std::function<std::shared_ptr<file_system>(broker_id)> hook() {
    return [s = state_](broker_id id) -> std::shared_ptr<file_system> { return s->of(id); };
  }
  /// Broker `id`'s disk (created on first use).
  faulty_file_system& of(broker_id id) { return *state_->of(id); }

 private:
  struct state {
    std::mutex mu;
    std::map<broker_id, std::shared_ptr<faulty_file_system>> disks;
    std::shared_ptr<faulty_file_system> of(broker_id id) {
      std::lock_guard l(mu);
      auto& d = disks[id];
      if (!d) d = std::make_shared<faulty_file_system>();
      return d;
    }
  };
  std::shared_ptr<state> state_ = std::make_shared<state>();
};

namespace detail {

/// Keeps the first `len` bytes of `p`: a new file renamed over it, so whoever still maps the
/// old inode (another broker's fetch in flight, a consumer's slice) keeps valid bytes, where
/// ftruncate would make their next access fault (SIGBUS).
inline result<void> cut_file(const std::filesystem::path& p, std::uint64_t len) {
  auto tmp = p;
  tmp += ".crash-cut";
  {
    std::ifstream in(p, std::ios::binary);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!in || !out) return make_error(errc::kafka_storage_error, "cut {}: cannot open", p.string());
    std::vector<char> buf(1 << 16);
    for (std::uint64_t left = len; left > 0;) {
      const auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(left, buf.size()));
      if (!in.read(buf.data(), n) || !out.write(buf.data(), n))
        return make_error(errc::kafka_storage_error, "cut {}: copy failed", p.string());
      left -= static_cast<std::uint64_t>(n);
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, p, ec);
  if (ec) return make_system_error(ec.value(), "cut {}: rename", p.string());
  return ok();
}

/// Byte position of the first batch at or after `o` in a segment file (its size if none).
inline std::uint64_t byte_of_offset(const std::filesystem::path& p, offset o, std::uint64_t size) {
  std::ifstream in(p, std::ios::binary);
  std::uint64_t pos = 0;
  std::byte hdr[12];
  while (pos + 12 <= size) {
    in.seekg(static_cast<std::streamoff>(pos));
    if (!in.read(reinterpret_cast<char*>(hdr), 12)) break;
    std::int64_t base = 0;
    std::int32_t len = 0;
    for (int i = 0; i < 8; ++i) base = (base << 8) | static_cast<std::int64_t>(std::to_integer<std::uint8_t>(hdr[i]));
    for (int i = 8; i < 12; ++i) len = (len << 8) | static_cast<std::int32_t>(std::to_integer<std::uint8_t>(hdr[i]));
    if (len <= 0 || base >= o.value()) break;
    pos += 12 + static_cast<std::uint64_t>(len);
  }
  return std::min(pos, size);
}

/// Cuts the log under `dir` after offset `rp` (its last flush): at rp, or at a random byte
/// of what follows. Segments after the cut are removed whole.
inline result<void> cut_after(const std::filesystem::path& dir, offset rp, crash_mode mode, std::mt19937_64& rng) {
  namespace sfs = std::filesystem;
  std::vector<std::pair<offset, sfs::path>> segs;
  std::error_code ec;
  for (const auto& de : sfs::directory_iterator(dir, ec))
    if (de.path().extension() == partition_files::log_suffix)
      if (auto base = partition_files::parse_base(de.path().stem().string())) segs.emplace_back(*base, de.path());
  std::sort(segs.begin(), segs.end());
  // The segment holding rp, and the byte where rp starts in it.
  std::size_t first = 0;
  for (std::size_t i = 0; i < segs.size(); ++i)
    if (segs[i].first <= rp) first = i;
  std::vector<std::uint64_t> start(segs.size(), 0), size(segs.size(), 0);
  std::uint64_t total = 0;
  for (std::size_t i = first; i < segs.size(); ++i) {
    size[i] = sfs::file_size(segs[i].second, ec);
    if (i == first) start[i] = byte_of_offset(segs[i].second, rp, size[i]);
    total += size[i] - start[i];
  }
  std::uint64_t k = 0;
  if (mode == crash_mode::random_byte && total > 0) k = std::uniform_int_distribution<std::uint64_t>(0, total)(rng);
  bool cut = false;
  for (std::size_t i = first; i < segs.size(); ++i) {
    if (cut) {
      segment::remove_files(*posix_file_system::shared(), dir, segs[i].first);
      continue;
    }
    const std::uint64_t avail = size[i] - start[i];
    if (k >= avail && i + 1 < segs.size()) {
      k -= avail;
      continue;
    }
    BROOK_TRY(cut_file(segs[i].second, start[i] + std::min(k, avail)));
    cut = true;
  }
  return ok();
}

}  // namespace detail

/// Crashes broker `id` of `c`, whose disks are `disks`: its disk stops, it stops without a
/// controlled shutdown (writing nothing), its disk works again, and for the power-loss
/// modes every log is cut after its last flush. `seed` picks the cut of random_byte.
/// Errors: broker_not_available (not running), the cut's.
inline result<void> crash_broker(cluster& c, broker_disks& disks, broker_id id, crash_mode mode,
                                 std::uint64_t seed = 0) {
  auto b = c.broker(id);
  if (!b) return make_error(errc::broker_not_available, "broker {} is not running", id);
  if (&b->dir().files() != &disks.of(id))
    return make_error(errc::invalid_request,
                      "broker {} does not write through these disks (set "
                      "cluster_config::broker_files = disks.hook())",
                      id);
  disks.of(id).kill();  // from here on nothing reaches its files, and no flush succeeds
  // What was flushed, per partition directory, before the crash.
  std::vector<std::pair<std::filesystem::path, offset>> flushed;
  for (const auto& t : b->dir().list_topics()) {
    auto n = b->dir().partition_count(t);
    for (std::int32_t p = 0; n && p < *n; ++p)
      if (auto part = b->dir().get_partition(t, partition_id(p)))
        flushed.emplace_back((*part)->log().dir(), (*part)->log().recovery_point());
  }
  b.reset();
  auto stopped = c.stop_broker(id, shutdown_mode::uncontrolled);
  disks.of(id).revive();
  if (!stopped && stopped.error() == errc::broker_not_available) return stopped.error();
  if (mode != crash_mode::process) {
    std::mt19937_64 rng(seed);
    for (const auto& [dir, rp] : flushed) BROOK_TRY(detail::cut_after(dir, rp, mode, rng));
  }
  return ok();
}

}  // namespace brook::testing

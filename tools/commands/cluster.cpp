// brook cluster --data-dir D --describe [--json]
//
// kafka-topics.sh --describe and kafka-metadata-quorum.sh for an in-process cluster
// (replication/cluster.hpp) on disk:
//
//   D/controller/__cluster_metadata-0/     the metadata log, replayed into a cluster_image
//   D/broker-<id>/<topic>-<p>/             each broker's replica of a partition, with its
//                                          replication-offset-checkpoint (high watermark)
//
// Everything is opened read-only (no lock taken, nothing written), so it works while the
// process running the cluster has it open. What it shows is then the metadata as of the
// last whole batch of the metadata log, and high watermarks as the brokers last
// checkpointed them.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include <brook/replication/cluster_image.hpp>
#include <brook/replication/metadata_log.hpp>
#include <brook/storage/checkpoint_file.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/partition_files.hpp>

#include "commands/cli_codecs.hpp"
#include "commands/commands.hpp"
#include "commands/group_mode.hpp"

namespace brook::cli {

const command_spec cluster_spec{"cluster",
                                "--data-dir D --describe [--json]",
                                "Describe a replicated cluster: its brokers, leaders, ISRs and high watermarks.",
                                R"txt(D is the root of an in-process cluster (brook/replication/cluster.hpp):
D/controller/__cluster_metadata-0 is its metadata log (KRaft's records), and each
broker keeps its replicas in its own data directory D/broker-<id>.

The metadata log and the brokers' data directories are opened read-only: no lock,
nothing written, so it works while a process runs the cluster. The metadata shown is
then as of the last whole batch of the metadata log, and high watermarks are as the
brokers last checkpointed them (every replica.high.watermark.checkpoint.interval.ms,
5 s, and on a clean stop); a note on stderr names the brokers whose data directory a
running process owns.

Output:
  a line with the controller epoch and the metadata log end offset;
  one row per registered broker: BROKER, EPOCH (its broker epoch), STATE (alive, or
  fenced: not heartbeating, stopped or crashed, so it leads nothing), DATA-DIR
  (in-use: a running process owns D/broker-<id>; idle; missing);
  one row per partition, sorted by topic and partition: TOPIC, PARTITION, LEADER (none
  when offline), LEADER-EPOCH, REPLICAS (the preferred leader first), ISR,
  HIGH-WATERMARK (the leader's replication-offset-checkpoint; for a partition without
  a leader the highest one of its replicas, marked * with a footnote naming the
  broker; - when there is none), LOG-END-OFFSET (the end of the leader's log, - when
  offline), then a marker: UNDER-REPLICATED (fewer in-sync replicas than replicas)
  and/or OFFLINE (no leader);
  a summary line: "N partitions: U under-replicated, O offline."

Options:
  --data-dir D   the cluster's root directory (required)
  --describe     describe the cluster (the only action, required)
  --json         one JSON object on one line instead:
                 {"cluster":D,"controller_epoch":N,"metadata_log_end_offset":N,
                  "brokers":[{"id":N,"epoch":N,"state":"alive"|"fenced",
                              "data_dir":"in-use"|"idle"|"missing"|null}],
                  "partitions":[{"topic":T,"partition":N,"leader":N|null,
                                 "leader_epoch":N,"partition_epoch":N,
                                 "replicas":[N],"isr":[N],"high_watermark":N|null,
                                 "high_watermark_from":"leader"|"replica"|null,
                                 "high_watermark_broker":N|null,
                                 "log_end_offset":N|null,
                                 "under_replicated":B,"offline":B}],
                  "summary":{"partitions":N,"under_replicated":N,"offline":N}}
  -h, --help     this help

Exit: 0 ok; 1 error: D is not a cluster directory, the metadata log cannot be
replayed, or a broker's checkpoint or log could not be read (the description is
still printed, with - / null where the value is missing, and each problem goes to
stderr as "brook: CODE: ..."); 2 usage error.)txt",
                                {{"--data-dir", true}, {"--describe", false}, {"--json", false}},
                                0,
                                0};

namespace {

/// What the description shows of one partition.
struct partition_row {
  std::string topic;
  partition_id partition{0};
  partition_state state;
  std::optional<offset> high_watermark;
  std::optional<broker_id> hw_broker;  ///< whose checkpoint high_watermark is
  std::optional<offset> log_end;
};

struct broker_row {
  broker_registration reg;
  std::optional<std::string> data_dir;  ///< "in-use", "idle", "missing"; nullopt: unknown (a problem)
};

/// Reads a cluster directory's brokers read-only, collecting problems instead of stopping
/// at the first: a describe is most wanted when something is broken.
class cluster_reader {
 public:
  explicit cluster_reader(fs::path root) : root_(std::move(root)) {}

  fs::path broker_dir(broker_id id) const { return root_ / fmt::format("broker-{}", id); }

  /// The high watermark broker `id` last checkpointed for topic-p; nullopt without a
  /// checkpoint (a broker checkpoints after its first interval or on a clean stop).
  std::optional<offset> checkpointed_hw(broker_id id, const std::string& topic, partition_id p) {
    const fs::path file =
        broker_dir(id) / fmt::format("{}-{}", topic, p) / partition_files::replication_offset_checkpoint;
    auto lines = read_checkpoint(*posix_file_system::shared(), file, 3);
    if (!lines) return problem(lines.error()), std::nullopt;
    for (const auto& l : *lines) {
      if (l[0] != topic || l[1] != std::to_string(p.value())) continue;
      auto v = parse_checkpoint_int<std::int64_t>(file, l[2]);
      if (!v) return problem(v.error()), std::nullopt;
      return offset(*v);
    }
    if (!lines->empty())
      problem(make_error(errc::kafka_storage_error, "{}: no entry for {}-{}", file.string(), topic, p));
    return std::nullopt;
  }

  /// The end of broker `id`'s log of topic-p, through a read-only open of its data directory.
  std::optional<offset> log_end(broker_id id, const std::string& topic, partition_id p) {
    data_dir* dd = open_broker(id);
    if (dd == nullptr) return std::nullopt;
    auto part = dd->get_partition(topic, p);
    if (!part) {
      problem(brook::error(part.error().code(),
                           fmt::format("{}: {}-{}: {}", dd->path().string(), topic, p, part.error().message())));
      return std::nullopt;
    }
    return (*part)->log_end_offset();
  }

  /// "in-use", "idle" or "missing" for broker `id`'s data directory.
  std::optional<std::string> data_dir_state(broker_id id) {
    std::error_code ec;
    if (!fs::is_directory(broker_dir(id), ec)) return "missing";
    auto in_use = dir_in_use(broker_dir(id));
    if (!in_use) return problem(in_use.error()), std::nullopt;
    return *in_use ? "in-use" : "idle";
  }

  void problem(brook::error e) { problems_.push_back(std::move(e)); }
  const std::vector<brook::error>& problems() const noexcept { return problems_; }

 private:
  /// Broker `id`'s data directory opened read-only, once; null (and a problem, once) when
  /// it cannot be opened.
  data_dir* open_broker(broker_id id) {
    auto it = dirs_.find(id);
    if (it != dirs_.end()) return it->second.get();
    std::unique_ptr<data_dir> d;
    const fs::path dir = broker_dir(id);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      problem(make_error(errc::log_dir_not_found, "{}: broker {} has no data directory", dir.string(), id));
    } else {
      data_dir_options o = cli_data_dir_options();
      o.read_only = true;
      auto r = data_dir::open(dir, std::move(o));
      if (r)
        d = std::move(*r);
      else
        problem(r.error());
    }
    return dirs_.emplace(id, std::move(d)).first->second.get();
  }

  fs::path root_;
  std::map<broker_id, std::unique_ptr<data_dir>> dirs_;
  std::vector<brook::error> problems_;
};

std::string ids_text(const std::vector<broker_id>& ids) {
  return ids.empty() ? "-" : fmt::format("{}", fmt::join(ids, ","));
}

std::string opt_text(const std::optional<offset>& o) { return o ? std::to_string(o->value()) : "-"; }

template <typename T>
std::string json_opt(const std::optional<T>& v) {
  if (!v) return "null";
  if constexpr (std::is_same_v<T, offset>)
    return std::to_string(v->value());
  else
    return fmt::format("{}", *v);
}

std::string json_ids(const std::vector<broker_id>& ids) { return fmt::format("[{}]", fmt::join(ids, ",")); }

std::string markers(const partition_state& s) {
  std::string m;
  if (s.offline()) m = "OFFLINE";
  if (s.under_replicated()) m += m.empty() ? "UNDER-REPLICATED" : " UNDER-REPLICATED";
  return m;
}

std::string text_output(const fs::path& root, const cluster_image& img, offset metadata_end,
                        const std::vector<broker_row>& brokers, const std::vector<partition_row>& rows) {
  std::string out = fmt::format("Cluster: {}\tControllerEpoch: {}\tMetadataLogEndOffset: {}\n\n", root.string(),
                                img.controller_epoch(), metadata_end.value());
  if (brokers.empty()) {
    out += "No brokers registered.\n";
  } else {
    std::vector<std::vector<std::string>> t{{"BROKER", "EPOCH", "STATE", "DATA-DIR"}};
    for (const auto& b : brokers)
      t.push_back({fmt::format("{}", b.reg.id), std::to_string(b.reg.epoch), b.reg.fenced ? "fenced" : "alive",
                   b.data_dir.value_or("?")});
    out += table_text(t);
  }
  out += '\n';
  std::size_t under = 0, offline = 0;
  std::string notes;
  if (rows.empty()) {
    out += "No topics.\n";
  } else {
    std::vector<std::vector<std::string>> t{
        {"TOPIC", "PARTITION", "LEADER", "LEADER-EPOCH", "REPLICAS", "ISR", "HIGH-WATERMARK", "LOG-END-OFFSET", ""}};
    for (const auto& r : rows) {
      const partition_state& s = r.state;
      under += s.under_replicated() ? 1 : 0;
      offline += s.offline() ? 1 : 0;
      std::string hw = opt_text(r.high_watermark);
      if (s.offline() && r.high_watermark) {
        hw += '*';
        notes +=
            fmt::format("* {}-{} has no leader: the highest high watermark its replicas checkpointed (broker {}'s).\n",
                        r.topic, r.partition, *r.hw_broker);
      }
      t.push_back({r.topic, fmt::format("{}", r.partition), s.has_leader() ? fmt::format("{}", s.leader) : "none",
                   fmt::format("{}", s.leader_epoch), ids_text(s.replicas), ids_text(s.isr), hw, opt_text(r.log_end),
                   markers(s)});
    }
    out += table_text(t);
  }
  if (!notes.empty()) out += '\n' + notes;
  out += fmt::format("\n{} partition{}: {} under-replicated, {} offline.\n", rows.size(), rows.size() == 1 ? "" : "s",
                     under, offline);
  return out;
}

std::string json_output(const fs::path& root, const cluster_image& img, offset metadata_end,
                        const std::vector<broker_row>& brokers, const std::vector<partition_row>& rows) {
  std::string out = "{\"cluster\":";
  append_json_string(out, root.string());
  out += fmt::format(",\"controller_epoch\":{},\"metadata_log_end_offset\":{},\"brokers\":[", img.controller_epoch(),
                     metadata_end.value());
  for (std::size_t i = 0; i < brokers.size(); ++i) {
    const auto& b = brokers[i];
    out += fmt::format("{}{{\"id\":{},\"epoch\":{},\"state\":\"{}\",\"data_dir\":", i ? "," : "", b.reg.id, b.reg.epoch,
                       b.reg.fenced ? "fenced" : "alive");
    if (b.data_dir)
      append_json_string(out, *b.data_dir);
    else
      out += "null";
    out += '}';
  }
  out += "],\"partitions\":[";
  std::size_t under = 0, offline = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const partition_state& s = r.state;
    under += s.under_replicated() ? 1 : 0;
    offline += s.offline() ? 1 : 0;
    out += i ? ",{\"topic\":" : "{\"topic\":";
    append_json_string(out, r.topic);
    const char* from = !r.high_watermark ? "null" : s.offline() ? "\"replica\"" : "\"leader\"";
    out += fmt::format(
        ",\"partition\":{},\"leader\":{},\"leader_epoch\":{},\"partition_epoch\":{},\"replicas\":{},\"isr\":{},"
        "\"high_watermark\":{},\"high_watermark_from\":{},\"high_watermark_broker\":{},\"log_end_offset\":{},"
        "\"under_replicated\":{},\"offline\":{}}}",
        r.partition, s.has_leader() ? fmt::format("{}", s.leader) : "null", s.leader_epoch, s.partition_epoch,
        json_ids(s.replicas), json_ids(s.isr), json_opt(r.high_watermark), from,
        r.high_watermark ? json_opt(r.hw_broker) : "null", json_opt(r.log_end), s.under_replicated(), s.offline());
  }
  out += fmt::format("],\"summary\":{{\"partitions\":{},\"under_replicated\":{},\"offline\":{}}}}}\n", rows.size(),
                     under, offline);
  return out;
}

int describe_cluster(const fs::path& root, bool json) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return fail(make_error(errc::log_dir_not_found, "{}: no such directory", root.string()));
  const fs::path controller = root / "controller";
  if (!fs::is_directory(controller / metadata_log::partition_dir_name, ec))
    return fail(make_error(errc::log_dir_not_found,
                           "{}: not a cluster directory (it has no controller/{}, the cluster's metadata log)",
                           root.string(), metadata_log::partition_dir_name));
  metadata_log_options mo;
  mo.read_only = true;
  auto log = metadata_log::open(controller, std::move(mo));
  if (!log) return fail(log.error());
  const std::shared_ptr<const cluster_image> img = (*log)->image();
  const offset metadata_end = (*log)->end_offset();
  (void)(*log)->close();

  cluster_reader reader(root);
  std::vector<broker_row> brokers;
  std::vector<broker_id> running;
  for (const auto& [id, reg] : img->brokers()) {
    brokers.push_back({reg, reader.data_dir_state(id)});
    if (brokers.back().data_dir == "in-use") running.push_back(id);
  }
  std::vector<partition_row> rows;
  for (const auto& [name, t] : img->topics()) {
    for (std::size_t i = 0; i < t.partitions.size(); ++i) {
      partition_row r;
      r.topic = name;
      r.partition = partition_id(static_cast<std::int32_t>(i));
      r.state = t.partitions[i];
      if (r.state.has_leader()) {
        r.high_watermark = reader.checkpointed_hw(r.state.leader, name, r.partition);
        r.hw_broker = r.state.leader;
        r.log_end = reader.log_end(r.state.leader, name, r.partition);
      } else {
        // Offline: what the replicas committed, the best any of them knows.
        for (broker_id b : r.state.replicas) {
          std::error_code e2;
          if (!fs::is_directory(reader.broker_dir(b) / fmt::format("{}-{}", name, i), e2)) continue;
          auto hw = reader.checkpointed_hw(b, name, r.partition);
          if (hw && (!r.high_watermark || *hw > *r.high_watermark)) {
            r.high_watermark = hw;
            r.hw_broker = b;
          }
        }
      }
      rows.push_back(std::move(r));
    }
  }

  const std::string out = json ? json_output(root, *img, metadata_end, brokers, rows)
                               : text_output(root, *img, metadata_end, brokers, rows);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  if (!running.empty())
    fmt::print(stderr,
               "note: a running process owns the data directory of broker{} {}: high watermarks are as last "
               "checkpointed\n",
               running.size() == 1 ? "" : "s", fmt::join(running, ","));
  for (const auto& e : reader.problems()) fmt::print(stderr, "brook: {}\n", describe(e));
  return reader.problems().empty() ? exit_ok : exit_failure;
}

}  // namespace

int run_cluster(const parsed_args& args) {
  if (!args.has("--describe")) throw usage_error("give --describe (the only action)");
  if (!args.has("--data-dir")) throw usage_error("missing --data-dir D");
  const std::string data = *args.get("--data-dir");
  if (data.empty()) throw usage_error("--data-dir needs a non-empty path");
  return describe_cluster(data, args.has("--json"));
}

}  // namespace brook::cli

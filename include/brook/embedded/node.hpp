// brook::node: one data directory and everything a host process otherwise wires by hand
// around it, for producing, consuming and consumer groups inside one process.
//
//   auto n = brook::node::open("/var/lib/app/brook");           // result<std::unique_ptr<node>>
//   (*n)->create_topic("orders", {.partitions = 3});
//   auto producer = (*n)->make_producer();
//   auto consumer = (*n)->make_group_consumer({.group_id = "billing"});
//
// A node owns:
//   - the data_dir (its lock: one process per directory);
//   - its group_coordinator, started (session and rebalance timeouts run on its timer
//     thread), with `__consumer_offsets` created compacted on first open;
//   - housekeeping: retention.ms/bytes, segment.ms, flush.ms and the log cleaner run every
//     node_options::housekeeping_interval on a thread of the data_dir (off: 0).
//
// Defaults that fit one process rather than a cluster (Kafka's value in each comment):
// __consumer_offsets has 1 partition (Kafka: 50, which here would mean 50 partition
// directories and 100 preallocated index files for one process's groups), and a new group
// rebalances at once (group.initial.rebalance.delay.ms 0; Kafka: 3000, which waits for
// members of other processes to arrive).
//
// Lifetimes: the producers and consumers a node hands out keep what they use alive. close()
// refuses (invalid_request) while any of them is still open; a node destroyed without
// close() leaves the directory open until the last of them is destroyed, and closes it then.
//
// Thread-safety: every member function is thread-safe; the objects handed out have their own
// rules (producer: any thread; consumer and group_consumer: one thread at a time).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <brook/client/consumer.hpp>
#include <brook/client/producer.hpp>
#include <brook/core/assert.hpp>
#include <brook/core/linkage.hpp>
#include <brook/core/result.hpp>
#include <brook/group/group_consumer.hpp>
#include <brook/group/group_coordinator.hpp>
#include <brook/storage/data_dir.hpp>
#include <brook/storage/topic_config.hpp>

namespace brook {

struct node_options {
  /// The data directory's options: every topic's log defaults, and the clock.
  data_dir_options dir = {};
  /// The group coordinator's settings: Kafka's, but for one process (one_process_groups());
  /// assign `coordinator_config{}` for Kafka's own.
  coordinator_config groups = one_process_groups();
  /// How often retention, segment.ms, flush.ms and the cleaner run; 0 = never (the host
  /// calls node::dir().tick() itself). Default 1000 ms (Kafka's
  /// log.retention.check.interval.ms is 300000, for brokers with thousands of partitions;
  /// one process's logs are few, and a second keeps retention.ms and segment.ms close to
  /// what a topic says).
  std::chrono::milliseconds housekeeping_interval{1000};

  /// Kafka's group defaults, but for one process: __consumer_offsets with 1 partition and
  /// group.initial.rebalance.delay.ms 0.
  static coordinator_config one_process_groups() {
    coordinator_config c;
    c.offsets_topic_num_partitions = 1;
    c.group_initial_rebalance_delay = std::chrono::milliseconds(0);
    return c;
  }
};

class node {
  struct parts;

 public:
  /// Deletes an object the node handed out, then lets go of the node's parts it kept alive
  /// (at once: a handle that was reset() keeps nothing, though the deleter lives on in it).
  template <typename T>
  struct handle_deleter {
    std::shared_ptr<parts> keep;
    void operator()(T* p) {
      std::shared_ptr<parts> k = std::move(keep);
      delete p;  // first: close() must not find the count at 0 while the object still runs
      if (k) k->handles.fetch_sub(1, std::memory_order_acq_rel);
    }
  };
  /// An object handed out by a node (a std::unique_ptr that keeps the node's parts alive).
  template <typename T>
  using handle = std::unique_ptr<T, handle_deleter<T>>;

  node(const node&) = delete;
  node& operator=(const node&) = delete;
  /// Without close(): the parts (and their coordinator timer and housekeeping, which group
  /// consumers and retention still need) live on until the last handle goes, then close.
  ~node();

  /// Opens (creating it when missing) the data directory at `dir`, replays committed offsets,
  /// starts the coordinator's timer and housekeeping. Errors: the data_dir's
  /// (log_dir_locked when another process holds it, kafka_storage_error, invalid_config),
  /// the coordinator's.
  static result<std::unique_ptr<node>> open(const std::filesystem::path& dir, node_options opts = {});

  /// Creates a topic. Errors: topic_already_exists, invalid_topic (Kafka's
  /// INVALID_TOPIC_EXCEPTION), invalid_partitions, invalid_config (a bad override), closed,
  /// the data_dir's.
  result<void> create_topic(const std::string& name, topic_config tc = {});

  /// A producer writing to this node's topics (its sender thread starts now).
  /// REQUIRES (all make_*): not closed.
  handle<producer> make_producer(producer_config cfg = {});
  /// A consumer with manual assignment (assign/seek/poll), no group.
  handle<consumer> make_consumer(consumer_config cfg = {});
  /// A member of consumer group `cfg.group_id`; it joins on subscribe().
  handle<group_consumer> make_group_consumer(group_consumer_config cfg);

  /// The parts, for what the facade does not cover (describe topics, admin on groups, ...).
  /// REQUIRES: not closed.
  data_dir& dir() { return *live().dd; }
  group_coordinator& coordinator() { return *live().coordinator; }
  /// The last error a background housekeeping pass met, if any.
  std::optional<error> last_housekeeping_error() const;

  /// Stops the coordinator's timer and housekeeping and closes the data directory (flush,
  /// checkpoints). Errors: invalid_request while producers or consumers it handed out are
  /// still open (close or destroy them first; nothing is stopped then), the data_dir's.
  /// A second call returns ok.
  result<void> close();

 private:
  // What the node and every handle share; the last owner closes it.
  struct parts {
    std::unique_ptr<data_dir> dd;
    std::unique_ptr<group_coordinator> coordinator;
    std::atomic<int> handles{0};
    void stop_background() {
      if (coordinator) coordinator->stop();
      if (dd) dd->stop_housekeeping();
    }
    ~parts() {
      stop_background();
      coordinator.reset();
      if (dd) (void)dd->close();  // node::close() reports errors; a last handle cannot
    }
  };

  explicit node(std::shared_ptr<parts> p);

  parts& live();
  // Under the lock, so close() sees every handle counted or none of the object.
  template <typename T, typename Make>
  handle<T> hand_out(Make make) {
    std::lock_guard l(mu_);
    BROOK_ASSERT(parts_ != nullptr, "node used after close()");
    T* obj = make(*parts_);
    parts_->handles.fetch_add(1, std::memory_order_acq_rel);
    return handle<T>(obj, handle_deleter<T>{parts_});
  }

  mutable std::mutex mu_;  // guards parts_ (reset by close())
  std::shared_ptr<parts> parts_;
};

}  // namespace brook

#if !defined(BROOK_SEPARATE_COMPILATION)
#include <brook/embedded/impl/node.ipp>
#endif

// brook's Kafka broker: a request_handler that answers Kafka's APIs from a node (its data
// directory and group coordinator), the handler `brook serve` puts behind a tcp_server.
//
//   auto n = brook::node::open(dir);                 // storage, groups, housekeeping
//   server::kafka_broker broker(**n, {.num_partitions = 3});
//   server::tcp_server tcp(broker, broker.apis(), {.port = 0});
//   tcp.start();
//   broker.advertise("127.0.0.1", tcp.port());       // what Metadata tells clients
//
// One broker, so it leads every partition (epoch 0) and is the controller and every
// group's coordinator. What each API does, and where it departs from Apache Kafka, is in
// docs/broker.md; in short:
//   Produce       magic-2 batches only, exactly one batch per partition (INVALID_RECORD
//                 otherwise), validated as Kafka's LogValidator does (storage/log_validator),
//                 appended as the bytes that came (or recompressed for the topic's
//                 compression.type; zstd only from Produce v7, as Kafka); acks 0 (no answer, or the connection
//                 closed when it failed, as Kafka does), 1 and -1 (on one node
//                 both answer after the local append, which flushes when the topic's
//                 flush.messages says so); internal topics refused (INVALID_TOPIC_EXCEPTION)
//   Fetch         whole stored batches from the one holding the fetch offset, at least one
//                 batch even above the byte limits (KIP-74), empty records (never null),
//                 last stable offset = high watermark (no transactions), preferred read
//                 replica -1; a topic whose compression.type is zstd only from Fetch v10
//                 (UNSUPPORTED_COMPRESSION_TYPE before, as Kafka); a fetch below min_bytes parks in the
//                 request_purgatory until an append brings enough or max_wait_ms passes
//   ListOffsets   latest (-1), earliest (-2), max timestamp (-3), by timestamp
//   Metadata      v0 empty = all topics, v1+ null = all; unknown topics are created when the
//                 request and auto.create.topics.enable allow it; v10+ answers each topic's
//                 id (the data directory's, zero with an error), v12 finds topics by id
//                 (UNKNOWN_TOPIC_ID when none has it)
//   CreateTopics, DeleteTopics, DescribeConfigs  on the data directory's topics; CreateTopics
//                 v7+ answers the new topic's id
//   the group APIs  on the node's group coordinator, through group_apis (it is every
//                 group's coordinator)
//
// Storage calls run on the network thread that received the request: an append is a
// pwrite into the page cache and a read maps a slice, neither waits on anything but the
// partition's lock. Requests that wait (a Fetch for data, a JoinGroup for its rebalance)
// park; no network thread sleeps.
//
// Thread-safety: handle() and advertise() from any thread; stop() from the controlling
// thread, before the node closes.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <brook/core/assert.hpp>
#include <brook/core/error.hpp>
#include <brook/core/result.hpp>
#include <brook/core/types.hpp>
#include <brook/embedded/node.hpp>
#include <brook/format/record_batch.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/response.hpp>
#include <brook/server/group_apis.hpp>
#include <brook/server/request_handler.hpp>
#include <brook/server/request_purgatory.hpp>
#include <brook/server/served_apis.hpp>
#include <brook/server/wire_error.hpp>
#include <brook/storage/topic_config.hpp>

namespace brook::server {

/// A broker's settings, with Kafka's names in the comments.
struct broker_config {
  broker_id id{0};                   ///< node.id (broker.id)
  std::string cluster_id = "brook";  ///< what Metadata v2+ reports
  std::int32_t num_partitions = 1;   ///< num.partitions: auto-created topics and CreateTopics -1
  bool auto_create_topics = true;    ///< auto.create.topics.enable
  /// Partitions the broker holds at most, all topics together (brook's; Kafka has no such
  /// limit, but a network peer must not be able to fill the disk and the map count with
  /// topics): a CreateTopics or an auto-creation past it is POLICY_VIOLATION.
  std::int32_t max_partitions = 10'000;
};

class kafka_broker final : public request_handler {
 public:
  /// `n` must outlive the broker.
  explicit kafka_broker(node& n, broker_config c = {})
      : node_(n), config_(std::move(c)), groups_(n.coordinator()), purgatory_(n.dir().notifier()) {
    BROOK_ASSERT(config_.num_partitions > 0, "num.partitions must be positive");
    BROOK_ASSERT(config_.max_partitions > 0, "max_partitions must be positive");
  }
  kafka_broker(const kafka_broker&) = delete;
  kafka_broker& operator=(const kafka_broker&) = delete;
  ~kafka_broker() override { stop(); }

  /// The APIs and versions this broker answers (docs/broker.md explains each range).
  static const served_apis& apis() {
    using protocol::api_key;
    static const served_apis table({
        {api_key::produce, {3, 11}},
        {api_key::fetch, {4, 12}},
        {api_key::list_offsets, {1, 7}},
        {api_key::metadata, {0, 12}},
        {api_key::offset_commit, {0, 9}},
        {api_key::offset_fetch, {0, 9}},
        {api_key::find_coordinator, {0, 6}},
        {api_key::join_group, {0, 9}},
        {api_key::heartbeat, {0, 4}},
        {api_key::leave_group, {0, 5}},
        {api_key::sync_group, {0, 5}},
        {api_key::describe_groups, {0, 5}},
        {api_key::list_groups, {0, 5}},
        {api_key::api_versions, {0, 3}},
        {api_key::create_topics, {0, 7}},
        {api_key::delete_topics, {0, 5}},
        {api_key::describe_configs, {0, 4}},
        {api_key::delete_groups, {0, 2}},
    });
    return table;
  }

  const broker_config& config() const noexcept { return config_; }

  /// The host and port Metadata and FindCoordinator hand to clients (any time: a server
  /// bound to port 0 learns its port after it started).
  void advertise(std::string host, std::uint16_t port) {
    std::lock_guard l(advertised_mu_);
    host_ = std::move(host);
    port_ = port;
  }
  /// What advertise() last set (default 127.0.0.1:9092).
  std::pair<std::string, std::uint16_t> advertised() const {
    std::lock_guard l(advertised_mu_);
    return {host_, port_};
  }

  void handle(incoming_request req, reply done) override {
    std::visit([&](const auto& body) { answer(req, body, done); }, req.body);
  }

  /// Answers every parked request with what it has and stops the purgatory's thread.
  /// Idempotent.
  void stop() { purgatory_.stop(); }

  /// Fetches parked now (tests).
  std::size_t parked_fetches() const noexcept { return purgatory_.parked(); }

 private:
  class delayed_fetch;

  template <typename Body>
  static void send(const protocol::request_header& h, const Body& body, const reply& done) {
    auto f = protocol::encode_response(h.correlation_id, body, h.api_version);
    BROOK_ASSERT(f.has_value(), "an answer brook built does not encode: {}", f.error());
    done(std::move(*f));
  }

  void answer(const incoming_request& req, const protocol::api_versions_request&, const reply& done) {
    send(req.header, apis().api_versions_answer(), done);
  }
  void answer(incoming_request& req, const protocol::produce_request& body, const reply& done);
  void answer(const incoming_request& req, const protocol::fetch_request& body, const reply& done);
  void answer(const incoming_request& req, const protocol::list_offsets_request& body, const reply& done);
  void answer(const incoming_request& req, const protocol::metadata_request& body, const reply& done);
  void answer(const incoming_request& req, const protocol::create_topics_request& body, const reply& done);
  void answer(const incoming_request& req, const protocol::delete_topics_request& body, const reply& done);
  void answer(const incoming_request& req, const protocol::describe_configs_request& body, const reply& done);

  // The group APIs, translated by group_apis. JoinGroup and SyncGroup answer when the
  // coordinator completes them, from its thread.
  void answer(const incoming_request& req, const protocol::join_group_request& body, const reply& done) {
    groups_.join_group(body, req.header.api_version, req.header.client_id.value_or(""),
                       [h = req.header, done](protocol::join_group_response r) { send(h, r, done); });
  }
  void answer(const incoming_request& req, const protocol::sync_group_request& body, const reply& done) {
    groups_.sync_group(body, req.header.api_version,
                       [h = req.header, done](protocol::sync_group_response r) { send(h, r, done); });
  }
  void answer(const incoming_request& req, const protocol::heartbeat_request& body, const reply& done) {
    send(req.header, groups_.heartbeat(body, req.header.api_version), done);
  }
  void answer(const incoming_request& req, const protocol::leave_group_request& body, const reply& done) {
    send(req.header, groups_.leave_group(body, req.header.api_version), done);
  }
  void answer(const incoming_request& req, const protocol::offset_commit_request& body, const reply& done) {
    send(req.header, groups_.offset_commit(body, req.header.api_version), done);
  }
  void answer(const incoming_request& req, const protocol::offset_fetch_request& body, const reply& done) {
    send(req.header, groups_.offset_fetch(body, req.header.api_version), done);
  }
  void answer(const incoming_request& req, const protocol::find_coordinator_request& body, const reply& done) {
    auto [host, port] = advertised();
    send(req.header, groups_.find_coordinator(body, req.header.api_version, {config_.id, std::move(host), port}), done);
  }
  void answer(const incoming_request& req, const protocol::describe_groups_request& body, const reply& done) {
    send(req.header, groups_.describe_groups(body, req.header.api_version), done);
  }
  void answer(const incoming_request& req, const protocol::list_groups_request& body, const reply& done) {
    send(req.header, groups_.list_groups(body, req.header.api_version), done);
  }
  void answer(const incoming_request& req, const protocol::delete_groups_request& body, const reply& done) {
    send(req.header, groups_.delete_groups(body, req.header.api_version), done);
  }
  // Every API the table does not serve: connection_state refused it before it got here.
  template <typename Other>
  void answer(const incoming_request& req, const Other&, const reply&) {
    BROOK_ASSERT(false, "API key {} reached the broker but is not served", req.header.api_key);
  }

  // ------------------------------------------------------------------ produce

  protocol::produce_response_partition produce_one(incoming_request& req, const std::string& topic,
                                                   const protocol::produce_request_partition& p, std::int16_t acks);
  static result<std::span<std::byte>> one_batch(incoming_request& req, const protocol::records& r);

  // ------------------------------------------------------------------ fetch

  struct fetch_outcome {
    protocol::fetch_response response;
    std::size_t bytes = 0;
    bool error = false;
  };
  fetch_outcome read_fetch(const protocol::fetch_request& body, std::int16_t version) const;
  protocol::fetch_response_partition read_partition(std::int16_t version, const std::string& topic,
                                                    const protocol::fetch_request_partition& p, std::size_t max_bytes,
                                                    bool first_batch_whole) const;

  protocol::list_offsets_response_partition list_one(const std::string& topic,
                                                     const protocol::list_offsets_request_partition& p,
                                                     std::int16_t version) const;

  // ------------------------------------------------------------------ metadata and admin

  protocol::metadata_response_topic describe_for_metadata(const std::string& name, bool may_create);
  std::vector<protocol::metadata_response_topic> describe_by_id(const std::vector<protocol::metadata_request_topic>& q);
  result<void> room_for(std::int32_t partitions);
  result<void> create(const std::string& name, std::int32_t partitions, std::int16_t replication,
                      const std::vector<protocol::create_topics_request_config>& configs, bool validate_only);
  protocol::describe_configs_response_result describe_configs_of(const protocol::describe_configs_request_resource& r,
                                                                 std::int16_t version) const;

  node& node_;
  broker_config config_;
  group_apis groups_;
  mutable std::mutex advertised_mu_;
  std::string host_ = "127.0.0.1";  // under advertised_mu_
  std::uint16_t port_ = 9092;       // under advertised_mu_
  request_purgatory purgatory_;
};

// ==================================================================== produce

inline void kafka_broker::answer(incoming_request& req, const protocol::produce_request& body, const reply& done) {
  protocol::produce_response out;
  bool failed = false;
  for (const auto& t : body.topic_data) {
    auto& rt = out.responses.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partition_data) {
      rt.partition_responses.push_back(produce_one(req, t.name, p, body.acks));
      failed = failed || rt.partition_responses.back().error_code != 0;
    }
  }
  // acks=0 gets no answer; a failure closes the connection instead, as Kafka does, so that
  // the client learns something went wrong.
  if (body.acks == 0) return failed ? done.close() : done(std::nullopt);
  send(req.header, out, done);
}

inline protocol::produce_response_partition kafka_broker::produce_one(incoming_request& req, const std::string& topic,
                                                                      const protocol::produce_request_partition& p,
                                                                      std::int16_t acks) {
  protocol::produce_response_partition out;
  out.index = p.index;
  auto fail = [&](const error& e) {
    out.error_code = wire_error_code(e);
    out.base_offset = offset(-1);
    out.error_message = e.message();
    return out;
  };
  if (acks != 0 && acks != 1 && acks != -1)
    return fail(make_error(errc::invalid_required_acks, "acks={} is not -1, 0 or 1", acks));
  if (is_internal_topic(topic))
    return fail(make_error(errc::invalid_topic, "producing to internal topic '{}' is not allowed", topic));
  auto part = node_.dir().get_partition(topic, p.index);
  if (!part) return fail(part.error());
  auto batch = one_batch(req, p.records);
  if (!batch) return fail(batch.error());
  // Kafka's ProduceRequest.validateRecords: zstd needs Produce v7 (KIP-110).
  const auto codec = decode_batch_header_unchecked(batch->data()).compression();
  if (codec == compression_type::zstd && req.header.api_version < 7)
    return fail(make_error(errc::unsupported_compression_type,
                           "zstd-compressed batches need Produce v7 or later; this request is v{}",
                           req.header.api_version));
  auto appended = (*part)->append(*batch);
  if (!appended) return fail(appended.error());
  out.base_offset = appended->base_offset;
  out.log_append_time_ms = appended->log_append_time;
  out.log_start_offset = (*part)->log_start_offset();
  return out;
}

// Kafka's ProduceRequest.validateRecords for v3+: exactly one magic-2 batch. The bytes are
// the request frame's, which the broker owns and the log stamps in place.
inline result<std::span<std::byte>> kafka_broker::one_batch(incoming_request& req, const protocol::records& r) {
  const auto b = r.bytes();
  if (b.empty()) return make_error(errc::invalid_record, "a produce request must hold one record batch; it holds none");
  if (b.size() < batch_layout::header_size)
    return make_error(errc::corrupt_message, "{} bytes of records cannot hold a batch header", b.size());
  const auto magic = static_cast<std::int8_t>(b[batch_layout::magic]);
  if (magic != current_magic)
    return make_error(errc::invalid_record, "record batch magic {}; brook accepts only magic 2", magic);
  const std::int64_t length =
      std::int64_t{brook::detail::load_be32(b.data() + batch_layout::batch_length)} + batch_layout::log_overhead;
  if (length < static_cast<std::int64_t>(batch_layout::header_size) || length > static_cast<std::int64_t>(b.size()))
    return make_error(errc::corrupt_message, "batch length {} does not fit the {} record bytes", length, b.size());
  if (length != static_cast<std::int64_t>(b.size()))
    return make_error(errc::invalid_record, "a produce request must hold exactly one record batch per partition");
  const auto at = static_cast<std::size_t>(b.data() - reinterpret_cast<const std::byte*>(req.frame.data()));
  BROOK_ASSERT(at + b.size() <= req.frame.size(), "records outside their request frame");
  return std::span<std::byte>(req.frame.data() + at, b.size());
}

// ==================================================================== fetch

/// A Fetch waiting for min_bytes: re-read on every change, answered when enough is there.
class kafka_broker::delayed_fetch final : public request_purgatory::operation {
 public:
  delayed_fetch(const kafka_broker& b, protocol::request_header h, protocol::fetch_request body, reply done)
      : broker_(b), header_(std::move(h)), body_(std::move(body)), done_(std::move(done)) {}
  bool try_complete() override {
    auto o = broker_.read_fetch(body_, header_.api_version);
    if (!o.error && o.bytes < static_cast<std::size_t>(std::max(body_.min_bytes, 1))) return false;
    send(header_, o.response, done_);
    return true;
  }
  void expire() override { send(header_, broker_.read_fetch(body_, header_.api_version).response, done_); }

 private:
  const kafka_broker& broker_;
  protocol::request_header header_;
  protocol::fetch_request body_;
  reply done_;
};

inline void kafka_broker::answer(const incoming_request& req, const protocol::fetch_request& body, const reply& done) {
  auto o = read_fetch(body, req.header.api_version);
  const bool enough = o.bytes >= static_cast<std::size_t>(std::max(body.min_bytes, 0));
  if (o.error || enough || body.max_wait_ms <= 0) return send(req.header, o.response, done);
  auto op = std::make_shared<delayed_fetch>(*this, req.header, body, done);
  purgatory_.park(std::move(op), std::chrono::steady_clock::now() + std::chrono::milliseconds(body.max_wait_ms), done);
}

inline kafka_broker::fetch_outcome kafka_broker::read_fetch(const protocol::fetch_request& body,
                                                            std::int16_t version) const {
  fetch_outcome o;
  const std::size_t limit = static_cast<std::size_t>(std::max(body.max_bytes, 0));
  for (const auto& t : body.topics) {
    auto& rt = o.response.responses.emplace_back();
    rt.topic = t.topic;
    rt.topic_id = t.topic_id;
    for (const auto& p : t.partitions) {
      const std::size_t left = o.bytes >= limit ? 0 : limit - o.bytes;
      const std::size_t cap = std::min(left, static_cast<std::size_t>(std::max(p.partition_max_bytes, 0)));
      auto rp = read_partition(version, t.topic, p, cap, o.bytes == 0);
      o.bytes += rp.records.size_bytes();
      o.error = o.error || rp.error_code != 0;
      rt.partitions.push_back(std::move(rp));
    }
  }
  return o;
}

inline protocol::fetch_response_partition kafka_broker::read_partition(std::int16_t version, const std::string& topic,
                                                                       const protocol::fetch_request_partition& p,
                                                                       std::size_t max_bytes,
                                                                       bool first_batch_whole) const {
  protocol::fetch_response_partition out;
  out.partition_index = p.partition;
  out.records = protocol::records::view({});  // empty, never null
  out.high_watermark = offset(-1);
  auto part = node_.dir().get_partition(topic, p.partition);
  if (!part) {
    out.error_code = wire_error_code(part.error());
    return out;
  }
  // KafkaApis: a topic whose compression.type is zstd needs Fetch v10 (KIP-110), whatever
  // its batches hold.
  if (version < 10 && (*part)->log().config().compression == compression_type::zstd) {
    out.error_code = static_cast<std::int16_t>(errc::unsupported_compression_type);
    return out;
  }
  const offset hw = (*part)->high_watermark();
  out.high_watermark = hw;
  out.last_stable_offset = hw;  // no transactions: the LSO is the high watermark
  out.log_start_offset = (*part)->log_start_offset();
  if (p.fetch_offset < out.log_start_offset || p.fetch_offset > hw) {
    out.error_code = static_cast<std::int16_t>(errc::offset_out_of_range);
    return out;
  }
  // KIP-74: the first batch of the response goes whole whatever the limits; after it, a
  // partition gets what is left.
  if (p.fetch_offset == hw || (max_bytes == 0 && !first_batch_whole)) return out;
  auto slice =
      (*part)->read(p.fetch_offset, {.max_bytes = first_batch_whole ? std::max<std::size_t>(max_bytes, 1) : max_bytes});
  if (!slice) {
    out.error_code = wire_error_code(slice.error());
    return out;
  }
  if (!first_batch_whole && slice->size_bytes() > max_bytes) return out;  // its first batch does not fit
  out.records = protocol::records::of(std::move(*slice));
  return out;
}

// ==================================================================== list offsets

inline void kafka_broker::answer(const incoming_request& req, const protocol::list_offsets_request& body,
                                 const reply& done) {
  protocol::list_offsets_response out;
  for (const auto& t : body.topics) {
    auto& rt = out.topics.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partitions) rt.partitions.push_back(list_one(t.name, p, req.header.api_version));
  }
  send(req.header, out, done);
}

inline protocol::list_offsets_response_partition kafka_broker::list_one(
    const std::string& topic, const protocol::list_offsets_request_partition& p, std::int16_t version) const {
  protocol::list_offsets_response_partition out;
  out.partition_index = p.partition_index;
  auto part = node_.dir().get_partition(topic, p.partition_index);
  if (!part) {
    out.error_code = wire_error_code(part.error());
    return out;
  }
  const offset hw = (*part)->high_watermark();
  if (version >= 4) out.leader_epoch_value = leader_epoch(0);  // not ignorable before v4
  if (p.timestamp == -1) {                                     // latest: what a consumer can read up to
    out.offset_value = hw;
    return out;
  }
  if (p.timestamp == -2) {  // earliest
    out.offset_value = (*part)->log_start_offset();
    return out;
  }
  timestamp_ms ts = p.timestamp;
  if (ts == -3) {  // max timestamp (v7+): the first record carrying the log's largest timestamp
    ts = -1;
    for (const auto& s : (*part)->log().segments()) ts = std::max(ts, s.max_timestamp);
    if (ts < 0) return out;  // no record has a timestamp: offset -1, timestamp -1
  } else if (ts < 0) {
    out.error_code = static_cast<std::int16_t>(errc::invalid_request);
    return out;
  }
  auto found = (*part)->log().offset_for_timestamp(ts, hw);
  if (!found) {
    out.error_code = wire_error_code(found.error());
  } else if (*found) {
    out.offset_value = (*found)->off;
    out.timestamp = (*found)->timestamp;
  }
  return out;
}

// ==================================================================== metadata

inline void kafka_broker::answer(const incoming_request& req, const protocol::metadata_request& body,
                                 const reply& done) {
  protocol::metadata_response out;
  auto [host, port] = advertised();
  out.brokers.push_back({config_.id, std::move(host), port, std::nullopt});
  out.cluster_id = config_.cluster_id;
  out.controller_id = config_.id;
  const bool all = !body.topics || (req.header.api_version == 0 && body.topics->empty());
  const bool by_id = !all && std::any_of(body.topics->begin(), body.topics->end(),
                                         [](const auto& t) { return !t.topic_id.is_zero(); });
  if (!all && req.header.api_version < 12) {
    // v10-11 carry the fields, but Kafka takes ids and null names only from v12
    // (KafkaApis.handleTopicMetadataRequest): INVALID_REQUEST for every topic, answered as
    // MetadataRequest.getErrorResponse does (no brokers, no partitions).
    const bool null_name = std::any_of(body.topics->begin(), body.topics->end(), [](const auto& t) { return !t.name; });
    if (by_id || null_name) {
      protocol::metadata_response refused;
      for (const auto& t : *body.topics)
        refused.topics.push_back({.error_code = static_cast<std::int16_t>(errc::invalid_request),
                                  .name = t.name.value_or(""),
                                  .topic_id = t.topic_id});
      return send(req.header, refused, done);
    }
  }
  if (all) {
    for (const auto& name : node_.dir().list_topics()) out.topics.push_back(describe_for_metadata(name, false));
  } else if (by_id) {
    out.topics = describe_by_id(*body.topics);
  } else {
    const bool may_create = body.allow_auto_topic_creation && config_.auto_create_topics;
    for (const auto& t : *body.topics) out.topics.push_back(describe_for_metadata(t.name.value_or(""), may_create));
  }
  send(req.header, out, done);
}

// Kafka: once one topic of the request has an id, the topics are those ids (entries with a
// name only are not looked at), each answered once; an id no topic has is UNKNOWN_TOPIC_ID
// with a null name. Nothing is created by id. A request may carry millions of ids (a frame
// of up to socket.request.max.bytes): the ids are looked up in one map of the directory's
// topics and deduplicated in a set, never by a scan per id.
inline std::vector<protocol::metadata_response_topic> kafka_broker::describe_by_id(
    const std::vector<protocol::metadata_request_topic>& q) {
  std::map<uuid, std::string> names;
  for (auto& name : node_.dir().list_topics()) {
    auto id = node_.dir().topic_id(name);
    if (id && !id->is_zero()) names.emplace(*id, std::move(name));
  }
  std::vector<protocol::metadata_response_topic> out;
  std::set<uuid> seen;
  for (const auto& t : q) {
    if (t.topic_id.is_zero() || !seen.insert(t.topic_id).second) continue;
    auto it = names.find(t.topic_id);
    if (it == names.end()) {
      out.push_back({.error_code = static_cast<std::int16_t>(errc::unknown_topic_id),
                     .name = std::nullopt,
                     .topic_id = t.topic_id});
      continue;
    }
    out.push_back(describe_for_metadata(it->second, false));
  }
  return out;
}

inline protocol::metadata_response_topic kafka_broker::describe_for_metadata(const std::string& name, bool may_create) {
  protocol::metadata_response_topic out;
  out.name = name;
  out.is_internal = is_internal_topic(name);
  auto count = node_.dir().partition_count(name);
  if (!count && count.error().code() == errc::unknown_topic_or_partition && may_create && !out.is_internal) {
    auto valid = validate_topic_name(name);
    if (!valid) {
      out.error_code = wire_error_code(valid.error());
      return out;
    }
    auto created = room_for(config_.num_partitions);
    if (created) created = node_.dir().create_topic(name, {.partitions = config_.num_partitions});
    if (!created && created.error().code() != errc::topic_already_exists) {
      out.error_code = wire_error_code(created.error());
      return out;
    }
    count = node_.dir().partition_count(name);
  }
  if (!count) {
    out.error_code = wire_error_code(count.error());
    return out;
  }
  out.topic_id = node_.dir().topic_id(name).value_or(uuid{});  // zero if deleted meanwhile
  for (std::int32_t i = 0; i < *count; ++i) {
    auto& p = out.partitions.emplace_back();
    p.partition_index = partition_id(i);
    p.leader_id = config_.id;
    p.leader_epoch_value = leader_epoch(0);
    p.replica_nodes = {config_.id};
    p.isr_nodes = {config_.id};
  }
  return out;
}

// ==================================================================== admin

inline void kafka_broker::answer(const incoming_request& req, const protocol::create_topics_request& body,
                                 const reply& done) {
  protocol::create_topics_response out;
  for (const auto& t : body.topics) {
    auto& rt = out.topics.emplace_back();
    rt.name = t.name;
    const std::int32_t partitions = t.num_partitions == -1 ? config_.num_partitions : t.num_partitions;
    auto made = t.assignments.empty()
                    ? create(t.name, partitions, t.replication_factor, t.configs, body.validate_only)
                    : result<void>(make_error(errc::invalid_request, "manual replica assignments are not supported"));
    if (!made) {
      rt.error_code = wire_error_code(made.error());
      rt.error_message = made.error().message();
      continue;
    }
    rt.error_message = std::nullopt;
    rt.num_partitions = partitions;
    rt.replication_factor = 1;
    if (!body.validate_only) rt.topic_id = node_.dir().topic_id(t.name).value_or(uuid{});
  }
  send(req.header, out, done);
}

inline result<void> kafka_broker::create(const std::string& name, std::int32_t partitions, std::int16_t replication,
                                         const std::vector<protocol::create_topics_request_config>& configs,
                                         bool validate_only) {
  BROOK_TRY(validate_topic_name(name));
  if (is_internal_topic(name)) return make_error(errc::invalid_request, "'{}' is an internal topic", name);
  if (partitions <= 0) return make_error(errc::invalid_partitions, "{} partitions: must be at least 1", partitions);
  if (replication != -1 && replication != 1)
    return make_error(errc::invalid_replication_factor, "replication factor {}: this broker is the only one",
                      replication);
  topic_config tc{.partitions = partitions};
  for (const auto& c : configs) {
    if (!c.value) continue;  // null: the default
    tc.overrides[c.name] = *c.value;
  }
  BROOK_TRY(tc.apply(log_config{}));  // bad keys and values, before anything is created
  BROOK_TRY(room_for(partitions));
  if (validate_only) {
    if (node_.dir().partition_count(name)) return make_error(errc::topic_already_exists, "topic '{}' exists", name);
    return ok();
  }
  return node_.dir().create_topic(name, std::move(tc));
}

inline result<void> kafka_broker::room_for(std::int32_t partitions) {
  std::int64_t held = 0;
  for (const auto& t : node_.dir().list_topics()) {
    auto n = node_.dir().partition_count(t);
    if (n) held += *n;
  }
  if (held + partitions > config_.max_partitions)
    return make_error(errc::policy_violation, "{} more partitions would take this broker past its {} (it holds {})",
                      partitions, config_.max_partitions, held);
  return ok();
}

inline void kafka_broker::answer(const incoming_request& req, const protocol::delete_topics_request& body,
                                 const reply& done) {
  protocol::delete_topics_response out;
  std::vector<std::string> names = body.topic_names;  // v0-5
  for (const auto& t : body.topics)
    if (t.name) names.push_back(*t.name);
  for (const auto& name : names) {
    auto& rt = out.responses.emplace_back();
    rt.name = name;
    auto gone = is_internal_topic(name)
                    ? result<void>(make_error(errc::invalid_request, "'{}' is an internal topic", name))
                    : node_.dir().delete_topic(name);
    if (!gone) {
      rt.error_code = wire_error_code(gone.error());
      rt.error_message = gone.error().message();
    }
  }
  send(req.header, out, done);
}

inline void kafka_broker::answer(const incoming_request& req, const protocol::describe_configs_request& body,
                                 const reply& done) {
  protocol::describe_configs_response out;
  for (const auto& r : body.resources) out.results.push_back(describe_configs_of(r, req.header.api_version));
  send(req.header, out, done);
}

inline protocol::describe_configs_response_result kafka_broker::describe_configs_of(
    const protocol::describe_configs_request_resource& r, std::int16_t version) const {
  constexpr std::int8_t topic_resource = 2, broker_resource = 4;
  constexpr std::int8_t dynamic_topic_config = 1, static_broker_config = 4, default_config = 5;
  protocol::describe_configs_response_result out;
  out.resource_type = r.resource_type;
  out.resource_name = r.resource_name;
  out.error_message = std::nullopt;
  auto add = [&](const std::string& name, std::string value, bool is_default, std::int8_t source) {
    if (r.configuration_keys && !r.configuration_keys->empty() &&
        std::find(r.configuration_keys->begin(), r.configuration_keys->end(), name) == r.configuration_keys->end())
      return;
    auto& c = out.configs.emplace_back();
    c.name = name;
    c.value = std::move(value);
    c.is_default = version == 0 && is_default;
    c.config_source = version == 0 ? std::int8_t{-1} : source;
  };
  if (r.resource_type == broker_resource) {
    if (r.resource_name != fmt::format("{}", config_.id.value()) && !r.resource_name.empty()) {
      out.error_code = static_cast<std::int16_t>(errc::invalid_request);
      out.error_message = fmt::format("this broker is {}", config_.id.value());
      return out;
    }
    add("node.id", fmt::format("{}", config_.id.value()), false, static_broker_config);
    add("num.partitions", fmt::format("{}", config_.num_partitions), config_.num_partitions == 1,
        config_.num_partitions == 1 ? default_config : static_broker_config);
    add("auto.create.topics.enable", config_.auto_create_topics ? "true" : "false", config_.auto_create_topics,
        config_.auto_create_topics ? default_config : static_broker_config);
    return out;
  }
  if (r.resource_type != topic_resource) {
    out.error_code = static_cast<std::int16_t>(errc::invalid_request);
    out.error_message = fmt::format("resource type {} is not a topic (2) or a broker (4)", r.resource_type);
    return out;
  }
  auto d = node_.dir().describe_topic(r.resource_name);
  auto part = node_.dir().get_partition(r.resource_name, partition_id(0));
  if (!d || !part) {
    const error& e = !d ? d.error() : part.error();
    out.error_code = wire_error_code(e);
    out.error_message = e.message();
    return out;
  }
  for (const auto& [name, value] : topic_config_values((*part)->log().config())) {
    const bool overridden = d->config.overrides.count(name) > 0;
    add(name, value, !overridden, overridden ? dynamic_topic_config : default_config);
  }
  return out;
}

}  // namespace brook::server

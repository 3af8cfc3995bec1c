// Faults for a host's tests, behind the request_handler seam (server/request_handler.hpp): a
// handler that wraps another (normally server::kafka_broker) and fails requests the way
// librdkafka's mock cluster does (rdkafka_mock.h), so that a host test can check how its
// client code handles a broker's errors, delays and dead connections. Nothing in server/
// knows about it.
//
//   server::kafka_broker broker(*n);
//   brook::testing::faulty_handler faults(broker);
//   server::tcp_server tcp(faults, broker.apis(), {.port = 0});
//   faults.push_errors(api_key::produce, {errc::not_leader_or_follower});  // the next Produce fails
//
// The faults (librdkafka's counterpart in brackets):
//   push_errors(key, codes)    the next requests of `key`, one per code, are answered with that
//                              code without reaching the wrapped handler; code 0 lets one
//                              through [rd_kafka_mock_push_request_errors]. The answer is
//                              error_frame()'s. A Produce with acks=0 closes its connection
//                              instead, as Kafka does when such a Produce fails.
//   set_latency(rtt)           every answer (a pushed error's too) is held back `rtt` after it is
//   set_latency(key, rtt)      ready, on the handler's own timer thread; per key, that key's
//                              value replaces the one for all [rd_kafka_mock_broker_set_rtt]
//   drop_connection(key, n)    the next n requests of `key` close their connection, after the
//                              answers to the connection's earlier requests
//   set_down(true)             every request closes its connection, so a client's connections,
//   set_down_for(d)            new ones included, die at their first request
//                              [rd_kafka_mock_broker_set_down]
//   take_coordinator_away(true)  FindCoordinator (group keys) answers COORDINATOR_NOT_AVAILABLE,
//                              ListGroups COORDINATOR_NOT_AVAILABLE (Kafka's answer while its
//                              coordinator is not active) and JoinGroup, SyncGroup, Heartbeat,
//                              LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups and
//                              DeleteGroups NOT_COORDINATOR [rd_kafka_mock_coordinator_set to a
//                              broker that is not there]
//
// One request meets at most one fault, in this order: down, drop_connection, a pushed error,
// the coordinator; a request that meets none goes to the wrapped handler. A setter applies
// to the requests that arrive after it. Closing every open
// connection at once is not here: a handler sees requests, not connections (set_down_for
// kills each at its next request; tcp_server::stop closes them all).
//
// A held answer whose connection closes meanwhile is dropped (answers_dropped()); the wrapped
// handler learns the abandonment as it would without this handler. stop() (and the
// destructor) sends every held answer at once; release_held() does so and keeps going.
//
// Part of the opt-in testing/ layer: the library never includes it.
// Thread-safety: handle() from any number of network threads, setters and counters from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <brook/core/assert.hpp>
#include <brook/core/error.hpp>
#include <brook/core/types.hpp>
#include <brook/protocol/messages.hpp>
#include <brook/protocol/response.hpp>
#include <brook/server/request_handler.hpp>

namespace brook::testing {

namespace detail {

// ---------------------------------------------------------------- error answers
//
// The answer to a request carrying `code`, one overload per API, at `version`: the code goes
// wherever the answer has an error code for something the request named, as librdkafka's
// mock puts it: the top-level ErrorCode where the version has one, and every topic,
// partition, group, coordinator key, member or resource of the request. Everything else
// reads "unknown": offsets, high watermarks, generations and node ids -1, empty records
// (never null), no brokers, no members, no configs. Departures from Kafka's own
// getErrorResponse: Fetch v13+ keeps its partitions and OffsetFetch v2+ its topics (Kafka
// sends the top-level code alone there); the mock keeps them too.
//
// Metadata has no top-level code: a request naming topics gets each with the code; a request
// for all topics (v0 empty, v1+ null) gets no topic and no broker, as from Kafka's
// MetadataRequest.getErrorResponse, so the code is not visible there (push errors on
// Metadata for clients that name their topics).

inline protocol::produce_response error_answer(const protocol::produce_request& q, std::int16_t code, std::int16_t) {
  protocol::produce_response out;
  for (const auto& t : q.topic_data) {
    auto& rt = out.responses.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partition_data) {
      auto& rp = rt.partition_responses.emplace_back();
      rp.index = p.index;
      rp.error_code = code;
      rp.base_offset = offset(-1);
    }
  }
  return out;
}

inline protocol::fetch_response error_answer(const protocol::fetch_request& q, std::int16_t code,
                                             std::int16_t version) {
  protocol::fetch_response out;
  out.error_code = code;                            // v7+; ignorable before
  if (version >= 7) out.session_id = q.session_id;  // as the mock and Kafka echo it
  for (const auto& t : q.topics) {
    auto& rt = out.responses.emplace_back();
    rt.topic = t.topic;
    rt.topic_id = t.topic_id;
    for (const auto& p : t.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p.partition;
      rp.error_code = code;
      rp.high_watermark = offset(-1);
      rp.records = protocol::records::view({});  // empty, never null
    }
  }
  return out;
}

inline protocol::list_offsets_response error_answer(const protocol::list_offsets_request& q, std::int16_t code,
                                                    std::int16_t) {
  protocol::list_offsets_response out;
  for (const auto& t : q.topics) {
    auto& rt = out.topics.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p.partition_index;
      rp.error_code = code;  // timestamp, offset and leader epoch stay -1
    }
  }
  return out;
}

inline protocol::metadata_response error_answer(const protocol::metadata_request& q, std::int16_t code,
                                                std::int16_t version) {
  protocol::metadata_response out;
  const bool all = !q.topics || (version == 0 && q.topics->empty());
  if (all) return out;
  for (const auto& t : *q.topics) {
    auto& rt = out.topics.emplace_back();
    rt.error_code = code;
    rt.name = t.name.value_or("");  // Kafka answers a topic asked by id with ""
    rt.topic_id = t.topic_id;
  }
  return out;
}

inline protocol::offset_commit_response error_answer(const protocol::offset_commit_request& q, std::int16_t code,
                                                     std::int16_t) {
  protocol::offset_commit_response out;
  for (const auto& t : q.topics) {
    auto& rt = out.topics.emplace_back();
    rt.name = t.name;
    for (const auto& p : t.partitions) rt.partitions.push_back({p.partition_index, code});
  }
  return out;
}

// The topics an OffsetFetch named, each partition with `code` and no committed offset. v0-7
// (the group's topics) and v8+ (each group's) have the same shape under different type names.
template <typename ResponseTopic, typename RequestTopic>
std::vector<ResponseTopic> offset_fetch_topics(const std::optional<std::vector<RequestTopic>>& topics,
                                               std::int16_t code) {
  std::vector<ResponseTopic> out;
  if (!topics) return out;  // null: all topics, none named
  for (const auto& t : *topics) {
    auto& rt = out.emplace_back();
    rt.name = t.name;
    for (partition_id p : t.partition_indexes) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p;
      rp.committed_offset = offset(-1);
      rp.error_code = code;
    }
  }
  return out;
}

inline protocol::offset_fetch_response error_answer(const protocol::offset_fetch_request& q, std::int16_t code,
                                                    std::int16_t version) {
  protocol::offset_fetch_response out;
  if (version <= 7) {
    out.error_code = code;  // v2-7; ignorable before
    out.topics = offset_fetch_topics<protocol::offset_fetch_response_topic>(q.topics, code);
    return out;
  }
  for (const auto& g : q.groups) {
    auto& rg = out.groups.emplace_back();
    rg.group_id = g.group_id;
    rg.error_code = code;
    rg.topics = offset_fetch_topics<protocol::offset_fetch_response_topics>(g.topics, code);
  }
  return out;
}

// No coordinator for a key: v0-3 answer at the top level, v4+ once per key; same fields.
template <typename Coordinator>
void no_coordinator(Coordinator& c, std::int16_t code) {
  c.error_code = code;
  c.error_message = std::nullopt;
  c.node_id = broker_id(-1);
  c.port = -1;
}

inline protocol::find_coordinator_response error_answer(const protocol::find_coordinator_request& q, std::int16_t code,
                                                        std::int16_t version) {
  protocol::find_coordinator_response out;
  if (version <= 3) {
    no_coordinator(out, code);
    return out;
  }
  for (const auto& key : q.coordinator_keys) {
    auto& c = out.coordinators.emplace_back();
    c.key = key;
    no_coordinator(c, code);
  }
  return out;
}

inline protocol::join_group_response error_answer(const protocol::join_group_request&, std::int16_t code,
                                                  std::int16_t version) {
  protocol::join_group_response out;
  out.error_code = code;
  out.generation = generation_id(-1);
  if (version >= 7) out.protocol_name = std::nullopt;  // "" before, where it is not nullable
  return out;
}

inline protocol::heartbeat_response error_answer(const protocol::heartbeat_request&, std::int16_t code, std::int16_t) {
  protocol::heartbeat_response out;
  out.error_code = code;
  return out;
}

inline protocol::leave_group_response error_answer(const protocol::leave_group_request& q, std::int16_t code,
                                                   std::int16_t version) {
  protocol::leave_group_response out;
  out.error_code = code;
  if (version >= 3)
    for (const auto& m : q.members) out.members.push_back({m.member_id, m.group_instance_id, code});
  return out;
}

inline protocol::sync_group_response error_answer(const protocol::sync_group_request&, std::int16_t code,
                                                  std::int16_t) {
  protocol::sync_group_response out;
  out.error_code = code;
  return out;
}

inline protocol::describe_groups_response error_answer(const protocol::describe_groups_request& q, std::int16_t code,
                                                       std::int16_t) {
  protocol::describe_groups_response out;
  for (const auto& g : q.groups) {
    auto& rg = out.groups.emplace_back();
    rg.error_code = code;
    rg.group_id = g;
  }
  return out;
}

inline protocol::list_groups_response error_answer(const protocol::list_groups_request&, std::int16_t code,
                                                   std::int16_t) {
  protocol::list_groups_response out;
  out.error_code = code;
  return out;
}

inline protocol::api_versions_response error_answer(const protocol::api_versions_request&, std::int16_t code,
                                                    std::int16_t) {
  protocol::api_versions_response out;  // no API listed
  out.error_code = code;
  return out;
}

inline protocol::create_topics_response error_answer(const protocol::create_topics_request& q, std::int16_t code,
                                                     std::int16_t) {
  protocol::create_topics_response out;
  for (const auto& t : q.topics) {
    auto& rt = out.topics.emplace_back();
    rt.name = t.name;
    rt.error_code = code;
    rt.error_message = std::nullopt;
  }
  return out;
}

inline protocol::delete_topics_response error_answer(const protocol::delete_topics_request& q, std::int16_t code,
                                                     std::int16_t) {
  protocol::delete_topics_response out;
  for (const auto& name : q.topic_names) {  // v0-5
    auto& rt = out.responses.emplace_back();
    rt.name = name;
    rt.error_code = code;
  }
  for (const auto& t : q.topics) {  // v6+: by name or by id
    auto& rt = out.responses.emplace_back();
    rt.name = t.name;
    rt.topic_id = t.topic_id;
    rt.error_code = code;
  }
  return out;
}

inline protocol::init_producer_id_response error_answer(const protocol::init_producer_id_request&, std::int16_t code,
                                                        std::int16_t) {
  protocol::init_producer_id_response out;
  out.error_code = code;
  out.producer_id = -1;
  out.producer_epoch = -1;
  return out;
}

inline protocol::describe_configs_response error_answer(const protocol::describe_configs_request& q, std::int16_t code,
                                                        std::int16_t) {
  protocol::describe_configs_response out;
  for (const auto& r : q.resources) {
    auto& rr = out.results.emplace_back();
    rr.error_code = code;
    rr.error_message = std::nullopt;
    rr.resource_type = r.resource_type;
    rr.resource_name = r.resource_name;
  }
  return out;
}

inline protocol::delete_groups_response error_answer(const protocol::delete_groups_request& q, std::int16_t code,
                                                     std::int16_t) {
  protocol::delete_groups_response out;
  for (const auto& g : q.groups_names) out.results.push_back({g, code});
  return out;
}

// ---------------------------------------------------------------- held answers

/// Runs functions at their deadlines on one thread of its own, in deadline order (arrival
/// order for equal deadlines). Thread-safety: thread-safe.
class delay_line {
 public:
  using clock = std::chrono::steady_clock;

  delay_line() : thread_([this] { run(); }) {}
  delay_line(const delay_line&) = delete;
  delay_line& operator=(const delay_line&) = delete;
  ~delay_line() { stop(); }

  /// Runs `fn` at `when` on the timer thread; once stopped, at once on the caller's. Returns
  /// an id for cancel() (0 when it ran at once).
  std::uint64_t at(clock::time_point when, std::function<void()> fn) {
    {
      std::lock_guard l(mu_);
      if (!stopped_) {
        const std::uint64_t id = ++next_id_;
        queue_.emplace(std::pair(when, id), std::move(fn));
        deadlines_.emplace(id, when);
        cv_.notify_one();
        return id;
      }
    }
    fn();
    return 0;
  }
  /// Forgets `id` if it has not run yet; whether it was forgotten.
  bool cancel(std::uint64_t id) {
    std::lock_guard l(mu_);
    auto d = deadlines_.find(id);
    if (d == deadlines_.end()) return false;
    queue_.erase(std::pair(d->second, id));
    deadlines_.erase(d);
    return true;
  }
  /// Functions waiting for their deadline.
  std::size_t held() const {
    std::lock_guard l(mu_);
    return queue_.size();
  }
  /// Runs everything held now, in deadline order, on the caller's thread.
  void flush() {
    while (auto fn = pop(clock::time_point::max())) (*fn)();
  }
  /// Stops the thread and runs what is held (flush()); later at() run at once. Idempotent.
  void stop() {
    {
      std::lock_guard l(mu_);
      stopped_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) {
      if (thread_.get_id() == std::this_thread::get_id()) {
        thread_.detach();  // the last owner let go on the timer thread itself
      } else {
        thread_.join();
      }
    }
    flush();
  }

 private:
  // The first function due by `now`, removed; none if there is none.
  std::optional<std::function<void()>> pop(clock::time_point now) {
    std::lock_guard l(mu_);
    if (queue_.empty() || queue_.begin()->first.first > now) return std::nullopt;
    auto fn = std::move(queue_.begin()->second);
    deadlines_.erase(queue_.begin()->first.second);
    queue_.erase(queue_.begin());
    return fn;
  }
  void run() {
    std::unique_lock l(mu_);
    while (!stopped_) {
      if (queue_.empty()) {
        cv_.wait(l);
        continue;
      }
      const auto due = queue_.begin()->first.first;
      if (clock::now() < due) {
        cv_.wait_until(l, due);
        continue;
      }
      l.unlock();
      if (auto fn = pop(clock::now())) (*fn)();
      l.lock();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<clock::time_point, std::uint64_t>, std::function<void()>> queue_;  // under mu_
  std::map<std::uint64_t, clock::time_point> deadlines_;                                // under mu_
  std::uint64_t next_id_ = 0;                                                           // under mu_
  bool stopped_ = false;                                                                // under mu_
  std::thread thread_;  // last: starts once the members above exist
};

/// What replies handed to the wrapped handler share with the faulty_handler, so that a late
/// answer (a parked Fetch answered by the broker's stop()) outlives neither.
struct held_answers {
  delay_line line;
  std::atomic<std::uint64_t> dropped{0};
};

}  // namespace detail

/// The frame answering `req` with `code` (a Kafka error code) at the request's version, as
/// detail::error_answer builds it. REQUIRES: the answer encodes (asserted).
inline protocol::response_frame error_frame(const server::incoming_request& req, errc code) {
  const auto wire = static_cast<std::int16_t>(code);
  return std::visit(
      [&](const auto& body) {
        const std::int16_t v = req.header.api_version;
        auto f = protocol::encode_response(req.header.correlation_id, detail::error_answer(body, wire, v), v);
        BROOK_ASSERT(f.has_value(), "the error answer to API key {} v{} does not encode: {}", req.header.api_key, v,
                     f.error());
        return std::move(*f);
      },
      req.body);
}

class faulty_handler final : public server::request_handler {
 public:
  using duration = std::chrono::milliseconds;

  /// `inner` must outlive this handler.
  explicit faulty_handler(server::request_handler& inner) : inner_(inner) {}
  faulty_handler(const faulty_handler&) = delete;
  faulty_handler& operator=(const faulty_handler&) = delete;
  ~faulty_handler() override { stop(); }

  /// The next requests of `key`, one per code, are answered with that code (0: passed on)
  /// after those pushed before. REQUIRES: Kafka's codes (brook's own, >= 1000, have no wire
  /// number).
  void push_errors(protocol::api_key key, std::vector<errc> codes) {
    std::lock_guard l(mu_);
    for (errc c : codes) {
      BROOK_ASSERT(static_cast<int>(c) < 1000, "{} is brook's own code, not Kafka's", errc_name(c));
      errors_[key].push_back(static_cast<std::int16_t>(c));
    }
  }
  /// Holds back every answer `rtt` after it is ready (0: none). Default 0.
  void set_latency(duration rtt) {
    std::lock_guard l(mu_);
    latency_ = rtt;
  }
  /// Holds back the answers to `key` `rtt` (0: none), whatever set_latency(rtt) says.
  void set_latency(protocol::api_key key, duration rtt) {
    std::lock_guard l(mu_);
    latency_of_[key] = rtt;
  }
  /// The next `times` requests of `key` close their connection instead of being answered.
  void drop_connection(protocol::api_key key, std::size_t times = 1) {
    std::lock_guard l(mu_);
    drops_[key] += times;
  }
  /// While down, every request closes its connection.
  void set_down(bool down) {
    std::lock_guard l(mu_);
    down_until_ = down ? clock::time_point::max() : clock::time_point::min();
  }
  /// Down for `d` from now, then up.
  void set_down_for(duration d) {
    std::lock_guard l(mu_);
    down_until_ = clock::now() + d;
  }
  bool down() const {
    std::lock_guard l(mu_);
    return clock::now() < down_until_;
  }
  /// While away, no broker is the group coordinator (see the top of this file).
  void take_coordinator_away(bool away) {
    std::lock_guard l(mu_);
    coordinator_away_ = away;
  }
  /// Ends every fault: pushed errors and drops forgotten, no latency, up, coordinator back.
  /// Answers already held keep their deadline; the counters stay.
  void heal() {
    std::lock_guard l(mu_);
    errors_.clear();
    drops_.clear();
    latency_ = duration(0);
    latency_of_.clear();
    down_until_ = clock::time_point::min();
    coordinator_away_ = false;
  }

  /// Requests of `key` seen, faulted or not.
  std::uint64_t requests(protocol::api_key key) const { return count_of(key).requests; }
  /// Faults injected into requests of `key`: error answers and closed connections.
  std::uint64_t faults(protocol::api_key key) const { return count_of(key).faults; }
  /// Faults injected, every key.
  std::uint64_t faults() const {
    std::lock_guard l(mu_);
    std::uint64_t n = 0;
    for (const auto& [key, c] : counts_) n += c.faults;
    return n;
  }
  /// Pushed errors not used yet for `key`.
  std::size_t pending_errors(protocol::api_key key) const {
    std::lock_guard l(mu_);
    auto it = errors_.find(key);
    return it == errors_.end() ? 0 : it->second.size();
  }
  /// Answers held back by the latency now.
  std::size_t held() const { return held_->line.held(); }
  /// Held answers dropped because their connection went away first.
  std::uint64_t answers_dropped() const { return held_->dropped.load(); }
  /// Sends every held answer now, as if its delay had passed.
  void release_held() { held_->line.flush(); }
  /// Sends every held answer now and holds none from here on. Idempotent.
  void stop() { held_->line.stop(); }

  void handle(server::incoming_request req, reply done) override {
    const decision d = decide(req);
    switch (d.what) {
      case decision::pass: return forward(std::move(req), std::move(done), d.rtt);
      case decision::close: return done.close();
      case decision::answer: break;
    }
    const auto* produce = std::get_if<protocol::produce_request>(&req.body);
    if (produce && produce->acks == 0) return done.close();  // as Kafka closes on a failed acks=0
    hold(std::move(done), d.rtt, [frame = error_frame(req, d.code)](const reply& r) mutable { r(std::move(frame)); });
  }

 private:
  using clock = std::chrono::steady_clock;
  struct counts {
    std::uint64_t requests = 0;
    std::uint64_t faults = 0;
  };
  struct decision {
    enum kind { pass, close, answer } what = pass;
    errc code = errc::none;
    duration rtt{0};
  };

  // Counts the request and takes the one fault it meets, if any.
  decision decide(const server::incoming_request& req) {
    const auto key = static_cast<protocol::api_key>(req.header.api_key);
    std::lock_guard l(mu_);
    auto& c = counts_[key];
    ++c.requests;
    auto rtt_of = latency_of_.find(key);
    const duration rtt = rtt_of == latency_of_.end() ? latency_ : rtt_of->second;
    auto fault = [&](decision::kind k, errc code = errc::none) {
      ++c.faults;
      return decision{k, code, rtt};
    };
    if (clock::now() < down_until_) return fault(decision::close);
    if (auto it = drops_.find(key); it != drops_.end() && it->second > 0) {
      --it->second;
      return fault(decision::close);
    }
    if (auto it = errors_.find(key); it != errors_.end() && !it->second.empty()) {
      const std::int16_t code = it->second.front();
      it->second.pop_front();
      if (code != 0) return fault(decision::answer, static_cast<errc>(code));
    }
    if (coordinator_away_)
      if (auto code = coordinator_fault(req)) return fault(decision::answer, *code);
    return decision{decision::pass, errc::none, rtt};
  }

  // What a group request gets while the coordinator is away; none for the others.
  static std::optional<errc> coordinator_fault(const server::incoming_request& req) {
    using protocol::api_key;
    switch (static_cast<api_key>(req.header.api_key)) {
      case api_key::find_coordinator: {
        const auto& q = std::get<protocol::find_coordinator_request>(req.body);
        if (q.key_type != static_cast<std::int8_t>(protocol::coordinator_type::group)) return std::nullopt;
        return errc::coordinator_not_available;
      }
      case api_key::list_groups: return errc::coordinator_not_available;
      case api_key::join_group:
      case api_key::sync_group:
      case api_key::heartbeat:
      case api_key::leave_group:
      case api_key::offset_commit:
      case api_key::offset_fetch:
      case api_key::describe_groups:
      case api_key::delete_groups: return errc::not_coordinator;
      default: return std::nullopt;
    }
  }

  // Hands `req` to the wrapped handler; with a latency, through a reply that holds its answer.
  void forward(server::incoming_request req, reply done, duration rtt) {
    if (rtt <= duration(0)) return inner_.handle(std::move(req), std::move(done));
    auto outer = std::make_shared<reply>(std::move(done));
    auto watch = std::make_shared<server::answer_watch>();
    outer->on_abandon([watch] { watch->abandon(); });  // the wrapped handler learns it as usual
    std::weak_ptr<detail::held_answers> weak = held_;
    reply inner(
        [weak, outer, rtt](std::optional<protocol::response_frame> f) {
          hold(weak, *outer, rtt, [f = std::move(f)](const reply& r) mutable { r(std::move(f)); });
        },
        std::move(watch), [weak, outer, rtt] { hold(weak, *outer, rtt, [](const reply& r) { r.close(); }); });
    inner_.handle(std::move(req), std::move(inner));
  }

  void hold(reply done, duration rtt, std::function<void(const reply&)> send) {
    if (rtt <= duration(0)) return send(done);
    hold(held_, std::move(done), rtt, std::move(send));
  }
  // Sends through `done` `rtt` from now, unless its connection goes away first. Without the
  // faulty_handler (destroyed), at once.
  static void hold(const std::weak_ptr<detail::held_answers>& weak, reply done, duration rtt,
                   std::function<void(const reply&)> send) {
    auto held = weak.lock();
    if (!held) return send(done);
    std::weak_ptr<detail::held_answers> w = held;
    const std::uint64_t id = held->line.at(clock::now() + rtt, [w, done, send = std::move(send)] {
      if (!done.abandoned()) return send(done);
      if (auto h = w.lock()) ++h->dropped;
    });
    if (id == 0) return;  // sent already
    done.on_abandon([w, id] {
      auto h = w.lock();
      if (h && h->line.cancel(id)) ++h->dropped;
    });
  }

  counts count_of(protocol::api_key key) const {
    std::lock_guard l(mu_);
    auto it = counts_.find(key);
    return it == counts_.end() ? counts{} : it->second;
  }

  server::request_handler& inner_;
  const std::shared_ptr<detail::held_answers> held_ = std::make_shared<detail::held_answers>();
  mutable std::mutex mu_;  // guards everything below
  std::map<protocol::api_key, std::deque<std::int16_t>> errors_;
  std::map<protocol::api_key, std::size_t> drops_;
  duration latency_{0};
  std::map<protocol::api_key, duration> latency_of_;
  clock::time_point down_until_ = clock::time_point::min();
  bool coordinator_away_ = false;
  std::map<protocol::api_key, counts> counts_;
};

}  // namespace brook::testing

// The definitions of producer's members; <brook/client/producer.hpp> says what each does.
// BROOK_DECL (core/linkage.hpp) makes them inline, the header-only default, or external,
// compiled once in <brook/src.hpp> under BROOK_SEPARATE_COMPILATION.
#pragma once

#include <brook/client/producer.hpp>

namespace brook {

BROOK_DECL producer::producer(data_dir& dd, producer_config cfg)
    : owned_target_(std::make_unique<data_dir_target>(dd)), target_(*owned_target_), cfg_(std::move(cfg)) {
  start();
}

BROOK_DECL producer::producer(produce_target& target, producer_config cfg) : target_(target), cfg_(std::move(cfg)) {
  start();
}

BROOK_DECL producer::~producer() {
  BROOK_ASSERT(callback_owner_ != this,
               "a producer destroyed from its own send callback (the thread running it would join itself)");
  (void)close();
}

BROOK_DECL void producer::send(const producer_record& rec, send_callback cb) {
  const auto e = enqueue(rec, cb);
  if (!e) return finish_now(e.error(), std::move(cb));
  // After mu_ is released: a sender woken under it would at once block on it.
  if (e->wake_sender) cv_.notify_one();
  if (e->append_here) append_here();
}

BROOK_DECL std::future<result<record_metadata>> producer::send(const producer_record& rec) {
  auto p = std::make_shared<std::promise<result<record_metadata>>>();
  auto f = p->get_future();
  send(rec, [p](const result<record_metadata>& r) { p->set_value(r); });
  return f;
}

BROOK_DECL result<void> producer::flush() {
  if (callback_owner_ == this)
    return make_error(errc::invalid_request, "producer::flush() from the producer's own send callback would deadlock");
  std::unique_lock lk(mu_);
  close_all_open_locked();
  const std::uint64_t target = enqueued_seq_;
  wake_sender_locked();
  // Done when no unfinished batch holds a record sent before this call.
  ++done_waiters_;
  done_cv_.wait(lk, [&] { return incomplete_.empty() || *incomplete_.begin() > target; });
  --done_waiters_;
  return ok();
}

BROOK_DECL result<void> producer::close() {
  if (callback_owner_ == this)
    return make_error(errc::invalid_request, "producer::close() from the producer's own send callback would deadlock");
  std::lock_guard close_lock(close_mu_);
  {
    std::unique_lock lk(mu_);
    if (closed_) return ok();
    closing_ = true;
  }
  auto r = flush();
  {
    std::lock_guard lk(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  if (sender_.joinable()) sender_.join();
  return r;
}

BROOK_DECL void producer::start() {
  if (!cfg_.partitioner) cfg_.partitioner = std::make_shared<default_partitioner>();
  if (cfg_.compression != compression_type::none) {
    if (cfg_.codecs.only_none())
      if (auto c = target_.codecs()) cfg_.codecs = *c;
    auto codec = cfg_.codecs.get(cfg_.compression);
    level_ = cfg_.compression == compression_type::gzip   ? cfg_.compression_gzip_level
             : cfg_.compression == compression_type::lz4  ? cfg_.compression_lz4_level
             : cfg_.compression == compression_type::zstd ? cfg_.compression_zstd_level
                                                          : 0;
    if (!codec)
      config_error_ = codec.error();
    else if (!(*codec)->valid_level(level_))
      config_error_ = make_error(errc::invalid_config, "compression.{}.level {} is out of the codec's range",
                                 compression_name(cfg_.compression), level_);
    else
      codec_ = *codec;
  }
  in_caller_ = cfg_.append_in_caller && cfg_.linger.count() == 0 && target_.completes_in_caller();
  sender_ = std::thread([this] { run_sender(); });
}

BROOK_DECL void producer::finish_now(const brook::error& e, send_callback cb) {
  if (cb) cb(result<record_metadata>(e));
}

BROOK_DECL auto producer::topic_of(const std::string& topic) -> result<topic_cache*> {
  // Most sends name the topic the previous one did (map nodes never move or go).
  if (last_topic_ == nullptr || last_topic_->first != topic) {
    auto it = topics_.find(std::string_view(topic));
    if (it == topics_.end()) it = topics_.emplace(topic, topic_cache{}).first;
    last_topic_ = &*it;
  }
  auto& tc = last_topic_->second;
  const std::uint64_t v = target_.metadata_version();
  if (tc.version != v) {
    BROOK_TRY_ASSIGN(auto n, target_.partition_count(topic));
    tc.partitions = n;
    tc.open.resize(std::max(tc.open.size(), static_cast<std::size_t>(n)));  // open batches keep their partition
    tc.version = v;
  }
  return &tc;
}

BROOK_DECL auto producer::enqueue(const producer_record& rec, send_callback& cb) -> result<enqueue_result> {
  if (config_error_) return *config_error_;
  if (rec.timestamp && *rec.timestamp < 0)  // Kafka's ProducerRecord refuses these too
    return make_error(errc::invalid_timestamp, "record timestamp {} is negative", *rec.timestamp);
  const timestamp_ms ts = rec.timestamp ? *rec.timestamp : target_.now_ms();
  const std::size_t rsize = record_batch_builder::record_size(0, 0, rec.key, rec.value, rec.headers);
  if (rsize + batch_layout::header_size > cfg_.max_request_size)
    return make_error(errc::record_too_large, "record of {} bytes exceeds max.request.size {}",
                      rsize + batch_layout::header_size, cfg_.max_request_size);
  if (rsize + batch_layout::header_size > cfg_.buffer_memory)
    return make_error(errc::record_too_large, "record of {} bytes exceeds buffer.memory {}",
                      rsize + batch_layout::header_size, cfg_.buffer_memory);
  std::unique_lock lk(mu_);
  if (closing_ || closed_) return make_error(errc::closed, "producer is closed");
  auto tc = topic_of(rec.topic);
  if (!tc) return tc.error();
  const auto n = (*tc)->partitions;
  partition_id pid{0};
  if (rec.partition) {
    pid = *rec.partition;
    if (pid.value() < 0 || pid.value() >= n)
      return make_error(errc::unknown_topic_or_partition, "topic '{}' has no partition {}", rec.topic, pid);
  } else {
    // A host partitioner may be slow, so the lock is released around it; brook's own run
    // under the lock (partitioner::runs_under_producer_lock). Either is thread-safe.
    const bool unlocked = !cfg_.partitioner->runs_under_producer_lock();
    if (unlocked) lk.unlock();
    pid = cfg_.partitioner->partition(rec.topic, rec.key, rec.value, n);
    if (unlocked) lk.lock();
    // Kafka's abortOnNewBatch: if this record would start a new batch on that partition,
    // tell the partitioner (a sticky one moves on) and ask again, once.
    if (needs_new_batch_locked(**tc, pid, rsize)) {
      if (unlocked) lk.unlock();
      cfg_.partitioner->on_new_batch(rec.topic, n, pid);
      pid = cfg_.partitioner->partition(rec.topic, rec.key, rec.value, n);
      if (unlocked) lk.lock();
    }
    if (unlocked) {  // the producer may have closed, or the topic changed, meanwhile
      if (closing_ || closed_) return make_error(errc::closed, "producer is closed");
      tc = topic_of(rec.topic);
      if (!tc) return tc.error();
    }
    if (pid.value() < 0 || pid.value() >= (*tc)->partitions)
      return make_error(errc::invalid_partitions, "partitioner chose partition {} of {} for topic '{}'", pid,
                        (*tc)->partitions, rec.topic);
  }
  // buffer.memory back-pressure.
  const std::size_t need = rsize + batch_layout::header_size;
  if (buffered_ + need > cfg_.buffer_memory) {
    auto deadline = std::chrono::steady_clock::now() + cfg_.max_block;
    // The buffer is exhausted: every open batch is ready now, whatever linger.ms says
    // (Kafka's RecordAccumulator.ready() treats an exhausted pool the same way).
    close_all_open_locked();
    wake_sender_locked();  // let the sender drain
    ++space_waiters_;
    bool got = space_cv_.wait_until(lk, deadline,
                                    [&] { return buffered_ + need <= cfg_.buffer_memory || closing_ || closed_; });
    --space_waiters_;
    if (closing_ || closed_) return make_error(errc::closed, "producer is closed");
    if (!got)
      return make_error(errc::timeout, "no buffer space for {} bytes within max.block.ms ({} ms); buffer.memory {}",
                        need, cfg_.max_block.count(), cfg_.buffer_memory);
    tc = topic_of(rec.topic);
    if (!tc || pid.value() >= (*tc)->partitions)
      return make_error(errc::unknown_topic_or_partition, "topic '{}' changed while send() waited", rec.topic);
  }
  // Decided first: a caller about to append everything itself does not wake the sender.
  const bool here = in_caller_ && append_in_caller_locked(std::chrono::steady_clock::now());
  auto& open = (*tc)->open[static_cast<std::size_t>(pid.value())];
  bool wake = false;  // the sender has a new batch to send, or an earlier deadline
  if (open && !open->builder.empty() && open->builder.size_bytes() + rsize > cfg_.batch_size) {
    close_batch_locked(open);
    wake = true;
  }
  if (!open) open = new_batch_locked(rec.topic, pid, wake);
  open->builder.append(ts, rec.key, rec.value, rec.headers);
  open->records.emplace_back(std::move(cb), ts);
  open->reserved += need;
  buffered_ += need;
  ++enqueued_seq_;
  if (open->records.size() == 1) {
    open->first_seq = enqueued_seq_;
    incomplete_.insert(enqueued_seq_);
  }
  enqueue_result r;
  if (here) {
    take_all_locked(in_caller_work_);
    r.append_here = true;
  } else if (open->builder.size_bytes() >= cfg_.batch_size) {
    close_batch_locked(open);
    wake = true;
  }
  r.wake_sender = wake && sender_needs_wake_locked();
  return r;
}

BROOK_DECL bool producer::append_in_caller_locked(std::chrono::steady_clock::time_point now) {
  const std::int64_t idle = std::max<std::int64_t>((now - last_return_) / std::chrono::nanoseconds(1), 0);
  last_return_ = now;  // a send() that does not append returns about now
  // Averages over the last several sends, so that one slow append does not send a steady
  // stream to the sender thread, nor one pause a tight loop to the caller: a pause counts
  // as one append's cost at most (a tight loop preempted once stays a loop). The average
  // starts from idle once a first append is measured (every send before counts as idle).
  // Each send the average lets append banks one more (up to burst_sends) for sends it calls
  // busy: a steady stream keeps appending in its caller through a burst (a pacer catching
  // up after a pause), while a tight loop, which the average rarely lets append, rarely banks.
  const std::int64_t cost = in_caller_cost_ns_.load(std::memory_order_relaxed);
  if (cost > 0) {
    if (idle_avg_ns_ < 0) idle_avg_ns_ = cost;
    idle_avg_ns_ = (7 * idle_avg_ns_ + std::min(idle, cost)) / 8;
  }
  if (callback_owner_ != nullptr || appending_ || sending_) return false;
  if (cost == 0 || 4 * idle_avg_ns_ >= cost) {
    idle_sends_ = std::min(idle_sends_ + 1, burst_sends);
  } else if (idle_sends_ > 0) {
    --idle_sends_;
  } else {
    return false;
  }
  appending_ = true;  // the sender now waits until append_here() is done
  return true;
}

BROOK_DECL void producer::take_all_locked(std::vector<std::unique_ptr<batch>>& work) {
  // Closed batches first: each was closed before its partition's open batch began.
  for (auto& b : ready_) work.push_back(std::move(b));
  ready_.clear();
  for (auto& [_, tc] : topics_)
    for (auto& b : tc.open)
      if (b) work.push_back(std::move(b));
  has_deadline_ = false;  // no open batch is left
}

BROOK_DECL void producer::append_here() noexcept {
  // The target completes in the caller: when send_batch() returns, the callbacks have run.
  // A callback's own send() does not append (callback_owner_ is set), so nothing else
  // touches in_caller_work_ meanwhile.
  for (auto& b : in_caller_work_) send_batch(std::move(b));
  in_caller_work_.clear();
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lk(mu_);
  appending_ = false;
  last_return_ = std::max(last_return_, now);
  // Batches other threads opened or closed meanwhile did not wake the sender.
  if (!ready_.empty() || has_deadline_) wake_sender_locked();
}

BROOK_DECL bool producer::needs_new_batch_locked(const topic_cache& tc, partition_id pid, std::size_t rsize) const {
  const auto i = static_cast<std::size_t>(pid.value());
  if (i >= tc.open.size() || !tc.open[i]) return true;
  const auto& b = tc.open[i]->builder;
  return !b.empty() && b.size_bytes() + rsize > cfg_.batch_size;
}

BROOK_DECL auto producer::new_batch_locked(const std::string& topic, partition_id pid, bool& wake)
    -> std::unique_ptr<batch> {
  std::unique_ptr<batch> b;
  if (!spare_.empty()) {
    b = std::move(spare_.back());
    spare_.pop_back();
    b->builder.reset();
    b->records.clear();
    b->reserved = 0;
  } else {
    b = std::make_unique<batch>();
  }
  b->topic = topic;
  b->pid = pid;
  b->deadline = std::chrono::steady_clock::now() + cfg_.linger;
  if (!has_deadline_ || b->deadline < next_deadline_) {
    next_deadline_ = b->deadline;
    has_deadline_ = true;
    wake = true;
  }
  return b;
}

BROOK_DECL void producer::close_batch_locked(std::unique_ptr<batch>& b) { ready_.push_back(std::move(b)); }

BROOK_DECL void producer::wake_sender_locked() {
  if (sender_needs_wake_locked()) cv_.notify_one();
}

BROOK_DECL void producer::close_all_open_locked() {
  for (auto& [_, tc] : topics_)
    for (auto& b : tc.open)
      if (b) close_batch_locked(b);
}

BROOK_DECL void producer::run_sender() {
  // Kept across rounds, so that taking the ready batches allocates nothing under mu_.
  std::deque<std::unique_ptr<batch>> work;
  auto now = std::chrono::steady_clock::now();
  std::unique_lock lk(mu_);
  for (;;) {
    // Close batches whose linger expired.
    has_deadline_ = false;
    for (auto& [_, tc] : topics_) {
      for (auto& b : tc.open) {
        if (!b) continue;
        if (b->deadline <= now)
          close_batch_locked(b);
        else if (!has_deadline_ || b->deadline < next_deadline_) {
          next_deadline_ = b->deadline;
          has_deadline_ = true;
        }
      }
    }
    if (ready_.empty() || appending_) {
      if (closed_ && ready_.empty()) return;
      sender_waiting_ = true;
      if (has_deadline_ && !appending_) {
        // A copy: condition_variable_any reads the deadline again after releasing mu_,
        // while send() may write next_deadline_.
        const auto until = next_deadline_;
        cv_.wait_until(lk, until);
      } else {
        cv_.wait(lk);  // append_here() wakes it when it is done
      }
      sender_waiting_ = false;
      now = std::chrono::steady_clock::now();
      continue;
    }
    work.swap(ready_);
    sending_ = true;
    lk.unlock();
    for (auto& b : work) send_batch(std::move(b));
    work.clear();
    now = std::chrono::steady_clock::now();  // read before the lock: send() waits for it
    lk.lock();
    sending_ = false;
  }
}

BROOK_DECL void producer::send_batch(std::unique_ptr<batch> owned) {
  // What a batch costs to append and complete, wherever it ran (so a slow first append
  // does not keep later sends away from the caller for good): see append_in_caller_locked.
  if (in_caller_) {
    const auto t0 = std::chrono::steady_clock::now();
    send_batch_now(std::move(owned));  // the target completes in the caller
    const std::int64_t took = (std::chrono::steady_clock::now() - t0) / std::chrono::nanoseconds(1);
    // Two threads may update it at once (the sender and a caller); either update will do.
    const std::int64_t avg = in_caller_cost_ns_.load(std::memory_order_relaxed);
    in_caller_cost_ns_.store(avg == 0 ? took : (7 * avg + took) / 8, std::memory_order_relaxed);
    return;
  }
  send_batch_now(std::move(owned));
}

BROOK_DECL void producer::send_batch_now(std::unique_ptr<batch> owned) {
  batch* b = owned.release();
  auto done = [this, b](const result<append_result>& r) { complete(std::unique_ptr<batch>(b), r); };
  if (codec_ == nullptr) {  // the log may trust what this process built (format/built_batch.hpp)
    b->builder.finish();
    return target_.produce_built(b->topic, b->pid, b->builder.built(), cfg_.acks, cfg_.request_timeout,
                                 std::move(done));
  }
  auto bytes = finish(b->builder);
  if (!bytes) return done(bytes.error());
  target_.produce(b->topic, b->pid, *bytes, cfg_.acks, cfg_.request_timeout, std::move(done));
}

BROOK_DECL result<std::span<std::byte>> producer::finish(record_batch_builder& builder) const {
  if (codec_ == nullptr) return builder.finish();
  return builder.finish(*codec_, level_);
}

BROOK_DECL void producer::complete(std::unique_ptr<batch> b, const result<append_result>& r) {
  if (!r && r.error() == errc::record_too_large && b->records.size() > 1) return resend_split(std::move(b));
  complete_records(*b, r);
  release(std::move(b));
}

BROOK_DECL void producer::resend_split(std::unique_ptr<batch> b) {
  // The builder still holds the records uncompressed.
  auto view = record_batch_view::parse(b->builder.finish(), batch_check{false, true});
  BROOK_ASSERT(view.has_value(), "the producer's own batch does not parse: {}", view ? "" : view.error().to_string());
  struct split {
    std::unique_ptr<batch> whole;
    std::atomic<std::size_t> left{0};
  };
  auto state = std::make_shared<split>();
  state->whole = std::move(b);
  const batch& whole = *state->whole;
  // Every single-record batch is built before the first is sent: the last completion
  // releases `whole`, whose bytes the record views point into.
  std::vector<std::shared_ptr<record_batch_builder>> ones;
  std::size_t i = 0;
  for (const record_view& rv : *view) {
    auto one = std::make_shared<record_batch_builder>();
    std::vector<record_header> headers;
    for (const auto& h : rv.headers()) headers.push_back(h);
    one->append(whole.records[i++].ts, rv.key(), rv.value(), headers);
    ones.push_back(std::move(one));
  }
  BROOK_ASSERT(ones.size() == whole.records.size(), "a batch of {} records holds {}", whole.records.size(),
               ones.size());
  state->left.store(ones.size());
  const std::string topic = whole.topic;
  const partition_id pid = whole.pid;
  for (i = 0; i < ones.size(); ++i) {
    auto done = [this, state, one = ones[i], i](const result<append_result>& r) {
      batch single;
      single.topic = state->whole->topic;
      single.pid = state->whole->pid;
      single.records.push_back(std::move(state->whole->records[i]));
      complete_records(single, r);
      if (state->left.fetch_sub(1) == 1) release(std::move(state->whole));
    };
    auto bytes = finish(*ones[i]);
    if (!bytes) {
      done(bytes.error());
      continue;
    }
    target_.produce(topic, pid, *bytes, cfg_.acks, cfg_.request_timeout, std::move(done));
  }
}

BROOK_DECL void producer::release(std::unique_ptr<batch> b) {
  // The callbacks are destroyed before the lock is taken, and a batch spare_ has no room for
  // after it is released: the sender's turn on mu_ stays short, since send() waits for it.
  b->records.clear();
  std::lock_guard lk(mu_);
  buffered_ -= b->reserved;
  incomplete_.erase(incomplete_.find(b->first_seq));
  if (spare_.size() < 16) spare_.push_back(std::move(b));
  if (space_waiters_ > 0) space_cv_.notify_all();
  if (done_waiters_ > 0) done_cv_.notify_all();
}

BROOK_DECL void producer::complete_records(batch& b, const result<append_result>& r) {
  struct owner_scope {  // restores the outer owner: a callback may complete another producer's batch
    const producer* outer = callback_owner_;
    explicit owner_scope(const producer* p) { callback_owner_ = p; }
    ~owner_scope() { callback_owner_ = outer; }
  } scope(this);
  if (!r) {
    const result<record_metadata> failed(r.error());
    for (auto& p : b.records)
      if (p.cb) p.cb(failed);
    return;
  }
  // One result for the whole batch, its offset and timestamp set per record: the topic is
  // copied once a batch, not once a record (a callback's argument is valid during the call only).
  result<record_metadata> md(record_metadata{b.topic, b.pid, offset(-1), -1});
  for (std::size_t i = 0; i < b.records.size(); ++i) {
    auto& p = b.records[i];
    if (!p.cb) continue;
    md->offset = cfg_.acks == acks_mode::none ? offset(-1) : r->base_offset + static_cast<std::int64_t>(i);
    md->timestamp = r->log_append_time >= 0 ? r->log_append_time : p.ts;
    p.cb(md);
  }
}

}  // namespace brook

// Requests that wait (Kafka's DelayedOperationPurgatory): a Fetch whose min_bytes are not
// there yet is parked with its deadline, tried again whenever the data directory's notifier
// moves (an append, a high watermark), answered as soon as it can be or when its time is
// up, and dropped when its client goes away (reply::on_abandon).
//
//   request_purgatory p(dir.notifier());
//   p.park(op, deadline, done);   // op->try_complete() now and after every change
//
// One thread runs the purgatory's loop: the timers, the re-checks and the answers of parked
// operations. Changes are coalesced: however many appends happen while a re-check is
// queued, one re-check runs. Nothing polls and no thread sleeps on a request.
//
// The purgatory listens to the notifier only while a request is parked: the loop adds its
// listener when the first one parks and removes it when the last one leaves, so an append
// into an idle purgatory's directory sees no listener and takes no lock.
//
// Thread-safety: park(), parked() and listening() from any thread; stop() from the owner's
// thread. The operations' try_complete() and expire(), and the adding and removing of the
// listener, run on the purgatory's thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include <boost/asio.hpp>

#include <brook/core/assert.hpp>
#include <brook/core/notifier.hpp>
#include <brook/server/request_handler.hpp>

namespace brook::server {

class request_purgatory {
 public:
  /// A parked request.
  class operation {
   public:
    virtual ~operation() = default;
    /// Answers now if it can; returns whether it answered.
    virtual bool try_complete() = 0;
    /// Its time is up (or the purgatory stops): answers with what there is.
    virtual void expire() = 0;
  };

  /// Listens to `n` while a request is parked; `n` must outlive the purgatory.
  explicit request_purgatory(notifier& n) : notifier_(n), guard_(boost::asio::make_work_guard(*loop_)) {
    thread_ = std::thread([this] { loop_->run(); });
  }
  request_purgatory(const request_purgatory&) = delete;
  request_purgatory& operator=(const request_purgatory&) = delete;
  ~request_purgatory() { stop(); }

  /// Parks `op` until it completes, `deadline` passes or `done` is abandoned. `done` is the
  /// reply op answers through (park only watches it).
  /// After stop(), `op` expires at once, on the caller's thread.
  void park(std::shared_ptr<operation> op, std::chrono::steady_clock::time_point deadline, const reply& done) {
    std::unique_lock l(park_mu_);
    if (closed_) {
      l.unlock();
      return op->expire();
    }
    boost::asio::post(*loop_, [this, op = std::move(op), deadline, done]() mutable {
      // Listening before the first try (listen()), so a change after the caller's own check
      // is either seen by this try or wakes a re-check.
      count_.fetch_add(1, std::memory_order_seq_cst);
      listen();
      if (op->try_complete()) {
        count_.fetch_sub(1, std::memory_order_seq_cst);
        unlisten_if_idle();
        return;
      }
      const std::uint64_t id = ++next_id_;
      auto timer = std::make_unique<boost::asio::steady_timer>(*loop_, deadline);
      timer->async_wait([this, id](boost::system::error_code ec) {
        if (!ec) finish(id, true);
      });
      parked_.emplace(id, entry{std::move(op), std::move(timer)});
      // The hook may run on a network thread after stop(): it holds the loop, and what it
      // posts runs only while the loop's thread does, which stop() ends.
      done.on_abandon([this, loop = loop_, id] { boost::asio::post(*loop, [this, id] { finish(id, false); }); });
    });
  }

  /// Parked requests now, with one being tried for the first time (a test's view).
  std::size_t parked() const noexcept { return count_.load(std::memory_order_seq_cst); }
  /// Whether the purgatory's listener is on the notifier now (a test's view): from the first
  /// park until the last parked request leaves.
  bool listening() const noexcept { return listener_.load(std::memory_order_acquire) != 0; }

  /// Expires every parked request (each answers with what it has) and joins the thread.
  /// Requests parked later expire at once. Idempotent.
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard l(park_mu_);  // every park() before this has posted; later ones expire
      closed_ = true;
    }
    boost::asio::post(*loop_, [this] {
      auto all = std::exchange(parked_, {});
      count_.fetch_sub(all.size(), std::memory_order_seq_cst);
      for (auto& [id, e] : all) {
        e.timer->cancel();
        e.op->expire();
      }
      unlisten_if_idle();
    });
    guard_.reset();
    thread_.join();
    BROOK_ASSERT(parked_.empty() && !listening(), "the purgatory stopped with {} requests parked, listening: {}",
                 parked_.size(), listening());
  }

 private:
  struct entry {
    std::shared_ptr<operation> op;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };

  // On the loop's thread. Adds the listener if it is not on. The notifier counts it
  // (seq_cst) before the sequence is read here (seq_cst), and notify() bumps the sequence
  // before it reads that count: so a notify either finds the listener (changed() queues a
  // re-check or finds one queued, and that runs after the caller's try) or bumped a
  // sequence this read sees, and then the data of the change is visible to the caller's
  // try. Already on, the listener has been there since before the caller's post.
  void listen() {
    if (listener_.load(std::memory_order_relaxed) != 0) return;
    listener_.store(notifier_.add_listener([this] { changed(); }), std::memory_order_release);
    (void)notifier_.sequence();
  }
  // On the loop's thread: removes the listener once nothing is parked. A change after this
  // finds no listener; a re-check it queued before runs on an empty map.
  void unlisten_if_idle() {
    const std::uint64_t id = listener_.load(std::memory_order_relaxed);
    if (id == 0 || !parked_.empty()) return;
    notifier_.remove_listener(id);  // only takes the notifier's lock: changed() never blocks
    listener_.store(0, std::memory_order_release);
  }

  // On the notifying thread, under the notifier's lock: only queue a re-check. The listener
  // is on only while something is parked.
  void changed() {
    if (!recheck_queued_.exchange(true, std::memory_order_acq_rel)) boost::asio::post(*loop_, [this] { recheck(); });
  }

  void recheck() {
    // A change from now on queues another. An exchange, not a store: it reads the true of
    // the last changed() that found one queued, so that change's data is visible below.
    recheck_queued_.exchange(false, std::memory_order_acq_rel);
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (it->second.op->try_complete()) {
        it->second.timer->cancel();
        it = parked_.erase(it);
        count_.fetch_sub(1, std::memory_order_seq_cst);
      } else {
        ++it;
      }
    }
    unlisten_if_idle();
  }

  // Takes parked request `id` out: expired (answers) or abandoned (drops).
  void finish(std::uint64_t id, bool expire) {
    auto it = parked_.find(id);
    if (it == parked_.end()) return;
    entry e = std::move(it->second);
    parked_.erase(it);
    count_.fetch_sub(1, std::memory_order_seq_cst);
    unlisten_if_idle();
    e.timer->cancel();
    if (expire) e.op->expire();
  }

  notifier& notifier_;
  std::shared_ptr<boost::asio::io_context> loop_ = std::make_shared<boost::asio::io_context>(1);
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::atomic<std::uint64_t> listener_{0};  // the notifier's id, 0 when off; written on the loop's thread only
  std::thread thread_;
  std::atomic<bool> recheck_queued_{false};
  std::atomic<std::size_t> count_{0};  // parked, or being tried for the first time
  std::mutex park_mu_;
  bool closed_ = false;  // under park_mu_
  // On the loop's thread only:
  std::unordered_map<std::uint64_t, entry> parked_;
  std::uint64_t next_id_ = 0;
};

}  // namespace brook::server

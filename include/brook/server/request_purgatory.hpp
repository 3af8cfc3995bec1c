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
// Thread-safety: park() from any thread; stop() once, from the owner's thread. The
// operations' try_complete() and expire() run on the purgatory's thread only.
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

  /// Listens to `n`, which must outlive the purgatory.
  explicit request_purgatory(notifier& n) : notifier_(n), guard_(boost::asio::make_work_guard(*loop_)) {
    listener_ = notifier_.add_listener([this] { changed(); });
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
      // Counted before the first try, and the notifier's sequence read after counting: an
      // append either lands before that read (the try sees its data) or its notify sees the
      // count (changed() queues a re-check). Both are seq_cst, as in notifier itself.
      count_.fetch_add(1, std::memory_order_seq_cst);
      (void)notifier_.sequence();
      if (op->try_complete()) {
        count_.fetch_sub(1, std::memory_order_seq_cst);
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

  /// Expires every parked request (each answers with what it has) and joins the thread.
  /// Requests parked later expire at once. Idempotent.
  void stop() {
    if (!thread_.joinable()) return;
    notifier_.remove_listener(listener_);
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
    });
    guard_.reset();
    thread_.join();
  }

 private:
  struct entry {
    std::shared_ptr<operation> op;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };

  // On the notifying thread, under the notifier's lock: only queue a re-check, and only
  // when something waits (an idle purgatory costs an append no wake-up).
  void changed() {
    if (count_.load(std::memory_order_seq_cst) == 0) return;
    if (!recheck_queued_.exchange(true, std::memory_order_acq_rel)) boost::asio::post(*loop_, [this] { recheck(); });
  }

  void recheck() {
    recheck_queued_.store(false, std::memory_order_release);  // a change from now on queues another
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (it->second.op->try_complete()) {
        it->second.timer->cancel();
        it = parked_.erase(it);
        count_.fetch_sub(1, std::memory_order_seq_cst);
      } else {
        ++it;
      }
    }
  }

  // Takes parked request `id` out: expired (answers) or abandoned (drops).
  void finish(std::uint64_t id, bool expire) {
    auto it = parked_.find(id);
    if (it == parked_.end()) return;
    entry e = std::move(it->second);
    parked_.erase(it);
    count_.fetch_sub(1, std::memory_order_seq_cst);
    e.timer->cancel();
    if (expire) e.op->expire();
  }

  notifier& notifier_;
  std::shared_ptr<boost::asio::io_context> loop_ = std::make_shared<boost::asio::io_context>(1);
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::uint64_t listener_ = 0;
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

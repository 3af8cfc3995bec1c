// A mutex for short critical sections that two busy threads take in turns (a producer's
// send() and its sender thread; an appender and a reader of the same log). A thread that
// finds it held spins briefly, then sleeps in the kernel as std::mutex does: the spin is
// bounded, so a holder that is descheduled or slow costs the waiter a few microseconds at
// most, never a busy wait.
//
// Why: with std::mutex every collision costs a futex sleep and a futex wake (a few
// microseconds each, and a context switch) to wait out a holder that needs about a hundred
// nanoseconds more. In the 1-producer 1-consumer pub/sub (benchmarks/client_bench.cpp) the
// producer's lock collided on most batches; docs/benchmarks.md has the futex counts and what
// this mutex changed. Kafka's own RecordAccumulator locks are JVM monitors, which spin the
// same way before they park.
//
// On glibc it is a PTHREAD_MUTEX_ADAPTIVE_NP mutex: a waiter spins (CPU pause instructions,
// trying the lock between them; none on a machine with one CPU) for at most glibc.pthread.mutex_spin_count pauses
// (default 100; fewer when recent waits were short: twice their average plus 10), then
// futex-waits. The tunable is glibc's: a host that wants no spinning at all sets
// GLIBC_TUNABLES=glibc.pthread.mutex_spin_count=0. Elsewhere it is a std::mutex. Not recursive; unlocking a mutex the
// thread does not hold is undefined, as for std::mutex.
//
// It meets Lockable, so std::lock_guard, std::unique_lock and std::condition_variable_any
// work with it (std::condition_variable does not: it takes std::mutex only).
//
// Thread-safety: a mutex; every member may be called from any thread.
#pragma once

#include <mutex>
#include <system_error>

#if defined(__GLIBC__) || defined(__linux__)
#include <pthread.h>
#endif

namespace brook {

#if defined(PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)

class adaptive_mutex {
 public:
  adaptive_mutex() noexcept = default;
  adaptive_mutex(const adaptive_mutex&) = delete;
  adaptive_mutex& operator=(const adaptive_mutex&) = delete;
  ~adaptive_mutex() { pthread_mutex_destroy(&m_); }

  void lock() {
    if (const int e = pthread_mutex_lock(&m_); e != 0) throw std::system_error(e, std::system_category());
  }
  bool try_lock() noexcept { return pthread_mutex_trylock(&m_) == 0; }
  void unlock() noexcept { pthread_mutex_unlock(&m_); }

 private:
  pthread_mutex_t m_ = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
};

#else

class adaptive_mutex {
 public:
  void lock() { m_.lock(); }
  bool try_lock() noexcept { return m_.try_lock(); }
  void unlock() noexcept { m_.unlock(); }

 private:
  std::mutex m_;
};

#endif

}  // namespace brook

#include "attnkit/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/helpers.h"
#include "attnkit/core/thread_trace.h"

namespace attnkit {

namespace {
std::atomic<int> g_max_threads{0};
thread_local int t_helpers = 0;
thread_local bool t_scoped = false;  // in with_helpers, or a helper running a chunk
thread_local bool t_split = false;
std::mutex g_source_mutex;
std::string g_source;
}  // namespace

void set_max_threads(int n) {
  set_thread_count(n > 0 ? ThreadCount{n, "--threads"} : ThreadCount{0, ""});
}

void set_thread_count(const ThreadCount& count) {
  std::lock_guard<std::mutex> lock(g_source_mutex);
  g_source = count.source;
  g_max_threads = count.threads;
}

int max_threads() {
  const int n = g_max_threads.load();
  return n > 0 ? n : default_thread_count().threads;
}

ThreadCount thread_setting() {
  std::lock_guard<std::mutex> lock(g_source_mutex);
  const int n = g_max_threads.load();
  return n > 0 ? ThreadCount{n, g_source} : default_thread_count();
}

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int threads) {
  if (n <= 0) return;
  if (t_scoped) {  // inside a task with helpers: its helpers, not new threads
    int64_t t = std::min<int64_t>(n, int64_t{t_helpers} + 1);
    if (threads > 0) t = std::min<int64_t>(t, threads);
    parallel_chunks(t, [&](int64_t k) { fn(n * k / t, n * (k + 1) / t); });
    return;
  }
  int t = threads > 0 ? threads : max_threads();
  t = static_cast<int>(std::min<int64_t>(t, n));
  if (t <= 1) {
    fn(0, n);
    return;
  }
  const int blas_before = blas_threads();
  blas_set_threads(1);
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(t - 1));
  // The thread trace (core/thread_trace.h): chunk k's CPU time is lane k's (the recording
  // thread's chunk 0 is part of its own, lane 0's).
  const bool traced = trace::recording() && trace::recorder();
  auto chunk = [&](int k) {
    const int64_t begin = n * k / t, end = n * (k + 1) / t;
    const int64_t t0 = traced && k > 0 ? (trace::set_lane(k), trace::cpu_ns()) : 0;
    try {
      fn(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    if (traced && k > 0) trace::add_busy(k, trace::cpu_ns() - t0);
  };
  for (int k = 1; k < t; ++k) pool.emplace_back(chunk, k);
  chunk(0);
  for (auto& th : pool) th.join();
  blas_set_threads(blas_before);
  if (error) std::rethrow_exception(error);
}

namespace {

// One parallel_chunks call: its chunks are taken by index; `limit` threads at most at once.
struct Job {
  const std::function<void(int64_t)>* fn = nullptr;
  int64_t n = 0;
  int limit = 1;
  bool split = false;  // the caller's split_products(), which every chunk sees
  std::atomic<int64_t> next{0};
  int64_t done = 0;  // under the pool's mutex
  int workers = 0;   // threads taking part (under the pool's mutex)
  std::exception_ptr error;
};

// The helpers' pool: threads made on first need (never more than asked for at once), kept for
// the process's life, waiting on a condition variable between jobs.
class Pool {
 public:
  static Pool& get() {
    static Pool* pool = new Pool();  // never destroyed: its threads outlive main's statics
    return *pool;
  }

  void run(Job& job) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job.workers = 1;  // this thread
      jobs_.push_back(&job);
      while (static_cast<int>(threads_.size()) < job.limit - 1) {
        const int index = static_cast<int>(threads_.size());
        threads_.emplace_back([this, index] { loop(index); });
        threads_.back().detach();
      }
    }
    wake_.notify_all();
    work(job);
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return job.done == job.n && job.workers == 0; });
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
      if (*it == &job) {
        jobs_.erase(it);
        break;
      }
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::deque<Job*> jobs_;
  std::vector<std::thread> threads_;

  // Takes chunks of `job` until none is left; called with the thread counted in job.workers.
  void work(Job& job) {
    const bool split_before = t_split, scoped_before = t_scoped;
    t_split = job.split;
    t_scoped = true;  // a parallel_for in a chunk runs inline (t_helpers is 0 here)
    int64_t count = 0;
    std::exception_ptr error;
    for (int64_t i; (i = job.next.fetch_add(1)) < job.n;) {
      ++count;
      if (error) continue;
      try {
        (*job.fn)(i);
      } catch (...) {
        error = std::current_exception();
      }
    }
    t_split = split_before;
    t_scoped = scoped_before;
    std::lock_guard<std::mutex> lock(mutex_);
    job.done += count;
    if (error && !job.error) job.error = error;
    --job.workers;
    if (job.done == job.n && job.workers == 0) finished_.notify_all();
  }

  Job* open_job() {
    for (Job* j : jobs_)
      if (j->next.load() < j->n && j->workers < j->limit) return j;
    return nullptr;
  }

  void loop(int index) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      Job* j = nullptr;
      wake_.wait(lock, [&] { return (j = open_job()) != nullptr; });
      ++j->workers;
      lock.unlock();
      const bool traced = trace::recording();
      const int64_t t0 = traced ? trace::cpu_ns() : 0;
      work(*j);
      if (traced) trace::add_busy(trace::helper_lane(index), trace::cpu_ns() - t0);
      lock.lock();
    }
  }
};

}  // namespace

void with_helpers(int n, const std::function<void()>& fn) {
  const int before = t_helpers;
  const bool scoped_before = t_scoped;
  t_helpers = std::max(0, n);
  t_scoped = true;
  try {
    fn();
  } catch (...) {
    t_helpers = before;
    t_scoped = scoped_before;
    throw;
  }
  t_helpers = before;
  t_scoped = scoped_before;
}

int helpers() { return t_helpers; }

void parallel_chunks(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (t_helpers <= 0 || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  Job job;
  job.fn = &fn;
  job.n = n;
  job.limit = static_cast<int>(std::min<int64_t>(n, int64_t{t_helpers} + 1));
  job.split = t_split;
  const int before = t_helpers;
  t_helpers = 0;  // chunks run by this thread do not lend helpers again (as on the helpers)
  Pool::get().run(job);
  t_helpers = before;
  if (job.error) std::rethrow_exception(job.error);
}

void set_split_products(bool on) { t_split = on; }
bool split_products() { return t_split; }

}  // namespace attnkit

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

namespace {

// One parallel_chunks call: its chunks are taken by index; `limit` threads at most at once.
struct Job {
  const std::function<void(int64_t)>* fn = nullptr;
  int64_t n = 0;
  int limit = 1;
  bool split = false;  // the caller's split_products(), which every chunk sees
  bool lanes = false;  // parallel_for's: chunk k's CPU time is lane k's in the thread trace
  // The caller runs chunk 0 and no other; the pool's threads take the rest. So each chunk of a
  // parallel_for runs on a thread of its own, as when it started a thread for each, and the
  // thread trace's lanes (chunk k's CPU time) show how the work is cut, whatever the load.
  bool first = false;
  std::atomic<int64_t> next{0};
  int64_t done = 0;  // under the pool's mutex
  int workers = 0;   // threads taking part (under the pool's mutex)
  std::exception_ptr error;
};

// A pool of threads made on first need (never more than asked for at once), kept for the
// process's life, waiting on a condition variable between jobs. Two of them: the helpers' (lent
// to tasks by with_helpers) and parallel_for's, so that a parallel_for's chunks (the training
// layer's slices) never take the threads their own helpers wait for.
class Pool {
 public:
  static Pool& helpers() {
    static Pool* pool = new Pool();  // never destroyed: its threads outlive main's statics
    return *pool;
  }
  static Pool& loops() {
    static Pool* pool = new Pool();
    return *pool;
  }

  void run(Job& job) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job.workers = 1;  // this thread
      if (job.first) job.next = 1;
      jobs_.push_back(&job);
      while (static_cast<int>(threads_.size()) < job.limit - 1) {
        const int index = static_cast<int>(threads_.size());
        threads_.emplace_back([this, index] { loop(index); });
        threads_.back().detach();
      }
    }
    wake_.notify_all();
    work(job, job.first ? 0 : -1);
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

  // Takes chunks of `job` until none is left, or (own >= 0: the caller of a parallel_for) runs
  // chunk `own` alone; called with the thread counted in job.workers.
  void work(Job& job, int64_t own = -1) {
    const bool split_before = t_split, scoped_before = t_scoped;
    t_split = job.split;
    t_scoped = true;  // a parallel_for in a chunk runs inline (t_helpers is 0 here)
    int64_t count = 0;
    std::exception_ptr error;
    auto chunk = [&](int64_t i) {
      ++count;
      if (error) return;  // a thread whose chunk threw runs no more
      try {
        (*job.fn)(i);
      } catch (...) {
        error = std::current_exception();
      }
    };
    if (own >= 0) {
      chunk(own);
    } else {
      for (int64_t i; (i = job.next.fetch_add(1)) < job.n;) chunk(i);
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
      // parallel_for's chunks add their time to their own lanes.
      const bool traced = trace::recording() && !j->lanes;
      const int64_t t0 = traced ? trace::cpu_ns() : 0;
      work(*j);
      if (traced) trace::add_busy(trace::helper_lane(index), trace::cpu_ns() - t0);
      lock.lock();
    }
  }
};

}  // namespace

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
  // Chunk k is [n k / t, n (k + 1) / t), whichever thread runs it: the caller runs chunk 0 and
  // only it; the pool's threads (made once, kept) take the others. The thread trace
  // (core/thread_trace.h): chunk k's CPU time is lane k's; the recording thread's chunks are
  // part of its own, lane 0's.
  const bool traced = trace::recording() && trace::recorder();
  const std::function<void(int64_t)> chunk = [&](int64_t k) {
    const int64_t begin = n * k / t, end = n * (k + 1) / t;
    if (!traced || trace::recorder()) {
      fn(begin, end);
      return;
    }
    const int lane_before = trace::lane();
    trace::set_lane(static_cast<int>(k));
    const int64_t t0 = trace::cpu_ns();
    try {
      fn(begin, end);
    } catch (...) {
      trace::add_busy(static_cast<int>(k), trace::cpu_ns() - t0);
      trace::set_lane(lane_before);
      throw;
    }
    trace::add_busy(static_cast<int>(k), trace::cpu_ns() - t0);
    trace::set_lane(lane_before);
  };
  Job job;
  job.fn = &chunk;
  job.n = t;
  job.limit = t;
  job.split = t_split;
  job.lanes = true;
  job.first = true;
  Pool::loops().run(job);
  blas_set_threads(blas_before);
  if (job.error) std::rethrow_exception(job.error);
}

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
  Pool::helpers().run(job);
  t_helpers = before;
  if (job.error) std::rethrow_exception(job.error);
}

void set_split_products(bool on) { t_split = on; }
bool split_products() { return t_split; }

}  // namespace attnkit

#include "attnkit/train/dist.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "attnkit/core/error.h"

#ifdef ATTNKIT_WITH_MPI
#include <mpi.h>
#endif

namespace attnkit::train::dist {

namespace {

// Elements per message of the pipelined chain: about 2R messages for R ranks, so that the
// pipeline's fill (R - 1 messages) costs about half the transfer itself, and within [2^12,
// 2^18] floats (16 KiB to 1 MiB) so that a message's latency stays small against its bytes.
[[maybe_unused]] int64_t chunk_for(int64_t n, int ranks) {
  const int64_t c = n / (2 * static_cast<int64_t>(ranks));
  return std::max<int64_t>(int64_t{1} << 12, std::min<int64_t>(int64_t{1} << 18, c));
}

struct State {
  bool started = false, active = false;
  int rank = 0, ranks = 1;
#ifdef ATTNKIT_WITH_MPI
  MPI_Comm failures = MPI_COMM_NULL;  // all_failed's own communicator
#endif
};

// Launched by mpirun or srun: the launchers' documented variables.
[[maybe_unused]] bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

State g_state;

// A non-negative whole number from the environment variable `v`, or -1.
int env_rank(const char* v) {
  const char* s = std::getenv(v);
  if (!s || !*s) return -1;
  char* end = nullptr;
  const long r = std::strtol(s, &end, 10);
  return *end == 0 && r >= 0 && r < (1 << 30) ? static_cast<int>(r) : -1;
}

State& state() {
  State& s = g_state;
  if (s.started) return s;
  s.started = true;
#ifdef ATTNKIT_WITH_MPI
  if (launched()) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.ranks);
    MPI_Comm_dup(MPI_COMM_WORLD, &s.failures);
    s.active = true;
    std::atexit([] {
      int done = 0;
      MPI_Finalized(&done);
      if (!done) MPI_Finalize();
    });
  }
#endif
  return s;
}

#ifdef ATTNKIT_WITH_MPI
void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw Error(std::string("MPI: ") + what + " failed");
}
#endif

}  // namespace

int rank() { return state().rank; }
int ranks() { return state().ranks; }
bool active() { return g_state.active; }  // without starting MPI

bool available() {
#ifdef ATTNKIT_WITH_MPI
  return true;
#else
  return false;
#endif
}

void chain_sum(std::vector<float>& acc,
               const std::function<void(float*, int64_t, int64_t)>& add_mine) {
  const State& s = state();
  const int64_t n = static_cast<int64_t>(acc.size());
  if (!s.active || s.ranks == 1) {
    add_mine(acc.data(), 0, n);
    return;
  }
#ifdef ATTNKIT_WITH_MPI
  const int64_t kChunk = chunk_for(n, s.ranks);
  for (int64_t b = 0; b < n; b += kChunk) {
    const int64_t e = std::min(n, b + kChunk);
    const int count = static_cast<int>(e - b);
    if (s.rank > 0)
      check(MPI_Recv(acc.data() + b, count, MPI_FLOAT, s.rank - 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
            "receiving gradients");
    add_mine(acc.data(), b, e);
    if (s.rank < s.ranks - 1)
      check(MPI_Send(acc.data() + b, count, MPI_FLOAT, s.rank + 1, 7, MPI_COMM_WORLD),
            "sending gradients");
  }
  for (int64_t b = 0; b < n; b += kChunk) {
    const int count = static_cast<int>(std::min(n, b + kChunk) - b);
    check(MPI_Bcast(acc.data() + b, count, MPI_FLOAT, s.ranks - 1, MPI_COMM_WORLD),
          "broadcasting gradients");
  }
#endif
}

void sum_exclusive(std::vector<double>& v) {
  const State& s = state();
  if (!s.active || s.ranks == 1 || v.empty()) return;
#ifdef ATTNKIT_WITH_MPI
  check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD),
        "summing step results");
#endif
}

void broadcast(std::string& bytes) {
  const State& s = state();
  if (!s.active || s.ranks == 1) return;
#ifndef ATTNKIT_WITH_MPI
  (void)bytes;
#else
  uint64_t n = bytes.size();
  check(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "broadcasting a size");
  bytes.resize(n);
  if (n)
    check(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD),
          "broadcasting");
#endif
}

int launch_rank() {
  if (g_state.active) return g_state.rank;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const int r = env_rank(v); r >= 0) return r;
  return -1;
}

void barrier() {
  const State& s = state();
  if (!s.active || s.ranks == 1) return;
#ifdef ATTNKIT_WITH_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}

bool all_failed(const std::string& message, int wait_ms, std::vector<std::string>* messages) {
  const State& s = g_state;
  if (!s.active) return false;
#ifndef ATTNKIT_WITH_MPI
  (void)message, (void)wait_ms, (void)messages;
  return false;
#else
  if (s.ranks == 1) {
    if (messages) *messages = {message};
    return true;
  }
  // A non-blocking barrier on the failures' communicator: it completes only when every rank
  // has failed (a rank still training never enters it).
  MPI_Request req = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(s.failures, &req) != MPI_SUCCESS) return false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  int done = 0;
  while (!done) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (done) break;
    if (std::chrono::steady_clock::now() >= until) return false;  // the job is aborted next
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Every rank is here: their messages to rank 0.
  int n = static_cast<int>(message.size());
  std::vector<int> sizes(static_cast<size_t>(s.ranks)), at(static_cast<size_t>(s.ranks));
  if (MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, s.failures) != MPI_SUCCESS)
    return false;
  int64_t total = 0;
  for (int r = 0; r < s.ranks; ++r) {
    at[static_cast<size_t>(r)] = static_cast<int>(total);
    total += sizes[static_cast<size_t>(r)];
  }
  std::string all(s.rank == 0 ? static_cast<size_t>(total) : 0, '\0');
  if (MPI_Gatherv(message.data(), n, MPI_CHAR, all.data(), sizes.data(), at.data(), MPI_CHAR, 0,
                  s.failures) != MPI_SUCCESS)
    return false;
  if (messages && s.rank == 0) {
    messages->clear();
    for (int r = 0; r < s.ranks; ++r)
      messages->push_back(all.substr(static_cast<size_t>(at[static_cast<size_t>(r)]),
                                     sizes[static_cast<size_t>(r)]));
  }
  return true;
#endif
}

void abort_job(int status) {
  // Not state(): an error before MPI started must not start it to abort (every rank then
  // sends Open MPI's abort banner); the rank's non-zero exit ends the job.
  const State& s = g_state;
  if (!s.active) return;
#ifdef ATTNKIT_WITH_MPI
  MPI_Abort(MPI_COMM_WORLD, status);
#else
  (void)status;
#endif
}

}  // namespace attnkit::train::dist

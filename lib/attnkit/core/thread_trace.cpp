#include "attnkit/core/thread_trace.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <ctime>

namespace attnkit::trace {

namespace {
constexpr int kTraceMaxLanes = 1024;
std::atomic<bool> g_trace_on{false};
std::atomic<int> g_trace_lanes{0};
std::array<std::atomic<int64_t>, kTraceMaxLanes> g_trace_busy{};
int64_t g_trace_begin = 0, g_trace_cpu_begin = 0;
thread_local int t_trace_lane = 0;
thread_local bool t_trace_recorder = false;
}  // namespace

int64_t cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool recording() { return g_trace_on.load(std::memory_order_relaxed); }
bool recorder() { return t_trace_recorder; }

namespace {

void trace_start_at(int lanes, int64_t at) {
  lanes = std::clamp(lanes, 1, kTraceMaxLanes);
  for (int i = 0; i < lanes; ++i) g_trace_busy[i] = 0;
  g_trace_lanes = lanes;
  t_trace_lane = 0;
  t_trace_recorder = true;
  g_trace_begin = at;
  g_trace_cpu_begin = cpu_ns();
  g_trace_on = true;
}

Phase trace_end_at(int64_t at, int64_t cpu_at) {
  Phase p;
  p.wall_ns = at - g_trace_begin;
  g_trace_on = false;
  t_trace_recorder = false;
  const int lanes = g_trace_lanes.load();
  p.busy_ns.resize(static_cast<size_t>(lanes));
  for (int i = 0; i < lanes; ++i) {
    // Lane 0: the recording thread's CPU time over the phase; the others': their chunks'.
    const int64_t b = i == 0 ? cpu_at - g_trace_cpu_begin : g_trace_busy[i].load();
    p.busy_ns[static_cast<size_t>(i)] = std::clamp<int64_t>(b, 0, p.wall_ns);
  }
  return p;
}

}  // namespace

void begin_phase(int lanes) { trace_start_at(lanes, now_ns()); }

Phase end_phase() {
  const int64_t cpu = cpu_ns();
  return trace_end_at(now_ns(), cpu);
}

Phase next_phase(int lanes) {
  const int64_t cpu = cpu_ns(), at = now_ns();
  Phase p = trace_end_at(at, cpu);
  trace_start_at(lanes, at);
  return p;
}

int lane() { return t_trace_lane; }
void set_lane(int lane) { t_trace_lane = lane; }

void add_busy(int lane, int64_t ns) {
  if (lane >= 0 && lane < g_trace_lanes.load(std::memory_order_relaxed)) g_trace_busy[lane] += ns;
}

int helper_lane(int pool_index) {
  const int l = g_trace_lanes.load(std::memory_order_relaxed) - 1 - pool_index;
  return l >= 1 ? l : -1;
}

}  // namespace attnkit::trace

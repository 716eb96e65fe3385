#include "attnkit/core/thread_trace.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>

namespace attnkit::trace {

namespace {
constexpr int kMaxLanes = 1024;
std::atomic<bool> g_recording{false};
std::atomic<int> g_lanes{0};
std::array<std::atomic<int64_t>, kMaxLanes> g_busy{}, g_wait{};
int64_t g_begin = 0;
thread_local int t_lane = 0;
thread_local bool t_recorder = false;
}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool recording() { return g_recording.load(std::memory_order_relaxed); }
bool recorder() { return t_recorder; }

namespace {

void start_at(int lanes, int64_t at) {
  lanes = std::clamp(lanes, 1, kMaxLanes);
  for (int i = 0; i < lanes; ++i) g_busy[i] = 0, g_wait[i] = 0;
  g_lanes = lanes;
  t_lane = 0;
  t_recorder = true;
  g_begin = at;
  g_recording = true;
}

Phase end_at(int64_t at) {
  Phase p;
  p.wall_ns = at - g_begin;
  g_recording = false;
  t_recorder = false;
  const int lanes = g_lanes.load();
  p.busy_ns.resize(static_cast<size_t>(lanes));
  for (int i = 0; i < lanes; ++i) {
    // Lane 0 (the recording thread) is busy whenever it does not wait; the others only in
    // their chunks.
    const int64_t b = i == 0 ? p.wall_ns - g_wait[i].load() : g_busy[i].load() - g_wait[i].load();
    p.busy_ns[static_cast<size_t>(i)] = std::clamp<int64_t>(b, 0, p.wall_ns);
  }
  return p;
}

}  // namespace

void begin_phase(int lanes) { start_at(lanes, now_ns()); }

Phase end_phase() { return end_at(now_ns()); }

Phase next_phase(int lanes) {
  const int64_t at = now_ns();
  Phase p = end_at(at);
  start_at(lanes, at);
  return p;
}

int lane() { return t_lane; }
void set_lane(int lane) { t_lane = lane; }

void add_busy(int lane, int64_t ns) {
  if (lane >= 0 && lane < g_lanes.load(std::memory_order_relaxed)) g_busy[lane] += ns;
}

void add_wait(int lane, int64_t ns) {
  if (lane >= 0 && lane < g_lanes.load(std::memory_order_relaxed)) g_wait[lane] += ns;
}

int helper_lane(int pool_index) {
  const int l = g_lanes.load(std::memory_order_relaxed) - 1 - pool_index;
  return l >= 1 ? l : -1;
}

}  // namespace attnkit::trace

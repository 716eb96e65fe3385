#include "attnkit/core/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "attnkit/core/error.h"

namespace attnkit {

namespace {

// A whole number (digits only, optional surrounding blanks); nullopt otherwise.
std::optional<int64_t> whole(const std::string& text, bool allow_minus = false) {
  const size_t b = text.find_first_not_of(" \t\n");
  if (b == std::string::npos) return std::nullopt;
  const size_t e = text.find_last_not_of(" \t\n") + 1;
  const std::string s = text.substr(b, e - b);
  size_t i = (allow_minus && s[0] == '-') ? 1 : 0;
  if (i == s.size() || s.size() > 18) return std::nullopt;
  for (size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
  return std::strtoll(s.c_str(), nullptr, 10);
}

std::optional<int> cpus_of(int64_t quota, int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  const int64_t n = (quota + period - 1) / period;
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>(n, 1), 1 << 20));
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// "/a/b" -> {"/a/b", "/a", ""}: the cgroup and its ancestors, as suffixes of the mount.
std::vector<std::string> self_and_ancestors(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path == "/") path.clear();
  std::vector<std::string> out;
  for (;;) {
    out.push_back(path);
    if (path.empty()) break;
    const size_t slash = path.rfind('/');
    path = slash == std::string::npos ? std::string() : path.substr(0, slash);
  }
  return out;
}

template <class Read>
std::optional<int> smallest_limit(const std::string& root, const std::string& path, Read read) {
  std::optional<int> best;
  for (const std::string& p : self_and_ancestors(path)) {
    const std::optional<int> n = read(root + p);
    if (n && (!best || *n < *best)) best = n;
  }
  return best;
}

// The lines of /proc/self/cgroup as (controllers, path).
std::vector<std::pair<std::string, std::string>> cgroup_lines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find(':');
    if (a == std::string::npos) continue;
    const size_t b = line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string path = line.substr(b + 1);
    if (!path.empty() && path.back() == '\r') path.pop_back();
    if (path.empty() || path[0] != '/') continue;
    out.push_back({line.substr(0, b), path});  // "0:" or "4:cpu,cpuacct"
  }
  return out;
}

}  // namespace

std::optional<int> parse_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota, period;
  if (!(in >> quota)) return std::nullopt;
  if (quota == "max") return std::nullopt;
  if (!(in >> period)) period = "100000";  // the kernel's default period
  std::string rest;
  if (in >> rest) return std::nullopt;
  const auto q = whole(quota), p = whole(period);
  if (!q || !p) return std::nullopt;
  return cpus_of(*q, *p);
}

std::optional<int> parse_cfs_quota(const std::string& quota, const std::string& period) {
  const auto q = whole(quota, true), p = whole(period);
  if (!q || !p) return std::nullopt;
  return cpus_of(*q, *p);  // -1: no quota
}

std::optional<std::string> parse_cgroup_v2_path(const std::string& text) {
  for (const auto& [head, path] : cgroup_lines(text))
    if (head == "0:") return path;
  return std::nullopt;
}

std::optional<std::string> parse_cgroup_v1_cpu_path(const std::string& text) {
  for (const auto& [head, path] : cgroup_lines(text)) {
    const std::string controllers = head.substr(head.find(':') + 1);
    std::istringstream in(controllers);
    std::string c;
    while (std::getline(in, c, ','))
      if (c == "cpu") return path;
  }
  return std::nullopt;
}

std::optional<int> cgroup_v2_cpu_limit(const std::string& root, const std::string& path) {
  return smallest_limit(root, path, [](const std::string& dir) -> std::optional<int> {
    const auto t = read_text(dir + "/cpu.max");
    return t ? parse_cpu_max(*t) : std::nullopt;
  });
}

std::optional<int> cgroup_v1_cpu_limit(const std::string& root, const std::string& path) {
  return smallest_limit(root, path, [](const std::string& dir) -> std::optional<int> {
    const auto q = read_text(dir + "/cpu.cfs_quota_us");
    const auto p = read_text(dir + "/cpu.cfs_period_us");
    return q && p ? parse_cfs_quota(*q, *p) : std::nullopt;
  });
}

std::optional<int> cgroup_cpu_quota() {
  const auto self = read_text("/proc/self/cgroup");
  if (!self) return std::nullopt;
  // cgroup v2 (the unified hierarchy at /sys/fs/cgroup: it has cgroup.controllers there).
  if (const auto p = parse_cgroup_v2_path(*self);
      p && read_text("/sys/fs/cgroup/cgroup.controllers"))
    if (const auto n = cgroup_v2_cpu_limit("/sys/fs/cgroup", *p)) return n;
  if (const auto p = parse_cgroup_v1_cpu_path(*self))
    for (const char* root : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"})
      if (const auto n = cgroup_v1_cpu_limit(root, *p)) return n;
  return std::nullopt;
}

int affinity_cpus() {
  // A mask big enough for any machine (CPU_ALLOC grows it past 1,024 CPUs).
  for (int ncpu = 1024; ncpu <= (1 << 16); ncpu *= 4) {
    cpu_set_t* set = CPU_ALLOC(ncpu);
    if (!set) break;
    const size_t size = CPU_ALLOC_SIZE(ncpu);
    CPU_ZERO_S(size, set);
    const int rc = sched_getaffinity(0, size, set);
    const int n = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    const int err = errno;
    CPU_FREE(set);
    if (rc == 0) return std::max(n, 1);
    if (err != EINVAL) break;  // EINVAL: the mask was too small
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

ThreadCount resolve_thread_count(int flag, const char* attnkit_threads, const char* omp_num_threads,
                                 int affinity, std::optional<int> quota) {
  if (flag > 0) return {flag, "--threads"};
  if (attnkit_threads && *attnkit_threads) {
    const auto n = whole(attnkit_threads);
    if (!n || *n > (1 << 20))
      throw UsageError(std::string("ATTNKIT_THREADS must be a whole number (0: not set), not '") +
                       attnkit_threads + "'");
    if (*n > 0) return {static_cast<int>(*n), "ATTNKIT_THREADS"};
  }
  if (omp_num_threads && *omp_num_threads) {
    std::string first(omp_num_threads);
    first = first.substr(0, first.find(','));
    const auto n = whole(first);
    if (n && *n > 0 && *n <= (1 << 20)) return {static_cast<int>(*n), "OMP_NUM_THREADS"};
  }
  const int a = std::max(affinity, 1);
  if (quota && *quota < a) return {std::max(*quota, 1), "the cgroup CPU quota"};
  return {a, "the affinity mask"};
}

ThreadCount thread_count(int flag) {
  if (flag > 0) return {flag, "--threads"};
  return resolve_thread_count(flag, std::getenv("ATTNKIT_THREADS"), std::getenv("OMP_NUM_THREADS"),
                              affinity_cpus(), cgroup_cpu_quota());
}

const ThreadCount& default_thread_count() {
  static const ThreadCount count = [] {
    try {
      return thread_count(0);
    } catch (const UsageError&) {
      return resolve_thread_count(0, nullptr, std::getenv("OMP_NUM_THREADS"), affinity_cpus(),
                                  cgroup_cpu_quota());
    }
  }();
  return count;
}

}  // namespace attnkit

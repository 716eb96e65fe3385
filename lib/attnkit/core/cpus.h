// How many threads a process runs by default: the CPUs it may run on, not the machine's.
// A Slurm job, a container with a CPU quota or `taskset` gives a process fewer CPUs than the
// machine has; counting the machine's (std::thread::hardware_concurrency) oversubscribes them.
//
// The order, first match wins:
//   1. --threads N with N > 0 (the tools' option; set_max_threads in core/parallel.h);
//   2. ATTNKIT_THREADS=N (N > 0; 0 or empty: not set);
//   3. OMP_NUM_THREADS=N, the common convention (its first entry when it is a list "4,2");
//      a value that is not a positive integer is ignored, as OpenMP runtimes do;
//   4. the CPUs of the affinity mask (sched_getaffinity), capped by the cgroup CPU quota when
//      one is set: cgroup v2's cpu.max of the process's own cgroup (from /proc/self/cgroup)
//      and its ancestors, or cgroup v1's cpu.cfs_quota_us / cpu.cfs_period_us; a fractional
//      quota is rounded up (1.5 CPUs: 2 threads).
// The parsers take the files' text, so that tests need no cgroup of their own.
#pragma once

#include <optional>
#include <string>

namespace attnkit {

// The text of a cgroup v2 cpu.max file ("QUOTA PERIOD", or "max PERIOD" for no limit): the
// CPUs the quota allows, rounded up (at least 1); nullopt for "max" or unreadable text.
std::optional<int> parse_cpu_max(const std::string& text);

// The texts of cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us: the same (quota -1: none).
std::optional<int> parse_cfs_quota(const std::string& quota, const std::string& period);

// The text of /proc/self/cgroup: the process's cgroup v2 path (the "0::PATH" line), or its
// cgroup v1 path for the `cpu` controller ("N:cpu,cpuacct:PATH"); nullopt where none is named.
std::optional<std::string> parse_cgroup_v2_path(const std::string& text);
std::optional<std::string> parse_cgroup_v1_cpu_path(const std::string& text);

// The CPU quota of cgroup `path` below the hierarchy mounted at `root` (v2: cpu.max; v1:
// cpu.cfs_quota_us and cpu.cfs_period_us): the smallest of the quotas set on the cgroup and
// on each of its ancestors up to `root` itself (a folder or file that is missing, as when a
// container mounts its own cgroup as the root, is skipped); nullopt where none is set.
std::optional<int> cgroup_v2_cpu_limit(const std::string& root, const std::string& path);
std::optional<int> cgroup_v1_cpu_limit(const std::string& root, const std::string& path);

// This process's cgroup CPU quota (v2 under /sys/fs/cgroup, else v1 under /sys/fs/cgroup/cpu
// or /sys/fs/cgroup/cpu,cpuacct), rounded up; nullopt where none is set.
std::optional<int> cgroup_cpu_quota();

// The CPUs of this process's affinity mask (at least 1; the machine's count where the mask
// cannot be read).
int affinity_cpus();

struct ThreadCount {
  int threads = 1;
  std::string source;  // "--threads", "ATTNKIT_THREADS", "OMP_NUM_THREADS",
                       // "the cgroup CPU quota" or "the affinity mask"
};

// The order above, from given values (nullptr: the variable is unset). Throws UsageError for
// an ATTNKIT_THREADS that is neither empty nor a whole number >= 0, naming it.
ThreadCount resolve_thread_count(int flag, const char* attnkit_threads, const char* omp_num_threads,
                                 int affinity, std::optional<int> quota);

// The same for this process: its environment, affinity mask and cgroup.
ThreadCount thread_count(int flag = 0);

// The count without a flag, as library code takes it when no tool set one: like
// thread_count(0), but a malformed ATTNKIT_THREADS is ignored rather than thrown. Worked out
// once per process.
const ThreadCount& default_thread_count();

}  // namespace attnkit

// core/cpus.h: the default thread count from the affinity mask, the cgroup CPU quota and the
// environment, with the files' parsers checked on their text.
#include "attnkit/core/cpus.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/core/helpers.h"
#include "attnkit/core/parallel.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_cpus_test {

using namespace attnkit;

namespace {

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("cpus: cgroup v2 cpu.max text") {
  CHECK(parse_cpu_max("max 100000\n") == std::nullopt);
  CHECK(parse_cpu_max("max") == std::nullopt);
  CHECK(parse_cpu_max("200000 100000\n") == 2);
  CHECK(parse_cpu_max("150000 100000") == 2);  // 1.5 CPUs: rounded up
  CHECK(parse_cpu_max("50000 100000") == 1);   // half a CPU: still one thread
  CHECK(parse_cpu_max("400000 100000") == 4);
  CHECK(parse_cpu_max("1600000 100000\n") == 16);
  CHECK(parse_cpu_max("300000") == 3);  // no period: the kernel's 100000
  CHECK(parse_cpu_max("") == std::nullopt);
  CHECK(parse_cpu_max("abc 100000") == std::nullopt);
  CHECK(parse_cpu_max("-1 100000") == std::nullopt);
  CHECK(parse_cpu_max("0 100000") == std::nullopt);
  CHECK(parse_cpu_max("100000 0") == std::nullopt);
  CHECK(parse_cpu_max("100000 100000 7") == std::nullopt);
}

TEST_CASE("cpus: cgroup v1 cfs quota text") {
  CHECK(parse_cfs_quota("-1\n", "100000\n") == std::nullopt);
  CHECK(parse_cfs_quota("250000\n", "100000\n") == 3);
  CHECK(parse_cfs_quota("100000", "100000") == 1);
  CHECK(parse_cfs_quota("x", "100000") == std::nullopt);
}

TEST_CASE("cpus: /proc/self/cgroup text") {
  const std::string v2 = "0::/user.slice/user-1000.slice/session-3.scope\n";
  CHECK(parse_cgroup_v2_path(v2) == "/user.slice/user-1000.slice/session-3.scope");
  CHECK(parse_cgroup_v1_cpu_path(v2) == std::nullopt);
  CHECK(parse_cgroup_v2_path("0::/\n") == "/");
  // A hybrid system: v1 controllers and the unified line.
  const std::string hybrid =
      "9:name=systemd:/\n4:memory:/m\n3:cpuset:/\n2:cpu,cpuacct:/docker/abc\n0::/unified\n";
  CHECK(parse_cgroup_v2_path(hybrid) == "/unified");
  CHECK(parse_cgroup_v1_cpu_path(hybrid) == "/docker/abc");
  CHECK(parse_cgroup_v1_cpu_path("5:cpuacct:/a\n1:cpu:/b\n") == "/b");  // cpuacct is not cpu
  CHECK(parse_cgroup_v1_cpu_path("3:cpuset:/x\n") == std::nullopt);
  CHECK(parse_cgroup_v2_path("") == std::nullopt);
  CHECK(parse_cgroup_v2_path("garbage\n") == std::nullopt);
  CHECK(parse_cgroup_v2_path("0::/a:b\n") == "/a:b");  // a colon in the path
}

TEST_CASE("cpus: the smallest quota of a cgroup and its ancestors") {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("attnkit-cpus-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  // v2: the leaf allows 6, its parent 3, the root none.
  write_file(root / "v2/cpu.max", "max 100000\n");
  write_file(root / "v2/job.slice/cpu.max", "300000 100000\n");
  write_file(root / "v2/job.slice/step_0/cpu.max", "600000 100000\n");
  CHECK(cgroup_v2_cpu_limit((root / "v2").string(), "/job.slice/step_0") == 3);
  CHECK(cgroup_v2_cpu_limit((root / "v2").string(), "/job.slice/step_0/") == 3);
  CHECK(cgroup_v2_cpu_limit((root / "v2").string(), "/job.slice") == 3);
  CHECK(cgroup_v2_cpu_limit((root / "v2").string(), "/") == std::nullopt);
  // A container that mounts its own cgroup as the root: the path names folders that are not
  // there, and the root's file counts.
  write_file(root / "c/cpu.max", "200000 100000\n");
  CHECK(cgroup_v2_cpu_limit((root / "c").string(), "/docker/0123") == 2);
  CHECK(cgroup_v2_cpu_limit((root / "none").string(), "/a/b") == std::nullopt);
  // v1: the quota and the period in their own files.
  write_file(root / "v1/cpu.cfs_quota_us", "-1\n");
  write_file(root / "v1/cpu.cfs_period_us", "100000\n");
  write_file(root / "v1/slurm/cpu.cfs_quota_us", "400000\n");
  write_file(root / "v1/slurm/cpu.cfs_period_us", "100000\n");
  CHECK(cgroup_v1_cpu_limit((root / "v1").string(), "/slurm") == 4);
  CHECK(cgroup_v1_cpu_limit((root / "v1").string(), "/") == std::nullopt);
  std::filesystem::remove_all(root);
}

TEST_CASE("cpus: the order of --threads, the environment, the quota and the mask") {
  auto r = resolve_thread_count(3, "5", "7", 8, 2);
  CHECK(r.threads == 3);
  CHECK(r.source == "--threads");
  r = resolve_thread_count(0, "5", "7", 8, 2);
  CHECK(r.threads == 5);
  CHECK(r.source == "ATTNKIT_THREADS");
  r = resolve_thread_count(0, nullptr, "7", 8, 2);
  CHECK(r.threads == 7);
  CHECK(r.source == "OMP_NUM_THREADS");
  r = resolve_thread_count(0, "0", "4,2", 8, std::nullopt);  // 0: not set; a list's first
  CHECK(r.threads == 4);
  CHECK(r.source == "OMP_NUM_THREADS");
  r = resolve_thread_count(0, "", "junk", 8, 2);  // OpenMP's own rule: ignored
  CHECK(r.threads == 2);
  CHECK(r.source == "the cgroup CPU quota");
  r = resolve_thread_count(0, nullptr, "0", 8, 16);  // a quota above the mask does not raise it
  CHECK(r.threads == 8);
  CHECK(r.source == "the affinity mask");
  r = resolve_thread_count(0, nullptr, nullptr, 2, std::nullopt);
  CHECK(r.threads == 2);
  CHECK(r.source == "the affinity mask");
  CHECK_THROWS_AS(resolve_thread_count(0, "two", nullptr, 2, std::nullopt), UsageError);
  CHECK_THROWS_AS(resolve_thread_count(0, "-1", nullptr, 2, std::nullopt), UsageError);
  CHECK(resolve_thread_count(4, "two", nullptr, 2, std::nullopt).threads == 4);  // not read
}

TEST_CASE("cpus: this process's affinity mask") {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  CHECK(affinity_cpus() == CPU_COUNT(&set));
  // set_max_threads and the library's default.
  set_max_threads(3);
  CHECK(max_threads() == 3);
  CHECK(thread_setting().source == "--threads");
  set_max_threads(0);
  CHECK(max_threads() == default_thread_count().threads);
}

}  // namespace attnkit_unit_cpus_test

// bench-memaccess: one memory access of the hard tree (HAM), the set, the stack or the queue,
// in place, timed as the memory grows (bench/memaccess.sh sets it beside the same accesses in
// PyTorch, bench/memaccess_torch.py).
//   bench-memaccess tree|set|stack|queue N SECONDS
//        B = 16 memories of N leaves (slots, stored values), width m = 32, controller state
//        c = 64; accesses from 8 states in turn, repeated for at least SECONDS → accesses/s
// The tree: memory/stackmem/access.h's TreeMemory (d = log2 N SEARCH decisions, the leaf
// read and written, d JOINs back up); the set: SetMemory (its control layer from the state,
// the erase and the read by content over N slots, the new slot); the stack and the queue:
// StackMemory (push, pop and value from the state, the pop and the read over N values from the
// memory's end, the pushed value). One thread: the accesses are loops over the rows. Prints one
// TSV line: impl, task, model, threads, accesses, sec (an access), accesses/s, the
// multiply-adds of an access, and a checksum of the last reads.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/rng.h"
#include "attnkit/memory/stackmem/access.h"

using namespace attnkit;

int main(int argc, char** argv) {
  const std::string kind = argc > 1 ? argv[1] : "";
  if (argc < 4 || (kind != "tree" && kind != "set" && kind != "stack" && kind != "queue")) {
    std::fprintf(stderr, "usage: bench-memaccess tree|set|stack|queue N SECONDS\n");
    return 2;
  }
  const int64_t n = std::atoll(argv[2]);
  const double seconds = std::atof(argv[3]);
  constexpr int64_t B = 16, m = 32, c = 64, H = 8;
  Rng r(1);
  auto normals = [&](int64_t k, double scale) {
    std::vector<float> v(static_cast<size_t>(k));
    for (float& x : v) x = static_cast<float>(r.normal() * scale);
    return v;
  };
  const std::vector<float> hs = normals(H * B * c, 1.0);
  std::vector<float> read(static_cast<size_t>(B * (m + 1)));
  std::unique_ptr<memory::TreeMemory> tree;
  std::unique_ptr<memory::SetMemory> set;
  std::unique_ptr<memory::StackMemory> stack;
  if (kind == "tree") {
    memory::TreeWeights w;
    w.m = m, w.c = c;
    auto d = [&](int64_t k, double scale) {
      const auto f = normals(k, scale);
      return std::vector<double>(f.begin(), f.end());
    };
    w.join_w = d(2 * m * m, 0.15), w.join_b = d(m, 0.1), w.search_w = d(m + c, 0.2);
    w.write_w = d(m * (m + c), 0.1), w.write_b = d(m, 0.1);
    tree = std::make_unique<memory::TreeMemory>(w, B, normals(B * n * m, 0.5));
  } else if (kind == "stack" || kind == "queue") {
    // strengths of 1/8 on average: a pop reaches a few values down, a read about eight
    std::vector<float> s(static_cast<size_t>(B * n));
    for (float& x : s) x = 0.25f * r.uniform();
    stack = std::make_unique<memory::StackMemory>(memory::parse_stack_kind(kind), m, c,
                                                  normals((2 + m) * c, 0.1), normals(2 + m, 0.1), B,
                                                  s, normals(B * n * m, 0.5));
  } else {
    std::vector<float> s(static_cast<size_t>(B * n));
    for (float& x : s) x = r.uniform();
    set = std::make_unique<memory::SetMemory>(m, c, normals((3 + 4 * m) * c, 0.1),
                                              normals(3 + 4 * m, 0.1), B, s,
                                              normals(B * n * m, 0.5), normals(B * n * m, 0.5));
  }
  int64_t ops = 0, k = 0;
  auto access = [&] {
    const float* h = hs.data() + (k++ % H) * B * c;
    ops = tree  ? tree->access(h, read.data())
          : set ? set->access(h, read.data())
                : stack->access(h, read.data());
  };
  for (int i = 0; i < 3; ++i) access();
  const auto t0 = std::chrono::steady_clock::now();
  int64_t done = 0;
  double sec = 0;
  while (done < 20 || sec < seconds) {
    for (int i = 0; i < 10; ++i) access();
    done += 10;
    sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double check = 0;
  for (float x : read) check += x;
  std::printf("attnkit\taccess\t%s-n%lld\t1\t%lld\t%.3e\t%.1f\t%lld\t%.4f\n", kind.c_str(),
              static_cast<long long>(n), static_cast<long long>(done), sec / done, done / sec,
              static_cast<long long>(ops), check);
  return 0;
}

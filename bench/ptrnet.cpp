// bench-ptrnet: the pointer network's training step and decoding, timed (bench/ptrnet.sh
// sets it beside the same model in PyTorch, bench/ptrnet_torch.py).
//   bench-ptrnet train N STEPS THREADS     TSP-N problems, batch 128, the training layer's
//                                          step (4 slices, Adam, clipping at 2) → examples/s
//   bench-ptrnet decode N PROBLEMS BEAM THREADS   greedy (BEAM 1: batches of 64, as ptr-run
//                                          --eval) or beam search (one problem at a time)
//                                          → problems/s
// Model: embed 128, hidden 128 (ptr-train's defaults), masking on. Prints one TSV line:
// impl, task, model, threads, n, sec (a step, or all problems), rate, extra.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnkit/core/blas.h"
#include "attnkit/core/parallel.h"
#include "attnkit/models/ptrnet/model.h"
#include "attnkit/train/module.h"

using namespace attnkit;

namespace {
constexpr int64_t B = 128;
std::vector<data::PtrProblem> problems(int64_t n, int64_t count, uint64_t seed) {
  data::PtrGenOptions o;
  o.task = data::PtrTask::Tsp, o.n_min = o.n_max = n, o.solver = "nn";
  Rng r(seed);
  std::vector<data::PtrProblem> ps;
  for (int64_t i = 0; i < count; ++i) {
    ps.push_back(data::make_ptr_problem(o, r));
    ps.back().answer = data::ptr_answer(o, ps.back());
  }
  return ps;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: bench-ptrnet train N STEPS THREADS\n"
                 "       bench-ptrnet decode N PROBLEMS BEAM THREADS\n");
    return 2;
  }
  const std::string task = argv[1];
  const int64_t n = std::atoll(argv[2]);
  models::PtrNetConfig c;
  c.task = "tsp";
  if (task == "train") {
    const int steps = std::atoi(argv[3]), threads = std::atoi(argv[4]);
    blas_set_threads(threads);
    set_max_threads(threads);
    models::PtrTrainOptions o;
    o.batch = B;
    models::PtrTraining m(c, o, problems(n, B, 1), {}, 1000000, 1, 1, "");
    nn::TrainState s;
    const int64_t rows = m.begin_batch(s);
    train::Tapes tapes;
    double last = 0;
    int64_t k = 0;
    auto step = [&] { last = train::step(m, tapes, rows, 3, k++, 2.0).loss; };
    for (int i = 0; i < 3; ++i) step();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step();
    const double sec =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
    std::printf("attnkit\ttrain\ttsp%lld\t%d\t%d\t%.5f\t%.1f\t%.4f\n", static_cast<long long>(n),
                threads, steps, sec, B / sec, last);
    return 0;
  }
  if (argc < 6) return 2;
  const int64_t count = std::atoll(argv[3]);
  const int beam = std::atoi(argv[4]), threads = std::atoi(argv[5]);
  blas_set_threads(threads);
  set_max_threads(threads);
  nn::ParamStore ps;
  Rng init(1);
  models::PtrNet net(ps, c, init);
  const auto probs = problems(n, count, 2);
  net.beam(probs[0], beam);  // warm-up
  const auto t0 = std::chrono::steady_clock::now();
  const auto scores = models::evaluate_ptr(net, probs, beam, threads);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (scores.at(-1).valid != 1.0) {
    std::fprintf(stderr, "bench-ptrnet: a masked output that is not a tour\n");
    return 1;
  }
  std::printf("attnkit\tdecode\ttsp%lld\t%d\t%lld\t%.4f\t%.1f\t%d\n", static_cast<long long>(n),
              threads, static_cast<long long>(count), sec, count / sec, beam);
  return 0;
}

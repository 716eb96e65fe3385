#include "attnkit/train/module.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/error.h"
#include "attnkit/core/fault.h"
#include "attnkit/core/helpers.h"
#include "attnkit/core/parallel.h"
#include "attnkit/core/thread_trace.h"
#include "attnkit/train/dist.h"

namespace attnkit::train {

Slice per_token(ad::Var sum, int64_t tokens) {
  Slice s;
  s.weight = static_cast<double>(std::max<int64_t>(tokens, 1));
  s.loss = ad::mul(sum, 1.0f / static_cast<float>(s.weight));
  return s;
}

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The thread trace's file (set_thread_trace, ATTNKIT_TRACE_THREADS).
struct TraceSink {
  std::mutex mutex;
  bool env_read = false;
  std::string path;
  std::FILE* file = nullptr;
};

TraceSink& trace_sink() {
  static TraceSink* sink = new TraceSink();  // never destroyed: steps may end after main
  return *sink;
}

// One step's phases, recorded on rank 0 when a trace file is set: each phase's wall time and
// each lane's busy (CPU) time (core/thread_trace.h), written as rows, then the step's totals.
class PhaseTrace {
 public:
  PhaseTrace(int64_t step, int lanes) : step_(step), lanes_(lanes) {
    TraceSink& s = trace_sink();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.env_read) {
      s.env_read = true;
      if (const char* e = std::getenv("ATTNKIT_TRACE_THREADS"); e && *e && s.path.empty())
        s.path = e;
    }
    if (s.path.empty() || dist::rank() != 0) return;
    if (!s.file) {
      s.file = std::fopen(s.path.c_str(), "w");
      if (!s.file)
        throw IoError("cannot write the thread trace " + s.path + ": " + std::strerror(errno));
      std::fputs("step\tphase\tlane\twall_ns\tbusy_ns\tidle_ns\n", s.file);
    }
    on_ = true;
    total_.busy_ns.assign(static_cast<size_t>(lanes_), 0);
    trace::begin_phase(lanes_);
  }
  PhaseTrace(const PhaseTrace&) = delete;
  PhaseTrace& operator=(const PhaseTrace&) = delete;
  ~PhaseTrace() {
    if (on_) trace::end_phase();  // an exception: the step's rows are left out
  }

  // Ends the current phase under `name` and starts the next one (last: ends the step).
  void next(const char* name, bool last = false) {
    if (!on_) return;
    const trace::Phase p = last ? trace::end_phase() : trace::next_phase(lanes_);
    if (last) on_ = false;
    rows_.emplace_back(name, p);
    total_.wall_ns += p.wall_ns;
    for (size_t i = 0; i < p.busy_ns.size(); ++i) total_.busy_ns[i] += p.busy_ns[i];
    if (!last) return;
    rows_.emplace_back("step", total_);
    TraceSink& s = trace_sink();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.file) return;
    for (const auto& [phase, t] : rows_)
      for (size_t i = 0; i < t.busy_ns.size(); ++i)
        std::fprintf(s.file, "%lld\t%s\t%zu\t%lld\t%lld\t%lld\n", static_cast<long long>(step_),
                     phase.c_str(), i, static_cast<long long>(t.wall_ns),
                     static_cast<long long>(t.busy_ns[i]),
                     static_cast<long long>(t.wall_ns - t.busy_ns[i]));
    std::fflush(s.file);
  }

 private:
  int64_t step_;
  int lanes_;
  bool on_ = false;
  trace::Phase total_;
  std::vector<std::pair<std::string, trace::Phase>> rows_;
};

}  // namespace

void set_thread_trace(const std::string& path) {
  TraceSink& s = trace_sink();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.file) std::fclose(s.file);
  s.file = nullptr;
  s.path = path;
  s.env_read = true;
}

double Module::clip_gradients(double clip) {
  return nn::clip_grad_norm(params().params(), clip > 0 ? clip : INFINITY);
}

ad::Tape& Tapes::get(size_t i) {
  while (tapes_.size() <= i) tapes_.push_back(std::make_unique<ad::Tape>(0));
  return *tapes_[i];
}

int64_t slice_count(const Module& m, int64_t rows, int64_t slices) {
  const int64_t s = slices > 0 ? slices : m.slices();
  return std::max<int64_t>(1, std::min(s, rows));
}

namespace {

StepOut traced_forward_backward(const Module& m, Tapes& tapes, int64_t rows, uint64_t seed,
                                int64_t step, bool interrupt, int64_t slices, PhaseTrace& trace,
                                const std::function<bool()>& stop_now) {
  const int64_t S = slice_count(m, rows, slices);
  const int64_t R = dist::ranks(), r = dist::rank();
  const int64_t lo = S * r / R, hi = S * (r + 1) / R;  // this rank's slices
  const int64_t mine = hi - lo;
  const auto& params = const_cast<Module&>(m).params().params();

  // Forward passes of this rank's slices, each on its own tape (made here, before the
  // threads start: Tapes::get grows a vector), on max_threads() threads (a thread runs its
  // slices one after the other: each slice's tape and result are the same either way; more
  // threads than --threads asked for would only contend for the cores).
  if (mine > 0) tapes.get(static_cast<size_t>(mine - 1));
  const int threads = max_threads();
  // Threads beyond one a slice help inside the slices (core/helpers.h): the
  // module's large products in panels fixed by their shapes, so the bits stay the same.
  // OpenBLAS runs single-threaded in the slices whatever their number: its own threads would
  // cut the products by the thread count, and round differently.
  const int spare = static_cast<int>(std::max<int64_t>(0, threads - std::max<int64_t>(mine, 1)));
  const bool split = m.split_products();
  const int blas_before = blas_threads();
  blas_set_threads(1);
  struct BlasBack {
    int n;
    ~BlasBack() { blas_set_threads(n); }
  } blas_back{blas_before};
  auto in_slices = [&](const std::function<void(int64_t)>& body) {
    parallel_for(
        mine,
        [&](int64_t b, int64_t e) {
          const bool split_before = split_products();
          set_split_products(split);
          try {
            with_helpers(spare, [&] {
              for (int64_t i = b; i < e; ++i) {
                fault_point("slice");  // tests' SIGTERM inside a step
                if (stop_now && stop_now()) throw StepDropped{};
                body(i);
              }
            });
          } catch (...) {
            set_split_products(split_before);
            throw;
          }
          set_split_products(split_before);
        },
        threads);
  };
  std::vector<Slice> out(static_cast<size_t>(std::max<int64_t>(mine, 0)));
  in_slices([&](int64_t i) {
    const int64_t c = lo + i;
    ad::Tape& t = tapes.get(static_cast<size_t>(i));
    t.clear();
    t.set_local_param_grads(true);
    t.set_training(true);
    t.seed(splitmix(splitmix(seed ^ 0x7a3e5ULL) + static_cast<uint64_t>(step)) ^
           splitmix(static_cast<uint64_t>(c) + 1));
    out[static_cast<size_t>(i)] =
        m.forward(t, rows * c / S, rows * (c + 1) / S, static_cast<int>(c));
  });
  trace.next("forward");

  // Share per slice: weight, loss and sums (one rank owns each entry), and the interrupt flag.
  const std::vector<std::string> names = m.slice_sums();
  const size_t nsums = names.size();
  const size_t per = 2 + nsums;
  std::vector<double> shared(static_cast<size_t>(S) * per + static_cast<size_t>(R), 0.0);
  for (int64_t i = 0; i < mine; ++i) {
    const Slice& s = out[static_cast<size_t>(i)];
    double* row = &shared[static_cast<size_t>(lo + i) * per];
    row[0] = s.weight;
    row[1] = static_cast<double>(s.loss.value()[0]);
    if (s.sums.size() != nsums) throw Error("a slice's sums do not match slice_sums()");
    for (size_t k = 0; k < nsums; ++k) row[2 + k] = s.sums[k];
  }
  shared[static_cast<size_t>(S) * per + static_cast<size_t>(r)] = interrupt ? 1.0 : 0.0;
  dist::sum_exclusive(shared);

  StepOut res;
  for (int64_t c = 0; c < S; ++c) res.weight += shared[static_cast<size_t>(c) * per];
  const bool mean = m.reduction() == Reduction::Mean;
  for (int64_t c = 0; c < S; ++c) {
    const double w = shared[static_cast<size_t>(c) * per],
                 l = shared[static_cast<size_t>(c) * per + 1];
    res.loss += mean ? l * w : l;
  }
  if (mean) res.loss = res.weight > 0 ? res.loss / res.weight : 0.0;
  for (size_t k = 0; k < nsums; ++k) {
    double v = 0;
    for (int64_t c = 0; c < S; ++c) v += shared[static_cast<size_t>(c) * per + 2 + k];
    res.sums.push_back({names[k], v});
  }
  for (int64_t k = 0; k < R; ++k)
    res.interrupted |= shared[static_cast<size_t>(S) * per + static_cast<size_t>(k)] != 0;

  trace.next("exchange");

  // Backward passes, each seeded with its share of the mean (or 1 for a sum).
  in_slices([&](int64_t i) {
    const Slice& s = out[static_cast<size_t>(i)];
    const float seed_grad =
        mean ? static_cast<float>(res.weight > 0 ? s.weight / res.weight : 0.0) : 1.0f;
    tapes.get(static_cast<size_t>(i)).backward(s.loss, Tensor(s.loss.value().shape(), seed_grad));
  });

  trace.next("backward");

  // Gradients: zero, then every slice's added in slice order (across ranks by the chain).
  for (ad::Parameter* p : params)
    if (p->grad.shape() != p->value.shape()) p->grad = Tensor(p->value.shape());
  auto add_slices = [&](float* dst, const ad::Parameter& p, int64_t begin, int64_t end) {
    for (int64_t i = 0; i < mine; ++i) {
      const Tensor* g = tapes.get(static_cast<size_t>(i)).local_grad(p);
      if (!g) continue;
      const float* src = g->data();
      for (int64_t j = begin; j < end; ++j) dst[j] += src[j];
    }
  };
  if (R == 1) {
    nn::for_param_blocks(params, [&](size_t k, int64_t begin, int64_t end) {
      ad::Parameter& p = *params[k];
      float* dst = p.grad.data();
      std::fill(dst + begin, dst + end, 0.0f);
      add_slices(dst, p, begin, end);
    });
  } else {
    std::vector<int64_t> offset{0};
    for (const ad::Parameter* p : params) offset.push_back(offset.back() + p->value.size());
    std::vector<float> acc(static_cast<size_t>(offset.back()), 0.0f);
    dist::chain_sum(acc, [&](float* a, int64_t begin, int64_t end) {
      size_t k = static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), begin) -
                                     offset.begin()) -
                 1;
      for (int64_t pos = begin; pos < end && k < params.size(); ++k) {
        const int64_t pe = std::min(end, offset[k + 1]);
        if (pe > pos) add_slices(a + offset[k], *params[k], pos - offset[k], pe - offset[k]);
        pos = pe;
      }
    });
    for (size_t k = 0; k < params.size(); ++k)
      std::copy(acc.begin() + offset[k], acc.begin() + offset[k + 1], params[k]->grad.data());
  }
  // The tapes are cleared by the next step's forward, each on the thread of its slice (the
  // pool gives a slice the same thread step after step): here, on this thread alone, freeing a
  // few thousand nodes was the larger part of the serial time of a small model's step.
  return res;
}

}  // namespace

StepOut forward_backward(const Module& m, Tapes& tapes, int64_t rows, uint64_t seed, int64_t step,
                         bool interrupt, int64_t slices, const std::function<bool()>& stop_now) {
  PhaseTrace trace(step, max_threads());
  StepOut out =
      traced_forward_backward(m, tapes, rows, seed, step, interrupt, slices, trace, stop_now);
  trace.next("grad_sum", true);
  return out;
}

StepOut step(Module& m, Tapes& tapes, int64_t rows, uint64_t seed, int64_t step_no, double clip,
             bool interrupt, int64_t slices, const std::function<bool()>& stop_now) {
  PhaseTrace trace(step_no, max_threads());
  StepOut out =
      traced_forward_backward(m, tapes, rows, seed, step_no, interrupt, slices, trace, stop_now);
  trace.next("grad_sum");
  out.grad_norm = m.clip_gradients(clip);
  trace.next("clip");
  if (std::isfinite(out.loss) && std::isfinite(out.grad_norm)) m.optimizer().step();
  trace.next("optimiser", true);
  return out;
}

}  // namespace attnkit::train

#include "attnkit/models/ptrnet/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/config.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/trainer.h"
#include "attnkit/train/load.h"

namespace attnkit::models {

using ad::Var;
using data::PtrProblem;
using data::PtrTask;

namespace {
constexpr float kMasked = -1e9f;  // added to a closed position's score: exp() of it is 0
}

void PtrNetConfig::validate() const {
  data::parse_ptr_task(task);
  if (embed < 1 || hidden < 1) throw UsageError("embed and hidden must be >= 1");
}

void PtrTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  nn::check_schedule_name(schedule);
  if (warmup < 0) throw UsageError("warmup must be >= 0");
}

std::vector<uint8_t> ptr_allowed(PtrTask task, bool mask, int64_t n,
                                 const std::vector<int32_t>& seq) {
  std::vector<uint8_t> ok(static_cast<size_t>(n + 1), 1);
  if (!mask) return ok;
  const bool closed_task = data::ptr_task_closed(task);
  const bool closed = closed_task && seq.size() >= 2 && seq.front() == seq.back();
  const int64_t distinct = static_cast<int64_t>(seq.size()) - (closed ? 1 : 0);
  if (closed || (task == PtrTask::Sort && distinct >= n)) {
    std::fill(ok.begin() + 1, ok.end(), 0);
    return ok;
  }
  for (int32_t i : seq) ok[static_cast<size_t>(i)] = 0;
  if (closed_task && !seq.empty() && (task == PtrTask::Hull || distinct == n))
    ok[static_cast<size_t>(seq.front())] = 1;
  ok[0] = 0;  // the end: only after the last point (sort) or the closing one
  return ok;
}

PtrNet::PtrNet(nn::ParamStore& ps, const PtrNetConfig& c, Rng& rng)
    : c_((c.validate(), c)),
      task_(c.kind()),
      in_(ps, "input", data::ptr_task_dim(task_), c.embed, rng),
      encoder_(ps, "encoder",
               nn::EncoderOptions{nn::CellKind::LSTM, c.embed, c.hidden, 1, c.bidirectional, 0.0f},
               rng),
      decoder_(ps, "decoder", nn::CellKind::LSTM, c.embed, c.hidden, rng),
      go_(ps, "go", 1, c.embed, rng),
      end_(ps, "end", 1, c.hidden * (c.bidirectional ? 2 : 1), rng),
      wk_(ps, "pointer.W", c.hidden * (c.bidirectional ? 2 : 1), c.hidden, rng, false),
      wq_(ps, "pointer.U", c.hidden, c.hidden, rng, false) {
  Tensor v({c.hidden});
  nn::init_uniform(v, rng, 1.0f / std::sqrt(static_cast<float>(c.hidden)));
  v_ = &ps.add("pointer.v", std::move(v));
}

struct PtrNet::Encoded {
  int64_t B = 0, T = 0;
  std::vector<int64_t> n;
  Var table;  // [1 + B·T, embed]: the go input, then each item's embedded points
  Var keys;   // [B, T + 1, hidden]: W applied to [end; encoder outputs]
  nn::State state;
};

PtrNet::Encoded PtrNet::encode(ad::Tape& t, const std::vector<const PtrProblem*>& ps) const {
  Encoded e;
  e.B = static_cast<int64_t>(ps.size());
  const int dim = data::ptr_task_dim(task_);
  for (const PtrProblem* p : ps) {
    if (p->dim != dim) throw DataError("a problem's points have another dimension than the task's");
    e.n.push_back(p->n());
    e.T = std::max(e.T, p->n());
  }
  Tensor x({e.B, e.T, dim}, 0.0f);
  for (int64_t b = 0; b < e.B; ++b)
    for (int64_t i = 0; i < e.n[static_cast<size_t>(b)]; ++i)
      for (int d = 0; d < dim; ++d)
        x[(b * e.T + i) * dim + d] = static_cast<float>(ps[static_cast<size_t>(b)]->x(i, d));
  Var xe = in_(t, t.constant(std::move(x)));  // [B, T, E]
  nn::RecurrentEncoder::Output enc = encoder_(t, xe, e.n);
  e.state = enc.final[0];
  e.table = ad::concat({go_(t, {0}, {1}), ad::reshape(xe, {e.B * e.T, c_.embed})}, 0);
  Var ends = end_(t, std::vector<int32_t>(static_cast<size_t>(e.B), 0), {e.B, 1});
  e.keys = wk_(t, ad::concat({ends, enc.outputs}, 1));
  return e;
}

Var PtrNet::scores(ad::Tape& t, Var keys, const nn::State& s) const {
  return ad::additive_scores(keys, wq_(t, s.h), t.param(*v_));
}

Var PtrNet::loss(ad::Tape& t, const std::vector<const PtrProblem*>& items, int64_t* tokens) const {
  Encoded e = encode(t, items);
  int64_t M = 0;
  for (const PtrProblem* p : items) {
    if (p->answer.empty()) throw DataError("a training problem without an answer");
    M = std::max<int64_t>(M, static_cast<int64_t>(p->answer.size()) + 1);
  }
  const int64_t P = e.T + 1;
  // Teacher forcing: every step's decoder input (the embedding of the last chosen input) is
  // known before the recurrence runs, so the steps' inputs, targets and masks come first.
  std::vector<int32_t> ids(static_cast<size_t>(M * e.B));
  std::vector<int32_t> flat(static_cast<size_t>(M * e.B));  // the targets, step-major
  Tensor bias({M, e.B, P}, 0.0f);                           // the mask: kMasked or 0
  int64_t count = 0;
  std::vector<int32_t> prefix;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t b = 0; b < e.B; ++b) {
      const PtrProblem& p = *items[static_cast<size_t>(b)];
      const int64_t L = static_cast<int64_t>(p.answer.size());
      const int64_t n = e.n[static_cast<size_t>(b)];
      ids[static_cast<size_t>(m * e.B + b)] =
          m == 0 || m > L
              ? 0
              : static_cast<int32_t>(1 + b * e.T + p.answer[static_cast<size_t>(m - 1)] - 1);
      int32_t y = -1;
      if (m < L)
        y = p.answer[static_cast<size_t>(m)];
      else if (m == L)
        y = 0;
      flat[static_cast<size_t>(m * e.B + b)] = y;
      float* row = bias.data() + (m * e.B + b) * P;
      for (int64_t j = n + 1; j < P; ++j) row[j] = kMasked;
      if (y < 0) continue;
      ++count;
      if (c_.mask) {
        prefix.assign(p.answer.begin(), p.answer.begin() + m);
        const auto ok = ptr_allowed(task_, true, n, prefix);
        if (!ok[static_cast<size_t>(y)])
          throw DataError("the mask forbids step " + std::to_string(m + 1) + " of an answer (" +
                          (y ? "index " + std::to_string(y) : std::string("its end")) +
                          "): not a valid " + data::ptr_task_name(task_) + " answer");
        for (int64_t j = 0; j <= n; ++j)
          if (!ok[static_cast<size_t>(j)]) row[j] = kMasked;
      }
    }
  }
  // The decoder's inputs are rows of the table: their input projection W_ih x + b in one
  // product over the table, gathered per step; the recurrence in one node (one product for
  // dW_hh); the pointer's queries U h_m for all steps in one product, their scores against
  // the keys in one node [M, B, P], and one cross-entropy over every (step, item) row.
  Var projected = decoder_.project(t, e.table);  // [1 + B·T, 4·hidden]
  Var Y = ad::lstm_sequence(ad::embedding(projected, ids, {M, e.B}), e.state.h, e.state.c,
                            t.param(*decoder_.W_hh));
  Var Q = wq_(t, ad::slice(Y, 0, 0, M));  // [M, B, hidden]
  // Closed positions' scores are not computed (0: kMasked alone makes their probability
  // exactly 0, as kMasked + score did; the loss and every gradient are the same bits).
  std::vector<uint8_t> closed(static_cast<size_t>(bias.size()));
  for (int64_t i = 0; i < bias.size(); ++i) closed[static_cast<size_t>(i)] = bias[i] == kMasked;
  Var logits =
      ad::add(ad::additive_scores(e.keys, Q, t.param(*v_), closed), t.constant(std::move(bias)));
  Var total = ad::mul(nn::cross_entropy(logits, flat), static_cast<float>(count));
  if (tokens) *tokens = count;
  return total;
}

namespace {
// Row r of a [R, ...] tensor's values.
Tensor rows_of(const Tensor& x, const std::vector<int64_t>& rows) {
  Shape sh = x.shape();
  const int64_t w = x.size() / sh[0];
  sh[0] = static_cast<int64_t>(rows.size());
  Tensor out(sh);
  for (size_t i = 0; i < rows.size(); ++i)
    std::copy(x.data() + rows[i] * w, x.data() + (rows[i] + 1) * w,
              out.data() + static_cast<int64_t>(i) * w);
  return out;
}
void log_softmax_row(const float* s, const std::vector<uint8_t>& ok, std::vector<double>& out) {
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < ok.size(); ++j)
    if (ok[j]) mx = std::max(mx, static_cast<double>(s[j]));
  double z = 0;
  for (size_t j = 0; j < ok.size(); ++j)
    if (ok[j]) z += std::exp(static_cast<double>(s[j]) - mx);
  out.assign(ok.size(), -std::numeric_limits<double>::infinity());
  for (size_t j = 0; j < ok.size(); ++j)
    if (ok[j]) out[j] = static_cast<double>(s[j]) - mx - std::log(z);
}
}  // namespace

namespace {
// Decoding's tapes, one a thread each, cleared (their buffers kept) at each call: a fresh
// tape a problem would allocate, zero and unmap every step's tensors again (half the time of
// decoding small problems). Local parameter gradients: param() then never allocates a
// Parameter's gradient (decoding threads share the model). `decode_tape(1)` is greedy
// decoding's step tape, cleared every step: a step's buffers are the last step's, so a
// decoding touches the memory of one step instead of every step's (new pages are costly: a
// worker thread's first batch spent 90% of its time faulting them in).
ad::Tape& decode_tape(int which = 0) {
  thread_local ad::Tape encoding(0), step(0);
  ad::Tape& t = which ? step : encoding;
  t.clear();
  t.set_local_param_grads(true);
  t.set_training(false);
  t.set_recording(false);
  return t;
}
}  // namespace

std::vector<std::vector<int32_t>> PtrNet::greedy(const std::vector<const PtrProblem*>& ps,
                                                 std::vector<Tensor>* attention) const {
  ad::Tape& t = decode_tape();
  Encoded e = encode(t, ps);
  const int64_t P = e.T + 1;
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(e.B));
  std::vector<uint8_t> done(static_cast<size_t>(e.B), 0);
  std::vector<std::vector<std::vector<float>>> att(static_cast<size_t>(e.B));
  std::vector<int32_t> ids(static_cast<size_t>(e.B), 0);
  // Every step on the step tape, cleared each step: what a step reads of the encoding (the
  // table of decoder inputs, the keys) enters it as views of the encoding tape's values, the
  // state as views of the last step's values (copied out before the tape is cleared).
  Tensor h = e.state.h.value().clone(), c = e.state.c.value().clone();
  std::vector<double> lp;
  for (int64_t m = 0; m < max_steps(e.T); ++m) {
    ad::Tape& st = decode_tape(1);
    nn::State s{st.constant_view(h), st.constant_view(c)};
    s = decoder_(st, ad::embedding(st.constant_view(e.table.value()), ids, {e.B}), s);
    const Tensor& sc = scores(st, st.constant_view(e.keys.value()), s).value();
    std::copy(s.h.value().values().begin(), s.h.value().values().end(), h.values().begin());
    std::copy(s.c.value().values().begin(), s.c.value().values().end(), c.values().begin());
    bool any = false;
    for (int64_t b = 0; b < e.B; ++b) {
      const size_t ub = static_cast<size_t>(b);
      const int64_t n = e.n[ub];
      if (done[ub]) continue;
      const auto ok = ptr_allowed(task_, c_.mask, n, out[ub]);
      log_softmax_row(sc.data() + b * P, ok, lp);
      int32_t best = 0;
      for (int32_t j = 1; j <= n; ++j)
        if (lp[static_cast<size_t>(j)] > lp[static_cast<size_t>(best)]) best = j;
      if (attention) {
        std::vector<float> row(static_cast<size_t>(n + 1));
        for (size_t j = 0; j < row.size(); ++j) row[j] = static_cast<float>(std::exp(lp[j]));
        att[ub].push_back(std::move(row));
      }
      if (best == 0 || m + 1 >= max_steps(n)) {
        done[ub] = 1;
        if (best != 0) out[ub].push_back(best);
        continue;
      }
      out[ub].push_back(best);
      ids[ub] = static_cast<int32_t>(1 + b * e.T + best - 1);
      any = true;
    }
    if (!any) break;
  }
  if (attention) {
    attention->clear();
    for (int64_t b = 0; b < e.B; ++b) {
      const auto& rows = att[static_cast<size_t>(b)];
      const int64_t w = e.n[static_cast<size_t>(b)] + 1;
      Tensor a({static_cast<int64_t>(rows.size()), w});
      for (size_t i = 0; i < rows.size(); ++i)
        std::copy(rows[i].begin(), rows[i].end(), a.data() + static_cast<int64_t>(i) * w);
      attention->push_back(std::move(a));
    }
  }
  return out;
}

std::vector<int32_t> PtrNet::beam(const PtrProblem& p, int k, Tensor* attention) const {
  if (k < 1) throw UsageError("beam must be >= 1");
  ad::Tape& t = decode_tape();
  Encoded e = encode(t, {&p});
  const int64_t n = p.n(), P = n + 1;
  struct Hyp {
    std::vector<int32_t> seq;
    double logp = 0;
    int64_t row = 0;  // its state's row
    std::vector<std::vector<float>> att;
  };
  std::vector<Hyp> alive(1), finished;
  Tensor h = e.state.h.value().clone(), c = e.state.c.value().clone();
  const Tensor& keys1 = e.keys.value();
  std::vector<double> lp;
  for (int64_t m = 0; m < max_steps(n) && !alive.empty(); ++m) {
    const int64_t R = static_cast<int64_t>(alive.size());
    std::vector<int64_t> rows;
    std::vector<int32_t> ids;
    for (const Hyp& y : alive) {
      rows.push_back(y.row);
      ids.push_back(y.seq.empty() ? 0 : y.seq.back());  // the table's row 1 + 0·T + (i - 1)
    }
    nn::State s{t.constant(rows_of(h, rows)), t.constant(rows_of(c, rows))};
    s = decoder_(t, ad::embedding(e.table, ids, {R}), s);
    Var keys = t.constant(rows_of(keys1, std::vector<int64_t>(static_cast<size_t>(R), 0)));
    const Tensor& sc = scores(t, keys, s).value();
    struct Cand {
      double logp;
      int64_t hyp;
      int32_t j;
    };
    std::vector<Cand> cands;
    std::vector<std::vector<double>> lps(static_cast<size_t>(R));
    for (int64_t r = 0; r < R; ++r) {
      const Hyp& y = alive[static_cast<size_t>(r)];
      const auto ok = ptr_allowed(task_, c_.mask, n, y.seq);
      log_softmax_row(sc.data() + r * P, ok, lps[static_cast<size_t>(r)]);
      for (int32_t j = 0; j <= n; ++j)
        if (ok[static_cast<size_t>(j)])
          cands.push_back({y.logp + lps[static_cast<size_t>(r)][static_cast<size_t>(j)], r, j});
    }
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Cand& a, const Cand& b) { return a.logp > b.logp; });
    std::vector<Hyp> next;
    for (const Cand& cd : cands) {
      if (static_cast<int64_t>(next.size()) >= k) break;
      if (!std::isfinite(cd.logp)) break;
      Hyp y = alive[static_cast<size_t>(cd.hyp)];
      y.logp = cd.logp;
      y.row = cd.hyp;
      if (attention) {
        const auto& l = lps[static_cast<size_t>(cd.hyp)];
        std::vector<float> row(l.size());
        for (size_t j = 0; j < l.size(); ++j) row[j] = static_cast<float>(std::exp(l[j]));
        y.att.push_back(std::move(row));
      }
      if (cd.j == 0 || m + 1 >= max_steps(n)) {
        if (cd.j != 0) y.seq.push_back(cd.j);
        finished.push_back(std::move(y));
        if (static_cast<int64_t>(finished.size()) >= k) break;
        continue;
      }
      y.seq.push_back(cd.j);
      next.push_back(std::move(y));
    }
    h = s.h.value().clone(), c = s.c.value().clone();
    // The best finished output beats every live one once it is above the best live score
    // (scores only fall), or when k have finished.
    alive = std::move(next);
    if (static_cast<int64_t>(finished.size()) >= k) break;
    if (!finished.empty() && !alive.empty()) {
      double best_done = -std::numeric_limits<double>::infinity(), best_alive = best_done;
      for (const Hyp& y : finished) best_done = std::max(best_done, y.logp);
      for (const Hyp& y : alive) best_alive = std::max(best_alive, y.logp);
      if (best_done >= best_alive) break;
    }
  }
  if (finished.empty()) finished = alive;  // nothing finished within max_steps (unmasked)
  const Hyp* best = &finished[0];
  for (const Hyp& y : finished)
    if (y.logp > best->logp) best = &y;
  if (attention) {
    Tensor a({static_cast<int64_t>(best->att.size()), P});
    for (size_t i = 0; i < best->att.size(); ++i)
      std::copy(best->att[i].begin(), best->att[i].end(), a.data() + static_cast<int64_t>(i) * P);
    *attention = std::move(a);
  }
  return best->seq;
}

// ---- evaluation

std::vector<std::vector<int32_t>> decode_ptr(const PtrNet& m, const std::vector<PtrProblem>& ps,
                                             int beam, int threads) {
  if (beam < 1) throw UsageError("beam must be >= 1");
  const int64_t N = static_cast<int64_t>(ps.size());
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(N));
  constexpr int64_t kGroup = 64;  // greedy decodes this many at once
  const int64_t groups = (N + kGroup - 1) / kGroup;
  parallel_for(
      groups,
      [&](int64_t g0, int64_t g1) {
        for (int64_t g = g0; g < g1; ++g) {
          const int64_t lo = g * kGroup, hi = std::min(N, lo + kGroup);
          if (beam == 1) {
            std::vector<const PtrProblem*> grp;
            for (int64_t i = lo; i < hi; ++i) grp.push_back(&ps[static_cast<size_t>(i)]);
            auto y = m.greedy(grp);
            for (int64_t i = lo; i < hi; ++i)
              out[static_cast<size_t>(i)] = std::move(y[static_cast<size_t>(i - lo)]);
          } else {
            for (int64_t i = lo; i < hi; ++i)
              out[static_cast<size_t>(i)] = m.beam(ps[static_cast<size_t>(i)], beam);
          }
        }
      },
      threads);
  return out;
}

std::map<int64_t, PtrScore> evaluate_ptr(const PtrNet& m, const std::vector<PtrProblem>& ps,
                                         int beam, int threads,
                                         std::vector<std::vector<int32_t>>* outputs) {
  const PtrTask task = m.config().kind();
  const int64_t N = static_cast<int64_t>(ps.size());
  std::vector<std::vector<int32_t>> out = decode_ptr(m, ps, beam, threads);
  std::map<int64_t, PtrScore> s;
  for (int64_t i = 0; i < N; ++i) {
    const PtrProblem& p = ps[static_cast<size_t>(i)];
    const auto& y = out[static_cast<size_t>(i)];
    if (p.answer.empty())
      throw DataError("problem " + std::to_string(i + 1) + " has no answer to score against");
    const bool ok = data::valid_output(task, p, y);
    double len = 0, opt = 0, nn = 0, cov = 0;
    if (ok && task == PtrTask::Tsp) {
      len = data::path_length(p, y), opt = data::path_length(p, p.answer);
      nn = data::path_length(p, data::tsp_nearest_neighbour(p));
    }
    if (ok && task == PtrTask::Hull) {
      const double a = data::polygon_area(p, p.answer);
      cov = a > 0 ? data::polygon_area(p, y) / a : 1.0;
    }
    for (int64_t key : {p.n(), int64_t{-1}}) {
      PtrScore& r = s[key];
      ++r.problems;
      r.exact += y == p.answer;
      if (!ok) continue;
      r.valid += 1, ++r.measured;
      r.length += len, r.optimum += opt, r.nn += nn, r.coverage += cov;
    }
  }
  for (auto& [k, r] : s) {
    r.exact /= static_cast<double>(r.problems);
    r.valid /= static_cast<double>(r.problems);
    if (r.measured) {
      const double d = static_cast<double>(r.measured);
      r.length /= d, r.optimum /= d, r.nn /= d, r.coverage /= d;
    }
  }
  if (outputs) *outputs = std::move(out);
  return s;
}

std::string ptr_score_tsv(PtrTask task, const std::map<int64_t, PtrScore>& s) {
  std::string out = "n\tproblems\texact\tvalid";
  if (task == PtrTask::Tsp) out += "\ttour\toptimum\tgap_pct\tnearest_neighbour";
  if (task == PtrTask::Hull) out += "\tcoverage";
  out += "\n";
  auto row = [&](const std::string& key, const PtrScore& r) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s\t%lld\t%.4f\t%.4f", key.c_str(),
                  static_cast<long long>(r.problems), r.exact, r.valid);
    out += buf;
    if (task == PtrTask::Tsp) {
      if (r.measured)
        std::snprintf(buf, sizeof buf, "\t%.4f\t%.4f\t%.2f\t%.4f", r.length, r.optimum,
                      100.0 * (r.length / r.optimum - 1.0), r.nn);
      else
        std::snprintf(buf, sizeof buf, "\t-\t-\t-\t-");
      out += buf;
    }
    if (task == PtrTask::Hull) {
      if (r.measured)
        std::snprintf(buf, sizeof buf, "\t%.4f", r.coverage);
      else
        std::snprintf(buf, sizeof buf, "\t-");
      out += buf;
    }
    out += "\n";
  };
  for (const auto& [k, r] : s)
    if (k >= 0) row(std::to_string(k), r);
  if (s.count(-1)) row("all", s.at(-1));
  return out;
}

// ---- training

PtrTraining::PtrTraining(PtrNetConfig config, PtrTrainOptions o, std::vector<PtrProblem> train,
                         std::vector<PtrProblem> valid, int64_t steps_or_0, int64_t epochs,
                         uint64_t seed, std::string config_yaml)
    : DatasetModule(o.batch, seed, std::move(config_yaml)),
      cfg_(std::move(config)),
      o_(o),
      train_(std::move(train)),
      valid_(std::move(valid)) {
  cfg_.validate();
  o_.validate();
  if (train_.empty()) throw DataError("no training problems", o_.train_file);
  const PtrTask task = cfg_.kind();
  // A problem's error names its file and line (an archive's: the problem's number).
  auto fail = [](const std::string& what, const std::string& file, const PtrProblem& p, size_t i) {
    throw DataError(p.line ? what : "problem " + std::to_string(i + 1) + ": " + what, file,
                    static_cast<long>(p.line));
  };
  // Every answer must be one the mask admits (it would otherwise cost -log 0).
  for (size_t i = 0; i < train_.size(); ++i) {
    const PtrProblem& p = train_[i];
    if (p.dim != data::ptr_task_dim(task))
      fail("points of " + std::to_string(p.dim) + " coordinates for the task " +
               data::ptr_task_name(task),
           o_.train_file, p, i);
    if (p.answer.empty()) fail("a training problem without an answer", o_.train_file, p, i);
    if (!cfg_.mask) continue;
    std::vector<int32_t> prefix;
    for (size_t m = 0; m <= p.answer.size(); ++m) {
      const auto ok = ptr_allowed(task, true, p.n(), prefix);
      const int32_t y = m < p.answer.size() ? p.answer[m] : 0;
      if (!ok[static_cast<size_t>(y)])
        fail("the answer is not a valid " + data::ptr_task_name(task) +
                 " answer under the mask (step " + std::to_string(m + 1) +
                 "); train with --no-mask to accept it",
             o_.train_file, p, i);
      if (m < p.answer.size()) prefix.push_back(y);
    }
  }
  for (size_t i = 0; i < valid_.size(); ++i)
    if (valid_[i].answer.empty())
      fail("a validation problem without an answer", o_.valid_file, valid_[i], i);
  set_run(static_cast<int64_t>(train_.size()), steps_or_0, epochs);
  Rng init(seed);
  model_ = std::make_unique<PtrNet>(ps_, cfg_, init);
  use_adam(o_.lr, o_.schedule, o_.warmup);
}

train::Slice PtrTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  int64_t tokens = 0;
  Var sum = model_->loss(t, slice_items(train_, begin, end), &tokens);
  return train::per_token(sum, tokens);
}

std::vector<std::string> PtrTraining::eval_metrics() const {
  if (valid_.empty()) return {};
  if (cfg_.kind() == PtrTask::Tsp) return {"valid_exact", "valid_valid", "valid_gap_pct"};
  return {"valid_exact", "valid_valid"};
}

train::Metrics PtrTraining::evaluate() {
  if (valid_.empty()) return {};
  const PtrScore a = evaluate_ptr(*model_, valid_, 1, 0).at(-1);
  train::Metrics m = {{"valid_exact", a.exact}, {"valid_valid", a.valid}};
  if (cfg_.kind() == PtrTask::Tsp) {
    const double gap = a.measured ? 100.0 * (a.length / a.optimum - 1.0) : 100.0;
    m.push_back({"valid_gap_pct", gap});
    // Invalid tours count as twice the optimum.
    return evaluated(std::move(m), a.valid * gap + (1.0 - a.valid) * 100.0);
  }
  return evaluated(std::move(m), -(a.exact + 1e-3 * a.valid));
}

LoadedPtrNet load_ptrnet(const std::string& path) {
  LoadedPtrNet m;
  m.file = nn::load_model_file(path, "ptrnet");
  train::in_file(path, [&] {
    train::read_config(m.file, m.config);
    io::check_stored([&] { m.config.validate(); }, path);
    m.model = train::build<PtrNet>(m.file, m.params, m.config);
  });
  return m;
}

}  // namespace attnkit::models

// Classic Hopfield networks (Hopfield 1982): a content-addressable memory of P patterns of N
// bipolar (-1/+1) values, stored in a symmetric weight matrix W (N x N, zero diagonal) and
// thresholds b (N), recalled by the dynamics s_i <- sign(h_i), h = W s + b, which descend
// the energy E(s) = -1/2 s'Ws - b's.
//
// Conventions: patterns and states are rows of a [rows, N] tensor; rows, columns, probes and
// patterns are numbered from 1 in messages, traces and reports (the row of the file).
// A local field within rounding of zero, |h_i| <= 1e-6 (sum_j |w_ij| + |b_i|), counts as zero
// and keeps the neuron's current state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnkit/core/tensor.h"

namespace attnkit::memory {

// ---- patterns

// Checks that every value is exactly -1 or +1; throws DataError "row R, column C: value V is
// not -1 or +1" (from 1) otherwise. Rank 1 is one row; rank 3 and above are ShapeErrors.
void check_bipolar(const Tensor& x);

// The rows of x flipped at exactly `count` distinct positions each (0 <= count <= N), the
// positions drawn by a partial Fisher-Yates shuffle from one Rng(seed), row after row.
// Throws DataError for a count out of range.
Tensor flip_bits(const Tensor& x, int64_t count, uint64_t seed);
// round(fraction * n), half away from zero; DataError unless 0 <= fraction <= 1.
int64_t flip_count(double fraction, int64_t n);

// ---- storing

enum class Rule {
  Hebb,           // w_ij = (1/N) sum_mu p_i p_j, w_ii = 0
  Storkey,        // Storkey 1997: incremental and local; exact-recall capacity N / sqrt(2 ln N)
  PseudoInverse,  // projection (Personnaz et al. 1985): W = X+ X, diagonal then zeroed
};
// "hebb", "storkey", "pseudo-inverse"; anything else is a ChoiceError.
Rule parse_rule(const std::string& name);
std::string rule_name(Rule rule);

struct Net {
  Tensor W;  // [N, N]
  Tensor b;  // [N]
  int64_t n() const { return W.rank() == 2 ? W.dim(0) : 0; }
};

// Checks W is square and b has N values (ShapeError naming both shapes otherwise).
void check_net(const Net& net);

// Stores the rows of `patterns` ([P, N], -1/+1, checked) by `rule`; b = 0.
//  Hebb: one sgemm, X'X / N. Storkey: for each pattern p with fields f = W p,
//  W += (1/N)(p p' - p f' - f p') + (2/N) W, then w_ii = 0 (h_ij = f_i - w_ij p_j, the field
//  without neurons i and j). Pseudo-inverse: W = Q'Q where the rows of Q are an orthonormal
//  basis of the patterns' span (Cholesky of X X' in double; patterns that depend linearly on
//  earlier ones add nothing), then w_ii = 0.
Net store(const Tensor& patterns, Rule rule);

// ---- fields and energy

// Local fields H = S W' + b for the rows of S ([rows, N]); one sgemm.
Tensor fields(const Net& net, const Tensor& states);
// E = -1/2 s'Ws - b's for every row of `states` (any finite values): [rows].
Tensor energy(const Net& net, const Tensor& states);

// ---- recall

enum class Mode { Async, Sync };
enum class Order { Random, Sequential };
Mode parse_mode(const std::string& name);    // "async", "sync"; ChoiceError otherwise
Order parse_order(const std::string& name);  // "random", "sequential"; ChoiceError

enum class Outcome {
  Converged,  // reached a fixed point (steps = updates that changed the state)
  Cycled,     // sync only: s(t) = s(t-2) != s(t-1), a 2-cycle
  Limit,      // still moving after max_steps
};
std::string outcome_name(Outcome o);  // "converged", "cycled", "limit"

struct RecallOptions {
  Mode mode = Mode::Async;
  Order order = Order::Random;  // async: a fresh seeded permutation per sweep, or 1..N
  int max_steps = 100;          // async: sweeps over all N neurons; sync: parallel updates
  uint64_t seed = 0;            // probe k uses its own Rng (seed, k): thread count is irrelevant
  const Tensor* patterns = nullptr;  // [P, N]: overlaps m_mu = p_mu . s / N
  bool trace = false;                // a TraceRow per probe and step (step 0 = the probe)
  bool trace_flips = false;  // async: a FlipRow per flip, energy from the definition (O(N^2))
  int threads = 0;           // parallel_for budget (0: max_threads())
  // The number of probes before these in a larger run that was sliced (cli --shard): probe k
  // seeds its generator and is numbered (traces) as probe probe0 + k of the whole run.
  int64_t probe0 = 0;
};

struct TraceRow {
  int64_t probe;  // from 1
  int step;       // 0 = the probe as given
  double energy;
  int64_t flips;         // neurons that changed in this step
  int64_t best;          // pattern with the largest |m| (from 1; 0 without patterns)
  float overlap;         // m of that pattern (signed: -1 is its mirror image)
  std::vector<float> m;  // every overlap, when patterns are given
};

struct FlipRow {
  int64_t probe;   // from 1
  int step;        // the sweep (0: the probe as given)
  int64_t flip;    // flips so far in this probe's run
  int64_t neuron;  // the neuron that flipped (from 1; 0 on the step-0 row)
  double energy;   // E after the flip, -1/2 s'Ws - b's computed afresh in double
};

struct ProbeResult {
  Outcome outcome = Outcome::Limit;
  int steps = 0;         // updates that changed the state
  int64_t best = 0;      // retrieved pattern (from 1), with patterns given
  float overlap = 0.0f;  // its overlap with the final state
};

struct RecallResult {
  Tensor states;  // [probes, N]
  std::vector<ProbeResult> probes;
  std::vector<TraceRow> trace;      // probe by probe, step by step
  std::vector<FlipRow> flip_trace;  // probe by probe
};

// Runs the dynamics from every row of `probes` ([n, N], -1/+1). Async: one sgemm for the
// initial fields, then per flip of neuron i the fields move by 2 s_i W[:, i] (O(N) per flip).
// Sync: all neurons at once; the fields of a step come from one sgemm over the moving probes,
// or, when a step flips fewer than 1/16 of their neurons, by the same column updates.
// Throws ShapeError when N differs from the net's, DataError for non-bipolar probes.
RecallResult recall(const Net& net, const Tensor& probes, const RecallOptions& opt);

// The trace as TSV with a header: probe, step, energy, flips, and with patterns best,
// overlap, m1..mP. The flip trace: probe, step, flip, neuron, energy.
std::string format_trace(const std::vector<TraceRow>& trace, int64_t patterns);
std::string format_flip_trace(const std::vector<FlipRow>& trace);
// The report of a classic run, a line each: with `named` (patterns given) one line per probe
// (outcome, steps, the pattern it ended nearest to), then the totals.
std::vector<std::string> recall_report(const RecallResult& r, const RecallOptions& opt, bool named);

}  // namespace attnkit::memory

// What a model brings to the training layer (train/trainer.h), and the data-parallel step
// that the layer runs for it.
//
// A module owns its model, its data source and its evaluation:
//   - params() and optimizer(): what is trained and how it is updated;
//   - begin_batch(state): makes the global batch of (epoch, position) current, the same on
//     every rank (data orders come from nn::epoch_order(seed, epoch, n) or from a generator
//     whose state save_state() keeps), and returns how many items (rows) it has;
//   - forward(tape, begin, end, slice): the loss of items [begin, end) on a tape, and the
//     weight that loss is a mean over (tokens, questions, ...). Called concurrently for
//     different slices, each on its own tape, so it must not change the module;
//   - evaluate(): validation metrics, on rank 0;
//   - describe(), save_state(), load_state(), check_resume(): what files carry.
//
// The step (train::step below): the batch is cut into S slices of consecutive items
// (S = the module's slices(); fewer when the batch has fewer items);
// rank r computes slices [S r / R, S (r+1) / R) on its threads, each on a tape seeded from
// (seed, step, slice) alone and with its own parameter gradients. The slices' weights are
// shared, each slice's backward is seeded with weight / total weight (a mean over the global
// batch) or 1 (Reduction::Sum), and the slice gradients are added in slice order across the
// ranks (dist::chain_sum). So the result depends on S and nothing else: any number of threads
// and ranks give the same bits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"
#include "attnkit/nn/trainer.h"

namespace attnkit::train {

class Loop;  // train/loop.h

using Metrics = std::vector<std::pair<std::string, double>>;

struct Slice {
  ad::Var loss;                   // one element
  double weight = 1.0;            // what the loss is a mean over (Reduction::Mean)
  std::vector<double> sums = {};  // counts to add up over the batch, in slice_sums() order
};

// A slice whose loss is the mean of `sum` over its `tokens` (at least 1).
Slice per_token(ad::Var sum, int64_t tokens);

enum class Reduction { Mean, Sum };

struct StepEnd {
  Metrics metrics = {};  // extra per-step values, averaged in the log window
  bool stop = false;     // end the run after this step
};

class Module {
 public:
  virtual ~Module() = default;

  virtual std::string kind() const = 0;  // the model files' kind
  virtual nn::ParamStore& params() = 0;
  virtual nn::Optimizer& optimizer() = 0;
  virtual int64_t total_steps() const = 0;  // the run's length
  virtual int64_t batches_per_epoch() const = 0;
  virtual void describe(nn::ModelFile& f) const = 0;        // configuration, vocabularies
  virtual void check_resume(const nn::ModelFile&) const {}  // DataError when it does not fit
  virtual void save_state(nn::ModelFile&) const {}          // more state for exact resume
  virtual void load_state(const nn::ModelFile&) {}
  virtual void add_rngs(Loop&) {}  // generators saved in checkpoints

  // How many slices a batch is cut into (fewer when it has fewer items): a function of the
  // recipe (the batch size, the model), never of the machine, so that every --threads and
  // number of ranks gives the same model.
  virtual int slices() const = 0;
  // Whether the slices' large matrix products are computed in panels (core/blas.h), so that
  // threads beyond one a slice help inside them. The panels round differently from one
  // whole product: turning this on changes a module's models once, not with the threads.
  virtual bool split_products() const { return false; }
  virtual Reduction reduction() const { return Reduction::Mean; }
  // Names of the counts each slice adds up (Slice::sums), e.g. wrong answers.
  virtual std::vector<std::string> slice_sums() const { return {}; }
  virtual int64_t begin_batch(const nn::TrainState& s) = 0;
  // Whether a step may be dropped part-way when a signal arrives: begin_batch changes
  // nothing that checkpoints keep (the module's saved state and generators change in
  // end_step and evaluate only), so that the state before the step is a checkpoint from
  // which a resumed run redoes the step as if never stopped. Then, in a run of one process,
  // the layer polls the signal before each slice's forward and backward pass and stops
  // within the step (a slow step's signal is not left waiting for the step's end).
  virtual bool stops_within_step() const { return false; }
  virtual Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const = 0;
  // Clips the summed gradients and returns their global norm before clipping. Default: the
  // global L2 norm, scaled down to `clip` when clip > 0.
  virtual double clip_gradients(double clip);
  // After the update (made only when the loss and norm are finite).
  virtual StepEnd end_step(const nn::TrainState&, double /*loss*/, const Metrics& /*sums*/) {
    return {};
  }
  virtual Metrics evaluate() { return {}; }
  // Whether to evaluate after this step (s: the state after it) besides every --eval-every
  // steps and at the end: e.g. at every epoch's end for a module that validates each epoch.
  virtual bool eval_due(const nn::TrainState&) const { return false; }
  // The run's result for best-of-runs (lower is better), and the numbers the final model
  // file carries about it (e.g. result/train_error). Called once, at the end, on every rank.
  virtual double score() { return 0.0; }
  virtual void finish(nn::ModelFile&) {}
  // Names of the per-step metrics end_step reports (for the log header).
  virtual std::vector<std::string> step_metrics() const { return {}; }
  // Names of the metrics evaluate() returns.
  virtual std::vector<std::string> eval_metrics() const { return {}; }
};

struct StepOut {
  double loss = 0.0;         // mean per weight (Mean) or sum (Sum) over the global batch
  double weight = 0.0;       // total weight
  double grad_norm = 0.0;    // before clipping
  Metrics sums;              // slices' sums added up
  bool interrupted = false;  // some rank saw SIGINT/SIGTERM (see trainer.h)
};

// Thrown by step() and forward_backward() when their `stop_now` said yes before a slice's
// pass: the step was dropped part-way (no gradient summed, no update), so the parameters,
// the optimiser and the module are as before the step.
struct StepDropped {};

// The tapes of one process, reused from step to step. get(i) makes tapes up to i: call it
// for the largest i before threads use them.
class Tapes {
 public:
  ad::Tape& get(size_t i);

 private:
  std::vector<std::unique_ptr<ad::Tape>> tapes_;
};

// One data-parallel forward and backward of the module's current batch (rows items), the
// gradients summed into the parameters' grads (zeroed first). `interrupt` is this process's
// signal flag, agreed among ranks in the same exchange.
// `slices` > 0 replaces the module's slice count (tests compare slice counts).
// `stop_now`, when set (one process only: ranks must agree), is polled before each slice's
// forward and backward pass; when it says yes the step is dropped: StepDropped.
StepOut forward_backward(const Module& m, Tapes& tapes, int64_t rows, uint64_t seed, int64_t step,
                         bool interrupt = false, int64_t slices = 0,
                         const std::function<bool()>& stop_now = {});

// The whole update as train::run makes it, on the module's current batch of `rows` items:
// forward_backward, then Module::clip_gradients(clip) (StepOut::grad_norm), then the
// optimiser's step when the loss and the norm are finite. Benchmarks and tests call this.
StepOut step(Module& m, Tapes& tapes, int64_t rows, uint64_t seed, int64_t step, double clip,
             bool interrupt = false, int64_t slices = 0,
             const std::function<bool()>& stop_now = {});

// The per-step thread trace: where each thread works and where it waits, phase by phase
// (forward, exchange, backward, grad_sum, then in step() clip and optimiser; core/thread_trace.h
// says what a lane is). With a file set (here, or ATTNKIT_TRACE_THREADS=FILE in the
// environment, read at the first step), rank 0 writes to it, TSV: a header, then per step,
// phase and lane (0 to max_threads() - 1): step, phase, lane, wall_ns, busy_ns (the lane's CPU
// time), idle_ns (wall - busy: waiting for other threads, or for a CPU), and last the phase
// "step", the sums over the step's phases. "" turns it off. bench/threads.sh sums it up.
void set_thread_trace(const std::string& path);

// The number of slices a batch of `rows` items is cut into.
int64_t slice_count(const Module& m, int64_t rows, int64_t slices = 0);

}  // namespace attnkit::train

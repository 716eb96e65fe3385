// The Stack-, Queue- and DeQue-LSTM of Grefenstette et al. 2015 (Section 3.4), and the plain
// LSTM baseline: an LSTM controller that reads the input symbol and the memory's previous
// read, and at each step sets a push strength d = σ(·), a pop strength u = σ(·) (its bias
// starts at −1: Appendix B, without it success depends on the seed) and a value v = tanh(·)
// for a continuous stack, queue or deque (memory/stackmem/memory.h). The prediction is
// softmax(W_y tanh(W_o [h_t; r_t])).
//
// A transduction reads the source, then a separator (<bos>), then (teacher-forced in
// training) the target; the outputs from the separator on predict the target and <eos>.
// Decoding is greedy after the separator. The papers' metrics: coarse accuracy (the whole
// target right) and fine accuracy (the share of the target right before the first error).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/core/fields.h"
#include "attnkit/data/transduce.h"
#include "attnkit/data/vocab.h"
#include "attnkit/memory/stackmem/ham.h"
#include "attnkit/memory/stackmem/memory.h"
#include "attnkit/memory/stackmem/set.h"
#include "attnkit/nn/layers.h"
#include "attnkit/nn/model_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/rnn.h"
#include "attnkit/train/dataset_module.h"
#include "attnkit/train/loaded.h"
#include "attnkit/train/module.h"

namespace attnkit::memory {

struct StackLstmConfig {
  // stack, queue, deque, set (memory/stackmem/set.h; its control layer reads the symbol's embedding
  // besides the controller's state), tree (HAM's soft form, memory/stackmem/ham.h: the
  // source's embeddings in the leaves, accessed from the separator on) or none (the plain LSTM)
  std::string memory = "stack";
  int64_t vocab = 0;                            // from the training data
  int64_t embed = 32, hidden = 64, width = 32;  // width: the memory's value size
  // The prediction also sees this step's read (softmax(W_y tanh(W_o [h_t; r_t]))); false:
  // the paper's form, from the controller alone (the read enters at the next step's input).
  bool read_out = false;
  // Two controllers around the one memory: the encoder's LSTM and memory control read the
  // source, the decoder's (starting from the encoder's state) read the separator and the
  // target. Each has its own push and pop policy, so what the source phase learns to push
  // does not have to be unlearned by the target phase (an encoder-decoder arrangement; the
  // paper has one controller).
  bool two_controllers = false;
  // The controllers also read how full the memory is: tanh of its total strength (0 when
  // empty, near 1 from a strength of 2 on), so that a decoder can stop when the memory runs
  // empty rather than by a count carried in its state.
  bool depth_input = false;
  // Two controllers: the decoder's push, pop and value come from what it reads at that step
  // (the symbol's embedding and the memory's previous read, one linear layer), not from its
  // LSTM state, so that its use of the memory cannot follow a count of the symbols written
  // (the prediction still comes from its LSTM). A set: the encoder's keys, value, strengths
  // and threshold come from the symbol's embedding alone (a symbol's key is then the same
  // wherever it occurs; from the state as well, membership stayed at chance in 1,000 steps).
  bool input_control = false;
  // A set: each step reads with the key it writes (q = k_w), so that a symbol's read scores
  // its own earlier slots by |k|², the most a key of tanh units reaches against any slot of
  // like norm: the read lands on them when the symbol was seen, and spreads over the others
  // when not (untied, a separate read key had to learn to line up with the written one, and a
  // trained set's query read fell on the slot written just before it instead: the "?"'s).
  bool tied_keys = false;
  // A deque's bottom push strengths start at σ(this bias) (0: the bias is drawn as every
  // other, about σ = 0.5, as the top's): a negative bias starts the deque pushing at the top
  // only, so that its bottom end reads the oldest value (a queue) rather than its own latest
  // push (a second stack).
  double bottom_push_bias = 0.0;
  // The pop strengths' initial bias (Grefenstette et al., Appendix B: −1). A deque pops at
  // both ends: with −1 it loses σ(−1) ≈ 0.27 at each end a step, more than the ≈ 0.5 pushed at
  // the top, so that at the start it holds about one value and its bottom end never shows the
  // oldest ones; a lower bias lets the values pile up as in the stack and the queue.
  double pop_bias = -1.0;
  // The push strengths start at σ(this bias) (0: drawn as every other bias); with two
  // controllers, the encoder's; a deque's at both ends unless bottom_push_bias. A positive one
  // starts the values strong, the first one too (it is pushed from the zero state, where the
  // bias is nearly all there is), so that after a long source the oldest still reads whole.
  double push_bias = 0.0;
  // Two controllers: the decoder's push strengths start at σ(this bias) (0: drawn as every
  // other bias). A negative one starts the decoder consuming the memory without burying the
  // values it needs under its own pushes (a stack's top is where it reads).
  double decoder_push_bias = 0.0;
  // Two controllers: the encoder's pop strengths start at σ(this bias) (0: pop_bias), the
  // decoder's at pop_bias. The encoder only stores, and whatever it pops is lost; with a low
  // one here the decoder's pops can start high (a deque's at both ends, -1 as the queue's),
  // so that it finds the end a task reads (copy: the bottom; reversal: the top) without
  // the source leaking out while it is read.
  double encoder_pop_bias = 0.0;
  // Two controllers and a deque: the decoder's bottom pop strengths start at σ(this bias) (0:
  // the pop bias, as every other pop). A lower one starts the decoder popping from the top
  // alone, so that a reversal does not eat the oldest values, the last ones it answers, from
  // the bottom; it can still learn to pop there (a copy's).
  double decoder_bottom_pop_bias = 0.0;
  // Training adds op_cost × the push and pop strengths summed over the steps, ends and pairs
  // to the summed cross-entropy (so, per target symbol, to the loss): memory traffic the task
  // does not need (a deque's churn at the end it does not use) is driven to zero, where it
  // would otherwise stay at a level too small to matter on the training lengths and eat the
  // values on longer ones. 0: none (the paper's loss).
  double op_cost = 0.0;
  // Joulin & Mikolov 2015's stack RNN instead: h_t = σ(W [x_t; h_{t−1}; the top `stack_top`
  // elements of each of `stacks` stacks]), per stack a softmax over PUSH, POP and NO-OP and a
  // pushed value σ(·), the prediction softmax(V h_t). `memory` is then unused.
  bool stack_rnn = false;
  int64_t stacks = 10, stack_top = 2;
  // The stack RNN's decoding takes each stack's likeliest action, whole (Joulin & Mikolov's
  // "rounding"); training keeps the soft actions.
  bool rounding = false;
  // A tree: soft (DHAM, every leaf weighted by the product of its path's branch probabilities)
  // or hard (HAM's own form: one leaf per access, its path's nodes alone touched; training
  // samples each level's decision and trains their log-probabilities by REINFORCE, decoding
  // takes the likelier child).
  std::string attention = "soft";
  // hard: the REINFORCE term's weight. The loss adds, for each access k of a pair (from the
  // separator on) with log-probability log π_k of its d decisions,
  //   −reinforce · (G_k − b_k) · log π_k,   G_k = Σ_{t ≥ t_k} log p(y_t)
  // the log-likelihood of the targets from that access's step on (which alone it can change)
  // and b_k the mean of G over the slice's other pairs at the same step (leave-one-out: it does
  // not depend on the pair's own decisions, so the estimate stays unbiased). With 1 the
  // gradient is the score-function estimate of ∇E[−Σ_t log p(y_t)] (rl/reinforce.h).
  double reinforce = 1.0;
  // hard: the advantages G_k − b_k of a slice's accesses rescaled to mean 0 and standard
  // deviation 1 (rl::ReinforceOptions::normalize_advantage), so that the REINFORCE term's
  // size does not follow the returns' (sums of up to a target's length of log-likelihoods).
  bool normalize_advantage = false;
  // hard: γ of the returns, G_k = Σ_{t ≥ t_k} γ^(t − t_k) log p(y_t): 1 (the default) the
  // unbiased return above; 0 the access's own step's log-likelihood alone (what the leaf it
  // read changes most directly; lower variance, biased).
  double discount = 1.0;
  // hard: β of an entropy bonus: the loss subtracts β Σ H over the accesses of the pairs with a
  // target then, H the entropy of the path's d decisions (HamHardAccess::entropy), which keeps
  // the descent from collapsing onto one path before it has learned where to go.
  double entropy = 0.0;
  // A curriculum on the length: for the first `curriculum` steps, each batch is drawn (seeded
  // by the step alone) from the training pairs whose target is at most L(step) long, L rising
  // linearly from the shortest target to the longest over those steps; then the shuffled
  // epochs as without it. 0: none.
  int64_t curriculum = 0;
  // A tree: the source is in the leaves only; the controller does not read it, and starts at
  // the separator from the zero state (the paper's HAM: its LSTM sees the input only through
  // the memory, so that it cannot answer from its own state what the tree must find).
  bool leaves_only = false;
  // A tree: JOIN's and SEARCH's hidden layers (the paper's MLPs: H ReLU units, HamWeights);
  // 0: one affine layer each (with tanh and σ), the form before.
  int64_t join_hidden = 0, search_hidden = 0;
  // A tree: the leaves' input also holds the symbol's value in this many bits (±1, the most
  // significant first; StackLstm::set_symbols), so that the order of the symbols is in the
  // input and not only learned from the targets (mlpack's HAM sort task sorts numbers given
  // by their bits). A symbol that is not an integer in [0, 2^N) gets 0s. 0: none.
  int64_t order_bits = 0;
  // hard: a learned baseline for REINFORCE: a linear head on the controller's state at each
  // access predicts that access's return G_k, regressed on it (rl::reinforce_loss's value
  // term, weight 1/2), and b_k is its prediction in place of the leave-one-out mean over the
  // slice's other pairs. The head reads the state as a constant: its regression trains the
  // head alone, not the controller. false: the leave-one-out mean (the form before).
  bool value_baseline = false;
  // Each hyper-parameter once (core/fields.h): stackmem-train's options, the stored YAML, the
  // loader (older files lack the later fields: they load with the defaults).
  template <class V>
  void fields(V& v) {
    v(memory,
      {"memory", "KIND",
       "stack, queue, deque, set (unordered slots read by content), tree (HAM: a binary tree of "
       "summaries searched from the root) or none (the plain LSTM)"});
    v(embed, {"embed", "N", "symbol embedding size"});
    v(hidden, {"hidden", "N", "controller LSTM units"});
    v(width, {"value-size", "N", "the memory's value size", "width"});
    v(read_out, {"read-out", "",
                 "the prediction also sees this step's read (without: the paper's form, from the "
                 "controller alone; the read enters the next step's input)"});
    v(two_controllers,
      {"two-controllers", "",
       "one LSTM controller (and push, pop and value layers) for the source and another, starting "
       "from its state, for the separator and the target, around the one memory"});
    v(bottom_push_bias,
      {"bottom-push-bias", "B",
       "a deque: the initial bias of its bottom push strengths (0: drawn as the other biases; "
       "negative: it starts pushing at the top only, its bottom end a queue's)",
       nullptr, true});
    v(input_control, {"input-control", "",
                      "--two-controllers: the decoder's push, pop and value come from the symbol "
                      "it reads and the memory's read (one linear layer), not from its LSTM state, "
                      "so that they cannot follow a count of the symbols written (a set: the "
                      "encoder's keys and strengths from the symbol alone)"});
    v(tied_keys, {"tied-keys", "",
                  "a set: each step reads with the key it writes, so that a symbol's read finds "
                  "its own earlier slots"});
    v(push_bias,
      {"push-bias", "B",
       "the initial bias of the push strengths (--two-controllers: the encoder's; a deque: at both "
       "ends unless --bottom-push-bias; 0: drawn as the other biases; positive: the values start "
       "strong, the first one too, so that the oldest still reads whole after a long source)",
       nullptr, true});
    v(pop_bias, {"pop-bias", "B",
                 "the initial bias of the pop strengths (-1: Grefenstette et al., Appendix B; a "
                 "deque, which pops at both ends, keeps its values with a lower one)",
                 nullptr, true});
    v(decoder_push_bias, {"decoder-push-bias", "B",
                          "--two-controllers: the initial bias of the decoder's push strengths (0: "
                          "drawn as the other biases; negative: the decoder starts consuming the "
                          "memory without covering it with its own pushes)",
                          nullptr, true});
    v(encoder_pop_bias, {"encoder-pop-bias", "B",
                         "--two-controllers: the initial bias of the encoder's pop strengths (0: "
                         "--pop-bias, which then sets the decoder's alone; lower: the source is "
                         "stored whole while the decoder's pops start higher)",
                         nullptr, true});
    v(decoder_bottom_pop_bias,
      {"decoder-bottom-pop-bias", "B",
       "--two-controllers, a deque: the initial bias of the decoder's bottom pop strengths (0: "
       "--pop-bias; lower: the decoder starts popping from the top only, so that a reversal keeps "
       "the oldest values it answers last)",
       nullptr, true});
    v(op_cost, {"op-cost", "C",
                "a cost per unit of push and pop strength, added to the loss (0: none): the "
                "controllers learn to leave the memory alone where the task does not need it",
                nullptr, true});
    v(depth_input, {"depth-input", "",
                    "the controllers also read how full the memory is (tanh of its total "
                    "strength), so that decoding can stop when it runs empty"});
    v(stack_rnn,
      {"stack-rnn", "", "Joulin & Mikolov's stack RNN instead of an LSTM with --memory"});
    v(stacks, {"stacks", "K", "with --stack-rnn: the number of stacks", nullptr, true});
    v(stack_top, {"stack-top", "N",
                  "with --stack-rnn: the top elements of each stack fed back to the hidden layer",
                  nullptr, true});
    v(rounding,
      {"rounding", "",
       "with --stack-rnn: decoding takes each stack's likeliest action whole (training keeps "
       "the soft ones)"});
    v(attention, {"attention", "KIND",
                  "a tree: soft (DHAM: every leaf weighted by its path's branch probabilities) or "
                  "hard (HAM: one leaf per access, O(log n); training samples the descent and "
                  "trains it by REINFORCE, decoding takes the likelier child)"});
    v(reinforce, {"reinforce", "R",
                  "--attention hard: weight of the REINFORCE term -(G - b) log pi of each "
                  "access's descent (1: unbiased)",
                  nullptr, true});
    v(normalize_advantage,
      {"normalize-advantage", "",
       "--attention hard: normalise the advantages of each slice's descents (mean 0, sd 1)"});
    v(discount, {"discount", "G",
                 "--attention hard: discount of the returns-to-go (1: unbiased; 0: each access's "
                 "own step)",
                 nullptr, true});
    v(entropy, {"entropy", "B",
                "--attention hard: weight of the entropy bonus on each access's descent (0: none)",
                nullptr, true});
    v(leaves_only, {"leaves-only", "",
                    "a tree: the source is in the leaves only; the controller does not read it "
                    "(the paper's HAM: the decoder starts at the separator)"});
    v(curriculum, {"curriculum", "STEPS",
                   "a curriculum on the length: for the first STEPS steps, batches of the pairs "
                   "whose target is at most L long, L rising from the shortest to the longest "
                   "(0: none)",
                   nullptr, true});
    v(join_hidden, {"join-hidden", "N",
                    "a tree: JOIN as an MLP of one hidden layer of N ReLU units (0: one affine "
                    "layer and tanh)",
                    nullptr, true});
    v(search_hidden, {"search-hidden", "N",
                      "a tree: SEARCH as an MLP of one hidden layer of N ReLU units (0: one "
                      "affine layer and a sigmoid)",
                      nullptr, true});
    v(order_bits, {"order-bits", "N",
                   "a tree: the leaves' input also holds each symbol's integer value in N bits "
                   "(+-1, beside its embedding), so that the symbols' order is given, not learned "
                   "(0: none)",
                   nullptr, true});
    v(value_baseline,
      {"value-baseline", "",
       "--attention hard: REINFORCE's baseline is learned, a linear head on the controller's "
       "state at each access regressed on its return (without: the mean return of the slice's "
       "other pairs)"});
  }
  void validate() const;
  bool hard_tree() const { return !stack_rnn && memory == "tree" && attention == "hard"; }
  bool has_memory() const { return stack_rnn || memory != "none"; }
  // Training's memory for one pair of `source` and `target` symbols, estimated from the
  // lengths: the tape keeps every step's values and their gradients, and a memory of n values
  // is built anew at each step, so it grows as the square of the length (decoding keeps only
  // the current step: linear).
  int64_t train_bytes(int64_t source, int64_t target) const;
};

// The hard tree's REINFORCE advantages (StackLstm::loss), from loglik[t][b] (row b's log p(y_t),
// 0 where none) and the accesses: access k at step access_step[k] (ascending) counts the rows
// with access_rows[k][b] set. For each access in turn and each counted row in turn, A = G − b
// with G = Σ_{t ≥ t_k} γ^(t − t_k) loglik[t][b] and b the mean of G over the access's other counted
// rows (0 when alone). Raw: `--normalize-advantage` is rl::reinforce_loss's
// (ReinforceOptions::normalize_advantage). leave_one_out false: G itself, in the same order
// (config value_baseline: the baseline is learned, rl::reinforce_loss's `value`).
std::vector<float> tree_advantages(const std::vector<std::vector<double>>& loglik,
                                   const std::vector<int64_t>& access_step,
                                   const std::vector<std::vector<uint8_t>>& access_rows,
                                   double discount = 1.0, bool leave_one_out = true);

// A curriculum's batch (StackLstmConfig::curriculum) at `step` of `steps`: `batch` indices drawn
// uniformly, with replacement, by an Rng seeded with (seed, step), among the pairs whose target
// length is at most L = lo + (hi − lo) · step / steps (lo and hi the shortest and longest of
// `lengths`); `by_length` the pairs' indices sorted by length (stable).
std::vector<int64_t> curriculum_batch(const std::vector<int64_t>& lengths,
                                      const std::vector<int64_t>& by_length, int64_t step,
                                      int64_t steps, int64_t batch, uint64_t seed);

// Training refuses a pair when its batch (batch-size rows as long as it) would exceed this:
// stackmem-train's bound. train_bytes against the peak RSS of stackmem-train on one pair of
// n + n symbols, one step, batch 1, the default sizes (14 MB is the process without the
// pair; the set's and the tree's coefficients were raised to fit these):
//   stack  n = 300: estimate 60 MB, RSS 73 MB; 600: 225, 227; 900: 494, 474; 1200: 867, 816;
//          1800: 1927, 1778
//   deque  n = 300: 113, 127; 600: 434, 434; 900: 964, 934; 1200: 1703, 1627
//   set    n = 300: 104, 133; 600: 401, 454; 900: 890, 972; 1200: 1571, 1691 (then 2w + 6)
//   tree   n = 300: 243, 439; 600: 955, 1658; 900: 1431, 2476 (then 2n(3w + 4) an access)
// A batch of 4 rows with one pair of n = 600 (the others of 5): RSS 843 MB, 4 times one
// pair's. Decoding (stackmem-run) takes pairs of any length.
constexpr int64_t kMaxPairTrainBytes = int64_t{2} << 30;

// A pair as ids (no specials), and its line in the file it came from (0: none).
struct TransduceExample {
  std::vector<int32_t> source, target;
  int64_t line = 0;
};

// The per-step values of one decoded sequence (stackmem-run --trace).
struct StackTrace {
  std::vector<std::vector<float>> push, pop;  // per step: 1 (deque: top, bottom)
  std::vector<std::vector<float>> strengths;  // per step: the memory's strengths, bottom first
  std::vector<std::vector<float>> read;       // per step: the read vector
  // a set: per step, the read weights of the slots; a tree: the leaf weights of each access
  std::vector<std::vector<float>> weights;
  // The strengths and weights grow with the square of the length (a row a step, as long as
  // the memory then): decoding stops with a DataError once they hold more than max_floats
  // (0: no bound). floats() counts what they hold.
  int64_t max_floats = 0;
  int64_t floats() const;
};

class StackLstm {
 public:
  StackLstm(nn::ParamStore& ps, const StackLstmConfig& c, Rng& rng);
  const StackLstmConfig& config() const { return c_; }
  // config order_bits: each id's bits from its token in `vocab` (an integer's value, or 0s);
  // until called, every symbol's bits are 0.
  void set_symbols(const data::Vocab& vocab);
  // The stack RNN's decoding with whole actions (config rounding) or soft ones.
  void set_rounding(bool on) { c_.rounding = on; }
  // The summed cross-entropy over the targets (and their <eos>) of the items, and how many.
  ad::Var loss(ad::Tape& t, const std::vector<const TransduceExample*>& items,
               int64_t* tokens) const;
  // Greedy decoding (at most max_len symbols before <eos>).
  std::vector<int32_t> decode(const std::vector<int32_t>& source, int64_t max_len,
                              StackTrace* trace = nullptr) const;

 private:
  struct Step;
  // One step: reads ids [B], updates the state, returns the logits [B, V] (when `logits`;
  // else an invalid Var: the steps that predict nothing skip the output layers).
  // `target` (two controllers): per row, whether it reads the separator or the target (the
  // decoder's phase); null = the source phase for every row.
  ad::Var advance(ad::Tape& t, const std::vector<int32_t>& ids, Step& st, StackTrace* trace,
                  bool logits = true, const std::vector<uint8_t>* target = nullptr) const;
  Step start(ad::Tape& t, int64_t batch) const;
  // Decoding keeps only the current memory: the state's values are copied out, the tape
  // cleared (every earlier step's memory with it) and the state entered again as constants.
  static void rebase(ad::Tape& t, Step& st);
  // Sets a memory-control layer's initial biases: the pops' at `pop`, and when != 0 every
  // push's, then a deque's bottom push's, then every push's again (`push_last`: the decoder's,
  // which cover the bottom one) and a deque's bottom pop's.
  void control_biases(nn::Linear& l, double pop, double push, double bottom_push, double push_last,
                      double bottom_pop) const;
  StackLstmConfig c_;
  StackKind kind_ = StackKind::Stack;
  bool set_ = false;   // memory "set": a set memory (memory/stackmem/set.h), not a stack
  bool tree_ = false;  // memory "tree": HAM (memory/stackmem/ham.h)
  // The tree: the leaves' embedding of the source symbols, JOIN, SEARCH and WRITE.
  std::unique_ptr<nn::Linear> tree_embed_, tree_join_, tree_search_, tree_write_;
  std::unique_ptr<nn::Linear> tree_join_hidden_, tree_search_hidden_;  // or null
  std::unique_ptr<nn::Linear> tree_value_;  // value_baseline: the state → the return; or null
  std::vector<float> order_codes_;          // [vocab, order_bits]: each symbol's bits (set_symbols)
  HamWeights tree_weights(ad::Tape& t) const;
  // The tree over the sources' embeddings (n = the power of 2 at or above the longest, the
  // leaves past a source zero).
  void build_tree(ad::Tape& t, const std::vector<const std::vector<int32_t>*>& sources,
                  Step& st) const;
  int64_t ends_ = 1;
  nn::Embedding emb_;
  std::unique_ptr<nn::RecurrentCell> cell_;      // the LSTM controller
  std::unique_ptr<nn::Linear> ctrl_;             // → [d, u, v] (deque: each twice)
  std::unique_ptr<nn::Linear> out_;              // the LSTM's output layer
  std::unique_ptr<nn::Linear> proj_;             // → the logits
  std::unique_ptr<nn::Linear> rnn_, act_, val_;  // the stack RNN: recurrence, actions, values
  std::unique_ptr<nn::RecurrentCell> dec_cell_;  // two controllers: the decoder's LSTM
  std::unique_ptr<nn::Linear> dec_ctrl_;         // and memory control
};

// Lines "SOURCE<TAB>TARGET" of space-separated symbols (transduce-gen's), as ids of `vocab`;
// DataError naming the file and line for a line without a tab or an empty side, and, given
// `trained` (the model to train on them in batches of `batch` pairs), for the costliest pair
// when a batch of it (every row padded to it) would take more than kMaxPairTrainBytes.
std::vector<TransduceExample> read_transduce(const std::string& path, const data::Vocab& vocab,
                                             const StackLstmConfig* trained = nullptr,
                                             int64_t batch = 1);
// The vocabulary of a file's symbols (both sides), reserved tokens first.
data::Vocab transduce_vocab(const std::string& path);

// Coarse and fine accuracy by target length bucket ([lo, hi], buckets of `bucket` lengths)
// and over all ("all" = key -1): data/transduce.h's metrics of the greedy decodings.
std::map<int64_t, data::Accuracy> evaluate_transduce(const StackLstm& m,
                                                     const std::vector<TransduceExample>& pairs,
                                                     int64_t bucket, int threads);

struct StackTrainOptions {
  int64_t batch = 16;
  double lr = 1e-3;
  std::string schedule = "constant";  // or inverse-sqrt, cosine (nn::parse_schedule)
  int64_t warmup = 0;
  void validate() const;
};

// Training as a module of the training layer: shuffled epochs of batches, in slices of at most
// 32 pairs (one slice up to a batch of 32; the count depends on the batch alone: the same model
// for any --threads), the loss a mean per target token; evaluation: coarse and fine accuracy on
// the validation data (when given). A step's time is mostly per-node and per-product overhead,
// nearly the same for 4 rows as for 32: 4 slices of 4 took 1.8-2.1x the CPU time of one slice
// of 16 at one thread, and two threads did not win it back (bench/README.md).
class StackTraining : public train::DatasetModule {
 public:
  StackTraining(StackLstmConfig config, StackTrainOptions o, data::Vocab vocab,
                std::vector<TransduceExample> train, std::vector<TransduceExample> valid,
                int64_t steps_or_0, int64_t epochs, uint64_t seed, std::string config_yaml);
  const StackLstm& model() const { return *model_; }
  std::string kind() const override { return "stack-lstm"; }
  void describe(nn::ModelFile& f) const override;
  void check_resume(const nn::ModelFile& ck) const override;
  int slices() const override { return static_cast<int>((o_.batch + 31) / 32); }
  train::Slice forward(ad::Tape& t, int64_t begin, int64_t end, int slice) const override;
  train::Metrics evaluate() override;
  std::vector<std::string> eval_metrics() const override;
  bool eval_due(const nn::TrainState& s) const override { return s.position == 0; }
  // The shuffled epochs' batch, or within the curriculum's steps its own.
  int64_t begin_batch(const nn::TrainState& s) override;

 private:
  std::vector<int64_t> lengths_, by_length_, cur_;  // the curriculum's
  bool in_curriculum_ = false;
  StackLstmConfig cfg_;
  StackTrainOptions o_;
  data::Vocab vocab_;
  std::vector<TransduceExample> train_, valid_;
  std::unique_ptr<StackLstm> model_;
};

struct LoadedStackLstm : train::Loaded<StackLstmConfig, StackLstm> {
  data::Vocab vocab;
};
LoadedStackLstm load_stack_lstm(const std::string& path);

}  // namespace attnkit::memory

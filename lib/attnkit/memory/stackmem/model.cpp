#include "attnkit/memory/stackmem/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "attnkit/autodiff/ops.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/loss.h"
#include "attnkit/nn/trainer.h"
#include "attnkit/rl/reinforce.h"
#include "attnkit/train/load.h"

namespace attnkit::memory {

using ad::Var;

void StackLstmConfig::validate() const {
  if (!stack_rnn)  // every kind named in the refusal of an unknown one
    parse_choice<std::string>("memory", memory,
                              {{"stack", "stack"},
                               {"queue", "queue"},
                               {"deque", "deque"},
                               {"set", "set"},
                               {"tree", "tree"},
                               {"none", "none"}});
  if (!stack_rnn && memory == "tree" && (depth_input || op_cost > 0 || input_control))
    throw UsageError("depth-input, op-cost and input-control are not for a tree");
  parse_choice<std::string>("attention", attention, {{"soft", "soft"}, {"hard", "hard"}});
  if (attention != "soft" && (stack_rnn || memory != "tree"))
    throw UsageError("attention is for a tree (--memory tree)");
  if (!(reinforce >= 0)) throw UsageError("reinforce must be >= 0");
  if (reinforce != 1.0 && !hard_tree())
    throw UsageError("reinforce is for the hard tree (--memory tree --attention hard)");
  if (!(entropy >= 0)) throw UsageError("entropy must be >= 0");
  if (!(discount >= 0 && discount <= 1)) throw UsageError("discount must be in [0, 1]");
  if (discount != 1.0 && !hard_tree())
    throw UsageError("discount is for the hard tree (--memory tree --attention hard)");
  if ((entropy > 0 || normalize_advantage) && !hard_tree())
    throw UsageError(
        "entropy and --normalize-advantage are for the hard tree (--memory tree --attention hard)");
  if (value_baseline && !hard_tree())
    throw UsageError("value-baseline is for the hard tree (--memory tree --attention hard)");
  if (curriculum < 0) throw UsageError("curriculum must be >= 0");
  if (join_hidden < 0 || search_hidden < 0)
    throw UsageError("join-hidden and --search-hidden must be >= 0");
  if ((join_hidden || search_hidden) && (stack_rnn || memory != "tree"))
    throw UsageError("join-hidden and --search-hidden are for a tree (--memory tree)");
  if (order_bits < 0 || order_bits > 62) throw UsageError("order-bits must be 0 to 62");
  if (order_bits && (stack_rnn || memory != "tree"))
    throw UsageError("order-bits is for a tree (--memory tree)");
  if (leaves_only && (stack_rnn || memory != "tree"))
    throw UsageError("leaves-only is for a tree (--memory tree)");
  if (vocab < 5)
    throw UsageError("the vocabulary needs at least one symbol besides the reserved ones");
  if (embed < 1 || hidden < 1 || width < 1)
    throw UsageError("embed, hidden and width must be >= 1");
  if (stack_rnn && stacks < 1) throw UsageError("stacks must be >= 1");
  if (stack_rnn && stack_top < 1) throw UsageError("stack-top must be >= 1");
  if (stack_rnn && two_controllers)
    throw UsageError("two-controllers is for the LSTM controller, not the stack RNN");
  // An LSTM controller with a stack, queue or deque (the memory options' common condition)
  const bool lstm_memory = !stack_rnn && memory != "none";
  const bool deque = !stack_rnn && memory == "deque";
  if (input_control && (!two_controllers || !lstm_memory))
    throw UsageError(
        "input-control needs --two-controllers and a stack, queue or deque (--memory)");
  if (tied_keys && (stack_rnn || memory != "set"))
    throw UsageError("tied-keys is for a set (--memory set)");
  if (bottom_push_bias != 0.0 && !deque)
    throw UsageError("bottom-push-bias is for a deque (--memory deque)");
  if (decoder_push_bias != 0.0 && (!two_controllers || !lstm_memory))
    throw UsageError(
        "decoder-push-bias needs --two-controllers and a stack, queue or deque (--memory)");
  if (decoder_bottom_pop_bias != 0.0 && (!two_controllers || !deque))
    throw UsageError("decoder-bottom-pop-bias needs --two-controllers and --memory deque");
  if (encoder_pop_bias != 0.0 && (!two_controllers || !lstm_memory))
    throw UsageError(
        "encoder-pop-bias needs --two-controllers and a stack, queue or deque (--memory)");
  if (push_bias != 0.0 && !lstm_memory)
    throw UsageError("push-bias is for a stack, queue or deque (--memory)");
  if (pop_bias != -1.0 && !lstm_memory)
    throw UsageError("pop-bias is for a stack, queue or deque (--memory)");
  if (!(op_cost >= 0)) throw UsageError("op-cost must be >= 0");
  if (op_cost > 0 && !lstm_memory)
    throw UsageError("op-cost is for a stack, queue or deque (--memory)");
  if (depth_input && !lstm_memory)
    throw UsageError("depth-input needs a stack, queue or deque (--memory), not " +
                     std::string(stack_rnn ? "the stack RNN" : "the plain LSTM"));
}

int64_t StackLstmConfig::train_bytes(int64_t source, int64_t target) const {
  // Per step, in floats: the controller's gates and states and the output layers (a few
  // dozen rows of its width, the logits), and the memory as it stands at that step, built
  // anew (its values and strengths, the pop's, the read's and their copies). Summed over the
  // steps, then 4 bytes a float, twice (the values and their gradients).
  const double L = static_cast<double>(source + 1 + target);
  const double per_step = 24.0 * static_cast<double>(hidden) + 4.0 * static_cast<double>(embed) +
                          3.0 * static_cast<double>(vocab);
  double growing = 0;  // floats per step, per value the memory holds
  double slots = L;    // the values it holds at the end
  if (stack_rnn) {
    growing = 7.0 * static_cast<double>(stacks);
  } else if (memory == "tree") {
    // The tree's levels (2n values of the width) are built anew at each access, from the
    // separator on; n: the power of 2 at or above the source's length.
    double n = 2;
    while (n < static_cast<double>(source)) n *= 2;
    // The hard descent copies the table of 2n nodes once an access (and reads its path).
    double per_access = 2.0 * n * (5.0 * static_cast<double>(width) + 14.0);
    if (attention == "hard")
      per_access = 2.0 * n * (static_cast<double>(width) + 2.0) +
                   16.0 * static_cast<double>(width) * std::log2(n);
    return static_cast<int64_t>(
        8.0 * (L * per_step + (static_cast<double>(target) + 1) * per_access + n * width));
  } else if (memory == "set") {
    growing = 2.0 * static_cast<double>(width) + 12.0;  // the keys and values, the weights
  } else if (memory != "none") {
    if (memory == "deque") slots *= 2;
    growing = static_cast<double>(width) + 6.0;
  }
  // Σ over the steps of the values held then: slots · (L + 1) / 2
  return static_cast<int64_t>(8.0 * (L * per_step + growing * slots * (L + 1) / 2.0));
}

void StackTrainOptions::validate() const {
  if (batch < 1) throw UsageError("batch-size must be >= 1");
  if (!(lr > 0)) throw UsageError("lr must be > 0");
  nn::check_schedule_name(schedule);
  if (warmup < 0) throw UsageError("warmup must be >= 0");
}

namespace {
// log p(y_b) of each row of logits [B, V] with a target (y_b >= 0), into out[b].
void row_log_likelihoods(const Tensor& logits, const std::vector<int32_t>& y,
                         std::vector<double>& out) {
  const int64_t V = logits.dim(1);
  for (size_t b = 0; b < y.size(); ++b) {
    if (y[b] < 0) continue;
    const float* l = logits.data() + static_cast<int64_t>(b) * V;
    double top = l[0], z = 0;
    for (int64_t v = 1; v < V; ++v) top = std::max<double>(top, l[v]);
    for (int64_t v = 0; v < V; ++v) z += std::exp(static_cast<double>(l[v]) - top);
    out[b] = static_cast<double>(l[y[b]]) - top - std::log(z);
  }
}

int64_t read_size(const StackLstmConfig& c) {
  if (c.stack_rnn) return c.stacks * c.stack_top;
  if (!c.has_memory()) return 0;
  if (c.memory == "set") return c.width + 1;  // the read, then its total weight
  if (c.memory == "tree") return c.width;     // the leaves' weighted sum
  return (c.memory == "deque" ? 2 : 1) * c.width;
}
// The memory-control layer's outputs: a set's write and erase strengths and its key, value,
// read key and erase key; a stack's push and pop (each twice for a deque) and values.
int64_t control_size(const StackLstmConfig& c, int64_t ends) {
  return c.memory == "set" ? 3 + 4 * c.width : 2 * ends + ends * c.width;
}
// The controller's input besides the symbol's embedding: the read (and the depth).
int64_t fed_back(const StackLstmConfig& c) {
  return read_size(c) + (c.depth_input && !c.stack_rnn && c.has_memory() ? 1 : 0);
}
}  // namespace

void StackLstm::control_biases(nn::Linear& l, double pop, double push, double bottom_push,
                               double push_last, double bottom_pop) const {
  // The layer's rows: [push top, (push bottom,) pop top, (pop bottom,) values]. The pops start
  // at `pop` (pop_bias, −1: Grefenstette et al., Appendix B; the encoder's: encoder_pop_bias
  // when set); a 0 leaves a push's or a bottom pop's bias as drawn (the pops': at `pop`).
  auto pushes = [&](double v) {
    if (v != 0.0)
      for (int64_t k = 0; k < ends_; ++k) l.b->value[k] = static_cast<float>(v);
  };
  for (int64_t k = 0; k < ends_; ++k) l.b->value[ends_ + k] = static_cast<float>(pop);
  pushes(push);
  if (ends_ == 2 && bottom_push != 0.0) l.b->value[1] = static_cast<float>(bottom_push);
  pushes(push_last);
  if (ends_ == 2 && bottom_pop != 0.0) l.b->value[3] = static_cast<float>(bottom_pop);
}

StackLstm::StackLstm(nn::ParamStore& ps, const StackLstmConfig& c, Rng& rng)
    : c_((c.validate(), c)), emb_(ps, "embedding", c.vocab, c.embed, rng) {
  if (c_.stack_rnn) {
    rnn_ = std::make_unique<nn::Linear>(ps, "recurrence", c.embed + c.hidden + read_size(c),
                                        c.hidden, rng);
    act_ = std::make_unique<nn::Linear>(ps, "actions", c.hidden, 3 * c.stacks, rng);
    val_ = std::make_unique<nn::Linear>(ps, "push_values", c.hidden, c.stacks, rng);
    proj_ = std::make_unique<nn::Linear>(ps, "projection", c.hidden, c.vocab, rng);
    rnn_->transposed = act_->transposed = val_->transposed = proj_->transposed = true;
    return;
  }
  cell_ = std::make_unique<nn::RecurrentCell>(ps, "controller", nn::CellKind::LSTM,
                                              c.embed + fed_back(c), c.hidden, rng);
  out_ = std::make_unique<nn::Linear>(ps, "output", c.hidden + (c.read_out ? read_size(c) : 0),
                                      c.hidden, rng);
  proj_ = std::make_unique<nn::Linear>(ps, "projection", c.hidden, c.vocab, rng);
  tree_ = c_.has_memory() && !c_.stack_rnn && c_.memory == "tree";
  if (tree_) {
    const int64_t w = c.width;
    tree_embed_ = std::make_unique<nn::Linear>(ps, "tree_embed", c.embed + c.order_bits, w, rng);
    order_codes_.assign(static_cast<size_t>(c.vocab * c.order_bits), 0.0f);
    const int64_t jh = c.join_hidden, sh = c.search_hidden;
    tree_join_ = std::make_unique<nn::Linear>(ps, "tree_join", jh ? jh : 2 * w, w, rng);
    tree_search_ = std::make_unique<nn::Linear>(ps, "tree_search", sh ? sh : w + c.hidden, 1, rng);
    tree_write_ = std::make_unique<nn::Linear>(ps, "tree_write", w + c.hidden, w, rng);
    // The hidden layers last, so that a tree without them draws its weights as before.
    if (jh)
      tree_join_hidden_ = std::make_unique<nn::Linear>(ps, "tree_join_hidden", 2 * w, jh, rng);
    if (sh)
      tree_search_hidden_ =
          std::make_unique<nn::Linear>(ps, "tree_search_hidden", w + c.hidden, sh, rng);
  } else if (c_.has_memory()) {
    set_ = c_.memory == "set";
    kind_ = set_ ? StackKind::Stack : parse_stack_kind(c_.memory);
    ends_ = kind_ == StackKind::Deque ? 2 : 1;
    ctrl_ = std::make_unique<nn::Linear>(
        ps, "memory_control", set_ && c.input_control ? c.embed : c.hidden + (set_ ? c.embed : 0),
        control_size(c_, ends_), rng);
    control_biases(*ctrl_, c_.encoder_pop_bias != 0.0 ? c_.encoder_pop_bias : c_.pop_bias,
                   c_.push_bias, c_.bottom_push_bias, 0.0, 0.0);
  }
  // A set's read threshold τ starts at 2: e^2 against the few slots of weak, unlearned keys
  // (scores near 0) of a short source, so that "found" starts near 1/2, where its gradient
  // is alive (at 0 every key's resemblance counts as found, at a large τ nothing does).
  auto threshold_bias = [&](nn::Linear* l) {
    if (l && set_) l->b->value[2 + 4 * c_.width] = 2.0f;
  };
  threshold_bias(ctrl_.get());
  if (c_.two_controllers) {
    dec_cell_ = std::make_unique<nn::RecurrentCell>(ps, "decoder", nn::CellKind::LSTM,
                                                    c.embed + fed_back(c), c.hidden, rng);
    if (c_.has_memory() && !tree_) {
      dec_ctrl_ = std::make_unique<nn::Linear>(
          ps, "decoder_memory_control",
          c.input_control ? c.embed + fed_back(c) : c.hidden + (set_ ? c.embed : 0),
          control_size(c_, ends_), rng);
      control_biases(*dec_ctrl_, c_.pop_bias, 0.0, c_.bottom_push_bias, c_.decoder_push_bias,
                     c_.decoder_bottom_pop_bias);
    }
  }
  threshold_bias(dec_ctrl_.get());
  // The hard tree's value head last of all, so that every other weight is drawn as without it.
  if (c_.value_baseline)
    tree_value_ = std::make_unique<nn::Linear>(ps, "tree_value", c.hidden, 1, rng);
  // Training steps a batch of a few rows one symbol at a time: every product by a weight in
  // the faster form (nn::Linear::transposed; same values up to rounding).
  for (nn::RecurrentCell* cell : {cell_.get(), dec_cell_.get()})
    if (cell) cell->set_transposed_products(true);
  for (nn::Linear* l : {out_.get(), proj_.get(), ctrl_.get(), dec_ctrl_.get()})
    if (l) l->transposed = true;
}

struct StackLstm::Step {
  nn::State s;                 // the LSTM's state; the stack RNN's hidden state in s.h
  StackState mem;              // the continuous stack, queue or deque
  SetState set;                // or the set
  HamTree tree;                // or the tree (soft)
  HamTable table;              // or the tree (hard), with the log-probabilities of its descents in
  std::vector<Var> descents;   // training: one [B, 1] an access
  std::vector<Var> entropies;  // training with an entropy bonus: the paths' entropies, likewise
  std::vector<Var> values;     // training with value_baseline: the predicted returns, likewise
  Var stacks;  // the stack RNN: [B·K, n], row b·K + k = stack k of item b, the top first
  Var read;    // [B, R]: the memory's read (the stack RNN: the stacks' top elements)
  Var ops;     // training with op_cost: the push and pop strengths summed so far, []
};

StackLstm::Step StackLstm::start(ad::Tape& t, int64_t batch) const {
  Step st;
  const int64_t R = read_size(c_);
  if (R) st.read = t.constant(Tensor({batch, R}, 0.0f));
  if (c_.stack_rnn) {
    st.s.h = t.constant(Tensor({batch, c_.hidden}, 0.0f));
    st.stacks = t.constant(Tensor({batch * c_.stacks, c_.stack_top}, 0.0f));
  } else {
    st.s = cell_->zero_state(t, batch);
  }
  return st;
}

void StackLstm::rebase(ad::Tape& t, Step& st) {
  std::vector<Var*> vars{&st.s.h,      &st.s.c,        &st.mem.values,    &st.mem.strengths,
                         &st.set.keys, &st.set.values, &st.set.strengths, &st.stacks,
                         &st.read,     &st.ops};
  for (Var& v : st.tree) vars.push_back(&v);
  vars.push_back(&st.table.nodes);
  std::vector<Tensor> held(vars.size());
  for (size_t i = 0; i < vars.size(); ++i)
    if (vars[i]->valid()) held[i] = vars[i]->value().clone();
  t.clear();
  for (size_t i = 0; i < vars.size(); ++i)
    if (vars[i]->valid()) *vars[i] = t.constant(std::move(held[i]));
}

void StackLstm::set_symbols(const data::Vocab& vocab) {
  const int64_t N = c_.order_bits;
  if (!tree_ || N == 0) return;
  if (vocab.size() != c_.vocab)
    throw ShapeError("set_symbols: a vocabulary of " + std::to_string(vocab.size()) +
                     " symbols for a model of " + std::to_string(c_.vocab));
  for (int32_t id = 0; id < vocab.size(); ++id) {
    const std::string& tok = vocab.token(id);
    uint64_t v = 0;
    bool integer = !tok.empty() && tok.size() <= 18;
    for (char ch : tok) {
      integer = integer && ch >= '0' && ch <= '9';
      if (integer) v = 10 * v + static_cast<uint64_t>(ch - '0');
    }
    if (integer && N < 64 && v >> N) integer = false;
    for (int64_t j = 0; j < N; ++j)
      order_codes_[static_cast<size_t>(id * N + j)] =
          integer ? ((v >> (N - 1 - j)) & 1 ? 1.0f : -1.0f) : 0.0f;
  }
}

HamWeights StackLstm::tree_weights(ad::Tape& t) const {
  HamWeights w{t.param(*tree_join_->W),   t.param(*tree_join_->b),  t.param(*tree_search_->W),
               t.param(*tree_search_->b), t.param(*tree_write_->W), t.param(*tree_write_->b)};
  if (tree_join_hidden_)
    w.join_hw = t.param(*tree_join_hidden_->W), w.join_hb = t.param(*tree_join_hidden_->b);
  if (tree_search_hidden_)
    w.search_hw = t.param(*tree_search_hidden_->W), w.search_hb = t.param(*tree_search_hidden_->b);
  return w;
}

void StackLstm::build_tree(ad::Tape& t, const std::vector<const std::vector<int32_t>*>& sources,
                           Step& st) const {
  const int64_t B = static_cast<int64_t>(sources.size());
  int64_t S = 1, n = 2;
  for (const auto* s : sources) S = std::max<int64_t>(S, static_cast<int64_t>(s->size()));
  while (n < S) n *= 2;
  std::vector<int32_t> ids(static_cast<size_t>(B * n), data::Vocab::kPad);
  std::vector<uint8_t> real(static_cast<size_t>(B * n), 0);
  for (int64_t b = 0; b < B; ++b)
    for (size_t i = 0; i < sources[static_cast<size_t>(b)]->size(); ++i) {
      ids[static_cast<size_t>(b * n) + i] = (*sources[static_cast<size_t>(b)])[i];
      real[static_cast<size_t>(b * n) + i] = 1;
    }
  Var e = emb_(t, ids, {B * n});
  if (c_.order_bits) {
    const int64_t N = c_.order_bits;
    Tensor bits({B * n, N}, 0.0f);
    for (int64_t r = 0; r < B * n; ++r)
      std::copy_n(order_codes_.data() + ids[static_cast<size_t>(r)] * N, N, bits.data() + r * N);
    e = ad::concat({e, t.constant(std::move(bits))}, 1);
  }
  Var x = ad::tanh((*tree_embed_)(t, e));
  st.tree = ham_build(ad::reshape(ad::mask_rows(x, real), {B, n, c_.width}), tree_weights(t));
  if (c_.hard_tree()) {  // one table of nodes, whose accesses replace their paths' rows
    st.table = ham_table(st.tree);
    st.tree.clear();
  }
}

// One step: the controller reads the symbols' embeddings and the previous read; the memory is
// updated; the logits [B, V] come back. trace (B = 1) receives the step's values.
Var StackLstm::advance(ad::Tape& t, const std::vector<int32_t>& ids, Step& st, StackTrace* trace,
                       bool logits, const std::vector<uint8_t>* target) const {
  const int64_t b = static_cast<int64_t>(ids.size());
  Var x = emb_(t, ids, {b});
  if (c_.stack_rnn) {
    // Joulin & Mikolov 2015, eq. 4-6: h from the input, the previous h and the stacks' tops;
    // per stack a = softmax(A h) over PUSH, POP, NO-OP and the pushed value σ(D h).
    const int64_t K = c_.stacks;
    st.s.h = ad::sigmoid((*rnn_)(t, ad::concat({x, st.s.h, st.read}, 1)));
    Var a = ad::softmax(ad::reshape((*act_)(t, st.s.h), {b * K, 3}));
    if (c_.rounding && !t.training()) {
      Tensor hard({b * K, 3}, 0.0f);
      const Tensor& av = a.value();
      for (int64_t r = 0; r < b * K; ++r) {
        int64_t best = 0;
        for (int64_t j = 1; j < 3; ++j)
          if (av.at(r, j) > av.at(r, best)) best = j;
        hard.at(r, best) = 1.0f;
      }
      a = t.constant(std::move(hard));
    }
    Var v = ad::reshape(ad::sigmoid((*val_)(t, st.s.h)), {b * K, 1});
    const int64_t n = st.stacks.dim(1);
    st.stacks = stack_rnn_update(t, st.stacks, a, v);
    st.read = ad::reshape(ad::slice(st.stacks, 1, 0, c_.stack_top), {b, K * c_.stack_top});
    if (trace) {
      const Tensor& av = a.value();
      std::vector<float> pu(static_cast<size_t>(K)), po(static_cast<size_t>(K));
      for (int64_t k = 0; k < K; ++k)
        pu[static_cast<size_t>(k)] = av.at(k, 0), po[static_cast<size_t>(k)] = av.at(k, 1);
      trace->push.push_back(pu);
      trace->pop.push_back(po);
      const Tensor& sv = st.stacks.value();  // stack 0, bottom first
      std::vector<float> s0(static_cast<size_t>(n + 1));
      for (int64_t i = 0; i <= n; ++i) s0[static_cast<size_t>(i)] = sv.at(0, n - i);
      trace->strengths.push_back(s0);
      trace->read.emplace_back(st.read.value().data(), st.read.value().data() + st.read.size());
    }
    return logits ? (*proj_)(t, st.s.h) : Var();
  }
  Var in = x;
  if (c_.has_memory() && c_.depth_input) {
    const Var& strengths = set_ ? st.set.strengths : st.mem.strengths;
    Var depth = (set_ ? st.set.size : st.mem.size) > 0 ? ad::tanh(ad::sum_last(strengths))
                                                       : t.constant(Tensor({b, 1}, 0.0f));
    in = ad::concat({x, st.read, depth}, 1);
  } else if (c_.has_memory()) {
    in = ad::concat({x, st.read}, 1);
  }
  // Two controllers: the rows in the target phase step the decoder, the others the encoder
  // (both computed only when the batch has rows in each phase).
  bool any_dec = false, all_dec = false;
  if (c_.two_controllers && target) {
    any_dec = std::any_of(target->begin(), target->end(), [](uint8_t f) { return f != 0; });
    all_dec = std::all_of(target->begin(), target->end(), [](uint8_t f) { return f != 0; });
  }
  nn::State enc, dec;
  Var c, c_dec;
  if (!all_dec) {
    enc = (*cell_)(t, in, st.s);
    // A set's keys come from the state and the symbol read (its identity whole); with
    // input_control, from the symbol alone.
    if (ctrl_)
      c = (*ctrl_)(t, set_ && c_.input_control ? x : set_ ? ad::concat({enc.h, x}, 1) : enc.h);
  }
  if (any_dec) {
    dec = (*dec_cell_)(t, in, st.s);
    if (dec_ctrl_)
      c_dec = (*dec_ctrl_)(t, c_.input_control ? in : set_ ? ad::concat({dec.h, x}, 1) : dec.h);
  }
  if (all_dec) {
    st.s = dec, c = c_dec;
  } else if (any_dec) {
    st.s.h = ad::select_rows(*target, dec.h, enc.h);
    st.s.c = ad::select_rows(*target, dec.c, enc.c);
    if (ctrl_) c = ad::select_rows(*target, c_dec, c);
  } else {
    st.s = enc;
  }
  Var feat = st.s.h;
  if (tree_) {
    // The tree is accessed from the separator on (the source is in its leaves): the rows in
    // the target phase descend, read and write; the others keep their tree and read.
    const bool one =
        target && std::any_of(target->begin(), target->end(), [](uint8_t f) { return f != 0; });
    if (one && c_.hard_tree()) {
      // Training samples each level's decision (the tape's generator: seeded per step and
      // slice by the training layer); decoding takes the likelier child.
      HamDescent how;
      if (t.training()) how.rng = &t.rng();
      how.entropy = t.training() && t.recording() && c_.entropy > 0;
      HamHardAccess a = ham_hard_access(st.table, st.s.h, tree_weights(t), *target, how);
      st.table = a.tree;
      st.read = ad::select_rows(*target, a.read, st.read);
      if (t.training() && t.recording()) st.descents.push_back(a.log_prob);
      if (how.entropy) st.entropies.push_back(a.entropy);
      if (tree_value_ && t.training() && t.recording())  // the state as a constant
        st.values.push_back((*tree_value_)(t, t.constant(st.s.h.value().clone())));
      if (trace) {
        const int64_t n = st.table.n;
        std::vector<float> wv(static_cast<size_t>(n), 0.0f);
        wv[static_cast<size_t>(a.leaf[0])] = 1.0f;
        trace->push.push_back({1.0f});
        trace->pop.push_back({0.0f});
        trace->strengths.push_back(wv);
        trace->read.emplace_back(st.read.value().data(), st.read.value().data() + st.read.size());
        trace->weights.push_back(wv);
      }
    } else if (one) {
      const bool all =
          std::all_of(target->begin(), target->end(), [](uint8_t f) { return f != 0; });
      HamAccess a = ham_access(st.tree, st.s.h, tree_weights(t));
      if (all) {
        st.tree = a.tree;
        st.read = a.read;
      } else {
        for (size_t l = 0; l < st.tree.size(); ++l) {
          const Shape sh = st.tree[l].shape();
          const int64_t rows = sh[0], rest = sh[1] * sh[2];
          std::vector<uint8_t> keep;
          for (int64_t r = 0; r < rows; ++r) keep.push_back((*target)[static_cast<size_t>(r)]);
          st.tree[l] = ad::reshape(ad::select_rows(keep, ad::reshape(a.tree[l], {rows, rest}),
                                                   ad::reshape(st.tree[l], {rows, rest})),
                                   sh);
        }
        st.read = ad::select_rows(*target, a.read, st.read);
      }
      if (trace) {
        const Tensor& wv = a.weights.value();
        float top = 0.0f;
        for (int64_t i = 0; i < wv.size(); ++i) top = std::max(top, wv[i]);
        trace->push.push_back({top});
        trace->pop.push_back({0.0f});
        trace->strengths.emplace_back(wv.data(), wv.data() + wv.size());
        trace->read.emplace_back(st.read.value().data(), st.read.value().data() + st.read.size());
        trace->weights.emplace_back(wv.data(), wv.data() + wv.size());
      }
    }
    if (c_.read_out) feat = ad::concat({st.s.h, st.read}, 1);
  } else if (set_) {
    // [w, ε, k, v, q, e, τ]: the write and erase strengths, the new slot's key and value, the
    // read key (tied_keys: the written key; its columns unused), the erase key and the read's
    // threshold (memory/stackmem/set.h).
    const int64_t m = c_.width;
    Var w = ad::sigmoid(ad::slice(c, 1, 0, 1)), er = ad::sigmoid(ad::slice(c, 1, 1, 2));
    auto part = [&](int64_t k) { return ad::tanh(ad::slice(c, 1, 2 + k * m, 2 + (k + 1) * m)); };
    Var tau = ad::slice(c, 1, 2 + 4 * m, 3 + 4 * m);
    if (c_.op_cost > 0 && t.training()) {
      std::vector<uint8_t> real(static_cast<size_t>(b));
      for (int64_t r = 0; r < b; ++r)
        real[static_cast<size_t>(r)] = ids[static_cast<size_t>(r)] != data::Vocab::kPad;
      Var ops = ad::sum(ad::mask_rows(ad::add(w, er), real));
      st.ops = st.ops.valid() ? ad::add(st.ops, ops) : ops;
    }
    Var key = part(0);
    SetUpdate up =
        set_update(t, st.set, w, key, part(1), c_.tied_keys ? key : part(2), er, part(3), tau);
    st.set = up.state;
    st.read = up.read;
    if (c_.read_out) feat = ad::concat({st.s.h, st.read}, 1);
    if (trace) {
      trace->push.emplace_back(w.value().data(), w.value().data() + 1);
      trace->pop.emplace_back(er.value().data(), er.value().data() + 1);
      const Tensor& sv = st.set.strengths.value();
      trace->strengths.emplace_back(sv.data(), sv.data() + sv.size());
      trace->read.emplace_back(st.read.value().data(), st.read.value().data() + st.read.size());
      if (up.weights.valid())
        trace->weights.emplace_back(up.weights.value().data(),
                                    up.weights.value().data() + up.weights.size());
      else
        trace->weights.emplace_back();
    }
  } else if (c_.has_memory()) {
    const int64_t e = ends_;
    Var d = ad::sigmoid(ad::slice(c, 1, 0, e));
    Var u = ad::sigmoid(ad::slice(c, 1, e, 2 * e));
    Var v = ad::tanh(ad::slice(c, 1, 2 * e, 2 * e + e * c_.width));
    if (c_.op_cost > 0 && t.training()) {
      // The memory's traffic on this step's real rows (a finished pair steps on padding).
      std::vector<uint8_t> real(static_cast<size_t>(b));
      for (int64_t r = 0; r < b; ++r)
        real[static_cast<size_t>(r)] = ids[static_cast<size_t>(r)] != data::Vocab::kPad;
      Var ops = ad::sum(ad::mask_rows(ad::add(ad::sum_last(d), ad::sum_last(u)), real));
      st.ops = st.ops.valid() ? ad::add(st.ops, ops) : ops;
    }
    StackUpdate up = stack_update(t, kind_, st.mem, d, u, v);
    st.mem = up.state;
    st.read = up.read;
    if (c_.read_out) feat = ad::concat({st.s.h, st.read}, 1);
    if (trace) {
      trace->push.emplace_back(d.value().data(), d.value().data() + e);
      trace->pop.emplace_back(u.value().data(), u.value().data() + e);
      const Tensor& sv = st.mem.strengths.value();
      trace->strengths.emplace_back(sv.data(), sv.data() + sv.size());
      trace->read.emplace_back(st.read.value().data(), st.read.value().data() + st.read.size());
    }
  }
  return logits ? (*proj_)(t, ad::tanh((*out_)(t, feat))) : Var();
}

Var StackLstm::loss(ad::Tape& t, const std::vector<const TransduceExample*>& items,
                    int64_t* tokens) const {
  const int64_t B = static_cast<int64_t>(items.size());
  int64_t L = 0;
  for (const TransduceExample* e : items)
    L = std::max<int64_t>(
        L, static_cast<int64_t>((c_.leaves_only ? 0 : e->source.size()) + 1 + e->target.size()));
  Step st = start(t, B);
  if (tree_) {
    std::vector<const std::vector<int32_t>*> sources;
    for (const TransduceExample* e : items) sources.push_back(&e->source);
    build_tree(t, sources, st);
  }
  Var total;
  int64_t count = 0;
  std::vector<int32_t> ids(static_cast<size_t>(B)), targets(static_cast<size_t>(B));
  std::vector<uint8_t> phase(static_cast<size_t>(B));
  // The hard tree's REINFORCE: per access, its step, the rows it counts (those with a target
  // then), and per step each row's log p(y_t) (0 where none).
  const bool reinforce = c_.hard_tree() && t.training() && t.recording();
  std::vector<int64_t> access_step;
  std::vector<std::vector<uint8_t>> access_rows;
  std::vector<std::vector<double>> loglik;
  for (int64_t step = 0; step < L; ++step) {
    int64_t n = 0;
    for (int64_t b = 0; b < B; ++b) {
      const TransduceExample& e = *items[static_cast<size_t>(b)];
      // leaves_only: the source is in the leaves alone; the sequence starts at the separator.
      const int64_t S = c_.leaves_only ? 0 : static_cast<int64_t>(e.source.size()),
                    T = static_cast<int64_t>(e.target.size());
      int32_t id = data::Vocab::kPad;
      if (step < S)
        id = e.source[static_cast<size_t>(step)];
      else if (step == S)
        id = data::Vocab::kBos;
      else if (step <= S + T)
        id = e.target[static_cast<size_t>(step - S - 1)];
      ids[static_cast<size_t>(b)] = id;
      phase[static_cast<size_t>(b)] = step >= S;
      int32_t y = -1;
      if (step >= S && step < S + T)
        y = e.target[static_cast<size_t>(step - S)];
      else if (step == S + T)
        y = data::Vocab::kEos;
      targets[static_cast<size_t>(b)] = y;
      n += y >= 0;
    }
    const size_t accesses = st.descents.size();
    Var logits = advance(t, ids, st, nullptr, n > 0, &phase);
    if (reinforce) {
      loglik.emplace_back(static_cast<size_t>(B), 0.0);
      if (n > 0) row_log_likelihoods(logits.value(), targets, loglik.back());
      if (st.descents.size() > accesses) {
        access_step.push_back(step);
        std::vector<uint8_t> rows(static_cast<size_t>(B));
        for (int64_t b = 0; b < B; ++b)
          rows[static_cast<size_t>(b)] =
              phase[static_cast<size_t>(b)] && targets[static_cast<size_t>(b)] >= 0;
        access_rows.push_back(std::move(rows));
      }
    }
    if (n == 0) continue;
    Var l = ad::mul(nn::cross_entropy(logits, targets), static_cast<float>(n));
    total = total.valid() ? ad::add(total, l) : l;
    count += n;
  }
  if (tokens) *tokens = count;
  if (total.valid() && reinforce && (c_.reinforce > 0 || c_.entropy > 0) && !st.descents.empty()) {
    // −reinforce · Σ A log π over the accesses' counted rows (tree_advantages), and the
    // entropy bonus −β Σ H over the same: rl::reinforce_loss, summed over the rows as the
    // cross-entropy is.
    // value_baseline: the returns themselves, the baseline the value head's.
    const std::vector<float> adv =
        tree_advantages(loglik, access_step, access_rows, c_.discount, !tree_value_);
    std::vector<Var> log_probs, entropies, values;
    for (size_t a = 0; a < st.descents.size(); ++a) {
      std::vector<int32_t> rows;
      for (int64_t b = 0; b < B; ++b)
        if (access_rows[a][static_cast<size_t>(b)]) rows.push_back(static_cast<int32_t>(b));
      if (rows.empty()) continue;
      log_probs.push_back(ad::embedding(st.descents[a], rows));
      if (!st.entropies.empty()) entropies.push_back(ad::embedding(st.entropies[a], rows));
      if (!st.values.empty()) values.push_back(ad::embedding(st.values[a], rows));
    }
    if (!log_probs.empty()) {
      rl::ReinforceOptions ro;
      ro.normalize_advantage = c_.normalize_advantage;
      ro.entropy = c_.entropy;
      ro.policy_weight = c_.reinforce;
      ro.rows = rl::RowReduction::sum;
      const rl::PolicyLoss pl = rl::reinforce_loss(
          t, ad::concat(log_probs, 0), adv, values.empty() ? Var() : ad::concat(values, 0), ro,
          entropies.empty() ? Var() : ad::concat(entropies, 0));
      total = ad::add(total, pl.total);
    }
  }
  if (total.valid() && st.ops.valid())
    total = ad::add(total, ad::mul(st.ops, static_cast<float>(c_.op_cost)));
  return total.valid() ? total : t.constant(Tensor({}, 0.0f));
}

std::vector<float> tree_advantages(const std::vector<std::vector<double>>& loglik,
                                   const std::vector<int64_t>& access_step,
                                   const std::vector<std::vector<uint8_t>>& access_rows,
                                   double discount, bool leave_one_out) {
  if (access_rows.size() != access_step.size())
    throw ShapeError("tree_advantages: " + std::to_string(access_step.size()) + " accesses, " +
                     std::to_string(access_rows.size()) + " row sets");
  const int64_t L = static_cast<int64_t>(loglik.size());
  const size_t B = loglik.empty() ? 0 : loglik[0].size();
  // Returns to go at each access's step, from the last step back.
  std::vector<double> to_go(B, 0.0);
  std::vector<std::vector<double>> G(access_step.size());
  size_t k = access_step.size();
  for (int64_t step = L - 1; step >= 0; --step) {
    for (size_t b = 0; b < B; ++b)
      to_go[b] = loglik[static_cast<size_t>(step)][b] + discount * to_go[b];
    while (k > 0 && access_step[k - 1] == step) G[--k] = to_go;
  }
  if (k != 0) throw ShapeError("tree_advantages: an access past the last step");
  std::vector<double> adv;
  for (size_t a = 0; a < G.size(); ++a) {
    if (access_rows[a].size() != B) throw ShapeError("tree_advantages: a row set's size");
    double sum = 0;
    int64_t count = 0;
    for (size_t b = 0; b < B; ++b)
      if (access_rows[a][b]) sum += G[a][b], ++count;
    for (size_t b = 0; b < B; ++b)
      if (access_rows[a][b])
        adv.push_back(G[a][b] - (leave_one_out && count > 1
                                     ? (sum - G[a][b]) / static_cast<double>(count - 1)
                                     : 0.0));
  }
  return {adv.begin(), adv.end()};
}

std::vector<int64_t> curriculum_batch(const std::vector<int64_t>& lengths,
                                      const std::vector<int64_t>& by_length, int64_t step,
                                      int64_t steps, int64_t batch, uint64_t seed) {
  if (lengths.empty() || by_length.size() != lengths.size() || steps < 1 || batch < 1)
    throw ShapeError("curriculum_batch: no pairs, or sizes that do not fit");
  const int64_t lo = lengths[static_cast<size_t>(by_length.front())],
                hi = lengths[static_cast<size_t>(by_length.back())];
  const int64_t bound = lo + (hi - lo) * std::min(step, steps) / steps;
  size_t fit = 0;
  while (fit < by_length.size() && lengths[static_cast<size_t>(by_length[fit])] <= bound) ++fit;
  Rng r(seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(step + 1)));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < batch; ++i) out.push_back(by_length[r.below(fit)]);
  return out;
}

int64_t StackTrace::floats() const {
  int64_t n = 0;
  for (const auto* rows : {&push, &pop, &strengths, &read, &weights})
    for (const auto& r : *rows) n += static_cast<int64_t>(r.size());
  return n;
}

namespace {
// Stops a trace that has grown past its bound (StackTrace::max_floats), before it takes more.
void check_trace(const StackTrace* trace, int64_t steps) {
  if (!trace || trace->max_floats <= 0) return;
  const int64_t n = trace->floats();
  if (n > trace->max_floats)
    throw DataError("--trace: the traced pair's memory strengths reached " +
                    std::to_string((n * 4) >> 20) + " MB after " + std::to_string(steps) +
                    " steps, over the bound of " + std::to_string((trace->max_floats * 4) >> 20) +
                    " MB (they grow with the square of the length): trace a shorter pair (the "
                    "first of the file is traced)");
}
}  // namespace

std::vector<int32_t> StackLstm::decode(const std::vector<int32_t>& source, int64_t max_len,
                                       StackTrace* trace) const {
  ad::Tape t(0);
  t.set_training(false);
  t.set_recording(false);
  Step st = start(t, 1);
  if (tree_) build_tree(t, {&source}, st);
  std::vector<int32_t> out;
  const std::vector<uint8_t> dec{1};
  // Each step starts from a cleared tape: a pair of any length decodes in the memory of
  // its last step (stackmem-run on 10,000 symbols took 2 GB when every step's was kept).
  int64_t steps = 0;
  for (int32_t id : source) {
    if (c_.leaves_only) break;  // the source is in the leaves alone
    advance(t, {id}, st, trace, false);
    check_trace(trace, ++steps);
    rebase(t, st);
  }
  Var logits = advance(t, {data::Vocab::kBos}, st, trace, true, &dec);
  check_trace(trace, ++steps);
  while (static_cast<int64_t>(out.size()) < max_len) {
    const Tensor& l = logits.value();
    int32_t best = data::Vocab::kEos;
    for (int32_t v = 0; v < l.size(); ++v)
      if (v != data::Vocab::kPad && v != data::Vocab::kBos && v != data::Vocab::kUnk &&
          l[v] > l[best])
        best = v;
    if (best == data::Vocab::kEos) break;
    out.push_back(best);
    rebase(t, st);
    logits = advance(t, {best}, st, trace, true, &dec);
    check_trace(trace, ++steps);
  }
  return out;
}

// ---- data

namespace {
std::vector<std::string> split_spaces(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string w;
  while (is >> w) out.push_back(w);
  return out;
}

template <class F>
void for_lines(const std::string& path, F f) {  // f(source, target, line)
  const std::string text = io::read_text(path);
  size_t at = 0;
  int64_t line = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string l = text.substr(at, end - at);
    ++line;
    at = end + 1;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (l.empty()) continue;
    const size_t tab = l.find('\t');
    if (tab == std::string::npos) throw DataError("no tab between source and target", path, line);
    std::vector<std::string> src = split_spaces(l.substr(0, tab)),
                             tgt = split_spaces(l.substr(tab + 1));
    if (src.empty() || tgt.empty()) throw DataError("an empty source or target", path, line);
    f(src, tgt, line);
  }
}
}  // namespace

data::Vocab transduce_vocab(const std::string& path) {
  data::TokenCounts counts;
  int64_t n = 0;
  for_lines(path,
            [&](const std::vector<std::string>& s, const std::vector<std::string>& t, int64_t) {
              data::count_tokens(counts, s);
              data::count_tokens(counts, t);
              ++n;
            });
  if (n == 0) throw DataError("no pairs", path);
  return data::Vocab::build(counts, 1);
}

std::vector<TransduceExample> read_transduce(const std::string& path, const data::Vocab& vocab,
                                             const StackLstmConfig* trained, int64_t batch) {
  std::vector<TransduceExample> out;
  int64_t most = 0, most_line = 0, most_source = 0, most_target = 0;  // the costliest pair
  for_lines(path, [&](const std::vector<std::string>& s, const std::vector<std::string>& t,
                      int64_t line) {
    if (trained) {
      StackLstmConfig c = *trained;
      c.vocab = vocab.size();
      const int64_t need =
          c.train_bytes(static_cast<int64_t>(s.size()), static_cast<int64_t>(t.size()));
      if (need > most) {
        most = need, most_line = line;
        most_source = static_cast<int64_t>(s.size()), most_target = static_cast<int64_t>(t.size());
      }
    }
    TransduceExample e;
    e.line = line;
    for (const auto& w : s) e.source.push_back(vocab.id(w));
    for (const auto& w : t) e.target.push_back(vocab.id(w));
    out.push_back(std::move(e));
  });
  if (out.empty()) throw DataError("no pairs", path);
  // A step keeps every row of its batch as long as its longest pair (measured: one pair of
  // 600 + 600 symbols took 227 MB alone, 843 MB with three short ones in a batch of 4).
  const int64_t rows =
      std::min<int64_t>(std::max<int64_t>(batch, 1), static_cast<int64_t>(out.size()));
  if (trained && most > kMaxPairTrainBytes / rows)
    throw DataError("a pair of " + std::to_string(most_source) + " + " +
                        std::to_string(most_target) + " symbols needs about " +
                        std::to_string((most * rows) >> 20) + " MB to train in a batch of " +
                        std::to_string(rows) + " (each row as long as it), over the bound of " +
                        std::to_string(kMaxPairTrainBytes >> 20) +
                        " MB a step (training keeps every step; a smaller --batch-size takes "
                        "longer pairs; stackmem-run decodes pairs of any length)",
                    path, most_line);
  return out;
}

std::map<int64_t, data::Accuracy> evaluate_transduce(const StackLstm& m,
                                                     const std::vector<TransduceExample>& pairs,
                                                     int64_t bucket, int threads) {
  if (bucket < 1) throw UsageError("bucket must be >= 1");
  std::vector<data::TransduceScore> scores(pairs.size());
  std::vector<int64_t> lengths(pairs.size());
  parallel_for(
      static_cast<int64_t>(pairs.size()),
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const TransduceExample& x = pairs[static_cast<size_t>(i)];
          const auto y = m.decode(x.source, 2 * static_cast<int64_t>(x.target.size()) + 10);
          scores[static_cast<size_t>(i)] = data::score_transduction(x.target, y);
          lengths[static_cast<size_t>(i)] = static_cast<int64_t>(x.target.size());
        }
      },
      threads);
  return data::accuracy_by_length(lengths, scores, bucket);
}

// ---- training

StackTraining::StackTraining(StackLstmConfig config, StackTrainOptions o, data::Vocab vocab,
                             std::vector<TransduceExample> train,
                             std::vector<TransduceExample> valid, int64_t steps_or_0,
                             int64_t epochs, uint64_t seed, std::string config_yaml)
    : DatasetModule(o.batch, seed, std::move(config_yaml)),
      cfg_(std::move(config)),
      o_(o),
      vocab_(std::move(vocab)),
      train_(std::move(train)),
      valid_(std::move(valid)) {
  cfg_.vocab = vocab_.size();
  cfg_.validate();
  o_.validate();
  if (train_.empty()) throw DataError("no training pairs");
  set_run(static_cast<int64_t>(train_.size()), steps_or_0, epochs);
  Rng init(seed);
  model_ = std::make_unique<StackLstm>(ps_, cfg_, init);
  model_->set_symbols(vocab_);
  use_adam(o_.lr, o_.schedule, o_.warmup);
  if (cfg_.curriculum > 0) {
    for (const TransduceExample& e : train_)
      lengths_.push_back(static_cast<int64_t>(e.target.size()));
    by_length_.resize(train_.size());
    for (size_t i = 0; i < by_length_.size(); ++i) by_length_[i] = static_cast<int64_t>(i);
    std::stable_sort(by_length_.begin(), by_length_.end(), [&](int64_t a, int64_t b) {
      return lengths_[static_cast<size_t>(a)] < lengths_[static_cast<size_t>(b)];
    });
  }
}

int64_t StackTraining::begin_batch(const nn::TrainState& s) {
  const int64_t n = DatasetModule::begin_batch(s);
  in_curriculum_ = s.step < cfg_.curriculum;
  if (!in_curriculum_) return n;
  cur_ = curriculum_batch(lengths_, by_length_, s.step, cfg_.curriculum, o_.batch, seed_);
  return static_cast<int64_t>(cur_.size());
}

void StackTraining::describe(nn::ModelFile& f) const {
  DatasetModule::describe(f);
  f.texts["vocab"] = vocab_.format();
}

void StackTraining::check_resume(const nn::ModelFile& ck) const {
  if (ck.text("vocab") != vocab_.format())
    throw DataError("the checkpoint was trained on data with another vocabulary", ck.file);
}

train::Slice StackTraining::forward(ad::Tape& t, int64_t begin, int64_t end, int) const {
  int64_t tokens = 0;
  std::vector<const TransduceExample*> items;
  if (in_curriculum_)
    for (int64_t i = begin; i < end; ++i)
      items.push_back(&train_[static_cast<size_t>(cur_[static_cast<size_t>(i)])]);
  else
    items = slice_items(train_, begin, end);
  Var sum = model_->loss(t, items, &tokens);
  return train::per_token(sum, tokens);
}

std::vector<std::string> StackTraining::eval_metrics() const {
  if (valid_.empty()) return {};
  return {"valid_coarse", "valid_fine"};
}

train::Metrics StackTraining::evaluate() {
  if (valid_.empty()) return {};
  const auto a = evaluate_transduce(*model_, valid_, 1000000, 0).at(-1);
  return evaluated({{"valid_coarse", a.coarse}, {"valid_fine", a.fine}},
                   -(a.coarse + 1e-3 * a.fine));
}

LoadedStackLstm load_stack_lstm(const std::string& path) {
  LoadedStackLstm m;
  m.file = nn::load_model_file(path, "stack-lstm");
  train::in_file(path, [&] {
    m.vocab = data::Vocab::parse(m.file.text("vocab"), path + " (vocabulary)");
    m.config.read_out = true;  // older files, without the switch: the read went out
    train::read_config(m.file, m.config);
    m.config.vocab = m.vocab.size();
    io::check_stored([&] { m.config.validate(); }, path);
    m.model = train::build<StackLstm>(m.file, m.params, m.config);
    m.model->set_symbols(m.vocab);
  });
  return m;
}

}  // namespace attnkit::memory

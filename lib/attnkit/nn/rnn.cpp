#include "attnkit/nn/rnn.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnkit/core/blas.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit::nn {

CellKind parse_cell_kind(const std::string& name) {
  return parse_choice<CellKind>("cell", name,
                                {
                                    {"rnn", CellKind::RNN},
                                    {"gru", CellKind::GRU},
                                    {"lstm", CellKind::LSTM},
                                });
}

RecurrentCell::RecurrentCell(ParamStore& ps, const std::string& name, CellKind kind, int64_t input,
                             int64_t hidden, Rng& rng)
    : kind_(kind), input_(input), hidden_(hidden) {
  const int64_t G = gates() * hidden;
  const float bound = 1.0f / std::sqrt(static_cast<float>(hidden));
  Tensor wi({G, input}), wh({G, hidden}), bi({G});
  init_uniform(wi, rng, bound);
  init_uniform(wh, rng, bound);
  init_uniform(bi, rng, bound);
  W_ih = &ps.add(name + ".W_ih", std::move(wi));
  W_hh = &ps.add(name + ".W_hh", std::move(wh));
  if (kind == CellKind::GRU) {
    Tensor bh({G});
    init_uniform(bh, rng, bound);
    b = &ps.add(name + ".b_ih", std::move(bi));
    b_hh = &ps.add(name + ".b_hh", std::move(bh));
  } else {
    Tensor bh({G});
    init_uniform(bh, rng, bound);
    for (int64_t i = 0; i < G; ++i) bi[i] += bh[i];
    b = &ps.add(name + ".b", std::move(bi));
    b->copies = 2;  // trained as PyTorch's b_ih + b_hh (see rnn.h)
  }
}

void RecurrentCell::set_bias_copies(int n) {
  if (n < 1) throw UsageError("bias copies must be at least 1");
  if (kind_ != CellKind::GRU) b->copies = n;
}

int64_t RecurrentCell::gates() const {
  switch (kind_) {
    case CellKind::RNN:
      return 1;
    case CellKind::GRU:
      return 3;
    default:
      return 4;
  }
}

State RecurrentCell::zero_state(Tape& t, int64_t batch) const {
  State s;
  s.h = t.constant(t.zeros({batch, hidden_}));
  if (kind_ == CellKind::LSTM) s.c = t.constant(t.zeros({batch, hidden_}));
  return s;
}

Var RecurrentCell::project(Tape& t, Var x) const {
  const bool tr = transposed_ && kind_ != CellKind::GRU && t.recording();
  return ad::linear(x, t.param(*W_ih), t.param(*b), tr ? t.param_t(*W_ih) : Var());
}

State RecurrentCell::step(Tape& t, Var xp, const State& s) const {
  Var whh = t.param(*W_hh);
  switch (kind_) {
    case CellKind::RNN:
      return {ad::tanh(transposed_ && t.recording() ? ad::addmm_t(xp, s.h, whh, t.param_t(*W_hh))
                                                    : ad::addmm(xp, s.h, whh, false, true)),
              Var()};
    case CellKind::GRU: {
      Var hp = ad::linear(s.h, whh, t.param(*b_hh));
      return {ad::gru_cell(xp, hp, s.h), Var()};
    }
    default: {
      if (!s.c.valid()) throw Error("an LSTM step needs a cell state c");
      Var a =
          ad::lstm_gates(transposed_ && t.recording() ? ad::addmm_t(xp, s.h, whh, t.param_t(*W_hh))
                                                      : ad::addmm(xp, s.h, whh, false, true));
      Var c = ad::lstm_cell_c(a, s.c);
      return {ad::lstm_cell_h(a, c), c};
    }
  }
}

void RecurrentCell::load_pytorch(const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                 const Tensor& b_hh) {
  auto need = [](const Tensor& got, const Tensor& want, const char* what) {
    if (got.shape() != want.shape())
      throw ShapeError(std::string("PyTorch ") + what + " has shape " + shape_str(got.shape()) +
                       " but the cell needs " + shape_str(want.shape()));
  };
  need(w_ih, W_ih->value, "weight_ih");
  need(w_hh, W_hh->value, "weight_hh");
  need(b_ih, b->value, "bias_ih");
  need(b_hh, b->value, "bias_hh");
  W_ih->value = w_ih.clone();
  W_hh->value = w_hh.clone();
  if (kind_ == CellKind::GRU) {
    b->value = b_ih.clone();
    this->b_hh->value = b_hh.clone();
  } else {
    b->value = b_ih.clone();
    for (int64_t i = 0; i < b->value.size(); ++i) b->value[i] += b_hh[i];
  }
}

RecurrentEncoder::RecurrentEncoder(ParamStore& ps, const std::string& name,
                                   const EncoderOptions& opt, Rng& rng)
    : opt_(opt) {
  if (opt.layers < 1 || opt.input < 1 || opt.hidden < 1)
    throw UsageError("a recurrent encoder needs layers, input and hidden sizes >= 1");
  cells_.reserve(static_cast<size_t>(opt.layers * directions()));
  for (int l = 0; l < opt.layers; ++l) {
    const int64_t in = l == 0 ? opt.input : opt.hidden * directions();
    for (int d = 0; d < directions(); ++d)
      cells_.emplace_back(ps, name + ".l" + std::to_string(l) + (d ? "_reverse" : ""), opt.kind, in,
                          opt.hidden, rng);
  }
}

RecurrentEncoder::Output RecurrentEncoder::operator()(Tape& t, Var x,
                                                      const std::vector<int64_t>& lengths) const {
  if (x.rank() != 3 || x.dim(2) != opt_.input)
    throw ShapeError("recurrent encoder: input " + shape_str(x.shape()) + " is not [B, T, " +
                     std::to_string(opt_.input) + "]");
  // Inference of a GRU: the whole layers forward only (it checks the lengths itself).
  if (opt_.kind == CellKind::GRU && !t.recording()) return gru_forward(t, x, Var(), lengths);
  const int64_t B = x.dim(0), T = x.dim(1);
  if (static_cast<int64_t>(lengths.size()) != B)
    throw DataError("recurrent encoder: " + std::to_string(lengths.size()) +
                    " lengths for a batch of " + std::to_string(B));
  for (int64_t len : lengths)
    if (len < 1 || len > T)
      throw DataError("recurrent encoder: length " + std::to_string(len) + " outside [1, " +
                      std::to_string(T) + "]");
  // keep[s][b]: step s is a real step of item b; full[s]: of every item.
  std::vector<std::vector<uint8_t>> keep(static_cast<size_t>(T),
                                         std::vector<uint8_t>(static_cast<size_t>(B)));
  std::vector<bool> full(static_cast<size_t>(T), true);
  for (int64_t s = 0; s < T; ++s)
    for (int64_t b = 0; b < B; ++b) {
      keep[static_cast<size_t>(s)][static_cast<size_t>(b)] = s < lengths[static_cast<size_t>(b)];
      if (s >= lengths[static_cast<size_t>(b)]) full[static_cast<size_t>(s)] = false;
    }
  Output out;
  Var layer_in = ad::permute(x, {1, 0, 2});  // time-major [T, B, n]
  for (int l = 0; l < opt_.layers; ++l) {
    std::vector<Var> dir_out;
    for (int d = 0; d < directions(); ++d) {
      const RecurrentCell& cell = this->cell(l, d);
      Var P = cell.project(t, layer_in);  // [T, B, G·m], one gemm for all steps
      State s = cell.zero_state(t, B);
      if (opt_.kind == CellKind::LSTM) {  // the whole layer in one node (ops.h)
        std::vector<uint8_t> flags;
        if (!std::all_of(full.begin(), full.end(), [](bool f) { return f; }))
          for (const auto& k : keep) flags.insert(flags.end(), k.begin(), k.end());
        Var Y = ad::lstm_sequence(P, s.h, s.c, t.param(*cell.W_hh), flags, d == 1);
        out.final.push_back({ad::index(Y, T), ad::index(Y, T + 1)});
        dir_out.push_back(ad::slice(Y, 0, 0, T));  // [T, B, m]
        continue;
      }
      std::vector<Var> hs(static_cast<size_t>(T));
      for (int64_t k = 0; k < T; ++k) {
        const int64_t step = d == 0 ? k : T - 1 - k;
        const size_t si = static_cast<size_t>(step);
        State n = cell.step(t, ad::index(P, step), s);
        if (full[si]) {
          s = n;
          hs[si] = n.h;
        } else {
          s.h = ad::select_rows(keep[si], n.h, s.h);
          if (n.c.valid()) s.c = ad::select_rows(keep[si], n.c, s.c);
          hs[si] = ad::mask_rows(n.h, keep[si]);
        }
      }
      out.final.push_back(s);
      dir_out.push_back(ad::stack(hs, 0));  // [T, B, m]
    }
    layer_in = dir_out.size() == 1 ? dir_out[0] : ad::concat(dir_out, -1);
    if (l + 1 < opt_.layers) layer_in = ad::dropout(layer_in, opt_.dropout);
  }
  out.outputs = ad::permute(layer_in, {1, 0, 2});
  return out;
}

Tensor RecurrentEncoder::input_projections(const Tensor& x) const {
  if (opt_.kind != CellKind::GRU) throw Error("input_projections: a GRU encoder's only");
  if (x.rank() != 2 || x.dim(1) != opt_.input)
    throw ShapeError("input_projections: input " + shape_str(x.shape()) + " is not [N, " +
                     std::to_string(opt_.input) + "]");
  const int64_t N = x.dim(0), n = opt_.input, G = 3 * opt_.hidden, K = directions() * G;
  Tensor w({K, n}), b({K});
  for (int d = 0; d < directions(); ++d) {
    const RecurrentCell& c = cell(0, d);
    std::copy(c.W_ih->value.data(), c.W_ih->value.data() + G * n, w.data() + d * G * n);
    std::copy(c.b->value.data(), c.b->value.data() + G, b.data() + d * G);
  }
  // As ad::linear: the bias rows, then the product added.
  Tensor y({N, K});
  for (int64_t r = 0; r < N; ++r) std::copy(b.data(), b.data() + K, y.data() + r * K);
  gemm(Trans::No, Trans::Yes, 1.0f, ConstMat{x.data(), N, n, n}, ConstMat{w.data(), K, n, n}, 1.0f,
       Mat{y.data(), N, K, K});
  return y;
}

RecurrentEncoder::Output RecurrentEncoder::projected(Tape& t, Var p,
                                                     const std::vector<int64_t>& lengths) const {
  if (opt_.kind != CellKind::GRU || t.recording())
    throw Error("recurrent encoder: projected inputs are for a GRU on a tape not recording");
  const int64_t K = directions() * 3 * opt_.hidden;
  if (p.rank() != 3 || p.dim(2) != K)
    throw ShapeError("recurrent encoder: projections " + shape_str(p.shape()) + " are not [B, T, " +
                     std::to_string(K) + "]");
  return gru_forward(t, Var(), p, lengths);
}

RecurrentEncoder::Output RecurrentEncoder::gru_forward(Tape& t, Var x, Var p0,
                                                       const std::vector<int64_t>& lengths) const {
  const Var in = p0.valid() ? p0 : x;
  const int64_t B = in.dim(0), T = in.dim(1);
  if (static_cast<int64_t>(lengths.size()) != B)
    throw DataError("recurrent encoder: " + std::to_string(lengths.size()) +
                    " lengths for a batch of " + std::to_string(B));
  // flags[s·B + b]: step s is a real step of item b (none when every step is)
  std::vector<uint8_t> flags;
  bool padded = false;
  for (int64_t len : lengths) {
    if (len < 1 || len > T)
      throw DataError("recurrent encoder: length " + std::to_string(len) + " outside [1, " +
                      std::to_string(T) + "]");
    padded = padded || len < T;
  }
  if (padded) {
    flags.resize(static_cast<size_t>(T * B));
    for (int64_t s = 0; s < T; ++s)
      for (int64_t b = 0; b < B; ++b)
        flags[static_cast<size_t>(s * B + b)] = s < lengths[static_cast<size_t>(b)];
  }
  Output out;
  const int64_t m = opt_.hidden, D = directions() * m;
  Var layer_in = x;
  for (int l = 0; l < opt_.layers; ++l) {
    Tensor y = t.alloc({B, T, D});
    for (int d = 0; d < directions(); ++d) {
      const RecurrentCell& cell = this->cell(l, d);
      // [B, T, 3m]: one gemm for all steps, or the given projections' columns of direction d
      const bool given = l == 0 && p0.valid();
      Var P = given ? p0 : cell.project(t, layer_in);
      Tensor h = t.zeros({B, m});
      ad::gru_layer_forward(t, P.value(), given ? d * 3 * m : 0, cell.W_hh->value, cell.b_hh->value,
                            flags, d == 1, h, y.data() + d * m, D);
      out.final.push_back({t.constant(std::move(h)), Var()});
    }
    layer_in = t.constant(std::move(y));
    if (l + 1 < opt_.layers) layer_in = ad::dropout(layer_in, opt_.dropout);
  }
  out.outputs = layer_in;
  return out;
}

}  // namespace attnkit::nn

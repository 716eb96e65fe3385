// Structured attention: the chain's and the dependency tree's inside-outside over one
// hypergraph engine (structured.h says why the gradients are taken as they are).
#include "attnkit/attention/structured.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/core/fastmath.h"
#include "attnkit/core/parallel.h"

namespace attnkit::attention {

namespace {

constexpr double kNegInfD = -std::numeric_limits<double>::infinity();

// ---- the hypergraph: nodes (chart items) in topological order; node v's incoming
// hyperedges are edges[begin[v] .. begin[v+1]). An edge's score is the sum of its potentials
// (theta[pot], up to two; -1 = none) and its tails' log-scores (up to two; -1 = none).
struct Edge {
  int32_t pot[2] = {-1, -1};
  int32_t tail[2] = {-1, -1};
};
struct Hypergraph {
  std::vector<int32_t> begin{0};
  std::vector<Edge> edges;
  int32_t root = -1;
  int32_t nodes() const { return static_cast<int32_t>(begin.size()) - 1; }
  // Appends a node with the edges given; none: the node does not exist (-1).
  int32_t add(const std::vector<Edge>& in) {
    if (in.empty()) return -1;
    edges.insert(edges.end(), in.begin(), in.end());
    begin.push_back(static_cast<int32_t>(edges.size()));
    return nodes() - 1;
  }
};

// Forward-mode numbers: value and tangent.
struct Dual {
  double v = 0.0, d = 0.0;
};
inline Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
inline Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
inline Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.v * b.d + a.d * b.v}; }
inline Dual& operator+=(Dual& a, Dual b) { return a = a + b; }
inline Dual exp_of(Dual a) {
  const double e = std::exp(a.v);
  return {e, a.v == kNegInfD ? 0.0 : e * a.d};
}
inline double exp_of(double a) { return std::exp(a); }
inline double val(double x) { return x; }
inline double val(Dual x) { return x.v; }
inline double neg_inf(double) { return kNegInfD; }
inline Dual neg_inf(Dual) { return {kNegInfD, 0.0}; }

// log Σ exp(s_k), its tangent Σ softmax_k · ṡ_k; -inf when every term is.
double lse(const double* s, size_t k) {
  double m = kNegInfD;
  for (size_t i = 0; i < k; ++i) m = std::max(m, s[i]);
  if (m == kNegInfD) return kNegInfD;
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) sum += std::exp(s[i] - m);
  return m + std::log(sum);
}
Dual lse(const Dual* s, size_t k) {
  double m = kNegInfD;
  for (size_t i = 0; i < k; ++i) m = std::max(m, s[i].v);
  if (m == kNegInfD) return {kNegInfD, 0.0};
  double sum = 0.0, dsum = 0.0;
  for (size_t i = 0; i < k; ++i) {
    if (s[i].v == kNegInfD) continue;
    const double e = std::exp(s[i].v - m);
    sum += e;
    dsum += e * s[i].d;
  }
  return {m + std::log(sum), dsum / sum};
}

template <class T>
T edge_score(const Edge& e, const T* theta, const std::vector<T>& alpha) {
  T s{};
  for (int32_t p : e.pot)
    if (p >= 0) s += theta[p];
  for (int32_t t : e.tail)
    if (t >= 0) s += alpha[static_cast<size_t>(t)];
  return s;
}

// Inside: alpha[v] = log-sum-exp over v's edges of their scores.
template <class T>
void inside(const Hypergraph& g, const T* theta, std::vector<T>& alpha) {
  alpha.assign(static_cast<size_t>(g.nodes()), T{});
  std::vector<T> s;
  for (int32_t v = 0; v < g.nodes(); ++v) {
    s.clear();
    for (int32_t e = g.begin[v]; e < g.begin[v + 1]; ++e)
      s.push_back(edge_score(g.edges[static_cast<size_t>(e)], theta, alpha));
    alpha[static_cast<size_t>(v)] = lse(s.data(), s.size());
  }
}

// Outside, as the reverse-mode adjoints of log Z = alpha[root]: adj[v] = d log Z / d alpha[v]
// (the probability of item v), grad[p] += d log Z / d theta[p] (the marginal of part p).
// grad must hold zeros (one per potential).
template <class T>
void outside(const Hypergraph& g, const T* theta, const std::vector<T>& alpha, T* grad) {
  std::vector<T> adj(alpha.size(), T{});
  adj[static_cast<size_t>(g.root)] = T{1.0};
  for (int32_t v = g.root; v >= 0; --v) {
    const T av = alpha[static_cast<size_t>(v)];
    if (val(av) == kNegInfD) continue;
    const T a = adj[static_cast<size_t>(v)];
    for (int32_t e = g.begin[v]; e < g.begin[v + 1]; ++e) {
      const Edge& ed = g.edges[static_cast<size_t>(e)];
      const T s = edge_score(ed, theta, alpha);
      if (val(s) == kNegInfD) continue;
      const T w = exp_of(s - av) * a;
      for (int32_t t : ed.tail)
        if (t >= 0) adj[static_cast<size_t>(t)] += w;
      for (int32_t p : ed.pot)
        if (p >= 0) grad[p] += w;
    }
  }
}

// log Z and the marginals of every potential.
double marginals(const Hypergraph& g, const double* theta, size_t n_pot, double* marg) {
  std::vector<double> alpha;
  inside(g, theta, alpha);
  std::fill(marg, marg + n_pot, 0.0);
  outside(g, theta, alpha, marg);
  return alpha[static_cast<size_t>(g.root)];
}

// H · dir, H the Hessian of log Z in the potentials: forward mode over inside and outside.
void hessian_vector(const Hypergraph& g, const double* theta, const double* dir, size_t n_pot,
                    double* out) {
  std::vector<Dual> th(n_pot), grad(n_pot);
  for (size_t i = 0; i < n_pot; ++i) th[i] = {theta[i], dir[i]};
  std::vector<Dual> alpha;
  inside(g, th.data(), alpha);
  outside(g, th.data(), alpha, grad.data());
  for (size_t i = 0; i < n_pot; ++i) out[i] = grad[i].d;
}

// The potentials of the best structure (max-plus inside, first maximal edge kept).
std::vector<int32_t> viterbi(const Hypergraph& g, const double* theta) {
  const size_t nn = static_cast<size_t>(g.nodes());
  std::vector<double> best(nn, kNegInfD);
  std::vector<int32_t> arg(nn, -1);
  for (int32_t v = 0; v < g.nodes(); ++v)
    for (int32_t e = g.begin[v]; e < g.begin[v + 1]; ++e) {
      const double s = edge_score(g.edges[static_cast<size_t>(e)], theta, best);
      if (arg[static_cast<size_t>(v)] < 0 || s > best[static_cast<size_t>(v)]) {
        best[static_cast<size_t>(v)] = s;
        arg[static_cast<size_t>(v)] = e;
      }
    }
  std::vector<int32_t> pots, stack{g.root};
  while (!stack.empty()) {
    const int32_t v = stack.back();
    stack.pop_back();
    const Edge& ed = g.edges[static_cast<size_t>(arg[static_cast<size_t>(v)])];
    for (int32_t p : ed.pot)
      if (p >= 0) pots.push_back(p);
    for (int32_t t : ed.tail)
      if (t >= 0) stack.push_back(t);
  }
  return pots;
}

// ---- the two models. Chain over n selections: potentials [u_0..u_{n-1}, P_0 (4), ...,
// P_{n-2} (4)]; nodes a_i(z) = the log-score of z_1..z_i with z_i = z.
Hypergraph build_chain(int64_t n) {
  Hypergraph g;
  const int32_t nn = static_cast<int32_t>(n);
  int32_t prev[2] = {-1, -1};
  for (int32_t i = 0; i < nn; ++i) {
    int32_t cur[2];
    for (int32_t z = 0; z < 2; ++z) {
      std::vector<Edge> in;
      if (i == 0) {
        Edge e;
        e.pot[0] = z == 1 ? 0 : -1;
        in.push_back(e);
      } else {
        for (int32_t a = 0; a < 2; ++a) {
          Edge e;
          e.pot[0] = nn + (i - 1) * 4 + a * 2 + z;
          e.pot[1] = z == 1 ? i : -1;
          e.tail[0] = prev[a];
          in.push_back(e);
        }
      }
      cur[z] = g.add(in);
    }
    prev[0] = cur[0];
    prev[1] = cur[1];
  }
  std::vector<Edge> last;
  if (n == 0) last.push_back(Edge{});
  for (int32_t z = 0; z < 2 && n > 0; ++z) {
    Edge e;
    e.tail[0] = prev[z];
    last.push_back(e);
  }
  g.root = g.add(last);
  return g;
}

// Eisner over positions 0..n (0 the root, word w at position w + 1): complete (C) and
// incomplete (I) spans [s, t] headed at their left (R: arcs point right) or right (L) end.
Hypergraph build_tree(int64_t n) {
  Hypergraph g;
  const int64_t m = n + 1;
  enum { CL, CR, IL, IR };
  std::vector<int32_t> id(static_cast<size_t>(m * m * 4), -1);
  auto at = [&](int64_t s, int64_t t, int k) -> int32_t& {
    return id[static_cast<size_t>((s * m + t) * 4 + k)];
  };
  auto arc = [&](int64_t h, int64_t d) {  // head position h -> dependent position d >= 1
    return static_cast<int32_t>(h == 0 ? (d - 1) * n + (d - 1) : (h - 1) * n + (d - 1));
  };
  auto edge = [](int32_t pot, int32_t a, int32_t b) {
    Edge e;
    e.pot[0] = pot;
    e.tail[0] = a;
    e.tail[1] = b;
    return e;
  };
  for (int64_t s = 0; s < m; ++s) {
    at(s, s, CL) = g.add({Edge{}});
    at(s, s, CR) = g.add({Edge{}});
  }
  std::vector<Edge> in;
  for (int64_t w = 1; w < m; ++w)
    for (int64_t s = 0; s + w < m; ++s) {
      const int64_t t = s + w;
      for (int k : {IL, IR}) {
        in.clear();
        if (k == IL && s == 0) continue;  // the root has no head
        for (int64_t r = s; r < t; ++r) {
          const int32_t a = at(s, r, CR), b = at(r + 1, t, CL);
          if (a >= 0 && b >= 0) in.push_back(edge(k == IL ? arc(t, s) : arc(s, t), a, b));
        }
        at(s, t, k) = g.add(in);
      }
      in.clear();
      for (int64_t r = s; r < t; ++r) {
        const int32_t a = at(s, r, CL), b = at(r, t, IL);
        if (a >= 0 && b >= 0) in.push_back(edge(-1, a, b));
      }
      at(s, t, CL) = g.add(in);
      in.clear();
      for (int64_t r = s + 1; r <= t; ++r) {
        const int32_t a = at(s, r, IR), b = at(r, t, CR);
        if (a >= 0 && b >= 0) in.push_back(edge(-1, a, b));
      }
      at(s, t, CR) = g.add(in);
    }
  g.root = at(0, n, CR);
  return g;
}

// The categorical chain over K steps of S states: potentials [U (K S), W ((K-1) S S)];
// nodes a_k(s) = the log-score of z_1..z_k with z_k = s.
Hypergraph build_hop_chain(int64_t K, int64_t S) {
  Hypergraph g;
  const int32_t k_ = static_cast<int32_t>(K), s_ = static_cast<int32_t>(S);
  std::vector<int32_t> prev, cur(static_cast<size_t>(S));
  for (int32_t k = 0; k < k_; ++k) {
    for (int32_t z = 0; z < s_; ++z) {
      std::vector<Edge> in;
      if (k == 0) {
        Edge e;
        e.pot[0] = z;
        in.push_back(e);
      } else {
        for (int32_t a = 0; a < s_; ++a) {
          Edge e;
          e.pot[0] = k_ * s_ + ((k - 1) * s_ + a) * s_ + z;
          e.pot[1] = k * s_ + z;
          e.tail[0] = prev[static_cast<size_t>(a)];
          in.push_back(e);
        }
      }
      cur[static_cast<size_t>(z)] = g.add(in);
    }
    prev = cur;
  }
  std::vector<Edge> last;
  if (K == 0 || S == 0) last.push_back(Edge{});
  for (size_t z = 0; z < prev.size() && K > 0; ++z) {
    Edge e;
    e.tail[0] = prev[z];
    last.push_back(e);
  }
  g.root = g.add(last);
  return g;
}

// The hypergraph of a model and size, built once per process (kind 2: the hop chain).
const Hypergraph& graph(int kind, int64_t n, int64_t states = 0) {
  static std::mutex mu;
  static std::map<std::tuple<int, int64_t, int64_t>, std::unique_ptr<Hypergraph>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[{kind, n, states}];
  if (!slot)
    slot = std::make_unique<Hypergraph>(kind == 0   ? build_chain(n)
                                        : kind == 1 ? build_tree(n)
                                                    : build_hop_chain(n, states));
  return *slot;
}
const Hypergraph& graph(StructKind kind, int64_t n) { return graph(static_cast<int>(kind), n); }

const Hypergraph& hop_graph(int64_t K, int64_t S) {
  if (K < 0 || (K > 0 && S < 1))
    throw Error("hop chain: " + std::to_string(K) + " steps of " + std::to_string(S) +
                " states (a step needs a state)");
  return graph(2, K, S);
}

// ---- the tree in linear space (structured.h: TreeEngine::Linear). Positions 0..n (0 the
// root, word w at position w + 1), m = n + 1. Every tree gives each word exactly one head, so
// shifting the potentials of word d's heads by c_d (their maximum) shifts log Z by c_d and
// leaves the marginals alone: the arc weights w[h, d] = exp(A(h -> d) - c_d) lie in [0, 1]
// and one of each word's is 1. Eisner's recursions then run on plain sums of products (no
// exp or log per cell), every chart held twice (row-major [s, t] and transposed [t, s]) so
// that each inner loop over the split point reads contiguous memory:
//   S[s, t]  = Σ_{s<=r<t} CR[s, r] CL[r+1, t]     IR[s, t] = w[s, t] S,  IL[s, t] = w[t, s] S
//   CL[s, t] = Σ_{s<=r<t} CL[s, r] IL[r, t]        CR[s, t] = Σ_{s<r<=t} IR[s, r] CR[r, t]
// (IL and CL are 0 at s = 0: the root has no head), Z = CR[0, n]. The outside pass is the
// reverse-mode adjoint of Z; the marginal of an arc is w ∂Z/∂w / Z. With T = Dual (value and
// tangent, the tangent of w being w · dir) the same passes give H dir in forward mode.
// Applies when every word has a finite best head and log Z - Σ c_d >= -600 + 2n: the
// structures number fewer than e^{1.91 n}, so every item and adjoint that contributes more than
// 1e-16 of Z is then a normal double (and nothing overflows, n <= kMaxTreeSize).
inline void set_arc_weight(double& x, double e, double) { x = e; }
inline void set_arc_weight(Dual& x, double e, double de) { x = {e, de}; }
inline double tangent_of(Dual x) { return x.d; }
inline double tangent_of(double) { return 0.0; }
inline Dual operator/(Dual a, Dual b) {
  const double q = a.v / b.v;
  return {q, (a.d - q * b.d) / b.v};
}

// Σ a_i b_i over n terms in four lanes (so that the compiler may vectorise the sum).
template <class T>
T dot_lanes(const T* a, const T* b, int64_t n) {
  T acc[4] = {};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) acc[l] += a[i + l] * b[i + l];
  for (; i < n; ++i) acc[0] += a[i] * b[i];
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// false (nothing written) where the engine does not apply; else log Z, the marginals [n n]
// in A's layout and, for T = Dual and a direction dir, H dir [n n] into tangent.
template <class T>
bool eisner_linear(const double* A, const double* dir, int64_t n, double* log_z, double* marg,
                   double* tangent) {
  if (n < 1 || n > kMaxTreeSize) return false;
  const int64_t m = n + 1;
  const size_t mm = static_cast<size_t>(m * m);
  auto pot = [n](int64_t h, int64_t d) {  // head position h -> dependent position d >= 1
    return static_cast<size_t>(h == 0 ? (d - 1) * n + (d - 1) : (h - 1) * n + (d - 1));
  };
  std::vector<double> c(static_cast<size_t>(m), 0.0);
  double shift = 0.0;
  for (int64_t d = 1; d <= n; ++d) {
    double best = kNegInfD;
    for (int64_t i = 0; i < n; ++i) {
      const double a = A[i * n + d - 1];
      if (std::isnan(a) || a == -kNegInfD) return false;
      best = std::max(best, a);
    }
    if (!std::isfinite(best)) return false;
    c[static_cast<size_t>(d)] = best;
    shift += best;
  }
  // per-thread buffers, reused (an item is solved per batch entry and decoder step): the
  // charts' cells are written before they are read; the adjoints are zeroed
  thread_local std::vector<T> buf[15];
  for (auto& b : buf)
    if (b.size() < mm) b.resize(mm);
  T* w = buf[0].data();
  for (int64_t h = 0; h <= n; ++h)
    for (int64_t d = 1; d <= n; ++d) {
      if (h == d) continue;
      const size_t p = pot(h, d);
      const double e = std::exp(A[p] - c[static_cast<size_t>(d)]);
      set_arc_weight(w[static_cast<size_t>(h * m + d)], e, dir ? e * dir[p] : 0.0);
    }
  // inside
  T *CRr = buf[1].data(), *CRc = buf[2].data(), *CLr = buf[3].data(), *CLc = buf[4].data(),
    *IRr = buf[5].data(), *ILc = buf[6].data(), *Sm = buf[7].data();
  for (int64_t s = 0; s < m; ++s) {
    const size_t d = static_cast<size_t>(s * m + s);
    CRr[d] = CRc[d] = CLr[d] = CLc[d] = T{1.0};
  }
  for (int64_t k = 1; k <= n; ++k)
    for (int64_t s = 0; s + k <= n; ++s) {
      const int64_t t = s + k;
      const size_t st = static_cast<size_t>(s * m + t), ts = static_cast<size_t>(t * m + s);
      const T sum = dot_lanes(CRr + s * m + s, CLc + t * m + s + 1, k);
      Sm[st] = sum;
      IRr[st] = w[st] * sum;
      if (s >= 1) {
        ILc[ts] = w[ts] * sum;
        CLr[st] = CLc[ts] = dot_lanes(CLr + s * m + s, ILc + t * m + s, k);
      }
      CRr[st] = CRc[ts] = dot_lanes(IRr + s * m + s + 1, CRc + t * m + s + 1, k);
    }
  const T Z = CRr[static_cast<size_t>(n)];
  const double zv = val(Z);
  if (!(zv > 0.0) || !std::isfinite(zv) || std::log(zv) < -600.0 + 2.0 * static_cast<double>(n))
    return false;
  // outside: adjoints of Z, a chart's in its two layouts (summed when the item is reached)
  T *aCRr = buf[8].data(), *aCRc = buf[9].data(), *aCLr = buf[10].data(), *aCLc = buf[11].data(),
    *aIRr = buf[12].data(), *aILc = buf[13].data(), *aw = buf[14].data();
  for (T* a : {aCRr, aCRc, aCLr, aCLc, aIRr, aILc}) std::fill(a, a + mm, T{});
  aCRr[static_cast<size_t>(n)] = T{1.0};
  for (int64_t k = n; k >= 1; --k)
    for (int64_t s = 0; s + k <= n; ++s) {
      const int64_t t = s + k;
      const size_t st = static_cast<size_t>(s * m + t), ts = static_cast<size_t>(t * m + s);
      const T acr = aCRr[st] + aCRc[ts];
      {
        const T* crc = CRc + t * m;
        const T* ir = IRr + s * m;
        T* air = aIRr + s * m;
        T* acrc = aCRc + t * m;
        for (int64_t r = s + 1; r <= t; ++r) {
          air[r] += acr * crc[r];
          acrc[r] += acr * ir[r];
        }
      }
      if (s >= 1) {
        const T acl = aCLr[st] + aCLc[ts];
        const T* il = ILc + t * m;
        const T* clr = CLr + s * m;
        T* aclr = aCLr + s * m;
        T* ail = aILc + t * m;
        for (int64_t r = s; r < t; ++r) {
          aclr[r] += acl * il[r];
          ail[r] += acl * clr[r];
        }
      }
      const T air = aIRr[st];
      T as = air * w[st];
      aw[st] = air * Sm[st];
      if (s >= 1) {
        const T ail = aILc[ts];
        aw[ts] = ail * Sm[st];
        as += ail * w[ts];
      }
      const T* cl = CLc + t * m;
      const T* cr = CRr + s * m;
      T* acr_row = aCRr + s * m;
      T* acl_col = aCLc + t * m;
      for (int64_t r = s; r < t; ++r) {
        acr_row[r] += as * cl[r + 1];
        acl_col[r + 1] += as * cr[r];
      }
    }
  *log_z = std::log(zv) + shift;
  for (int64_t h = 0; h <= n; ++h)
    for (int64_t d = 1; d <= n; ++d) {
      if (h == d) continue;
      const size_t p = pot(h, d), hd = static_cast<size_t>(h * m + d);
      const T mu = w[hd] * aw[hd] / Z;
      marg[p] = val(mu);
      if (tangent) tangent[p] = tangent_of(mu);
    }
  return true;
}

size_t chain_pots(int64_t n) { return static_cast<size_t>(n + 4 * std::max<int64_t>(n - 1, 0)); }

std::vector<double> chain_theta(const double* unary, const double* pairwise, int64_t n) {
  std::vector<double> th(chain_pots(n));
  std::copy(unary, unary + n, th.begin());
  if (n > 1) std::copy(pairwise, pairwise + 4 * (n - 1), th.begin() + n);
  return th;
}

}  // namespace

// Named, not anonymous: HopChainSolution::State (structured.h) holds one, and a class of
// external linkage may not hold a member of a type of internal linkage.
namespace hop_detail {

// ---- the hop chain in linear space (structured.h: HopEngine::Linear). Step k's scaled
// forward a_k and backward b_k vectors (maximum 1) with logs kept aside:
//   a_k(s) ∝ e_k(s) Σ_a a_{k-1}(a) E_{k-1}(a, s),   b_k(a) ∝ Σ_s E_k(a, s) e_{k+1}(s) b_{k+1}(s),
// e_k = exp(U_k - max U_k), E_k = exp(W_k - max W_k). The marginals are a_k ⊙ b_k, normalised
// per step.
struct LinearHop {
  int64_t K = 0, S = 0;
  std::vector<double> e, E;  // [K, S], [K-1, S, S]
  std::vector<double> a, b;  // [K, S]
  std::vector<double> q;     // [K, S]: Σ_a a_{k-1}(a) E_{k-1}(a, s) (k >= 1)
  std::vector<double> bt;    // [K, S]: b_k before its rescaling (k < K-1)
  double log_z = 0.0;

  LinearHop(const double* U, const double* W, int64_t K_, int64_t S_) : K(K_), S(S_) {
    const size_t ks = static_cast<size_t>(K * S),
                 l = static_cast<size_t>(std::max<int64_t>(K - 1, 0));
    e.resize(ks), a.resize(ks), b.resize(ks), q.assign(ks, 0.0), bt.assign(ks, 0.0);
    E.resize(l * static_cast<size_t>(S * S));
    double shift = 0.0;  // Σ of the maxima taken out of U and W
    for (int64_t k = 0; k < K; ++k) {
      const double* u = U + k * S;
      const double m = *std::max_element(u, u + S);
      shift += m;
      for (int64_t s = 0; s < S; ++s)
        e[static_cast<size_t>(k * S + s)] = fastmath::fast_exp_double(u[s] - m);
    }
    for (size_t i = 0; i < l; ++i) {
      const double* w = W + i * static_cast<size_t>(S * S);
      const double m = *std::max_element(w, w + S * S);
      shift += m;
      double* x = E.data() + i * static_cast<size_t>(S * S);
      for (int64_t j = 0; j < S * S; ++j) x[j] = fastmath::fast_exp_double(w[j] - m);
    }
    // forward
    std::copy(e.begin(), e.begin() + S, a.begin());
    double logs = 0.0;
    for (int64_t k = 1; k < K; ++k) {
      const double* prev = a.data() + (k - 1) * S;
      const double* x = link(k - 1);
      double* qk = q.data() + k * S;
      for (int64_t i = 0; i < S; ++i) {  // q_k = E_{k-1}ᵀ a_{k-1}, row by row
        const double ai = prev[i];
        const double* row = x + i * S;
        for (int64_t s = 0; s < S; ++s) qk[s] += ai * row[s];
      }
      double* ak = a.data() + k * S;
      const double* ek = e.data() + k * S;
      double c = 0.0;
      for (int64_t s = 0; s < S; ++s) c = std::max(c, ak[s] = ek[s] * qk[s]);
      for (int64_t s = 0; s < S; ++s) ak[s] /= c;
      logs += std::log(c);
    }
    double last = 0.0;
    for (int64_t s = 0; s < S; ++s) last += a[static_cast<size_t>((K - 1) * S + s)];
    log_z = shift + logs + std::log(last);
    // backward
    std::fill(b.begin() + (K - 1) * S, b.end(), 1.0);
    std::vector<double> v(static_cast<size_t>(S));
    for (int64_t k = K - 2; k >= 0; --k) {
      const double* next = b.data() + (k + 1) * S;
      const double* en = e.data() + (k + 1) * S;
      for (int64_t s = 0; s < S; ++s) v[static_cast<size_t>(s)] = en[s] * next[s];
      const double* x = link(k);
      double* btk = bt.data() + k * S;
      double c = 0.0;
      for (int64_t i = 0; i < S; ++i) {  // E_k v
        const double* row = x + i * S;
        double acc = 0.0;
        for (int64_t s = 0; s < S; ++s) acc += row[s] * v[static_cast<size_t>(s)];
        btk[i] = acc;
        c = std::max(c, acc);
      }
      double* bk = b.data() + k * S;
      for (int64_t i = 0; i < S; ++i) bk[i] = btk[i] / c;
    }
  }
  const double* link(int64_t k) const { return E.data() + k * S * S; }

  // p(z_k = s) [K, S] and p(z_k = a, z_{k+1} = s) [K-1, S, S].
  void marginals(double* mu, double* xi) const {
    for (int64_t k = 0; k < K; ++k) {
      const double* ak = a.data() + k * S;
      const double* bk = b.data() + k * S;
      double* m = mu + k * S;
      double z = 0.0;
      for (int64_t s = 0; s < S; ++s) z += m[s] = ak[s] * bk[s];
      for (int64_t s = 0; s < S; ++s) m[s] /= z;
    }
    for (int64_t k = 0; k + 1 < K; ++k) {
      const double* ak = a.data() + k * S;
      const double* en = e.data() + (k + 1) * S;
      const double* bn = b.data() + (k + 1) * S;
      const double* x = link(k);
      double* o = xi + k * S * S;
      double z = 0.0;
      for (int64_t i = 0; i < S; ++i)
        for (int64_t s = 0; s < S; ++s) z += o[i * S + s] = ak[i] * x[i * S + s] * en[s] * bn[s];
      for (int64_t j = 0; j < S * S; ++j) o[j] /= z;
    }
  }

  // H (g, gp): the tangents t_k = d α_k and τ_k = d β_k of the log forward and backward values
  // in direction (g, gp) are averages over the predecessors (successors) weighted by their
  // share; d p(z_k = s) = p (t_k + τ_k - d log Z), and the links likewise.
  // mu, xi: the marginals (as marginals() writes them) when the caller has them, else null.
  void hessian_vector(const double* g, const double* gp, double* out_u, double* out_p,
                      const double* mu = nullptr, const double* xi = nullptr) const {
    const size_t ks = static_cast<size_t>(K * S);
    std::vector<double> t(ks, 0.0), tau(ks, 0.0), w(static_cast<size_t>(S));
    std::copy(g, g + S, t.begin());
    for (int64_t k = 1; k < K; ++k) {
      const double* prev = a.data() + (k - 1) * S;
      const double* tp = t.data() + (k - 1) * S;
      const double* x = link(k - 1);
      const double* h = gp ? gp + (k - 1) * S * S : nullptr;
      double* tk = t.data() + k * S;
      for (int64_t i = 0; i < S; ++i) {  // Σ_a a(a) E(a, s) (t(a) + h(a, s))
        const double ai = prev[i], ati = prev[i] * tp[i];
        const double* row = x + i * S;
        for (int64_t s = 0; s < S; ++s) tk[s] += ati * row[s];
        if (h)
          for (int64_t s = 0; s < S; ++s) tk[s] += ai * row[s] * h[i * S + s];
      }
      const double* qk = q.data() + k * S;
      const double* gk = g + k * S;
      const double* ek = e.data() + k * S;
      for (int64_t s = 0; s < S; ++s) tk[s] = ek[s] > 0.0 ? gk[s] + tk[s] / qk[s] : 0.0;
    }
    for (int64_t k = K - 2; k >= 0; --k) {
      const double* en = e.data() + (k + 1) * S;
      const double* bn = b.data() + (k + 1) * S;
      const double* gn = g + (k + 1) * S;
      const double* taun = tau.data() + (k + 1) * S;
      std::vector<double> v(static_cast<size_t>(S));
      for (int64_t s = 0; s < S; ++s) {
        v[static_cast<size_t>(s)] = en[s] * bn[s];
        w[static_cast<size_t>(s)] =
            en[s] > 0.0 ? v[static_cast<size_t>(s)] * (gn[s] + taun[s]) : 0.0;
      }
      const double* x = link(k);
      const double* h = gp ? gp + k * S * S : nullptr;
      const double* btk = bt.data() + k * S;
      double* tk = tau.data() + k * S;
      for (int64_t i = 0; i < S; ++i) {
        const double* row = x + i * S;
        double acc = 0.0;
        for (int64_t s = 0; s < S; ++s) acc += row[s] * w[static_cast<size_t>(s)];
        if (h) {
          const double* hi = h + i * S;
          for (int64_t s = 0; s < S; ++s) acc += row[s] * v[static_cast<size_t>(s)] * hi[s];
        }
        tk[i] = acc / btk[i];
      }
    }
    std::vector<double> own_mu, own_xi;
    if (!mu || !xi) {
      own_mu.resize(ks);
      own_xi.resize(static_cast<size_t>(std::max<int64_t>(K - 1, 0) * S * S));
      marginals(own_mu.data(), own_xi.data());
      mu = own_mu.data(), xi = own_xi.data();
    }
    double dz = 0.0;  // d log Z = E[t_{K-1}]
    for (int64_t s = 0; s < S; ++s)
      dz += mu[static_cast<size_t>((K - 1) * S + s)] * t[static_cast<size_t>((K - 1) * S + s)];
    for (size_t i = 0; i < ks; ++i) out_u[i] = mu[i] > 0.0 ? mu[i] * (t[i] + tau[i] - dz) : 0.0;
    for (int64_t k = 0; k + 1 < K; ++k) {
      const double* tk = t.data() + k * S;
      const double* gn = g + (k + 1) * S;
      const double* taun = tau.data() + (k + 1) * S;
      const double* h = gp ? gp + k * S * S : nullptr;
      const double* x = xi + k * S * S;
      double* o = out_p + k * S * S;
      for (int64_t i = 0; i < S; ++i)
        for (int64_t s = 0; s < S; ++s) {
          const double p = x[i * S + s];
          o[i * S + s] =
              p > 0.0 ? p * (tk[i] + (h ? h[i * S + s] : 0.0) + gn[s] + taun[s] - dz) : 0.0;
        }
    }
  }
};

}  // namespace hop_detail
using hop_detail::LinearHop;

namespace {

// The binary chain as the hop chain of 2 states, U[k] = (0, u_k) (for the Linear engine).
std::vector<double> binary_as_hop(const double* unary, int64_t n) {
  std::vector<double> U(static_cast<size_t>(2 * n), 0.0);
  for (int64_t i = 0; i < n; ++i) U[static_cast<size_t>(2 * i + 1)] = unary[i];
  return U;
}

}  // namespace

ChainMarginals chain_marginals(const double* unary, const double* pairwise, int64_t n) {
  ChainMarginals r;
  if (n > 0) {
    const std::vector<double> U = binary_as_hop(unary, n);
    if (hop_chain_linear_ok(U.data(), pairwise, n, 2)) {
      const LinearHop h(U.data(), pairwise, n, 2);
      std::vector<double> mu(U.size());
      r.log_z = h.log_z;
      r.unary.resize(static_cast<size_t>(n));
      r.pairwise.resize(static_cast<size_t>(4 * (n - 1)));
      h.marginals(mu.data(), r.pairwise.data());
      for (int64_t i = 0; i < n; ++i)
        r.unary[static_cast<size_t>(i)] = mu[static_cast<size_t>(2 * i + 1)];
      return r;
    }
  }
  const std::vector<double> th = chain_theta(unary, pairwise, n);
  std::vector<double> marg(th.size());
  r.log_z = marginals(graph(StructKind::Chain, n), th.data(), th.size(), marg.data());
  r.unary.assign(marg.begin(), marg.begin() + n);
  r.pairwise.assign(marg.begin() + n, marg.end());
  return r;
}

void chain_marginals_backward(const double* unary, const double* pairwise, int64_t n,
                              const double* g, const double* g_pair, double* grad_unary,
                              double* grad_pairwise) {
  if (n > 0) {
    const std::vector<double> U = binary_as_hop(unary, n);
    if (hop_chain_linear_ok(U.data(), pairwise, n, 2)) {
      const std::vector<double> G = binary_as_hop(g, n);
      std::vector<double> out(U.size()), outp(static_cast<size_t>(4 * (n - 1)));
      LinearHop(U.data(), pairwise, n, 2).hessian_vector(G.data(), g_pair, out.data(), outp.data());
      for (int64_t i = 0; i < n; ++i) grad_unary[i] = out[static_cast<size_t>(2 * i + 1)];
      std::copy(outp.begin(), outp.end(), grad_pairwise);
      return;
    }
  }
  const std::vector<double> th = chain_theta(unary, pairwise, n);
  std::vector<double> dir(th.size(), 0.0), out(th.size());
  std::copy(g, g + n, dir.begin());
  if (g_pair && n > 1) std::copy(g_pair, g_pair + 4 * (n - 1), dir.begin() + n);
  hessian_vector(graph(StructKind::Chain, n), th.data(), dir.data(), th.size(), out.data());
  std::copy(out.begin(), out.begin() + n, grad_unary);
  if (n > 1) std::copy(out.begin() + n, out.end(), grad_pairwise);
}

std::vector<int> chain_argmax(const double* unary, const double* pairwise, int64_t n) {
  const std::vector<double> th = chain_theta(unary, pairwise, n);
  std::vector<int> z(static_cast<size_t>(n), 0);
  for (int32_t p : viterbi(graph(StructKind::Chain, n), th.data()))
    if (p < n) z[static_cast<size_t>(p)] = 1;
  return z;
}

TreeMarginals tree_marginals(const double* arcs, int64_t n, TreeEngine engine) {
  TreeMarginals r;
  r.arcs.resize(static_cast<size_t>(n * n));
  if (engine != TreeEngine::LogSpace &&
      eisner_linear<double>(arcs, nullptr, n, &r.log_z, r.arcs.data(), nullptr))
    return r;
  r.log_z = marginals(graph(StructKind::Tree, n), arcs, r.arcs.size(), r.arcs.data());
  return r;
}

void tree_marginals_backward(const double* arcs, int64_t n, const double* g, double* grad,
                             TreeEngine engine) {
  if (engine != TreeEngine::LogSpace) {
    double log_z = 0.0;
    std::vector<double> marg(static_cast<size_t>(n * n));
    if (eisner_linear<Dual>(arcs, g, n, &log_z, marg.data(), grad)) return;
  }
  hessian_vector(graph(StructKind::Tree, n), arcs, g, static_cast<size_t>(n * n), grad);
}

bool tree_linear_ok(const double* arcs, int64_t n) {
  double log_z = 0.0;
  std::vector<double> marg(static_cast<size_t>(n * n));
  return eisner_linear<double>(arcs, nullptr, n, &log_z, marg.data(), nullptr);
}

std::vector<int64_t> tree_argmax(const double* arcs, int64_t n) {
  std::vector<int64_t> heads(static_cast<size_t>(n), 0);
  for (int32_t p : viterbi(graph(StructKind::Tree, n), arcs)) {
    const int64_t h = p / n, d = p % n;
    heads[static_cast<size_t>(d)] = h == d ? 0 : h + 1;
  }
  return heads;
}

bool hop_chain_linear_ok(const double* unary, const double* pairwise, int64_t K, int64_t S) {
  if (K < 1 || S < 1) return false;
  for (int64_t k = 0; k < K; ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = kNegInfD;
    for (int64_t s = 0; s < S; ++s) {
      const double x = unary[k * S + s];
      if (x == kNegInfD) continue;
      if (!std::isfinite(x)) return false;
      lo = std::min(lo, x), hi = std::max(hi, x);
    }
    if (hi == kNegInfD || hi - lo > kHopLinearRange) return false;
  }
  for (int64_t k = 0; k + 1 < K; ++k) {
    const double* w = pairwise + k * S * S;
    double lo = w[0], hi = w[0];
    for (int64_t i = 0; i < S * S; ++i) {
      if (!std::isfinite(w[i])) return false;
      lo = std::min(lo, w[i]), hi = std::max(hi, w[i]);
    }
    if (hi - lo > kHopLinearRange) return false;
  }
  return true;
}

struct HopChainSolution::State {
  int64_t K = 0, S = 0;
  std::unique_ptr<LinearHop> linear;  // the Linear engine's passes, or
  std::vector<double> theta;          // the potentials for the log-space engine
  HopChainMarginals m;
};

HopChainSolution::HopChainSolution(const double* unary, const double* pairwise, int64_t K,
                                   int64_t S, HopEngine engine) {
  auto st = std::make_shared<State>();
  st->K = K, st->S = S;
  const size_t nu = static_cast<size_t>(K * S),
               np = static_cast<size_t>(std::max<int64_t>(K - 1, 0) * S * S);
  if (engine != HopEngine::LogSpace && hop_chain_linear_ok(unary, pairwise, K, S)) {
    st->linear = std::make_unique<LinearHop>(unary, pairwise, K, S);
    st->m.log_z = st->linear->log_z;
    st->m.unary.resize(nu);
    st->m.pairwise.resize(np);
    st->linear->marginals(st->m.unary.data(), st->m.pairwise.data());
  } else {
    st->theta.assign(unary, unary + nu);
    st->theta.insert(st->theta.end(), pairwise, pairwise + np);
    std::vector<double> marg(st->theta.size());
    st->m.log_z =
        attention::marginals(hop_graph(K, S), st->theta.data(), st->theta.size(), marg.data());
    st->m.unary.assign(marg.begin(), marg.begin() + static_cast<std::ptrdiff_t>(nu));
    st->m.pairwise.assign(marg.begin() + static_cast<std::ptrdiff_t>(nu), marg.end());
  }
  s_ = std::move(st);
}

const HopChainMarginals& HopChainSolution::marginals() const { return s_->m; }

void HopChainSolution::backward(const double* g, const double* g_pair, double* grad_unary,
                                double* grad_pairwise) const {
  const State& st = *s_;
  if (st.linear) {
    st.linear->hessian_vector(g, g_pair, grad_unary, grad_pairwise, st.m.unary.data(),
                              st.m.pairwise.data());
    return;
  }
  const size_t nu = static_cast<size_t>(st.K * st.S), np = st.theta.size() - nu;
  std::vector<double> dir(g, g + nu), out(nu + np);
  if (g_pair)
    dir.insert(dir.end(), g_pair, g_pair + np);
  else
    dir.resize(nu + np, 0.0);
  hessian_vector(hop_graph(st.K, st.S), st.theta.data(), dir.data(), st.theta.size(), out.data());
  std::copy(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(nu), grad_unary);
  std::copy(out.begin() + static_cast<std::ptrdiff_t>(nu), out.end(), grad_pairwise);
}

HopChainMarginals hop_chain_marginals(const double* unary, const double* pairwise, int64_t K,
                                      int64_t S, HopEngine engine) {
  return HopChainSolution(unary, pairwise, K, S, engine).marginals();
}

void hop_chain_marginals_backward(const double* unary, const double* pairwise, int64_t K, int64_t S,
                                  const double* g, const double* g_pair, double* grad_unary,
                                  double* grad_pairwise, HopEngine engine) {
  HopChainSolution(unary, pairwise, K, S, engine).backward(g, g_pair, grad_unary, grad_pairwise);
}

std::vector<int64_t> hop_chain_argmax(const double* unary, const double* pairwise, int64_t K,
                                      int64_t S) {
  const size_t nu = static_cast<size_t>(K * S),
               np = static_cast<size_t>(std::max<int64_t>(K - 1, 0) * S * S);
  std::vector<double> th(unary, unary + nu);
  th.insert(th.end(), pairwise, pairwise + np);
  std::vector<int64_t> z(static_cast<size_t>(K), 0);
  for (int32_t p : viterbi(hop_graph(K, S), th.data()))
    if (static_cast<size_t>(p) < nu) z[static_cast<size_t>(p / S)] = p % S;
  return z;
}

// ---- batches

StructKind parse_struct_kind(const std::string& name) {
  return parse_choice<StructKind>("structure", name,
                                  {{"chain", StructKind::Chain}, {"tree", StructKind::Tree}});
}

bool StructInput::batched() const {
  return unary && unary->rank() == (kind == StructKind::Chain ? 2 : 3);
}
int64_t StructInput::batch() const { return batched() ? unary->dim(0) : 1; }
int64_t StructInput::size() const { return unary->dim(-1); }
int64_t StructInput::length(int64_t b) const {
  return lengths.empty() ? size() : lengths[static_cast<size_t>(b)];
}

void StructInput::check() const {
  if (!unary) throw Error("structured attention: no potentials");
  const Shape& us = unary->shape();
  const bool chain = kind == StructKind::Chain;
  if (chain ? (us.size() != 1 && us.size() != 2)
            : ((us.size() != 2 && us.size() != 3) || us[us.size() - 1] != us[us.size() - 2]))
    throw ShapeError(std::string(chain ? "unary potentials" : "arc potentials") + " have shape " +
                     shape_str(us) + " but need " +
                     (chain ? "[n] or [B, n]" : "[n, n] or [B, n, n]"));
  const int64_t n = size(), B = batch();
  if (!chain && n > kMaxTreeSize)
    throw DataError("a tree of " + std::to_string(n) + " inputs: at most " +
                    std::to_string(kMaxTreeSize) + " (the chart is held in memory, O(n^3))");
  if (chain && pairwise) {
    const Shape& ps = pairwise->shape();
    const Shape per{std::max<int64_t>(n - 1, 0), 2, 2};
    const bool ok = ps == Shape{2, 2} || ps == per || (batched() && ps == Shape{B, per[0], 2, 2});
    if (!ok)
      throw ShapeError("pairwise potentials have shape " + shape_str(ps) + " but need [2, 2], " +
                       shape_str(per) + (batched() ? " or " + shape_str({B, per[0], 2, 2}) : "") +
                       " for unary " + shape_str(us));
  }
  if (!lengths.empty()) {
    if (static_cast<int64_t>(lengths.size()) != B)
      throw ShapeError(std::to_string(lengths.size()) + " lengths for a batch of " +
                       std::to_string(B));
    for (size_t b = 0; b < lengths.size(); ++b)
      if (lengths[b] < 0 || lengths[b] > n)
        throw DataError("length " + std::to_string(lengths[b]) + " of item " + std::to_string(b) +
                        " is outside [0, " + std::to_string(n) + "]");
  }
  for (const Tensor* t : {unary, pairwise}) {
    if (!t) continue;
    for (int64_t i = 0; i < t->size(); ++i) {
      const float x = (*t)[i];
      if (std::isnan(x) || x == std::numeric_limits<float>::infinity())
        throw DataError(std::string(t == unary ? (chain ? "unary" : "arc") : "pairwise") +
                        " potentials: " + (std::isnan(x) ? "NaN" : "+inf") + " at flat index " +
                        std::to_string(i));
    }
  }
}

std::vector<double> StructInput::item_unary(int64_t b) const {
  const int64_t per = kind == StructKind::Chain ? size() : size() * size();
  const float* p = unary->data() + (batched() ? b * per : 0);
  return std::vector<double>(p, p + per);
}

std::vector<double> StructInput::item_pairwise(int64_t b) const {
  const int64_t links = std::max<int64_t>(size() - 1, 0);
  std::vector<double> out(static_cast<size_t>(links * 4), 0.0);
  if (!pairwise) return out;
  const float* p = pairwise->data();
  if (pairwise->rank() == 2) {
    for (int64_t i = 0; i < links; ++i) std::copy(p, p + 4, out.begin() + i * 4);
    return out;
  }
  if (pairwise->rank() == 4) p += b * links * 4;
  std::copy(p, p + links * 4, out.begin());
  return out;
}

StructOutput structured_attention(const StructInput& in, bool argmax) {
  in.check();
  const bool chain = in.kind == StructKind::Chain;
  const int64_t B = in.batch(), n = in.size();
  const int64_t per = chain ? n : n * n;
  StructOutput out;
  const Shape ms = chain ? Shape{B, n} : in.unary->shape();
  out.marginals = Tensor(ms);
  out.log_z = Tensor(Shape{B});
  if (argmax) {
    out.argmax = chain ? Tensor(ms) : Tensor(in.batched() ? Shape{B, n} : Shape{n}, -1.0f);
    if (!chain) out.tree = Tensor(ms);
  }
  parallel_for(B, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t L = in.length(b);
      const std::vector<double> u = in.item_unary(b);
      float* mo = out.marginals.data() + b * per;
      if (chain) {
        const std::vector<double> pw = in.item_pairwise(b);
        const ChainMarginals r = chain_marginals(u.data(), pw.data(), L);
        out.log_z[b] = static_cast<float>(r.log_z);
        for (int64_t i = 0; i < L; ++i) mo[i] = static_cast<float>(r.unary[static_cast<size_t>(i)]);
        if (argmax) {
          const std::vector<int> z = chain_argmax(u.data(), pw.data(), L);
          for (int64_t i = 0; i < L; ++i)
            out.argmax[b * n + i] = static_cast<float>(z[static_cast<size_t>(i)]);
        }
        continue;
      }
      // The leading L x L block of the item's arcs.
      std::vector<double> a(static_cast<size_t>(L * L));
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j)
          a[static_cast<size_t>(i * L + j)] = u[static_cast<size_t>(i * n + j)];
      const TreeMarginals r = tree_marginals(a.data(), L);
      out.log_z[b] = static_cast<float>(r.log_z);
      for (int64_t i = 0; i < L; ++i)
        for (int64_t j = 0; j < L; ++j)
          mo[i * n + j] = static_cast<float>(r.arcs[static_cast<size_t>(i * L + j)]);
      if (argmax) {
        const std::vector<int64_t> h = tree_argmax(a.data(), L);
        for (int64_t j = 0; j < L; ++j) {
          const int64_t hj = h[static_cast<size_t>(j)];
          out.argmax[b * n + j] = static_cast<float>(hj);
          out.tree[b * per + (hj == 0 ? j : hj - 1) * n + j] = 1.0f;
        }
      }
    }
  });
  if (!in.batched()) out.log_z.reshape({1});
  return out;
}

std::vector<std::pair<std::string, Tensor>> structured_arrays(StructKind kind, StructOutput out,
                                                              const Tensor* values, bool batched) {
  std::vector<std::pair<std::string, Tensor>> arrays;
  Tensor context;
  if (values) context = structured_context(kind, out.marginals, *values, batched);
  arrays.emplace_back("marginals", std::move(out.marginals));
  arrays.emplace_back("log-partition", std::move(out.log_z));
  if (kind == StructKind::Chain) {
    arrays.emplace_back("argmax", std::move(out.argmax));
  } else {
    arrays.emplace_back("argmax", std::move(out.tree));
    arrays.emplace_back("heads", std::move(out.argmax));
  }
  if (values) arrays.emplace_back("context", std::move(context));
  return arrays;
}

Tensor structured_context(StructKind kind, const Tensor& marginals, const Tensor& values,
                          bool batched) {
  const bool chain = kind == StructKind::Chain;
  const int64_t B = batched ? marginals.dim(0) : 1;
  const int64_t n = marginals.dim(-1);
  const bool vb = values.rank() == 3;
  if ((values.rank() != 2 && !vb) || values.dim(-2) != n || (vb && values.dim(0) != B) ||
      (vb && !batched))
    throw ShapeError("values have shape " + shape_str(values.shape()) + " but need [" +
                     std::to_string(n) + ", d]" +
                     (batched ? " or [" + std::to_string(B) + ", " + std::to_string(n) + ", d]"
                              : std::string()) +
                     " for marginals " + shape_str(marginals.shape()));
  const int64_t d = values.dim(-1);
  const int64_t rows = chain ? 1 : n;
  Tensor out(batched ? Shape{B, rows, d} : Shape{rows, d});
  for (int64_t b = 0; b < B; ++b) {
    const float* v = values.data() + (vb ? b * n * d : 0);
    const float* m = marginals.data() + b * (chain ? n : n * n);
    float* o = out.data() + b * rows * d;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t k = 0; k < d; ++k) {
        double s = 0.0;
        for (int64_t j = 0; j < n; ++j)
          if (chain || j != i) s += static_cast<double>(chain ? m[j] : m[i * n + j]) * v[j * d + k];
        o[i * d + k] = static_cast<float>(s);
      }
  }
  return out;
}

}  // namespace attnkit::attention

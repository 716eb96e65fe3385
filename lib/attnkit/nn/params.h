// The parameter registry: named ad::Parameters with stable addresses, created by layers in
// their constructors ("encoder.l0.W_ih"), counted per layer, saved and loaded as .npz
// (one array per parameter, named by its full name), and handed to optimisers.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/autodiff/tape.h"
#include "attnkit/core/rng.h"
#include "attnkit/core/tensor.h"

namespace attnkit::nn {

class ParamStore {
 public:
  ParamStore() = default;
  ParamStore(const ParamStore&) = delete;
  ParamStore& operator=(const ParamStore&) = delete;

  // A new parameter; a name already taken is an Error.
  ad::Parameter& add(const std::string& name, Tensor value);
  // The parameter of that name; Error naming it (and the closest names) otherwise.
  ad::Parameter& get(const std::string& name);
  bool contains(const std::string& name) const { return index_.count(name) != 0; }

  // Every parameter, in creation order.
  const std::vector<ad::Parameter*>& params() const { return list_; }
  // Parameters whose name is `prefix` or starts with `prefix.`.
  std::vector<ad::Parameter*> params(const std::string& prefix) const;
  // Element counts: all, or of the parameters under a prefix.
  int64_t count() const;
  int64_t count(const std::string& prefix) const;
  // Element counts per layer (a parameter's name up to its last '.'), in creation order.
  std::vector<std::pair<std::string, int64_t>> layer_counts() const;

  void zero_grad();

  // Writes every parameter to an .npz archive (atomically).
  void save(const std::string& path) const;
  // Reads the values of every parameter from an .npz archive. A missing array, a shape that
  // differs or an array that names no parameter is a DataError naming it; nothing is changed
  // unless everything fits.
  void load(const std::string& path);

 private:
  std::deque<ad::Parameter> store_;
  std::vector<ad::Parameter*> list_;
  std::map<std::string, ad::Parameter*> index_;
};

// Element-wise work over many parameters, split for threads: blocks of at most `block`
// elements that cover every parameter in order (one parameter, a contiguous range of it).
struct ParamBlock {
  size_t k;            // index into the parameter list
  int64_t begin, end;  // elements [begin, end) of its value and gradient
};
std::vector<ParamBlock> param_blocks(const std::vector<ad::Parameter*>& params,
                                     int64_t block = int64_t{1} << 15);
// Models with this many parameter elements or more update them on several threads: below it,
// starting a thread (tens of microseconds) costs more than it saves. With the bar at 2^18,
// RAM's optimiser step ran on one thread: 1 ms of its 7 ms step at 2 threads (bench/threads.sh's
// trace, doc/scaling.md).
constexpr int64_t kParallelParams = int64_t{1} << 16;
// Calls fn(k, begin, end) once for every block of param_blocks(params, 2^12), on up to
// max_threads() threads (core/parallel.h) when the parameters have kParallelParams elements or
// more, else on the caller's thread. Each element is visited once, by one thread: for
// element-wise work the result does not depend on the thread count.
void for_param_blocks(const std::vector<ad::Parameter*>& params,
                      const std::function<void(size_t k, int64_t begin, int64_t end)>& fn);

// Initialisers (drawn in row-major order from rng).
void init_uniform(Tensor& t, Rng& rng, float bound);  // U(-bound, bound)
void init_normal(Tensor& t, Rng& rng, float std);

}  // namespace attnkit::nn

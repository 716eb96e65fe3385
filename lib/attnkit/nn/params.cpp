#include "attnkit/nn/params.h"

#include <algorithm>

#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::nn {

namespace {
bool under(const std::string& name, const std::string& prefix) {
  return prefix.empty() || name == prefix ||
         (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
          name[prefix.size()] == '.');
}
}  // namespace

ad::Parameter& ParamStore::add(const std::string& name, Tensor value) {
  if (name.empty()) throw Error("a parameter needs a name");
  if (index_.count(name)) throw Error("parameter '" + name + "' is defined twice");
  store_.emplace_back(name, std::move(value));
  ad::Parameter* p = &store_.back();
  list_.push_back(p);
  index_.emplace(name, p);
  return *p;
}

ad::Parameter& ParamStore::get(const std::string& name) {
  auto it = index_.find(name);
  if (it == index_.end()) throw Error("no parameter named '" + name + "'");
  return *it->second;
}

std::vector<ad::Parameter*> ParamStore::params(const std::string& prefix) const {
  std::vector<ad::Parameter*> v;
  for (ad::Parameter* p : list_)
    if (under(p->name, prefix)) v.push_back(p);
  return v;
}

int64_t ParamStore::count() const { return count(""); }

int64_t ParamStore::count(const std::string& prefix) const {
  int64_t n = 0;
  for (ad::Parameter* p : params(prefix)) n += p->size();
  return n;
}

std::vector<std::pair<std::string, int64_t>> ParamStore::layer_counts() const {
  std::vector<std::pair<std::string, int64_t>> v;
  for (ad::Parameter* p : list_) {
    const size_t dot = p->name.rfind('.');
    const std::string layer = dot == std::string::npos ? std::string() : p->name.substr(0, dot);
    auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.first == layer; });
    if (it == v.end())
      v.emplace_back(layer, p->size());
    else
      it->second += p->size();
  }
  return v;
}

void ParamStore::zero_grad() {
  for (ad::Parameter* p : list_) std::fill(p->grad.values().begin(), p->grad.values().end(), 0.0f);
}

void ParamStore::save(const std::string& path) const {
  std::vector<std::pair<std::string, const Tensor*>> arrays;
  for (ad::Parameter* p : list_) arrays.emplace_back(p->name, &p->value);
  io::write_npz(path, arrays);
}

void ParamStore::load(const std::string& path) {
  std::map<std::string, Tensor> arrays = io::read_npz(path);
  for (ad::Parameter* p : list_) {
    auto it = arrays.find(p->name);
    if (it == arrays.end()) throw DataError("no array for parameter '" + p->name + "'", path);
    if (it->second.shape() != p->value.shape())
      throw DataError("parameter '" + p->name + "' has shape " + shape_str(it->second.shape()) +
                          " in the file but the model needs " + shape_str(p->value.shape()),
                      path);
  }
  for (const auto& [name, t] : arrays)
    if (!index_.count(name))
      throw DataError("array '" + name + "' names no parameter of the model", path);
  for (ad::Parameter* p : list_) p->value = std::move(arrays[p->name]);
}

std::vector<ParamBlock> param_blocks(const std::vector<ad::Parameter*>& params, int64_t block) {
  if (block < 1) throw UsageError("parameter blocks need at least one element");
  std::vector<ParamBlock> out;
  for (size_t k = 0; k < params.size(); ++k)
    for (int64_t b = 0, n = params[k]->size(); b < n; b += block)
      out.push_back({k, b, std::min(n, b + block)});
  return out;
}

void for_param_blocks(const std::vector<ad::Parameter*>& params,
                      const std::function<void(size_t, int64_t, int64_t)>& fn) {
  // Blocks of 2^12: the threads' shares (contiguous runs of blocks) then differ by less than
  // a block, where 2^15 left RAM's split uneven. Element-wise work: the same bits either way.
  const std::vector<ParamBlock> blocks = param_blocks(params, int64_t{1} << 12);
  int64_t total = 0;
  for (const ad::Parameter* p : params) total += p->size();
  const int threads = total >= kParallelParams ? 0 : 1;
  parallel_for(
      static_cast<int64_t>(blocks.size()),
      [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          const ParamBlock& b = blocks[static_cast<size_t>(i)];
          fn(b.k, b.begin, b.end);
        }
      },
      threads);
}

void init_uniform(Tensor& t, Rng& rng, float bound) {
  for (int64_t i = 0; i < t.size(); ++i) t[i] = bound * (2.0f * rng.uniform() - 1.0f);
}

void init_normal(Tensor& t, Rng& rng, float std) {
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(std * rng.normal());
}

}  // namespace attnkit::nn

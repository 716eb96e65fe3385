#include "attnkit/data/batch.h"

#include <algorithm>
#include <numeric>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"

namespace attnkit::data {

namespace {

template <class T>
void shuffle(std::vector<T>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

TokenMatrix pad(const std::vector<const std::vector<int32_t>*>& seqs, std::vector<int32_t>& len) {
  TokenMatrix m;
  m.rows = static_cast<int64_t>(seqs.size());
  for (const auto* s : seqs) m.cols = std::max<int64_t>(m.cols, static_cast<int64_t>(s->size()));
  m.ids.assign(static_cast<size_t>(m.rows * m.cols), Vocab::kPad);
  len.clear();
  for (int64_t i = 0; i < m.rows; ++i) {
    const auto& s = *seqs[static_cast<size_t>(i)];
    std::copy(s.begin(), s.end(), m.ids.begin() + i * m.cols);
    len.push_back(static_cast<int32_t>(s.size()));
  }
  return m;
}

}  // namespace

Tensor TokenMatrix::to_tensor() const {
  std::vector<float> v(ids.begin(), ids.end());
  return Tensor(Shape{rows, cols}, std::move(v));
}

Batch make_batch(const std::vector<EncodedPair>& data, const std::vector<size_t>& rows) {
  std::vector<const std::vector<int32_t>*> src, tgt;
  for (size_t r : rows) {
    if (r >= data.size())
      throw DataError("batch row " + std::to_string(r) + " outside the data of " +
                      std::to_string(data.size()) + " pairs");
    src.push_back(&data[r].source);
    tgt.push_back(&data[r].target);
  }
  Batch b;
  b.source = pad(src, b.source_len);
  b.target = pad(tgt, b.target_len);
  b.index = rows;
  return b;
}

std::vector<Batch> make_batches(const std::vector<EncodedPair>& data, const BatchOptions& opt,
                                uint64_t epoch) {
  if (opt.batch_size < 1) throw DataError("the batch size must be at least 1");
  if (opt.pool_batches < 1) throw DataError("the pool size must be at least 1 batch");
  std::vector<size_t> order(data.size());
  std::iota(order.begin(), order.end(), size_t{0});
  Rng rng(opt.seed + epoch * 0x9E3779B97F4A7C15ull);
  if (opt.shuffle) shuffle(order, rng);
  const size_t bs = static_cast<size_t>(opt.batch_size);
  const size_t pool = bs * static_cast<size_t>(opt.pool_batches);
  std::vector<std::vector<size_t>> groups;
  for (size_t start = 0; start < order.size(); start += pool) {
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(start);
    const auto last =
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + pool));
    std::stable_sort(first, last, [&](size_t a, size_t b) {
      const size_t la = data[a].source.size(), lb = data[b].source.size();
      if (la != lb) return la > lb;
      const size_t ta = data[a].target.size(), tb = data[b].target.size();
      if (ta != tb) return ta > tb;
      return a < b;
    });
    for (auto it = first; it < last;
         it += static_cast<std::ptrdiff_t>(std::min<size_t>(bs, static_cast<size_t>(last - it))))
      groups.emplace_back(it, it + static_cast<std::ptrdiff_t>(
                                       std::min<size_t>(bs, static_cast<size_t>(last - it))));
  }
  if (opt.shuffle) shuffle(groups, rng);
  std::vector<Batch> out;
  out.reserve(groups.size());
  for (const auto& g : groups) out.push_back(make_batch(data, g));
  return out;
}

}  // namespace attnkit::data

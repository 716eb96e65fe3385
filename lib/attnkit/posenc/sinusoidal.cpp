#include "attnkit/posenc/sinusoidal.h"

#include <cmath>
#include <vector>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit::posenc {

Layout parse_layout(const std::string& name) {
  return parse_choice<Layout>("layout", name,
                              {
                                  {"interleaved", Layout::Interleaved},
                                  {"split", Layout::Split},
                              });
}

const char* layout_name(Layout layout) { return layout == Layout::Split ? "split" : "interleaved"; }

void validate(int64_t length, int64_t dim, const SinusoidalOptions& opt) {
  if (length < 0) throw UsageError("length must be 0 or more, not " + std::to_string(length));
  if (dim < 1) throw UsageError("dimension must be 1 or more, not " + std::to_string(dim));
  if (!(opt.base > 0.0) || !std::isfinite(opt.base))
    throw UsageError("base must be a finite number above 0");
  if (opt.offset < 0)
    throw UsageError("offset must be 0 or more, not " + std::to_string(opt.offset));
  if (opt.offset > kMaxPosition - length + 1)
    throw UsageError("positions beyond 2^52 are not supported (offset " +
                     std::to_string(opt.offset) + ", length " + std::to_string(length) + ")");
}

namespace {

// Column j of the table: its frequency index i and whether it holds a sine.
struct Column {
  int64_t pair;
  bool sine;
};

std::vector<Column> columns(int64_t dim, Layout layout) {
  std::vector<Column> cols(static_cast<size_t>(dim));
  const int64_t n_sin = (dim + 1) / 2;
  for (int64_t j = 0; j < dim; ++j) {
    if (layout == Layout::Interleaved)
      cols[static_cast<size_t>(j)] = {j / 2, j % 2 == 0};
    else
      cols[static_cast<size_t>(j)] = j < n_sin ? Column{j, true} : Column{j - n_sin, false};
  }
  return cols;
}

// Fills rows [0, length) of a row-major length x dim buffer.
void fill(float* out, int64_t length, int64_t dim, const SinusoidalOptions& opt) {
  const std::vector<Column> cols = columns(dim, opt.layout);
  const int64_t n_pairs = (dim + 1) / 2;
  std::vector<double> inv_freq(static_cast<size_t>(n_pairs));
  for (int64_t i = 0; i < n_pairs; ++i)
    inv_freq[static_cast<size_t>(i)] =
        std::pow(opt.base, -2.0 * static_cast<double>(i) / static_cast<double>(dim));
  for (int64_t r = 0; r < length; ++r) {
    const double p = static_cast<double>(opt.offset + r);
    float* row = out + r * dim;
    for (int64_t j = 0; j < dim; ++j) {
      const Column c = cols[static_cast<size_t>(j)];
      const double angle = p * inv_freq[static_cast<size_t>(c.pair)];
      const double v = c.sine ? std::sin(angle) : std::cos(angle);
      row[j] = static_cast<float>(v);
    }
  }
}

}  // namespace

Tensor sinusoidal(int64_t length, int64_t dim, const SinusoidalOptions& opt) {
  validate(length, dim, opt);
  Tensor t(Shape{length, dim});
  fill(t.data(), length, dim, opt);
  return t;
}

void add_sinusoidal(Tensor& x, const SinusoidalOptions& opt) {
  if (x.rank() != 2 && x.rank() != 3)
    throw ShapeError("positional encoding is added to an L x D matrix or a B x L x D batch, not " +
                     shape_str(x.shape()));
  const int64_t length = x.dim(-2), dim = x.dim(-1);
  if (dim < 1) throw ShapeError("cannot add a positional encoding to " + shape_str(x.shape()));
  const Tensor pe = sinusoidal(length, dim, opt);  // one table, added to every item
  const int64_t n = pe.size();
  float* px = x.data();
  for (int64_t k = 0; k < x.size(); ++k)
    px[k] = static_cast<float>(static_cast<double>(px[k]) + static_cast<double>(pe[k % n]));
}

}  // namespace attnkit::posenc

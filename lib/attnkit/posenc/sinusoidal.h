// Sinusoidal positional encoding (Vaswani et al., 2017, section 3.5): a fixed L x D table
// whose row p encodes position p as sines and cosines of geometrically spaced frequencies.
//
// For column pair i (0 <= i < ceil(D/2)) the angle at position p is
//     a(p, i) = p / base^(2i/D)
// and the interleaved layout (the textbook's) puts sin a(p, i) in column 2i and cos a(p, i)
// in column 2i+1; an odd D ends with a sine column. The split layout puts every sine first
// (columns 0 .. ceil(D/2)-1) and then every cosine (floor(D/2) columns): the same values,
// columns permuted.
//
// Angles and their sines are evaluated in double and stored as float, so that rows for
// positions in the millions are accurate to float rounding (a float angle would be off by
// ~0.06 rad at p = 10^6).
#pragma once

#include <cstdint>
#include <string>

#include "attnkit/core/tensor.h"

namespace attnkit::posenc {

enum class Layout { Interleaved, Split };

// "interleaved" / "split"; anything else is a ChoiceError (core/choice.h).
Layout parse_layout(const std::string& name);
const char* layout_name(Layout layout);

struct SinusoidalOptions {
  double base = 10000.0;  // wavelength scale; > 0 and finite
  int64_t offset = 0;     // position of the first row (rows are offset .. offset+L-1)
  Layout layout = Layout::Interleaved;
};

// The largest position accepted (offset + length - 1): positions stay exact in double.
constexpr int64_t kMaxPosition = int64_t{1} << 52;

// Throws UsageError unless length >= 0, dim >= 1, base > 0 and finite, offset >= 0 and
// offset + length - 1 <= kMaxPosition.
void validate(int64_t length, int64_t dim, const SinusoidalOptions& opt);

// The L x D encoding of positions offset .. offset+L-1 (shape [L, D]; L = 0 gives [0, D]).
Tensor sinusoidal(int64_t length, int64_t dim, const SinusoidalOptions& opt = {});

// Adds the encoding to x in place. x is [L, D] (row p gets the encoding of position
// offset+p) or a batch [B, L, D], where every item gets the same L x D table added.
// Any other rank is a ShapeError naming x's shape.
void add_sinusoidal(Tensor& x, const SinusoidalOptions& opt = {});

}  // namespace attnkit::posenc

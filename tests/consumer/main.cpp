// Links the installed library: a 2 x 2 product through the BLAS boundary, printed as text.
#include <attnkit/core/blas.h>
#include <attnkit/core/tensor.h>
#include <attnkit/io/tensor_io.h>

#include <iostream>

int main() {
  attnkit::Tensor a({2, 2}, std::vector<float>{1, 2, 3, 4});
  attnkit::Tensor c({2, 2});
  attnkit::gemm(attnkit::Trans::No, attnkit::Trans::Yes, 1.0f, attnkit::mat(a), attnkit::mat(a),
                0.0f, attnkit::mat(c));
  std::cout << attnkit::io::format_text(c);
  return 0;
}

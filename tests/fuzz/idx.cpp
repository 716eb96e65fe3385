// IDX (MNIST's format), plain and gzip-compressed: header, sizes, inflation, data.
#include "attnkit/io/tensor_io.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET(attnkit::io::parse_idx(bytes, "fuzz.idx"))

// .npy: header (versions, dtypes, shapes, orders) and data.
#include "attnkit/io/tensor_io.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET(attnkit::io::parse_npy(bytes, "fuzz.npy"))

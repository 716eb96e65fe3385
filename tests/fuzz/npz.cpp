// .npz: the zip container (stored and deflated members) and each member's .npy.
#include "attnkit/io/tensor_io.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET(attnkit::io::parse_npz(bytes, "fuzz.npz"))

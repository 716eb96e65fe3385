// Any tensor input as the tools read it: format detection, text matrices (and batches),
// .npy, .npz members; masks and key-padding files go through the same reader.
#include "attnkit/io/tensor_io.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET({
  attnkit::io::parse_tensor(bytes, "fuzz", "", nullptr);
  attnkit::io::parse_text(bytes, "fuzz.txt");
})

// Pictures: PGM (P2, P5; 8 and 16 bits) and PNG through libpng, by content detection as every
// tool reads them: headers, the sizes they promise, samples, inflation.
#include "attnkit/io/tensor_io.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET(attnkit::io::parse_tensor(bytes, "fuzz.image", ""))

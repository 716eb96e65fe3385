// PBM pictures (P1, P4, several images in one file).
#include "attnkit/io/pbm.h"

#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET(attnkit::io::parse_pbm(bytes, "fuzz.pbm"))

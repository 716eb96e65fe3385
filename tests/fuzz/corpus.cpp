// Parallel corpora: SOURCE<TAB>TARGET lines, and two aligned files (the bytes cut in two).
#include "attnkit/data/corpus.h"

#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET({
  attnkit::data::parse_tsv(bytes, "fuzz.tsv");
  const size_t half = bytes.size() / 2;
  attnkit::data::parse_aligned(bytes.substr(0, half), "fuzz.src", bytes.substr(half), "fuzz.tgt");
})

// Parallel corpora: SOURCE<TAB>TARGET lines, and two aligned files (the bytes cut in two);
// the same lines as the NTM's symbol pairs, and the episodes of the first few.
#include "attnkit/data/corpus.h"

#include "attnkit/memory/ntm/task.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET({
  attnkit::data::parse_tsv(bytes, "fuzz.tsv");
  try {
    const attnkit::memory::NtmPairs p = attnkit::memory::parse_ntm_pairs(bytes, "fuzz.tsv");
    for (int64_t i = 0; i < p.count() && i < 4; ++i) {
      const size_t steps = p.sources[i].size() + p.targets[i].size() + 2;
      if (steps * static_cast<size_t>(p.width()) <= (1u << 20)) p.episode(i);  // memory bound
    }
  } catch (const attnkit::Error&) {
  }
  const size_t half = bytes.size() / 2;
  attnkit::data::parse_aligned(bytes.substr(0, half), "fuzz.src", bytes.substr(half), "fuzz.tgt");
})

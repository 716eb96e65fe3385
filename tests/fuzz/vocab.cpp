// Vocabulary files (TOKEN<TAB>COUNT lines in id order).
#include "attnkit/data/vocab.h"

#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET(attnkit::data::Vocab::parse(bytes, "fuzz.vocab"))

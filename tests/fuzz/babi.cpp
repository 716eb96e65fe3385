// bAbI story files, with and without unanswered questions, then their encoding for memn2n.
#include "attnkit/data/babi.h"

#include "attnkit/memory/memn2n/train.h"
#include "fuzz_common.h"
ATTNKIT_FUZZ_TARGET({
  attnkit::data::parse_babi(bytes, "qa1_fuzz_test.txt", 1, true);
  const auto ex = attnkit::data::parse_babi(bytes, "qa1_fuzz_train.txt", 1, false);
  const attnkit::data::Vocab v = attnkit::memory::babi_vocab(ex);
  attnkit::memory::encode_babi(ex, v, 50);
})

// Model files and checkpoints. The header's checksum stops nearly every mutation at the door,
// so each input is parsed twice: as it is (the header checks), then with the right checksum
// and length written into it, so that the mutations reach the metadata archive and the tensor
// records behind it. (That second parse found, within 2,644 runs, that Boost's archive reader
// trusted its counts and string lengths: fixed by nn's bounded archive reader, issue 20 bug 2.)
// A file that parses then goes to its kind's loader (every family's load_*: the stored
// configuration read and checked against the tensors, the net built, the parameters read),
// so that a configuration that promises more than the tensors hold is caught there (issue 36,
// item 7); the seeds are tiny models of every kind but han (corpus/model_file/tiny-*.akm).
#include "attnkit/nn/model_file.h"

#include <unistd.h>

#include <fstream>

#include "attnkit/memory/memn2n/file.h"
#include "attnkit/memory/ntm/train.h"
#include "attnkit/memory/stackmem/model.h"
#include "attnkit/models/bert/model.h"
#include "attnkit/models/caption/model.h"
#include "attnkit/models/han/file.h"
#include "attnkit/models/imgclass/model.h"
#include "attnkit/models/ptrnet/model.h"
#include "attnkit/models/ram/model.h"
#include "attnkit/models/seq2seq/file.h"
#include "attnkit/models/snail/bandit.h"
#include "attnkit/models/snail/fewshot.h"
#include "fuzz_common.h"

namespace {
std::string resigned(std::string_view bytes) {
  std::string b(bytes);
  if (b.size() < 24) return b;
  const uint32_t crc = attnkit::nn::crc32(b.data() + 24, b.size() - 24);
  for (int i = 0; i < 4; ++i) b[12 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  const uint64_t len = b.size() - 24;
  for (int i = 0; i < 8; ++i) b[16 + i] = static_cast<char>((len >> (8 * i)) & 0xff);
  return b;
}

// The loaders read a path: the bytes go to one file of this process, rewritten each run.
const std::string& scratch_path() {
  static const std::string p = "/tmp/attnkit-fuzz-model-" + std::to_string(getpid()) + ".akm";
  return p;
}

void load_kind(const std::string& kind, const std::string& bytes) {
  using namespace attnkit;
  const std::string& p = scratch_path();
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  if (kind == "seq2seq")
    (void)models::load_seq2seq(p);
  else if (kind == "han")
    (void)models::han::load_han(p);
  else if (kind == "ptrnet")
    (void)models::load_ptrnet(p);
  else if (kind == "caption")
    (void)models::load_caption(p);
  else if (kind == "imgclass")
    (void)models::load_imgnet(p);
  else if (kind == "bert")
    (void)models::load_bert(p);
  else if (kind == "snail-bandit")
    (void)rl::load_bandit(p);
  else if (kind == "snail-fewshot")
    (void)models::load_fewshot(p);
  else if (kind == "ram")
    (void)models::load_ram(p);
  else if (kind == "stack-lstm")
    (void)memory::load_stack_lstm(p);
  else if (kind == "ntm")
    (void)memory::load_ntm(p);
  else if (kind == memory::kMemN2NKind)
    (void)memory::load_memn2n(p);
}
}  // namespace

ATTNKIT_FUZZ_TARGET({
  try {
    attnkit::nn::parse_model_file(std::string(bytes), "fuzz.akm");
  } catch (const attnkit::Error&) {
  }
  const std::string b = resigned(bytes);
  const attnkit::nn::ModelFile f = attnkit::nn::parse_model_file(b, "fuzz.akm");
  load_kind(f.kind, b);
})

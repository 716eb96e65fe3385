// Model files and checkpoints. The header's checksum stops nearly every mutation at the door,
// so each input is parsed twice: as it is (the header checks), then with the right checksum
// and length written into it, so that the mutations reach the metadata archive and the tensor
// records behind it. (That second parse found, within 2,644 runs, that Boost's archive reader
// trusted its counts and string lengths: fixed by nn's bounded archive reader, issue 20 bug 2.)
#include "attnkit/nn/model_file.h"

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
}  // namespace

ATTNKIT_FUZZ_TARGET({
  try {
    attnkit::nn::parse_model_file(std::string(bytes), "fuzz.akm");
  } catch (const attnkit::Error&) {
  }
  attnkit::nn::parse_model_file(resigned(bytes), "fuzz.akm");
})

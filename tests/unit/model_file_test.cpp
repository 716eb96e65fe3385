// Model files, RNG state and optimiser state (nn/model_file, core/rng, nn/optim).
#include "attnkit/nn/model_file.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/params.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_model_file_test {

using namespace attnkit;

namespace {

std::string temp_path(const std::string& name) {
  return "/tmp/attnkit_mf_" + std::to_string(getpid()) + "_" + name;
}

nn::ModelFile sample() {
  nn::ModelFile m;
  m.kind = "seq2seq";
  m.config_yaml = "hidden: 16\nlr: 0.001\n";
  m.tensors["param/w"] =
      Tensor({2, 3}, {1.5f, -0.0f, 3.25f, std::numeric_limits<float>::infinity(), 1e-40f, -7.0f});
  m.tensors["empty"] = Tensor(Shape{0});
  m.tensors["scalar"] = Tensor::scalar(42.0f);
  m.strings["vocab"] = {"<pad>", "a b", "", "\n", "ü"};
  m.numbers["step"] = 1234;
  m.numbers["nan"] = std::numeric_limits<double>::quiet_NaN();
  m.numbers["third"] = 1.0 / 3.0;
  m.texts["rng"] = "xoshiro256** state with spaces\nand lines";
  return m;
}

std::string error_of(const std::string& bytes, const std::string& kind = "") {
  try {
    nn::parse_model_file(bytes, "M.akm", kind);
  } catch (const DataError& e) {
    CHECK(e.file() == "M.akm");
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("model file: round trip keeps every value bit for bit") {
  const std::string path = temp_path("rt.akm");
  const nn::ModelFile a = sample();
  nn::save_model_file(path, a);
  const nn::ModelFile b = nn::load_model_file(path, "seq2seq");
  CHECK(b.kind == "seq2seq");
  CHECK(b.file == path);
  CHECK(b.config_yaml == a.config_yaml);
  CHECK(b.strings == a.strings);
  CHECK(b.texts == a.texts);
  REQUIRE(b.tensors.size() == 3);
  for (const auto& [name, t] : a.tensors) {
    const Tensor& u = b.tensor(name);
    REQUIRE(u.shape() == t.shape());
    for (int64_t i = 0; i < t.size(); ++i) {
      uint32_t x, y;
      std::memcpy(&x, t.data() + i, 4);
      std::memcpy(&y, u.data() + i, 4);
      CHECK(x == y);
    }
  }
  CHECK(b.number("step") == 1234);
  CHECK(std::isnan(b.number("nan")));
  CHECK(b.number("third") == 1.0 / 3.0);
  CHECK(b.integer("step") == 1234);
  CHECK_THROWS_AS(b.integer("third"), DataError);
  CHECK_THROWS_AS(b.tensor("missing"), DataError);
  // the same model gives the same bytes
  CHECK(nn::format_model_file(a) == nn::format_model_file(b));
  std::remove(path.c_str());
}

TEST_CASE("model file: header layout") {
  const std::string bytes = nn::format_model_file(sample());
  CHECK(bytes.substr(0, 8) == std::string("\x89"
                                          "AKM\r\n\x1a\n",
                                          8));
  CHECK(static_cast<unsigned char>(bytes[8]) == nn::kModelFormatVersion);
  CHECK(bytes[9] == 0);
  CHECK(nn::crc32("123456789", 9) == 0xCBF43926u);  // the standard CRC-32 check value
}

TEST_CASE("model file: errors name the file and the problem") {
  const std::string good = nn::format_model_file(sample());
  CHECK(contains(error_of("hello world, not a model"), "bad magic"));
  CHECK(contains(error_of(""), "bad magic"));
  CHECK(contains(error_of(good.substr(0, 12)), "truncated"));

  std::string newer = good;
  newer[8] = 7;
  CHECK(contains(error_of(newer), "unsupported model format version 7"));

  CHECK(contains(error_of(good, "ntm"), "is a seq2seq model, expected ntm"));
  nn::ModelFile m = sample();
  m.kind = "ntm";
  CHECK(
      contains(error_of(nn::format_model_file(m), "seq2seq"), "is a ntm model, expected seq2seq"));
  m.kind = "memn2n";
  CHECK(contains(error_of(nn::format_model_file(m), "ntm"), "is a memn2n model, expected ntm"));

  // every truncation is caught, none crashes
  for (size_t n = 8; n < good.size(); n += 7)
    CHECK(contains(error_of(good.substr(0, n)), "truncated"));
  CHECK(contains(error_of(good + "x"), "corrupted"));

  // every flipped bit is caught by the checksum (sampled positions)
  for (size_t at = 24; at < good.size(); at += 13) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    CHECK(contains(error_of(bad), "checksum"));
  }
  // a huge length in the header does not allocate
  std::string huge = good;
  for (int i = 16; i < 24; ++i) huge[i] = '\xff';
  CHECK(contains(error_of(huge), "truncated"));
}

TEST_CASE("model file: a checksum-valid file with a lying tensor shape fails cleanly") {
  // Re-sign a payload whose metadata claims a big tensor: the checksum matches, the content
  // check must still refuse it without allocating the claimed size.
  nn::ModelFile m;
  m.kind = "t";
  m.tensors["x"] = Tensor({2, 2}, 1.0f);
  std::string good = nn::format_model_file(m);
  const size_t at = good.find("2 2");  // the shape in the text archive
  REQUIRE(at != std::string::npos);
  std::string bad = good;
  bad.replace(at, 3, "9 9");
  // fix the checksum
  const uint32_t crc = nn::crc32(bad.data() + 24, bad.size() - 24);
  for (int i = 0; i < 4; ++i) bad[12 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  CHECK(contains(error_of(bad), "runs past the end"));
}

// The file `good` with `from` replaced by `to` inside its metadata archive, every length and
// the checksum made right again: what a buggy or hostile writer could produce.
std::string resigned(const std::string& good, const std::string& from, const std::string& to) {
  const size_t kind_len = static_cast<unsigned char>(good[24]);  // < 256, little-endian
  const size_t len_at = 24 + 4 + kind_len;
  uint64_t text_len = 0;
  for (int i = 0; i < 8; ++i)
    text_len |= static_cast<uint64_t>(static_cast<unsigned char>(good[len_at + i])) << (8 * i);
  std::string text = good.substr(len_at + 8, text_len);
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::string b = good.substr(0, len_at);
  for (int i = 0; i < 8; ++i) b += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  b += text + good.substr(len_at + 8 + text_len);
  const uint64_t len = b.size() - 24;
  for (int i = 0; i < 8; ++i) b[16 + i] = static_cast<char>((len >> (8 * i)) & 0xff);
  const uint32_t crc = nn::crc32(b.data() + 24, b.size() - 24);
  for (int i = 0; i < 4; ++i) b[12 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  return b;
}

TEST_CASE("model file: counts and string lengths inside the metadata are checked before use") {
  // Boost's own text archive reader trusts them (reserve(count), resize(length)): a file with
  // a valid checksum made it allocate whatever the file claimed (issue 20, bug 2). The
  // archive reader now refuses any count or length above the characters left.
  nn::ModelFile m;
  m.kind = "t";
  m.config_yaml = "abc";
  m.strings["v"] = {"pp", "qq", "rr"};
  m.tensors["x"] = Tensor({2, 3}, 1.0f);
  const std::string good = nn::format_model_file(m);
  CHECK(nn::parse_model_file(resigned(good, " 3 abc", " 3 abc"), "x.akm").config_yaml == "abc");
  // a string's length
  CHECK(contains(error_of(resigned(good, " 3 abc", " 999999 abc")),
                 "metadata: a string of 999999 bytes where"));
  // a vector's count (the string list), and a tensor's shape's count
  CHECK(contains(error_of(resigned(good, " 3 0 2 pp", " 999999 0 2 pp")),
                 "metadata: a collection of 999999 items where"));
  CHECK(contains(error_of(resigned(good, " 2 0 2 3", " 999999 0 2 3")),
                 "metadata: a collection of 999999 items where"));
  // 2^64 - 1 as a count
  CHECK(contains(error_of(resigned(good, " 3 0 2 pp", " 18446744073709551615 0 2 pp")),
                 "corrupted model file (metadata: a collection of 18446744073709551615 items"));
  // a string that claims exactly the characters left still fails cleanly at the end
  CHECK(contains(error_of(resigned(good, " 1 x 2 0 2 3", " 3 x")), "corrupted model file"));
}

TEST_CASE("model file: load errors from the file system and atomic save") {
  CHECK_THROWS_AS(nn::load_model_file("/nonexistent/dir/x.akm"), IoError);
  const std::string path = temp_path("atomic.akm");
  nn::save_model_file(path, sample());
  nn::ModelFile bad;  // no kind: nothing is written, the old file stays
  CHECK_THROWS_AS(nn::save_model_file(path, bad), Error);
  CHECK(nn::load_model_file(path).kind == "seq2seq");
  std::remove(path.c_str());
}

TEST_CASE("Rng state round trip continues the stream exactly") {
  Rng a(7);
  for (int i = 0; i < 5; ++i) a.next();
  a.normal();  // leaves a spare normal cached
  const std::string s = a.state();
  Rng b(999);
  b.set_state(s);
  CHECK(b.state() == s);
  for (int i = 0; i < 10; ++i) CHECK(a.normal() == b.normal());
  for (int i = 0; i < 10; ++i) CHECK(a.next() == b.next());
  CHECK_THROWS_AS(b.set_state("garbage"), DataError);
  CHECK_THROWS_AS(
      b.set_state(
          "xoshiro256** 0000000000000000 0000000000000000 0000000000000000 0000000000000000 -"),
      DataError);
  CHECK_THROWS_AS(b.set_state(s + " extra"), DataError);
}

namespace {
// Runs `steps` updates of an optimiser on a fixed quadratic and returns the parameter.
template <class Opt, class... Args>
std::vector<float> run_opt(nn::ParamStore& ps, Opt& opt, int from, int to) {
  ad::Parameter& p = ps.get("w");
  for (int s = from; s < to; ++s) {
    for (int64_t i = 0; i < p.size(); ++i) p.grad[i] = p.value[i] - static_cast<float>(i + s % 3);
    opt.step();
  }
  return p.value.values();
}
}  // namespace

TEST_CASE("optimiser state: save, restore into a fresh optimiser, continue identically") {
  for (int kind = 0; kind < 4; ++kind) {
    CAPTURE(kind);
    auto make = [&](nn::ParamStore& ps) -> std::unique_ptr<nn::Optimizer> {
      if (kind == 0) return std::make_unique<nn::Adam>(ps.params(), 0.05);
      if (kind == 1) return std::make_unique<nn::RMSProp>(ps.params(), 0.01);
      if (kind == 2) return std::make_unique<nn::SGD>(ps.params(), 0.1, 0.9);
      return std::make_unique<nn::SGD>(ps.params(), 0.1);
    };
    nn::ParamStore a;
    a.add("w", Tensor({3}, {1, 2, 3}));
    auto oa = make(a);
    run_opt<nn::Optimizer>(a, *oa, 0, 5);
    nn::ModelFile m;
    m.kind = "t";
    nn::put_params(m, a);
    nn::put_optimizer(m, *oa);
    const nn::ModelFile back = nn::parse_model_file(nn::format_model_file(m), "ckpt");
    const std::vector<float> want = run_opt<nn::Optimizer>(a, *oa, 5, 12);

    nn::ParamStore b;
    b.add("w", Tensor({3}, {0, 0, 0}));
    auto ob = make(b);
    nn::get_params(back, b);
    nn::get_optimizer(back, *ob);
    CHECK(ob->steps() == 5);
    const std::vector<float> got = run_opt<nn::Optimizer>(b, *ob, 5, 12);
    CHECK(got == want);
  }
}

TEST_CASE("optimiser state and parameters: mismatches are DataErrors, nothing changes") {
  nn::ParamStore a;
  a.add("w", Tensor({3}, 1.0f));
  nn::Adam adam(a.params());
  nn::ModelFile m;
  m.kind = "t";
  m.file = "X.akm";
  nn::put_params(m, a);
  nn::put_optimizer(m, adam);

  nn::ParamStore b;
  b.add("w", Tensor({4}, 2.0f));
  CHECK_THROWS_AS(nn::get_params(m, b), DataError);
  CHECK(b.get("w").value[0] == 2.0f);
  nn::Adam adam_b(b.params());
  try {
    nn::get_optimizer(m, adam_b);
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(e.file() == "X.akm");
    CHECK(std::string(e.what()).find("w/m") != std::string::npos);
  }

  nn::ParamStore c;
  c.add("w", Tensor({3}, 0.0f));
  c.add("extra", Tensor({1}, 0.0f));
  CHECK_THROWS_AS(nn::get_params(m, c), DataError);  // missing 'extra'
  nn::ParamStore d;
  CHECK_THROWS_AS(nn::get_params(m, d), DataError);  // 'w' is not a parameter of d

  nn::RMSProp rms(a.params());  // Adam's buffers do not fit RMSProp
  CHECK_THROWS_AS(nn::get_optimizer(m, rms), DataError);
}

}  // namespace attnkit_unit_model_file_test

// Issue 36, items 9, 10, 13-15: inputs that are not what a reader expects (pictures in other
// formats, archives and binary data where text is expected, pictures beyond the pixel cap,
// pairs too long to train), each refused in words naming its file (and line), never by
// quoting its bytes; ptrtask-gen's .npz read back; the labels' errors blamed on the labels.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/data/ptrtask.h"
#include "attnkit/data/vocab.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/stackmem/model.h"
#include "attnkit/models/snail/fewshot.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_foreign_inputs_test {

using namespace attnkit;

namespace {

// The DataError `f` throws: its message and file (and line); fails the test when none.
template <class F>
void data_error(F f, const std::string& text, const std::string& file, long line = -1) {
  bool thrown = false;
  try {
    f();
  } catch (const DataError& e) {
    thrown = true;
    CHECK_MESSAGE(std::string(e.what()).find(text) != std::string::npos, e.what());
    CHECK(e.file() == file);
    if (line >= 0) CHECK(e.line() == line);
  }
  CHECK_MESSAGE(thrown, "no DataError with '" << text << "'");
}

const std::string kJpeg("\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01", 16);

}  // namespace

TEST_CASE("binary_kind: pictures and archives by their magic bytes, text as text") {
  CHECK(io::binary_kind(kJpeg) == "a JPEG picture");
  CHECK(io::binary_kind("GIF89a\x01\x00\x01\x00") == "a GIF picture");
  CHECK(io::binary_kind(std::string("RIFF\x24\x00\x00\x00WEBPVP8 ", 16)) == "a WebP picture");
  CHECK(io::binary_kind(std::string("BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00", 14)) ==
        "a BMP picture");
  CHECK(io::binary_kind(std::string("II*\0\x08\x00\x00\x00", 8)) == "a TIFF picture");
  CHECK(io::binary_kind(std::string("\x89PNG\r\n\x1a\n", 8)) == "a PNG picture");
  CHECK(io::binary_kind(std::string("PK\x03\x04\x14\x00", 6)) == "an .npz archive");
  CHECK(io::binary_kind(std::string("\x93NUMPY\x01\x00", 8)) == "an .npy array");
  CHECK(io::binary_kind(std::string("abc\0def", 7)) == "binary data");
  CHECK(io::binary_kind(std::string(64, '\x01')) == "binary data");
  // text, UTF-8 included; "BM" starting a line of text is text
  CHECK(io::binary_kind("1 2 3\n4 5 6\n") == "");
  CHECK(io::binary_kind("Va !\tGo.\nCours\xE2\x80\xAF!\tRun!\n") == "");
  CHECK(io::binary_kind("BMW 3 series\tcar\n") == "");
  CHECK(io::binary_kind("") == "");
  CHECK(io::is_foreign_picture(kJpeg));
  CHECK_FALSE(io::is_foreign_picture(std::string("\x89PNG\r\n\x1a\n", 8)));
}

TEST_CASE("printable: a file's bytes in a message as \\xNN, UTF-8 kept") {
  CHECK(io::printable("not a number: '\xFF\xD8\xFF\xE0'") ==
        "not a number: '\\xFF\\xD8\\xFF\\xE0'");
  CHECK(io::printable("caf\xC3\xA9 x\ty") == "caf\xC3\xA9 x\ty");
  CHECK(io::printable(std::string("a\0b\x1b[31m", 8)) == "a\\x00b\\x1B[31m");
  CHECK(io::printable("cut \xE2\x80") == "cut \\xE2\\x80");  // a sequence cut short
}

TEST_CASE("a JPEG where a tensor or a PNG is expected: 'convert it to PNG'; never its bytes") {
  data_error([] { (void)io::parse_tensor(kJpeg, "photo.jpg", ""); },
             "a JPEG picture: convert it to PNG", "photo.jpg");
  data_error([] { (void)io::parse_tensor(std::string("abc\0\x01\x02", 6), "x.bin", ""); },
             "binary data, not a tensor", "x.bin");
  // Text that is mostly text but holds one stray byte still reads as text: the message quotes
  // it escaped.
  try {
    (void)io::parse_text("1 2\n3 \xFF\n", "t.txt");
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) == "not a number: '\\xFF'");
    CHECK(e.line() == 2);
  }
}

TEST_CASE("read_text: binary files refused in words, naming the file") {
  test::TempDir dir;
  const Tensor t({2}, 1.0f);
  const std::string npz = dir / "p.npz";
  io::write_npz(npz, {{"a", &t}});
  data_error([&] { (void)io::read_text(npz); }, "an .npz archive (binary data), expected text",
             npz);
  const std::string jpg = dir.file("q.jpg", kJpeg);
  data_error([&] { (void)io::read_text(jpg, "give the pairs as text"); },
             "a JPEG picture, expected text: give the pairs as text", jpg);
  const std::string txt = dir.file("ok.tsv", "a b\tb a\n");
  CHECK(io::read_text(txt) == "a b\tb a\n");
}

TEST_CASE("the pixel cap: from the header, before decoding; set_max_pixels raises it") {
  const std::string png = io::format_png(Tensor({64, 64}, 0.5f));
  CHECK(io::max_pixels() == io::kDefaultMaxPixels);
  io::set_max_pixels(4095);
  data_error([&] { (void)io::parse_tensor(png, "big.png", ""); },
             "PNG: 64x64 pixels, more than the limit of 4095 (--max-pixels raises it)", "big.png");
  const std::string pgm = io::format_pgm(Tensor({64, 64}, 0.5f));
  data_error([&] { (void)io::parse_tensor(pgm, "big.pgm", ""); },
             "PGM: 64x64 pixels, more than the limit of 4095", "big.pgm");
  io::set_max_pixels(4096);
  CHECK(io::parse_tensor(png, "big.png", "").shape() == Shape{64, 64});
  CHECK(io::parse_tensor(pgm, "big.pgm", "").shape() == Shape{64, 64});
  io::set_max_pixels(io::kDefaultMaxPixels);
}

TEST_CASE("ptrtask-gen's .npz reads as its text does") {
  test::TempDir dir;
  // two tsp problems of 3 points (coordinates exact in float32), answers padded with 0
  const std::string text =
      "0.5 0.25 0.75 0.125 0.0 1.0 output 1 2 3 1\n0.25 0.5 0.125 0.75 1.0 0.0 output 1 3 2 1\n";
  const std::string tp = dir.file("p.txt", text);
  Tensor pts({2, 3, 2}), ans({2, 5}, 0.0f);
  const float v[] = {0.5f,  0.25f, 0.75f,  0.125f, 0.0f, 1.0f,
                     0.25f, 0.5f,  0.125f, 0.75f,  1.0f, 0.0f};
  for (int i = 0; i < 12; ++i) pts[i] = v[i];
  const float a[] = {1, 2, 3, 1, 0, 1, 3, 2, 1, 0};
  for (int i = 0; i < 10; ++i) ans[i] = a[i];
  const std::string np = dir / "p.npz";
  io::write_npz(np, {{"points", &pts}, {"answers", &ans}});
  const auto want = data::read_ptr_problems(tp, 2);
  const auto got = data::read_ptr_problems(np, 2);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].q == want[i].q);
    CHECK(got[i].answer == want[i].answer);
    CHECK(want[i].line == static_cast<int64_t>(i + 1));
  }
  // wrong dimension, a stray index after the end, another archive
  data_error([&] { (void)data::read_ptr_problems(np, 1); }, "points must be [count, n, 1]", np);
  ans[4] = 2;  // problem 1: 1 2 3 1 2 (fine), problem 2: 0 then 1 is not
  ans[9] = 0;
  ans[8] = 0;
  ans[7] = 1;
  io::write_npz(np, {{"points", &pts}, {"answers", &ans}});
  CHECK_NOTHROW((void)data::read_ptr_problems(np, 2));
  ans[7] = 0, ans[8] = 1;
  io::write_npz(np, {{"points", &pts}, {"answers", &ans}});
  data_error([&] { (void)data::read_ptr_problems(np, 2); }, "problem 2: answer 1", np);
  io::write_npz(np, {{"x", &pts}});
  data_error([&] { (void)data::read_ptr_problems(np, 2); }, "no 'points' array", np);
  const std::string jpg = dir.file("p.jpg", kJpeg);
  data_error([&] { (void)data::read_ptr_problems(jpg, 2); }, "a JPEG picture, expected problems",
             jpg);
}

TEST_CASE(
    "stack LSTM training's memory bound: quadratic in the length, refused with file and line") {
  memory::StackLstmConfig c;
  c.vocab = 12;
  // Quadratic: twice the length, nearly four times the memory (the per-step part is linear).
  const double r = static_cast<double>(c.train_bytes(8000, 8000)) /
                   static_cast<double>(c.train_bytes(4000, 4000));
  CHECK(r > 3.8);
  CHECK(r < 4.0);
  // The default stack's bound falls where stackmem-train's help says: about 3,700 symbols.
  CHECK(c.train_bytes(3600, 0) < memory::kMaxPairTrainBytes);
  CHECK(c.train_bytes(3800, 0) > memory::kMaxPairTrainBytes);
  // the deque holds two values a step, the plain LSTM none
  memory::StackLstmConfig d = c, n = c;
  d.memory = "deque";
  n.memory = "none";
  CHECK(d.train_bytes(1000, 1000) > c.train_bytes(1000, 1000));
  CHECK(n.train_bytes(1000, 1000) < c.train_bytes(1000, 1000) / 10);
  test::TempDir dir;
  std::string long_pair;
  for (int i = 0; i < 4000; ++i) long_pair += i ? " a" : "a";
  const std::string p = dir.file("pairs.tsv", "a b\tb a\n\n" + long_pair + "\tb\n");
  const data::Vocab v = memory::transduce_vocab(p);
  CHECK(memory::read_transduce(p, v).size() == 2);  // decoding: any length
  data_error([&] { (void)memory::read_transduce(p, v, &c); },
             "a pair of 4000 + 1 symbols needs about", p, 3);
  CHECK(memory::read_transduce(p, v, &n).size() == 2);  // the plain LSTM: linear, far below
  // A step keeps its batch's rows as long as its longest pair: 1,000 symbols train alone,
  // not in batches of 16 (of 17 pairs), nor of 64 (17 rows at most).
  std::string mid, shorts;
  for (int i = 0; i < 1000; ++i) mid += i ? " a" : "a";
  for (int i = 0; i < 16; ++i) shorts += "a b\tb a\n";
  const std::string q = dir.file("mid.tsv", shorts + mid + "\tb\n");
  CHECK(memory::read_transduce(q, v, &c, 1).size() == 17);
  data_error([&] { (void)memory::read_transduce(q, v, &c, 16); },
             "a pair of 1000 + 1 symbols needs about", q, 17);
  data_error([&] { (void)memory::read_transduce(q, v, &c, 64); }, "in a batch of 17", q, 17);
  CHECK(16 * c.train_bytes(850, 0) < memory::kMaxPairTrainBytes);  // the help: about 900
  CHECK(16 * c.train_bytes(950, 0) > memory::kMaxPairTrainBytes);
}

TEST_CASE("few-shot pictures: a label's error names the labels file") {
  Tensor images({3, 2, 2}, 0.5f), labels({3}, 1.0f);
  labels[2] = 2.5f;
  data_error([&] { (void)models::label_classes(images, labels, "img.idx", "lab.txt"); },
             "label 3 is 2.5, not a class id", "lab.txt");
  data_error([&] { (void)models::label_classes(images, Tensor({2}, 1.0f), "img.idx", "lab.txt"); },
             "labels must be [3]", "lab.txt");
  labels[2] = 1.0f;
  data_error(
      [&] { (void)models::select_classes(images, labels, {}, false, 4, "img.idx", "lab.txt"); },
      "class 1 has 3 pictures", "lab.txt");
}

}  // namespace attnkit_unit_foreign_inputs_test

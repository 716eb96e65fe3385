// Vocabulary: reserved ids, order, min_freq, encode/decode, the file format and its errors.
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/data/vocab.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_data_vocab_test {

using namespace attnkit;
using namespace attnkit::data;

namespace {
TokenCounts sample_counts() {
  TokenCounts c;
  for (const char* s : {"le chat est là .", "le chien est là .", "le chat dort ."})
    count_tokens(c, tokenize_words(s));
  return c;  // le 3, . 3, chat 2, est 2, là 2, chien 1, dort 1
}

void expect_error(const std::string& text, long line, const std::string& what) {
  try {
    Vocab::parse(text, "v.tsv");
    FAIL("no error for: " << text);
  } catch (const DataError& e) {
    CHECK(e.file() == "v.tsv");
    CHECK(e.line() == line);
    CHECK(std::string(e.what()) == what);
  }
}
}  // namespace

TEST_CASE("vocab: reserved ids, then descending count, ties by bytes") {
  const Vocab v = Vocab::build(sample_counts());
  REQUIRE(v.size() == 11);
  CHECK(v.token(0) == "<pad>");
  CHECK(v.token(1) == "<bos>");
  CHECK(v.token(2) == "<eos>");
  CHECK(v.token(3) == "<unk>");
  CHECK(v.token(4) == ".");  // count 3; "." < "le"
  CHECK(v.token(5) == "le");
  CHECK(v.token(6) == "chat");  // count 2: chat < est < là
  CHECK(v.token(7) == "est");
  CHECK(v.token(8) == "là");
  CHECK(v.token(9) == "chien");
  CHECK(v.token(10) == "dort");
  CHECK(v.count(5) == 3);
  CHECK(v.count(0) == 0);
  CHECK(v.id("chat") == 6);
  CHECK(v.id("absent") == Vocab::kUnk);
  CHECK_THROWS_AS(v.token(11), DataError);
  CHECK_THROWS_AS(v.token(-1), DataError);
}

TEST_CASE("vocab: min_freq, max_size, reserved spellings never counted") {
  TokenCounts c = sample_counts();
  c["<unk>"] = 50;
  c["<pad>"] = 50;
  const Vocab v2 = Vocab::build(c, 2);
  CHECK(v2.size() == 4 + 5);
  CHECK(v2.id("chien") == Vocab::kUnk);
  CHECK(v2.id("<pad>") == Vocab::kPad);
  CHECK(v2.count(Vocab::kUnk) == 0);
  CHECK(Vocab::build(c, 3).size() == 6);
  CHECK(Vocab::build(c, 4).size() == 4);
  CHECK(Vocab::build(c, 1, 6).size() == 6);
  CHECK(Vocab::build(c, 1, 6).token(5) == "le");
  CHECK_THROWS_AS(Vocab::build(c, 0), DataError);
  CHECK_THROWS_AS(Vocab::build(c, 1, 2), DataError);
}

TEST_CASE("vocab: encode and decode") {
  const Vocab v = Vocab::build(sample_counts());
  const auto ids = v.encode(tokenize_words("Le chat mange."));
  CHECK(ids == std::vector<int32_t>{5, 6, Vocab::kUnk, 4});
  CHECK(v.decode({Vocab::kBos, 5, 6, 4, Vocab::kEos, 7, Vocab::kPad}) == "le chat .");
  CHECK(v.decode({5, 6}, "") == "lechat");
}

TEST_CASE("vocab: the text format round-trips, spaces and UTF-8 included") {
  TokenCounts c;
  count_tokens(c, tokenize_chars("Ça va ?"));
  const Vocab v = Vocab::build(c);
  const std::string text = v.format();
  CHECK(text.substr(0, 29) == "<pad>\t0\n<bos>\t0\n<eos>\t0\n<unk>");
  CHECK(text.find(" \t2\n") != std::string::npos);  // the space, twice
  const Vocab back = Vocab::parse(text, "v.tsv");
  REQUIRE(back.size() == v.size());
  for (int32_t i = 0; i < v.size(); ++i) {
    CHECK(back.token(i) == v.token(i));
    CHECK(back.count(i) == v.count(i));
  }
  CHECK(back.format() == text);
  // save/load through a file
  const test::TempDir dir;
  v.save(dir / "v.tsv");
  CHECK(Vocab::load(dir / "v.tsv").format() == text);
}

TEST_CASE("vocab: every malformed file is an error naming the line") {
  const std::string head = "<pad>\t0\n<bos>\t0\n<eos>\t0\n<unk>\t0\n";
  expect_error(head + "a\t3\nb 2\n", 6, "expected TOKEN<TAB>COUNT, found no tab");
  expect_error(head + "a\t3\n\t2\n", 6, "empty token");
  expect_error(head + "a\t3\na\tb\t2\n", 6, "expected TOKEN<TAB>COUNT, found more than one tab");
  expect_error(head + "a\tx\n", 5, "bad count 'x' (a whole number >= 0)");
  expect_error(head + "a\t-1\n", 5, "bad count '-1' (a whole number >= 0)");
  expect_error(head + "a\t\n", 5, "bad count '' (a whole number >= 0)");
  expect_error(head + "a\t3\nb\t1\na\t1\n", 7, "token 'a' repeated (first on line 5)");
  expect_error("<pad>\t0\n<unk>\t0\n", 2,
               "expected the reserved token <bos> (id 1), found '<unk>'");
  expect_error("<pad>\t0\n<bos>\t0\n", 2, "the vocabulary ends before the four reserved tokens");
  expect_error(head + "\xC3\n", 5, "invalid UTF-8 at byte 1 of the line");
  try {
    Vocab::parse("", "v.tsv");
    FAIL("empty file accepted");
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) == "empty vocabulary file");
  }
  CHECK_THROWS_AS(Vocab::load("/nonexistent/v.tsv"), IoError);
}

}  // namespace attnkit_unit_data_vocab_test

// Parallel corpora: the reader's errors, the split, encoding, and batches by length.
#include <algorithm>
#include <fstream>
#include <set>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/batch.h"
#include "attnkit/data/corpus.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_data_corpus_test {

using namespace attnkit;
using namespace attnkit::data;

namespace {

void expect_tsv_error(const std::string& text, long line, const std::string& what) {
  try {
    parse_tsv(text, "c.tsv");
    FAIL("no error for: " << text);
  } catch (const DataError& e) {
    CHECK(e.file() == "c.tsv");
    CHECK(e.line() == line);
    CHECK(std::string(e.what()) == what);
  }
}

ParallelCorpus numbered(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    std::string src, tgt;
    for (int k = 0; k <= i % 7; ++k) src += "w" + std::to_string(k) + " ";
    for (int k = 0; k <= (i * 3) % 5; ++k) tgt += "m" + std::to_string(k) + " ";
    text += src + "\t" + tgt + std::to_string(i) + "\n";
  }
  return parse_tsv(text, "n.tsv");
}

std::string shared_fra() { return std::string(ATTNKIT_SHARED_DATA_DIR) + "/translation/fra.txt"; }

}  // namespace

TEST_CASE("corpus: SOURCE<TAB>TARGET lines, extra columns ignored, CRLF accepted") {
  const auto c = parse_tsv(
      "Go.\tVa !\r\nHi.\tSalut !\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272\n", "c.tsv");
  REQUIRE(c.size() == 2);
  CHECK(c.pairs[0].source == "Go.");
  CHECK(c.pairs[0].target == "Va !");
  CHECK(c.pairs[1].target == "Salut !");
  CHECK(c.pairs[1].line == 2);
  CHECK(parse_tsv("", "c.tsv").size() == 0);
}

TEST_CASE("corpus: each malformed line is a DataError with its line number") {
  expect_tsv_error("a\tb\n\nc\td\n", 2, "empty line (expected SOURCE<TAB>TARGET)");
  expect_tsv_error("a\tb\nc d\n", 2, "no tab (expected SOURCE<TAB>TARGET)");
  expect_tsv_error("a\tb\nc\td\n\tx\n", 3, "empty source sentence");
  expect_tsv_error("a\tb\n   \tx\n", 2, "empty source sentence");
  expect_tsv_error("a\t\n", 1, "empty target sentence");
  expect_tsv_error("a\t\tattribution\n", 1, "empty target sentence");
  expect_tsv_error("a\tb\nc\t\xE9t\xE9\n", 2, "invalid UTF-8 at byte 3 of the line");
}

TEST_CASE("corpus: two aligned files") {
  const auto c = parse_aligned("Go.\nHi.\n", "en.txt", "Va !\nSalut !", "fr.txt");
  REQUIRE(c.size() == 2);
  CHECK(c.pairs[1].source == "Hi.");
  CHECK(c.pairs[1].target == "Salut !");
  try {
    parse_aligned("a\nb\nc\n", "en.txt", "x\ny\n", "fr.txt");
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(std::string(e.what()) ==
          "en.txt has 3 lines but fr.txt has 2: the files must be aligned line by line");
  }
  try {
    parse_aligned("a\nb\n", "en.txt", "x\n\n", "fr.txt");
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(e.file() == "fr.txt");
    CHECK(e.line() == 2);
  }
}

TEST_CASE("split: seeded, disjoint, complete, in corpus order") {
  const auto c = numbered(200);
  const auto a = split_train_valid(c, 0.2, 7);
  const auto b = split_train_valid(c, 0.2, 7);
  const auto d = split_train_valid(c, 0.2, 8);
  CHECK(a.valid.size() == 40);
  CHECK(a.train.size() == 160);
  std::vector<long> va, vb, vd, all;
  for (const auto& p : a.valid.pairs) va.push_back(p.line);
  for (const auto& p : b.valid.pairs) vb.push_back(p.line);
  for (const auto& p : d.valid.pairs) vd.push_back(p.line);
  CHECK(va == vb);
  CHECK(va != vd);
  CHECK(std::is_sorted(va.begin(), va.end()));
  for (const auto& p : a.train.pairs) all.push_back(p.line);
  CHECK(std::is_sorted(all.begin(), all.end()));
  all.insert(all.end(), va.begin(), va.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == static_cast<long>(i + 1));
  CHECK(split_train_valid(c, 0.0, 1).valid.size() == 0);
  CHECK_THROWS_AS(split_train_valid(c, 1.0, 1), DataError);
  CHECK_THROWS_AS(split_train_valid(c, -0.1, 1), DataError);
}

TEST_CASE("encode: <eos> after the source, <bos> ... <eos> around the target, truncation") {
  const auto c = parse_tsv("I am cold.\tJ'ai froid.\nGo!\tVa\xE2\x80\xAF!\n", "c.tsv");
  const Vocab sv = Vocab::build(count_side(c, Side::Source, Tokenization::Words));
  const Vocab tv = Vocab::build(count_side(c, Side::Target, Tokenization::Words));
  auto e = encode(c, sv, tv, {});
  REQUIRE(e.size() == 2);
  CHECK(e[0].source.size() == 5);  // i am cold . <eos>
  CHECK(e[0].source.back() == Vocab::kEos);
  CHECK(sv.decode(e[0].source) == "i am cold .");
  CHECK(e[1].target.front() == Vocab::kBos);
  CHECK(e[1].target.back() == Vocab::kEos);
  CHECK(tv.decode(e[1].target) == "va !");
  EncodeOptions o;
  o.max_source_len = 3;
  o.max_target_len = 3;
  e = encode(c, sv, tv, o);
  CHECK(sv.decode(e[0].source) == "i am");
  CHECK(e[0].source.size() == 3);
  CHECK(e[0].target.size() == 3);
  CHECK(e[0].target.back() == Vocab::kEos);
  CHECK(e[1].source.size() == 3);  // go ! <eos>: fits
  o.max_source_len = 1;
  CHECK_THROWS_AS(encode(c, sv, tv, o), DataError);
  o.max_source_len = 0;
  o.max_target_len = 2;
  CHECK_THROWS_AS(encode(c, sv, tv, o), DataError);
  CHECK(parse_side("source") == Side::Source);
  CHECK_THROWS_AS(parse_side("left"), ChoiceError);
}

TEST_CASE("batches: each pair once per epoch, padding, lengths sorted, seeded order") {
  const auto c = numbered(203);
  const Vocab sv = Vocab::build(count_side(c, Side::Source, Tokenization::Words));
  const Vocab tv = Vocab::build(count_side(c, Side::Target, Tokenization::Words));
  const auto data = encode(c, sv, tv, {});
  BatchOptions opt;
  opt.batch_size = 8;
  opt.pool_batches = 4;
  opt.seed = 11;
  const auto batches = make_batches(data, opt, 0);
  CHECK(batches.size() == 26);  // ceil(203 / 8)
  std::vector<int> seen(data.size(), 0);
  int short_batches = 0;
  for (const auto& b : batches) {
    CHECK(b.size() <= 8);
    if (b.size() < 8) ++short_batches;
    REQUIRE(b.source_len.size() == static_cast<size_t>(b.size()));
    CHECK(b.source.cols == *std::max_element(b.source_len.begin(), b.source_len.end()));
    CHECK(b.target.cols == *std::max_element(b.target_len.begin(), b.target_len.end()));
    CHECK(std::is_sorted(b.source_len.rbegin(), b.source_len.rend()));  // longest first
    for (int64_t i = 0; i < b.size(); ++i) {
      const auto& p = data[b.index[static_cast<size_t>(i)]];
      ++seen[b.index[static_cast<size_t>(i)]];
      CHECK(b.source_len[static_cast<size_t>(i)] == static_cast<int32_t>(p.source.size()));
      for (int64_t j = 0; j < b.source.cols; ++j)
        CHECK(b.source.at(i, j) == (j < b.source_len[static_cast<size_t>(i)]
                                        ? p.source[static_cast<size_t>(j)]
                                        : Vocab::kPad));
      for (int64_t j = 0; j < b.target.cols; ++j)
        CHECK(b.target.at(i, j) == (j < b.target_len[static_cast<size_t>(i)]
                                        ? p.target[static_cast<size_t>(j)]
                                        : Vocab::kPad));
    }
  }
  CHECK(short_batches == 1);
  for (int s : seen) CHECK(s == 1);
  // Same seed and epoch: same batches; another epoch or seed: another order.
  const auto again = make_batches(data, opt, 0);
  const auto next = make_batches(data, opt, 1);
  bool same = true, differ_epoch = false;
  for (size_t k = 0; k < batches.size(); ++k) {
    same = same && batches[k].index == again[k].index;
    differ_epoch = differ_epoch || batches[k].index != next[k].index;
  }
  CHECK(same);
  CHECK(differ_epoch);
  // Length grouping pays: less padding than batches in corpus order without sorting.
  BatchOptions plain = opt;
  plain.pool_batches = 1;
  plain.shuffle = false;
  auto padding = [&](const std::vector<Batch>& bs) {
    int64_t pad = 0;
    for (const auto& b : bs)
      for (int32_t l : b.source_len) pad += b.source.cols - l;
    return pad;
  };
  // pools of 4 batches sorted by length vs. pools of 1 batch (sorted only within a batch)
  CHECK(padding(batches) < padding(make_batches(data, plain, 0)));
  // Without shuffling: corpus order within each pool and batches in order.
  plain.pool_batches = 1000;
  const auto ordered = make_batches(data, plain, 0);
  std::vector<size_t> idx;
  for (const auto& b : ordered) idx.insert(idx.end(), b.index.begin(), b.index.end());
  for (size_t k = 1; k < idx.size(); ++k)
    CHECK(data[idx[k - 1]].source.size() >= data[idx[k]].source.size());
  // to_tensor: ids as floats
  const Tensor t = batches[0].source.to_tensor();
  CHECK(t.shape() == Shape{batches[0].source.rows, batches[0].source.cols});
  CHECK(t[0] == static_cast<float>(batches[0].source.ids[0]));
  opt.batch_size = 0;
  CHECK_THROWS_AS(make_batches(data, opt), DataError);
}

TEST_CASE(
    "fra.txt: the shared corpus reads cleanly; d2l's vocabulary sizes on its first 640 pairs") {
  std::ifstream probe(shared_fra());
  if (!probe) {
    test::skip(shared_fra() + " is absent");
    return;
  }
  const auto c = read_tsv(shared_fra());
  CHECK(c.size() == 51976);
  CHECK(c.pairs[0].source == "Go.");
  ParallelCorpus head;
  head.pairs.assign(c.pairs.begin(), c.pairs.begin() + 640);
  const Vocab en = Vocab::build(count_side(head, Side::Source, Tokenization::Words), 2);
  const Vocab fr = Vocab::build(count_side(head, Side::Target, Tokenization::Words), 2);
  // SOURCE.md: "~197 (en) / ~210 (fr)" with min_freq 2 and 4 reserved tokens (d2l counts
  // <eos> as a token; here it is reserved).
  CHECK(en.size() == 197);
  CHECK(fr.size() == 210);
  MESSAGE("fra.txt first 640 pairs, min_freq 2: en " << en.size() << ", fr " << fr.size());
  CHECK(fr.id("!") != Vocab::kUnk);
  CHECK(fr.contains("\xE2\x80\xAF!") == false);
}

}  // namespace attnkit_unit_data_corpus_test

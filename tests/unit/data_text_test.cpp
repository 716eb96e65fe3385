// Text primitives and tokenisers of lib/attnkit/data.
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "test_util.h"

// Each test file in a namespace of its own: the unit tests compile as a unity build.
namespace attnkit_unit_data_text_test {

using namespace attnkit;
using namespace attnkit::data;

using Toks = std::vector<std::string>;

TEST_CASE("utf8: valid text, and the offset of each kind of invalid sequence") {
  CHECK(utf8_invalid_at("plain ascii") == std::string_view::npos);
  CHECK(utf8_invalid_at("\xC3\xA9t\xC3\xA9 \xE2\x80\xAF \xF0\x9F\x98\x80") ==
        std::string_view::npos);
  CHECK(utf8_invalid_at("ab\xC3") == 2);            // truncated
  CHECK(utf8_invalid_at("a\x80") == 1);             // lone continuation
  CHECK(utf8_invalid_at("\xC0\xAF") == 0);          // overlong '/'
  CHECK(utf8_invalid_at("x\xE0\x80\xAF") == 1);     // overlong 3-byte
  CHECK(utf8_invalid_at("\xED\xA0\x80") == 0);      // surrogate U+D800
  CHECK(utf8_invalid_at("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(utf8_invalid_at("ok \xFF") == 3);
  const auto cps = utf8_decode("a\xC3\xA9\xE2\x80\xAF\xF0\x9F\x98\x80");
  REQUIRE(cps.size() == 4);
  CHECK(cps[0] == U'a');
  CHECK(cps[1] == 0xE9);
  CHECK(cps[2] == 0x202F);
  CHECK(cps[3] == 0x1F600);
  std::string round;
  for (char32_t c : cps) utf8_append(round, c);
  CHECK(round == "a\xC3\xA9\xE2\x80\xAF\xF0\x9F\x98\x80");
}

TEST_CASE("lower-casing: ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic") {
  CHECK(lower_utf8("HeLLo WORLD 42") == "hello world 42");
  CHECK(lower_utf8("ÉTÉ À ÇA ÖÜÄ ÀÞ") == "été à ça öüä àþ");
  CHECK(lower_utf8("×") == "×");  // U+00D7 is not a letter
  CHECK(lower_utf8("ß") == "ß");  // no upper/lower pair handled
  CHECK(lower_utf8("ŒUVRE ŁÓDŹ ŠŽ Ÿ") == "œuvre łódź šž ÿ");
  CHECK(lower_utf8("ΑΒΓ Ω") == "αβγ ω");
  CHECK(lower_utf8("МОСКВА Ё") == "москва ё");
  CHECK(lower_utf8("日本 😀") == "日本 😀");
}

TEST_CASE("split_lines: LF, CRLF, final line without a newline, BOM, invalid UTF-8") {
  auto l = split_lines("a\r\nb\n\nc", "f.txt");
  REQUIRE(l.size() == 4);
  CHECK(l[0] == "a");
  CHECK(l[1] == "b");
  CHECK(l[2] == "");
  CHECK(l[3] == "c");
  CHECK(split_lines("a\nb\n", "f").size() == 2);
  CHECK(split_lines("", "f").empty());
  CHECK(split_lines("\xEF\xBB\xBFx\n", "f")[0] == "x");
  try {
    split_lines("ok\nok\nbad \xC3(\n", "f.txt");
    FAIL("no error");
  } catch (const DataError& e) {
    CHECK(e.file() == "f.txt");
    CHECK(e.line() == 3);
    CHECK(std::string(e.what()) == "invalid UTF-8 at byte 5 of the line");
  }
}

TEST_CASE("word tokens: d2l's _preprocess and _tokenize") {
  CHECK(tokenize_words("Go.") == Toks{"go", "."});
  CHECK(tokenize_words("Hi, Tom!") == Toks{"hi", ",", "tom", "!"});
  CHECK(tokenize_words("I'm home.") == Toks{"i'm", "home", "."});
  // French: narrow no-break space (U+202F) and no-break space (U+00A0) before ! ? :
  CHECK(tokenize_words("Va\xE2\x80\xAF!") == Toks{"va", "!"});
  CHECK(tokenize_words("Qui\xC2\xA0?") == Toks{"qui", "?"});
  CHECK(tokenize_words("Attention\xC2\xA0: \xC3\x89TAIT") == Toks{"attention", ":", "était"});
  CHECK(preprocess("Va\xE2\x80\xAF!") == "va !");
  // A space is inserted only when the previous character is not a space; runs of spaces
  // give no empty tokens; '?!' is split like d2l (each mark after a non-space).
  CHECK(preprocess("Wow?!") == "wow ? !");
  CHECK(tokenize_words("  a   b . ") == Toks{"a", "b", "."});
  CHECK(tokenize_words("3.5") == Toks{"3", ".5"});  // d2l's rule, digits included
  CHECK(tokenize_words("").empty());
  CHECK(tokenize_words(" ").empty());
}

TEST_CASE("character tokens: one per code point, spaces kept, NBSP replaced") {
  CHECK(tokenize_chars("Été!") == Toks{"é", "t", "é", "!"});
  CHECK(tokenize_chars("a b") == Toks{"a", " ", "b"});
  CHECK(tokenize_chars("a\xE2\x80\xAF?") == Toks{"a", " ", "?"});
  CHECK(tokenize_chars("😀x") == Toks{"\xF0\x9F\x98\x80", "x"});
  CHECK(tokenize("A.", Tokenization::Chars) == Toks{"a", "."});
  CHECK(tokenize("A.", Tokenization::Words) == Toks{"a", "."});
  CHECK(parse_tokenization("chars") == Tokenization::Chars);
  CHECK(parse_tokenization("words") == Tokenization::Words);
  CHECK_THROWS_AS(parse_tokenization("bpe"), ChoiceError);
}

TEST_CASE("split_whitespace: runs of blanks, tabs, CR and Unicode spaces (as Python str.split)") {
  const auto u = split_whitespace("va\xE2\x80\xAF! qui\xC2\xA0?\xE3\x80\x80x \xC3\xA9");
  REQUIRE(u.size() == 6);
  CHECK(u[1] == "!");
  CHECK(u[3] == "?");
  CHECK(u[4] == "x");
  CHECK(u[5] == "\xC3\xA9");
  const auto t = split_whitespace(" a\tb  c\r");
  REQUIRE(t.size() == 3);
  CHECK(t[0] == "a");
  CHECK(t[2] == "c");
  CHECK(split_whitespace("   ").empty());
}

}  // namespace attnkit_unit_data_text_test

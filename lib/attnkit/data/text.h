// Text primitives of the data layer: UTF-8 validation and decoding, line splitting, lower-casing
// and the two tokenisations (the textbook's words, and characters).
//
// Lower-casing covers ASCII A–Z, Latin-1 À–Þ (U+00C0–U+00DE, not ×), Latin Extended-A
// (U+0100–U+017F: Œ→œ, Ł→ł, Š→š, Ÿ→ÿ, ...; İ U+0130 → i), basic Greek Α–Ω and Cyrillic
// Ѐ–Я. Every other code point is kept as it is (no full Unicode case folding, no ß → ss).
//
// Word tokenisation is d2l's `_preprocess` + `_tokenize` (Dive into Deep Learning, 10.5):
// U+202F (narrow no-break space) and U+00A0 (no-break space) become a space, the text is
// lower-cased, a space is inserted before each of , . ! ? not preceded by a space, and the
// result is split on spaces (empty tokens dropped). Character tokenisation applies the same
// space replacement and lower-casing, then makes every code point (the space included) one
// token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnkit::data {

// Byte offset of the first invalid UTF-8 sequence in `s` (overlong forms, surrogates, code
// points above U+10FFFF and truncated sequences are invalid), or npos if `s` is valid.
size_t utf8_invalid_at(std::string_view s);

// The code points of valid UTF-8 (decoding stops at the first invalid byte).
std::vector<char32_t> utf8_decode(std::string_view s);
// Appends the UTF-8 encoding of `cp` to `out`.
void utf8_append(std::string& out, char32_t cp);

// Lower case of one code point (see the coverage above); others are returned unchanged.
char32_t lower_code_point(char32_t cp);
// Lower-cases valid UTF-8 text code point by code point.
std::string lower_utf8(std::string_view s);

// Splits a file's text into lines: "\n" ends a line, a "\r" before it is dropped, a final
// line without "\n" counts, and an empty text has no lines. A UTF-8 byte-order mark at the
// start is skipped. Invalid UTF-8 is a DataError naming `name`, the line and the byte column.
std::vector<std::string_view> split_lines(std::string_view text, const std::string& name);

enum class Tokenization { Words, Chars };
// "words" or "chars"; anything else is a ChoiceError (a model file's reader re-throws it as
// a DataError).
Tokenization parse_tokenization(const std::string& text);
const char* tokenization_name(Tokenization t);

// d2l's _preprocess: spaces for U+202F/U+00A0, lower case, a space before , . ! ? when the
// previous character is not a space.
std::string preprocess(std::string_view text);
// The textbook's words: preprocess, then split on spaces.
std::vector<std::string> tokenize_words(std::string_view text);
// One token per code point of the (space-replaced, lower-cased) text.
std::vector<std::string> tokenize_chars(std::string_view text);
std::vector<std::string> tokenize(std::string_view text, Tokenization t);

// Splits on runs of white space as Python's str.split() does (and so sacreBLEU): ASCII
// blanks and controls U+0009–U+000D, U+001C–U+001F, and U+0085, U+00A0, U+1680,
// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. These are BLEU's tokens.
std::vector<std::string_view> split_whitespace(std::string_view text);

}  // namespace attnkit::data

// A 5 x 7 bitmap font for attnkit's plots: the printable ASCII characters (32..126), the
// accented letters of Western European languages (Latin-1's but Ð ð Þ þ, with Œ œ Ÿ) and
// their texts' punctuation (« » ‘ ’ “ ” – — … ¡ ¿, the no-break spaces); glyph rows top to
// bottom, bit 4 the leftmost pixel. Any other code point is drawn as a hollow box (the SVG
// output keeps the real UTF-8 text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnkit::plot {

constexpr int kGlyphW = 5, kGlyphH = 7, kAdvance = 6;  // advance: glyph + 1 px of space

// The 7 rows of the glyph of code point c.
const uint8_t* glyph(uint32_t c);

// Code points of UTF-8 text; an invalid byte becomes U+FFFD.
std::vector<uint32_t> utf8_decode(const std::string& s);

}  // namespace attnkit::plot

#include "attnkit/data/text.h"

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"

namespace attnkit::data {

namespace {

// Length of the valid sequence starting at s[i] and its code point; 0 if invalid.
size_t decode_one(std::string_view s, size_t i, char32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  char32_t v, min;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, v = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, v = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong 2-byte) or F5..FF
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

// White space as Python's str.split() sees it (what sacreBLEU splits tokens on).
bool is_unicode_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Space replacement and lower-casing shared by both tokenisations.
std::vector<char32_t> normalise(std::string_view text) {
  std::vector<char32_t> cps = utf8_decode(text);
  for (char32_t& c : cps) c = (c == 0x202F || c == 0xA0) ? U' ' : lower_code_point(c);
  return cps;
}

}  // namespace

size_t utf8_invalid_at(std::string_view s) {
  char32_t cp;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = decode_one(s, i, &cp);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::vector<char32_t> utf8_decode(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  char32_t cp;
  for (size_t i = 0; i < s.size();) {
    const size_t n = decode_one(s, i, &cp);
    if (n == 0) break;
    out.push_back(cp);
    i += n;
  }
  return out;
}

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

char32_t lower_code_point(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;  // À..Þ except ×
  if (c == 0x130) return U'i';                             // İ
  if (c == 0x178) return 0xFF;                             // Ÿ → ÿ
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
    return (c % 2 == 0) ? c + 1 : c;  // even: capital
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
    return (c % 2 == 1) ? c + 1 : c;                          // odd: capital
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;  // Α..Ω
  if (c >= 0x410 && c <= 0x42F) return c + 32;                // А..Я
  if (c >= 0x400 && c <= 0x40F) return c + 80;                // Ѐ..Џ
  return c;
}

std::string lower_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : utf8_decode(s)) utf8_append(out, lower_code_point(c));
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text, const std::string& name) {
  std::vector<std::string_view> lines;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  long number = 0;
  while (!text.empty()) {
    ++number;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t bad = utf8_invalid_at(line);
    if (bad != std::string_view::npos)
      throw DataError("invalid UTF-8 at byte " + std::to_string(bad + 1) + " of the line", name,
                      number);
    lines.push_back(line);
  }
  return lines;
}

Tokenization parse_tokenization(const std::string& text) {
  return parse_choice<Tokenization>("tokenisation", text,
                                    {
                                        {"words", Tokenization::Words},
                                        {"chars", Tokenization::Chars},
                                    });
}

const char* tokenization_name(Tokenization t) {
  return t == Tokenization::Words ? "words" : "chars";
}

std::string preprocess(std::string_view text) {
  const std::vector<char32_t> cps = normalise(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    if (i > 0 && (c == ',' || c == '.' || c == '!' || c == '?') && cps[i - 1] != U' ') out += ' ';
    utf8_append(out, c);
  }
  return out;
}

std::vector<std::string> tokenize_words(std::string_view text) {
  const std::string p = preprocess(text);
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= p.size()) {
    size_t sp = p.find(' ', start);
    if (sp == std::string::npos) sp = p.size();
    if (sp > start) out.emplace_back(p, start, sp - start);
    start = sp + 1;
  }
  return out;
}

std::vector<std::string> tokenize_chars(std::string_view text) {
  std::vector<std::string> out;
  for (char32_t c : normalise(text)) {
    out.emplace_back();
    utf8_append(out.back(), c);
  }
  return out;
}

std::vector<std::string> tokenize(std::string_view text, Tokenization t) {
  return t == Tokenization::Words ? tokenize_words(text) : tokenize_chars(text);
}

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0, start = 0;
  bool in_token = false;
  char32_t cp;
  while (i < text.size()) {
    size_t n = decode_one(text, i, &cp);
    if (n == 0) {  // an invalid byte is part of a token
      n = 1;
      cp = 0xFFFD;
    }
    if (is_unicode_space(cp)) {
      if (in_token) out.push_back(text.substr(start, i - start));
      in_token = false;
    } else if (!in_token) {
      start = i;
      in_token = true;
    }
    i += n;
  }
  if (in_token) out.push_back(text.substr(start));
  return out;
}

}  // namespace attnkit::data

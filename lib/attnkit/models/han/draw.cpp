#include "attnkit/models/han/draw.h"

#include <algorithm>
#include <cstdio>

#include "attnkit/core/error.h"
#include "attnkit/plot/font.h"

namespace attnkit::models::han {

namespace {

constexpr int kScale = 2, kAdv = plot::kAdvance * kScale, kLine = 22, kWidth = 1100, kMargin = 16,
              kBar = 40, kTextX = kMargin + kBar + 10;
const plot::Rgb kBlue{40, 90, 230}, kRed{220, 40, 40}, kBlack{0, 0, 0}, kGrey{90, 90, 90};

plot::Rgb mix(plot::Rgb to, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  auto m = [&](uint8_t w, uint8_t c) {
    return static_cast<uint8_t>(static_cast<float>(w) + t * (static_cast<float>(c) - w) + 0.5f);
  };
  return {m(255, to.r), m(255, to.g), m(255, to.b)};
}

// One document's values: per sentence, its weight and its words' shades (both unscaled).
struct Shades {
  std::vector<float> sent;                // empty for flat attention
  std::vector<std::vector<float>> words;  // per sentence
  float smax = 0, wmax = 0;
};

Shades shades(const FigureDoc& d) {
  const int64_t S = static_cast<int64_t>(d.sentences.size());
  const bool flat = d.sentences_w.size() == 0;
  if (!flat && (d.sentences_w.size() != S || d.words.rank() != 2 || d.words.dim(0) != S))
    throw ShapeError("figure: the weights do not match the document's sentences");
  Shades s;
  int64_t at = 0;  // flat: position in the one row
  for (int64_t i = 0; i < S; ++i) {
    const auto& ws = d.sentences[static_cast<size_t>(i)];
    const float sw = flat ? 1.0f : d.sentences_w[i];
    if (!flat) s.sent.push_back(sw), s.smax = std::max(s.smax, sw);
    std::vector<float> v;
    for (size_t k = 0; k < ws.size(); ++k) {
      const int64_t col = flat ? at++ : static_cast<int64_t>(k);
      const int64_t row = flat ? 0 : i;
      if (d.words.rank() != 2 || col >= d.words.dim(1))
        throw ShapeError("figure: fewer word weights than words");
      v.push_back(d.words.at(row, col) * sw);
      s.wmax = std::max(s.wmax, v.back());
    }
    s.words.push_back(std::move(v));
  }
  if (s.smax <= 0) s.smax = 1;
  if (s.wmax <= 0) s.wmax = 1;
  return s;
}

class Canvas {
 public:
  explicit Canvas(int w, int h) {
    img_.width = w, img_.height = h;
    img_.rgb.assign(static_cast<size_t>(w) * static_cast<size_t>(h) * 3, 255);
  }
  void rect(int x, int y, int w, int h, plot::Rgb c) {
    for (int yy = std::max(0, y); yy < std::min(img_.height, y + h); ++yy)
      for (int xx = std::max(0, x); xx < std::min(img_.width, x + w); ++xx) {
        const size_t i =
            (static_cast<size_t>(yy) * static_cast<size_t>(img_.width) + static_cast<size_t>(xx)) *
            3;
        img_.rgb[i] = c.r, img_.rgb[i + 1] = c.g, img_.rgb[i + 2] = c.b;
      }
  }
  int text(int x, int y, const std::string& s, plot::Rgb c) {
    for (uint32_t cp : plot::utf8_decode(s)) {
      const uint8_t* g = plot::glyph(cp);
      for (int r = 0; r < plot::kGlyphH; ++r)
        for (int b = 0; b < plot::kGlyphW; ++b)
          if (g[r] & (0x10 >> b)) rect(x + b * kScale, y + r * kScale, kScale, kScale, c);
      x += kAdv;
    }
    return x;
  }
  plot::Image take() { return std::move(img_); }

 private:
  plot::Image img_;
};

int text_width(const std::string& s) {
  return static_cast<int>(plot::utf8_decode(s).size()) * kAdv;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Lays out (and draws, when c is given) everything; returns the height used.
int layout(const std::vector<FigureDoc>& docs, Canvas* c) {
  int y = kMargin;
  auto scale = [&](int x, plot::Rgb to, const std::string& label) {
    if (c) {
      for (int i = 0; i < 100; ++i) c->rect(x + i * 2, y, 2, 14, mix(to, i / 99.0f));
      c->text(x + 210, y, label, kBlack);
    }
  };
  if (c) c->text(kMargin, y, "Hierarchical attention (Yang et al. 2016, Figure 5)", kBlack);
  y += kLine;
  if (c) {
    c->rect(kMargin, y, 200, 14, mix(kGrey, 0.15f));
    c->rect(kMargin, y, 100, 14, kRed);
    c->text(kMargin + 210, y, "left bar: sentence weight, its length 0 .. 1 (here 0.5)", kBlack);
  }
  y += kLine;
  scale(kMargin, kBlue, "word weight x sentence weight, 0 .. the document's largest");
  y += kLine + 8;
  for (const FigureDoc& d : docs) {
    const Shades s = shades(d);
    std::string head = d.title;
    if (!s.sent.empty())
      head +=
          "   (largest: sentence " + fmt("%.3f", s.smax) + ", word " + fmt("%.3f", s.wmax) + ")";
    else
      head += "   (largest word weight " + fmt("%.3f", s.wmax) + ")";
    if (c) c->text(kMargin, y, head, kGrey);
    y += kLine;
    for (size_t i = 0; i < d.sentences.size(); ++i) {
      const int top = y;
      int x = kTextX;
      for (size_t k = 0; k < d.sentences[i].size(); ++k) {
        const std::string& w = d.sentences[i][k];
        const int ww = text_width(w);
        if (x + ww > kWidth - kMargin && x > kTextX) x = kTextX, y += kLine;
        if (c) {
          c->rect(x - 2, y - 3, ww + 4, kLine - 2, mix(kBlue, s.words[i][k] / s.wmax));
          c->text(x, y, w, kBlack);
        }
        x += ww + kAdv;
      }
      y += kLine;
      if (c && !s.sent.empty()) {
        c->rect(kMargin, top - 3, kBar, y - top - 2, mix(kGrey, 0.15f));
        c->rect(kMargin, top - 3, std::max(1, static_cast<int>(kBar * s.sent[i] + 0.5f)),
                y - top - 2, kRed);
      }
    }
    y += kLine / 2;
  }
  return y + kMargin;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += ch;
    }
  }
  return o;
}

std::string rgba(plot::Rgb c, float a) {
  char b[64];
  std::snprintf(b, sizeof b, "rgba(%d,%d,%d,%.3f)", c.r, c.g, c.b, std::clamp(a, 0.0f, 1.0f));
  return b;
}

}  // namespace

plot::Image figure_png(const std::vector<FigureDoc>& docs) {
  Canvas c(kWidth, layout(docs, nullptr));
  layout(docs, &c);
  return c.take();
}

std::string figure_html(const std::vector<FigureDoc>& docs) {
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Hierarchical attention</title>\n"
      "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto}"
      ".doc{margin:1.5em 0}.t{color:#555;margin:.3em 0}"
      ".s{display:flex;align-items:stretch;margin:2px 0}"
      ".slot{flex:0 0 40px;margin-right:8px;background:#eee;position:relative}"
      ".bar{position:absolute;left:0;top:0;bottom:0}.w{padding:1px 2px;line-height:1.6}"
      ".scale{display:inline-block;width:200px;height:14px;vertical-align:middle;margin-right:.5em}"
      "</style></head><body>\n<h1>Hierarchical attention</h1>\n<p class=\"legend\">"
      "<span class=\"scale\" id=\"sentence-scale\" style=\"background:linear-gradient(to right," +
      rgba(kRed, 1) +
      " 50%,#eee 50%)\"></span>sentence weight: the length of the bar on the "
      "left, 0 to 1 (here 0.5)<br>\n<span class=\"scale\" id=\"word-scale\" style=\"background:"
      "linear-gradient(to right,#fff," +
      rgba(kBlue, 1) +
      ")\"></span>word weight &times; "
      "sentence weight (the word's ground), 0 to the document's largest. Hover for the "
      "values.</p>\n";
  for (const FigureDoc& d : docs) {
    const Shades s = shades(d);
    h += "<div class=\"doc\"><div class=\"t\">" + escape(d.title);
    if (!s.sent.empty())
      h += " (largest: sentence " + fmt("%.3f", s.smax) + ", word " + fmt("%.3f", s.wmax) + ")";
    else
      h += " (flat attention; largest word weight " + fmt("%.3f", s.wmax) + ")";
    h += "</div>\n";
    for (size_t i = 0; i < d.sentences.size(); ++i) {
      h += "<div class=\"s\">";
      if (!s.sent.empty())
        h += "<span class=\"slot\" title=\"sentence weight " + fmt("%.4f", s.sent[i]) +
             "\"><span class=\"bar\" style=\"width:" + fmt("%.1f", 100.0 * s.sent[i]) +
             "%;background:" + rgba(kRed, 1) + "\"></span></span>";
      h += "<span>";
      for (size_t k = 0; k < d.sentences[i].size(); ++k)
        h += "<span class=\"w\" title=\"" + fmt("%.4f", s.words[i][k]) +
             "\" style=\"background:" + rgba(kBlue, s.words[i][k] / s.wmax) + "\">" +
             escape(d.sentences[i][k]) + "</span> ";
      h += "</span></div>\n";
    }
    h += "</div>\n";
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace attnkit::models::han

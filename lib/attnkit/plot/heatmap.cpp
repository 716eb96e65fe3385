#include "attnkit/plot/heatmap.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/plot/font.h"

namespace attnkit::plot {

namespace {

constexpr int kMargin = 10, kPad = 4, kCaption = 12, kTitleScale = 2;
const Rgb kBackground{255, 255, 255}, kInk{0, 0, 0}, kMasked{200, 200, 200};
const Rgb kViridis[5] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};

int text_width(const std::string& s, int scale = 1) {
  return static_cast<int>(utf8_decode(s).size()) * kAdvance * scale;
}
int max_width(const std::vector<std::string>& v) {
  int w = 0;
  for (const auto& s : v) w = std::max(w, text_width(s));
  return w;
}
// A column label is written upright when it fits its cell's width (one character: the demo's
// dates), else rotated a quarter turn; the height the labels take above the cells.
bool upright(const std::string& label, int cell) { return text_width(label) <= cell; }
int col_label_height(const std::vector<std::string>& cols, int cell) {
  int h = 0;
  for (const std::string& c : cols) h = std::max(h, upright(c, cell) ? kGlyphH : text_width(c));
  return h;
}

// Shape of the tensor as (matrices, rows, cols) and whether it has heads.
void dims_of(const Tensor& w, int64_t& items, int64_t& heads, int64_t& rows, int64_t& cols) {
  items = heads = 1;
  switch (w.rank()) {
    case 1:
      rows = 1;
      cols = w.dim(0);
      break;
    case 2:
      rows = w.dim(0);
      cols = w.dim(1);
      break;
    case 3:
      items = w.dim(0);
      rows = w.dim(1);
      cols = w.dim(2);
      break;
    case 4:
      items = w.dim(0);
      heads = w.dim(1);
      rows = w.dim(2);
      cols = w.dim(3);
      break;
    default:
      throw ShapeError("cannot plot a tensor of shape " + shape_str(w.shape()));
  }
}

std::string label(float v) { return io::format_number(v, 3); }

void set(Image& im, int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= im.width || y >= im.height) return;
  const size_t i =
      (static_cast<size_t>(y) * static_cast<size_t>(im.width) + static_cast<size_t>(x)) * 3;
  im.rgb[i] = c.r;
  im.rgb[i + 1] = c.g;
  im.rgb[i + 2] = c.b;
}
void fill(Image& im, int x, int y, int w, int h, Rgb c) {
  for (int yy = y; yy < y + h; ++yy)
    for (int xx = x; xx < x + w; ++xx) set(im, xx, yy, c);
}
// Text with its top-left corner at (x, y); vertical text runs bottom to top from (x, y) as
// its bottom-left corner.
void text(Image& im, int x, int y, const std::string& s, int scale = 1, bool vertical = false) {
  int pos = 0;
  for (uint32_t c : utf8_decode(s)) {
    const uint8_t* g = glyph(c);
    for (int r = 0; r < kGlyphH; ++r)
      for (int b = 0; b < kGlyphW; ++b) {
        if (!(g[r] & (0x10 >> b))) continue;
        for (int sy = 0; sy < scale; ++sy)
          for (int sx = 0; sx < scale; ++sx) {
            if (!vertical)
              set(im, x + (pos + b) * scale + sx, y + r * scale + sy, kInk);
            else  // rotated 90° counter-clockwise
              set(im, x + r * scale + sy, y - (pos + b) * scale - sx, kInk);
          }
      }
    pos += kAdvance;
  }
}

float value_t(const Layout& l, float v) { return (v - l.vmin) / (l.vmax - l.vmin); }

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string hex(Rgb c) {
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", c.r, c.g, c.b);
  return b;
}

}  // namespace

Rgb colour(float t) {
  if (!(t >= 0.0f)) t = 0.0f;
  if (t > 1.0f) t = 1.0f;
  const float x = t * 4.0f;
  const int i = std::min(3, static_cast<int>(x));
  const float f = x - static_cast<float>(i);
  auto mix = [&](uint8_t a, uint8_t b) {
    return static_cast<uint8_t>(std::lround(a + (static_cast<float>(b) - a) * f));
  };
  return {mix(kViridis[i].r, kViridis[i + 1].r), mix(kViridis[i].g, kViridis[i + 1].g),
          mix(kViridis[i].b, kViridis[i + 1].b)};
}

namespace {
// "0", "", ..., "k", "", ...: labels at every k-th index, k the smallest of 1, 2, 5, 10, 20,
// ... whose spacing (k cells) leaves a glyph's height and a gap between two labels.
std::vector<std::string> index_ticks(int64_t n, int cell) {
  int64_t k = 1;
  for (int64_t m = 1;; m *= 10) {
    if (m * cell >= kGlyphH + 3) {
      k = m;
      break;
    }
    if (2 * m * cell >= kGlyphH + 3) {
      k = 2 * m;
      break;
    }
    if (5 * m * cell >= kGlyphH + 3) {
      k = 5 * m;
      break;
    }
  }
  std::vector<std::string> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i += k) t[static_cast<size_t>(i)] = std::to_string(i);
  return t;
}
}  // namespace

Layout heatmap_layout(const Tensor& w, const HeatmapSpec& spec) {
  Layout l;
  int64_t items, heads;
  dims_of(w, items, heads, l.n_rows, l.n_cols);
  if (w.size() == 0) throw ShapeError("nothing to plot: shape " + shape_str(w.shape()));
  if (!spec.rows.empty() && static_cast<int64_t>(spec.rows.size()) != l.n_rows)
    throw DataError(std::to_string(spec.rows.size()) + " row tokens but the weights have " +
                    std::to_string(l.n_rows) + " rows");
  if (!spec.cols.empty() && static_cast<int64_t>(spec.cols.size()) != l.n_cols)
    throw DataError(std::to_string(spec.cols.size()) + " column tokens but the weights have " +
                    std::to_string(l.n_cols) + " columns");
  bool any = false;
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < w.size(); ++i)
    if (std::isfinite(w[i])) {
      lo = any ? std::min(lo, w[i]) : w[i];
      hi = any ? std::max(hi, w[i]) : w[i];
      any = true;
    }
  l.vmin = std::min(0.0f, lo);
  l.vmax = hi > l.vmin ? hi : l.vmin + 1.0f;
  // Cells: big enough for a label (7 px glyphs) when there are tokens, at most 24 px.
  const bool labels = !spec.rows.empty() || !spec.cols.empty();
  l.cell = static_cast<int>(
      std::clamp<int64_t>(std::min(1200 / l.n_cols, 720 / l.n_rows), labels ? 12 : 2, 24));
  // A thin strip (a few rows of many columns: an NTM head's weighting, one query's scores)
  // gets taller cells, up to 3 times their width, so that the panel is about a sixth as tall
  // as it is wide rather than a line.
  l.cell_h = static_cast<int>(std::clamp<int64_t>(l.n_cols * l.cell / (6 * l.n_rows), l.cell,
                                                  3 * static_cast<int64_t>(l.cell)));
  l.row_labels = spec.rows.empty() ? index_ticks(l.n_rows, l.cell_h) : spec.rows;
  l.col_labels = spec.cols.empty() ? index_ticks(l.n_cols, l.cell) : spec.cols;
  const int left = max_width(l.row_labels) + kPad;
  const int top = col_label_height(l.col_labels, l.cell) + kPad;
  const int64_t panels = items * heads;
  const int caption = panels > 1 ? kCaption : 0;
  const int pw = left + static_cast<int>(l.n_cols) * l.cell;
  const int ph = caption + top + static_cast<int>(l.n_rows) * l.cell_h;
  const int grid_cols = static_cast<int>(std::min<int64_t>(panels, heads > 1 ? heads : 4));
  const int grid_rows = static_cast<int>((panels + grid_cols - 1) / grid_cols);
  const int title_h = spec.title.empty() ? 0 : kGlyphH * kTitleScale + kMargin;
  for (int64_t p = 0; p < panels; ++p) {
    const int gx = static_cast<int>(p % grid_cols), gy = static_cast<int>(p / grid_cols);
    Panel pn;
    pn.index = p;
    pn.x = kMargin + gx * (pw + 2 * kMargin) + left;
    pn.y = kMargin + title_h + gy * (ph + kMargin) + caption + top;
    if (panels > 1)
      pn.caption = heads > 1
                       ? "item " + std::to_string(p / heads) + ", head " + std::to_string(p % heads)
                       : "item " + std::to_string(p);
    l.panels.push_back(pn);
  }
  const int grid_w = grid_cols * (pw + 2 * kMargin) - kMargin;
  const int grid_h = grid_rows * (ph + kMargin) - kMargin;
  l.legend_x = kMargin + grid_w + kMargin;
  l.legend_y = kMargin + title_h + kGlyphH;
  l.legend_w = 12;
  l.legend_h = std::max(60, std::min(240, grid_h - 2 * kGlyphH));
  const int legend_text = std::max(text_width(label(l.vmin)), text_width(label(l.vmax)));
  l.width = std::max(l.legend_x + l.legend_w + kPad + legend_text + kMargin,
                     kMargin + text_width(spec.title, kTitleScale) + kMargin);
  l.height =
      std::max(kMargin + title_h + grid_h + kMargin, l.legend_y + l.legend_h + kGlyphH + kMargin);
  return l;
}

Image render_heatmap(const Tensor& w, const HeatmapSpec& spec, const Layout& l) {
  Image im;
  im.width = l.width;
  im.height = l.height;
  im.rgb.assign(static_cast<size_t>(im.width) * static_cast<size_t>(im.height) * 3, 255);
  fill(im, 0, 0, im.width, im.height, kBackground);
  if (!spec.title.empty()) text(im, kMargin, kMargin, spec.title, kTitleScale);
  const int64_t per = l.n_rows * l.n_cols;
  for (const Panel& p : l.panels) {
    const float* m = w.data() + p.index * per;
    for (int64_t i = 0; i < l.n_rows; ++i)
      for (int64_t j = 0; j < l.n_cols; ++j) {
        const float v = m[i * l.n_cols + j];
        fill(im, p.x + static_cast<int>(j) * l.cell, p.y + static_cast<int>(i) * l.cell_h, l.cell,
             l.cell_h, std::isfinite(v) ? colour(value_t(l, v)) : kMasked);
      }
    for (size_t i = 0; i < l.row_labels.size(); ++i)
      text(im, p.x - kPad - text_width(l.row_labels[i]),
           p.y + static_cast<int>(i) * l.cell_h + (l.cell_h - kGlyphH) / 2, l.row_labels[i]);
    for (size_t j = 0; j < l.col_labels.size(); ++j) {
      if (upright(l.col_labels[j], l.cell))
        text(im,
             p.x + static_cast<int>(j) * l.cell + (l.cell - text_width(l.col_labels[j]) + 1) / 2,
             p.y - kPad - kGlyphH, l.col_labels[j]);
      else
        text(im, p.x + static_cast<int>(j) * l.cell + (l.cell - kGlyphH) / 2, p.y - kPad - 1,
             l.col_labels[j], 1, true);
    }
    if (!p.caption.empty()) {
      const int top = col_label_height(l.col_labels, l.cell) + kPad;
      text(im, p.x, p.y - top - kCaption + 2, p.caption);
    }
  }
  for (int y = 0; y < l.legend_h; ++y)
    fill(im, l.legend_x, l.legend_y + y, l.legend_w, 1,
         colour(1.0f - static_cast<float>(y) / static_cast<float>(std::max(1, l.legend_h - 1))));
  text(im, l.legend_x + l.legend_w + kPad, l.legend_y, label(l.vmax));
  text(im, l.legend_x + l.legend_w + kPad, l.legend_y + l.legend_h - kGlyphH, label(l.vmin));
  return im;
}

std::string encode_png(const Image& image) {
  png_image pi{};
  pi.version = PNG_IMAGE_VERSION;
  pi.width = static_cast<png_uint_32>(image.width);
  pi.height = static_cast<png_uint_32>(image.height);
  pi.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&pi, nullptr, &size, 0, image.rgb.data(), 0, nullptr))
    throw Error(std::string("libpng: ") + pi.message);
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&pi, out.data(), &size, 0, image.rgb.data(), 0, nullptr))
    throw Error(std::string("libpng: ") + pi.message);
  out.resize(size);
  return out;
}

std::string heatmap_svg(const Tensor& w, const HeatmapSpec& spec, const Layout& l) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << l.width << "\" height=\"" << l.height
    << "\" viewBox=\"0 0 " << l.width << " " << l.height << "\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
    << "<g font-family=\"monospace\" font-size=\"9\" fill=\"#000000\">\n";
  if (!spec.title.empty())
    o << "<text x=\"" << kMargin << "\" y=\"" << kMargin + kGlyphH * kTitleScale
      << "\" font-size=\"16\">" << xml_escape(spec.title) << "</text>\n";
  const int64_t per = l.n_rows * l.n_cols;
  for (const Panel& p : l.panels) {
    const float* m = w.data() + p.index * per;
    o << "<g shape-rendering=\"crispEdges\">\n";
    for (int64_t i = 0; i < l.n_rows; ++i)
      for (int64_t j = 0; j < l.n_cols; ++j) {
        const float v = m[i * l.n_cols + j];
        o << "<rect x=\"" << p.x + j * l.cell << "\" y=\"" << p.y + i * l.cell_h << "\" width=\""
          << l.cell << "\" height=\"" << l.cell_h << "\" fill=\""
          << hex(std::isfinite(v) ? colour(value_t(l, v)) : kMasked) << "\"><title>"
          << io::format_number(v) << "</title></rect>\n";
      }
    o << "</g>\n";
    for (size_t i = 0; i < l.row_labels.size(); ++i)
      if (!l.row_labels[i].empty())
        o << "<text x=\"" << p.x - kPad << "\" y=\""
          << p.y + static_cast<int>(i) * l.cell_h + l.cell_h / 2
          << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << xml_escape(l.row_labels[i])
          << "</text>\n";
    for (size_t j = 0; j < l.col_labels.size(); ++j) {
      if (l.col_labels[j].empty()) continue;
      const int x = p.x + static_cast<int>(j) * l.cell + l.cell / 2, y = p.y - kPad;
      if (upright(l.col_labels[j], l.cell))
        o << "<text x=\"" << x << "\" y=\"" << y << "\" text-anchor=\"middle\">"
          << xml_escape(l.col_labels[j]) << "</text>\n";
      else
        o << "<text x=\"" << x << "\" y=\"" << y << "\" transform=\"rotate(-90 " << x << " " << y
          << ")\" dominant-baseline=\"middle\">" << xml_escape(l.col_labels[j]) << "</text>\n";
    }
    if (!p.caption.empty()) {
      const int top = spec.cols.empty() ? 0 : col_label_height(spec.cols, l.cell) + kPad;
      o << "<text x=\"" << p.x << "\" y=\"" << p.y - top - 3 << "\">" << p.caption << "</text>\n";
    }
  }
  o << "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int s = 0; s < 5; ++s)
    o << "<stop offset=\"" << s * 25 << "%\" stop-color=\"" << hex(kViridis[s]) << "\"/>";
  o << "</linearGradient></defs>\n"
    << "<rect x=\"" << l.legend_x << "\" y=\"" << l.legend_y << "\" width=\"" << l.legend_w
    << "\" height=\"" << l.legend_h << "\" fill=\"url(#scale)\"/>\n"
    << "<text x=\"" << l.legend_x + l.legend_w + kPad << "\" y=\"" << l.legend_y + kGlyphH << "\">"
    << label(l.vmax) << "</text>\n"
    << "<text x=\"" << l.legend_x + l.legend_w + kPad << "\" y=\"" << l.legend_y + l.legend_h
    << "\">" << label(l.vmin) << "</text>\n"
    << "</g>\n</svg>\n";
  return o.str();
}

}  // namespace attnkit::plot

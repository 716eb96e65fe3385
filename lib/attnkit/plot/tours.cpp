#include "attnkit/plot/tours.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnkit/core/error.h"
#include "attnkit/plot/font.h"

namespace attnkit::plot {

namespace {
constexpr int kPanelW = 220, kPanelH = 240, kPad = 12, kBox = 196, kPerRow = 4;
constexpr int kLegend = 22;  // the legend's strip above the panels

// Coordinates [0, 1) (or the problem's range) to the panel's pixels.
struct Frame {
  double x0 = 0, y0 = 0, scale = 1;
  int ox = 0, oy = 0;
  double px(double x) const { return ox + kPad + (x - x0) * scale; }
  double py(double y) const { return oy + kPad + kBox - (y - y0) * scale; }
};

Frame frame_of(const data::PtrProblem& p, int index) {
  if (p.dim != 2 || p.n() < 1) throw DataError("only problems of points in the plane are drawn");
  double lo_x = 0, lo_y = 0, hi_x = 1, hi_y = 1;  // at least the unit square
  for (int64_t i = 0; i < p.n(); ++i) {
    lo_x = std::min(lo_x, p.x(i, 0)), hi_x = std::max(hi_x, p.x(i, 0));
    lo_y = std::min(lo_y, p.x(i, 1)), hi_y = std::max(hi_y, p.x(i, 1));
  }
  Frame f;
  f.x0 = lo_x, f.y0 = lo_y;
  f.scale = kBox / std::max(hi_x - lo_x, hi_y - lo_y);
  f.ox = (index % kPerRow) * kPanelW;
  f.oy = kLegend + (index / kPerRow) * kPanelH;
  return f;
}

int columns(size_t n) {
  return static_cast<int>(std::max<size_t>(2, std::min<size_t>(n, kPerRow)));
}
int rows(size_t n) { return static_cast<int>((n + kPerRow - 1) / kPerRow); }

// The points of a degenerate output, ringed in red so that it shows: one that visits a point
// twice (a closing return to its first point aside) or fewer than 3 points (an untrained
// model's "5 5" draws no line). 0-based; indices out of range are skipped. None otherwise.
std::vector<int64_t> flagged(const data::PtrProblem& p, const std::vector<int32_t>& y) {
  std::vector<int> seen(static_cast<size_t>(p.n()), 0);
  bool twice = false;
  int64_t distinct = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] < 1 || y[i] > p.n()) continue;
    if (i + 1 == y.size() && i > 0 && y[i] == y[0]) continue;  // closing the polygon
    int& k = seen[static_cast<size_t>(y[i] - 1)];
    twice = twice || k > 0;
    distinct += k == 0;
    ++k;
  }
  std::vector<int64_t> out;
  if (!twice && distinct >= 3) return out;
  for (int64_t i = 0; i < p.n(); ++i)
    if (seen[static_cast<size_t>(i)] > 0) out.push_back(i);
  return out;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

// Image drawing.
void put(Image& im, int x, int y, Rgb c) {
  if (x < 0 || y < 0 || x >= im.width || y >= im.height) return;
  const size_t i =
      (static_cast<size_t>(y) * static_cast<size_t>(im.width) + static_cast<size_t>(x)) * 3;
  im.rgb[i] = c.r, im.rgb[i + 1] = c.g, im.rgb[i + 2] = c.b;
}
void line(Image& im, double x0, double y0, double x1, double y1, int width, Rgb c) {
  const int steps =
      static_cast<int>(std::ceil(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0)))) + 1;
  for (int s = 0; s <= steps; ++s) {
    const double t = static_cast<double>(s) / steps;
    const int x = static_cast<int>(std::lround(x0 + t * (x1 - x0)));
    const int y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
    for (int dx = -(width / 2); dx <= (width - 1) / 2; ++dx)
      for (int dy = -(width / 2); dy <= (width - 1) / 2; ++dy) put(im, x + dx, y + dy, c);
  }
}
void disc(Image& im, double cx, double cy, int r, Rgb c) {
  for (int dx = -r; dx <= r; ++dx)
    for (int dy = -r; dy <= r; ++dy)
      if (dx * dx + dy * dy <= r * r)
        put(im, static_cast<int>(std::lround(cx)) + dx, static_cast<int>(std::lround(cy)) + dy, c);
}
void ring(Image& im, double cx, double cy, int r, Rgb c) {
  for (int dx = -r - 1; dx <= r + 1; ++dx)
    for (int dy = -r - 1; dy <= r + 1; ++dy) {
      const int d2 = dx * dx + dy * dy;
      if (d2 <= (r + 1) * (r + 1) && d2 >= (r - 1) * (r - 1))
        put(im, static_cast<int>(std::lround(cx)) + dx, static_cast<int>(std::lround(cy)) + dy, c);
    }
}
void text(Image& im, int x, int y, const std::string& s, Rgb c) {
  for (uint32_t cp : utf8_decode(s)) {
    const uint8_t* g = glyph(cp);
    for (int r = 0; r < kGlyphH; ++r)
      for (int k = 0; k < kGlyphW; ++k)
        if (g[r] >> (4 - k) & 1) put(im, x + k, y + r, c);
    x += kAdvance;
  }
}
constexpr Rgb kAnswer{190, 190, 190}, kPrediction{214, 39, 40}, kPoint{31, 31, 31},
    kFrame{220, 220, 220};
}  // namespace

std::string tour_caption(data::PtrTask task, int64_t number, const data::PtrProblem& p,
                         const std::vector<int32_t>& y) {
  char buf[160];
  std::string s = "#" + std::to_string(number) + " n=" + std::to_string(p.n());
  if (y == p.answer) return s + " exact";
  if (!data::valid_output(task, p, y)) return s + " invalid";
  if (task == data::PtrTask::Tsp) {
    std::snprintf(buf, sizeof buf, " tour %.3f (answer %.3f)", data::path_length(p, y),
                  data::path_length(p, p.answer));
    return s + buf;
  }
  if (task == data::PtrTask::Hull) {
    std::snprintf(buf, sizeof buf, " area %.3f of %.3f", data::polygon_area(p, y),
                  data::polygon_area(p, p.answer));
    return s + buf;
  }
  return s + " wrong";
}

std::string tours_svg(const std::vector<TourPanel>& panels) {
  if (panels.empty()) throw DataError("no problems to draw");
  const int W = columns(panels.size()) * kPanelW, H = kLegend + rows(panels.size()) * kPanelH;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(W) +
                  "\" height=\"" + std::to_string(H) + "\" viewBox=\"0 0 " + std::to_string(W) +
                  " " + std::to_string(H) +
                  "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  char buf[256];
  // The legend: what the grey and the red paths and a red ring are.
  char legend[768];
  std::snprintf(legend, sizeof legend,
                "<g font-family=\"sans-serif\" font-size=\"11\">"
                "<line x1=\"%d\" y1=\"11\" x2=\"%d\" y2=\"11\" stroke=\"#bebebe\" "
                "stroke-width=\"5\"/><text x=\"%d\" y=\"15\">answer</text>"
                "<line x1=\"%d\" y1=\"11\" x2=\"%d\" y2=\"11\" stroke=\"#d62728\" "
                "stroke-width=\"1.5\"/><text x=\"%d\" y=\"15\">output</text>"
                "<circle cx=\"%d\" cy=\"11\" r=\"5\" fill=\"none\" stroke=\"#d62728\"/>"
                "<text x=\"%d\" y=\"15\">a degenerate output's points</text></g>\n",
                kPad, kPad + 24, kPad + 30, kPad + 90, kPad + 114, kPad + 120, kPad + 185,
                kPad + 195);
  s += legend;
  for (size_t k = 0; k < panels.size(); ++k) {
    const TourPanel& tp = panels[k];
    const data::PtrProblem& p = *tp.problem;
    const Frame f = frame_of(p, static_cast<int>(k));
    std::snprintf(
        buf, sizeof buf,
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#dcdcdc\"/>\n",
        f.ox + kPad, f.oy + kPad, kBox, kBox);
    s += buf;
    auto path = [&](const std::vector<int32_t>& seq, const char* style) {
      if (seq.size() < 2) return;
      s += "<polyline fill=\"none\" " + std::string(style) + " points=\"";
      for (int32_t i : seq) {
        if (i < 1 || i > p.n()) continue;
        std::snprintf(buf, sizeof buf, "%.1f,%.1f ", f.px(p.x(i - 1, 0)), f.py(p.x(i - 1, 1)));
        s += buf;
      }
      s += "\"/>\n";
    };
    path(p.answer, "stroke=\"#bebebe\" stroke-width=\"5\" stroke-linejoin=\"round\"");
    path(tp.prediction, "stroke=\"#d62728\" stroke-width=\"1.5\"");
    for (int64_t i : flagged(p, tp.prediction)) {
      std::snprintf(buf, sizeof buf,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" "
                    "stroke=\"#d62728\"/>\n",
                    f.px(p.x(i, 0)), f.py(p.x(i, 1)));
      s += buf;
    }
    for (int64_t i = 0; i < p.n(); ++i) {
      std::snprintf(buf, sizeof buf,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                    "fill=\"#1f1f1f\"><title>%lld</title></circle>\n",
                    f.px(p.x(i, 0)), f.py(p.x(i, 1)), static_cast<long long>(i + 1));
      s += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%d\" y=\"%d\" font-family=\"sans-serif\" font-size=\"11\">",
                  f.ox + kPad, f.oy + kPad + kBox + 20);
    s += buf + escape(tp.caption) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

Image render_tours(const std::vector<TourPanel>& panels) {
  if (panels.empty()) throw DataError("no problems to draw");
  Image im;
  im.width = columns(panels.size()) * kPanelW;
  im.height = kLegend + rows(panels.size()) * kPanelH;
  im.rgb.assign(static_cast<size_t>(im.width) * static_cast<size_t>(im.height) * 3, 255);
  // The legend: what the grey and the red paths and a red ring are.
  line(im, kPad, 11, kPad + 24, 11, 5, kAnswer);
  text(im, kPad + 30, 8, "answer", kPoint);
  line(im, kPad + 90, 11, kPad + 114, 11, 2, kPrediction);
  text(im, kPad + 120, 8, "output", kPoint);
  ring(im, kPad + 185, 11, 5, kPrediction);
  text(im, kPad + 195, 8, "degenerate output", kPoint);
  for (size_t k = 0; k < panels.size(); ++k) {
    const TourPanel& tp = panels[k];
    const data::PtrProblem& p = *tp.problem;
    const Frame f = frame_of(p, static_cast<int>(k));
    const double l = f.ox + kPad, t = f.oy + kPad, r = l + kBox, b = t + kBox;
    line(im, l, t, r, t, 1, kFrame), line(im, r, t, r, b, 1, kFrame);
    line(im, r, b, l, b, 1, kFrame), line(im, l, b, l, t, 1, kFrame);
    auto path = [&](const std::vector<int32_t>& seq, int width, Rgb c) {
      for (size_t i = 0; i + 1 < seq.size(); ++i) {
        const int32_t a = seq[i], z = seq[i + 1];
        if (a < 1 || a > p.n() || z < 1 || z > p.n()) continue;
        line(im, f.px(p.x(a - 1, 0)), f.py(p.x(a - 1, 1)), f.px(p.x(z - 1, 0)), f.py(p.x(z - 1, 1)),
             width, c);
      }
    };
    path(p.answer, 5, kAnswer);
    path(tp.prediction, 2, kPrediction);
    for (int64_t i : flagged(p, tp.prediction))
      ring(im, f.px(p.x(i, 0)), f.py(p.x(i, 1)), 5, kPrediction);
    for (int64_t i = 0; i < p.n(); ++i) disc(im, f.px(p.x(i, 0)), f.py(p.x(i, 1)), 2, kPoint);
    text(im, f.ox + kPad, f.oy + kPad + kBox + 12, tp.caption, kPoint);
  }
  return im;
}

}  // namespace attnkit::plot

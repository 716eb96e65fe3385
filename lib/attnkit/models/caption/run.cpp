#include "attnkit/models/caption/run.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/caption/model.h"
#include "attnkit/models/run_outputs.h"
#include "attnkit/plot/overlay.h"

namespace attnkit::models {

namespace {

// The picture `index` as the CNN sees it (with the model's padding), cut to the part the
// regions cover, with each word's attention over it.
std::string draw_attention(const LoadedCaption& m, const CaptionData& d, int64_t index,
                           const CaptionModel::Decoded& y, int64_t gh, int64_t gw) {
  const int64_t h = d.images.dim(1), w = d.images.dim(2), P = m.config.pad;
  const int64_t H = h + 2 * P, W = w + 2 * P;
  Tensor img({H, W}, 0.0f);
  for (int64_t r = 0; r < h; ++r)
    std::copy(d.images.data() + (index * h + r) * w, d.images.data() + (index * h + r + 1) * w,
              img.data() + (r + P) * W + P);
  std::vector<plot::OverlayQuery> qs;
  for (int64_t k = 0; k < y.alpha.dim(0); ++k) {
    plot::OverlayQuery q;
    q.row = q.col = -1;
    q.map = Tensor({gh, gw});
    std::copy(y.alpha.data() + k * gh * gw, y.alpha.data() + (k + 1) * gh * gw, q.map.data());
    q.label = k < static_cast<int64_t>(y.words.size())
                  ? m.model->vocab().token(y.words[static_cast<size_t>(k)])
                  : std::string("<end>");
    qs.push_back(std::move(q));
  }
  // The maps are cut to the part of the image the regions cover (pooling floors).
  const int64_t ch = gh * (H / gh), cw = gw * (W / gw);
  Tensor crop({ch, cw});
  for (int64_t r = 0; r < ch; ++r)
    std::copy(img.data() + r * W, img.data() + r * W + cw, crop.data() + r * cw);
  return plot::encode_png(plot::render_overlays(crop, qs));
}

}  // namespace

std::string light_background_warning(const Tensor& images, const std::string& name) {
  const int64_t n = images.dim(0), hw = images.dim(1) * images.dim(2);
  int64_t light = 0, first = -1;
  double first_mean = 0;
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int64_t k = 0; k < hw; ++k) sum += images[i * hw + k];
    const double mean = hw > 0 ? sum / static_cast<double>(hw) : 0.0;
    if (mean > 0.5) {
      if (light++ == 0) first = i, first_mean = mean;
    }
  }
  if (light == 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", first_mean);
  const std::string which = n == 1 ? std::string("the picture's mean is ") + buf
                                   : std::to_string(light) + " of " + std::to_string(n) +
                                         " pictures have a mean above " + "0.5 (picture " +
                                         std::to_string(first + 1) + ": " + buf + ")";
  return name + ": " + which +
         ": it looks drawn dark on white, and the models see light items on black; if it is, "
         "give --invert";
}

std::string run_caption(const CaptionRunOptions& o) {
  if (o.beam < 1) throw UsageError("--beam must be >= 1");
  check_draw_name(o.draw);
  if (o.eval && o.captions.empty()) throw UsageError("--eval needs --captions");
  check_outputs_writable({&o.output, &o.attention, &o.draw});
  const LoadedCaption m = load_caption(o.model);
  CaptionData d;
  if (!o.captions.empty()) {
    if (o.invert) throw UsageError("--invert is for pictures without references (no --captions)");
    d = read_caption_data(o.input, o.captions);
  } else {
    d.images = read_caption_input(o.input, o.invert);
    if (!o.invert && o.warn) {
      const std::string w = light_background_warning(
          d.images, o.input == "-" ? "<stdin>" : io::split_member(o.input).first);
      if (!w.empty()) o.warn(w);
    }
  }
  if (o.draw_index < 0 || o.draw_index >= d.size())
    throw UsageError("--draw-index " + std::to_string(o.draw_index) + " is outside the " +
                     std::to_string(d.size()) + " images");
  const auto [gh, gw] =
      option_value("--input", [&] { return m.model->grid(d.images.dim(1), d.images.dim(2)); });
  std::vector<CaptionModel::Decoded> outputs;
  std::string text;
  if (o.eval) {
    const CaptionScore s = evaluate_captions(*m.model, d, o.beam, o.threads, &outputs);
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "images\tbleu4\tnouns\tnoun_in_cell\tcoverage_dev\n%lld\t%.2f\t%lld\t%.4f\t%.4f\n",
        static_cast<long long>(s.images), 100.0 * s.bleu4, static_cast<long long>(s.nouns),
        s.noun_in_cell, s.coverage_dev);
    text = buf;
  } else {
    outputs = decode_captions(*m.model, d.images, o.beam, o.threads);
    for (const auto& y : outputs) text += m.model->vocab().decode(y.words) + "\n";
  }
  if (!o.attention.empty()) {
    std::vector<std::pair<std::string, Tensor>> arrays;
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor a = outputs[i].alpha.clone();
      a.reshape({a.dim(0), gh, gw});
      arrays.emplace_back("a" + std::to_string(i), std::move(a));
    }
    io::write_npz(o.attention, arrays);
  }
  if (!o.draw.empty())
    io::write_file(o.draw, draw_attention(m, d, o.draw_index,
                                          outputs[static_cast<size_t>(o.draw_index)], gh, gw));
  return text;
}

}  // namespace attnkit::models

#include "attnkit/models/ram/run.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/ram/model.h"
#include "attnkit/models/run_outputs.h"
#include "attnkit/plot/glimpses.h"
#include "attnkit/rl/reinforce.h"
#include "attnkit/vision/compose.h"

namespace attnkit::models {

std::string ram_class_name(const RamConfig& c, int32_t k) {
  std::string s = std::to_string(k);
  if (c.classes == vision::kClasses && k >= 0 && k < vision::kClasses)
    s += " " + vision::class_names()[static_cast<size_t>(k)];
  return s;
}

namespace {

// The first `count` images with their glimpses, and a caption each.
std::string draw_glimpses(const RamConfig& c, const ImageSet& data, const RamTrace& tr,
                          const Tensor& probs, const std::vector<int32_t>& pred, int64_t count) {
  std::vector<plot::GlimpsePanel> panels;
  char buf[160];
  const int64_t per = c.height * c.width, pp = c.glimpse.features();
  for (int64_t i = 0; i < std::min<int64_t>(count, data.size()); ++i) {
    plot::GlimpsePanel p;
    p.image = Tensor({c.height, c.width});
    std::copy(data.images.data() + i * per, data.images.data() + (i + 1) * per, p.image.data());
    for (int64_t g = 0; g < c.glimpses; ++g) {
      const Tensor& l = tr.locations[static_cast<size_t>(g)];
      p.x.push_back(l[2 * i]), p.y.push_back(l[2 * i + 1]);
      Tensor patch({c.glimpse.scales, c.glimpse.size, c.glimpse.size});
      const float* src = tr.patches[static_cast<size_t>(g)].data() + i * pp;
      std::copy(src, src + pp, patch.data());
      p.patches.push_back(std::move(patch));
    }
    const int32_t y = data.labels[static_cast<size_t>(i)], yp = pred[static_cast<size_t>(i)];
    std::snprintf(buf, sizeof buf, "image %lld: label %s, predicted %s (%.2f)%s",
                  static_cast<long long>(i + 1), ram_class_name(c, y).c_str(),
                  ram_class_name(c, yp).c_str(), static_cast<double>(probs[i * c.classes + yp]),
                  y == yp ? "" : " wrong");
    p.caption = buf;
    panels.push_back(std::move(p));
  }
  return plot::encode_png(plot::render_glimpses(panels, c.glimpse));
}

}  // namespace

std::string run_ram(const RamRunOptions& o) {
  if (o.samples < 1) throw UsageError("--samples must be >= 1");
  if (o.draw_count < 1) throw UsageError("--draw-count must be >= 1");
  check_draw_name(o.draw);
  check_outputs_writable({&o.output, &o.trace, &o.draw});
  const LoadedRam m = load_ram(o.model);
  const ImageSet data = read_image_set(o.input);
  const RamConfig& c = m.config;
  if (data.images.dim(1) != c.height || data.images.dim(2) != c.width)
    throw DataError("the images are " + std::to_string(data.images.dim(1)) + " x " +
                        std::to_string(data.images.dim(2)) + " pixels; the model reads " +
                        std::to_string(c.height) + " x " + std::to_string(c.width),
                    o.input);
  for (size_t i = 0; i < data.labels.size(); ++i)
    if (data.labels[i] >= c.classes)
      throw DataError("label " + std::to_string(i + 1) + " (" + std::to_string(data.labels[i]) +
                          ") is not one of the model's " + std::to_string(c.classes) + " classes",
                      o.input);
  const bool want_trace = !o.trace.empty() || !o.draw.empty();
  RamTrace tr;
  const Tensor probs = ram_predict(*m.model, data.images, o.samples, o.seed, o.threads,
                                   want_trace ? &tr : nullptr, !o.draw.empty());
  const std::vector<int32_t> pred = rl::argmax_rows(probs);
  std::string text;
  char buf[160];
  if (o.eval) {
    const double err = ram_error(probs, data.labels);
    std::snprintf(buf, sizeof buf, "images\tsamples\terror\taccuracy\n%lld\t%lld\t%.4f\t%.4f\n",
                  static_cast<long long>(data.size()), static_cast<long long>(o.samples), err,
                  1.0 - err);
    text = buf;
  } else {
    text = "image\tlabel\tpredicted\tprobability\n";
    for (int64_t i = 0; i < data.size(); ++i) {
      const int32_t p = pred[static_cast<size_t>(i)];
      std::snprintf(buf, sizeof buf, "%lld\t%d\t%d\t%.4f\n", static_cast<long long>(i + 1),
                    data.labels[static_cast<size_t>(i)], p,
                    static_cast<double>(probs[i * c.classes + p]));
      text += buf;
    }
  }
  if (!o.trace.empty()) io::write_file(o.trace, ram_trace_tsv(c, tr));
  if (!o.draw.empty())
    io::write_file(o.draw, draw_glimpses(c, data, tr, probs, pred, o.draw_count));
  return text;
}

}  // namespace attnkit::models

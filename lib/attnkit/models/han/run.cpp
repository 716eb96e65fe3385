#include "attnkit/models/han/run.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/data/docs.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/han/draw.h"
#include "attnkit/models/han/file.h"
#include "attnkit/models/han/train.h"
#include "attnkit/models/run_outputs.h"

namespace attnkit::models::han {

namespace {

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

std::string num(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

int64_t argmax(const Tensor& p, int64_t i) {
  int64_t best = 0;
  for (int64_t c = 1; c < p.dim(1); ++c)
    if (p.at(i, c) > p.at(i, best)) best = c;
  return best;
}

std::string eval_text(const Tensor& p, const std::vector<Doc>& docs,
                      const std::vector<std::string>& labels) {
  const int64_t N = p.dim(0), C = p.dim(1);
  std::vector<int64_t> conf(static_cast<size_t>(C * C), 0);
  int64_t right = 0;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t y = docs[static_cast<size_t>(i)].label, q = argmax(p, i);
    ++conf[static_cast<size_t>(y * C + q)];
    right += y == q;
  }
  std::string o = "documents\t" + std::to_string(N) + "\n";
  o += "accuracy\t" + num("%.4f", static_cast<double>(right) / static_cast<double>(N)) + "\n";
  o += "class\tprecision\trecall\tsupport\n";
  for (int64_t c = 0; c < C; ++c) {
    int64_t predicted = 0, actual = 0;
    for (int64_t k = 0; k < C; ++k)
      predicted += conf[static_cast<size_t>(k * C + c)],
          actual += conf[static_cast<size_t>(c * C + k)];
    const int64_t tp = conf[static_cast<size_t>(c * C + c)];
    o += labels[static_cast<size_t>(c)] + "\t" +
         (predicted ? num("%.4f", static_cast<double>(tp) / static_cast<double>(predicted)) : "-") +
         "\t" +
         (actual ? num("%.4f", static_cast<double>(tp) / static_cast<double>(actual)) : "-") +
         "\t" + std::to_string(actual) + "\n";
  }
  o += "confusion";
  for (const auto& l : labels) o += "\t" + l;
  o += "\n";
  for (int64_t c = 0; c < C; ++c) {
    o += labels[static_cast<size_t>(c)];
    for (int64_t k = 0; k < C; ++k)
      o += "\t" + std::to_string(conf[static_cast<size_t>(c * C + k)]);
    o += "\n";
  }
  return o;
}

}  // namespace

std::string run_han(const HanRunOptions& o) {
  const bool html = ends_with(o.draw, ".html");
  if (!o.draw.empty() && !html && !ends_with(o.draw, ".png"))
    throw UsageError("--draw: the file must end in .png or .html");
  if (o.draw_count < 1) throw UsageError("--draw-count must be >= 1");
  if (o.max_sentence_words < 1) throw UsageError("--max-sentence-words must be >= 1");
  check_outputs_writable({&o.output, &o.alignments, &o.draw});
  LoadedHan m = load_han(o.model);
  const bool att = !o.alignments.empty() || !o.draw.empty();
  if (att && m.model->arch() != Arch::Han && m.model->arch() != Arch::Flat)
    throw UsageError(std::string(o.alignments.empty() ? "--draw" : "--alignments") + ": a " +
                     arch_name(m.model->arch()) + " model has no attention (han and flat have)");
  data::DocReadOptions ro;
  ro.need_labels = o.eval, ro.max_sentence_words = o.max_sentence_words;
  const auto text = data::read_docs(o.input, ro);
  const std::string name = o.input == "-" ? "<stdin>" : o.input;
  const auto docs = encode_docs(text, m.vocab, m.labels, name, o.eval);
  std::vector<Tensor> words, sents;
  const Tensor p =
      predict_docs(*m.model, docs, o.threads, att ? &words : nullptr, att ? &sents : nullptr);
  const int64_t N = p.dim(0), C = p.dim(1);
  if (!o.alignments.empty()) {
    std::vector<std::pair<std::string, const Tensor*>> arrays;
    for (int64_t i = 0; i < N; ++i) {
      arrays.emplace_back("w" + std::to_string(i), &words[static_cast<size_t>(i)]);
      if (m.model->arch() == Arch::Han)
        arrays.emplace_back("s" + std::to_string(i), &sents[static_cast<size_t>(i)]);
    }
    io::write_npz(o.alignments, arrays);
  }
  if (!o.draw.empty()) {
    std::vector<FigureDoc> fig;
    for (int64_t i = 0; i < std::min(N, o.draw_count); ++i) {
      const auto& d = text[static_cast<size_t>(i)];
      FigureDoc f;
      const int64_t q = argmax(p, i);
      f.title = "document " + std::to_string(i + 1) + " (line " + std::to_string(d.line) +
                "): predicted " + m.labels[static_cast<size_t>(q)] + " " + num("%.3f", p.at(i, q)) +
                (d.label.empty() ? std::string() : ", true " + d.label);
      f.sentences = d.sentences;
      f.words = words[static_cast<size_t>(i)].clone();
      f.sentences_w = sents[static_cast<size_t>(i)].clone();
      fig.push_back(std::move(f));
    }
    io::write_file(o.draw, html ? figure_html(fig) : plot::encode_png(figure_png(fig)));
  }
  if (o.eval) return eval_text(p, docs, m.labels);
  std::string out;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t q = argmax(p, i);
    out += m.labels[static_cast<size_t>(q)] + "\t" + num("%.4f", p.at(i, q));
    for (int64_t c = 0; c < C; ++c) out += "\t" + num("%.4f", p.at(i, c));
    out += "\n";
  }
  return out;
}

}  // namespace attnkit::models::han

#include "attnkit/data/docs.h"

#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::data {

namespace {

bool ends_sentence(const std::string& w) { return w == "." || w == "!" || w == "?"; }

}  // namespace

std::vector<std::vector<std::string>> split_sentences(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> cur;
  for (auto& w : tokenize_words(text)) {
    const bool end = ends_sentence(w);
    // A run of ends (". . ." or "!?") closes one sentence: the next word opens the next.
    if (!end && !cur.empty() && ends_sentence(cur.back())) out.push_back(std::move(cur)), cur = {};
    cur.push_back(std::move(w));
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::vector<TextDoc> parse_docs(std::string_view text, const std::string& name,
                                const DocReadOptions& o) {
  std::vector<TextDoc> docs;
  int64_t ln = 0;
  for (std::string_view line : split_lines(text, name)) {
    ++ln;
    TextDoc d;
    d.line = ln;
    const size_t tab = line.find('\t');
    std::string_view body = line;
    if (tab == std::string_view::npos) {
      if (o.need_labels)
        throw DataError("no label: a document is LABEL<TAB>TEXT", name, static_cast<long>(ln));
    } else {
      d.label = std::string(line.substr(0, tab));
      if (d.label.empty()) throw DataError("empty label", name, static_cast<long>(ln));
      body = line.substr(tab + 1);
    }
    if (body.find('\t') != std::string_view::npos) {
      // Sentences given, one a field.
      size_t b = 0;
      while (b <= body.size()) {
        const size_t e = std::min(body.find('\t', b), body.size());
        auto words = tokenize_words(body.substr(b, e - b));
        if (!words.empty()) d.sentences.push_back(std::move(words));
        b = e + 1;
      }
    } else {
      d.sentences = split_sentences(body);
    }
    if (d.sentences.empty())
      throw DataError("empty document (no word after the label)", name, static_cast<long>(ln));
    for (size_t s = 0; s < d.sentences.size(); ++s)
      if (static_cast<int64_t>(d.sentences[s].size()) > o.max_sentence_words)
        throw DataError("sentence " + std::to_string(s + 1) + " has " +
                            std::to_string(d.sentences[s].size()) + " words, more than " +
                            std::to_string(o.max_sentence_words) + " (split it with . ! ? or TABs)",
                        name, static_cast<long>(ln));
    docs.push_back(std::move(d));
  }
  if (docs.empty()) throw DataError("no documents", name);
  return docs;
}

std::vector<TextDoc> read_docs(const std::string& path, const DocReadOptions& o) {
  return parse_docs(io::read_text(path), path == "-" ? "<stdin>" : path, o);
}

}  // namespace attnkit::data

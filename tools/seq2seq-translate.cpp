// seq2seq-translate: translates source lines with a model from seq2seq-train (greedy or beam
// search), optionally saving each sentence's attention matrix (its alignment).
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/progress.h"
#include "attnkit/core/error.h"
#include "attnkit/data/text.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/seq2seq_file.h"

using namespace attnkit;

int main(int argc, char** argv) {
  return cli::run("seq2seq-translate", argc, argv, [](cli::App& app) {
    namespace po = boost::program_options;
    std::string model_path, in = "-", out = "-", align, align_tokens;
    int beam = 1;
    double alpha = 0.0;
    int64_t max_length = 50;
    bool tokenize_only = false, no_kv_cache = false;
    app.describe("Translate sentences with a model trained by seq2seq-train.",
                 "--model MODEL [OPTIONS] [-i SOURCES] [-o OUT]");
    app.options().add_options()("model,m", po::value(&model_path)->value_name("MODEL")->required(),
                                "model file from seq2seq-train")(
        "input,i", po::value(&in)->value_name("SOURCES")->default_value(in),
        "source sentences, one a line")("output,o",
                                        po::value(&out)->value_name("OUT")->default_value(out),
                                        "translations, one a line")(
        "beam,k", po::value(&beam)->value_name("K")->default_value(beam), "beam width (1: greedy)")(
        "length-penalty", po::value(&alpha)->value_name("A")->default_value(alpha),
        "alpha of Wu et al.'s ((5+|y|)/6)^alpha; 0 ranks by log-probability")(
        "len-max", po::value(&max_length)->value_name("L")->default_value(max_length),
        "most target tokens per sentence, <eos> included")(
        "alignments", po::value(&align)->value_name("FILE.npz"),
        "each sentence's attention matrix: arrays s0, s1, ... [target tokens, source tokens]")(
        "alignment-tokens", po::value(&align_tokens)->value_name("DIR"),
        "with --alignments: DIR/<i>.rows (target tokens) and DIR/<i>.cols (source tokens), one a "
        "line")("no-kv-cache", po::bool_switch(&no_kv_cache),
                "Transformer: recompute every earlier position at each step instead of caching the "
                "decoder's keys and values (the same translations, slower; for comparisons)")(
        "tokenize-only", po::bool_switch(&tokenize_only),
        "print each line as the model's target tokens would read (references for bleu); no "
        "translation");
    app.enable(cli::kQuiet);
    app.shard_items(
        "input lines (alignment s<i> and DIR/<i> keep the line's number in the whole input)");
    app.epilog(
        "Output: the translation of each line, words joined by single spaces (a words model)\n"
        "or characters concatenated (a chars model), in the model's lower case. Alignment s<i>\n"
        "belongs to input line i+1: one row per emitted target token (<eos> included, so rows\n"
        "sum to 1), one column per source token (its final <eos> included); the rows and cols\n"
        "files label them, for attn-plot -i FILE.npz:s<i> --rows DIR/<i>.rows --cols "
        "DIR/<i>.cols.\n"
        "The Transformer's matrix is its last decoder layer's cross-attention averaged over "
        "heads.\n"
        "Unknown source tokens read as <unk>. --threads N translates N sentences at a time; the\n"
        "output does not depend on it.");
    app.parse();
    if (beam < 1) throw UsageError("--beam must be at least 1");
    if (max_length < 1) throw UsageError("--len-max must be at least 1");
    if (!(alpha >= 0 && alpha <= 10)) throw UsageError("--length-penalty must be in [0, 10]");
    if (!align_tokens.empty() && align.empty())
      throw UsageError("--alignment-tokens needs --alignments");
    if (!align.empty() && tokenize_only)
      throw UsageError("--alignments does not apply to --tokenize-only");

    models::Seq2SeqBundle b = models::load_seq2seq(model_path);
    if (!align.empty() && b.model->config().type == models::ModelType::RNN &&
        b.model->config().attention == models::AttentionKind::None)
      throw UsageError("--alignments: the model has no attention (trained with --attention none)");
    const std::string text = io::read_all(in);
    std::vector<std::string_view> lines = data::split_lines(text, in == "-" ? "<stdin>" : in);
    // --shard: this run's slice of the lines; `first` numbers its alignments in the whole input.
    const size_t first = static_cast<size_t>(app.shard().begin(static_cast<int64_t>(lines.size())));
    lines = std::vector<std::string_view>(
        lines.begin() + static_cast<long>(first),
        lines.begin() + app.shard().end(static_cast<int64_t>(lines.size())));

    io::AtomicFile file(out);
    if (tokenize_only) {
      std::vector<std::string> toks;
      for (std::string_view l : lines)
        file.write(models::detokenize(data::tokenize(l, b.target_tok), b.target_tok) + "\n");
      file.commit();
      return;
    }
    std::vector<std::vector<int32_t>> sources;
    for (std::string_view l : lines) sources.push_back(models::encode_source(b, std::string(l)));
    models::DecodeOptions d;
    d.beam = beam;
    d.length_penalty = alpha;
    d.max_length = max_length;
    d.kv_cache = !no_kv_cache;
    std::vector<models::Translation> tr;
    tr.reserve(sources.size());
    cli::Progress bar(app.name(), static_cast<int64_t>(sources.size()), app.common().quiet);
    const size_t block = 64;
    for (size_t s = 0; s < sources.size(); s += block) {
      std::vector<std::vector<int32_t>> part(
          sources.begin() + static_cast<long>(s),
          sources.begin() + static_cast<long>(std::min(sources.size(), s + block)));
      for (auto& t : models::translate_all(*b.model, part, d, app.common().threads))
        tr.push_back(std::move(t));
      bar.update(static_cast<int64_t>(tr.size()));
    }
    bar.finish();
    std::string outtext;
    for (const auto& t : tr) outtext += models::target_text(b, t.tokens) + "\n";

    if (!align.empty()) {
      std::vector<std::pair<std::string, const Tensor*>> arrays;
      std::vector<std::string> names;
      for (size_t i = 0; i < tr.size(); ++i) names.push_back("s" + std::to_string(first + i));
      for (size_t i = 0; i < tr.size(); ++i) arrays.push_back({names[i], &tr[i].attention});
      if (!align_tokens.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(align_tokens, ec);
        if (ec) throw IoError("cannot create the folder: " + ec.message(), align_tokens);
        for (size_t i = 0; i < tr.size(); ++i) {
          std::string rows, cols;
          for (int32_t id : tr[i].tokens) rows += b.target_vocab.token(id) + "\n";
          for (int32_t id : sources[i]) cols += b.source_vocab.token(id) + "\n";
          io::write_file(align_tokens + "/" + std::to_string(first + i) + ".rows", rows);
          io::write_file(align_tokens + "/" + std::to_string(first + i) + ".cols", cols);
        }
      }
      io::write_npz(align, arrays);
    }
    file.write(outtext);
    file.commit();
  });
}

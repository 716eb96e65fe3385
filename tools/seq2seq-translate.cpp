// seq2seq-translate: translates source lines with a model from seq2seq-train (greedy or beam
// search), optionally saving each sentence's attention matrix (its alignment).
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/tool_hooks.h"
#include "attnkit/models/seq2seq/run.h"

using namespace attnkit;

int main(int argc, char** argv) {
  return cli::run("seq2seq-translate", argc, argv, [](cli::App& app) {
    namespace po = boost::program_options;
    std::string model_path, in = "-", out = "-", align, align_tokens, trace;
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
        "line")("trace", po::value(&trace)->value_name("FILE.npz"),
                "syntactic attention: each sentence's arc potentials, s0, s1, ... [target "
                "tokens, source tokens, source tokens] (attn-struct --kind tree --arcs)")(
        "no-kv-cache", po::bool_switch(&no_kv_cache),
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
    const cli::Outputs outputs({out}, {align, trace});  // checked now; side ones removed on failure
    models::TranslateRunOptions o;
    o.model = model_path, o.input = in, o.output = out, o.alignments = align;
    o.alignment_tokens = align_tokens, o.trace = trace, o.beam = beam, o.length_penalty = alpha;
    o.max_length = max_length, o.tokenize_only = tokenize_only, o.no_kv_cache = no_kv_cache;
    o.threads = app.common().threads;
    models::run_translate(o, cli::shard_range(app), cli::progress(app));
  });
}

// seq2seq-train: trains an RNN encoder-decoder (with attention) or a Transformer on a
// parallel corpus and writes the model file seq2seq-translate reads.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/progress.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"
#include "attnkit/data/batch.h"
#include "attnkit/data/corpus.h"
#include "attnkit/eval/bleu.h"
#include "attnkit/io/tsv_log.h"
#include "attnkit/models/seq2seq_file.h"
#include "attnkit/nn/optim.h"
#include "attnkit/nn/trainer.h"

using namespace attnkit;

namespace {

data::ParallelCorpus read_corpus(const std::string& tsv, const std::string& src, const std::string& tgt) {
  return tsv.empty() ? data::read_aligned(src, tgt) : data::read_tsv(tsv);
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run("seq2seq-train", argc, argv, [](cli::App& app) {
    namespace po = boost::program_options;
    std::string in, src_file, tgt_file, valid_file, out, log_file, tokens = "words", type = "rnn",
        cell = "lstm", attention = "bahdanau", schedule = "constant";
    bool resume = false, dry_run = false, bidirectional = false, no_feeding = false, shared = false;
    int64_t min_freq = 1, max_len = 0, embed = 64, hidden = 128, d_model = 128, heads = 4, d_ff = 512,
            batch = 64, epochs = 10, steps = 0, warmup = 0, eval_every = 0, bleu_n = 200, ckpt_every = 0,
            log_every = 10;
    int layers = 1;
    double valid_fraction = 0.1, teacher = 1.0, dropout = 0.0, lr = 1e-3, clip = 1.0, smoothing = 0.0;
    app.describe("Train a sequence-to-sequence model (RNN with attention, or Transformer) on a parallel corpus.",
                 "[OPTIONS] -i PAIRS.tsv -o MODEL\n       seq2seq-train [OPTIONS] --source S.txt --target T.txt -o MODEL");
    app.options().add_options()
        ("input,i", po::value(&in)->value_name("PAIRS"), "corpus: one SOURCE<TAB>TARGET pair a line")
        ("source", po::value(&src_file)->value_name("FILE"), "source sentences, one a line (with --target)")
        ("target", po::value(&tgt_file)->value_name("FILE"), "target sentences aligned with --source")
        ("valid", po::value(&valid_file)->value_name("PAIRS"),
         "validation pairs (SOURCE<TAB>TARGET) instead of a --valid-fraction of the corpus")
        ("output,o", po::value(&out)->value_name("MODEL"), "the model file (required unless --dry-run)")
        ("log", po::value(&log_file)->value_name("FILE"),
         "metrics as TSV: step epoch loss tokens_per_s lr grad_norm valid_loss valid_bleu")
        ("resume", po::bool_switch(&resume), "continue from MODEL.ckpt (same data and settings; a --lr given replaces the "
         "checkpoint's rate from there on)")
        ("dry-run", po::bool_switch(&dry_run), "print the parameters per layer and in total, then exit");
    app.config_options().add_options()
        ("tokens", po::value(&tokens)->default_value(tokens), "tokenisation of both sides: words (the textbook's) or chars")
        ("min-freq", po::value(&min_freq)->default_value(min_freq), "tokens seen fewer times become <unk>")
        ("max-len", po::value(&max_len)->default_value(max_len), "longest sequence kept, with <bos>/<eos> (0: all)")
        ("valid-fraction", po::value(&valid_fraction)->default_value(valid_fraction), "share of the corpus held out for validation, in [0, 1)")
        ("type", po::value(&type)->default_value(type), "rnn or transformer")
        ("cell", po::value(&cell)->default_value(cell), "rnn: lstm, gru or rnn")
        ("embed", po::value(&embed)->default_value(embed), "rnn: embedding size")
        ("hidden", po::value(&hidden)->default_value(hidden), "rnn: hidden units per layer")
        ("layers", po::value(&layers)->default_value(layers), "encoder and decoder layers")
        ("bidirectional", po::bool_switch(&bidirectional), "rnn: bi-directional encoder")
        ("attention", po::value(&attention)->default_value(attention),
         "rnn: none, bahdanau, luong-dot, luong-general or luong-concat")
        ("no-input-feeding", po::bool_switch(&no_feeding), "rnn, luong-*: do not feed the attentional state back")
        ("teacher-forcing", po::value(&teacher)->default_value(teacher), "rnn: probability of feeding the gold previous token")
        ("d-model", po::value(&d_model)->default_value(d_model), "transformer: model width")
        ("heads", po::value(&heads)->default_value(heads), "transformer: attention heads")
        ("d-ff", po::value(&d_ff)->default_value(d_ff), "transformer: feed-forward width")
        ("shared-embeddings", po::bool_switch(&shared),
         "transformer: one joint vocabulary; one table for source, target and output")
        ("dropout", po::value(&dropout)->default_value(dropout), "dropout rate")
        ("batch-size", po::value(&batch)->default_value(batch), "pairs per batch")
        ("epochs", po::value(&epochs)->default_value(epochs), "passes over the training pairs")
        ("steps", po::value(&steps)->default_value(steps), "training steps (overrides --epochs when > 0)")
        ("lr", po::value(&lr)->default_value(lr), "Adam's learning rate")
        ("warmup", po::value(&warmup)->default_value(warmup), "steps of linear learning-rate warm-up")
        ("schedule", po::value(&schedule)->default_value(schedule), "after warm-up: constant or inverse-sqrt")
        ("clip", po::value(&clip)->default_value(clip), "gradient norm clipping (0: none)")
        ("label-smoothing", po::value(&smoothing)->default_value(smoothing), "label smoothing epsilon")
        ("eval-every", po::value(&eval_every)->default_value(eval_every),
         "steps between validation loss + BLEU (0: at the end only)")
        ("bleu-sentences", po::value(&bleu_n)->default_value(bleu_n), "validation pairs translated (greedy) for BLEU")
        ("checkpoint-every", po::value(&ckpt_every)->default_value(ckpt_every), "steps between checkpoints (0: none)")
        ("log-every", po::value(&log_every)->default_value(log_every), "steps between --log rows");
    app.enable(cli::kSeed | cli::kQuiet | cli::kConfig);
    app.epilog(
        "The model file holds the parameters, both vocabularies, the tokenisation and every\n"
        "setting; seq2seq-translate needs nothing else. Same data, --seed and --threads 1 give\n"
        "the same model byte for byte; --resume after an interruption ends with the same model.\n"
        "With --threads N > 1 every batch is cut into N slices trained in parallel, their\n"
        "gradients added in a fixed order: the same N gives the same model, another N the same\n"
        "up to rounding.\n"
        "Validation BLEU: greedy translations of the first --bleu-sentences validation pairs\n"
        "against their references, both in the model's tokens (sacreBLEU-style corpus BLEU).");
    app.parse();

    // ---- checks
    if (in.empty() == (src_file.empty() && tgt_file.empty()))
      throw UsageError("give the corpus as -i PAIRS or as --source and --target");
    if (in.empty() && (src_file.empty() || tgt_file.empty())) throw UsageError("--source and --target go together");
    if (!dry_run && out.empty()) throw UsageError("-o MODEL is required (or --dry-run)");
    if (min_freq < 1) throw UsageError("--min-freq must be at least 1");
    if (max_len != 0 && max_len < 3) throw UsageError("--max-len must be 0 or at least 3");
    if (!(valid_fraction >= 0 && valid_fraction < 1)) throw UsageError("--valid-fraction must be in [0, 1)");
    if (batch < 1) throw UsageError("--batch-size must be at least 1");
    if (epochs < 1 && steps < 1) throw UsageError("--epochs or --steps must be at least 1");
    if (steps < 0) throw UsageError("--steps must not be negative");
    if (!(lr > 0)) throw UsageError("--lr must be positive");
    if (warmup < 0 || eval_every < 0 || ckpt_every < 0 || bleu_n < 0 || log_every < 1)
      throw UsageError("--warmup, --eval-every, --checkpoint-every, --bleu-sentences must be >= 0 and --log-every >= 1");
    if (!(teacher >= 0 && teacher <= 1)) throw UsageError("--teacher-forcing must be in [0, 1]");
    if (!(smoothing >= 0 && smoothing < 1)) throw UsageError("--label-smoothing must be in [0, 1)");
    if (!(clip >= 0)) throw UsageError("--clip must not be negative");
    if (schedule != "constant" && schedule != "inverse-sqrt")
      throw UsageError("unknown --schedule '" + schedule + "' (choose constant or inverse-sqrt)");
    data::Tokenization tok;
    try {
      tok = data::parse_tokenization(tokens);
    } catch (const Error& e) {
      throw UsageError(std::string("--tokens: ") + e.what());
    }
    models::Seq2SeqConfig cfg;
    cfg.type = models::parse_model_type(type);
    cfg.cell = nn::parse_cell_kind(cell);
    cfg.attention = models::parse_attention(attention);
    cfg.embed = embed;
    cfg.hidden = hidden;
    cfg.layers = layers;
    cfg.bidirectional = bidirectional;
    cfg.input_feeding = !no_feeding;
    cfg.d_model = d_model;
    cfg.heads = heads;
    cfg.d_ff = d_ff;
    cfg.shared_embeddings = shared;
    cfg.dropout = static_cast<float>(dropout);
    const uint64_t seed = app.common().seed;

    // ---- data: split, vocabularies (training pairs only), encoding
    data::ParallelCorpus corpus = read_corpus(in, src_file, tgt_file);
    data::TrainValid tv;
    if (!valid_file.empty()) {
      tv.train = std::move(corpus);
      tv.valid = data::read_tsv(valid_file);
    } else {
      tv = data::split_train_valid(corpus, valid_fraction, seed);
    }
    if (tv.train.size() == 0) throw DataError("no training pairs", in.empty() ? src_file : in);
    data::TokenCounts sc = data::count_side(tv.train, data::Side::Source, tok);
    data::TokenCounts tc = data::count_side(tv.train, data::Side::Target, tok);
    data::Vocab sv, tvv;
    if (shared) {
      for (const auto& [k, v] : tc) sc[k] += v;
      sv = data::Vocab::build(sc, min_freq);
      tvv = sv;
    } else {
      sv = data::Vocab::build(sc, min_freq);
      tvv = data::Vocab::build(tc, min_freq);
    }
    cfg.src_vocab = sv.size();
    cfg.tgt_vocab = tvv.size();
    auto model = models::Seq2Seq::create(cfg, seed);
    nn::ParamStore& ps = model->params();

    if (dry_run) {
      std::printf("layer\tparameters\n");
      for (const auto& [name, n] : ps.layer_counts()) std::printf("%s\t%lld\n", name.c_str(), static_cast<long long>(n));
      std::printf("total\t%lld\n", static_cast<long long>(ps.count()));
      return;
    }

    data::EncodeOptions eo;
    eo.source_tok = eo.target_tok = tok;
    eo.max_source_len = max_len;
    eo.max_target_len = max_len;
    const std::vector<data::EncodedPair> train = data::encode(tv.train, sv, tvv, eo);
    const std::vector<data::EncodedPair> valid = data::encode(tv.valid, sv, tvv, eo);
    data::BatchOptions bo;
    bo.batch_size = batch;
    bo.seed = seed;
    const int64_t n_batches = (static_cast<int64_t>(train.size()) + batch - 1) / batch;
    const int64_t total = steps > 0 ? steps : epochs * n_batches;

    nn::Schedule sch;
    sch.warmup = warmup;
    sch.kind = schedule == "inverse-sqrt" ? nn::Schedule::Kind::InverseSqrt : nn::Schedule::Kind::Constant;
    nn::Adam adam(ps.params(), lr, 0.9, 0.98, 1e-9, 0.0, sch);
    ad::Tape tape(seed ^ 0x5eedULL);
    // Data parallelism: one tape per thread, each a slice of every batch (models/seq2seq.h,
    // loss_and_backward); the extra tapes are reseeded from the first at every step.
    std::vector<std::unique_ptr<ad::Tape>> extra;
    std::vector<ad::Tape*> tapes{&tape};
    for (int i = 1; i < max_threads(); ++i) {
      extra.push_back(std::make_unique<ad::Tape>(0));
      tapes.push_back(extra.back().get());
    }

    nn::TrainerOptions to;
    to.kind = "seq2seq";
    to.model_path = out;
    to.steps = total;
    to.checkpoint_every = ckpt_every;
    to.resume = resume;
    nn::Trainer trainer(to, ps, adam);
    trainer.add_rng("tape", tape.rng());
    trainer.base().config_yaml = app.config_yaml();
    models::put_seq2seq(trainer.base(), cfg, sv, tvv, tok, tok);
    if (resume) {
      const nn::ModelFile ck = nn::load_model_file(trainer.checkpoint_path(), "seq2seq");
      models::Seq2SeqBundle b = models::get_seq2seq(ck);  // the checkpoint must fit this run
      if (b.source_vocab.format() != sv.format() || b.target_vocab.format() != tvv.format())
        throw DataError("the checkpoint was trained on other data or settings (vocabularies differ)",
                        trainer.checkpoint_path());
      trainer.resume_from(ck);
      // The optimiser state carries the checkpoint's rate; a --lr given again replaces it
      // from here on (the schedule's factor still applies).
      if (app.given("lr")) adam.set_lr(lr);
    }

    std::unique_ptr<io::TsvLog> log;
    if (!log_file.empty())
      log = resume ? std::make_unique<io::TsvLog>(log_file, trainer.state().step) : std::make_unique<io::TsvLog>(log_file);

    // Validation: mean loss over every validation pair and greedy BLEU on the first ones.
    auto validate = [&](double& vloss, double& vbleu) {
      vloss = vbleu = NAN;
      if (valid.empty()) return;
      ad::Tape vt(0);
      vt.set_training(false);
      vt.set_recording(false);
      data::BatchOptions vo = bo;
      vo.shuffle = false;
      double sum = 0;
      int64_t n = 0;
      for (const data::Batch& b : data::make_batches(valid, vo)) {
        int64_t k = 0;
        ad::Var l = model->loss(vt, b, 0.0f, 1.0f, &k);
        sum += static_cast<double>(l.value()[0]) * static_cast<double>(k);
        n += k;
        vt.clear();
      }
      vloss = n ? sum / static_cast<double>(n) : NAN;
      const size_t m = std::min(valid.size(), static_cast<size_t>(bleu_n));
      if (m == 0) return;
      std::vector<std::vector<int32_t>> srcs;
      for (size_t i = 0; i < m; ++i) srcs.push_back(valid[i].source);
      models::DecodeOptions d;
      d.max_length = max_len > 0 ? max_len : 50;
      const auto tr = models::translate_all(*model, srcs, d, 0);
      models::Seq2SeqBundle view;  // tokens joined by spaces: BLEU over the model's tokens
      view.target_vocab = tvv;
      view.target_tok = data::Tokenization::Words;
      std::vector<std::string> hyp, ref;
      for (size_t i = 0; i < m; ++i) {
        hyp.push_back(models::target_text(view, tr[i].tokens));
        ref.push_back(models::target_text(view, valid[i].target));
      }
      vbleu = 100.0 * eval::corpus_bleu(hyp, ref).score;
    };

    cli::Progress bar(app.name(), total, app.common().quiet);
    bar.set_start(trainer.state().step);
    std::vector<data::Batch> epoch_batches;
    int64_t cached_epoch = -1;
    auto clock = std::chrono::steady_clock::now();
    int64_t tokens_since = 0;
    double last_vloss = NAN, last_vbleu = NAN;
    trainer.run(
        [&](nn::TrainState& s) {
          if (cached_epoch != s.epoch) {
            epoch_batches = data::make_batches(train, bo, static_cast<uint64_t>(s.epoch));
            cached_epoch = s.epoch;
          }
          const data::Batch& b = epoch_batches[static_cast<size_t>(s.position)];
          adam.zero_grad();
          for (ad::Tape* t : tapes) t->set_training(true);
          int64_t k = 0;
          nn::StepResult r;
          r.loss = models::loss_and_backward(*model, tapes, b, static_cast<float>(smoothing),
                                             static_cast<float>(teacher), &k);
          for (ad::Tape* t : tapes) t->clear();
          r.grad_norm = nn::clip_grad_norm(ps.params(), clip > 0 ? clip : INFINITY);
          if (std::isfinite(r.loss) && std::isfinite(r.grad_norm)) adam.step();
          tokens_since += k;
          s.advance(n_batches);
          return r;
        },
        [&](const nn::TrainState& s, const nn::StepResult& r) {
          const bool eval_now = (eval_every > 0 && s.step % eval_every == 0) || s.step == total;
          double vloss = NAN, vbleu = NAN;
          if (eval_now) {
            validate(vloss, vbleu);
            last_vloss = vloss;
            last_vbleu = vbleu;
          }
          if (log && (s.step % log_every == 0 || s.step == total || eval_now)) {
            const auto now = std::chrono::steady_clock::now();
            const double sec = std::chrono::duration<double>(now - clock).count();
            log->row({{"step", static_cast<double>(s.step)}, {"epoch", static_cast<double>(s.epoch)},
                      {"loss", r.loss}, {"tokens_per_s", sec > 0 ? tokens_since / sec : NAN},
                      {"lr", adam.current_lr()}, {"grad_norm", r.grad_norm},
                      {"valid_loss", vloss}, {"valid_bleu", vbleu}});
            clock = now;
            tokens_since = 0;
          }
          cli::Metrics m{{"loss", r.loss}};
          if (!std::isnan(last_vloss)) m.push_back({"valid_loss", last_vloss});
          if (!std::isnan(last_vbleu)) m.push_back({"bleu", last_vbleu});
          bar.update(s.step, m);
        });
    bar.finish();
    if (!app.common().quiet)
      std::cerr << "seq2seq-train: " << trainer.state().step << " steps, " << ps.count()
                << " parameters; validation loss " << last_vloss << ", BLEU " << last_vbleu << "; wrote "
                << out << "\n";
  });
}

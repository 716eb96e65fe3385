// A trained seq2seq model file (seq2seq-train's output) as NumPy arrays, for checking it
// against another implementation (bench/seq2seq_xcheck.py loads them into the PyTorch model
// of bench/seq2seq_bleu_torch.py).
//   bench-seq2seq-export [OPTIONS] MODEL OUT.npz [PAIRS.tsv [GRAD.npz [STEPS AFTER.npz [COPIES]]]]
// Writes every parameter of the model to OUT.npz under its ParamStore name (e.g.
// "encoder.l0.W_ih", "decoder.l1.b", "output.W"), and the model's two vocabularies beside it
// as OUT.src.vocab and OUT.tgt.vocab (OUT is the path without ".npz"; data::Vocab's format,
// the same as vocab-build's). With PAIRS.tsv (SOURCE<TAB>TARGET lines) it also prints the
// teacher-forced cross-entropy of the model on those pairs, dropout off, no length cut, no
// label smoothing:
//   attnkit_nll <TAB> mean nats per target token (<eos> included) <TAB> target tokens
// (batches of 64 in file order, each pair's source and target as models/seq2seq/model.h encodes
// them, the batch losses weighted by their token counts). With GRAD.npz it also writes the
// gradient of the mean loss (label smoothing as --label-smoothing) of the first 64 pairs of
// PAIRS.tsv (one batch in file order, dropout off) with respect to every parameter, under the
// parameters' names. With STEPS and AFTER.npz it then trains the model STEPS steps as
// seq2seq-train does (nn::Adam at --lr with --warmup and --schedule, β 0.9/0.98, ε 1e-9;
// clipping at 1; the training layer's train::step on one slice with --label-smoothing) but
// with dropout off, on batches of 64 consecutive pairs of PAIRS.tsv (step k: pairs 64k ..
// 64k+63, wrapping around), prints each step's loss and gradient norm
//   attnkit_step <TAB> k <TAB> loss <TAB> gradient norm before clipping
// and writes the parameters after the last step to AFTER.npz. COPIES (e.g. 1) replaces the
// copies count of every parameter that has more than one (the RNN/LSTM biases, nn/rnn.h):
// 1 trains them as single vectors, as attnkit did before they followed PyTorch's pair.
// OPTIONS (before MODEL; the defaults are the LSTM recipe of bench/seq2seq-bleu.sh):
//   --label-smoothing E   (0)          --lr X (1e-3)
//   --warmup N (0)                      --schedule constant|inverse-sqrt (constant)
// The Transformer's recipe: --label-smoothing 0.1 --lr 5e-4 --warmup 1000 --schedule inverse-sqrt.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/data/batch.h"
#include "attnkit/data/corpus.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/models/seq2seq/file.h"
#include "attnkit/models/seq2seq/train.h"
#include "attnkit/nn/optim.h"

using namespace attnkit;

namespace {
void write_text(const std::string& path, const std::string& text) {
  io::AtomicFile f(path);
  f.write(text);
  f.commit();
}

void write_params(const std::string& path, const nn::ParamStore& ps, bool grads) {
  std::vector<std::pair<std::string, const Tensor*>> arrays;
  for (const ad::Parameter* p : ps.params())
    arrays.emplace_back(p->name, grads ? &p->grad : &p->value);
  io::write_npz(path, arrays);
}
}  // namespace

int main(int argc_all, char** argv_all) {
  float smoothing = 0.0f;
  double lr = 1e-3;
  nn::Schedule schedule;
  int first = 1;
  for (; first + 1 < argc_all && std::string(argv_all[first]).compare(0, 2, "--") == 0;
       first += 2) {
    const std::string opt = argv_all[first], val = argv_all[first + 1];
    if (opt == "--label-smoothing")
      smoothing = std::strtof(val.c_str(), nullptr);
    else if (opt == "--lr")
      lr = std::strtod(val.c_str(), nullptr);
    else if (opt == "--warmup")
      schedule.warmup = std::strtol(val.c_str(), nullptr, 10);
    else if (opt == "--schedule" && (val == "constant" || val == "inverse-sqrt"))
      schedule.kind =
          val == "constant" ? nn::Schedule::Kind::Constant : nn::Schedule::Kind::InverseSqrt;
    else {
      std::fprintf(stderr, "bench-seq2seq-export: unknown option %s %s\n", opt.c_str(),
                   val.c_str());
      return 2;
    }
  }
  const int argc = argc_all - first + 1;
  char** argv = argv_all + first - 1;  // argv[1] is MODEL
  if (argc < 3 || argc > 8 || argc == 6) {
    std::fprintf(stderr,
                 "usage: bench-seq2seq-export [--label-smoothing E] [--lr X] [--warmup N] "
                 "[--schedule constant|inverse-sqrt] MODEL OUT.npz [PAIRS.tsv [GRAD.npz [STEPS "
                 "AFTER.npz [COPIES]]]]\n");
    return 2;
  }
  try {
    const std::string model_path = argv[1], out = argv[2];
    models::LoadedSeq2Seq b = models::load_seq2seq(model_path);
    nn::ParamStore& ps = b.model->params();
    write_params(out, ps, false);
    const std::string stem = out.size() > 4 && out.compare(out.size() - 4, 4, ".npz") == 0
                                 ? out.substr(0, out.size() - 4)
                                 : out;
    write_text(stem + ".src.vocab", b.source_vocab.format());
    write_text(stem + ".tgt.vocab", b.target_vocab.format());
    std::fprintf(stderr, "seq2seq-export: %zu parameters (%lld values) → %s\n", ps.params().size(),
                 static_cast<long long>(ps.count()), out.c_str());
    if (argc < 4) return 0;
    const data::ParallelCorpus pairs = data::read_tsv(argv[3]);
    data::EncodeOptions eo;
    eo.source_tok = b.source_tok;
    eo.target_tok = b.target_tok;
    const std::vector<data::EncodedPair> enc =
        data::encode(pairs, b.source_vocab, b.target_vocab, eo);
    data::BatchOptions bo;
    bo.batch_size = 64;
    bo.shuffle = false;
    {
      ad::Tape t(0);
      t.set_training(false);
      t.set_recording(false);
      double sum = 0.0;
      int64_t n = 0;
      for (const data::Batch& batch : data::make_batches(enc, bo)) {
        int64_t k = 0;
        ad::Var l = b.model->loss(t, batch, 0.0f, 1.0f, &k);
        sum += static_cast<double>(l.value()[0]) * static_cast<double>(k);
        n += k;
        t.clear();
      }
      std::printf("attnkit_nll\t%.6f\t%lld\n", n ? sum / static_cast<double>(n) : 0.0,
                  static_cast<long long>(n));
    }
    if (argc < 5) return 0;
    auto rows_at = [&](size_t first) {
      std::vector<size_t> rows;
      for (size_t i = 0; i < std::min<size_t>(64, enc.size()); ++i)
        rows.push_back((first + i) % enc.size());
      return rows;
    };
    {
      const data::Batch batch = data::make_batch(enc, rows_at(0));
      ad::Tape g(0);
      g.set_training(false);
      for (ad::Parameter* p : ps.params()) p->grad = Tensor(p->value.shape());
      ad::Var l = b.model->loss(g, batch, smoothing, 1.0f, nullptr);
      g.backward(l);
      write_params(argv[4], ps, true);
      std::printf("attnkit_batch_loss\t%.6f\n", static_cast<double>(l.value()[0]));
    }
    if (argc < 7) return 0;
    const long steps = std::strtol(argv[5], nullptr, 10);
    if (argc == 8) {
      const int copies = static_cast<int>(std::strtol(argv[7], nullptr, 10));
      if (copies < 1) throw UsageError("COPIES must be at least 1");
      for (ad::Parameter* p : ps.params())
        if (p->copies > 1) p->copies = copies;
    }
    // The training layer's step on one slice, as seq2seq-train with --threads 1, dropout off
    // (a deterministic trajectory to compare).
    models::Seq2SeqRecipe r;
    r.lr = lr;
    r.warmup = schedule.warmup;
    r.schedule = schedule.kind == nn::Schedule::Kind::InverseSqrt ? "inverse-sqrt" : "constant";
    r.label_smoothing = smoothing;
    r.steps = 1;
    r.dropout = false;
    models::Seq2SeqData d;
    d.train = enc;
    d.source_vocab = b.source_vocab;
    d.target_vocab = b.target_vocab;
    models::Seq2SeqTraining m(std::move(b.model), std::move(d), r);
    train::Tapes tapes;
    for (long k = 0; k < steps; ++k) {
      m.set_batch(data::make_batch(enc, rows_at(static_cast<size_t>(k) * 64)));
      const train::StepOut o = train::step(m, tapes, m.batch().size(), 1, k, 1.0, false, 1);
      std::printf("attnkit_step\t%ld\t%.6f\t%.6f\n", k, o.loss, o.grad_norm);
    }
    write_params(argv[6], ps, false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-seq2seq-export: %s\n", e.what());
    return 1;
  }
  return 0;
}

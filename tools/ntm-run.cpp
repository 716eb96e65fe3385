// ntm-run: run a trained Neural Turing Machine: outputs, traces of its heads and memory, and
// bits per sequence by length on fresh episodes.
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/progress.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm_io.h"

using namespace attnkit;
namespace po = boost::program_options;

namespace {

// Stacks T tensors of one shape into [T, ...].
Tensor stack(const std::vector<Tensor>& xs) {
  Shape s{static_cast<int64_t>(xs.size())};
  for (int64_t d : xs.at(0).shape()) s.push_back(d);
  Tensor out(s);
  const int64_t n = xs[0].size();
  for (size_t i = 0; i < xs.size(); ++i)
    std::copy(xs[i].values().begin(), xs[i].values().end(), out.data() + static_cast<int64_t>(i) * n);
  return out;
}

// Rows h of a [T, H, X] stack → [T, X].
Tensor head(const Tensor& t, int64_t h) {
  const int64_t T = t.dim(0), X = t.dim(2);
  Tensor out({T, X});
  for (int64_t s = 0; s < T; ++s)
    for (int64_t x = 0; x < X; ++x) out.at(s, x) = t.at(s, h, x);
  return out;
}

Tensor sigmoid(const Tensor& y) {
  Tensor p(y.shape());
  for (int64_t i = 0; i < y.size(); ++i) p[i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(y[i]))));
  return p;
}

std::vector<int64_t> parse_lengths(const std::string& text) {
  std::vector<int64_t> v;
  std::stringstream ss(text);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    char* end = nullptr;
    const long long x = std::strtoll(tok.c_str(), &end, 10);
    if (tok.empty() || *end || x < 1 || x > 100000)
      throw UsageError("--lengths: '" + tok + "' is not a whole number in [1, 100000]");
    v.push_back(x);
  }
  if (v.empty()) throw UsageError("--lengths: no lengths given");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run("ntm-run", argc, argv, [](cli::App& app) {
    std::string model_path, in, out = "-", trace_path, lengths_text;
    bool eval = false;
    int64_t count = 100;
    app.describe("Run a trained Neural Turing Machine: outputs, head traces, bits per sequence.",
                 "--model MODEL -i INPUT [-o OUT] [--trace TRACE.npz]\n"
                 "   or: ntm-run --model MODEL --eval [-i DATA.npz | --lengths L,...] [--count N]");
    app.options().add_options()
        ("model,m", po::value(&model_path)->value_name("MODEL")->required(), "a model from ntm-train")
        ("input,i", po::value(&in)->value_name("INPUT"),
         "one sequence, a steps x inputs matrix (text, .npy, FILE.npz:NAME; - is standard "
         "input), or a seqtask-gen data set DATA.npz")
        ("output,o", po::value(&out)->value_name("OUT")->default_value("-"),
         "outputs σ(y), steps x outputs ([episodes, steps, outputs] for a data set); with "
         "--eval the TSV report")
        ("trace", po::value(&trace_path)->value_name("TRACE.npz"),
         "per step (of the first sequence): read<k>/write<k> weightings [T, N], erase<k>, "
         "add<k> [T, M], reads<k> [T, M], memory [T, N, M], inputs, outputs")
        ("eval", po::bool_switch(&eval),
         "report bits per sequence by length: on DATA.npz, or on fresh episodes of the "
         "model's task")
        ("lengths", po::value(&lengths_text)->value_name("L,..."),
         "--eval: lengths (items for associative recall) of fresh episodes (default: the "
         "training range)")
        ("count,n", po::value(&count)->value_name("N")->default_value(count),
         "--eval: fresh episodes per length");
    app.enable(cli::kSeed | cli::kQuiet | cli::kOutput);
    app.epilog(
        "--eval prints TSV: length, sequences, bits_per_seq (wrong bits after thresholding at\n"
        "0.5, per sequence), wrong_fraction (of the scored bits), and a last row 'all'.");
    app.parse();
    if (count < 1) throw UsageError("--count must be >= 1");
    if (!eval && in.empty()) throw UsageError("give -i INPUT (or --eval)");
    if (!eval && app.given("lengths")) throw UsageError("--lengths is for --eval");
    if (!lengths_text.empty() && !in.empty())
      throw UsageError("--lengths is for fresh episodes, not with -i");

    nn::ModelFile mf = nn::load_model_file(model_path, "ntm");
    const int64_t ni = mf.integer("ntm/input", 1, 1 << 20), no = mf.integer("ntm/output", 1, 1 << 20);
    memory::NtmConfig cfg = memory::ntm_config_from_yaml(mf.config_yaml, model_path, ni, no);
    nn::ParamStore ps;
    Rng init(0);
    memory::Ntm ntm(ps, cfg, init);
    try {
      nn::get_params(mf, ps);
    } catch (Error& e) {
      e.locate(model_path);
      throw;
    }
    ad::Tape tape;
    tape.set_recording(false);

    // Episodes: a data set, one sequence, or fresh ones.
    bool dataset = false;
    memory::NtmDataset ds;
    if (!in.empty() && io::split_member(in).second.empty()) {
      const std::string bytes = in == "-" ? std::string() : io::read_all(in);
      if (io::detect_format(bytes.substr(0, 8)) == io::Format::Npz) {
        std::map<std::string, Tensor> a = io::read_npz(in);
        if (a.count("inputs") && a.count("steps")) dataset = true;
      }
    }
    if (dataset) {
      ds = memory::read_ntm_dataset(in);
      if (ds.input_width() != ni || ds.output_width() != no)
        throw DataError("episodes have " + std::to_string(ds.input_width()) + " inputs and " +
                            std::to_string(ds.output_width()) + " outputs, the model " +
                            std::to_string(ni) + " and " + std::to_string(no),
                        in);
    }

    if (eval) {
      std::map<int64_t, memory::LengthScore> by;
      memory::LengthScore all;
      auto add = [&](const data::Episode& e) {
        ad::Var y = ntm.forward(tape, e.input);
        const Tensor mask = memory::output_mask(e);
        const int64_t w = memory::wrong_bits(y.value(), e.target, &mask);
        int64_t bits = 0;
        for (int64_t i = 0; i < mask.size(); ++i) bits += mask[i] != 0.0f;
        tape.clear();
        for (memory::LengthScore* s : {&by[e.len], &all}) {
          s->sequences += 1;
          s->wrong += w;
          s->bits += bits;
        }
        by[e.len].length = e.len;
      };
      if (dataset) {
        cli::Progress bar(app.name(), ds.count(), app.common().quiet);
        for (int64_t i = 0; i < ds.count(); ++i) {
          add(ds.episode(i));
          bar.update(i + 1);
        }
      } else {
        if (!in.empty()) throw UsageError("--eval takes a data set from seqtask-gen as -i");
        data::SeqTaskOptions topt;
        if (memory::ntm_task_from_yaml(mf.config_yaml, model_path, &topt).empty())
          throw UsageError("the model was trained on a data file: give --eval -i DATA.npz");
        std::vector<int64_t> lengths;
        if (!lengths_text.empty()) {
          lengths = parse_lengths(lengths_text);
        } else {
          for (int64_t l = topt.min_len; l <= topt.max_len; ++l) lengths.push_back(l);
        }
        const int64_t lo = topt.task == data::SeqTask::AssociativeRecall ? 2 : 1;
        for (int64_t l : lengths)
          if (l < lo) throw UsageError("--lengths: associative recall needs at least 2 items");
        Rng rng(app.common().seed);
        cli::Progress bar(app.name(), static_cast<int64_t>(lengths.size()) * count, app.common().quiet);
        int64_t done = 0;
        for (int64_t l : lengths)
          for (int64_t k = 0; k < count; ++k) {
            add(data::make_episode(topt, rng, l));
            bar.update(++done);
          }
      }
      std::string text = "length\tsequences\tbits_per_seq\twrong_fraction\n";
      char buf[160];
      for (const auto& [len, s] : by) {
        std::snprintf(buf, sizeof buf, "%lld\t%lld\t%.6g\t%.6g\n", static_cast<long long>(len),
                      static_cast<long long>(s.sequences), s.bits_per_sequence(), s.wrong_fraction());
        text += buf;
      }
      std::snprintf(buf, sizeof buf, "all\t%lld\t%.6g\t%.6g\n", static_cast<long long>(all.sequences),
                    all.bits_per_sequence(), all.wrong_fraction());
      text += buf;
      io::AtomicFile f(out);
      f.write(text);
      f.commit();
      return;
    }

    // Outputs (and the trace of the first sequence).
    memory::NtmTrace trace;
    Tensor result;
    Tensor first_in, first_out;
    if (dataset) {
      const int64_t tm = ds.inputs.dim(1);
      result = Tensor({ds.count(), tm, no});
      for (int64_t i = 0; i < ds.count(); ++i) {
        data::Episode e = ds.episode(i);
        const bool tr = i == 0 && !trace_path.empty();
        Tensor p = sigmoid(ntm.forward(tape, e.input, tr ? &trace : nullptr).value());
        if (tr) first_in = e.input.clone(), first_out = p.clone();
        std::copy(p.values().begin(), p.values().end(), result.data() + i * tm * no);
        tape.clear();
      }
    } else {
      Tensor x = io::read_tensor(in);
      if (x.rank() == 1) x.reshape({1, x.dim(0)});
      if (x.rank() != 2 || x.dim(1) != ni)
        throw DataError("input is " + shape_str(x.shape()) + ", the model takes steps x " +
                            std::to_string(ni),
                        io::split_member(in).first);
      result = sigmoid(ntm.forward(tape, x, trace_path.empty() ? nullptr : &trace).value());
      first_in = x.clone();
      first_out = result.clone();
    }
    if (!trace_path.empty()) {
      std::vector<std::pair<std::string, Tensor>> arrays;
      const Tensor rw = stack(trace.read_w), rr = stack(trace.reads);
      for (int h = 0; h < cfg.read_heads; ++h) {
        arrays.emplace_back("read" + std::to_string(h), head(rw, h));
        arrays.emplace_back("reads" + std::to_string(h), head(rr, h));
      }
      if (cfg.write_heads > 0) {
        const Tensor ww = stack(trace.write_w), er = stack(trace.erase), ad = stack(trace.add);
        for (int h = 0; h < cfg.write_heads; ++h) {
          arrays.emplace_back("write" + std::to_string(h), head(ww, h));
          arrays.emplace_back("erase" + std::to_string(h), head(er, h));
          arrays.emplace_back("add" + std::to_string(h), head(ad, h));
        }
      }
      arrays.emplace_back("memory", stack(trace.memory));
      arrays.emplace_back("inputs", std::move(first_in));
      arrays.emplace_back("outputs", std::move(first_out));
      std::vector<std::pair<std::string, const Tensor*>> refs;
      for (const auto& [n, t] : arrays) refs.emplace_back(n, &t);
      io::write_npz(trace_path, refs);
    }
    io::write_tensor(out, result, app.write_options());
  });
}

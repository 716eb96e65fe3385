// seqtask-gen: the Neural Turing Machine paper's algorithmic tasks (copy, repeat copy,
// associative recall) as an .npz data set.
#include <algorithm>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/data/seqtask.h"
#include "attnkit/io/tensor_io.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("seqtask-gen", argc, argv, [](cli::App& app) {
    std::string task_name, out;
    long long count = 0;
    int64_t min_len = 0, max_len = 0, width = 0, min_rep = 1, max_rep = 10, item_len = 3;
    app.describe(
        "Write episodes of the NTM paper's copy, repeat-copy or associative-recall task.",
        "--task TASK --count N [--len-min L] [--len-max L] [--width W] [--seed S] -o DATA.npz");
    app.options().add_options()("task", po::value(&task_name)->value_name("TASK")->required(),
                                "copy, repeat-copy or associative-recall")(
        "count,n", po::value(&count)->value_name("N")->required(), "number of episodes (>= 1)")(
        "len-min", po::value(&min_len)->value_name("L"),
        "shortest sequence (associative recall: fewest items); default 1 (recall: 2)")(
        "len-max", po::value(&max_len)->value_name("L"),
        "longest sequence (recall: most items); default copy 20, repeat-copy 10, recall 6")(
        "width", po::value(&width)->value_name("W"),
        "bits per vector; default 8 (associative recall: 6)")(
        "repeats-min", po::value(&min_rep)->value_name("K")->default_value(min_rep),
        "repeat-copy: fewest repeats")(
        "repeats-max", po::value(&max_rep)->value_name("K")->default_value(max_rep),
        "repeat-copy: most repeats (the count is given to the network as K / repeats-max)")(
        "item-len", po::value(&item_len)->value_name("V")->default_value(item_len),
        "associative recall: vectors per item")(
        "output,o", po::value(&out)->value_name("DATA.npz")->required(), "the data set (.npz)");
    app.enable(cli::kSeed);
    app.epilog(
        "DATA.npz holds, for C episodes padded with zeros to the longest T steps:\n"
        "  inputs [C, T, in], targets [C, T, out], mask [C, T] (1 where the output is scored),\n"
        "  steps [C] (steps of each episode), lengths [C] (sequence length or items),\n"
        "  repeats [C] (repeat-copy; 0 otherwise).\n"
        "copy: in = W + 1 (delimiter channel W), out = W, 2L + 1 steps. repeat-copy: in = W + 2\n"
        "(delimiter W, repeat count W + 1), out = W + 1 (end marker W), L + 2 + KL + 1 steps.\n"
        "associative-recall: in = W + 2 (item delimiter W, query delimiter W + 1), out = W.");
    app.parse();
    data::SeqTaskOptions opt = data::SeqTaskOptions::defaults(
        cli::parse_option("--task", [&] { return data::parse_seq_task(task_name); }));
    if (app.given("len-min")) opt.min_len = min_len;
    if (app.given("len-max")) opt.max_len = max_len;
    if (app.given("width")) opt.width = width;
    opt.min_repeats = min_rep;
    opt.max_repeats = max_rep;
    opt.item_len = item_len;
    opt.validate();
    if (count < 1) throw UsageError("--count must be >= 1");
    if (count > 10000000) throw UsageError("--count must be <= 10000000");
    Rng rng(app.common().seed);
    std::vector<data::Episode> eps;
    int64_t tmax = 0;
    for (long long i = 0; i < count; ++i) {
      eps.push_back(data::make_episode(opt, rng));
      tmax = std::max(tmax, eps.back().input.dim(0));
    }
    const int64_t c = count, in = opt.input_width(), ow = opt.output_width();
    Tensor inputs({c, tmax, in}), targets({c, tmax, ow}), mask({c, tmax}), steps({c}), lengths({c}),
        repeats({c});
    for (int64_t i = 0; i < c; ++i) {
      const data::Episode& e = eps[static_cast<size_t>(i)];
      const int64_t t = e.input.dim(0);
      std::copy(e.input.values().begin(), e.input.values().end(), inputs.data() + i * tmax * in);
      std::copy(e.target.values().begin(), e.target.values().end(), targets.data() + i * tmax * ow);
      std::copy(e.mask.values().begin(), e.mask.values().end(), mask.data() + i * tmax);
      steps[i] = static_cast<float>(t);
      lengths[i] = static_cast<float>(e.len);
      repeats[i] = static_cast<float>(e.repeats);
    }
    io::write_npz(out, {{"inputs", &inputs},
                        {"targets", &targets},
                        {"mask", &mask},
                        {"steps", &steps},
                        {"lengths", &lengths},
                        {"repeats", &repeats}});
  });
}

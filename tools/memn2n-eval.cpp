// memn2n-eval: a trained memory network's error on each bAbI task's test set (Table 1).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/babi.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/memn2n/file.h"
#include "attnkit/memory/memn2n/train.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("memn2n-eval", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    namespace mem = attnkit::memory;
    namespace data = attnkit::data;
    std::string model_path, dir, task, out = "-", split = "test";
    double pass = 5.0;
    app.describe(
        "Per-task test error of a memory network on bAbI, with the mean and the "
        "failed-task count.",
        "[OPTIONS] --model MODEL -i DIR");
    app.options().add_options()("model,m", po::value(&model_path)->value_name("MODEL")->required(),
                                "a model from memn2n-train")(
        "input,i", po::value(&dir)->value_name("DIR")->required(),
        "a bAbI directory holding qaN_*_test.txt files")(
        "task", po::value(&task)->value_name("LIST"),
        "tasks to evaluate: N, all, or a list such as 1,2,4-20 (default: the model's)")(
        "split", po::value(&split)->value_name("S")->default_value(split),
        "test, or train (the files qaN_*_<S>.txt)")(
        "pass", po::value(&pass)->value_name("PCT")->default_value(pass),
        "a task passes when its error is at most PCT percent")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "the table (- is standard output)");
    app.enable(attnkit::cli::kQuiet);
    app.epilog(
        "Output (TSV): a header 'task error pass', one row per task (error in percent with\n"
        "one decimal, pass yes/no), then 'mean E yes|no' and 'failed N -'.");
    app.parse();
    attnkit::cli::parse_option("--split", [&] {
      return attnkit::parse_choice<int>("split", split, {{"test", 0}, {"train", 1}});
    });
    std::vector<int> tasks;
    if (app.given("task")) {
      try {
        tasks = data::parse_babi_tasks(task);
      } catch (const attnkit::DataError& e) {
        throw attnkit::UsageError(e.what());
      }
    }
    const mem::LoadedMemN2N m = mem::load_memn2n(model_path);
    if (tasks.empty()) tasks = m.tasks;
    std::ostringstream o;
    o << "task\terror\tpass\n";
    double sum = 0.0;
    int failed = 0;
    char b[64];
    for (int t : tasks) {
      const auto ex = data::read_babi(data::babi_task_file(dir, t, split));
      const auto enc = mem::encode_babi(ex, m.vocab, m.model->config().memory);
      const double err = 100.0 * mem::error_rate(enc, mem::evaluate(*m.model, enc).predicted);
      std::snprintf(b, sizeof b, "%d\t%.1f\t%s\n", t, err, err <= pass ? "yes" : "no");
      o << b;
      sum += err;
      failed += err > pass;
    }
    const double mean = tasks.empty() ? 0.0 : sum / static_cast<double>(tasks.size());
    std::snprintf(b, sizeof b, "mean\t%.1f\t%s\nfailed\t%d\t-\n", mean, mean <= pass ? "yes" : "no",
                  failed);
    o << b;
    if (out == "-") {
      std::cout << o.str();
    } else {
      attnkit::io::write_file(out, o.str());
    }
  });
}

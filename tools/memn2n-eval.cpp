// memn2n-eval: a trained memory network's error on each bAbI task's test set (Table 1).
#include <iostream>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/babi.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/memn2n/file.h"
#include "attnkit/memory/memn2n/run.h"

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
        "Output (TSV): a header 'task error pass facts', one row per task (error in percent\n"
        "with one decimal, pass yes/no, facts: supporting-fact selection in percent, - when\n"
        "the file marks none), then 'mean E yes|no F' and 'failed N - -'. Fact selection\n"
        "(Kim et al. 2017): hop k's argmax sentence against the k-th supporting fact as the\n"
        "file lists them; with fewer facts than hops the later hops are not scored, and a\n"
        "fact the memory no longer holds is a miss.");
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
    const std::string table = mem::eval_table(m, dir, tasks, split, pass);
    if (out == "-") {
      std::cout << table;
    } else {
      attnkit::io::write_file(out, table);
    }
  });
}

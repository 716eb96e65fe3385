// seqdata-gen: synthetic sequence-to-sequence corpora (SOURCE<TAB>TARGET lines).
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/data/dates.h"
#include "attnkit/io/tensor_io.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("seqdata-gen", argc, argv, [](cli::App& app) {
    std::string task, out = "-";
    long long count = 0;
    app.describe("Write a synthetic sequence-to-sequence corpus.",
                 "--task dates --count N [--seed S] [-o OUT]");
    app.options().add_options()("task", po::value(&task)->value_name("TASK")->required(),
                                "the task: dates (human-written dates to ISO YYYY-MM-DD)")(
        "count,n", po::value(&count)->value_name("N"), "number of pairs (>= 0; required)")(
        "output,o", po::value(&out)->value_name("OUT")->default_value("-"),
        "where to write (- is standard output)");
    app.enable(cli::kSeed);
    app.epilog(
        "Output: one pair per line, SOURCE<TAB>TARGET, as seq2seq tools and vocab-build read\n"
        "it. The same --seed gives the same corpus on every machine. The NTM tasks (copy,\n"
        "repeat-copy, associative-recall) are seqtask-gen's; the transduction tasks of\n"
        "exercise 8-4 (reverse, bigram-flip, anbn, ...) are transduce-gen's.");
    app.parse();
    if (task == "copy" || task == "repeat-copy" || task == "associative-recall")
      throw UsageError("--task " + task +
                       " is a task of the Neural Turing Machine: seqtask-gen --task " + task +
                       " writes its episodes");
    for (const char* t :
         {"reverse", "bigram-flip", "anbn", "anbncn", "anbncndn", "anb2n", "anbmcnm"})
      if (task == t)
        throw UsageError("--task " + task +
                         " is a transduction task of exercise 8-4: transduce-gen --task " + task +
                         " writes its pairs");
    cli::parse_option("--task", [&] { return parse_choice<int>("task", task, {{"dates", 0}}); });
    // Checked after the task, so that a task of another tool is pointed to it first.
    if (!app.given("count")) throw UsageError("the option '--count' is required but missing");
    if (count < 0) throw UsageError("--count must be >= 0");
    std::string text;
    for (const auto& e : data::generate_dates(count, app.common().seed))
      text += e.source + "\t" + e.target + "\n";
    io::write_file(out, text);
  });
}

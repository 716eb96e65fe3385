// transduce-gen: the synthetic transduction tasks of exercise 8-4's papers, seeded.
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/data/transduce.h"
#include "attnkit/io/tensor_io.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("transduce-gen", argc, argv, [](cli::App& app) {
    std::string task, out = "-";
    int64_t count = 1000;
    data::TransduceOptions o;
    app.describe(
        "Seeded pairs of the transduction tasks of Grefenstette et al. 2015 (copy, "
        "reverse, bigram flip) and Joulin & Mikolov 2015 (a^n b^n and kin) as "
        "SOURCE<TAB>TARGET lines; and exercise 8-4's content tasks (membership, count-distinct, "
        "dedup), Andrychowicz & Kurach 2016's (sort, merge, search) and Kim et al. 2017's "
        "tree transduction (infix-prefix).",
        "--task TASK [--len-min A] [--len-max B] [--depth-min D] [--depth-max E] [--count C] "
        "[--seed S] [-o FILE]");
    app.options().add_options()(
        "task", po::value(&task)->value_name("TASK")->required(),
        "copy, reverse, bigram-flip, anbn, anbncn, anbncndn, anb2n, anbmcnm, membership, "
        "count-distinct, dedup, sort, merge, search or infix-prefix")(
        "len-min", po::value(&o.len_min)->value_name("A")->default_value(o.len_min),
        "shortest source (n for the counting tasks)")(
        "len-max", po::value(&o.len_max)->value_name("B")->default_value(o.len_max),
        "longest source (n for the counting tasks)")(
        "symbols", po::value(&o.symbols)->value_name("N")->default_value(o.symbols),
        "all but the counting tasks: the alphabet, symbols 1..N")(
        "queries", po::value(&o.queries)->value_name("K")->default_value(o.queries),
        "membership: queries a pair")(
        "depth-min", po::value(&o.depth_min)->value_name("D")->default_value(o.depth_min),
        "infix-prefix: the shallowest expression")(
        "depth-max", po::value(&o.depth_max)->value_name("E")->default_value(o.depth_max),
        "infix-prefix: the deepest expression")(
        "count", po::value(&count)->value_name("C")->default_value(count), "pairs")(
        "output,o", po::value(&out)->value_name("FILE")->default_value(out),
        "the pairs (- is standard output)");
    app.enable(cli::kSeed);
    app.epilog(
        "Grefenstette et al. train on lengths 8-64 and test on 65-128 with 128 symbols (the\n"
        "defaults are the training range). Bigram flip uses even lengths. The counting tasks\n"
        "give the free part as the source and what must follow as the target: anbn a^n -> b^n,\n"
        "anbncn a^n -> b^n c^n, anbncndn a^n -> b^n c^n d^n, anb2n a^n -> b^2n, anbmcnm\n"
        "a^n b^m -> c^(n+m) (n and m from --len-min to --len-max).\n"
        "Content tasks: membership x1 .. xn ? q1 .. qK -> yes/no per query (half the queries\n"
        "absent, where a symbol is left); count-distinct x1 .. xn -> c^d (d distinct symbols);\n"
        "dedup x1 .. xn -> the distinct symbols in first-seen order. HAM's tasks: sort -> the\n"
        "source ascending; merge: two sorted runs joined by + -> merged; search: n pairs\n"
        "KEY VALUE, keys distinct and ascending, then ? KEY -> its value.\n"
        "infix-prefix (Kim et al. 2017, 5.1): an expression of numbers 0..20 and + - * / in\n"
        "infix form, every compound operand bracketed -> its prefix form, depth (operators on\n"
        "the longest path) uniform in --depth-min..--depth-max; the --len options do not apply.");
    app.parse();
    o.task = data::parse_transduce_task(task);
    if (count < 0) throw UsageError("--count must be >= 0");
    Rng rng(app.common().seed);
    const std::string text = data::format_transduce(data::make_transduce(o, count, rng));
    if (out == "-")
      std::cout << text;
    else
      io::write_file(out, text);
  });
}

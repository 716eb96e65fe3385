// stackmem-step: one update of a neural stack, queue or deque from explicit inputs, in double
// precision (Grefenstette et al. 2015, equations 1-3 and their queue and deque forms).
#include <cstdio>
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/stackmem/memory.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("stackmem-step", argc, argv, [](cli::App& app) {
    std::string kind = "stack", strengths, values, value, value_bottom;
    double push = 0, pop = 0, push_bottom = 0, pop_bottom = 0;
    app.describe(
        "One update of a continuous stack, queue or deque: the new strengths, values "
        "and read vector, in double precision.",
        "[--memory stack|queue|deque] [--strengths S --values V] --value v [--push D] [--pop U]");
    app.options().add_options()("memory", po::value(&kind)->value_name("KIND")->default_value(kind),
                                "stack, queue or deque")(
        "strengths", po::value(&strengths)->value_name("S"),
        "the n strengths, bottom first (inline \"0.5,1\" or a tensor file; none: an empty memory)")(
        "values", po::value(&values)->value_name("V"),
        "the n values of width m, bottom first (n x m numbers, inline or a tensor file)")(
        "value", po::value(&value)->value_name("v")->required(),
        "the pushed value (m numbers; the deque's top value)")(
        "push", po::value(&push)->value_name("D")->default_value(push),
        "push strength d in [0, 1] (the deque's top end)")(
        "pop", po::value(&pop)->value_name("U")->default_value(pop),
        "pop strength u in [0, 1] (the deque's top end)")("value-bottom",
                                                          po::value(&value_bottom)->value_name("v"),
                                                          "deque: the value pushed at the bottom")(
        "push-bottom", po::value(&push_bottom)->value_name("D")->default_value(push_bottom),
        "deque: push strength at the bottom")(
        "pop-bottom", po::value(&pop_bottom)->value_name("U")->default_value(pop_bottom),
        "deque: pop strength at the bottom");
    app.epilog(
        "Output: a line 'strengths' with the n + 1 new strengths (deque: n + 2, the new bottom\n"
        "first), a line 'value K' for each row of the new memory, and a line 'read' with the read\n"
        "vector (deque: the top read, then the bottom read); numbers with 17 significant digits.");
    app.parse();
    memory::StackStepIn in;
    const memory::StackKind k = memory::parse_stack_kind(kind);
    in.value = cli::read_vector(value, "--value");
    in.m = static_cast<int64_t>(in.value.size());
    if (!strengths.empty()) in.strengths = cli::read_vector(strengths, "--strengths");
    if (!values.empty()) in.values = cli::read_vector(values, "--values");
    if (in.strengths.empty() != in.values.empty())
      throw UsageError("--strengths and --values go together");
    in.push = push, in.pop = pop;
    if (k == memory::StackKind::Deque) {
      if (value_bottom.empty()) throw UsageError("a deque needs --value-bottom");
      in.value_bottom = cli::read_vector(value_bottom, "--value-bottom");
      in.push_bottom = push_bottom, in.pop_bottom = pop_bottom;
    } else if (!value_bottom.empty() || app.given("push-bottom") || app.given("pop-bottom")) {
      throw UsageError("--value-bottom, --push-bottom and --pop-bottom are for a deque");
    }
    const memory::StackStepOut o = memory::stack_step(k, in);
    auto line = [](const char* head, const double* v, size_t n) {
      std::string s = head;
      char buf[40];
      for (size_t i = 0; i < n; ++i) {
        std::snprintf(buf, sizeof buf, " %.17g", v[i]);
        s += buf;
      }
      return s + "\n";
    };
    std::string text = line("strengths", o.strengths.data(), o.strengths.size());
    for (size_t i = 0; i < o.strengths.size(); ++i)
      text += line(("value " + std::to_string(i + 1)).c_str(), o.values.data() + i * in.m,
                   static_cast<size_t>(in.m));
    text += line("read", o.read.data(), o.read.size());
    std::cout << text;
  });
}

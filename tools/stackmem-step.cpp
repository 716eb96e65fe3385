// stackmem-step: one update of a neural stack, queue or deque from explicit inputs, in double
// precision (Grefenstette et al. 2015, equations 1-3 and their queue and deque forms); or of
// a set memory (memory/stackmem/set.h) or a tree memory (memory/stackmem/ham.h).
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/memory_step.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("stackmem-step", argc, argv, [](cli::App& app) {
    cli::MemoryStepArgs a;
    app.describe(
        "One update of a continuous stack, queue or deque, or of a set memory: the new "
        "strengths, values and read vector, in double precision.",
        "[--memory stack|queue|deque] [--strengths S --values V] --value v [--push D] [--pop U]\n"
        "  stackmem-step --memory set [--strengths S --keys K --values V] --key k --value v\n"
        "      [--write W] [--erase E] [--threshold T] --read-key q --erase-key e\n"
        "  stackmem-step --memory tree --tree-weights FILE --leaves L --state h [--hard]");
    app.options().add_options()("memory",
                                po::value(&a.kind)->value_name("KIND")->default_value(a.kind),
                                "stack, queue, deque, set or tree")(
        "strengths", po::value(&a.strengths)->value_name("S"),
        "the n strengths, bottom first (inline \"0.5,1\" or a tensor file; none: an empty memory)")(
        "values", po::value(&a.values)->value_name("V"),
        "the n values of width m, bottom first (n x m numbers, inline or a tensor file)")(
        "value", po::value(&a.value)->value_name("v"),
        "the pushed value (m numbers; the deque's top value; a set's new slot's value)")(
        "push", po::value(&a.push)->value_name("D")->default_value(a.push),
        "push strength d in [0, 1] (the deque's top end)")(
        "pop", po::value(&a.pop)->value_name("U")->default_value(a.pop),
        "pop strength u in [0, 1] (the deque's top end)")(
        "value-bottom", po::value(&a.value_bottom)->value_name("v"),
        "deque: the value pushed at the bottom")(
        "push-bottom", po::value(&a.push_bottom)->value_name("D")->default_value(a.push_bottom),
        "deque: push strength at the bottom")(
        "pop-bottom", po::value(&a.pop_bottom)->value_name("U")->default_value(a.pop_bottom),
        "deque: pop strength at the bottom")("keys", po::value(&a.keys)->value_name("K"),
                                             "set: the n keys of width m (n x m numbers)")(
        "key", po::value(&a.key)->value_name("k"), "set: the new slot's key (m numbers)")(
        "read-key", po::value(&a.read_key)->value_name("q"), "set: the read key (m numbers)")(
        "erase-key", po::value(&a.erase_key)->value_name("e"), "set: the erase key (m numbers)")(
        "write", po::value(&a.write)->value_name("W")->default_value(a.write),
        "set: the new slot's strength in [0, 1]")(
        "erase", po::value(&a.erase)->value_name("E")->default_value(a.erase),
        "set: the erase strength in [0, 1]")(
        "threshold", po::value(&a.threshold)->value_name("T")->default_value(a.threshold),
        "set: the read's sentinel logit (the score a slot must pass to count as found)")(
        "tree-weights", po::value(&a.tree_weights)->value_name("FILE"),
        "tree: JOIN, SEARCH and WRITE's weights, lines 'join_w' (m x 2m), 'join_b' (m), "
        "'search_w' (m + c), 'search_b', 'write_w' (m x (m + c)), 'write_b' (m)")(
        "leaves", po::value(&a.leaves)->value_name("L"), "tree: the n x m leaves (n a power of 2)")(
        "summaries", po::value(&a.summaries)->value_name("S"),
        "tree: the (n - 1) x m inner nodes, root first (none: JOINed from the leaves)")(
        "state", po::value(&a.state)->value_name("h"), "tree: the controller's state (c numbers)")(
        "hard", po::bool_switch(&a.hard),
        "tree: the hard descent (the likelier child at each node; O(log n)) instead of the soft");
    app.epilog(
        "Output: a line 'strengths' with the n + 1 new strengths (deque: n + 2, the new bottom\n"
        "first), a line 'value K' for each row of the new memory, and a line 'read' with the read\n"
        "vector (deque: the top read, then the bottom read); each number in the shortest form "
        "that\n"
        "reads back exactly; then 'ops', the step's operations (its access cost: each pop 2 a\n"
        "stored strength, each read m + 2 a value; a stack or queue of n, 2n + (n + 1)(m + 2)).\n"
        "A set (memory/stackmem/set.h: erase by content, a read by content, then a new slot):\n"
        "lines 'strengths' (n + 1, the new slot last), 'erase_weights' (n), 'read_weights'\n"
        "(n), 'read' (the m numbers read, then their total weight) and 'ops' (the\n"
        "multiply-adds and exps of the step: its access cost). A tree (memory/stackmem/ham.h: "
        "HAM's\n"
        "SEARCH descent, read, WRITE, JOIN back up): lines 'summaries' and 'leaves' (the new\n"
        "tree), 'weights' (the leaves'), 'branch' (SEARCH's p(right) per inner node; hard:\n"
        "nan off the path), ['leaf' (hard),] 'read', 'build_ops' (JOINing the summaries when\n"
        "not given) and 'ops' (the access's multiply-adds).");
    app.parse();
    a.stack_given = app.given("push") || app.given("pop");
    a.bottom_given = app.given("push-bottom") || app.given("pop-bottom");
    a.set_given = app.given("write") || app.given("erase") || app.given("threshold");
    std::cout << cli::memory_step(a);
  });
}

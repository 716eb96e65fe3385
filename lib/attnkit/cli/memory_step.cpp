#include "attnkit/cli/memory_step.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/io/binary.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/io/tsv_log.h"
#include "attnkit/memory/stackmem/ham.h"
#include "attnkit/memory/stackmem/memory.h"
#include "attnkit/memory/stackmem/set.h"

namespace attnkit::cli {

namespace {

std::string set_step(const MemoryStepArgs& a) {
  if (a.stack_given || a.bottom_given || !a.value_bottom.empty())
    throw UsageError(
        "--push, --pop, --push-bottom, --pop-bottom and --value-bottom are for a stack, queue "
        "or deque");
  if (a.key.empty() || a.read_key.empty() || a.erase_key.empty())
    throw UsageError("a set needs --key, --read-key and --erase-key");
  if (a.strengths.empty() != a.keys.empty() || a.strengths.empty() != a.values.empty())
    throw UsageError("--strengths, --keys and --values go together");
  if (a.value.empty()) throw UsageError("a set needs --value");
  memory::SetStepIn s;
  s.value = read_vector(a.value, "--value");
  s.key = read_vector(a.key, "--key");
  s.read_key = read_vector(a.read_key, "--read-key");
  s.erase_key = read_vector(a.erase_key, "--erase-key");
  s.m = static_cast<int64_t>(s.key.size());
  s.write = a.write, s.erase = a.erase, s.threshold = a.threshold;
  if (!a.strengths.empty()) {
    s.strengths = read_vector(a.strengths, "--strengths");
    s.keys = read_vector(a.keys, "--keys");
    s.values = read_vector(a.values, "--values");
  }
  return memory::format_set_step(memory::set_step(s));
}

// The named lines of a tree's weights file.
memory::TreeWeights read_tree_weights(const std::string& path) {
  const std::string text = io::read_text(path);
  std::map<std::string, std::vector<double>> named;
  std::istringstream in(text);
  std::string l;
  int64_t line_no = 0;
  while (std::getline(in, l)) {
    ++line_no;
    std::istringstream is(l);
    std::string name;
    if (!(is >> name)) continue;
    std::vector<double>& v = named[name];
    std::string word;
    while (is >> word) {
      char* end = nullptr;
      const double x = std::strtod(word.c_str(), &end);
      if (*end) throw DataError("'" + word + "' is not a number", path, line_no);
      v.push_back(x);
    }
  }
  auto get = [&](const char* name) {
    auto it = named.find(name);
    if (it == named.end()) throw DataError(std::string("no line '") + name + "'", path);
    return it->second;
  };
  memory::TreeWeights w;
  w.join_w = get("join_w"), w.join_b = get("join_b"), w.search_w = get("search_w");
  w.write_w = get("write_w"), w.write_b = get("write_b");
  const auto b = get("search_b");
  if (b.size() != 1) throw DataError("search_b must be one number", path);
  w.search_b = b[0];
  w.m = static_cast<int64_t>(w.join_b.size());
  w.c = static_cast<int64_t>(w.search_w.size()) - w.m;
  return w;
}

std::string tree_step(const MemoryStepArgs& a) {
  if (a.stack_given || a.bottom_given || a.set_given || !a.value_bottom.empty() ||
      !a.strengths.empty() || !a.values.empty() || !a.value.empty() || !a.keys.empty() ||
      !a.key.empty() || !a.read_key.empty() || !a.erase_key.empty())
    throw UsageError("a tree takes --tree-weights, --leaves, --state, --summaries and --hard");
  if (a.tree_weights.empty() || a.leaves.empty() || a.state.empty())
    throw UsageError("a tree needs --tree-weights, --leaves and --state");
  const memory::TreeWeights w = read_tree_weights(a.tree_weights);
  memory::TreeStepIn in;
  in.leaves = read_vector(a.leaves, "--leaves");
  in.h = read_vector(a.state, "--state");
  if (!a.summaries.empty()) in.summaries = read_vector(a.summaries, "--summaries");
  in.hard = a.hard;
  return memory::format_tree_step(memory::tree_step(w, in), a.hard);
}

std::string line(const char* head, const double* v, size_t n) {
  std::string s = head;
  for (size_t i = 0; i < n; ++i) s += " " + io::format_double(v[i]);
  return s + "\n";
}

}  // namespace

std::string memory_step(const MemoryStepArgs& a) {
  // Every kind named in the refusal of an unknown one.
  const std::string kind = parse_choice<std::string>("memory", a.kind,
                                                     {{"stack", "stack"},
                                                      {"queue", "queue"},
                                                      {"deque", "deque"},
                                                      {"set", "set"},
                                                      {"tree", "tree"}});
  if (kind == "set") return set_step(a);
  if (kind == "tree") return tree_step(a);
  if (!a.tree_weights.empty() || !a.leaves.empty() || !a.summaries.empty() || !a.state.empty() ||
      a.hard)
    throw UsageError("--tree-weights, --leaves, --summaries, --state and --hard are for a tree");
  const memory::StackKind k = memory::parse_stack_kind(kind);
  if (!a.keys.empty() || !a.key.empty() || !a.read_key.empty() || !a.erase_key.empty() ||
      a.set_given)
    throw UsageError(
        "--keys, --key, --read-key, --erase-key, --write, --erase and --threshold are for a set");
  if (a.value.empty()) throw UsageError("a stack, queue or deque needs --value");
  memory::StackStepIn in;
  in.value = read_vector(a.value, "--value");
  in.m = static_cast<int64_t>(in.value.size());
  if (!a.strengths.empty()) in.strengths = read_vector(a.strengths, "--strengths");
  if (!a.values.empty()) in.values = read_vector(a.values, "--values");
  if (in.strengths.empty() != in.values.empty())
    throw UsageError("--strengths and --values go together");
  in.push = a.push, in.pop = a.pop;
  if (k == memory::StackKind::Deque) {
    if (a.value_bottom.empty()) throw UsageError("a deque needs --value-bottom");
    in.value_bottom = read_vector(a.value_bottom, "--value-bottom");
    in.push_bottom = a.push_bottom, in.pop_bottom = a.pop_bottom;
  } else if (!a.value_bottom.empty() || a.bottom_given) {
    throw UsageError("--value-bottom, --push-bottom and --pop-bottom are for a deque");
  }
  const memory::StackStepOut o = memory::stack_step(k, in);
  std::string text = line("strengths", o.strengths.data(), o.strengths.size());
  for (size_t i = 0; i < o.strengths.size(); ++i)
    text += line(("value " + std::to_string(i + 1)).c_str(), o.values.data() + i * in.m,
                 static_cast<size_t>(in.m));
  return text + line("read", o.read.data(), o.read.size()) + "ops " + std::to_string(o.ops) + "\n";
}

}  // namespace attnkit::cli

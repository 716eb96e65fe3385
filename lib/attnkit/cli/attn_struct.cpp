// attn-struct's run (attn_struct.h).
#include "attnkit/cli/attn_struct.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "attnkit/attention/mha.h"
#include "attnkit/attention/structured.h"
#include "attnkit/cli/cli.h"
#include "attnkit/core/choice.h"
#include "attnkit/core/error.h"
#include "attnkit/train/trainer.h"

namespace attnkit::cli {

namespace at = attention;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

Tensor read(const std::string& path) { return path.empty() ? Tensor() : io::read_tensor(path); }

}  // namespace

void run_attn_struct(const AttnStructArgs& a, const io::WriteOptions& write) {
  const at::StructKind kind = parse_option("--kind", [&] { return at::parse_struct_kind(a.kind); });
  const bool chain = kind == at::StructKind::Chain;
  const std::string& pot_path = chain ? a.unary : a.arcs;
  if (pot_path.empty())
    throw UsageError("--kind " + a.kind + " needs " + (chain ? "--unary U" : "--arcs A"));
  if (!(chain ? a.arcs : a.unary).empty() || (!chain && !a.pairwise.empty()))
    throw UsageError(std::string(chain              ? "--arcs"
                                 : !a.unary.empty() ? "--unary"
                                                    : "--pairwise") +
                     " is not for --kind " + a.kind);
  const bool npz = ends_with(io::split_member(a.output).first, ".npz");
  if (npz && !a.emit.empty())
    throw UsageError("--emit picks one array to write; OUT.npz holds every array");
  const std::string emit = !a.emit.empty() ? a.emit : a.value.empty() ? "marginals" : "context";
  std::vector<std::string> names{"marginals", "log-partition", "argmax", "context"};
  if (!chain) names.insert(names.begin() + 3, "heads");
  parse_option("--emit", [&] {
    if (std::find(names.begin(), names.end(), emit) == names.end())
      throw ChoiceError("output", emit, names);
    return 0;
  });
  if (emit == "context" && a.value.empty()) throw UsageError("--emit context needs --value V");
  // The output path before any work: a folder, or a file that cannot be created, fails now.
  if (a.output != "-") train::check_writable(io::split_member(a.output).first);

  const Tensor pot = read(pot_path), pw = read(a.pairwise), v = read(a.value);
  at::StructInput in;
  in.kind = kind;
  in.unary = &pot;
  in.pairwise = a.pairwise.empty() ? nullptr : &pw;
  auto located = [&](const std::string& file, auto&& f) {
    try {
      f();
    } catch (Error& e) {
      e.locate(file);
      throw;
    }
  };
  located(pot_path, [&] {
    if (pot.rank() >= 1 && pot.dim(-1) == 0) throw DataError("no inputs (n = 0)");
    in.pairwise = nullptr;
    in.check();
  });
  in.pairwise = a.pairwise.empty() ? nullptr : &pw;
  located(a.pairwise, [&] { in.check(); });
  if (!a.lengths.empty())
    located(a.lengths, [&] {
      in.lengths = at::key_lengths_from(io::read_tensor(a.lengths), in.batch(), in.size());
    });
  at::StructOutput result = at::structured_attention(in);
  std::vector<std::pair<std::string, Tensor>> arrays;
  located(a.value, [&] {
    arrays = at::structured_arrays(kind, std::move(result), a.value.empty() ? nullptr : &v,
                                   in.batched());
  });
  if (npz) {
    io::write_npz(io::split_member(a.output).first, arrays);
    return;
  }
  for (auto& [name, t] : arrays)
    if (name == emit) io::write_tensor(a.output, t, write);
}

}  // namespace attnkit::cli

// ntm-address: one Neural Turing Machine addressing step from explicit inputs, printing the
// four stages (content, interpolation, shift, sharpening).
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm/run.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ntm-address", argc, argv, [](cli::App& app) {
    std::string memory, key, shift = "0,1,0", prev, out = "-";
    double beta = 1.0, gate = 1.0, gamma = 1.0;
    app.describe(
        "One Neural Turing Machine addressing step: content, interpolation, shift, sharpening.",
        "-i MEMORY --key K [--beta B] [--gate G] [--shift S] [--gamma Y] [--prev W] [-o OUT]");
    app.options().add_options()(
        "input,i", po::value(&memory)->value_name("FILE")->required(),
        "the memory, an N x M matrix (text, .npy, FILE.npz:NAME; - is standard input)")(
        "key", po::value(&key)->value_name("K")->required(),
        "key, M values: inline (0.5,-1,0.3) or a file")(
        "beta", po::value(&beta)->value_name("B")->default_value(beta), "key strength (>= 0)")(
        "gate", po::value(&gate)->value_name("G")->default_value(gate),
        "interpolation gate in [0, 1] (1: content only, 0: previous weighting only)")(
        "shift", po::value(&shift)->value_name("S")->default_value(shift),
        "shift weighting over shifts -R..+R, 2R+1 values: inline or a file")(
        "gamma", po::value(&gamma)->value_name("Y")->default_value(gamma), "sharpening (>= 1)")(
        "prev", po::value(&prev)->value_name("W"),
        "previous weighting, N values: inline or a file (default: uniform 1/N)")(
        "output,o", po::value(&out)->value_name("OUT")->default_value("-"),
        "OUT.npz: arrays wc, wg, wshift, w; otherwise a 4 x N matrix, one stage per row "
        "(text, or .npy by the name; - is standard output)");
    app.enable(cli::kOutput);
    app.epilog(
        "Stages, one row each in this order:\n"
        "  wc      content:       softmax_i(beta cos(k, M_i)), cos with norms sqrt(u.u + 1e-8)\n"
        "  wg      interpolation: g wc + (1 - g) prev\n"
        "  wshift  shift:         wshift(i) = sum_j wg(j) s((i - j) mod N)\n"
        "  w       sharpening:    softmax_i(gamma ln(wshift(i) + 1e-12)) = wshift^gamma / sum\n"
        "Computed in double precision; printed as float32 (shortest round-trip digits).");
    app.parse();
    const Tensor mem = io::read_tensor(memory);
    if (mem.rank() != 2)
      throw ShapeError("memory must be an N x M matrix, got " + shape_str(mem.shape()), memory);
    const std::vector<double> kv = cli::read_vector(key, "--key");
    const std::vector<double> sv = cli::read_vector(shift, "--shift");
    const std::vector<double> pv =
        prev.empty() ? std::vector<double>() : cli::read_vector(prev, "--prev");
    const memory::AddressStages s = memory::run_ntm_address(mem, kv, beta, gate, sv, gamma, pv);
    if (io::split_member(out).first.size() >= 4 && out.compare(out.size() - 4, 4, ".npz") == 0)
      return io::write_npz(out, memory::address_arrays(s));
    io::write_tensor(out, memory::address_matrix(s), app.write_options());
  });
}

// ntm-address: one Neural Turing Machine addressing step from explicit inputs, printing the
// four stages (content, interpolation, shift, sharpening).
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/memory/ntm_address.h"

using namespace attnkit;
namespace po = boost::program_options;

int main(int argc, char** argv) {
  return cli::run("ntm-address", argc, argv, [](cli::App& app) {
    std::string memory, key, shift = "0,1,0", prev, out = "-";
    double beta = 1.0, gate = 1.0, gamma = 1.0;
    app.describe(
        "One Neural Turing Machine addressing step: content, interpolation, shift, sharpening.",
        "--memory M --key K [--beta B] [--gate G] [--shift S] [--gamma Y] [--prev W] [-o OUT]");
    app.options().add_options()(
        "memory", po::value(&memory)->value_name("M")->required(),
        "memory, an N x M matrix (text, .npy, FILE.npz:NAME; - is standard input)")(
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
    Tensor mem = io::read_tensor(memory);
    if (mem.rank() != 2)
      throw ShapeError("memory must be an N x M matrix, got " + shape_str(mem.shape()), memory);
    const int64_t n = mem.dim(0), m = mem.dim(1);
    const std::vector<double> mv(mem.values().begin(), mem.values().end());
    const std::vector<double> kv = cli::read_vector(key, "--key");
    const std::vector<double> sv = cli::read_vector(shift, "--shift");
    const std::vector<double> pv = prev.empty()
                                       ? std::vector<double>(static_cast<size_t>(n), 1.0 / n)
                                       : cli::read_vector(prev, "--prev");
    auto sized = [&](const std::vector<double>& v, int64_t want, const char* opt) {
      if (static_cast<int64_t>(v.size()) != want)
        throw UsageError(std::string(opt) + " has " + std::to_string(v.size()) + " values, the " +
                         std::to_string(n) + " x " + std::to_string(m) + " memory needs " +
                         std::to_string(want));
    };
    sized(kv, m, "--key");
    sized(pv, n, "--prev");
    if (sv.size() % 2 == 0 || static_cast<int64_t>(sv.size()) > n)
      throw UsageError("--shift has " + std::to_string(sv.size()) +
                       " values: expected an odd number 2R+1 (shifts -R..+R) of at most N = " +
                       std::to_string(n));
    if (!std::isfinite(beta) || beta < 0) throw UsageError("--beta must be a number >= 0");
    if (!std::isfinite(gate) || gate < 0 || gate > 1) throw UsageError("--gate must be in [0, 1]");
    if (!std::isfinite(gamma) || gamma < 1) throw UsageError("--gamma must be a number >= 1");
    const memory::AddressStages s = memory::ntm_address(mv, n, m, kv, beta, gate, sv, gamma, pv);
    auto row = [n](const std::vector<double>& v) {
      return Tensor({n}, std::vector<float>(v.begin(), v.end()));
    };
    if (io::split_member(out).first.size() >= 4 && out.compare(out.size() - 4, 4, ".npz") == 0) {
      Tensor a = row(s.wc), b = row(s.wg), c = row(s.wshift), d = row(s.w);
      io::write_npz(out, {{"wc", &a}, {"wg", &b}, {"wshift", &c}, {"w", &d}});
      return;
    }
    Tensor all({4, n});
    for (int64_t i = 0; i < n; ++i) {
      all.at(0, i) = static_cast<float>(s.wc[i]);
      all.at(1, i) = static_cast<float>(s.wg[i]);
      all.at(2, i) = static_cast<float>(s.wshift[i]);
      all.at(3, i) = static_cast<float>(s.w[i]);
    }
    io::write_tensor(out, all, app.write_options());
  });
}

// hopfield-energy: the energy of every state row under a classic or a modern Hopfield net.
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/hopfield/file.h"
#include "attnkit/memory/hopfield/model.h"
#include "attnkit/memory/hopfield/modern.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("hopfield-energy", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    namespace mem = attnkit::memory;
    using attnkit::Tensor;
    using attnkit::UsageError;
    std::string net_path, in = "-", out = "-", patterns, image_size;
    float beta = 1.0f;
    bool modern = false;
    app.describe("The energy of each state (one per row) under a Hopfield net.",
                 "[OPTIONS] -m NET.npz -i STATES\n"
                 "   or: hopfield-energy [OPTIONS] --modern --patterns X --beta B -i STATES");
    app.options().add_options()("model,m", po::value(&net_path)->value_name("NET.npz"),
                                "classic net: W (N x N) and b (N)")(
        "input,i", po::value(&in)->value_name("STATES")->default_value("-"),
        "states, one per row (classic: -1/+1); text, .npy or PBM; - is standard input")(
        "output,o", po::value(&out)->value_name("FILE")->default_value("-"),
        "energies, one per line (.npy or text by the extension; - is standard output)")(
        "modern", po::bool_switch(&modern), "modern Hopfield energy (Ramsauer et al. 2020)")(
        "patterns", po::value(&patterns)->value_name("X"),
        "modern: the stored patterns, P x d, one per row")(
        "beta", po::value(&beta)->value_name("B"), "modern: inverse temperature (> 0)")(
        "image-size", po::value(&image_size)->value_name("WxH"),
        "PBM tiles of W x H pixels, one state each");
    app.enable(attnkit::cli::kOutput);
    app.epilog(
        "Classic: E = -1/2 s'Ws - b's. Modern: E = -lse(beta, X xi) + 1/2 xi'xi\n"
        "+ log(P)/beta + 1/2 M^2, lse(beta, z) = log(sum_mu exp(beta z_mu))/beta, M the largest\n"
        "norm of a stored pattern. Sums in double precision; written as float32.");
    app.parse();
    mem::ImageLayout layout = mem::parse_layout(image_size, 0);
    Tensor e;
    if (modern) {
      if (app.given("model")) throw UsageError("--model is for classic nets, not --modern");
      if (!app.given("patterns") || !app.given("beta"))
        throw UsageError("--modern needs --patterns X and --beta B");
      if (!(beta > 0.0f)) throw UsageError("--beta must be a number above 0");
      const Tensor x = mem::read_patterns(patterns, &layout, false);
      const Tensor xi = mem::read_patterns(in, &layout, false);
      try {
        e = mem::modern_energy(x, xi, beta);
      } catch (attnkit::Error& err) {
        err.locate(in);
        throw;
      }
    } else {
      if (!app.given("model")) throw UsageError("-m NET.npz is required (or --modern)");
      if (app.given("patterns") || app.given("beta"))
        throw UsageError("--patterns and --beta are for --modern");
      const mem::Net net = mem::load_net(net_path);
      const Tensor s = mem::read_patterns(in, &layout, true);
      try {
        e = mem::energy(net, s);
      } catch (attnkit::Error& err) {
        err.locate(in);
        throw;
      }
    }
    e.reshape({e.size(), 1});
    attnkit::io::write_tensor(out, e, app.write_options());
  });
}

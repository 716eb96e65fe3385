// tensor-rand: a tensor of seeded random numbers (normal, uniform or ±1).
#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/core/rng.h"
#include "attnkit/core/tensor_random.h"

using namespace attnkit;

int main(int argc, char** argv) {
  return cli::run("tensor-rand", argc, argv, [](cli::App& app) {
    std::string shape_text, dist = "normal", out = "-";
    RandomSpec spec;
    app.describe("Write a tensor of seeded random numbers.",
                 "--shape DIMS [--dist normal|uniform|sign] [OPTIONS] [-o OUT]");
    app.options().add_options()("shape",
                                cli::po::value(&shape_text)->value_name("DIMS")->required(),
                                "shape of the tensor, e.g. 3,4 or 2x3x4 (rank 1 to 4; required)")(
        "dist", cli::po::value(&dist)->value_name("D")->default_value("normal"),
        "distribution: normal, uniform (in [low, high)) or sign (-1 or 1)")(
        "mean", cli::po::value(&spec.mean)->value_name("M")->default_value(0.0, "0"),
        "mean of the normal distribution")(
        "std", cli::po::value(&spec.std)->value_name("S")->default_value(1.0, "1"),
        "standard deviation of the normal distribution")(
        "low", cli::po::value(&spec.low)->value_name("A")->default_value(0.0, "0"),
        "lower end of the uniform distribution (included)")(
        "high", cli::po::value(&spec.high)->value_name("B")->default_value(1.0, "1"),
        "upper end of the uniform distribution (excluded)")(
        "output,o", cli::po::value(&out)->value_name("OUT")->default_value("-"),
        "output: FILE.npy, FILE.npz[:NAME], a text file, or - (standard output)");
    app.enable(cli::kSeed | cli::kOutput);
    app.epilog(
        "Values are drawn in row-major order with attnkit's portable generator\n"
        "(xoshiro256**): the same --seed gives byte-identical output on every machine.");
    app.parse();
    const Shape shape = cli::parse_shape(shape_text, "--shape");
    spec.dist = cli::parse_option("--dist", [&] { return parse_distribution(dist); });
    const bool normal = spec.dist == Distribution::Normal;
    for (const char* opt : {"mean", "std"})
      if (app.given(opt) && !normal)
        throw UsageError(std::string("--") + opt + " applies to --dist normal only");
    for (const char* opt : {"low", "high"})
      if (app.given(opt) && spec.dist != Distribution::Uniform)
        throw UsageError(std::string("--") + opt + " applies to --dist uniform only");
    Tensor t(shape);
    Rng rng(app.common().seed);
    try {
      fill_random(t, rng, spec);
    } catch (const DataError& e) {
      throw UsageError(e.what());
    }
    io::write_tensor(out, t, app.write_options());
  });
}

// posenc: the sinusoidal positional encoding table, or a matrix with it added.
#include <cstdint>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"
#include "attnkit/posenc/sinusoidal.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("posenc", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    using namespace attnkit;
    int64_t length = 0, dim = 0;
    std::string layout, add, out;
    posenc::SinusoidalOptions opt;
    app.describe("Write the sinusoidal positional encoding (L x D), or add it to a matrix.",
                 "[OPTIONS] --length L --dim D\n   or: posenc [OPTIONS] --add FILE");
    app.options().add_options()("length,l", po::value(&length)->value_name("L"),
                                "number of positions (rows)")(
        "dim,d", po::value(&dim)->value_name("D"), "encoding dimension (columns)")(
        "base", po::value(&opt.base)->value_name("B")->default_value(10000.0, "10000"),
        "wavelength base: column pair i has angle p / B^(2i/D)")(
        "offset", po::value(&opt.offset)->value_name("P")->default_value(0),
        "position of the first row (rows are P .. P+L-1)")(
        "layout", po::value(&layout)->value_name("NAME")->default_value("interleaved"),
        "interleaved (sin, cos, sin, cos, ...) or split (all sines, then all cosines)")(
        "add", po::value(&add)->value_name("FILE"),
        "add the encoding to the rows of FILE (L x D, or a batch B x L x D where each item "
        "gets it); L and D default to FILE's")(
        "output,o", po::value(&out)->value_name("FILE")->default_value("-"),
        "where to write (.npy by name, else text; - standard output)");
    app.enable(cli::kOutput);
    app.epilog(
        "Encoding: column pair i (0 <= i < ceil(D/2)) at position p has the angle\n"
        "a = p / B^(2i/D), computed in double precision; values are written as float32.\n"
        "Layout interleaved: column 2i = sin a, column 2i+1 = cos a (an odd D ends with a\n"
        "sine). Layout split: the ceil(D/2) sine columns first, then the floor(D/2) cosines.\n"
        "\n"
        "FILE is .npy or text (detected by content); the output format follows -o's name.");
    app.parse();
    opt.layout =
        attnkit::cli::parse_option("--layout", [&] { return posenc::parse_layout(layout); });
    Tensor result;
    if (app.given("add")) {
      result = io::read_tensor(add);
      try {
        if (result.rank() == 2 || result.rank() == 3) {
          const int64_t l = result.dim(-2), d = result.dim(-1);
          const int64_t want_l = app.given("length") ? length : l;
          const int64_t want_d = app.given("dim") ? dim : d;
          if (want_l != l || want_d != d)
            throw DataError("shape " + shape_str(result.shape()) + " does not match --length " +
                            std::to_string(want_l) + " --dim " + std::to_string(want_d) + " (" +
                            shape_str({want_l, want_d}) +
                            (result.rank() == 3 ? " per item)" : ")"));
        }
        posenc::add_sinusoidal(result, opt);
      } catch (Error& e) {
        if (dynamic_cast<UsageError*>(&e) == nullptr) e.locate(add);
        throw;
      }
    } else {
      if (!app.given("length") || !app.given("dim"))
        throw UsageError("--length and --dim are required (or --add FILE)");
      result = posenc::sinusoidal(length, dim, opt);
    }
    io::write_tensor(out, result, app.write_options());
  });
}

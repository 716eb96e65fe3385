// tensor-convert: a tensor from one format to another (text, .npy, .npz members; IDX in).
#include "attnkit/cli/cli.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/core/error.h"

using namespace attnkit;

int main(int argc, char** argv) {
  return cli::run("tensor-convert", argc, argv, [](cli::App& app) {
    std::vector<std::string> ins;  // -i and the arguments: IN, or IN OUT
    std::string out = "-", reshape;
    bool f64 = false;
    app.describe("Convert a tensor between text, .npy and .npz.", "[OPTIONS] [[-i] IN [[-o] OUT]]");
    app.options().add_options()(
        "input,i", cli::po::value(&ins)->value_name("IN")->composing(),
        "input: text, .npy, .npz or IDX, plain or gzip (detected by content); FILE.npz:NAME "
        "picks a member; - is standard input (the default)")(
        "output,o", cli::po::value(&out)->value_name("OUT")->default_value("-"),
        "output: FILE.npy, FILE.npz[:NAME] (member NAME, default arr_0), any other name "
        "text, - standard output (text unless --npy)")("f64", cli::po::bool_switch(&f64),
                                                       "write .npy/.npz values as float64 (<f8)")(
        "reshape", cli::po::value(&reshape)->value_name("DIMS"),
        "give the values a new shape with the same element count, e.g. 2,3,4");
    app.positional().add("input", 2);
    app.enable(cli::kOutput);
    app.epilog(
        "Any .npy dtype (float16/32/64, signed and unsigned integers, bool; either byte\n"
        "order; C or Fortran order) is read and converted to float32, and so is IDX\n"
        "(MNIST's format: u8, i8, i16, i32, f32, f64; gzip-compressed or not; image bytes\n"
        "stay 0-255). Text holds rank 0 to 3; a rank-4 tensor needs .npy or .npz output.");
    app.enable(cli::kPictures);
    app.parse();
    // "-i IN OUT", "IN OUT", "IN -o OUT": a second input word is the output.
    if (ins.size() == 2 && !app.given("output"))
      out = ins[1];
    else if (ins.size() > 1)
      throw UsageError("more than one input (and one output) given");
    const std::string in = ins.empty() ? "-" : ins[0];
    const Shape shape = app.given("reshape") ? cli::parse_shape(reshape, "--reshape") : Shape{};
    Tensor t = io::read_tensor(in);
    if (app.given("reshape")) {
      try {
        t.reshape(shape);
      } catch (Error& e) {
        e.locate(io::split_member(in).first);
        throw;
      }
    }
    io::WriteOptions w = app.write_options();
    w.f64 = f64;
    io::write_tensor(out, t, w);
  });
}

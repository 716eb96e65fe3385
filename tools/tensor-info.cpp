// tensor-info: one line of facts per tensor: format, dtype, shape and statistics.
#include <cstdio>
#include <iostream>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/core/tensor_stats.h"

using namespace attnkit;

namespace {

std::string shape_text(const Shape& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

std::string info_line(const std::string& file, const io::SourceInfo& info, const Tensor& t) {
  const TensorStats s = tensor_stats(t);
  std::string format = info.format == io::Format::Npy   ? "npy"
                       : info.format == io::Format::Npz ? "npz:" + info.member
                       : info.format == io::Format::Idx ? (info.gzip ? "idx.gz" : "idx")
                       : info.format == io::Format::Pgm ? "pgm"
                       : info.format == io::Format::Png ? "png"
                                                        : "text";
  if (info.fortran_order) format += ",fortran";
  auto num = [](double v) { return io::format_number(static_cast<float>(v)); };
  return file + "\t" + format + "\t" + info.dtype + "\t" + shape_text(t.shape()) + "\t" +
         num(s.min) + "\t" + num(s.max) + "\t" + num(s.mean) + "\t" + num(s.std) + "\t" +
         std::to_string(s.nan) + "\t" + std::to_string(s.inf) + "\n";
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run("tensor-info", argc, argv, [](cli::App& app) {
    std::vector<std::string> inputs{"-"};
    bool no_header = false;
    app.describe("Print the format, dtype, shape and statistics of tensors.",
                 "[OPTIONS] [FILE...]");
    app.options().add_options()(
        "input,i",
        cli::po::value(&inputs)->value_name("FILE")->multitoken()->default_value({"-"}, "-"),
        "inputs (also as arguments): text, .npy, .npz, FILE.npz:NAME or IDX (plain or gzip); - is "
        "standard input")("no-header", cli::po::bool_switch(&no_header),
                          "leave out the line of column names");
    app.positional().add("input", -1);
    app.epilog(
        "Output: one line per tensor (per member of an .npz given without :NAME),\n"
        "tab-separated, after a line of the column names:\n"
        "  file      the input as given (- for standard input)\n"
        "  format    text, npy, npz:MEMBER (\",fortran\" added for Fortran order), idx or\n"
        "            idx.gz (gzip-compressed IDX), pgm or png (grey pictures in [0,1])\n"
        "  dtype     the type on disk (<f4, >f8, <i8, |u1, |b1, ...; IDX: |u1, |i1, >i2,\n"
        "            >i4, >f4, >f8), or text\n"
        "  shape     the dimensions joined by x (3x4), or scalar\n"
        "  min       the smallest finite value (nan when there is none)\n"
        "  max       the largest finite value\n"
        "  mean      the mean of the finite values\n"
        "  std       their standard deviation (population, as NumPy's default)\n"
        "  nan       the count of NaN values\n"
        "  inf       the count of infinite values\n"
        "Sums are accumulated in double; numbers are printed as the nearest float.");
    app.enable(cli::kPictures);
    app.parse();
    if (!no_header) std::cout << "file\tformat\tdtype\tshape\tmin\tmax\tmean\tstd\tnan\tinf\n";
    for (const std::string& spec : inputs) {
      const auto [file, member] = io::split_member(spec);
      const std::string bytes = io::read_all(file);
      if (member.empty() && io::detect_format(bytes) == io::Format::Npz) {
        for (const io::NpzMember& m : io::parse_npz(bytes, file))
          std::cout << info_line(spec, m.info, m.tensor);
      } else {
        io::SourceInfo info;
        const Tensor t = io::parse_tensor(bytes, file, member, &info);
        std::cout << info_line(spec, info, t);
      }
    }
  });
}

// hopfield-store: a Hopfield net (W, b) that stores the rows of a pattern file.
#include <cstdio>
#include <iostream>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/core/error.h"
#include "attnkit/memory/hopfield/file.h"
#include "attnkit/memory/hopfield/model.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("hopfield-store", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    namespace mem = attnkit::memory;
    std::string in = "-", out, rule = "hebb", image_size;
    app.describe("Store bipolar patterns in a Hopfield net (W and b in an .npz).",
                 "[OPTIONS] -i PATTERNS -o NET.npz");
    app.options().add_options()(
        "input,i", po::value(&in)->value_name("PATTERNS")->default_value("-"),
        "patterns, one per row of -1/+1 (text, .npy, or PBM images); - is standard input")(
        "output,o", po::value(&out)->value_name("NET.npz")->required(),
        "the net: W (N x N, symmetric, zero diagonal) and b (N thresholds, zero)")(
        "rule", po::value(&rule)->value_name("RULE")->default_value(rule),
        "hebb, storkey or pseudo-inverse")(
        "image-size", po::value(&image_size)->value_name("WxH"),
        "cut PBM images into tiles of W x H pixels, one pattern per tile (default: one "
        "pattern per image)");
    app.enable(attnkit::cli::kQuiet);
    app.epilog(
        "Rules: hebb w_ij = (1/N) sum_mu p_i p_j; storkey (Storkey 1997) adds the patterns\n"
        "one by one, correcting for the fields of those already stored; pseudo-inverse (the\n"
        "projection rule) makes W the projection onto the patterns' span. The diagonal is\n"
        "zero in every case. PBM pixels: black = +1, white = -1, taken row by row.");
    app.parse();
    const mem::Rule r = attnkit::cli::parse_option("--rule", [&] { return mem::parse_rule(rule); });
    mem::ImageLayout layout = mem::parse_layout(image_size, 0);
    const attnkit::Tensor p = mem::read_patterns(in, &layout);
    const mem::Net net = mem::store(p, r);
    mem::save_net(out, net);
    if (!app.common().quiet) {
      char alpha[32];
      std::snprintf(alpha, sizeof alpha, "%.4g",
                    net.n() ? static_cast<double>(p.dim(0)) / static_cast<double>(net.n()) : 0.0);
      std::cerr << "hopfield-store: " << p.dim(0) << " patterns of N = " << net.n()
                << " neurons stored by the " << mem::rule_name(r)
                << " rule (alpha = P/N = " << alpha << ")\n";
    }
  });
}

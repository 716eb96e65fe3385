// layer-time: seconds per forward pass of a self-attention, convolution or recurrent layer
// over a random sequence, with the layer's maximum path length (d2l exercise 8-3).
#include <cstdint>
#include <cstdio>
#include <string>

#include "attnkit/cli/cli.h"
#include "attnkit/complexity/seq_layers.h"
#include "attnkit/core/error.h"

int main(int argc, char** argv) {
  return attnkit::cli::run("layer-time", argc, argv, [](attnkit::cli::App& app) {
    namespace po = boost::program_options;
    namespace cx = attnkit::complexity;
    std::string layer;
    int64_t length = 0, dim = 0, kernel = 3;
    int repeat = 3;
    bool header = false, dilated = false;
    app.describe("Time one self-attention, convolution or RNN layer on a random sequence.",
                 "[OPTIONS] --layer attention|conv|rnn --length N --dim D");
    app.options().add_options()(
        "layer", po::value(&layer)->value_name("NAME")->required(),
        "attention (softmax(X X^T / sqrt D) X), conv (1-D, D channels in and out, K taps, "
        "zero padding) or rnn (tanh Elman recurrence, D hidden units)")(
        "length,l", po::value(&length)->value_name("N")->required(), "sequence length (rows of X)")(
        "dim,d", po::value(&dim)->value_name("D")->required(), "width of each position")(
        "kernel", po::value(&kernel)->value_name("K")->default_value(3),
        "convolution taps (the path length of conv uses it too)")(
        "dilated", po::bool_switch(&dilated),
        "report the path length of a stack of dilated convolutions (dilation K^l at layer l)")(
        "repeat", po::value(&repeat)->value_name("R")->default_value(3),
        "forward passes; the best time is reported")("header", po::bool_switch(&header),
                                                     "print a header line first");
    app.enable(attnkit::cli::kSeed);
    app.epilog(
        "Output: one tab-separated line\n"
        "  layer  N  D  K  seconds  max_path  flops\n"
        "seconds is the best of R passes (wall clock, after the inputs and random weights\n"
        "are made); max_path is the number of layers (steps, for rnn) a signal needs between\n"
        "the two farthest positions: attention 1, conv ceil((N-1)/(K-1)) (dilated:\n"
        "ceil(log_K N)), rnn N-1. K is '-' for attention and rnn.\n"
        "\n"
        "Cost: attention O(N^2 D), conv O(K N D^2), rnn O(N D^2) of which N steps are\n"
        "sequential. The attention is the attention proper, without the D x D projections.");
    app.parse();
    const cx::SeqLayer l =
        attnkit::cli::parse_option("--layer", [&] { return cx::parse_seq_layer(layer); });
    if (length < 1) throw attnkit::UsageError("--length must be at least 1");
    if (dim < 1) throw attnkit::UsageError("--dim must be at least 1");
    if (kernel < 1) throw attnkit::UsageError("--kernel must be at least 1");
    if (repeat < 1) throw attnkit::UsageError("--repeat must be at least 1");
    if (l == cx::SeqLayer::Conv && kernel < 2 && length > 1)
      throw attnkit::UsageError("--kernel 1 never connects two positions: use 2 or more");
    const int64_t path = cx::max_path_length(l, length, kernel, dilated);
    uint64_t flops = 0;
    const double seconds =
        cx::time_layer(l, length, dim, kernel, repeat, app.common().seed, nullptr, &flops);
    if (header) std::printf("layer\tN\tD\tK\tseconds\tmax_path\tflops\n");
    const std::string k = l == cx::SeqLayer::Conv ? std::to_string(kernel) : "-";
    std::printf("%s\t%lld\t%lld\t%s\t%.6g\t%lld\t%llu\n", cx::seq_layer_name(l).c_str(),
                static_cast<long long>(length), static_cast<long long>(dim), k.c_str(), seconds,
                static_cast<long long>(path), static_cast<unsigned long long>(flops));
  });
}

// The command-line layer shared by every tool: option groups, --help/--version, the BLAS
// set-up (right kernel, thread count), and the one place where exceptions become exit
// statuses and `<tool>: <file>:<line>: <what>` messages.
//
// A tool's main() is:
//   int main(int argc, char** argv) {
//     return attnkit::cli::run("my-tool", argc, argv, [](attnkit::cli::App& app) {
//       std::string in;
//       app.describe("one-line summary", "[OPTIONS] -i FILE");
//       app.options().add_options()("input,i", po::value(&in)->default_value("-"), "input");
//       app.parse();            // --help/--version end the run here (exit 0)
//       ...do the work...
//     });
//   }
//
// Configuration keys (hyper-parameters, training settings) are declared apart from the other
// options, in app.config_options(): they are given on the command line as usual or, by their
// long names, in YAML files named by --config (repeatable). Precedence: built-in default <
// first --config file < later --config file < command line. A file may also set the tool's
// own options (its paths: input, valid, output, log, ...) and the common ones (seed,
// threads, ...) by their long names, so that one file holds a whole run. An unknown key or a
// bad value in a file is a UsageError naming the file, the line and the key. --dump-config
// prints the effective configuration (every key, defaults included, then the options given
// and the seed) as YAML and exits 0, before any data file is read or a required option is
// asked for; feeding that output back with --config gives the same run. app.config_yaml() is the
// same YAML, to store in a model file; io::StoredConfig (io/config.h) reads such text back.
//
//       int hidden; double lr;
//       app.config_options().add_options()
//           ("hidden", po::value(&hidden)->default_value(128), "hidden units")
//           ("lr", po::value(&lr)->default_value(1e-3), "learning rate");
//       app.parse();
//       model_file.config_yaml = app.config_yaml();
#pragma once

#include <yaml-cpp/yaml.h>

#include <boost/program_options.hpp>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/io/tensor_io.h"

namespace attnkit::cli {

namespace po = boost::program_options;

// --shard K/N: the K-th (1-based) of N contiguous slices of a tool's M independent items,
// items [M(K-1)/N, MK/N) (integer division). The N slices cover the items in order, each once,
// and differ in size by at most one; with M < N some are empty.
struct Shard {
  int64_t k = 1, n = 1;
  bool given = false;  // --shard was on the command line
  int64_t begin(int64_t m) const { return m * (k - 1) / n; }
  int64_t end(int64_t m) const { return m * k / n; }
};

// Parses "K/N" (1 <= K <= N); UsageError naming --shard otherwise.
Shard parse_shard(const std::string& text);

// Options every tool shares (bound by App; the flags say which a tool offers).
struct Common {
  int threads = 0;                  // --threads: 0 = automatic (core/cpus.h)
  bool quiet = false;               // --quiet: no progress or summary on stderr
  uint64_t seed = 0;                // --seed
  bool npy = false;                 // --npy: .npy on standard output instead of text
  int precision = -1;               // --precision: significant digits of text output (-1 shortest)
  std::vector<std::string> config;  // --config FILE.yaml (repeatable)
  bool dump_config = false;         // --dump-config
  Shard shard;                      // --shard K/N (kShard)
};

enum Flags : unsigned {
  kSeed = 1u << 0,
  kQuiet = 1u << 1,
  kOutput = 1u << 2,  // --npy, --precision (the tool declares -o itself)
  kConfig = 1u << 3,
  kShard = 1u << 4,  // --shard K/N: set with App::shard_items()
};

// Thrown by App::parse() after printing --help or --version: the run ends with status 0.
struct EarlyExit {};

class App {
 public:
  App(std::string name, int argc, char** argv);
  const std::string& name() const { return name_; }

  // Summary (first line of --help) and synopsis ("Usage: <tool> <synopsis>").
  void describe(std::string summary, std::string synopsis);
  // Free text printed after the options in --help (formats, examples).
  void epilog(std::string text) { epilog_ = std::move(text); }
  // The tool's own options; common ones are added by enable().
  po::options_description& options() { return tool_; }
  // The tool's configuration keys (see above). Declaring any enables --config and
  // --dump-config. Only long names are used in YAML; a short alias works on the command line.
  po::options_description& config_options() { return config_; }
  po::positional_options_description& positional() { return positional_; }
  // Options accepted but not listed by --help (bleu's extra positional files, named in its
  // error).
  po::options_description& hidden_options() { return hidden_; }
  void enable(unsigned flags) { flags_ |= flags; }
  // Offers --shard K/N over the tool's items, named in --help ("lines of the input").
  void shard_items(std::string items) {
    shard_items_ = std::move(items);
    flags_ |= kShard;
  }
  const Shard& shard() const { return common_.shard; }

  // Parses argv. Prints --help/--version and throws EarlyExit; throws UsageError on bad
  // usage; applies --threads to BLAS.
  void parse();
  const po::variables_map& vm() const { return vm_; }
  // Given on the command line or in a --config file (not restored from a checkpoint by
  // store_fallback).
  bool given(const std::string& opt) const {
    return vm_.count(opt) && !vm_[opt].defaulted() && !restored_.count(opt);
  }
  // Each occurrence of option `key` on the command line, in order: the spelling used (the
  // first token: "-o", "--output", "--output=x", "-ox") and its value.
  std::vector<std::pair<std::string, std::string>> occurrences(const std::string& key) const;
  Common& common() { return common_; }

  // Write options for tensors, from --npy and --precision.
  io::WriteOptions write_options() const;

  // `key`, one of config_options(), is stored in model files and checkpoints under the name
  // `stored` (the key's earlier spelling): the files keep their keys when an option is renamed,
  // so that they stay byte for byte what they were and old ones load. The command line,
  // --config files and --dump-config know `key` only. Before parse().
  void stored_key(std::string key, std::string stored) {
    stored_keys_.emplace_back(std::move(key), std::move(stored));
  }
  // A switch that this tool no longer offers (fields::retired), stored in model files and
  // checkpoints as `stored: false` at this place among config_options() (declared so far),
  // so that the files stay byte for byte what they were. The command line, --config files and
  // --dump-config do not know it. Before parse().
  void retired_switch(std::string stored) {
    retired_.emplace_back(config_.options().size(), std::move(stored));
  }
  // The effective configuration as YAML, to store in a model file: one line per key of
  // config_options(), in declaration order ("key: value"; a key without a value is "key: ~"),
  // each key under its stored name (stored_key()). --dump-config prints the same with the
  // keys' own names. After parse().
  std::string config_yaml() const { return yaml(true); }
  // After parse(): keys given neither on the command line nor in a --config file take their
  // values from `yaml` (the configuration stored in a checkpoint being resumed: stored names),
  // then the bound variables are updated. Keys of `yaml` that this tool does not know are
  // ignored (an older or newer tool may have written them); a bad value is a DataError naming
  // `name`, the line and the key.
  void apply_config_fallback(const std::string& yaml, const std::string& name);
  // Whether `name` is the long name of one of this tool's own options or keys.
  bool knows_option(const std::string& name) const;

  // Called by parse() once the command line and the --config files are stored, before the
  // values are checked (required options) and bound: --resume (cli/training.h) fills in
  // there what the checkpoint holds, with store_fallback().
  void before_notify(std::function<void(App&)> f) { before_notify_ = std::move(f); }
  // Inside before_notify: values for the keys of `yaml` given neither on the command line nor
  // in a --config file. options false: configuration keys (stored names); true: the tool's
  // own options (paths), as given_options_yaml() writes them. Unknown keys are ignored; a bad
  // value is a DataError naming `name`, the line and the key.
  void store_fallback(const std::string& yaml, const std::string& name, bool options);
  // The tool's own options (not configuration keys) given on the command line or restored by
  // store_fallback, as YAML, but those named in `skip`. After parse().
  std::string given_options_yaml(const std::vector<std::string>& skip) const;

 private:
  po::options_description common_group();  // bound to common_, as flags_ asks
  std::string help_text(const po::options_description& common) const;
  std::string name_;
  int argc_;
  char** argv_;
  std::string summary_, synopsis_, epilog_, shard_items_, shard_text_;
  unsigned flags_ = 0;
  void store_yaml(const std::string& text, const std::string& name, bool strict,
                  bool options = false);
  std::function<void(App&)> before_notify_;
  std::set<std::string> restored_;      // keys store_fallback set
  std::string yaml(bool stored) const;  // stored: keys under their stored names
  // --dump-config: yaml(false), then the tool's options given (paths) and the common ones a
  // file may set (--seed): fed back with --config, the same run.
  std::string dump_yaml() const;
  po::options_description file_common_;  // the common options a --config file may set
  std::vector<std::pair<std::string, std::string>> stored_keys_;  // key, stored name
  std::vector<std::pair<size_t, std::string>> retired_;           // before option i, a stored name
  po::options_description tool_{"Options"};
  po::options_description config_{"Configuration"};
  po::options_description hidden_{"Hidden"};
  std::vector<po::option> parsed_;
  po::positional_options_description positional_;
  po::variables_map vm_;
  Common common_;
};

// Runs a tool: BLAS set-up (re-executes once with OPENBLAS_CORETYPE when OpenBLAS picked a
// weaker kernel than the CPU has and the user set none), then `body`, then a checked flush of
// standard output. Returns the exit status: 0 success, 1 bad data or failed run, 2 bad usage.
int run(const char* name, int argc, char** argv, const std::function<void(App&)>& body);

// The one-line version report: "attnkit 0.1.0 (OpenBLAS core SkylakeX, 2 threads from the
// affinity mask)": the thread count and where it came from (core/cpus.h).
std::string version_line();

// Parses "3,4" (or "3x4") into a shape; UsageError naming the option on bad text.
Shape parse_shape(const std::string& text, const std::string& option);

// With --shard, text output of a tool's slice that concatenates (cat) with the other slices
// into the whole run's output: rows of a matrix, matrices of a batch (a slice after the first
// begins with the blank line that separates it from the previous one). .npy and .npz outputs
// do not concatenate: with --shard they are a UsageError (convert the merged text with
// tensor-convert). `first` is the index of the slice's first item in the whole input.
void write_shard_tensor(const App& app, const std::string& path, const Tensor& t, int64_t first);
// Items [begin, end) of t's first dimension (rows of a matrix, matrices of a batch), copied.
Tensor slice_first(const Tensor& t, int64_t begin, int64_t end);
// UsageError when --shard is given and `path` (or --npy on standard output) would be binary.
void check_shard_text_output(const App& app, const std::string& path);

// Parses the value of `option` with `parse` (a choice parser, say): an Error it throws (a
// ChoiceError naming the field and the choices) becomes a UsageError with the option in
// front: "--score: unknown score 'dott' (choose dot, ...)".
template <class F>
auto parse_option(const std::string& option, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
}

// A vector given inline ("0.1,0.8,0.1" or "0.1 0.8 0.1") or as a tensor file (any shape; its
// values in row-major order); a file without values is a DataError naming `option`.
std::vector<double> read_vector(const std::string& arg, const std::string& option);

// Whether standard error is a terminal (progress bars) — for later tools.
bool stderr_is_tty();

}  // namespace attnkit::cli

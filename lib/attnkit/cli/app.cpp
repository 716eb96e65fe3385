// The App: option groups, parsing the command line and --config files' precedence, and the
// suggestions for a mistyped option.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <thread>
#include <typeinfo>
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/detail.h"
#include "attnkit/cli/pictures.h"
#include "attnkit/core/blas.h"
#include "attnkit/core/cpus.h"
#include "attnkit/core/helpers.h"
#include "attnkit/core/parallel.h"
#include "attnkit/io/binary.h"

#ifndef ATTNKIT_VERSION
#define ATTNKIT_VERSION "0.0.0"
#endif

namespace attnkit::cli {

namespace detail {

// Suggestions for a mistyped name: the edit distance (insertions, deletions, substitutions
// and swaps of two neighbouring letters, the commonest typo, each costing 1).
static size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string closest_option(const std::string& key, const po::options_description& d) {
  std::string best;
  size_t best_d = 3;
  for (const auto& o : d.options()) {
    const size_t e = edit_distance(key, o->long_name());
    if (e < best_d) best_d = e, best = o->long_name();
  }
  return best;
}

// Boost.Program_options builds an error's text by replacing placeholders (%value%, %option%,
// ...) until none is left, so a value that itself holds one ("--threads 1%value%") makes
// what() loop for ever (found by the YAML fuzzer). Where any of the given text holds a '%',
// the message names the option only.
std::string po_message(const po::error& e, bool percent_given) {
  if (!percent_given) return e.what();
  if (const auto* n = dynamic_cast<const po::error_with_option_name*>(&e)) {
    const std::string o = n->get_option_name();
    return "a bad value for " + (o.empty() ? std::string("an option") : "'" + o + "'");
  }
  return "bad command-line or configuration usage";
}

// A single-valued option given more than once: the last occurrence wins, as in most
// command-line tools (Boost refuses it: "cannot be specified more than once"). Repeatable
// options (a vector's values, composing ones) keep every occurrence.
static bool repeatable(const po::option_description& d) {
  const auto& s = *d.semantic();
  if (s.is_composing()) return true;
  const auto* t = dynamic_cast<const po::typed_value_base*>(&s);
  if (!t) return false;
  const std::type_info& v = t->value_type();
  return v == typeid(std::vector<std::string>) || v == typeid(std::vector<int>) ||
         v == typeid(std::vector<int64_t>) || v == typeid(std::vector<double>);
}

void last_wins(std::vector<po::option>& opts, const po::options_description& d) {
  std::vector<po::option> kept;
  for (size_t i = 0; i < opts.size(); ++i) {
    const std::string& key = opts[i].string_key;
    const po::option_description* o = key.empty() ? nullptr : d.find_nothrow(key, false);
    bool later = false;
    if (o && !repeatable(*o))
      for (size_t j = i + 1; j < opts.size() && !later; ++j) later = opts[j].string_key == key;
    if (!later) kept.push_back(opts[i]);
  }
  opts.swap(kept);
}

}  // namespace detail

using detail::closest_option;
using detail::last_wins;

namespace {
uint64_t g_max_pixels = 0;  // --max-pixels (kPictures, cli/pictures.h): one App a process
}  // namespace

using detail::po_message;

App::App(std::string name, int argc, char** argv)
    : name_(std::move(name)), argc_(argc), argv_(argv) {}

void App::describe(std::string summary, std::string synopsis) {
  summary_ = std::move(summary);
  synopsis_ = std::move(synopsis);
}

po::options_description App::common_group() {
  po::options_description g("Common options");
  g.add_options()("help,h", "print this help and exit")(
      "version", "print the version, the BLAS core and the thread count, and exit")(
      "threads", po::value<int>(&common_.threads)->value_name("N")->default_value(0),
      "threads (0: ATTNKIT_THREADS, else OMP_NUM_THREADS, else the CPUs this process may "
      "run on: its affinity mask, capped by a cgroup CPU quota)");
  if (flags_ & kSeed)
    g.add_options()("seed", po::value<uint64_t>(&common_.seed)->value_name("S")->default_value(0),
                    "random seed (same seed, same output)");
  if (flags_ & kOutput)
    g.add_options()("npy", po::bool_switch(&common_.npy),
                    "write .npy instead of text on standard output")(
        "precision", po::value<int>(&common_.precision)->value_name("P"),
        "significant digits of text output (default: the shortest that reads back exactly)");
  if (flags_ & kQuiet)
    g.add_options()("quiet,q", po::bool_switch(&common_.quiet), "no progress or summary on stderr");
  if (flags_ & kConfig)
    g.add_options()("config,c",
                    po::value<std::vector<std::string>>(&common_.config)->value_name("FILE"),
                    "YAML configuration (repeatable; the command line wins)");
  if (flags_ & kShard)
    g.add_options()("shard", po::value<std::string>(&shard_text_)->value_name("K/N"),
                    ("process only slice K (1 to N) of N contiguous slices of the " + shard_items_ +
                     ": of M items, items M(K-1)/N to MK/N - 1 (numbered from "
                     "0, integer division); the N outputs concatenated in order are the whole "
                     "run's output")
                        .c_str());
  if (flags_ & kPictures)
    g.add_options()(
        "max-pixels",
        po::value<uint64_t>(&g_max_pixels)->value_name("N")->default_value(io::kDefaultMaxPixels),
        "the most pixels a picture (PNG, PGM) may have: a larger one is refused from "
        "its header, before it is decoded");
  if (!config_.options().empty())
    g.add_options()("dump-config", po::bool_switch(&common_.dump_config),
                    "print the effective configuration as YAML and exit");
  return g;
}

void App::parse() {
  bool percent = false;  // see po_message
  for (int i = 1; i < argc_; ++i) percent |= std::strchr(argv_[i], '%') != nullptr;
  if (!config_.options().empty()) flags_ |= kConfig;
  const po::options_description common = common_group();
  po::options_description all;
  all.add(tool_);
  if (!config_.options().empty()) all.add(config_);
  all.add(common);
  if (!hidden_.options().empty()) all.add(hidden_);
  try {
    po::parsed_options parsed =
        po::command_line_parser(argc_, argv_).options(all).positional(positional_).run();
    parsed_ = parsed.options;
    last_wins(parsed.options, all);
    po::store(parsed, vm_);
    if (vm_.count("help")) {
      std::cout << help_text(common);
      throw EarlyExit{};
    }
    if (vm_.count("version")) {
      const int t = vm_["threads"].as<int>();
      if (t < 0) throw UsageError("--threads must be 0 (automatic) or more");
      set_thread_count(thread_count(t));
      blas_set_threads(max_threads());
      std::cout << name_ << " (attnkit) " << ATTNKIT_VERSION << "\n" << version_line() << "\n";
      throw EarlyExit{};
    }
    // The command line is stored first and so wins; then the files, the last one first, so
    // that a later file overrides an earlier one (Boost's store() keeps the first explicit
    // value of an option).
    // The common options a file may set too (--seed, --threads, ...): a file holds a whole run.
    for (const auto& o : common.options())
      if (o->long_name() != "help" && o->long_name() != "version" && o->long_name() != "config" &&
          o->long_name() != "dump-config")
        file_common_.add(o);
    if (vm_.count("config")) {
      const auto files = vm_["config"].as<std::vector<std::string>>();
      for (auto it = files.rbegin(); it != files.rend(); ++it) {
        std::string text;
        try {
          text = io::read_all(*it);
        } catch (const Error& e) {
          throw UsageError(std::string("cannot read configuration: ") + e.what(), *it);
        }
        store_yaml(text, *it, true);
      }
    }
    // --dump-config before the required options are checked and before any file is read:
    // it prints the run's configuration whether or not its data are there.
    if (vm_.count("dump-config") && vm_["dump-config"].as<bool>()) {
      std::cout << dump_yaml();
      throw EarlyExit{};
    }
    if (before_notify_) before_notify_(*this);
    po::notify(vm_);
  } catch (const po::unknown_option& e) {
    // A mistyped long option: the nearest of the options --help lists.
    const std::string token = e.get_option_name();
    const std::string given = token.substr(0, token.find('='));  // "--name=value"
    if (given.size() > 2 && given.compare(0, 2, "--") == 0) {
      const std::string name = given.substr(2);
      po::options_description listed;
      listed.add(tool_);
      if (!config_.options().empty()) listed.add(config_);
      listed.add(common);
      const std::string best = closest_option(name, listed);
      if (!best.empty()) throw UsageError(given + ": did you mean --" + best + "?");
    }
    throw UsageError(po_message(e, percent));
  } catch (const po::error& e) {
    throw UsageError(po_message(e, percent));
  }
  if (common_.threads < 0) throw UsageError("--threads must be 0 (automatic) or more");
  if ((flags_ & kShard) && vm_.count("shard")) common_.shard = parse_shard(shard_text_);
  if (vm_.count("precision") && (common_.precision < 1 || common_.precision > 17))
    throw UsageError("--precision must be between 1 and 17");
  if (flags_ & kPictures) {
    if (g_max_pixels < 1) throw UsageError("--max-pixels must be >= 1");
    io::set_max_pixels(g_max_pixels);
  }
  set_thread_count(thread_count(common_.threads));
  blas_set_threads(max_threads());
}

std::vector<std::pair<std::string, std::string>> App::occurrences(const std::string& key) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const po::option& o : parsed_)
    if (o.string_key == key)
      out.emplace_back(o.original_tokens.empty() ? std::string() : o.original_tokens.front(),
                       o.value.empty() ? std::string() : o.value.front());
  return out;
}

bool App::knows_option(const std::string& name) const {
  if (name.empty() || name[0] == '-') return false;
  for (const po::options_description* d : {&tool_, &config_})
    if (d->find_nothrow(name, false)) return true;
  return false;
}

io::WriteOptions App::write_options() const {
  io::WriteOptions w;
  w.npy_on_stdout = common_.npy;
  w.precision = common_.precision;
  return w;
}

}  // namespace attnkit::cli

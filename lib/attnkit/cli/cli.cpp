#include "attnkit/cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>
#include <system_error>

#include "attnkit/core/blas.h"
#include "attnkit/core/cpus.h"
#include "attnkit/core/error.h"
#include "attnkit/core/helpers.h"
#include "attnkit/core/parallel.h"
#include "attnkit/train/dist.h"

#ifndef ATTNKIT_VERSION
#define ATTNKIT_VERSION "0.0.0"
#endif

namespace attnkit::cli {

namespace {

// OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded: to correct a mis-detected CPU
// the process starts again with the variable set. A user's own setting is never replaced,
// and the variable being set after the first start means this happens at most once.
void ensure_fast_blas(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const std::string want = preferred_blas_core();
  if (!blas_core_is_weaker(blas_core(), want)) return;
  if (setenv("OPENBLAS_CORETYPE", want.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc?): go on with the slower kernel rather than fail
}

// Suggestions for a mistyped name: the edit distance (insertions, deletions, substitutions
// and swaps of two neighbouring letters, the commonest typo, each costing 1), and the option
// of `d` whose long name is nearest to `key`, within distance 2 (empty when none is).
size_t edit_distance(const std::string& a, const std::string& b) {
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

void print_error(const std::string& tool, const Error& e) {
  std::string msg = tool + ": ";
  if (!e.file().empty()) {
    msg += (e.file() == "-" ? std::string("<stdin>") : e.file()) + ":";
    if (e.line() > 0) msg += std::to_string(e.line()) + ":";
    msg += " ";
  }
  msg += e.what();
  std::cerr << msg << "\n";
}

}  // namespace

std::string version_line() {
  std::ostringstream s;
  const ThreadCount t = thread_setting();
  s << "attnkit " << ATTNKIT_VERSION << " (OpenBLAS core " << blas_core() << ", " << t.threads
    << (t.threads == 1 ? " thread" : " threads") << " from " << t.source;
  // OpenBLAS gets the same count; where it could not (beyond its build's limit), say so.
  if (blas_threads() != t.threads) s << "; OpenBLAS " << blas_threads();
  s << ")";
  return s.str();
}

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
  if (!config_.options().empty())
    g.add_options()("dump-config", po::bool_switch(&common_.dump_config),
                    "print the effective configuration as YAML and exit");
  return g;
}

namespace {

// The parameter of an option as --help shows it, cleaned of Boost's defaults: a default
// number in the shortest decimal that reads back to it ("0.1", not "0.10000000000000001"), and
// a named value where the tool gave none ("N" for integers, "X" for reals, "NAME" for words,
// not "arg").
template <class F>
std::string shortest_decimal(F v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <class... T>
bool holds(const po::value_semantic* s) {
  return (... || (dynamic_cast<const po::typed_value<T>*>(s) != nullptr));
}

std::string clean_parameter(const po::option_description& opt) {
  std::string param = opt.format_parameter();
  if (param.empty()) return param;
  std::string name = param, def;
  const size_t open = param.find(" (=");
  if (open != std::string::npos && param.back() == ')') {
    name = param.substr(0, open);
    def = param.substr(open + 3, param.size() - open - 4);
  }
  const po::value_semantic* sem = opt.semantic().get();
  boost::any v;
  if (!def.empty() && sem->apply_default(v)) {
    if (auto d = boost::any_cast<double>(&v))
      def = shortest_decimal(*d);
    else if (auto f = boost::any_cast<float>(&v))
      def = shortest_decimal(*f);
  }
  if (name == "arg") {
    if (holds<int, long, long long, unsigned, unsigned long, unsigned long long>(sem))
      name = "N";
    else if (holds<double, float>(sem))
      name = "X";
    else if (holds<std::vector<std::string>, std::vector<int>, std::vector<double>>(sem))
      name = "LIST";
    else
      name = "NAME";
  }
  return def.empty() && open == std::string::npos ? name : name + " (=" + def + ")";
}

// GNU-style option lines ("  -o, --output FILE   text"), wrapped at 79 columns, so that
// --help reads like other Unix tools and help2man turns it into a man page.
void format_group(std::ostream& s, const char* caption, const po::options_description& group) {
  constexpr size_t kCol = 28, kWidth = 79;
  s << caption << ":\n";
  for (const auto& opt : group.options()) {
    std::string lhs = "  ";
    const std::string shortn =
        opt->canonical_display_name(po::command_line_style::allow_dash_for_short);
    const std::string longn = "--" + opt->long_name();
    if (shortn.size() == 2 && shortn[0] == '-' && shortn != longn)
      lhs += shortn + ", " + longn;
    else
      lhs += "    " + longn;
    std::string param = clean_parameter(*opt);
    if (!param.empty()) lhs += " " + param;
    // Words of the description, wrapped into the right-hand column.
    std::istringstream words(opt->description());
    std::vector<std::string> lines(1);
    for (std::string w; words >> w;) {
      if (!lines.back().empty() && lines.back().size() + 1 + w.size() > kWidth - kCol)
        lines.emplace_back();
      lines.back() += (lines.back().empty() ? "" : " ") + w;
    }
    if (lhs.size() + 2 > kCol) {
      s << lhs << "\n" << std::string(kCol, ' ');
    } else {
      s << lhs << std::string(kCol - lhs.size(), ' ');
    }
    for (size_t i = 0; i < lines.size(); ++i)
      s << (i ? std::string(kCol, ' ') : std::string()) << lines[i] << "\n";
  }
}

}  // namespace

std::string App::help_text(const po::options_description& common) const {
  std::ostringstream s;
  s << "Usage: " << name_ << " " << synopsis_ << "\n" << summary_ << "\n\n";
  format_group(s, "Options", tool_);
  s << "\n";
  if (!config_.options().empty()) {
    format_group(s, "Configuration (options that may also be keys of a --config YAML file)",
                 config_);
    s << "\n";
  }
  format_group(s, "Common options", common);
  if (!epilog_.empty()) s << "\n" << epilog_ << (epilog_.back() == '\n' ? "" : "\n");
  s << "\nExit status: 0 success, 1 bad data or a failed run, 2 bad usage.\n";
  return s.str();
}

namespace {
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
}  // namespace

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
    po::store(parsed, vm_);
    for (const auto& [old_name, name] : aliases_) {
      if (!vm_.count(old_name)) continue;
      if (vm_.count(name) && !vm_[name].defaulted())
        throw UsageError("give --" + name + " once (--" + old_name + " is its old spelling)");
      po::parsed_options as(&all);
      for (const po::option& o : parsed.options)
        if (o.string_key == old_name) {
          po::option n = o;
          n.string_key = name;
          as.options.push_back(n);
        }
      po::store(as, vm_);
    }
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
  if (common_.dump_config) {
    std::cout << config_yaml();
    throw EarlyExit{};
  }
  if (common_.threads < 0) throw UsageError("--threads must be 0 (automatic) or more");
  if ((flags_ & kShard) && vm_.count("shard")) common_.shard = parse_shard(shard_text_);
  if (vm_.count("precision") && (common_.precision < 1 || common_.precision > 17))
    throw UsageError("--precision must be between 1 and 17");
  set_thread_count(thread_count(common_.threads));
  blas_set_threads(max_threads());
}

namespace {

std::string did_you_mean(const std::string& key, const po::options_description& d) {
  const std::string best = closest_option(key, d);
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

long line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

// The shortest decimal that reads back to the same value.
template <class F>
std::string shortest(F v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s == "inf") return ".inf";
  if (s == "-inf") return "-.inf";
  if (s == "nan" || s == "-nan") return ".nan";
  return s;
}

// One value of a variables_map as YAML; false when its type is not one we know.
bool emit_value(YAML::Emitter& e, const boost::any& v) {
  if (auto p = boost::any_cast<std::string>(&v))
    e << YAML::DoubleQuoted << *p;
  else if (auto p = boost::any_cast<bool>(&v))
    e << (*p ? "true" : "false");
  else if (auto p = boost::any_cast<int>(&v))
    e << std::to_string(*p);
  else if (auto p = boost::any_cast<long>(&v))
    e << std::to_string(*p);
  else if (auto p = boost::any_cast<long long>(&v))
    e << std::to_string(*p);
  else if (auto p = boost::any_cast<unsigned>(&v))
    e << std::to_string(*p);
  else if (auto p = boost::any_cast<unsigned long>(&v))
    e << std::to_string(*p);
  else if (auto p = boost::any_cast<unsigned long long>(&v))
    e << std::to_string(*p);
  else if (auto p = boost::any_cast<double>(&v))
    e << shortest(*p);
  else if (auto p = boost::any_cast<float>(&v))
    e << shortest(*p);
  else if (auto p = boost::any_cast<std::vector<std::string>>(&v)) {
    e << YAML::Flow << YAML::BeginSeq;
    for (const auto& x : *p) e << YAML::DoubleQuoted << x;
    e << YAML::EndSeq;
  } else if (auto p = boost::any_cast<std::vector<int>>(&v)) {
    e << YAML::Flow << YAML::BeginSeq;
    for (int x : *p) e << std::to_string(x);
    e << YAML::EndSeq;
  } else if (auto p = boost::any_cast<std::vector<double>>(&v)) {
    e << YAML::Flow << YAML::BeginSeq;
    for (double x : *p) e << shortest(x);
    e << YAML::EndSeq;
  } else {
    return false;
  }
  return true;
}

}  // namespace

void App::store_yaml(const std::string& text, const std::string& name, bool strict) {
  // A --config file is the user's usage (UsageError, exit 2); stored text read back from a
  // model is data (DataError, exit 1).
  auto fail = [&](const std::string& what, long line) {
    if (strict) throw UsageError(what, name, line);
    throw DataError(what, name, line);
  };
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail("bad YAML: " + e.msg, e.mark.line >= 0 ? e.mark.line + 1 : 0);
  }
  if (!root || root.IsNull()) return;  // an empty file sets nothing
  if (!root.IsMap()) fail("expected a mapping of configuration keys", line_of(root));
  for (const auto& kv : root) {
    const long line = line_of(kv.first);
    if (!kv.first.IsScalar()) fail("a configuration key must be a plain name", line);
    const std::string key = kv.first.Scalar();
    const po::option_description* d = config_.find_nothrow(key, false, false, false);
    if (d == nullptr) {
      if (!strict) continue;
      if (tool_.find_nothrow(key, false, false, false) != nullptr)
        fail("'" + key + "' is not a configuration key (give it on the command line)", line);
      fail("unknown configuration key '" + key + "'" + did_you_mean(key, config_), line);
    }
    const YAML::Node& v = kv.second;
    std::vector<std::string> values;
    if (v.IsNull()) continue;  // "key: ~" gives no value (as --dump-config writes it)
    if (v.IsScalar()) {
      values.push_back(v.Scalar());
    } else if (v.IsSequence()) {
      for (const auto& item : v) {
        if (!item.IsScalar())
          fail("key '" + key + "': a list item must be a single value", line_of(item));
        values.push_back(item.Scalar());
      }
    } else {
      fail("key '" + key + "': expected a value or a list, not a mapping", line);
    }
    po::parsed_options parsed(&config_);
    po::option o;
    o.string_key = d->long_name();
    o.value = values;
    o.original_tokens = {key};
    parsed.options.push_back(o);
    try {
      po::store(parsed, vm_);
    } catch (const po::error& e) {
      bool percent = false;
      for (const std::string& x : values) percent |= x.find('%') != std::string::npos;
      fail("key '" + key + "': " + po_message(e, percent), line_of(v));
    }
  }
}

std::string App::config_yaml() const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  for (const auto& d : config_.options()) {
    const std::string& key = d->long_name();
    e << YAML::Key << key << YAML::Value;
    if (!vm_.count(key) || vm_[key].empty()) {
      e << YAML::Null;
    } else if (!emit_value(e, vm_[key].value())) {
      throw Error("configuration key '" + key + "' has a type --dump-config cannot write");
    }
  }
  e << YAML::EndMap;
  if (!e.good()) throw Error(std::string("cannot write the configuration: ") + e.GetLastError());
  std::string out = e.c_str();
  if (out == "{}") out.clear();
  return out.empty() ? "{}\n" : out + "\n";
}

void App::apply_config_fallback(const std::string& yaml, const std::string& name) {
  store_yaml(yaml, name, false);
  try {
    po::notify(vm_);
  } catch (const po::error& e) {
    throw DataError(po_message(e, yaml.find('%') != std::string::npos), name);
  }
}

io::WriteOptions App::write_options() const {
  io::WriteOptions w;
  w.npy_on_stdout = common_.npy;
  w.precision = common_.precision;
  return w;
}

Shape parse_shape(const std::string& text, const std::string& option) {
  Shape shape;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) throw UsageError(option + ": bad shape '" + text + "' (expected e.g. 3,4)");
    for (char ch : cur)
      if (ch < '0' || ch > '9')
        throw UsageError(option + ": bad shape '" + text + "' (expected e.g. 3,4)");
    if (cur.size() > 12) throw UsageError(option + ": dimension " + cur + " is too large");
    shape.push_back(std::stoll(cur));
    cur.clear();
  };
  for (char ch : text) {
    if (ch == ',' || ch == 'x')
      flush();
    else
      cur += ch;
  }
  flush();
  try {
    shape_numel(shape);
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
  return shape;
}

std::vector<std::pair<std::string, std::string>> App::occurrences(const std::string& key) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const po::option& o : parsed_)
    if (o.string_key == key)
      out.emplace_back(o.original_tokens.empty() ? std::string() : o.original_tokens.front(),
                       o.value.empty() ? std::string() : o.value.front());
  return out;
}

void add_output_option(App& app, const std::string& value_name, const std::string& help) {
  app.options().add_options()(
      "output,o", po::value<std::vector<std::string>>()->value_name(value_name), help.c_str());
  app.hidden_options().add_options()("output-file", po::value<std::vector<std::string>>());
}

std::string resolve_output(const App& app, const std::vector<std::string>& emit_choices,
                           std::string* emit) {
  std::string file;
  bool have_file = false, noted_file = false;
  auto set_file = [&](const std::string& f) {
    if (have_file)
      throw UsageError("two output files ('" + file + "' and '" + f + "'): give -o once");
    file = f;
    have_file = true;
  };
  std::vector<std::pair<std::string, std::string>> all = app.occurrences("output");
  for (const auto& o : app.occurrences("output-file")) all.emplace_back("--output-file", o.second);
  for (const auto& [spelling, value] : all) {
    if (spelling == "--output-file") {
      if (!noted_file)
        std::cerr << app.name() << ": note: --output-file FILE is now -o/--output FILE\n";
      noted_file = true;
      set_file(value);
      continue;
    }
    const bool is_long = spelling.size() > 2 && spelling.compare(0, 2, "--") == 0;
    const bool choice =
        std::find(emit_choices.begin(), emit_choices.end(), value) != emit_choices.end();
    if (is_long && choice) {
      if (app.given("emit"))
        throw UsageError("--output " + value + " is the old spelling of --emit " + value +
                         ": give --emit alone");
      std::cerr << app.name() << ": note: --output " << value << " is now --emit " << value << "\n";
      *emit = value;
      continue;
    }
    set_file(value);
  }
  return have_file ? file : "-";
}

Shard parse_shard(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError("--shard: bad value '" + text + "' (" + why + ")");
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad("expected K/N, e.g. 2/8");
  auto number = [&](const std::string& part) -> int64_t {
    int64_t v = 0;
    const char* b = part.data();
    const char* e = b + part.size();
    auto r = std::from_chars(b, e, v);
    if (part.empty() || r.ec != std::errc() || r.ptr != e) throw bad("expected K/N, e.g. 2/8");
    return v;
  };
  Shard s;
  s.k = number(text.substr(0, slash));
  s.n = number(text.substr(slash + 1));
  if (s.n < 1) throw bad("N must be at least 1");
  if (s.n > (int64_t{1} << 30)) throw bad("N is too large");
  if (s.k < 1 || s.k > s.n) throw bad("K must be between 1 and N");
  s.given = true;
  return s;
}

void check_shard_text_output(const App& app, const std::string& path) {
  if (!app.shard().given) return;
  const auto lower = [](std::string x) {
    for (char& c : x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return x;
  };
  const std::string file = lower(io::split_member(path).first);
  auto ends = [&](const char* suf) {
    const size_t n = std::strlen(suf);
    return file.size() >= n && file.compare(file.size() - n, n, suf) == 0;
  };
  if (path == "-" ? app.write_options().npy_on_stdout : (ends(".npy") || ends(".npz")))
    throw UsageError("--shard writes text, whose slices concatenate: not " +
                     std::string(path == "-" ? "--npy" : "'" + path + "'") +
                     " (merge the text slices, then convert with tensor-convert)");
}

Tensor slice_first(const Tensor& t, int64_t begin, int64_t end) {
  if (t.rank() < 1 || begin < 0 || end < begin || end > t.dim(0))
    throw ShapeError("cannot take items " + std::to_string(begin) + ".." + std::to_string(end) +
                     " of a tensor of shape " + shape_str(t.shape()));
  Shape sh = t.shape();
  sh[0] = end - begin;
  const int64_t per = t.dim(0) ? t.size() / t.dim(0) : 0;
  std::vector<float> v(t.data() + begin * per, t.data() + end * per);
  return Tensor(sh, std::move(v));
}

void write_shard_tensor(const App& app, const std::string& path, const Tensor& t, int64_t first) {
  const io::WriteOptions w = app.write_options();
  if (!app.shard().given) {
    io::write_tensor(path, t, w);
    return;
  }
  check_shard_text_output(app, path);
  std::string text;
  try {
    text = io::format_text(t, w.precision);
  } catch (Error& e) {
    e.locate(path == "-" ? "<stdout>" : path);
    throw;
  }
  if (t.rank() == 3 && first > 0 && t.dim(0) > 0) text.insert(0, "\n");
  io::write_file(path, text);
}

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

namespace {
// The tool's name in messages; under MPI with its rank.
std::string who(const char* name) {
  if (!train::dist::active()) return name;
  return std::string(name) + " (rank " + std::to_string(train::dist::rank()) + ")";
}

std::string first_word(const std::string& s) {
  const size_t n = s.find_first_of(" :");
  return s.substr(0, n);
}
}  // namespace

bool App::knows_option(const std::string& name) const {
  if (name.empty() || name[0] == '-') return false;
  for (const po::options_description* d : {&tool_, &config_})
    if (d->find_nothrow(name, false)) return true;
  return false;
}

int run(const char* name, int argc, char** argv, const std::function<void(App&)>& body) {
  ensure_fast_blas(argv);
  int status = 0;
  std::unique_ptr<App> app;
  try {
    app = std::make_unique<App>(name, argc, argv);
    body(*app);
  } catch (const EarlyExit&) {
    status = 0;
  } catch (const UsageError& e) {
    // The library names fields ("beam must be >= 1"); where a field is one of this tool's
    // options, say it as the option.
    if (app && app->knows_option(first_word(e.what())))
      print_error(who(name), UsageError("--" + std::string(e.what()), e.file(), e.line()));
    else
      print_error(who(name), e);
    std::cerr << "Try '" << name << " --help' for more information.\n";
    status = 2;
  } catch (const Error& e) {
    print_error(who(name), e);
    status = e.exit_status();
  } catch (const std::bad_alloc&) {
    std::cerr << who(name) << ": out of memory\n";
    status = 1;
  } catch (const std::exception& e) {
    std::cerr << who(name) << ": " << e.what() << "\n";
    status = 1;
  }
  // Under MPI a rank that fails ends the whole job (the others would wait for it forever).
  if (status != 0) train::dist::abort_job(status);
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << name << ": write error\n";
    return 1;
  }
  return status;
}

std::vector<double> read_vector(const std::string& arg, const std::string& option) {
  std::vector<double> v;
  bool inline_numbers = !arg.empty();
  const char* p = arg.c_str();
  while (inline_numbers && *p) {
    while (*p == ',' || *p == ' ') ++p;
    if (!*p) break;
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    if (end == p || (*end && *end != ',' && *end != ' '))
      inline_numbers = false;
    else
      v.push_back(x), p = end;
  }
  if (inline_numbers && !v.empty()) return v;
  v.clear();
  Tensor t = io::read_tensor(arg);
  if (t.size() == 0) throw DataError(option + ": " + arg + " holds no values");
  for (int64_t i = 0; i < t.size(); ++i) v.push_back(t[i]);
  return v;
}

}  // namespace attnkit::cli

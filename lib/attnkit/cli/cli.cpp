#include "attnkit/cli/cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>
#include <thread>

#include "attnkit/core/blas.h"
#include "attnkit/core/error.h"
#include "attnkit/core/parallel.h"

#ifndef ATTNKIT_VERSION
#define ATTNKIT_VERSION "0.0.0"
#endif

namespace attnkit::cli {

namespace {

int hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

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
  s << "attnkit " << ATTNKIT_VERSION << " (OpenBLAS core " << blas_core() << ", "
    << blas_threads() << (blas_threads() == 1 ? " thread" : " threads") << ")";
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
      "threads for BLAS (0 = all cores)");
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
  return g;
}

namespace {

// GNU-style option lines ("  -o, --output FILE   text"), wrapped at 79 columns, so that
// --help reads like other Unix tools and help2man turns it into a man page.
void format_group(std::ostream& s, const char* caption, const po::options_description& group) {
  constexpr size_t kCol = 28, kWidth = 79;
  s << caption << ":\n";
  for (const auto& opt : group.options()) {
    std::string lhs = "  ";
    const std::string shortn = opt->canonical_display_name(po::command_line_style::allow_dash_for_short);
    const std::string longn = "--" + opt->long_name();
    if (shortn.size() == 2 && shortn[0] == '-' && shortn != longn)
      lhs += shortn + ", " + longn;
    else
      lhs += "    " + longn;
    std::string param = opt->format_parameter();
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
  format_group(s, "Common options", common);
  if (!epilog_.empty()) s << "\n" << epilog_ << (epilog_.back() == '\n' ? "" : "\n");
  s << "\nExit status: 0 success, 1 bad data or a failed run, 2 bad usage.\n";
  return s.str();
}

void App::parse() {
  const po::options_description common = common_group();
  po::options_description all;
  all.add(tool_).add(common);
  try {
    po::store(po::command_line_parser(argc_, argv_).options(all).positional(positional_).run(),
              vm_);
    if (vm_.count("help")) {
      std::cout << help_text(common);
      throw EarlyExit{};
    }
    if (vm_.count("version")) {
      const int t = vm_["threads"].as<int>();
      blas_set_threads(t > 0 ? t : hardware_threads());
      std::cout << name_ << " (attnkit) " << ATTNKIT_VERSION << "\n" << version_line() << "\n";
      throw EarlyExit{};
    }
    po::notify(vm_);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (common_.threads < 0) throw UsageError("--threads must be 0 (all cores) or more");
  if (vm_.count("precision") && (common_.precision < 1 || common_.precision > 17))
    throw UsageError("--precision must be between 1 and 17");
  set_max_threads(common_.threads);
  blas_set_threads(max_threads());
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
    if (ch == ',' || ch == 'x') flush();
    else cur += ch;
  }
  flush();
  try {
    shape_numel(shape);
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
  return shape;
}

bool stderr_is_tty() { return isatty(STDERR_FILENO) == 1; }

int run(const char* name, int argc, char** argv, const std::function<void(App&)>& body) {
  ensure_fast_blas(argv);
  int status = 0;
  try {
    App app(name, argc, argv);
    body(app);
  } catch (const EarlyExit&) {
    status = 0;
  } catch (const UsageError& e) {
    print_error(name, e);
    std::cerr << "Try '" << name << " --help' for more information.\n";
    status = 2;
  } catch (const Error& e) {
    print_error(name, e);
    status = e.exit_status();
  } catch (const std::bad_alloc&) {
    std::cerr << name << ": out of memory\n";
    status = 1;
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    status = 1;
  }
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << name << ": write error\n";
    return 1;
  }
  return status;
}

}  // namespace attnkit::cli

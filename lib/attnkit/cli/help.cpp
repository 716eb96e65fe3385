// --help: GNU-style option lines that help2man turns into man pages.
#include <charconv>
#include <sstream>

#include "attnkit/cli/cli.h"

namespace attnkit::cli {

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

}  // namespace attnkit::cli

// -o/--output FILE for the tools whose --output once named what to emit.
#include <algorithm>
#include <iostream>

#include "attnkit/cli/cli.h"

namespace attnkit::cli {

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

}  // namespace attnkit::cli

// Helpers shared by the files of the command-line layer (cli/*.cpp); not for tools.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace attnkit::cli::detail {

namespace po = boost::program_options;

// The option of `d` whose long name is nearest to `key` (edit distance, a swap of two
// neighbouring letters counting 1), within distance 2; empty when none is.
std::string closest_option(const std::string& key, const po::options_description& d);

// A Boost.Program_options error's text, safe when the given text holds a '%' (see app.cpp).
std::string po_message(const po::error& e, bool percent_given);

// Drops every occurrence of a single-valued option of `d` but its last (the last wins);
// repeatable options (vectors, composing) keep all.
void last_wins(std::vector<po::option>& opts, const po::options_description& d);

}  // namespace attnkit::cli::detail

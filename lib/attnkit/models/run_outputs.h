// Checks that the run functions behind the *-run tools make of their output files before
// the long work (a model loaded, data decoded), so that a bad name fails at once.
#pragma once

#include <initializer_list>
#include <string>

namespace attnkit::models {

// Whether `path` ends in ".png".
bool is_png_name(const std::string& path);
// --draw FILE: "" (none) or a name ending in .png (UsageError otherwise).
void check_draw_name(const std::string& path);
// Each output named (not "" or "-") can be written (train::check_writable).
void check_outputs_writable(std::initializer_list<const std::string*> paths);

}  // namespace attnkit::models

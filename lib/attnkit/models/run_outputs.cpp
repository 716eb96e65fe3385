#include "attnkit/models/run_outputs.h"

#include "attnkit/core/error.h"
#include "attnkit/train/trainer.h"

namespace attnkit::models {

bool is_png_name(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".png") == 0;
}

void check_draw_name(const std::string& path) {
  if (!path.empty() && !is_png_name(path)) throw UsageError("--draw: the file must end in .png");
}

void check_outputs_writable(std::initializer_list<const std::string*> paths) {
  for (const std::string* p : paths)
    if (!p->empty() && *p != "-") train::check_writable(*p);
}

}  // namespace attnkit::models

// YAML configurations: a tool's --config file (keys checked against the tool's options,
// values converted to their types) and a configuration stored in a model file.
#include <vector>

#include "attnkit/cli/cli.h"
#include "attnkit/io/config.h"
#include "attnkit/io/tensor_io.h"
#include "fuzz_common.h"

ATTNKIT_FUZZ_TARGET({
  const std::string text(bytes);
  attnkit::io::StoredConfig stored(text, "fuzz.yaml");
  for (const std::string& k : stored.keys()) {
    (void)stored.has(k);
    (void)stored.get<std::string>(k, "");
  }
  static int counter = 0;
  const std::string path = "/tmp/attnkit-fuzz-config-" + std::to_string(++counter % 4) + ".yaml";
  attnkit::io::write_file(path, text);
  std::vector<std::string> args = {"fuzz", "--config", path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  attnkit::cli::App app("fuzz", static_cast<int>(argv.size()), argv.data());
  int hidden = 8;
  double lr = 1e-3;
  std::string name;
  std::vector<int> list;
  app.config_options().add_options()("hidden",
                                     boost::program_options::value(&hidden)->default_value(8), "")(
      "lr", boost::program_options::value(&lr)->default_value(1e-3), "")(
      "name", boost::program_options::value(&name), "")(
      "list", boost::program_options::value(&list)->multitoken(), "");
  app.parse();
  (void)app.config_yaml();
})

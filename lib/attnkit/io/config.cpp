#include "attnkit/io/config.h"

#include <utility>

namespace attnkit::io {

StoredConfig::StoredConfig(const std::string& yaml, std::string name) : name_(std::move(name)) {
  try {
    root_ = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw DataError("bad YAML configuration: " + e.msg, name_,
                    e.mark.line >= 0 ? e.mark.line + 1 : 0);
  }
  if (root_.IsNull()) root_ = YAML::Node(YAML::NodeType::Map);
  if (!root_.IsMap()) throw DataError("the configuration is not a mapping of keys", name_);
}

bool StoredConfig::has(const std::string& key) const {
  const YAML::Node n = root_[key];
  return n && !n.IsNull();
}

std::vector<std::string> StoredConfig::keys() const {
  std::vector<std::string> k;
  for (const auto& kv : root_) {
    if (!kv.first.IsScalar())  // e.g. "[a, b]: 1": found by the YAML fuzzer
      throw DataError("a configuration key must be a plain name", name_,
                      kv.first.Mark().line >= 0 ? kv.first.Mark().line + 1 : 0);
    k.push_back(kv.first.Scalar());
  }
  return k;
}

YAML::Node StoredConfig::node(const std::string& key) const {
  const YAML::Node n = root_[key];
  if (!n || n.IsNull())
    throw DataError("the stored configuration has no value for '" + key + "'", name_);
  return n;
}

}  // namespace attnkit::io

// Configuration keys as YAML: --config files read, --dump-config and the text stored in a model
// file written, a checkpoint's configuration read back.
#include <algorithm>
#include <charconv>

#include "attnkit/cli/cli.h"
#include "attnkit/cli/detail.h"

namespace attnkit::cli {

using detail::closest_option;
using detail::po_message;

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

void App::store_yaml(const std::string& text, const std::string& name, bool strict, bool options) {
  const po::options_description& group = options ? tool_ : config_;
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
    const std::string key = kv.first.Scalar();  // as written (in messages)
    std::string option = key;
    if (!strict && !options) {  // stored text: keys under their stored names
      for (const auto& [name, stored] : stored_keys_)
        if (key == stored) option = name;
    }
    const po::options_description* in = &group;
    const po::option_description* d = group.find_nothrow(option, false, false, false);
    if (d == nullptr && strict) {  // a --config file may also hold the run's paths and seed
      for (const po::options_description* g : {&tool_, &file_common_})
        if (d == nullptr && (d = g->find_nothrow(key, false, false, false)) != nullptr) in = g;
    }
    if (d == nullptr) {
      if (!strict) continue;
      po::options_description known;
      known.add(config_).add(tool_).add(file_common_);
      fail("unknown configuration key '" + key + "'" + did_you_mean(key, known), line);
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
    if (!strict && !(vm_.count(d->long_name()) && !vm_[d->long_name()].defaulted()))
      restored_.insert(d->long_name());  // not given: the stored value is taken
    po::parsed_options parsed(in);
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

std::string App::yaml(bool stored) const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  size_t i = 0;
  const auto retired_before = [&](size_t option) {  // the retired switches stored before it
    if (stored)
      for (const auto& [at, name] : retired_)
        if (at == option) e << YAML::Key << name << YAML::Value << "false";
  };
  for (const auto& d : config_.options()) {
    retired_before(i++);
    const std::string& key = d->long_name();
    std::string name = key;
    if (stored)
      for (const auto& [option, as] : stored_keys_)
        if (option == key) name = as;
    e << YAML::Key << name << YAML::Value;
    if (!vm_.count(key) || vm_[key].empty()) {
      e << YAML::Null;
    } else if (!emit_value(e, vm_[key].value())) {
      throw Error("configuration key '" + key + "' has a type --dump-config cannot write");
    }
  }
  retired_before(i);
  e << YAML::EndMap;
  if (!e.good()) throw Error(std::string("cannot write the configuration: ") + e.GetLastError());
  std::string out = e.c_str();
  if (out == "{}") out.clear();
  return out.empty() ? "{}\n" : out + "\n";
}

std::string App::dump_yaml() const {
  std::string out = yaml(false) + given_options_yaml({});
  if (flags_ & kSeed) {
    YAML::Emitter e;
    e << YAML::BeginMap << YAML::Key << "seed" << YAML::Value;
    emit_value(e, vm_["seed"].value());
    e << YAML::EndMap;
    out += std::string(e.c_str()) + "\n";
  }
  return out;
}

void App::store_fallback(const std::string& yaml, const std::string& name, bool options) {
  store_yaml(yaml, name, false, options);
}

std::string App::given_options_yaml(const std::vector<std::string>& skip) const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  for (const auto& d : tool_.options()) {
    const std::string& key = d->long_name();
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    if (!vm_.count(key) || vm_[key].defaulted() || vm_[key].empty()) continue;
    e << YAML::Key << key << YAML::Value;
    if (!emit_value(e, vm_[key].value()))
      throw Error("option '" + key + "' has a type a checkpoint cannot store");
  }
  e << YAML::EndMap;
  if (!e.good()) throw Error(std::string("cannot write the options: ") + e.GetLastError());
  const std::string out = e.c_str();
  return out == "{}" ? std::string() : out + "\n";
}

void App::apply_config_fallback(const std::string& yaml, const std::string& name) {
  store_yaml(yaml, name, false);
  try {
    po::notify(vm_);
  } catch (const po::error& e) {
    throw DataError(po_message(e, yaml.find('%') != std::string::npos), name);
  }
}

}  // namespace attnkit::cli

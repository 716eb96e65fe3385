// Hyper-parameters stored as YAML text (nn::ModelFile::config_yaml, written by the tools'
// cli::App::config_yaml()), read back by the library and the tools alike.
#pragma once

#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "attnkit/core/error.h"
#include "attnkit/core/fields.h"

namespace attnkit::io {

// A configuration read back from YAML text (ModelFile::config_yaml, App::config_yaml()): a
// tool that loads a model recovers the hyper-parameters it was trained with.
//   io::StoredConfig cfg(model.config_yaml, model_path);
//   int hidden = cfg.get<int>("hidden");
// Errors (bad YAML, a missing key, a value of the wrong type) are DataErrors naming `name`,
// the line (when there is one) and the key.
class StoredConfig {
 public:
  StoredConfig(const std::string& yaml, std::string name);
  bool has(const std::string& key) const;  // present with a non-null value
  std::vector<std::string> keys() const;   // in file order
  template <class T>
  T get(const std::string& key) const {
    const YAML::Node n = node(key);
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      throw DataError("configuration key '" + key + "' has a value of the wrong type ('" +
                          (n.IsScalar() ? n.Scalar() : std::string("not a single value")) + "')",
                      name_, n.Mark().line + 1);
    }
  }
  template <class T>
  T get(const std::string& key, T fallback) const {
    return has(key) ? get<T>(key) : fallback;
  }

 private:
  YAML::Node node(const std::string& key) const;  // DataError when missing or null
  YAML::Node root_;
  std::string name_;
};

// Runs `check` (e.g. a configuration's validate()) on values read from a stored
// configuration: a UsageError it throws becomes a DataError ("stored configuration: ...")
// naming `file`, since the file is wrong, not the command line.
template <class F>
void check_stored(F check, const std::string& file) {
  try {
    check();
  } catch (const UsageError& e) {
    throw DataError(std::string("stored configuration: ") + e.what(), file);
  }
}

namespace detail {

class FieldReader {
 public:
  // `present_only`: every field is optional (a key the file lacks leaves its member alone).
  explicit FieldReader(const StoredConfig& s, bool present_only = false)
      : s_(s), present_only_(present_only) {}
  // A switch absent from the file keeps the member's value (the Config's default, false, or
  // what the loader set for files written before the switch).
  void operator()(bool& member, const fields::Key& k) {
    member = s_.get<bool>(fields::stored_name(k), member);
  }
  void operator()(fields::Switch s, const fields::Key& k) {
    if (s_.get<bool>(fields::stored_name(k), false)) s.member = s.value;
  }
  void operator()(fields::Retired r, const fields::Key& k) {
    if (s_.get<bool>(fields::stored_name(k), false) && r.member) *r.member = r.value;
  }
  template <class T>
  void operator()(fields::Text<T> t, const fields::Key& k) {
    const std::string key = fields::stored_name(k);
    if ((k.optional || present_only_) && !s_.has(key)) return;
    const std::string text = s_.get<std::string>(key);
    try {
      t.member = t.parse(text, key);
    } catch (const UsageError& e) {
      throw DataError(std::string("stored configuration: ") + e.what());
    }
  }
  template <class T>
  void operator()(fields::Unset<T> u, const fields::Key& k) {
    const std::string key = fields::stored_name(k);
    if (s_.has(key)) u.member = s_.get<T>(key);
  }
  template <class T>
  void operator()(T& member, const fields::Key& k) {
    const std::string key = fields::stored_name(k);
    member = k.optional || present_only_ ? s_.get<T>(key, member) : s_.get<T>(key);
  }

 private:
  const StoredConfig& s_;
  bool present_only_;
};

class FieldWriter {
 public:
  explicit FieldWriter(YAML::Node& y) : y_(y) {}
  void operator()(bool& member, const fields::Key& k) { put(k, member, member ? "true" : "false"); }
  void operator()(fields::Switch s, const fields::Key& k) {
    const bool given = s.member == s.value;
    put(k, given, given ? "true" : "false");
  }
  void operator()(fields::Retired, const fields::Key& k) { put(k, false, "false"); }
  template <class T>
  void operator()(fields::Text<T> t, const fields::Key& k) {
    const std::string text = t.format(t.member);
    put(k, text, text);
  }
  template <class T>
  void operator()(fields::Unset<T> u, const fields::Key& k) {
    (*this)(u.member, k);
  }
  template <class T>
  void operator()(T& member, const fields::Key& k) {
    if constexpr (std::is_floating_point_v<T>) {
      std::ostringstream o;
      o.precision(9);
      o << member;
      put(k, member, o.str());
    } else if constexpr (std::is_integral_v<T>) {
      put(k, member, std::to_string(member));
    } else {
      put(k, member, member);
    }
  }

 private:
  template <class T>
  void put(const fields::Key& k, const T& value, const std::string& text) {
    const std::string key = fields::stored_name(k);
    const YAML::Node& y = y_;  // (reading a const node adds no key)
    if (const YAML::Node n = y[key]; n.IsDefined() && n.IsScalar()) try {
        if (n.as<T>() == value) return;
      } catch (const YAML::Exception&) {
      }
    y_[key] = text;
  }
  YAML::Node& y_;
};

}  // namespace detail

// Reads a Config's fields (core/fields.h) from a stored configuration, each under its stored
// name: a required field that is missing, or a value of the wrong type, is a DataError naming
// the file. `c` starts from its defaults (the optional fields and the switches keep them when
// absent). Check the result with check_stored(c.validate(), file).
template <class Config>
void read_fields(const StoredConfig& s, Config& c) {
  detail::FieldReader v(s);
  c.fields(v);
}

// The same, every field optional: the keys `s` holds, the rest left as they are.
template <class Config>
void read_present_fields(const StoredConfig& s, Config& c) {
  detail::FieldReader v(s, true);
  c.fields(v);
}

// Writes a Config's fields into the YAML map `y`, each under its stored name, where `y` lacks
// the key or holds another value (a key already there keeps its place and, when its value is
// the field's, its text; a new one goes last, in the list's order). Values as text: switches
// true or false, numbers as std::to_string, floating ones with 9 significant digits (a
// float's round trip: the nets hold floats), text fields by their format.
template <class Config>
void write_fields(YAML::Node& y, Config& c) {
  detail::FieldWriter v(y);
  c.fields(v);
}

}  // namespace attnkit::io

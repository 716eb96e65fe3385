// A model's hyper-parameters declared once. A Config lists its fields in one member template,
//
//   struct PtrNetConfig {
//     std::string task = "sort";
//     int64_t embed = 128;
//     bool mask = true, bidirectional = false;
//     template <class V> void fields(V& v) {
//       v(task, {"task", "TASK", "sort, hull or tsp"});
//       v(embed, {"embed", "N", "the points' embedding size"});
//       v(fields::negated(mask), {"no-mask", "", "let the decoder choose a point again"});
//       v(bidirectional, {"bidirectional", "", "read the points both ways"});
//     }
//   };
//
// and every place that needs the list walks it with a visitor of its own:
//   - cli::add_fields(app, config) (cli/fields.h): the tool's configuration options, so the
//     command line, --config files, --dump-config and the YAML stored in the model file all
//     come from this list, in its order;
//   - io::read_fields(stored, config) (io/config.h): the loader reads the stored YAML back.
// No key is spelled anywhere else. A bool member is a switch (given or not, default false);
// fields::negated(m) is a switch that clears m, fields::sets(m) one that sets it (both stored
// as the switch's own value); fields::retired() a switch no longer offered, still stored (false).
// fields::text(m, parse, format) is a value given and stored as text ("16,32") and held parsed (a
// list of sizes); fields::unset(m) a value with no default (stored as null when not given).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnkit::fields {

// One field's description. `name` is the long option and the YAML key ("name,x" also gives a
// short option on the command line). `value_name` is the value's name in --help (ignored for
// switches). `stored` is the model file's key when it differs from the option (files written
// before a rename keep loading). An `optional` field may be absent from older model files:
// they load with the Config's default; a field that is not optional must be present. Switches
// are always optional (absent = not given).
struct Key {
  const char* name;
  const char* value_name;
  const char* help;
  const char* stored = nullptr;
  bool optional = false;
};

// A switch that sets `member` to `value` when given and leaves it alone otherwise.
struct Switch {
  bool& member;
  bool value;
};
// A switch that clears `member` ("--no-mask" for mask = true).
inline Switch negated(bool& member) { return Switch{member, false}; }
// A switch that sets `member` (whose default the caller may have set to true already).
inline Switch sets(bool& member) { return Switch{member, true}; }

// A value given and stored as text, held parsed: parse(text, name) throws a UsageError
// naming `name` (the option "--hidden" on the command line, the key "hidden" in a model
// file); format(member) is the default's text.
template <class T>
struct Text {
  T& member;
  std::function<T(const std::string& text, const std::string& name)> parse;
  std::function<std::string(const T&)> format;
};
template <class T, class Parse, class Format>
Text<T> text(T& member, Parse parse, Format format) {
  return Text<T>{member, parse, format};
}

// A switch that no tool offers any more (it had no effect, or became the default), kept in
// the stored YAML as false, where it stood, so that model files stay byte for byte what they
// were. A file written while it was offered may hold true: read back, that sets `*member` to
// `value` (nothing when member is null: a switch that had no effect).
struct Retired {
  bool* member;
  bool value;
};
inline Retired retired() { return Retired{nullptr, false}; }
inline Retired retired(bool& member, bool value) { return Retired{&member, value}; }

// A value with no default: not given, it is left alone and stored as null (a model file that
// lacks it, or holds null, loads with the member as it was).
template <class T>
struct Unset {
  T& member;
};
template <class T>
Unset<T> unset(T& member) {
  return Unset<T>{member};
}

// "16,32" of {16, 32}: the text of a list of sizes.
inline std::string join_sizes(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// The long name of a Key ("hidden" of "hidden,h").
inline std::string long_name(const Key& k) {
  const std::string n = k.name;
  return n.substr(0, n.find(','));
}
// The key the model file stores the field under.
inline std::string stored_name(const Key& k) { return k.stored ? k.stored : long_name(k); }

}  // namespace attnkit::fields

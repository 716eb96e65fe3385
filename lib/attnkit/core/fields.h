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
// fields::negated(m) is a switch that clears m (stored as the switch's own value).
#pragma once

#include <cstdint>
#include <string>

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

// A switch that clears `member` when given ("--no-mask" for mask = true).
struct Negated {
  bool& member;
};
inline Negated negated(bool& member) { return Negated{member}; }

// The long name of a Key ("hidden" of "hidden,h").
inline std::string long_name(const Key& k) {
  const std::string n = k.name;
  return n.substr(0, n.find(','));
}
// The key the model file stores the field under.
inline std::string stored_name(const Key& k) { return k.stored ? k.stored : long_name(k); }

}  // namespace attnkit::fields

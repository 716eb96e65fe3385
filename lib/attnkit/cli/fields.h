// A Config's field list (core/fields.h) as a tool's configuration options: one call,
//   models::PtrNetConfig c;
//   cli::add_fields(app, c);
// declares every field in app.config_options() with its default (the Config's initial value),
// in the list's order, so --help, --config files, --dump-config and the YAML stored in the
// model file (app.config_yaml()) all follow the list. Before app.parse(); the Config must
// outlive it (parse() writes the values into its members).
#pragma once

#include <charconv>
#include <string>
#include <type_traits>

#include "attnkit/cli/cli.h"
#include "attnkit/core/fields.h"

namespace attnkit::cli {

namespace detail {

// A floating default as the shortest text that reads back as the same value ("0.1").
template <class T>
std::string shortest(T x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

class FieldOptions {
 public:
  explicit FieldOptions(App& app) : app_(app) {}

  void operator()(bool& member, const fields::Key& k) {
    app_.config_options().add_options()(k.name, po::bool_switch(&member), k.help);
    stored(k);
  }
  void operator()(fields::Switch s, const fields::Key& k) {
    bool* m = &s.member;
    const bool value = s.value;
    app_.config_options().add_options()(k.name, po::bool_switch()->notifier([m, value](bool given) {
      if (given) *m = value;
    }),
                                        k.help);
    stored(k);
  }
  void operator()(fields::Retired, const fields::Key& k) {
    app_.retired_switch(fields::stored_name(k));
  }
  template <class T>
  void operator()(fields::Text<T> t, const fields::Key& k) {
    T* m = &t.member;
    auto parse = t.parse;
    const std::string option = "--" + fields::long_name(k);
    app_.config_options().add_options()(
        k.name,
        po::value<std::string>()
            ->value_name(k.value_name)
            ->default_value(t.format(t.member))
            ->notifier([m, parse, option](const std::string& s) { *m = parse(s, option); }),
        k.help);
    stored(k);
  }
  template <class T>
  void operator()(fields::Unset<T> u, const fields::Key& k) {
    app_.config_options().add_options()(k.name, po::value(&u.member)->value_name(k.value_name),
                                        k.help);
    stored(k);
  }
  template <class T>
  void operator()(T& member, const fields::Key& k) {
    auto* v = po::value(&member)->value_name(k.value_name);
    if constexpr (std::is_floating_point_v<T>)
      v->default_value(member, shortest(member));
    else
      v->default_value(member);
    app_.config_options().add_options()(k.name, v, k.help);
    stored(k);
  }

 private:
  void stored(const fields::Key& k) {
    if (k.stored) app_.stored_key(fields::long_name(k), k.stored);
  }
  App& app_;
};

}  // namespace detail

template <class Config>
void add_fields(App& app, Config& c) {
  detail::FieldOptions v(app);
  c.fields(v);
}

}  // namespace attnkit::cli

// Choices: a value that must be one of a fixed set of names (score kinds, layouts, tasks,
// cells, ...). Every parser of one goes through parse_choice(), and every such failure is one
// error type, ChoiceError, whose message names the field and lists the valid values:
//   unknown score 'dott' (choose dot, scaled-dot, bilinear, additive, cosine or location)
// Library messages name fields, not command-line flags; a tool that wants the flag in front
// wraps the call in cli::parse_option("--score", ...), and a run function behind a tool (that
// checks the tool's options in their order) in option_value("--score", ...).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "attnkit/core/error.h"

namespace attnkit {

// A name outside the choices of `field`: bad usage (exit status 2). Where the text came from
// a file (a model's stored configuration), the reader re-throws it as a DataError.
class ChoiceError : public UsageError {
 public:
  ChoiceError(std::string field, std::string value, std::vector<std::string> choices)
      : UsageError(message(field, value, choices)),
        field_(std::move(field)),
        value_(std::move(value)),
        choices_(std::move(choices)) {}
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::vector<std::string>& choices() const { return choices_; }

  // "a", "a or b", "a, b or c".
  static std::string list(const std::vector<std::string>& choices) {
    std::string s;
    for (size_t i = 0; i < choices.size(); ++i)
      s += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    return s;
  }

 private:
  static std::string message(const std::string& field, const std::string& value,
                             const std::vector<std::string>& choices) {
    return "unknown " + field + " '" + value + "' (choose " + list(choices) + ")";
  }
  std::string field_, value_;
  std::vector<std::string> choices_;
};

// One name of a choice; an alias is accepted but not listed in messages.
template <class T>
struct Choice {
  const char* name;
  T value;
  bool alias = false;
};

// The value named `text` among `table`; ChoiceError naming `field` otherwise.
template <class T>
T parse_choice(const std::string& field, const std::string& text,
               std::initializer_list<Choice<T>> table) {
  std::vector<std::string> names;
  for (const Choice<T>& c : table) {
    if (text == c.name) return c.value;
    if (!c.alias) names.emplace_back(c.name);
  }
  throw ChoiceError(field, text, std::move(names));
}

// The names of `table` (aliases left out), for --help texts.
template <class T>
std::string choice_list(std::initializer_list<Choice<T>> table) {
  std::vector<std::string> names;
  for (const Choice<T>& c : table)
    if (!c.alias) names.emplace_back(c.name);
  return ChoiceError::list(names);
}

// parse() with a command-line option in front of its errors: an Error it throws becomes a
// UsageError "<option>: <what>" ("--score: unknown score 'dott' (choose dot, ...)").
template <class F>
auto option_value(const std::string& option, F&& parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const Error& e) {
    throw UsageError(option + ": " + e.what());
  }
}

}  // namespace attnkit

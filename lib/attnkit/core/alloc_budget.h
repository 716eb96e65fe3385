// A bound on what tensors may allocate on one thread while a scope lasts. A model built from a
// model file's stored configuration must not take far more memory than the file's tensors
// hold: a damaged or altered configuration ("hidden: 8000" beside 64-unit tensors) is then
// refused at its first large tensor, before gigabytes are taken, instead of after the model is
// built and its parameters are found not to fit. Tensor(Shape, fill), which layers use for
// their parameters, charges the budget; tensors made from existing values do not.
//
//   const AllocBudget budget(2 * stored_floats + slack, "the stored configuration asks for "
//                            "more memory than the file's tensors hold", path);
//   ... build the model (DataError naming `path` past the budget) ...
#pragma once

#include <cstdint>
#include <string>

namespace attnkit {

class AllocBudget {
 public:
  AllocBudget(int64_t floats, std::string message, std::string file);
  ~AllocBudget();
  AllocBudget(const AllocBudget&) = delete;
  AllocBudget& operator=(const AllocBudget&) = delete;

  // Called before `floats` are allocated on this thread: DataError (the message, naming the
  // file) when they exceed what is left of the innermost budget; nothing without one.
  static void charge(int64_t floats);

 private:
  int64_t left_;
  std::string message_, file_;
  AllocBudget* outer_;
};

}  // namespace attnkit

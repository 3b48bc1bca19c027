// The two error types of jetpde (docs/design.md section 4).
//
// UserError: the input was wrong (a shape mismatch, a derivative with respect to something that
// is not an input, a bad config value). Its message names what is wrong and where, and is meant
// for the person who wrote the input.
// InternalError: an invariant of jetpde itself is broken; it is a bug in jetpde.
#pragma once

#include <stdexcept>
#include <string>

namespace jetpde {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& what) : std::runtime_error(what) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what)
      : std::logic_error("internal error (a bug in jetpde): " + what) {}
};

// Throws InternalError with `what` when `condition` is false.
inline void check_internal(bool condition, const std::string& what) {
  if (!condition) throw InternalError(what);
}

}  // namespace jetpde

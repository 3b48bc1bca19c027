// Asserting a user error's exact message (docs/design.md section 12: every user error has a test).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "autodiff/errors.h"

namespace jetpde::testing {

inline void expect_user_error(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no UserError; expected: " << message;
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

}  // namespace jetpde::testing

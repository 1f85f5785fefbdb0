// Shared by the parser's error tests: a module around an entry body, and
// the expectation that parsing fails with "<input>:LOC: error: ...MESSAGE...".
#pragma once

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {

// A module whose entry computation body is `body` (instructions start on line 3).
inline std::string Entry(const std::string& body) {
  return "HloModule m\nENTRY %main {\n" + body + "}\n";
}

}  // namespace sharc::hlo

// Expects ParseModule(text) to fail with "<input>:LOC: error: ...MESSAGE...".
#define EXPECT_PARSE_ERROR(text, loc, message)                                         \
  EXPECT_THAT(::sharc::hlo::ParseModule(text),                                         \
              ::sharc::testing::StatusIs(                                              \
                  absl::StatusCode::kInvalidArgument,                                  \
                  ::testing::AllOf(::testing::HasSubstr("<input>:" loc ": error: "),   \
                                   ::testing::HasSubstr(message))))

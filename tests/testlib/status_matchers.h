// GoogleTest matchers for absl::Status / StatusOr, with the upstream names
// (Debian's Abseil 20220623 has no status_matchers.h):
//   EXPECT_THAT(status, IsOk());
//   EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank")));
//   ASSERT_OK_AND_ASSIGN(auto module, ParseModule(text));
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sharc::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status: " << s;
  return s.ok();
}

MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status: " << s;
  return s.code() == code &&
         ::testing::Matches(message_matcher)(std::string(s.message()));
}

}  // namespace sharc::testing

#define SHARC_ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  ASSERT_TRUE(tmp.ok()) << tmp.status();                \
  lhs = std::move(tmp).value()
#define SHARC_TEST_CONCAT_INNER(a, b) a##b
#define SHARC_TEST_CONCAT(a, b) SHARC_TEST_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  SHARC_ASSERT_OK_AND_ASSIGN_IMPL(SHARC_TEST_CONCAT(status_or_, __LINE__), lhs, expr)
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::sharc::testing::IsOk())
#define ASSERT_OK(expr) ASSERT_THAT((expr), ::sharc::testing::IsOk())

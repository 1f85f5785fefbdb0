// Status plumbing for sharc: RETURN_IF_ERROR, ASSIGN_OR_RETURN and RET_CHECK.
// Debian 12's Abseil (20220623) has no status_macros.h, so these follow the
// upstream names and semantics; a later Abseil upgrade is a rename.
#pragma once

#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sharc {

// Collects `<< context` after a failed check and turns into a Status.
class StatusBuilder {
 public:
  StatusBuilder(absl::Status status) : status_(std::move(status)) {}
  template <typename T>
  StatusBuilder& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  operator absl::Status() const {
    std::string extra = stream_.str();
    if (extra.empty()) return status_;
    return absl::Status(status_.code(), std::string(status_.message()) + extra);
  }
  template <typename T>
  operator absl::StatusOr<T>() const {
    return absl::StatusOr<T>(static_cast<absl::Status>(*this));
  }

 private:
  absl::Status status_;
  std::ostringstream stream_;
};

}  // namespace sharc

#define SHARC_CONCAT_INNER(a, b) a##b
#define SHARC_CONCAT(a, b) SHARC_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                                          \
  for (absl::Status sharc_status_ = (expr); !sharc_status_.ok();)       \
  return ::sharc::StatusBuilder(std::move(sharc_status_))

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(SHARC_CONCAT(sharc_statusor_, __LINE__), lhs, expr)

// A broken internal invariant: returns an INTERNAL status naming the check
// and the source line instead of aborting.
#define RET_CHECK(cond)                                                     \
  while (!(cond))                                                           \
  return ::sharc::StatusBuilder(absl::InternalError(                        \
      std::string("RET_CHECK failure (") + __FILE__ + ":" +                 \
      std::to_string(__LINE__) + ") " #cond " "))

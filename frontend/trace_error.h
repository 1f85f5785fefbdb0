// How tracing errors surface. Tensor operations are operators and free
// functions that return Tensors, so they cannot return absl::Status: a bad
// call (mismatched shapes, a float-only op on integers, a Tensor used outside
// its trace) throws TraceError. Every tracing entry point (jit, Jitted::Trace,
// TraceModule, TraceComputation) catches it and returns its absl::Status, so
// no exception ever leaves the frontend's API. Messages start with
// "file:line: " of the user's call.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

#include "absl/status/status.h"

namespace sharc::frontend {

class TraceError : public std::runtime_error {
 public:
  explicit TraceError(absl::Status status)
      : std::runtime_error(std::string(status.message())), status_(std::move(status)) {}
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

// "file:line" of a call site.
std::string FormatLocation(const std::source_location& loc);

// Throws TraceError with "file:line: message" (InvalidArgument unless told).
[[noreturn]] void ThrowTraceError(const std::source_location& loc, std::string message,
                                  absl::StatusCode code = absl::StatusCode::kInvalidArgument);

// Throws `status` (prefixed with the call site) if it is an error; the way
// code inside a traced function turns a Status-returning call into a trace
// error.
void ThrowIfError(const absl::Status& status,
                  std::source_location loc = std::source_location::current());

}  // namespace sharc::frontend

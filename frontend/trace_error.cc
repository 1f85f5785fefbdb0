#include "frontend/trace_error.h"

#include "absl/strings/str_cat.h"

namespace sharc::frontend {

std::string FormatLocation(const std::source_location& loc) {
  return absl::StrCat(loc.file_name(), ":", loc.line());
}

void ThrowTraceError(const std::source_location& loc, std::string message,
                     absl::StatusCode code) {
  throw TraceError(absl::Status(code, absl::StrCat(FormatLocation(loc), ": ", message)));
}

void ThrowIfError(const absl::Status& status, std::source_location loc) {
  if (status.ok()) return;
  // An error from a nested trace already names the line inside the nested
  // function; prefixing the outer call site makes the message read as a call
  // chain, outermost first.
  ThrowTraceError(loc, std::string(status.message()), status.code());
}

}  // namespace sharc::frontend

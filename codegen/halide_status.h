// Halide reports errors by throwing Halide::Error (it is built with
// HALIDE_WITH_EXCEPTIONS); sharc reports them as absl::Status. Every call
// into Halide that may throw goes through CallHalide, so the conversion and
// the message's form ("Halide failed to <what>: <Halide's text>") live here.
//
//   ASSIGN_OR_RETURN(Halide::Module m,
//                    CallHalide("lower kernel 'k'", [&] { return LowerKernel(built, key); }));
#pragma once

#include <type_traits>
#include <utility>

#include "Halide.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sharc::codegen {

// Runs `f`; a Halide::Error it throws becomes an InternalError naming `what`.
// Returns absl::Status for a void `f`, else absl::StatusOr of its result.
template <typename F>
auto CallHalide(absl::string_view what, F&& f) {
  using Result = std::invoke_result_t<F>;
  using Returned = std::conditional_t<std::is_void_v<Result>, absl::Status, absl::StatusOr<Result>>;
  try {
    if constexpr (std::is_void_v<Result>) {
      std::forward<F>(f)();
      return Returned(absl::OkStatus());
    } else {
      return Returned(std::forward<F>(f)());
    }
  } catch (const Halide::Error& e) {
    return Returned(absl::InternalError(absl::StrCat("Halide failed to ", what, ": ", e.what())));
  }
}

}  // namespace sharc::codegen

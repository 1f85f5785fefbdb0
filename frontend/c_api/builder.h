// The builder's shared steps, used by the op functions (builder.cc) and the
// one-line HLO text escape hatch (builder_text_line.cc).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "frontend/c_api/handles.h"

namespace sharc::c_api {

// The instruction of `value`, or OutOfRange naming the function and argument.
absl::StatusOr<hlo::Instruction*> BuilderValue(const sharc_builder& builder, sharc_value value,
                                               const char* function, const char* argument);

// "<base>.<n>", unused in the entry so far.
std::string FreshName(const sharc_builder& builder, std::string_view base);

// Infers the shape of `instruction` (its declared shape is a hint only for
// ops that read it: reshape, broadcast, convert, constants, parameters),
// runs the op's checks, and appends it to the entry as a new value.
absl::StatusOr<sharc_value> AddToEntry(sharc_builder& builder,
                                       std::unique_ptr<hlo::Instruction> instruction,
                                       const char* function);

}  // namespace sharc::c_api

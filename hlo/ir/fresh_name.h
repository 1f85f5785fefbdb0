// Names for instructions a pass adds: unique within their computation, and
// derived from the instruction they stand for, so dumps and profiles still
// say where a value came from.
#pragma once

#include <string>
#include <string_view>

#include "hlo/ir/computation.h"

namespace sharc::hlo {

// A name not yet used in `computation`: `base`, else base.1, base.2, ...
std::string FreshName(const Computation& computation, std::string_view base);

}  // namespace sharc::hlo

#include "hlo/ir/fresh_name.h"

#include "absl/strings/str_cat.h"

namespace sharc::hlo {

std::string FreshName(const Computation& computation, std::string_view base) {
  std::string name(base);
  for (int64_t i = 1; computation.FindInstruction(name) != nullptr; ++i) {
    name = absl::StrCat(std::string(base), ".", i);
  }
  return name;
}

}  // namespace sharc::hlo

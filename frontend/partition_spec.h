// JAX-style spelling of PartitionSpecs for frontend code:
// P("data", None) instead of spmd::PartitionSpec({{"data"}, {}}), and
// P(SpecDim{"x", "y"}) for a dimension split over two mesh axes.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "spmd/mesh.h"

namespace sharc::frontend {

// One dimension of a spec: a mesh axis, several axes (major to minor), or
// None (not split).
class SpecDim {
 public:
  SpecDim(const char* axis) : axes_{axis} {}                  // NOLINT: P("data")
  SpecDim(std::string axis) : axes_{std::move(axis)} {}       // NOLINT
  SpecDim(std::nullopt_t) {}                                  // NOLINT: P(None)
  SpecDim(std::initializer_list<std::string> axes) : axes_(axes) {}
  const std::vector<std::string>& axes() const { return axes_; }

 private:
  std::vector<std::string> axes_;
};

inline constexpr std::nullopt_t None = std::nullopt;

template <typename... Dims>
  requires(std::is_convertible_v<const Dims&, SpecDim> && ...)
spmd::PartitionSpec P(const Dims&... dims) {
  return spmd::PartitionSpec(std::vector<std::vector<std::string>>{SpecDim(dims).axes()...});
}

}  // namespace sharc::frontend

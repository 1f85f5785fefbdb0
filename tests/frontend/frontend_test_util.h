// Helpers for the frontend tests: host literals from values, values from
// literals, and running a traced function once on the interpreter.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/frontend.h"
#include "hlo/ir/literal.h"

namespace sharc::frontend::testing {

inline hlo::Literal F32(std::vector<int64_t> dims, std::vector<float> values) {
  return hlo::Literal::FromValues<float>(std::move(dims), values);
}
inline hlo::Literal S32(std::vector<int64_t> dims, std::vector<int32_t> values) {
  return hlo::Literal::FromValues<int32_t>(std::move(dims), values);
}
// 0, 1, 2, ... scaled, as f32 of `dims`.
inline hlo::Literal Ramp(std::vector<int64_t> dims, float scale = 1.0f, float offset = 0.0f) {
  hlo::Literal l(hlo::Shape(hlo::PrimitiveType::kF32, std::move(dims)));
  for (int64_t i = 0; i < l.num_elements(); ++i) l.data<float>()[i] = offset + scale * i;
  return l;
}

inline std::vector<double> Values(const hlo::Literal& l) {
  std::vector<double> out;
  for (int64_t i = 0; i < l.num_elements(); ++i) out.push_back(l.GetAsDouble(i));
  return out;
}

// Traces `f` (a function of Tensors) with jit and runs it once on `args`;
// returns the single output leaf.
template <typename F, typename... Literals>
absl::StatusOr<hlo::Literal> RunOnce(F f, const Literals&... args) {
  Jitted jitted = jit(std::move(f));
  absl::StatusOr<HostTree> out = jitted(args...);
  if (!out.ok()) return out.status();
  return out->leaf();
}

}  // namespace sharc::frontend::testing

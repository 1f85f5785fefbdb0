// Contractions: numpy's matmul (vectors, matrices and broadcast batches of
// matrices), XLA's general dot, and einsum for two-operand specs without
// repeated labels within an operand ("bij,bjk->bik", "i,i->", "ij->ji").
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <string_view>
#include <vector>

#include "frontend/tensor.h"

namespace sharc::frontend {

struct DotDimensions {
  std::vector<int64_t> lhs_contracting, rhs_contracting;
  std::vector<int64_t> lhs_batch, rhs_batch;
};

#define SHARC_FRONTEND_LOC std::source_location loc = std::source_location::current()
// Result dims: batch dims, lhs free dims, rhs free dims (XLA's order).
// `result_type` defaults to the operands' dtype.
Tensor dot_general(const Tensor& lhs, const Tensor& rhs, const DotDimensions& dimensions,
                   std::optional<DType> result_type = std::nullopt, SHARC_FRONTEND_LOC);
Tensor matmul(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor einsum(std::string_view spec, const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor einsum(std::string_view spec, const Tensor& a, SHARC_FRONTEND_LOC);
#undef SHARC_FRONTEND_LOC

}  // namespace sharc::frontend

// The dimension numbers of a contraction (dot, ragged-dot), read from its
// attributes and checked against its first two operands once, for both ops:
// as many lhs as rhs batch and contracting dims, each a valid dim used once,
// and equal sizes on both sides. Each op checks what is its own on top.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/attribute.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

struct DotDims {
  IntList lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  // The dims that are neither, in operand order.
  std::vector<int64_t> lhs_free, rhs_free;
};

// `rhs_other` are rhs dims with a role of the op's own (ragged-dot's group
// dim): they must be valid dims distinct from the others, and are not free.
absl::StatusOr<DotDims> GetDotDims(const Instruction& inst, const IntList& rhs_other = {});

}  // namespace sharc::hlo

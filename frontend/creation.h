// Tensors made from nothing but a static shape: iota/arange, zeros, ones,
// full, and constants from host literals. They need an active trace (the
// innermost function being traced receives them).
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "frontend/tensor.h"
#include "hlo/ir/literal.h"

namespace sharc::frontend {

#define SHARC_FRONTEND_LOC std::source_location loc = std::source_location::current()
// Values 0, 1, ... along `dimension`, repeated along the others.
Tensor iota(std::vector<int64_t> dims, int64_t dimension, DType dtype = s32, SHARC_FRONTEND_LOC);
// [0, n) and numpy's arange(start, stop, step) (step may be negative).
Tensor arange(int64_t n, DType dtype = s32, SHARC_FRONTEND_LOC);
Tensor arange(double start, double stop, double step, DType dtype = f32, SHARC_FRONTEND_LOC);
Tensor full(std::vector<int64_t> dims, double value, DType dtype = f32, SHARC_FRONTEND_LOC);
Tensor zeros(std::vector<int64_t> dims, DType dtype = f32, SHARC_FRONTEND_LOC);
Tensor ones(std::vector<int64_t> dims, DType dtype = f32, SHARC_FRONTEND_LOC);
Tensor zeros_like(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor ones_like(const Tensor& x, SHARC_FRONTEND_LOC);
// The host value as a constant of the program.
Tensor constant(hlo::Literal value, SHARC_FRONTEND_LOC);
#undef SHARC_FRONTEND_LOC

}  // namespace sharc::frontend

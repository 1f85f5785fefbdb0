// Shape and data-movement operations on Tensors with numpy's conventions:
// reshape (one -1 inferred), transpose, broadcast_to (numpy broadcasting),
// slicing, indexing the leading dimension, concatenation, squeeze and
// expand_dims. Negative axes count from the end.
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "absl/types/span.h"
#include "frontend/tensor.h"

namespace sharc::frontend {

#define SHARC_FRONTEND_LOC std::source_location loc = std::source_location::current()

// The numpy broadcast of two shapes' dims (trailing dims aligned, size-1
// dims stretch). Throws TraceError if they do not broadcast.
std::vector<int64_t> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b,
                                     SHARC_FRONTEND_LOC);

Tensor reshape(const Tensor& x, std::vector<int64_t> dims, SHARC_FRONTEND_LOC);
// `perm` empty reverses the dimensions (numpy's default).
Tensor transpose(const Tensor& x, std::vector<int64_t> perm = {}, SHARC_FRONTEND_LOC);
Tensor broadcast_to(const Tensor& x, absl::Span<const int64_t> dims, SHARC_FRONTEND_LOC);
// x[start:limit:stride] per dimension; `strides` empty means all 1.
Tensor slice(const Tensor& x, std::vector<int64_t> start, std::vector<int64_t> limit,
             std::vector<int64_t> strides = {}, SHARC_FRONTEND_LOC);
// x[i] on the leading dimension (the result drops it); negative i counts
// from the end.
Tensor index(const Tensor& x, int64_t i, SHARC_FRONTEND_LOC);
Tensor concatenate(absl::Span<const Tensor> xs, int64_t axis = 0, SHARC_FRONTEND_LOC);
// Removes the given size-1 axes, or every size-1 axis if `axes` is empty.
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes = {}, SHARC_FRONTEND_LOC);
// Inserts a size-1 axis at `axis` of the result.
Tensor expand_dims(const Tensor& x, int64_t axis, SHARC_FRONTEND_LOC);

#undef SHARC_FRONTEND_LOC

}  // namespace sharc::frontend

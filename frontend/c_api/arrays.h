// Element types and host arrays across the C boundary: sharc_dtype <->
// hlo::PrimitiveType, sharc_array <-> hlo::Literal, and shapes reported
// into caller arrays. Every check names the array it is about (`what`).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "frontend/c_api/sharc_c.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"

namespace sharc::c_api {

std::optional<hlo::PrimitiveType> ToPrimitiveType(sharc_dtype dtype);
sharc_dtype ToDtype(hlo::PrimitiveType type);

// The array shape `dtype[dims]`, validated (known dtype, rank >= 0, dims
// given and non-negative, a sane element count).
absl::StatusOr<hlo::Shape> ShapeFromC(sharc_dtype dtype, int32_t rank, const int64_t* dims,
                                      const std::string& what);

// A copy of `array`'s contents. PRED bytes other than 0 become 1.
absl::StatusOr<hlo::Literal> LiteralFromArray(const sharc_array& array, const std::string& what);

// A view of an array literal; its pointers live as long as the literal.
sharc_array ArrayView(const hlo::Literal& literal);

// Writes a shape out as the *_shape functions promise: a tuple is
// SHARC_DTYPE_INVALID with rank -1; up to `dims_capacity` dims are copied.
void ReportShape(const hlo::Shape& shape, sharc_dtype* out_dtype, int32_t* out_rank,
                 int64_t* dims, int32_t dims_capacity);

// The array leaves of `literal`, depth first, moved out.
void FlattenLeaves(hlo::Literal literal, std::vector<hlo::Literal>& leaves);

}  // namespace sharc::c_api

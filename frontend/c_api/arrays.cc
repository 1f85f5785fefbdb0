#include "frontend/c_api/arrays.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "frontend/c_api/handles.h"

namespace sharc::c_api {
namespace {

using hlo::PrimitiveType;

struct DtypePair {
  sharc_dtype dtype;
  PrimitiveType type;
};

constexpr DtypePair kDtypes[] = {
    {SHARC_DTYPE_PRED, PrimitiveType::kPred}, {SHARC_DTYPE_S8, PrimitiveType::kS8},
    {SHARC_DTYPE_S16, PrimitiveType::kS16},   {SHARC_DTYPE_S32, PrimitiveType::kS32},
    {SHARC_DTYPE_S64, PrimitiveType::kS64},   {SHARC_DTYPE_U8, PrimitiveType::kU8},
    {SHARC_DTYPE_U16, PrimitiveType::kU16},   {SHARC_DTYPE_U32, PrimitiveType::kU32},
    {SHARC_DTYPE_U64, PrimitiveType::kU64},   {SHARC_DTYPE_F16, PrimitiveType::kF16},
    {SHARC_DTYPE_BF16, PrimitiveType::kBF16}, {SHARC_DTYPE_F32, PrimitiveType::kF32},
    {SHARC_DTYPE_F64, PrimitiveType::kF64},   {SHARC_DTYPE_C64, PrimitiveType::kC64},
    {SHARC_DTYPE_C128, PrimitiveType::kC128},
};

}  // namespace

std::optional<PrimitiveType> ToPrimitiveType(sharc_dtype dtype) {
  for (const DtypePair& pair : kDtypes) {
    if (pair.dtype == dtype) return pair.type;
  }
  return std::nullopt;
}

sharc_dtype ToDtype(PrimitiveType type) {
  for (const DtypePair& pair : kDtypes) {
    if (pair.type == type) return pair.dtype;
  }
  return SHARC_DTYPE_INVALID;
}

absl::StatusOr<hlo::Shape> ShapeFromC(sharc_dtype dtype, int32_t rank, const int64_t* dims,
                                      const std::string& what) {
  std::optional<PrimitiveType> type = ToPrimitiveType(dtype);
  if (!type) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": unknown dtype ", static_cast<int>(dtype), " (not a sharc_dtype)"));
  }
  if (rank < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": rank ", rank, " is negative"));
  }
  if (rank > 0 && dims == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": dims is NULL but rank is ", rank));
  }
  std::vector<int64_t> dim_list(dims, dims + rank);
  hlo::Shape shape(*type, std::move(dim_list));
  absl::Status valid = hlo::ValidateShape(shape);
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", valid.message()));
  return shape;
}

absl::StatusOr<hlo::Literal> LiteralFromArray(const sharc_array& array, const std::string& what) {
  absl::StatusOr<hlo::Shape> shape = ShapeFromC(array.dtype, array.rank, array.dims, what);
  if (!shape.ok()) return shape.status();
  hlo::Literal literal(*shape);
  const size_t bytes = static_cast<size_t>(literal.size_bytes());
  if (bytes == 0) return literal;
  if (array.data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": data is NULL but ", shape->ToString(), " has elements"));
  }
  std::memcpy(literal.untyped_data(), array.data, bytes);
  if (shape->type() == PrimitiveType::kPred) {
    // A bool holding anything but 0 or 1 is undefined behaviour in C++.
    uint8_t* flags = literal.untyped_data();
    for (size_t i = 0; i < bytes; ++i) flags[i] = flags[i] != 0 ? 1 : 0;
  }
  return literal;
}

sharc_array ArrayView(const hlo::Literal& literal) {
  sharc_array view;
  view.dtype = ToDtype(literal.shape().type());
  view.rank = static_cast<int32_t>(literal.shape().rank());
  view.dims = literal.shape().dims().empty() ? nullptr : literal.shape().dims().data();
  view.data = literal.size_bytes() == 0 ? nullptr : literal.untyped_data();
  return view;
}

void ReportShape(const hlo::Shape& shape, sharc_dtype* out_dtype, int32_t* out_rank,
                 int64_t* dims, int32_t dims_capacity) {
  if (shape.is_tuple()) {
    if (out_dtype != nullptr) *out_dtype = SHARC_DTYPE_INVALID;
    if (out_rank != nullptr) *out_rank = -1;
    return;
  }
  if (out_dtype != nullptr) *out_dtype = ToDtype(shape.type());
  if (out_rank != nullptr) *out_rank = static_cast<int32_t>(shape.rank());
  if (dims == nullptr) return;
  for (int64_t i = 0; i < shape.rank() && i < dims_capacity; ++i) dims[i] = shape.dim(i);
}

void FlattenLeaves(hlo::Literal literal, std::vector<hlo::Literal>& leaves) {
  if (!literal.is_tuple()) {
    leaves.push_back(std::move(literal));
    return;
  }
  for (hlo::Literal& element : literal.elements()) FlattenLeaves(std::move(element), leaves);
}

}  // namespace sharc::c_api

extern "C" {

size_t sharc_dtype_size(sharc_dtype dtype) {
  std::optional<sharc::hlo::PrimitiveType> type = sharc::c_api::ToPrimitiveType(dtype);
  return type ? static_cast<size_t>(sharc::hlo::ByteWidth(*type)) : 0;
}

const char* sharc_dtype_name(sharc_dtype dtype) {
  std::optional<sharc::hlo::PrimitiveType> type = sharc::c_api::ToPrimitiveType(dtype);
  return type ? sharc::hlo::PrimitiveTypeName(*type).c_str() : "invalid";
}

}  // extern "C"

// Shape and data-movement ops: broadcast, reshape, transpose, slice,
// dynamic-slice, dynamic-update-slice, concatenate, pad and reverse.
//
// Shape inference validates every attribute fully, since the parser hands
// them over as written by the user. Evaluation re-runs inference first and
// then moves elements with one strided-copy kernel: each of these ops is an
// affine map between the index boxes of its operand and its result.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

// ---------------------------------------------------------------------------
// Attribute and operand checks.

absl::StatusOr<const IntList*> RequiredInts(const Instruction& inst, std::string_view name) {
  const AttrValue* value = inst.attr(name);
  const IntList* list = value ? std::get_if<IntList>(value) : nullptr;
  if (list == nullptr) return OpError(inst, "needs an integer-list attribute '", name, "'");
  return list;
}

absl::StatusOr<const IntListList*> RequiredIntLists(const Instruction& inst,
                                                   std::string_view name) {
  const AttrValue* value = inst.attr(name);
  const IntListList* lists = value ? std::get_if<IntListList>(value) : nullptr;
  if (lists == nullptr) return OpError(inst, "needs a '", name, "' attribute");
  return lists;
}

absl::Status ExpectOperandCount(const Instruction& inst, int64_t count) {
  if (inst.operand_count() != count) {
    return OpError(inst, "takes ", count, " operands, got ", inst.operand_count());
  }
  return absl::OkStatus();
}

// The declared result shape, for ops whose result dims come from it.
absl::StatusOr<Shape> DeclaredArray(const Instruction& inst) {
  const Shape& shape = inst.shape();
  if (!shape.is_array()) return OpError(inst, "must produce an array, got ", shape.ToString());
  RETURN_IF_ERROR(ValidateShape(shape)) << ", in " << inst.Describe();
  return shape;
}

// Computed result shapes go through the same limits as declared ones.
absl::StatusOr<Shape> Checked(const Instruction& inst, Shape shape) {
  RETURN_IF_ERROR(ValidateShape(shape)) << ", in " << inst.Describe();
  return shape;
}

// XLA's older form gives the start indices as one integer vector of `rank`
// elements rather than `rank` scalars (hlo/passes/lower_for_compute.h splits
// it into scalars before anything but the interpreter reads it).
bool HasStartIndexVector(const Instruction& inst, int64_t first, int64_t rank) {
  if (inst.operand_count() != first + 1) return false;
  const Shape& s = inst.operand(first)->shape();
  return s.is_array() && s.rank() == 1 && s.dim(0) == rank && IsInteger(s.type()) && rank != 1;
}

// Operands of dynamic-slice and dynamic-update-slice from `first` on must be
// integer scalars, one per dimension (or that one vector).
absl::Status ExpectStartIndices(const Instruction& inst, int64_t first, int64_t rank) {
  if (HasStartIndexVector(inst, first, rank)) return absl::OkStatus();
  if (inst.operand_count() != first + rank) {
    return OpError(inst, "takes ", first, " + rank (", rank, ") = ", first + rank,
                   " operands, got ", inst.operand_count());
  }
  for (int64_t i = first; i < first + rank; ++i) {
    RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
    const Shape& s = inst.operand(i)->shape();
    if (!s.is_scalar() || !IsInteger(s.type())) {
      return OpError(inst, "start index operand ", i, " must be an integer scalar, got ",
                     s.ToString());
    }
  }
  return absl::OkStatus();
}

// Evaluators trust the verified instruction; refuse operand values that do
// not match it rather than read out of bounds.
absl::Status CheckOperandLiterals(const Instruction& inst,
                                  absl::Span<const Literal* const> operands) {
  if (static_cast<int64_t>(operands.size()) != inst.operand_count()) {
    return OpError(inst, "evaluated with ", operands.size(), " operand values, expected ",
                   inst.operand_count());
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == nullptr || operands[i]->shape() != inst.operand(i)->shape()) {
      return OpError(inst, "operand ", i, " value does not have the operand's shape ",
                     inst.operand(i)->shape().ToString());
    }
  }
  return absl::OkStatus();
}

// A start index value as int64; u64 values beyond int64 saturate (they are
// clamped to the last valid start anyway).
int64_t StartIndex(const Literal& literal) {
  if (literal.shape().type() == PrimitiveType::kU64) {
    uint64_t v = literal.data<uint64_t>()[0];
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(v);
  }
  return ScalarAsInt64(literal);
}

// ---------------------------------------------------------------------------
// The strided copy kernel: for every index i in the box `dims`,
//   dst[dst_offset + <i, dst_strides>] = src[src_offset + <i, src_strides>].
// Strides may be 0 (broadcast) or negative (reverse). Elements are moved as
// raw bits of their width, so NaN payloads survive; c128's 16 bytes move as
// one Bytes16.
struct Bytes16 {
  uint64_t parts[2];
};

template <typename W>
void StridedCopyTyped(const W* src, int64_t src_offset, absl::Span<const int64_t> src_strides,
                      W* dst, int64_t dst_offset, absl::Span<const int64_t> dst_strides,
                      absl::Span<const int64_t> dims) {
  for (int64_t d : dims) {
    if (d <= 0) return;
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) {
    dst[dst_offset] = src[src_offset];
    return;
  }
  const int64_t inner = dims[rank - 1];
  const int64_t src_inner = src_strides[rank - 1];
  const int64_t dst_inner = dst_strides[rank - 1];
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t s = src_offset;
  int64_t t = dst_offset;
  while (true) {
    if (src_inner == 1 && dst_inner == 1) {
      std::memcpy(dst + t, src + s, static_cast<size_t>(inner) * sizeof(W));
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[t + j * dst_inner] = src[s + j * src_inner];
    }
    // Odometer over the outer dimensions, keeping both offsets incremental
    // and never stepping outside the box (strides may be huge when the
    // dimension has size 1).
    int64_t k = rank - 2;
    for (; k >= 0; --k) {
      if (index[k] + 1 < dims[k]) {
        ++index[k];
        s += src_strides[k];
        t += dst_strides[k];
        break;
      }
      s -= src_strides[k] * index[k];
      t -= dst_strides[k] * index[k];
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

void StridedCopy(const Literal& src, int64_t src_offset, absl::Span<const int64_t> src_strides,
                 Literal& dst, int64_t dst_offset, absl::Span<const int64_t> dst_strides,
                 absl::Span<const int64_t> dims) {
  auto run = [&](auto tag) {
    using W = decltype(tag);
    StridedCopyTyped(reinterpret_cast<const W*>(src.untyped_data()), src_offset, src_strides,
                     reinterpret_cast<W*>(dst.untyped_data()), dst_offset, dst_strides, dims);
  };
  switch (ByteWidth(src.shape().type())) {
    case 1: return run(uint8_t{});
    case 2: return run(uint16_t{});
    case 4: return run(uint32_t{});
    case 8: return run(uint64_t{});
    case 16: return run(Bytes16{});  // c128
  }
}

// Sets every element of `out` to the scalar `value` (same element type).
void FillWithScalar(const Literal& value, Literal& out) {
  auto run = [&](auto tag) {
    using W = decltype(tag);
    W v;
    std::memcpy(&v, value.untyped_data(), sizeof(W));
    W* data = reinterpret_cast<W*>(out.untyped_data());
    std::fill(data, data + out.num_elements(), v);
  };
  switch (ByteWidth(out.shape().type())) {
    case 1: return run(uint8_t{});
    case 2: return run(uint16_t{});
    case 4: return run(uint32_t{});
    case 8: return run(uint64_t{});
    case 16: return run(Bytes16{});  // c128
  }
}

// ---------------------------------------------------------------------------
// broadcast: operand dim i becomes result dim dimensions[i]; the other result
// dims repeat it.

absl::StatusOr<Shape> InferBroadcast(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  ASSIGN_OR_RETURN(Shape out, DeclaredArray(inst));
  // XLA lets a broadcast of a scalar leave out `dimensions={}`.
  static const IntList kNoDims;
  const IntList* dims = &kNoDims;
  if (inst.has_attr("dimensions") || operand.rank() > 0) {
    ASSIGN_OR_RETURN(dims, RequiredInts(inst, "dimensions"));
  }
  if (out.type() != operand.type()) {
    return OpError(inst, "cannot change the element type: operand ", operand.ToString(),
                   ", result ", out.ToString());
  }
  if (static_cast<int64_t>(dims->size()) != operand.rank()) {
    return OpError(inst, "has ", dims->size(), " dimensions for rank-", operand.rank(),
                   " operand ", operand.ToString());
  }
  for (size_t i = 0; i < dims->size(); ++i) {
    const int64_t d = (*dims)[i];
    if (d < 0 || d >= out.rank()) {
      return OpError(inst, "dimension ", d, " out of range for rank-", out.rank(), " output");
    }
    if (i > 0 && d <= (*dims)[i - 1]) {
      return OpError(inst, "dimensions {", absl::StrJoin(*dims, ","),
                     "} must be strictly increasing");
    }
    if (operand.dim(static_cast<int64_t>(i)) != out.dim(d)) {
      return OpError(inst, "operand dimension ", i, " has size ", operand.dim(static_cast<int64_t>(i)),
                     " but result dimension ", d, " has size ", out.dim(d), " (", operand.ToString(),
                     " to ", out.ToString(), ")");
    }
  }
  return out;
}

absl::StatusOr<Literal> EvaluateBroadcast(const Instruction& inst,
                                          absl::Span<const Literal* const> operands,
                                          EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferBroadcast(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  const Literal& operand = *operands[0];
  const IntList& dims = inst.attr_ints("dimensions");
  std::vector<int64_t> operand_strides = RowMajorStrides(operand.shape().dims());
  std::vector<int64_t> src_strides(static_cast<size_t>(shape.rank()), 0);
  for (size_t i = 0; i < dims.size(); ++i) src_strides[dims[i]] = operand_strides[i];
  Literal out(shape);
  StridedCopy(operand, 0, src_strides, out, 0, RowMajorStrides(shape.dims()), shape.dims());
  return out;
}

// ---------------------------------------------------------------------------
// reshape: same elements in row-major order, declared dims.

absl::StatusOr<Shape> InferReshape(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  ASSIGN_OR_RETURN(Shape out, DeclaredArray(inst));
  if (out.type() != operand.type()) {
    return OpError(inst, "cannot change the element type: operand ", operand.ToString(),
                   ", result ", out.ToString());
  }
  if (out.num_elements() != operand.num_elements()) {
    return OpError(inst, "cannot reshape ", operand.ToString(), " (", operand.num_elements(),
                   " elements) to ", out.ToString(), " (", out.num_elements(), " elements)");
  }
  return out;
}

absl::StatusOr<Literal> EvaluateReshape(const Instruction& inst,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferReshape(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  Literal out(shape);
  // An empty array has no storage (a null pointer memcpy may not take).
  if (out.size_bytes() > 0) {
    std::memcpy(out.untyped_data(), operands[0]->untyped_data(),
                static_cast<size_t>(out.size_bytes()));
  }
  return out;
}

// ---------------------------------------------------------------------------
// transpose: result dim i is operand dim dimensions[i].

absl::StatusOr<Shape> InferTranspose(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  ASSIGN_OR_RETURN(const IntList* perm, RequiredInts(inst, "dimensions"));
  RETURN_IF_ERROR(ExpectPermutation(inst, *perm, operand.rank(), "dimensions"));
  std::vector<int64_t> dims;
  for (int64_t p : *perm) dims.push_back(operand.dim(p));
  return Shape(operand.type(), std::move(dims));
}

absl::StatusOr<Literal> EvaluateTranspose(const Instruction& inst,
                                          absl::Span<const Literal* const> operands,
                                          EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferTranspose(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  const IntList& perm = inst.attr_ints("dimensions");
  std::vector<int64_t> operand_strides = RowMajorStrides(operands[0]->shape().dims());
  std::vector<int64_t> src_strides;
  for (int64_t p : perm) src_strides.push_back(operand_strides[p]);
  Literal out(shape);
  StridedCopy(*operands[0], 0, src_strides, out, 0, RowMajorStrides(shape.dims()), shape.dims());
  return out;
}

// ---------------------------------------------------------------------------
// slice: {start, limit, stride} per dimension.

struct SliceDim {
  int64_t start, limit, stride;
};

absl::StatusOr<std::vector<SliceDim>> SliceDims(const Instruction& inst, const Shape& operand) {
  ASSIGN_OR_RETURN(const IntListList* entries, RequiredIntLists(inst, "slice"));
  if (static_cast<int64_t>(entries->size()) != operand.rank()) {
    return OpError(inst, "has ", entries->size(), " slice entries for rank-", operand.rank(),
                   " operand ", operand.ToString());
  }
  std::vector<SliceDim> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const std::vector<int64_t>& e = (*entries)[static_cast<size_t>(i)];
    if (e.size() != 2 && e.size() != 3) {
      return OpError(inst, "slice entry ", i, " must be [start:limit] or [start:limit:stride]");
    }
    SliceDim d{e[0], e[1], e.size() == 3 ? e[2] : 1};
    if (d.stride < 1) {
      return OpError(inst, "slice stride ", d.stride, " in dimension ", i, " must be positive");
    }
    if (d.start < 0 || d.start > d.limit || d.limit > operand.dim(i)) {
      return OpError(inst, "slice [", d.start, ":", d.limit, "] in dimension ", i,
                     " is not within [0:", operand.dim(i), "] with start <= limit");
    }
    dims.push_back(d);
  }
  return dims;
}

absl::StatusOr<Shape> InferSlice(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  ASSIGN_OR_RETURN(std::vector<SliceDim> slice, SliceDims(inst, operand));
  std::vector<int64_t> dims;
  for (const SliceDim& d : slice) {
    // ceil((limit - start) / stride) without overflowing for huge strides.
    dims.push_back(d.limit == d.start ? 0 : (d.limit - d.start - 1) / d.stride + 1);
  }
  return Shape(operand.type(), std::move(dims));
}

absl::StatusOr<Literal> EvaluateSlice(const Instruction& inst,
                                      absl::Span<const Literal* const> operands, EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferSlice(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  const Shape& operand = operands[0]->shape();
  ASSIGN_OR_RETURN(std::vector<SliceDim> slice, SliceDims(inst, operand));
  std::vector<int64_t> operand_strides = RowMajorStrides(operand.dims());
  int64_t offset = 0;
  std::vector<int64_t> src_strides;
  for (size_t i = 0; i < slice.size(); ++i) {
    offset += slice[i].start * operand_strides[i];
    // A stride is only ever taken within the result, so a huge stride on a
    // size-1 result dimension is never multiplied out (it could overflow).
    src_strides.push_back(shape.dim(static_cast<int64_t>(i)) <= 1
                              ? 0
                              : slice[i].stride * operand_strides[i]);
  }
  Literal out(shape);
  StridedCopy(*operands[0], offset, src_strides, out, 0, RowMajorStrides(shape.dims()),
              shape.dims());
  return out;
}

// ---------------------------------------------------------------------------
// dynamic-slice(operand, start indices...) and
// dynamic-update-slice(operand, update, start indices...). Starts are clamped
// so the window stays inside the operand, as in XLA.

absl::StatusOr<Shape> InferDynamicSlice(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectStartIndices(inst, 1, operand.rank()));
  ASSIGN_OR_RETURN(const IntList* sizes, RequiredInts(inst, "dynamic_slice_sizes"));
  if (static_cast<int64_t>(sizes->size()) != operand.rank()) {
    return OpError(inst, "has ", sizes->size(), " dynamic_slice_sizes for rank-", operand.rank(),
                   " operand ", operand.ToString());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = (*sizes)[static_cast<size_t>(i)];
    if (size < 0 || size > operand.dim(i)) {
      return OpError(inst, "slice size ", size, " in dimension ", i, " is not within [0, ",
                     operand.dim(i), "]");
    }
  }
  return Shape(operand.type(), *sizes);
}

// Start of the window in each dimension, clamped to [0, dim - window].
std::vector<int64_t> ClampedStarts(absl::Span<const Literal* const> operands, int64_t first,
                                   const Shape& operand, absl::Span<const int64_t> window) {
  std::vector<int64_t> starts;
  const bool vector = operands.size() == static_cast<size_t>(first + 1) &&
                      operands[static_cast<size_t>(first)]->shape().rank() == 1;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t start = vector ? operands[static_cast<size_t>(first)]->GetAsInt64(i)
                                 : StartIndex(*operands[static_cast<size_t>(first + i)]);
    starts.push_back(std::clamp<int64_t>(start, 0, operand.dim(i) - window[i]));
  }
  return starts;
}

int64_t Dot(absl::Span<const int64_t> a, absl::Span<const int64_t> b) {
  int64_t sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

absl::StatusOr<Literal> EvaluateDynamicSlice(const Instruction& inst,
                                             absl::Span<const Literal* const> operands,
                                             EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferDynamicSlice(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  const Shape& operand = operands[0]->shape();
  std::vector<int64_t> starts = ClampedStarts(operands, 1, operand, shape.dims());
  std::vector<int64_t> operand_strides = RowMajorStrides(operand.dims());
  Literal out(shape);
  StridedCopy(*operands[0], Dot(starts, operand_strides), operand_strides, out, 0,
              RowMajorStrides(shape.dims()), shape.dims());
  return out;
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& update = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectStartIndices(inst, 2, operand.rank()));
  if (update.type() != operand.type()) {
    return OpError(inst, "operand shapes ", operand.ToString(), " and ", update.ToString(),
                   " have different element types");
  }
  if (update.rank() != operand.rank()) {
    return OpError(inst, "update ", update.ToString(), " must have the rank of operand ",
                   operand.ToString());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (update.dim(i) > operand.dim(i)) {
      return OpError(inst, "update ", update.ToString(), " is larger than operand ",
                     operand.ToString(), " in dimension ", i);
    }
  }
  return operand;
}

absl::StatusOr<Literal> EvaluateDynamicUpdateSlice(const Instruction& inst,
                                                   absl::Span<const Literal* const> operands,
                                                   EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferDynamicUpdateSlice(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  const Literal& update = *operands[1];
  std::vector<int64_t> starts = ClampedStarts(operands, 2, shape, update.shape().dims());
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  Literal out = *operands[0];
  StridedCopy(update, 0, RowMajorStrides(update.shape().dims()), out, Dot(starts, out_strides),
              out_strides, update.shape().dims());
  return out;
}

// ---------------------------------------------------------------------------
// concatenate along dimensions={d}.

absl::StatusOr<Shape> InferConcatenate(const Instruction& inst) {
  if (inst.operand_count() < 1) return OpError(inst, "takes at least 1 operand");
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  }
  ASSIGN_OR_RETURN(const IntList* dims, RequiredInts(inst, "dimensions"));
  if (dims->size() != 1) {
    return OpError(inst, "needs exactly one concatenation dimension, got {",
                   absl::StrJoin(*dims, ","), "}");
  }
  const int64_t axis = (*dims)[0];
  const Shape& first = inst.operand(0)->shape();
  if (axis < 0 || axis >= first.rank()) {
    return OpError(inst, "dimension ", axis, " out of range for rank-", first.rank(),
                   " operand ", first.ToString());
  }
  std::vector<int64_t> result = first.dims();
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (s.type() != first.type()) {
      return OpError(inst, "operand shapes ", first.ToString(), " and ", s.ToString(),
                     " have different element types");
    }
    if (s.rank() != first.rank()) {
      return OpError(inst, "operand shapes ", first.ToString(), " and ", s.ToString(),
                     " have different ranks");
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d != axis && s.dim(d) != first.dim(d)) {
        return OpError(inst, "operand shapes ", first.ToString(), " and ", s.ToString(),
                       " differ in dimension ", d, " (only dimension ", axis, " may differ)");
      }
    }
    if (__builtin_add_overflow(result[axis], s.dim(axis), &result[axis])) {
      return OpError(inst, "result dimension ", axis, " overflows");
    }
  }
  return Checked(inst, Shape(first.type(), std::move(result)));
}

absl::StatusOr<Literal> EvaluateConcatenate(const Instruction& inst,
                                            absl::Span<const Literal* const> operands,
                                            EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferConcatenate(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  const int64_t axis = inst.attr_ints("dimensions")[0];
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  Literal out(shape);
  int64_t position = 0;  // where the current operand starts along `axis`
  for (const Literal* operand : operands) {
    const std::vector<int64_t>& dims = operand->shape().dims();
    StridedCopy(*operand, 0, RowMajorStrides(dims), out, position * out_strides[axis],
                out_strides, dims);
    position += dims[axis];
  }
  return out;
}

// ---------------------------------------------------------------------------
// pad(operand, value): {low, high, interior} per dimension. Negative low/high
// crop; interior inserts `interior` padding elements between neighbours.

struct PadDim {
  int64_t low, high, interior;
};

absl::StatusOr<std::vector<PadDim>> PadDims(const Instruction& inst, const Shape& operand) {
  ASSIGN_OR_RETURN(const IntListList* entries, RequiredIntLists(inst, "padding"));
  if (static_cast<int64_t>(entries->size()) != operand.rank()) {
    return OpError(inst, "has ", entries->size(), " padding entries for rank-", operand.rank(),
                   " operand ", operand.ToString());
  }
  std::vector<PadDim> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const std::vector<int64_t>& e = (*entries)[static_cast<size_t>(i)];
    if (e.size() != 2 && e.size() != 3) {
      return OpError(inst, "padding entry ", i, " must be low_high or low_high_interior");
    }
    PadDim d{e[0], e[1], e.size() == 3 ? e[2] : 0};
    if (d.interior < 0) {
      return OpError(inst, "interior padding ", d.interior, " in dimension ", i,
                     " must not be negative");
    }
    // Bounding the amounts keeps the size arithmetic below far from overflow.
    for (int64_t v : {d.low, d.high, d.interior}) {
      if (v > kMaxElements || v < -kMaxElements) {
        return OpError(inst, "padding amount ", v, " in dimension ", i, " is too large");
      }
    }
    dims.push_back(d);
  }
  return dims;
}

absl::StatusOr<Shape> InferPad(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& value = inst.operand(1)->shape();
  if (!value.is_scalar() || value.type() != operand.type()) {
    return OpError(inst, "padding value must be a ", PrimitiveTypeName(operand.type()),
                   " scalar, got ", value.ToString());
  }
  ASSIGN_OR_RETURN(std::vector<PadDim> pads, PadDims(inst, operand));
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PadDim& p = pads[static_cast<size_t>(i)];
    const int64_t size = operand.dim(i);
    // Each term is bounded by 2^40 except the interior product, so only that
    // product and the final sum can overflow.
    int64_t interior_total;
    int64_t result;
    if (__builtin_mul_overflow(std::max<int64_t>(size - 1, 0), p.interior, &interior_total) ||
        __builtin_add_overflow(size + p.low + p.high, interior_total, &result)) {
      return OpError(inst, "result dimension ", i, " overflows");
    }
    if (result < 0) {
      return OpError(inst, "padding ", p.low, "_", p.high, "_", p.interior, " in dimension ", i,
                     " gives negative size ", result, " for ", operand.ToString());
    }
    dims.push_back(result);
  }
  return Checked(inst, Shape(operand.type(), std::move(dims)));
}

absl::StatusOr<Literal> EvaluatePad(const Instruction& inst,
                                    absl::Span<const Literal* const> operands, EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferPad(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  const Literal& operand = *operands[0];
  ASSIGN_OR_RETURN(std::vector<PadDim> pads, PadDims(inst, operand.shape()));
  Literal out(shape);
  // Fill with the padding value, then copy the operand elements that land
  // inside the result: operand index j goes to low + j * (interior + 1).
  FillWithScalar(*operands[1], out);

  std::vector<int64_t> operand_strides = RowMajorStrides(operand.shape().dims());
  std::vector<int64_t> out_strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> box, src_strides, dst_strides;
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    const PadDim& p = pads[static_cast<size_t>(i)];
    const int64_t step = p.interior + 1;
    const int64_t size = operand.shape().dim(i);
    const int64_t out_size = shape.dim(i);
    // First operand index at a position >= 0, and one past the last at a
    // position < out_size.
    const int64_t first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
    const int64_t last_position = out_size - 1 - p.low;
    const int64_t end =
        last_position < 0 ? 0 : std::min<int64_t>(size, last_position / step + 1);
    if (end <= first) return out;  // nothing of the operand survives
    box.push_back(end - first);
    src_offset += first * operand_strides[i];
    src_strides.push_back(operand_strides[i]);
    dst_offset += (p.low + first * step) * out_strides[i];
    dst_strides.push_back(step * out_strides[i]);
  }
  StridedCopy(operand, src_offset, src_strides, out, dst_offset, dst_strides, box);
  return out;
}

// ---------------------------------------------------------------------------
// reverse: flips the listed dimensions.

absl::StatusOr<Shape> InferReverse(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  ASSIGN_OR_RETURN(const IntList* dims, RequiredInts(inst, "dimensions"));
  RETURN_IF_ERROR(ExpectValidDims(inst, *dims, operand.rank(), "reversed"));
  return operand;
}

absl::StatusOr<Literal> EvaluateReverse(const Instruction& inst,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferReverse(inst));
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands));
  std::vector<int64_t> strides = RowMajorStrides(shape.dims());
  std::vector<int64_t> src_strides = strides;
  int64_t offset = 0;
  for (int64_t d : inst.attr_ints("dimensions")) {
    // Start at the far end of the dimension and walk backwards.
    offset += (shape.dim(d) - 1) * strides[d];
    src_strides[d] = -strides[d];
  }
  Literal out(shape);
  StridedCopy(*operands[0], offset, src_strides, out, 0, strides, shape.dims());
  return out;
}

// Fields are assigned one by one: GCC's -Wextra flags designated
// initializers that skip members.
OpDef ShapeOpDef(Opcode opcode, int min_operands, int max_operands,
                 std::vector<AttrSpec> attributes, InferShapeFn infer_shape,
                 EvaluateFn evaluate) {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = min_operands;
  def.max_operands = max_operands;
  def.attributes = std::move(attributes);
  def.infer_shape = std::move(infer_shape);
  def.evaluate = std::move(evaluate);
  return def;
}

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
  constexpr bool kRequired = true;
  constexpr int kVariadic = -1;
  registry.Register(ShapeOpDef(Opcode::kBroadcast, 1, 1,
                               {{"dimensions", AttrKind::kIntList}}, InferBroadcast,
                               EvaluateBroadcast));
  registry.Register(ShapeOpDef(Opcode::kReshape, 1, 1, {}, InferReshape, EvaluateReshape));
  registry.Register(ShapeOpDef(Opcode::kTranspose, 1, 1,
                               {{"dimensions", AttrKind::kIntList, kRequired}}, InferTranspose,
                               EvaluateTranspose));
  registry.Register(ShapeOpDef(Opcode::kSlice, 1, 1, {{"slice", AttrKind::kSlice, kRequired}},
                               InferSlice, EvaluateSlice));
  registry.Register(ShapeOpDef(Opcode::kDynamicSlice, 1, kVariadic,
                               {{"dynamic_slice_sizes", AttrKind::kIntList, kRequired}},
                               InferDynamicSlice, EvaluateDynamicSlice));
  registry.Register(ShapeOpDef(Opcode::kDynamicUpdateSlice, 2, kVariadic, {},
                               InferDynamicUpdateSlice, EvaluateDynamicUpdateSlice));
  registry.Register(ShapeOpDef(Opcode::kConcatenate, 1, kVariadic,
                               {{"dimensions", AttrKind::kIntList, kRequired}}, InferConcatenate,
                               EvaluateConcatenate));
  registry.Register(ShapeOpDef(Opcode::kPad, 2, 2, {{"padding", AttrKind::kPadding, kRequired}},
                               InferPad, EvaluatePad));
  registry.Register(ShapeOpDef(Opcode::kReverse, 1, 1,
                               {{"dimensions", AttrKind::kIntList, kRequired}}, InferReverse,
                               EvaluateReverse));
}

}  // namespace sharc::hlo

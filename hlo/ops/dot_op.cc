// dot: XLA's general contraction. Result dims are the batch dims, then the
// lhs free dims, then the rhs free dims (each in operand order). The result
// element type is the declared one, so mixed precision (bf16 x bf16 -> f32)
// is expressed by the instruction's shape.
#include <vector>

#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/eval/complex_values.h"
#include "hlo/ops/dot_dimension_numbers.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

std::vector<int64_t> FreeDims(int64_t rank, const IntList& batch, const IntList& contracting,
                              const IntList& other = {}) {
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (int64_t d : batch) used[static_cast<size_t>(d)] = true;
  for (int64_t d : contracting) used[static_cast<size_t>(d)] = true;
  for (int64_t d : other) used[static_cast<size_t>(d)] = true;
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!used[static_cast<size_t>(d)]) free.push_back(d);
  }
  return free;
}

absl::Status ExpectTwoOperands(const Instruction& inst) {
  if (inst.operand_count() != 2) {
    return OpError(inst, "expects 2 operands, got ", inst.operand_count());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DotDims> GetDotDims(const Instruction& inst, const IntList& rhs_other) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  DotDims dd{inst.attr_ints("lhs_batch_dims"),
             inst.attr_ints("lhs_contracting_dims"),
             inst.attr_ints("rhs_batch_dims"),
             inst.attr_ints("rhs_contracting_dims"),
             {},
             {}};
  if (dd.lhs_batch.size() != dd.rhs_batch.size()) {
    return OpError(inst, "has ", dd.lhs_batch.size(), " lhs batch dims but ", dd.rhs_batch.size(),
                   " rhs batch dims");
  }
  if (dd.lhs_contracting.size() != dd.rhs_contracting.size()) {
    return OpError(inst, "has ", dd.lhs_contracting.size(), " lhs contracting dims but ",
                   dd.rhs_contracting.size(), " rhs contracting dims");
  }
  // A dim may be a batch dim or a contracting dim, not both.
  IntList lhs_all = dd.lhs_batch;
  lhs_all.insert(lhs_all.end(), dd.lhs_contracting.begin(), dd.lhs_contracting.end());
  IntList rhs_all = dd.rhs_batch;
  rhs_all.insert(rhs_all.end(), dd.rhs_contracting.begin(), dd.rhs_contracting.end());
  rhs_all.insert(rhs_all.end(), rhs_other.begin(), rhs_other.end());
  RETURN_IF_ERROR(ExpectValidDims(inst, lhs_all, lhs.rank(), "lhs batch/contracting"));
  RETURN_IF_ERROR(ExpectValidDims(inst, rhs_all, rhs.rank(),
                                  rhs_other.empty() ? "rhs batch/contracting"
                                                    : "rhs batch/contracting/group"));
  for (size_t i = 0; i < dd.lhs_batch.size(); ++i) {
    int64_t l = lhs.dim(dd.lhs_batch[i]), r = rhs.dim(dd.rhs_batch[i]);
    if (l != r) {
      return OpError(inst, "batch dim ", dd.lhs_batch[i], " has size ", l, " on lhs but ", r,
                     " on rhs (rhs dim ", dd.rhs_batch[i], ")");
    }
  }
  for (size_t i = 0; i < dd.lhs_contracting.size(); ++i) {
    int64_t l = lhs.dim(dd.lhs_contracting[i]), r = rhs.dim(dd.rhs_contracting[i]);
    if (l != r) {
      return OpError(inst, "contracting dim ", dd.lhs_contracting[i], " has size ", l,
                     " on lhs but ", r, " on rhs (rhs dim ", dd.rhs_contracting[i], ")");
    }
  }
  dd.lhs_free = FreeDims(lhs.rank(), dd.lhs_batch, dd.lhs_contracting);
  dd.rhs_free = FreeDims(rhs.rank(), dd.rhs_batch, dd.rhs_contracting, rhs_other);
  return dd;
}

namespace {

absl::StatusOr<Shape> InferDot(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTwoOperands(inst));
  ASSIGN_OR_RETURN(DotDims dd, GetDotDims(inst));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  std::vector<int64_t> dims;
  for (int64_t d : dd.lhs_batch) dims.push_back(lhs.dim(d));
  for (int64_t d : dd.lhs_free) dims.push_back(lhs.dim(d));
  for (int64_t d : dd.rhs_free) dims.push_back(rhs.dim(d));
  // The element type cannot be inferred under mixed precision: take the
  // declared one (the lhs type when the instruction has no shape yet).
  PrimitiveType type = inst.shape().is_array() ? inst.shape().type() : lhs.type();
  Shape result(type, std::move(dims));
  RETURN_IF_ERROR(ValidateShape(result)) << " (dot result, in " << inst.Describe() << ")";
  return result;
}

// Operand values converted to the accumulation type.
template <typename Acc>
std::vector<Acc> ToAccumulator(const Literal& literal) {
  std::vector<Acc> values(static_cast<size_t>(literal.num_elements()));
  for (int64_t i = 0; i < literal.num_elements(); ++i) {
    if constexpr (std::is_same_v<Acc, double>) {
      values[static_cast<size_t>(i)] = literal.GetAsDouble(i);
    } else if constexpr (std::is_same_v<Acc, Complex128>) {
      values[static_cast<size_t>(i)] = GetComplex(literal, i);
    } else {
      values[static_cast<size_t>(i)] = static_cast<uint64_t>(literal.GetAsInt64(i));
    }
  }
  return values;
}

// Accumulates in Acc (double for float results, complex<double> for complex
// ones, uint64 -- wrapping -- for integer results) and rounds once when
// storing.
template <typename Acc>
Literal ComputeDot(const Shape& result_shape, const Literal& lhs_value, const Literal& rhs_value,
                   const DotDims& dd) {
  const Shape& lhs = lhs_value.shape();
  const Shape& rhs = rhs_value.shape();
  std::vector<Acc> l = ToAccumulator<Acc>(lhs_value);
  std::vector<Acc> r = ToAccumulator<Acc>(rhs_value);
  std::vector<int64_t> ls = RowMajorStrides(lhs.dims());
  std::vector<int64_t> rs = RowMajorStrides(rhs.dims());

  // Offsets of every contraction position in each operand.
  std::vector<int64_t> k_dims;
  for (int64_t d : dd.lhs_contracting) k_dims.push_back(lhs.dim(d));
  std::vector<int64_t> lk, rk;
  ForEachIndex(k_dims, [&](const std::vector<int64_t>& k) {
    int64_t lo = 0, ro = 0;
    for (size_t i = 0; i < k.size(); ++i) {
      lo += k[i] * ls[static_cast<size_t>(dd.lhs_contracting[i])];
      ro += k[i] * rs[static_cast<size_t>(dd.rhs_contracting[i])];
    }
    lk.push_back(lo);
    rk.push_back(ro);
  });

  Literal result(result_shape);
  size_t nb = dd.lhs_batch.size(), nl = dd.lhs_free.size();
  int64_t out_index = 0;
  ForEachIndex(result_shape.dims(), [&](const std::vector<int64_t>& out) {
    int64_t lbase = 0, rbase = 0;
    for (size_t i = 0; i < nb; ++i) {
      lbase += out[i] * ls[static_cast<size_t>(dd.lhs_batch[i])];
      rbase += out[i] * rs[static_cast<size_t>(dd.rhs_batch[i])];
    }
    for (size_t i = 0; i < nl; ++i) lbase += out[nb + i] * ls[static_cast<size_t>(dd.lhs_free[i])];
    for (size_t i = 0; i < dd.rhs_free.size(); ++i) {
      rbase += out[nb + nl + i] * rs[static_cast<size_t>(dd.rhs_free[i])];
    }
    Acc sum = 0;
    for (size_t k = 0; k < lk.size(); ++k) {
      sum += l[static_cast<size_t>(lbase + lk[k])] * r[static_cast<size_t>(rbase + rk[k])];
    }
    if constexpr (std::is_same_v<Acc, double>) {
      result.SetFromDouble(out_index, sum);
    } else if constexpr (std::is_same_v<Acc, Complex128>) {
      SetComplex(result, out_index, sum);
    } else {
      result.SetFromInt64(out_index, static_cast<int64_t>(sum));
    }
    ++out_index;
  });
  return result;
}

absl::StatusOr<Literal> EvaluateDot(const Instruction& inst,
                                    absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(ExpectTwoOperands(inst));
  ASSIGN_OR_RETURN(DotDims dd, GetDotDims(inst));
  ASSIGN_OR_RETURN(Shape result_shape, InferDot(inst));
  if (IsFloatingPoint(result_shape.type())) {
    return ComputeDot<double>(result_shape, *operands[0], *operands[1], dd);
  }
  if (IsComplex(result_shape.type())) {
    return ComputeDot<Complex128>(result_shape, *operands[0], *operands[1], dd);
  }
  return ComputeDot<uint64_t>(result_shape, *operands[0], *operands[1], dd);
}

}  // namespace

void RegisterDotOp(OpRegistry& registry) {
  {
    OpDef def;
    def.opcode = Opcode::kDot;
    def.min_operands = 2;
    def.max_operands = 2;
    def.attributes = {{"lhs_batch_dims", AttrKind::kIntList},
                      {"lhs_contracting_dims", AttrKind::kIntList},
                      {"rhs_batch_dims", AttrKind::kIntList},
                      {"rhs_contracting_dims", AttrKind::kIntList}};
    def.infer_shape = InferDot;
    def.evaluate = EvaluateDot;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo

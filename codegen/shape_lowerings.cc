// Halide lowerings of the data-movement ops: broadcast, reshape, transpose,
// slice, pad, concatenate, reverse, dynamic-slice, dynamic-update-slice.
// All index arithmetic is static (shapes are known when the kernel is
// built), so each op is a pure index map; clamped where a select reads an
// operand outside the region it keeps.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"
#include "codegen/reshape_runs.h"
#include "hlo/ir/shape.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

Lowered Pure(const hlo::Instruction& inst, const std::vector<Halide::Var>& vars, const Expr& v) {
  Lowered out;
  out.func = Halide::Func(HalideName(hlo::OpcodeName(inst.opcode()), inst));
  Define(out.func, vars, v);
  return out;
}

absl::StatusOr<Lowered> LowerBroadcast(const hlo::Instruction& inst,
                                       absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  const hlo::IntList& dims = inst.attr_ints("dimensions");
  std::vector<Expr> index;
  for (size_t i = 0; i < dims.size(); ++i) {
    // A size-1 operand dim broadcast to a larger one reads index 0.
    if (ops[0].shape.dim(static_cast<int64_t>(i)) == 1) {
      index.push_back(0);
    } else {
      index.push_back(vars[static_cast<size_t>(dims[i])]);
    }
  }
  return Pure(inst, vars, Call(ops[0].func, index));
}

absl::StatusOr<Lowered> LowerReshape(const hlo::Instruction& inst,
                                     absl::Span<const LoweredValue> ops) {
  const std::vector<int64_t>& out_dims = inst.shape().dims();
  const std::vector<int64_t>& in_dims = ops[0].shape.dims();
  std::vector<Halide::Var> vars = HloVars(static_cast<int64_t>(out_dims.size()));
  std::vector<Expr> index(in_dims.size(), Expr(0));
  // An empty array has nothing to read; its index map only has to be valid.
  if (inst.shape().num_elements() == 0) return Pure(inst, vars, Call(ops[0].func, index));
  for (const ReshapeRun& run : ReshapeRuns(in_dims, out_dims)) {
    if (run.in.size() == 1 && run.out.size() == 1) {
      index[run.in[0]] = vars[run.out[0]];
      continue;
    }
    Expr flat = 0;
    for (size_t d : run.out) flat = flat * static_cast<int>(out_dims[d]) + vars[d];
    int64_t stride = 1;
    for (size_t k = run.in.size(); k-- > 0;) {
      const size_t dim = run.in[k];
      Expr q = stride == 1 ? flat : flat / static_cast<int>(stride);
      // The run's outermost dim needs no wrap-around.
      index[dim] = k == 0 ? q : Expr(q % static_cast<int>(in_dims[dim]));
      stride *= in_dims[dim];
    }
  }
  return Pure(inst, vars, Call(ops[0].func, index));
}

absl::StatusOr<Lowered> LowerTranspose(const hlo::Instruction& inst,
                                       absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  const hlo::IntList& perm = inst.attr_ints("dimensions");
  std::vector<Expr> index(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) index[static_cast<size_t>(perm[i])] = vars[i];
  return Pure(inst, vars, Call(ops[0].func, index));
}

absl::StatusOr<Lowered> LowerSlice(const hlo::Instruction& inst,
                                   absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  const hlo::IntListList& slice = inst.attr_int_lists("slice");
  std::vector<Expr> index;
  for (size_t i = 0; i < slice.size(); ++i) {
    int64_t start = slice[i][0], stride = slice[i].size() == 3 ? slice[i][2] : 1;
    index.push_back(static_cast<int>(start) + vars[i] * static_cast<int>(stride));
  }
  return Pure(inst, vars, Call(ops[0].func, index));
}

absl::StatusOr<Lowered> LowerPad(const hlo::Instruction& inst,
                                 absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  const hlo::IntListList& padding = inst.attr_int_lists("padding");
  std::vector<Expr> index;
  Expr inside = const_true();
  for (size_t i = 0; i < padding.size(); ++i) {
    const int64_t low = padding[i][0];
    const int64_t step = (padding[i].size() == 3 ? padding[i][2] : 0) + 1;
    const int64_t size = ops[0].shape.dim(static_cast<int64_t>(i));
    Expr p = vars[i] - static_cast<int>(low);
    Expr j = step == 1 ? p : p / static_cast<int>(step);
    Expr ok = p >= 0 && j < static_cast<int>(size);
    if (step != 1) ok = ok && (p % static_cast<int>(step)) == 0;
    inside = inside && ok;
    index.push_back(ClampIndex(j, size));
  }
  Expr value = ops[0].shape.num_elements() == 0
                   ? Call(ops[1].func, {})
                   : Halide::select(inside, Call(ops[0].func, index), Call(ops[1].func, {}));
  return Pure(inst, vars, value);
}

absl::StatusOr<Lowered> LowerConcatenate(const hlo::Instruction& inst,
                                         absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  const size_t axis = static_cast<size_t>(inst.attr_ints("dimensions")[0]);
  // Built back to front: the last non-empty operand is the fallback.
  Expr value;
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const LoweredValue& v : ops) {
    offsets.push_back(offset);
    offset += v.shape.dim(static_cast<int64_t>(axis));
  }
  for (size_t k = ops.size(); k-- > 0;) {
    const int64_t size = ops[k].shape.dim(static_cast<int64_t>(axis));
    if (size == 0) continue;
    std::vector<Expr> index = AsExprs(vars);
    index[axis] = ClampIndex(vars[axis] - static_cast<int>(offsets[k]), size);
    Expr read = Call(ops[k].func, index);
    if (!value.defined()) {
      value = read;
    } else {
      value = Halide::select(vars[axis] < static_cast<int>(offsets[k] + size), read, value);
    }
  }
  if (!value.defined()) value = make_zero(StorageType(inst.shape().type()));
  return Pure(inst, vars, value);
}

absl::StatusOr<Lowered> LowerReverse(const hlo::Instruction& inst,
                                     absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  std::vector<Expr> index = AsExprs(vars);
  for (int64_t d : inst.attr_ints("dimensions")) {
    index[static_cast<size_t>(d)] = static_cast<int>(inst.shape().dim(d) - 1) - vars[static_cast<size_t>(d)];
  }
  return Pure(inst, vars, Call(ops[0].func, index));
}

// Start index `k` of a dynamic op, clamped so a window of `window` fits.
Expr ClampedStart(const LoweredValue& start, int64_t dim, int64_t window) {
  Expr s = Halide::cast(Halide::Int(64), Call(start.func, {}));
  if (start.shape.type() == hlo::PrimitiveType::kU64) {
    // Values beyond int64 are still "large": clamp them high.
    s = Halide::select(Call(start.func, {}) > Halide::cast(Halide::UInt(64), Halide::Int(64).max()),
                       Halide::Int(64).max(), s);
  }
  return Halide::cast(Halide::Int(32), Halide::clamp(s, Halide::Expr(int64_t{0}),
                                                    Halide::Expr(int64_t{dim - window})));
}

absl::StatusOr<Lowered> LowerDynamicSlice(const hlo::Instruction& inst,
                                          absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  std::vector<Expr> index;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    Expr start = ClampedStart(ops[static_cast<size_t>(1 + d)], ops[0].shape.dim(d), inst.shape().dim(d));
    index.push_back(ClampIndex(vars[static_cast<size_t>(d)] + start, ops[0].shape.dim(d)));
  }
  return Pure(inst, vars, Call(ops[0].func, index));
}

absl::StatusOr<Lowered> LowerDynamicUpdateSlice(const hlo::Instruction& inst,
                                                absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  const hlo::Shape& update = ops[1].shape;
  std::vector<Expr> index;
  Expr inside = const_true();
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    Expr start = ClampedStart(ops[static_cast<size_t>(2 + d)], inst.shape().dim(d), update.dim(d));
    Expr j = vars[static_cast<size_t>(d)] - start;
    inside = inside && j >= 0 && j < static_cast<int>(update.dim(d));
    index.push_back(ClampIndex(j, update.dim(d)));
  }
  Expr base = Call(ops[0].func, AsExprs(vars));
  if (update.num_elements() == 0) return Pure(inst, vars, base);
  return Pure(inst, vars, Halide::select(inside, Call(ops[1].func, index), base));
}

}  // namespace

void RegisterShapeLowerings(LoweringTable& table) {
  using hlo::Opcode;
  table.Add(Opcode::kBroadcast, LowerBroadcast);
  table.Add(Opcode::kReshape, LowerReshape);
  table.Add(Opcode::kTranspose, LowerTranspose);
  table.Add(Opcode::kSlice, LowerSlice);
  table.Add(Opcode::kPad, LowerPad);
  table.Add(Opcode::kConcatenate, LowerConcatenate);
  table.Add(Opcode::kReverse, LowerReverse);
  table.Add(Opcode::kDynamicSlice, LowerDynamicSlice);
  table.Add(Opcode::kDynamicUpdateSlice, LowerDynamicUpdateSlice);
  // A broadcast reads its operand at computed indices, no arithmetic on the
  // values (a reshape's index arithmetic may divide: not marked).
  table.MarkCheap({Opcode::kBroadcast});
}

}  // namespace sharc::codegen

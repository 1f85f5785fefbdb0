// The MapReduce building blocks of DrJAX and FAX as first-class ops, so that a
// printed program (and its derivative) still shows where values are spread
// over groups and where they are combined:
//
//   mapreduce.broadcast(x)            x          -> [n, x...]   (n copies)
//   mapreduce.map(a, b), to_apply=f   [n, a...]  -> [n, f(...)] (f per group)
//   mapreduce.sum(x)                  [n, x...]  -> [x...]      (sum of groups)
//   mapreduce.mean(x)                 [n, x...]  -> [x...]      (sum / n)
//
// Every block names its `placement`: the mesh axis its n groups are spread
// over once spmd/mapreduce_lowering.h replaces the blocks by ordinary ops.
// A "placed" value is simply an array whose leading dimension is the n groups.
#include <vector>

#include "hlo/base/status_macros.h"
#include "hlo/eval/complex_values.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

constexpr bool kRequired = true;

// The shape of one group's slice of a placed value: the leading dim dropped.
absl::StatusOr<Shape> GroupSlice(const Instruction& inst, int64_t operand) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, operand));
  const Shape& shape = inst.operand(operand)->shape();
  if (shape.rank() == 0) {
    return OpError(inst, "operand ", operand, " is the non-partitioned value ", shape.ToString(),
                   "; a value placed at '", inst.attr_string("placement"),
                   "' has a leading dimension of one entry per group");
  }
  std::vector<int64_t> dims(shape.dims().begin() + 1, shape.dims().end());
  return Shape(shape.type(), std::move(dims));
}

// Prepends the group dimension to every leaf of `shape`.
Shape Placed(const Shape& shape, int64_t groups) {
  if (shape.is_tuple()) {
    std::vector<Shape> leaves;
    for (const Shape& element : shape.tuple_shapes()) leaves.push_back(Placed(element, groups));
    return Shape::Tuple(std::move(leaves));
  }
  std::vector<int64_t> dims = {groups};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(shape.type(), std::move(dims));
}

// Row-major: group g of a placed array is the contiguous block g.
void CopyGroup(const Literal& src, int64_t src_group, Literal& dst, int64_t dst_group,
               int64_t group_bytes) {
  if (group_bytes == 0) return;
  std::memcpy(dst.untyped_data() + dst_group * group_bytes,
              src.untyped_data() + src_group * group_bytes, static_cast<size_t>(group_bytes));
}

// ------------------------------------------------------------- broadcast --

absl::StatusOr<Shape> InferBroadcastToGroups(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& declared = inst.shape();
  // The group count only exists in the declared result; the rest must agree.
  if (!declared.is_array() || declared.rank() != operand.rank() + 1) {
    return OpError(inst, "must declare the ", operand.ToString(),
                   " operand with a leading group dimension, e.g. ",
                   Placed(operand, 3).ToString(), " for 3 groups; got ", declared.ToString());
  }
  Shape inferred = Placed(operand, declared.dim(0));
  RETURN_IF_ERROR(ExpectDeclared(inst, inferred));
  return inferred;
}

absl::StatusOr<Literal> EvaluateBroadcastToGroups(const Instruction& inst,
                                                  absl::Span<const Literal* const> operands,
                                                  EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferBroadcastToGroups(inst));
  Literal out(shape);
  const int64_t bytes = operands[0]->size_bytes();
  for (int64_t g = 0; g < shape.dim(0); ++g) CopyGroup(*operands[0], 0, out, g, bytes);
  return out;
}

// ------------------------------------------------------------------- map --

// Every operand is placed with the same number of groups; returns it.
absl::StatusOr<int64_t> CommonGroupCount(const Instruction& inst) {
  int64_t groups = -1;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    RETURN_IF_ERROR(GroupSlice(inst, i).status());
    const int64_t n = inst.operand(i)->shape().dim(0);
    if (groups >= 0 && n != groups) {
      return OpError(inst, "operand ", i, " has ", n, " groups but operand 0 has ", groups,
                     "; every operand must be placed over the same groups");
    }
    groups = n;
  }
  return groups;
}

std::vector<Shape> GroupSlices(const Instruction& inst) {
  std::vector<Shape> slices;
  for (int64_t i = 0; i < inst.operand_count(); ++i) slices.push_back(*GroupSlice(inst, i));
  return slices;
}

absl::StatusOr<Shape> InferMap(const Instruction& inst) {
  ASSIGN_OR_RETURN(int64_t groups, CommonGroupCount(inst));
  const Computation* f = inst.attr_computation("to_apply");
  if (f == nullptr || f->root() == nullptr) return OpError(inst, "needs a to_apply computation");
  const Shape& result = f->root()->shape();
  if (result.is_tuple()) {
    for (const Shape& leaf : result.tuple_shapes()) {
      if (!leaf.is_array()) {
        return OpError(inst, "to_apply must return an array or a flat tuple of arrays, got ",
                       result.ToString());
      }
    }
  }
  return Placed(result, groups);
}

absl::Status VerifyMap(const Instruction& inst) {
  RETURN_IF_ERROR(InferMap(inst).status());
  std::vector<Shape> slices = GroupSlices(inst);
  return ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply", slices,
                                    nullptr);
}

absl::StatusOr<Literal> EvaluateMap(const Instruction& inst,
                                    absl::Span<const Literal* const> operands, EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyMap(inst));
  ASSIGN_OR_RETURN(Shape shape, InferMap(inst));
  const int64_t groups = inst.operand(0)->shape().dim(0);
  std::vector<Shape> slices = GroupSlices(inst);
  Literal out = shape.is_tuple() ? Literal::Tuple({}) : Literal(shape);
  std::vector<Literal> leaves;
  if (shape.is_tuple()) {
    for (const Shape& leaf : shape.tuple_shapes()) leaves.emplace_back(leaf);
  }
  const Computation& f = *inst.attr_computation("to_apply");
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<Literal> args;
    std::vector<const Literal*> arg_ptrs;
    args.reserve(slices.size());
    for (size_t i = 0; i < slices.size(); ++i) {
      args.emplace_back(slices[i]);
      CopyGroup(*operands[i], g, args.back(), 0, args.back().size_bytes());
    }
    for (const Literal& arg : args) arg_ptrs.push_back(&arg);
    ASSIGN_OR_RETURN(Literal result, ctx.Call(f, arg_ptrs));
    if (shape.is_tuple()) {
      for (size_t leaf = 0; leaf < leaves.size(); ++leaf) {
        const Literal& part = result.element(static_cast<int64_t>(leaf));
        CopyGroup(part, 0, leaves[leaf], g, part.size_bytes());
      }
    } else {
      CopyGroup(result, 0, out, g, result.size_bytes());
    }
  }
  if (shape.is_tuple()) return Literal::Tuple(std::move(leaves));
  return out;
}

// ------------------------------------------------------------- sum, mean --

absl::StatusOr<Shape> InferGroupReduction(const Instruction& inst) {
  ASSIGN_OR_RETURN(Shape slice, GroupSlice(inst, 0));
  const PrimitiveType type = slice.type();
  if (type == PrimitiveType::kPred) {
    return OpError(inst, "cannot add pred values; convert them to a number type first");
  }
  if (inst.opcode() == Opcode::kMapReduceMean && !IsFloatingPoint(type) && !IsComplex(type)) {
    // DrJAX leaves integer means ill-defined (its result type disagrees with
    // its value); sharc asks for an explicit convert instead of guessing.
    return OpError(inst, "needs a floating-point or complex operand, got ",
                   inst.operand(0)->shape().ToString(),
                   "; convert it (e.g. to f32) before taking the mean");
  }
  return slice;
}

absl::StatusOr<Literal> EvaluateGroupReduction(const Instruction& inst,
                                               absl::Span<const Literal* const> operands,
                                               EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferGroupReduction(inst));
  const Literal& in = *operands[0];
  const int64_t groups = in.shape().dim(0);
  const int64_t per_group = shape.num_elements();
  Literal out(shape);  // zero-initialised: the additive identity
  // Groups are added in order 0..n-1, as the lowered reduce over the leading
  // dimension does on one device.
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t i = 0; i < per_group; ++i) {
      ApplyBinaryReducer(Opcode::kAdd, out, i, in, g * per_group + i);
    }
  }
  if (inst.opcode() == Opcode::kMapReduceMean) {
    for (int64_t i = 0; i < per_group; ++i) {
      if (IsComplex(out.shape().type())) {
        SetComplex(out, i, GetComplex(out, i) / static_cast<double>(groups));
      } else {
        out.SetFromDouble(i, out.GetAsDouble(i) / static_cast<double>(groups));
      }
    }
  }
  return out;
}

OpDef BlockDef(Opcode opcode, int max_operands) {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = 1;
  def.max_operands = max_operands;
  def.attributes = {{"placement", AttrKind::kEnum, kRequired}};
  return def;
}

}  // namespace

void RegisterMapReduceOps(OpRegistry& registry) {
  {
    OpDef def = BlockDef(Opcode::kMapReduceBroadcast, 1);
    def.infer_shape = InferBroadcastToGroups;
    def.evaluate = EvaluateBroadcastToGroups;
    registry.Register(std::move(def));
  }
  {
    OpDef def = BlockDef(Opcode::kMapReduceMap, -1);
    def.attributes.push_back({"to_apply", AttrKind::kComputation, kRequired});
    def.infer_shape = InferMap;
    def.verify = VerifyMap;
    def.evaluate = EvaluateMap;
    registry.Register(std::move(def));
  }
  for (Opcode opcode : {Opcode::kMapReduceSum, Opcode::kMapReduceMean}) {
    OpDef def = BlockDef(opcode, 1);
    def.infer_shape = InferGroupReduction;
    def.evaluate = EvaluateGroupReduction;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo

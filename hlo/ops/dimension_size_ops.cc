// get-dimension-size(x), dimensions={d} -> s32[]: the size of dim d.
// set-dimension-size(x, s32[] n), dimensions={d} -> x with dim d bounded
// dynamic (`f32[<=8]`): its size becomes n at run time.
//
// sharc keeps a bounded dynamic dim at its bound: it reads, verifies and
// partitions both ops, get-dimension-size of a static dim evaluates to the
// size, and anything that needs a run-time size says it cannot run (the
// whole bound would be computed with: a wrong answer).
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<int64_t> TheDimension(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const IntList& dims = inst.attr_ints("dimensions");
  const int64_t rank = inst.operand(0)->shape().rank();
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank) {
    return OpError(inst, "needs dimensions={d} naming one dim of the operand (rank ", rank, ")");
  }
  return dims[0];
}

absl::StatusOr<Shape> InferGetDimensionSize(const Instruction& inst) {
  RETURN_IF_ERROR(TheDimension(inst).status());
  return Shape::Scalar(PrimitiveType::kS32);
}

absl::StatusOr<Literal> EvaluateGetDimensionSize(const Instruction& inst,
                                                 absl::Span<const Literal* const> operands,
                                                 EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(int64_t d, TheDimension(inst));
  const Shape& x = inst.operand(0)->shape();
  if (x.is_dynamic_dim(d)) {
    return absl::UnimplementedError(absl::StrCat(
        "get-dimension-size of the dynamic dim ", d, " of ", x.ToString(),
        " cannot run: sharc keeps dynamic dims at their bound, in ", inst.Describe()));
  }
  return Literal::Scalar<int32_t>(static_cast<int32_t>(x.dim(d)));
}

absl::StatusOr<Shape> InferSetDimensionSize(const Instruction& inst) {
  ASSIGN_OR_RETURN(int64_t d, TheDimension(inst));
  const Shape& size = inst.operand(1)->shape();
  if (size != Shape::Scalar(PrimitiveType::kS32)) {
    return OpError(inst, "needs an s32[] size, got ", size.ToString());
  }
  Shape result = inst.operand(0)->shape();
  result.set_dynamic_dim(d, true);
  return result;
}

constexpr char kDynamicSize[] =
    "it sets a size known only at run time, and sharc keeps dynamic dims at their bound (it "
    "would compute with the whole bound)";

absl::StatusOr<Literal> CannotRun(const Instruction& inst, absl::Span<const Literal* const>,
                                  EvalContext&) {
  return absl::UnimplementedError(
      absl::StrCat(OpcodeName(inst.opcode()), " cannot run: ", kDynamicSize, ", in ",
                   inst.Describe()));
}

}  // namespace

void RegisterDimensionSizeOps(OpRegistry& registry) {
  {
    OpDef def;
    def.opcode = Opcode::kGetDimensionSize;
    def.min_operands = 1;
    def.max_operands = 1;
    def.attributes = {{"dimensions", AttrKind::kIntList, true}};
    def.infer_shape = InferGetDimensionSize;
    def.evaluate = EvaluateGetDimensionSize;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kSetDimensionSize;
    def.min_operands = 2;
    def.max_operands = 2;
    def.attributes = {{"dimensions", AttrKind::kIntList, true}};
    def.infer_shape = InferSetDimensionSize;
    def.evaluate = CannotRun;
    def.cannot_run = kDynamicSize;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo

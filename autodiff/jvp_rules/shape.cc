// JVP rules of the data-movement ops: all are linear in the data they move,
// so the tangent moves the same way; indices are residuals.
#include "autodiff/jvp_rules/linear_op.h"
#include "hlo/ir/computation.h"

namespace sharc::autodiff {
namespace {

// The scatter combiner keeps the op linear only when it adds or overwrites.
bool IsAddOrOverwrite(const Computation& combiner) {
  const Instruction* root = combiner.root();
  if (root == nullptr || combiner.num_parameters() != 2) return false;
  if (root == combiner.parameter(1)) return true;
  return root->opcode() == Opcode::kAdd &&
         ((root->operand(0) == combiner.parameter(0) && root->operand(1) == combiner.parameter(1)) ||
          (root->operand(0) == combiner.parameter(1) && root->operand(1) == combiner.parameter(0)));
}

}  // namespace

void RegisterShapeJvpRules(JvpRuleRegistry& r) {
  for (Opcode op : {Opcode::kBroadcast, Opcode::kReshape, Opcode::kTranspose, Opcode::kSlice,
                    Opcode::kReverse, Opcode::kConcatenate, Opcode::kPad}) {
    r.Register(op, LinearIn({}));
  }
  r.Register(Opcode::kDynamicSlice, LinearIn({}, /*residuals_from=*/1));
  r.Register(Opcode::kDynamicUpdateSlice, LinearIn({}, /*residuals_from=*/2));
  r.Register(Opcode::kGather, LinearIn({1}));
  r.Register(Opcode::kScatter, [](const Instruction& inst, const JvpArgs& args,
                                  JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    if (inst.operand_count() != 3 || !IsAddOrOverwrite(*inst.attr_computation("to_apply"))) {
      return absl::UnimplementedError(absl::StrCat(
          "scatter is differentiable only with one operand and an add or overwrite combiner, in ",
          inst.Describe()));
    }
    return SameOpOnTangents(inst, args, ctx, {true, false, true});
  });
}

}  // namespace sharc::autodiff

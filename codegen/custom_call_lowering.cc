// custom-call: the targets whose value is their operand (the sharding
// annotation, the propagation barriers and the partitioner's global-view ops,
// hlo/ops/identity_custom_calls.h) lower to a copy; any other target has no
// Halide implementation.
#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"
#include "hlo/ops/identity_custom_calls.h"

namespace sharc::codegen {
namespace {

bool IsIdentityTarget(const std::string& target) {
  return hlo::IsIdentityCustomCallTarget(target);
}

absl::Status Supports(const hlo::Instruction& inst) {
  const std::string& target = inst.attr_string("custom_call_target");
  if (IsIdentityTarget(target) && inst.operand_count() == 1) return absl::OkStatus();
  return LoweringError(inst, absl::StrCat("custom-call target \"", target,
                                          "\" has no Halide implementation"));
}

absl::StatusOr<Lowered> LowerIdentity(const hlo::Instruction& inst,
                                      absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  Lowered out;
  out.func = Halide::Func(HalideName("custom_call", inst));
  Define(out.func, vars, Call(ops[0].func, AsExprs(vars)));
  return out;
}

}  // namespace

void RegisterCustomCallLowering(LoweringTable& table) {
  table.Add(hlo::Opcode::kCustomCall, LowerIdentity, Supports);
}

}  // namespace sharc::codegen

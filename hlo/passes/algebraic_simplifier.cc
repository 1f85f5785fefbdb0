#include "hlo/passes/algebraic_simplifier.h"

#include <cmath>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {
namespace {

// The one value every element of `inst` has, when `inst` is a constant
// splat or a broadcast of a scalar constant.
struct Splat {
  bool is_float = false;
  double f = 0;
  int64_t i = 0;
};

std::optional<Splat> SplatValue(const Instruction& inst) {
  const Instruction* source = &inst;
  if (inst.opcode() == Opcode::kBroadcast && inst.operand(0)->shape().is_scalar()) {
    source = inst.operand(0);
  }
  if (source->opcode() != Opcode::kConstant || !source->shape().is_array() ||
      source->shape().num_elements() == 0) {
    return std::nullopt;
  }
  const PrimitiveType type = source->shape().type();
  if (IsComplex(type) || !IsRunnableType(type)) return std::nullopt;
  const Literal& literal = source->literal();
  Splat splat{IsFloatingPoint(type), literal.GetAsDouble(0), literal.GetAsInt64(0)};
  for (int64_t i = 1; i < literal.num_elements(); ++i) {
    const bool same = splat.is_float
                          ? std::signbit(literal.GetAsDouble(i)) == std::signbit(splat.f) &&
                                literal.GetAsDouble(i) == splat.f
                          : literal.GetAsInt64(i) == splat.i;
    if (!same) return std::nullopt;
  }
  return splat;
}

enum class Zero { kPositive, kNegative, kAny };

bool IsZero(const Instruction& inst, Zero which) {
  std::optional<Splat> v = SplatValue(inst);
  if (!v) return false;
  if (!v->is_float) return v->i == 0;
  if (v->f != 0.0) return false;
  return which == Zero::kAny || std::signbit(v->f) == (which == Zero::kNegative);
}

bool IsOne(const Instruction& inst) {
  std::optional<Splat> v = SplatValue(inst);
  if (!v) return false;
  return v->is_float ? v->f == 1.0 : v->i == 1;
}

bool IsFloat(const Instruction& inst) { return IsFloatingPoint(inst.shape().type()); }

// The operand a rewrite may look through: one no sharding pins.
Instruction* Through(Instruction& inst, Opcode opcode) {
  Instruction* operand = inst.operand(0);
  if (operand->opcode() != opcode || operand->has_sharding()) return nullptr;
  return operand;
}

// A rule returns the value that replaces `inst`, `&inst` after rewriting
// it in place, or nullptr when it does not apply.
using Rule = Instruction* (*)(Instruction& inst);

Instruction* SimplifyAdd(Instruction& inst) {
  const Zero zero = IsFloat(inst) ? Zero::kNegative : Zero::kAny;
  if (IsZero(*inst.operand(1), zero)) return inst.operand(0);
  if (IsZero(*inst.operand(0), zero)) return inst.operand(1);
  return nullptr;
}

Instruction* SimplifySubtract(Instruction& inst) {
  return IsZero(*inst.operand(1), IsFloat(inst) ? Zero::kPositive : Zero::kAny) ? inst.operand(0)
                                                                                 : nullptr;
}

Instruction* SimplifyMultiply(Instruction& inst) {
  if (IsOne(*inst.operand(1))) return inst.operand(0);
  if (IsOne(*inst.operand(0))) return inst.operand(1);
  return nullptr;
}

Instruction* SimplifyDivide(Instruction& inst) {
  return IsOne(*inst.operand(1)) ? inst.operand(0) : nullptr;
}

Instruction* SimplifyNegate(Instruction& inst) {
  Instruction* inner = Through(inst, Opcode::kNegate);
  return inner != nullptr ? inner->operand(0) : nullptr;
}

// Ops that are the identity when the result has the operand's shape.
Instruction* SameShapeIsIdentity(Instruction& inst) {
  return inst.shape() == inst.operand(0)->shape() ? inst.operand(0) : nullptr;
}

Instruction* SimplifyReshape(Instruction& inst) {
  if (Instruction* inner = Through(inst, Opcode::kReshape)) {
    inst.ReplaceOperand(0, inner->operand(0));
    return &inst;
  }
  return SameShapeIsIdentity(inst);
}

bool IsIdentityPermutation(const IntList& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

Instruction* SimplifyTranspose(Instruction& inst) {
  const IntList& outer = inst.attr_ints("dimensions");
  if (IsIdentityPermutation(outer)) return inst.operand(0);
  Instruction* inner = Through(inst, Opcode::kTranspose);
  if (inner == nullptr) return nullptr;
  // Result dim i is inner's dim outer[i], which is x's dim inner[outer[i]].
  const IntList& first = inner->attr_ints("dimensions");
  IntList composed;
  for (int64_t d : outer) composed.push_back(first[static_cast<size_t>(d)]);
  inst.ReplaceOperand(0, inner->operand(0));
  inst.set_attr("dimensions", composed);
  return &inst;
}

Instruction* SimplifyBroadcast(Instruction& inst) {
  if (IsIdentityPermutation(inst.attr_ints("dimensions"))) {
    if (Instruction* same = SameShapeIsIdentity(inst)) return same;
  }
  Instruction* inner = Through(inst, Opcode::kBroadcast);
  if (inner == nullptr) return nullptr;
  // x's dim i is inner's dim first[i], which is the result's dim outer[first[i]].
  const IntList& outer = inst.attr_ints("dimensions");
  IntList composed;
  for (int64_t d : inner->attr_ints("dimensions")) composed.push_back(outer[static_cast<size_t>(d)]);
  inst.ReplaceOperand(0, inner->operand(0));
  inst.set_attr("dimensions", composed);
  return &inst;
}

Instruction* SimplifyConcatenate(Instruction& inst) {
  return inst.operand_count() == 1 ? inst.operand(0) : nullptr;
}

Rule RuleFor(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: return SimplifyAdd;
    case Opcode::kSubtract: return SimplifySubtract;
    case Opcode::kMultiply: return SimplifyMultiply;
    case Opcode::kDivide: return SimplifyDivide;
    case Opcode::kNegate: return SimplifyNegate;
    case Opcode::kReshape: return SimplifyReshape;
    case Opcode::kTranspose: return SimplifyTranspose;
    case Opcode::kBroadcast: return SimplifyBroadcast;
    // A convert to its own type, a slice of everything (its result shape
    // equals the operand's only with start 0 and stride 1).
    case Opcode::kConvert: return SameShapeIsIdentity;
    case Opcode::kSlice: return SameShapeIsIdentity;
    case Opcode::kConcatenate: return SimplifyConcatenate;
    default: return nullptr;
  }
}

bool Removable(const Computation& computation, const Instruction& inst) {
  const OpTraits& traits = GetOpDef(inst.opcode()).traits;
  return inst.users().empty() && &inst != computation.root() && !inst.has_sharding() &&
         inst.opcode() != Opcode::kParameter && inst.opcode() != Opcode::kCustomCall &&
         !traits.side_effecting && !traits.collective;
}

// Removes what the rewrites left unused (and what that leaves unused),
// but nothing that was dead before: that is dead-code elimination's call.
void RemoveLeftovers(Computation& computation, absl::flat_hash_set<Instruction*>& maybe_dead) {
  std::vector<Instruction*> order = computation.instructions();
  // Users come before their operands from the back, so one sweep does.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* inst = *it;
    if (!maybe_dead.contains(inst) || !Removable(computation, *inst)) continue;
    for (Instruction* operand : inst->operands()) maybe_dead.insert(operand);
    (void)computation.RemoveInstruction(inst);  // cannot fail: unused, not the root
  }
}

bool SimplifyOnce(Computation& computation) {
  bool changed = false;
  absl::flat_hash_set<Instruction*> maybe_dead;
  for (Instruction* inst : computation.instructions()) {
    Rule rule = RuleFor(inst->opcode());
    if (rule == nullptr || inst->operand_count() == 0) continue;
    const std::vector<Instruction*> operands = inst->operands();
    Instruction* replacement = rule(*inst);
    if (replacement == nullptr) continue;
    if (replacement != inst) {
      // A value the user pinned keeps its layout: only a value with the
      // same sharding may stand in for it.
      if (inst->has_sharding() && replacement->sharding() != inst->sharding()) continue;
      if (replacement->shape() != inst->shape()) continue;
      inst->ReplaceAllUsesWith(replacement);
      maybe_dead.insert(inst);
    }
    changed = true;
    maybe_dead.insert(operands.begin(), operands.end());
  }
  RemoveLeftovers(computation, maybe_dead);
  return changed;
}

}  // namespace

bool SimplifyAlgebra(Computation& computation) {
  bool any = false;
  // Each sweep visits operands before users; a rewrite that exposes another
  // to an earlier instruction needs one more sweep. Bounded for safety.
  for (int sweep = 0; sweep < 16 && SimplifyOnce(computation); ++sweep) any = true;
  return any;
}

absl::StatusOr<bool> AlgebraicSimplifier::Run(Module& module) {
  bool changed = false;
  for (Computation* comp : module.computations()) changed |= SimplifyAlgebra(*comp);
  return changed;
}

}  // namespace sharc::hlo

// Moves flattened dots' result reshapes below elementwise ops (see
// gemm_result_reshapes.h).
#include "codegen/gemm_result_reshapes.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/reshape_runs.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/fresh_name.h"
#include "hlo/ops/op_def.h"

namespace sharc::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// For each dim of `to`, the dim of `from` it is when a row-major reshape
// from `from` to `to` keeps it whole (a run of one dim on each side,
// reshape_runs.h), else -1. [2048,1024] -> [16,128,1024] keeps dim 2 (as
// dim 1) and splits dim 0.
std::vector<int64_t> KeptDims(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  std::vector<int64_t> kept(to.size(), -1);
  for (const ReshapeRun& run : ReshapeRuns(from, to)) {
    if (run.in.size() == 1 && run.out.size() == 1) kept[run.out[0]] = static_cast<int64_t>(run.in[0]);
  }
  return kept;
}

class Sinker {
 public:
  explicit Sinker(hlo::Computation& comp) : comp_(comp) {}

  int64_t Run() {
    int64_t moved = 0;
    for (Instruction* inst : comp_.instructions()) {
      if (inst->opcode() == Opcode::kDot) sources_.insert(inst);
    }
    // In definition order, so that an op's readers come after it has moved.
    for (Instruction* inst : comp_.instructions()) moved += Sink(inst) ? 1 : 0;
    if (moved > 0) FoldReshapesOfMovedOps();
    return moved;
  }

 private:
  // The source of `operand` when it is a reshape from `flat` dims.
  static Instruction* ReshapedFrom(Instruction* operand, const std::vector<int64_t>& flat) {
    if (operand->opcode() != Opcode::kReshape) return nullptr;
    Instruction* source = operand->operand(0);
    return source->shape().dims() == flat ? source : nullptr;
  }

  bool Sink(Instruction* op) {
    if (!hlo::GetOpDef(op->opcode()).traits.elementwise || !op->shape().is_array() ||
        op->has_sharding() || op->shape().num_elements() == 0 || op->operand_count() == 0) {
      return false;
    }
    const std::vector<int64_t> dims = op->shape().dims();
    // The flat shape: that of a dot (or a moved op) one operand reshapes.
    std::optional<std::vector<int64_t>> flat;
    for (Instruction* operand : op->operands()) {
      if (operand->shape().dims() != dims) return false;  // clamp's scalar bounds
      if (operand->opcode() == Opcode::kReshape && sources_.contains(operand->operand(0)) &&
          operand->operand(0)->shape().dims() != dims) {
        flat = operand->operand(0)->shape().dims();
      }
    }
    if (!flat.has_value()) return false;
    const std::vector<int64_t> kept = KeptDims(*flat, dims);
    for (Instruction* operand : op->operands()) {
      if (operand->opcode() != Opcode::kBroadcast || ReshapedFrom(operand, *flat) != nullptr) continue;
      for (int64_t d : operand->attr_ints("dimensions")) {
        if (kept[static_cast<size_t>(d)] < 0) return false;
      }
    }
    std::vector<Instruction*> operands;
    for (Instruction* operand : op->operands()) operands.push_back(FlatOperand(operand, *flat, kept, op));
    const hlo::Shape flat_shape(op->shape().type(), *flat);
    auto moved = Instruction::Create(op->opcode(), hlo::FreshName(comp_, absl::StrCat(op->name(), ".gemm")),
                                     flat_shape, operands);
    for (const hlo::Attribute& a : op->attributes()) moved->set_attr(a.name, a.value);
    Instruction* flat_op = Add(std::move(moved), op);
    sources_.insert(flat_op);
    Instruction* back =
        Add(Instruction::Create(Opcode::kReshape, hlo::FreshName(comp_, op->name() + ".result"),
                                op->shape(), {flat_op}),
            op);
    op->ReplaceAllUsesWith(back);
    const std::string name = op->name();
    // Each once: an op may read one reshape twice (multiply(d, d)).
    std::vector<Instruction*> old_operands;
    for (Instruction* operand : op->operands()) {
      if (std::find(old_operands.begin(), old_operands.end(), operand) == old_operands.end()) {
        old_operands.push_back(operand);
      }
    }
    if (!comp_.RemoveInstruction(op).ok()) return false;  // it has no users left
    back->set_name(name);
    // The reshapes and broadcasts only `op` read: left in place, a dot's
    // reshape would still read it, keeping the dot out of the epilogue's
    // kernel.
    for (Instruction* operand : old_operands) {
      const Opcode code = operand->opcode();
      if ((code == Opcode::kReshape || code == Opcode::kBroadcast) && operand->users().empty() &&
          operand != comp_.root()) {
        if (!comp_.RemoveInstruction(operand).ok()) return false;
      }
    }
    return true;
  }

  // A reshape of a moved op's reshape (the next dot's 2-D view of it) reads
  // the moved op itself: left as two reshapes, the last kernel of the chain
  // would end in a reshape, which keeps its dot out of it.
  void FoldReshapesOfMovedOps() {
    for (Instruction* inst : comp_.instructions()) {
      if (inst->opcode() != Opcode::kReshape || inst->operand(0)->opcode() != Opcode::kReshape ||
          !sources_.contains(inst->operand(0)->operand(0))) {
        continue;
      }
      Instruction* between = inst->operand(0);
      Instruction* source = between->operand(0);
      if (source->shape().dims() != inst->shape().dims()) {
        inst->ReplaceOperand(0, source);
      } else if (inst != comp_.root()) {
        inst->ReplaceAllUsesWith(source);
        if (!comp_.RemoveInstruction(inst).ok()) continue;
      } else {
        continue;
      }
      if (between->users().empty() && between != comp_.root()) {
        (void)comp_.RemoveInstruction(between);
      }
    }
  }

  // `operand` of `op` in the flat shape.
  Instruction* FlatOperand(Instruction* operand, const std::vector<int64_t>& flat,
                           const std::vector<int64_t>& kept, Instruction* op) {
    if (Instruction* source = ReshapedFrom(operand, flat)) return source;
    const hlo::Shape shape(operand->shape().type(), flat);
    if (operand->opcode() == Opcode::kBroadcast) {
      hlo::IntList dims;
      for (int64_t d : operand->attr_ints("dimensions")) dims.push_back(kept[static_cast<size_t>(d)]);
      auto broadcast = Instruction::Create(
          Opcode::kBroadcast, hlo::FreshName(comp_, absl::StrCat(operand->name(), ".gemm")), shape,
          {operand->operand(0)});
      broadcast->set_attr("dimensions", dims);
      return Add(std::move(broadcast), op);
    }
    // A reshape of a reshape reads the first one's source.
    Instruction* source = operand->opcode() == Opcode::kReshape ? operand->operand(0) : operand;
    return Add(Instruction::Create(Opcode::kReshape,
                                   hlo::FreshName(comp_, absl::StrCat(operand->name(), ".gemm")),
                                   shape, {source}),
               op);
  }

  Instruction* Add(std::unique_ptr<Instruction> inst, Instruction* before) {
    inst->set_location(before->location());
    inst->mutable_metadata() = before->metadata();
    return comp_.AddInstructionBefore(std::move(inst), before);
  }

  hlo::Computation& comp_;
  // Values whose reshapes move: dots, and the ops moved so far.
  absl::flat_hash_set<Instruction*> sources_;
};

}  // namespace

absl::StatusOr<int64_t> SinkGemmResultReshapes(hlo::Module& module) {
  int64_t moved = 0;
  for (hlo::Computation* comp : module.computations()) moved += Sinker(*comp).Run();
  return moved;
}

}  // namespace sharc::codegen

#include "runtime/interpreter_kernels.h"

#include <vector>

#include "hlo/base/status_macros.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"

namespace sharc::runtime {
namespace {

// What an op's evaluator may ask of a kernel: evaluating called computations
// (reducers, comparators). Kernels never communicate; the executable runs
// collectives and partition-id itself.
class KernelEvalContext final : public hlo::EvalContext {
 public:
  absl::StatusOr<hlo::Literal> Call(const hlo::Computation& computation,
                                    absl::Span<const hlo::Literal* const> args) override {
    if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
      return absl::InvalidArgumentError(absl::StrCat("computation '", computation.name(),
                                                     "' takes ", computation.num_parameters(),
                                                     " arguments, got ", args.size()));
    }
    absl::flat_hash_map<const hlo::Instruction*, hlo::Literal> values;
    std::vector<const hlo::Literal*> operands;
    for (const hlo::Instruction* inst : computation.instructions()) {
      if (inst->opcode() == hlo::Opcode::kParameter) {
        values[inst] = *args[static_cast<size_t>(inst->parameter_number())];
        continue;
      }
      operands.clear();
      for (const hlo::Instruction* op : inst->operands()) operands.push_back(&values.at(op));
      ASSIGN_OR_RETURN(hlo::Literal r,
                       hlo::GetOpDef(inst->opcode()).evaluate(*inst, operands, *this));
      values[inst] = std::move(r);
    }
    auto it = values.find(computation.root());
    if (it == values.end()) {
      return absl::InternalError(absl::StrCat("root of '", computation.name(), "' not evaluated"));
    }
    return std::move(it->second);
  }
  int64_t partition_id() const override { return 0; }
  int64_t num_partitions() const override { return 1; }
  absl::StatusOr<std::vector<hlo::Literal>> ExchangeWithAllDevices(const hlo::Instruction& inst,
                                                                   hlo::Literal) override {
    return absl::InternalError(absl::StrCat("collective ", inst.name(),
                                            " reached a kernel; the runtime runs collectives"));
  }
};

class InterpreterKernel final : public Kernel {
 public:
  explicit InterpreterKernel(const hlo::Instruction& instruction) : instruction_(instruction) {}

  absl::Status Run(absl::Span<const Buffer* const> inputs, Buffer* output) override {
    if (static_cast<int64_t>(inputs.size()) != instruction_.operand_count()) {
      return absl::InvalidArgumentError(absl::StrCat("kernel for ", instruction_.name(), " got ",
                                                     inputs.size(), " inputs, expected ",
                                                     instruction_.operand_count()));
    }
    std::vector<hlo::Literal> literals;
    literals.reserve(inputs.size());
    for (const Buffer* b : inputs) {
      ASSIGN_OR_RETURN(hlo::Literal l, b->ToLiteral());
      literals.push_back(std::move(l));
    }
    std::vector<const hlo::Literal*> operands;
    operands.reserve(literals.size());
    for (const hlo::Literal& l : literals) operands.push_back(&l);
    KernelEvalContext context;
    const hlo::OpDef& def = hlo::GetOpDef(instruction_.opcode());
    ASSIGN_OR_RETURN(hlo::Literal result, def.evaluate(instruction_, operands, context));
    return output->CopyFrom(result);
  }

 private:
  const hlo::Instruction& instruction_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> InterpreterKernelFactory::MakeKernel(
    const hlo::Instruction& instruction) {
  if (!hlo::HasOpDef(instruction.opcode())) {
    return absl::UnimplementedError(
        absl::StrCat("no definition for ", instruction.Describe()));
  }
  const hlo::OpDef& def = hlo::GetOpDef(instruction.opcode());
  if (def.traits.collective) {
    return absl::InvalidArgumentError(
        absl::StrCat("collectives are not kernels: ", instruction.Describe()));
  }
  if (!def.evaluate) {
    return absl::UnimplementedError(
        absl::StrCat("no reference evaluator for ", instruction.Describe()));
  }
  return std::make_unique<InterpreterKernel>(instruction);
}

}  // namespace sharc::runtime

// Reference kernels: each instruction evaluated with its OpDef::evaluate from
// hlo/, through hlo::Literal. Slow (it copies operands into literals) but it
// is the oracle codegen's kernels are tested against, and what the runtime
// runs until codegen lands.
#pragma once

#include "runtime/kernel.h"

namespace sharc::runtime {

class InterpreterKernelFactory final : public KernelFactory {
 public:
  absl::StatusOr<std::unique_ptr<Kernel>> MakeKernel(const hlo::Instruction& instruction) override;
};

}  // namespace sharc::runtime

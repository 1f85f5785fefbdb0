// The kernel interface: one compiled (or interpreted) computation step that
// reads input buffers and fills a preallocated output buffer. codegen/
// implements it with Halide pipelines; InterpreterKernelFactory
// (runtime/interpreter_kernels.h) is the reference implementation.
//
// Kernels are shared by every device of a mesh, so Run may be called from
// several device threads at once and must not keep per-call state.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/instruction.h"
#include "runtime/buffer.h"

namespace sharc::runtime {

class Kernel {
 public:
  virtual ~Kernel() = default;
  // `inputs` are the instruction's operands in order; `output` is allocated
  // with the instruction's result shape and must be fully written.
  virtual absl::Status Run(absl::Span<const Buffer* const> inputs, Buffer* output) = 0;
};

class KernelFactory {
 public:
  virtual ~KernelFactory() = default;
  // A kernel for one non-collective, non-control-flow instruction. The
  // instruction (and its module) outlive the kernel.
  virtual absl::StatusOr<std::unique_ptr<Kernel>> MakeKernel(
      const hlo::Instruction& instruction) = 0;
  // A kernel for a whole `call` (a fusion made by codegen/fusion.h): its
  // inputs are the call's operands, its output the called computation's
  // result. nullptr (the default) means the executable runs the call step by
  // step like any other call, so factories that do not fuse need not care.
  virtual absl::StatusOr<std::unique_ptr<Kernel>> MakeCallKernel(const hlo::Instruction& call) {
    return std::unique_ptr<Kernel>();
  }
};

}  // namespace sharc::runtime

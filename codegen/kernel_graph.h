// What one kernel computes, independent of Halide: its inputs (external
// values, in argument order), the instructions it evaluates, and the values
// it writes out. A kernel is either one instruction (its operands are the
// inputs) or a whole called computation (a fusion made by fusion.h: its
// parameters are the inputs, its root or root tuple the outputs).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/instruction.h"

namespace sharc::codegen {

struct KernelGraph {
  std::string name;                             // for messages and symbol names
  std::vector<const hlo::Instruction*> inputs;  // one per kernel argument
  std::vector<const hlo::Instruction*> body;    // in definition order
  std::vector<const hlo::Instruction*> outputs;
  // For each output, -1 if it is the instruction's array value, else which
  // element of its tuple value (a variadic reduce yields a tuple; it is
  // always a kernel's root, as get-tuple-element is the runtime's).
  std::vector<int64_t> output_elements;
  bool tuple_output = false;  // the kernel's output buffer is a tuple of `outputs`
};

// The array shape written by output `k` of `graph`.
const hlo::Shape& OutputShape(const KernelGraph& graph, size_t k);
// -1 or the tuple element output `k` takes (see KernelGraph).
int64_t OutputElement(const KernelGraph& graph, size_t k);

absl::StatusOr<KernelGraph> GraphForInstruction(const hlo::Instruction& instruction);
absl::StatusOr<KernelGraph> GraphForComputation(const hlo::Computation& computation);

// OK if every body instruction has a Halide lowering; otherwise the reason of
// the first that has none, naming it.
absl::Status CheckLowerable(const KernelGraph& graph);
// OK if `instruction` alone could be a Halide kernel.
absl::Status CheckLowerable(const hlo::Instruction& instruction);

// Whether the lowering table has a row for `opcode`, and the reason an op
// has no lowering ("" when it has one). For tests and tools; the table itself
// (codegen/lowering.h) needs Halide.h.
bool HasLoweringRule(hlo::Opcode opcode);
std::string UnsupportedReason(hlo::Opcode opcode);
// Whether the table marks `opcode` compute-bound (LoweringRule::compute_bound).
bool IsComputeBoundOp(hlo::Opcode opcode);

// Canonical text of the kernel: instruction names replaced by their position,
// called computations spelled out. Two kernels with equal text compute the
// same thing, so it is the compile cache's key (with the target).
std::string CanonicalText(const KernelGraph& graph);

}  // namespace sharc::codegen

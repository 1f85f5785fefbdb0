// The Halide backend's kernel factory: every kernel instruction, and every
// fusion `call` (fusion.h), becomes a compiled Halide kernel from the
// process-wide KernelCompiler (one compile per kernel, shared by all devices
// and cached in memory and on disk).
#pragma once

#include <memory>

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "codegen/kernel_graph.h"
#include "hlo/ir/module.h"
#include "runtime/kernel.h"

namespace sharc::codegen {

// The backend attribute fusion.h puts on the calls it makes.
inline constexpr const char* kFusionBackendConfig = "sharc.fusion";

struct PrecompileOptions {
  int threads = 2;              // kernels compiled at once
  bool show_progress = false;   // "compiled 3/10 kernels" on stderr
  // Instructions Halide cannot lower but the reference interpreter can run
  // (InterpretedByFallback) are left to the interpreter's kernel, one
  // instruction each, instead of failing: the default backend's mixed mode.
  bool interpret_unlowerable = false;
};

// True for an instruction outside any fusion that Halide cannot lower but
// the reference interpreter can evaluate (a sort, an FFT, a reduce whose
// reducer branches): the default backend runs it on the interpreter's
// kernel between Halide kernels.
bool InterpretedByFallback(const hlo::Instruction& instruction);

class HalideKernelFactory final : public runtime::KernelFactory {
 public:
  absl::StatusOr<std::unique_ptr<runtime::Kernel>> MakeKernel(
      const hlo::Instruction& instruction) override;
  absl::StatusOr<std::unique_ptr<runtime::Kernel>> MakeCallKernel(
      const hlo::Instruction& call) override;
};

// Compiles every kernel `module` needs (fusions and single instructions,
// deduplicated) on `options.threads` threads, so Executable::Create then
// only finds them in the cache.
absl::Status PrecompileKernels(const hlo::Module& module, const PrecompileOptions& options = {});

// OK if the Halide backend can run every instruction of `module` (through
// all computations the entry reaches; with `interpret_unlowerable`, except
// those InterpretedByFallback); otherwise the reason for the first that it
// cannot, naming it.
absl::Status CheckHalideSupports(const hlo::Module& module, bool interpret_unlowerable = false);

// The instructions of `module` that the mixed mode leaves to the
// interpreter (InterpretedByFallback), in schedule order.
std::vector<const hlo::Instruction*> InterpretedInstructions(const hlo::Module& module);

// What `sharc run --backend halide` does to a per-device module before
// building its Executable: check support (an error names the first op the
// backend cannot run), fuse (fusion.h), and compile every kernel in parallel.
absl::Status PrepareForHalide(hlo::Module& per_device, const PrecompileOptions& options = {});

// Calls `fn` with every kernel `module` needs, in schedule order (fusions
// and single kernel instructions of the computations the entry reaches
// through control flow; not reducers or fusion bodies).
// With `interpret_unlowerable`, instructions InterpretedByFallback are
// skipped rather than an error.
absl::Status ForEachKernel(const hlo::Module& module,
                           const std::function<absl::Status(const KernelGraph&)>& fn,
                           bool interpret_unlowerable = false);

// True for a call that fusion.h made.
bool IsFusionCall(const hlo::Instruction& instruction);

}  // namespace sharc::codegen

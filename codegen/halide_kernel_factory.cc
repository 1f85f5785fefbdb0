#include "codegen/halide_kernel_factory.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "codegen/dot_canonicalizer.h"
#include "codegen/fusion.h"
#include "codegen/gemm_result_reshapes.h"
#include "codegen/kernel_compiler.h"
#include "codegen/kernel_graph.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "runtime/executable.h"

namespace sharc::codegen {
namespace {

class HalideKernel final : public runtime::Kernel {
 public:
  explicit HalideKernel(std::shared_ptr<const CompiledKernel> compiled)
      : compiled_(std::move(compiled)) {}
  absl::Status Run(absl::Span<const runtime::Buffer* const> inputs,
                   runtime::Buffer* output) override {
    return compiled_->Run(inputs, output);
  }

 private:
  std::shared_ptr<const CompiledKernel> compiled_;
};

// Instructions the runtime runs itself (never kernels).
bool RunByRuntime(const hlo::Instruction& inst) { return runtime::RunsWithoutKernel(inst); }

}  // namespace

bool InterpretedByFallback(const hlo::Instruction& inst) {
  if (RunByRuntime(inst) || IsFusionCall(inst) || CheckLowerable(inst).ok()) return false;
  if (!hlo::HasOpDef(inst.opcode())) return false;
  const hlo::OpDef& def = hlo::GetOpDef(inst.opcode());
  return def.evaluate != nullptr && def.cannot_run.empty();
}

namespace {

// Calls fn(inst) for every instruction of the computations the entry
// reaches through the runtime's control flow (not reducers of collectives,
// nor fusion bodies), in schedule order; stops at the first error.
absl::Status ForEachScheduledInstruction(
    const hlo::Module& module, const std::function<absl::Status(const hlo::Instruction&)>& fn) {
  absl::flat_hash_set<const hlo::Computation*> seen;
  std::vector<const hlo::Computation*> work = {module.entry()};
  while (!work.empty()) {
    const hlo::Computation* c = work.back();
    work.pop_back();
    if (c == nullptr || !seen.insert(c).second) continue;
    for (const hlo::Instruction* inst : c->instructions()) {
      RETURN_IF_ERROR(fn(*inst));
      if (RunByRuntime(*inst) && !IsFusionCall(*inst) &&
          !(hlo::HasOpDef(inst->opcode()) && hlo::GetOpDef(inst->opcode()).traits.collective)) {
        for (const hlo::Computation* callee : inst->called_computations()) work.push_back(callee);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ForEachKernel(const hlo::Module& module,
                           const std::function<absl::Status(const KernelGraph&)>& fn,
                           bool interpret_unlowerable) {
  return ForEachScheduledInstruction(module, [&](const hlo::Instruction& inst) -> absl::Status {
    if (IsFusionCall(inst)) {
      ASSIGN_OR_RETURN(KernelGraph g, GraphForComputation(*inst.attr_computation("to_apply")));
      RETURN_IF_ERROR(CheckLowerable(g));
      return fn(g);
    }
    if (RunByRuntime(inst)) return absl::OkStatus();
    if (interpret_unlowerable && InterpretedByFallback(inst)) return absl::OkStatus();
    RETURN_IF_ERROR(CheckLowerable(inst));
    ASSIGN_OR_RETURN(KernelGraph g, GraphForInstruction(inst));
    return fn(g);
  });
}

bool IsFusionCall(const hlo::Instruction& instruction) {
  return instruction.opcode() == hlo::Opcode::kCall &&
         instruction.backend_config() == kFusionBackendConfig &&
         instruction.attr_computation("to_apply") != nullptr;
}

absl::StatusOr<std::unique_ptr<runtime::Kernel>> HalideKernelFactory::MakeKernel(
    const hlo::Instruction& instruction) {
  ASSIGN_OR_RETURN(KernelGraph graph, GraphForInstruction(instruction));
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> compiled =
      KernelCompiler::Global().Compile(graph);
  if (!compiled.ok()) return compiled.status();
  return std::make_unique<HalideKernel>(*std::move(compiled));
}

absl::StatusOr<std::unique_ptr<runtime::Kernel>> HalideKernelFactory::MakeCallKernel(
    const hlo::Instruction& call) {
  if (!IsFusionCall(call)) return std::unique_ptr<runtime::Kernel>();
  ASSIGN_OR_RETURN(KernelGraph graph, GraphForComputation(*call.attr_computation("to_apply")));
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> compiled =
      KernelCompiler::Global().Compile(graph);
  if (!compiled.ok()) return compiled.status();
  return std::make_unique<HalideKernel>(*std::move(compiled));
}

absl::Status CheckHalideSupports(const hlo::Module& module, bool interpret_unlowerable) {
  return ForEachKernel(
      module, [](const KernelGraph&) { return absl::OkStatus(); }, interpret_unlowerable);
}

std::vector<const hlo::Instruction*> InterpretedInstructions(const hlo::Module& module) {
  std::vector<const hlo::Instruction*> out;
  ForEachScheduledInstruction(module, [&](const hlo::Instruction& inst) {
    if (InterpretedByFallback(inst)) out.push_back(&inst);
    return absl::OkStatus();
  }).IgnoreError();
  return out;
}

absl::Status PrecompileKernels(const hlo::Module& module, const PrecompileOptions& options) {
  // Graphs point into `module`, which outlives this call.
  std::vector<KernelGraph> graphs;
  absl::flat_hash_set<std::string> keys;
  KernelCompiler& compiler = KernelCompiler::Global();
  absl::Status collected = ForEachKernel(
      module,
      [&](const KernelGraph& g) {
        if (keys.insert(compiler.Key(g)).second) graphs.push_back(g);
        return absl::OkStatus();
      },
      options.interpret_unlowerable);
  if (!collected.ok()) return collected;
  const bool progress = options.show_progress && isatty(STDERR_FILENO);
  const absl::Time start = absl::Now();
  std::atomic<size_t> next{0}, done{0};
  absl::Mutex mu;
  absl::Status first_error;
  auto worker = [&] {
    for (size_t i = next++; i < graphs.size(); i = next++) {
      absl::StatusOr<std::shared_ptr<const CompiledKernel>> k = compiler.Compile(graphs[i]);
      const size_t finished = ++done;
      absl::MutexLock lock(&mu);
      if (!k.ok() && first_error.ok()) first_error = k.status();
      if (progress) {
        std::fprintf(stderr, "\rcompiling kernels: %zu/%zu (%.1f s)", finished, graphs.size(),
                     absl::ToDoubleSeconds(absl::Now() - start));
        std::fflush(stderr);
      }
    }
  };
  const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(graphs.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (progress && !graphs.empty()) std::fprintf(stderr, "\n");
  return first_error;
}

absl::Status PrepareForHalide(hlo::Module& per_device, const PrecompileOptions& options) {
  if (absl::Status supported = CheckHalideSupports(per_device, options.interpret_unlowerable);
      !supported.ok()) {
    return supported;
  }
  if (absl::StatusOr<int64_t> dots = CanonicalizeDots(per_device); !dots.ok()) return dots.status();
  if (absl::StatusOr<int64_t> moved = SinkGemmResultReshapes(per_device); !moved.ok()) {
    return moved.status();
  }
  ASSIGN_OR_RETURN(FusionStats fused, FuseModule(per_device));
  return PrecompileKernels(per_device, options);
}

}  // namespace sharc::codegen

#include "driver/compiler_passes.h"

#include <utility>

#include "codegen/dot_canonicalizer.h"
#include "codegen/gemm_result_reshapes.h"
#include "codegen/one_hot_dots.h"
#include "hlo/base/status_macros.h"
#include "hlo/passes/algebraic_simplifier.h"
#include "hlo/passes/call_inliner.h"
#include "hlo/passes/cse.h"
#include "hlo/passes/dce.h"
#include "spmd/partition/localize.h"
#include "spmd/partition/reshard_to_collectives.h"
#include "spmd/shard_map_lowering.h"

namespace sharc::driver {
namespace {

using PartitionStage = spmd::PartitionOptions::Stage;

// A pass for a stage that is one function call; whether it changed the
// module is not known, so it says it did.
class FunctionPass final : public hlo::Pass {
 public:
  using Fn = std::function<absl::Status(hlo::Module&)>;
  FunctionPass(std::string_view name, Fn fn) : name_(name), fn_(std::move(fn)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    RETURN_IF_ERROR(fn_(module));
    return true;
  }

 private:
  std::string_view name_;
  Fn fn_;
};

// The partitioner's first pass checks the shardings and builds the explicit
// module (spmd::PartitionModule stopped after it).
absl::Status InsertReshards(hlo::Module& module, spmd::PartitionOptions options) {
  options.stop_after = PartitionStage::kInsertReshards;
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> explicit_module,
                   spmd::PartitionModule(module, options));
  module.ReplaceWith(std::move(explicit_module));
  return absl::OkStatus();
}

absl::Status Localize(hlo::Module& module) {
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> local,
                   spmd::Localize(module, module.config().num_partitions));
  module.ReplaceWith(std::move(local));
  return absl::OkStatus();
}

void AddPartitionPasses(const spmd::PartitionOptions& options,
                        std::vector<std::unique_ptr<hlo::Pass>>& passes) {
  passes.push_back(std::make_unique<FunctionPass>(
      "insert-reshards", [options](hlo::Module& m) { return InsertReshards(m, options); }));
  if (options.stop_after == PartitionStage::kInsertReshards) return;
  passes.push_back(
      std::make_unique<FunctionPass>("reshard-to-collectives", spmd::ReshardToCollectives));
  if (options.stop_after == PartitionStage::kReshardToCollectives) return;
  passes.push_back(std::make_unique<FunctionPass>("localize", Localize));
  // XLA's post-partitioning clean-up: localizing leaves identities (slices
  // of a whole shard, reshapes to the same shape) and repeated values.
  // No CSE here or before propagation (`sharc opt --passes cse` runs it):
  // CSE turns a value two consumers each computed into one value both read.
  // Fusion recomputes a shared broadcast, iota or mask in each kernel again
  // (codegen/fusion.h), but not a shared product or exponential of
  // full-size arrays, which then round-trips through memory: on the medium
  // training step CSE gained nothing and its memory-bound kernels took
  // 87-117 ms against 75-85 without it (bm_training_step --profile=medium).
  passes.push_back(std::make_unique<hlo::AlgebraicSimplifier>());
  hlo::DceOptions dce;
  dce.keep = hlo::DceOptions::Keep::kEffectsButNotCollectives;
  passes.push_back(std::make_unique<hlo::DeadCodeElimination>(dce));
}

void AddKernelPasses(const CompilerSpec& spec, std::vector<std::unique_ptr<hlo::Pass>>& passes) {
  const bool interpret_unlowerable = spec.precompile.interpret_unlowerable;
  passes.push_back(std::make_unique<FunctionPass>(
      "check-kernel-support", [interpret_unlowerable](hlo::Module& m) {
        return codegen::CheckHalideSupports(m, interpret_unlowerable);
      }));
  passes.push_back(std::make_unique<FunctionPass>("one-hot-dots", [](hlo::Module& m) {
    return codegen::RewriteOneHotDots(m).status();
  }));
  passes.push_back(std::make_unique<FunctionPass>("canonicalize-dots", [](hlo::Module& m) {
    return codegen::CanonicalizeDots(m).status();
  }));
  passes.push_back(std::make_unique<FunctionPass>("sink-gemm-result-reshapes", [](hlo::Module& m) {
    return codegen::SinkGemmResultReshapes(m).status();
  }));
  passes.push_back(std::make_unique<FusionPass>());
  if (!spec.compile_kernels) return;
  const codegen::PrecompileOptions precompile = spec.precompile;
  passes.push_back(std::make_unique<FunctionPass>("compile-kernels", [precompile](hlo::Module& m) {
    return codegen::PrecompileKernels(m, precompile);
  }));
}

}  // namespace

absl::StatusOr<bool> PropagatePass::Run(hlo::Module& module) {
  ASSIGN_OR_RETURN(result_, spmd::PropagateShardings(module));
  return result_.changed;
}

absl::StatusOr<bool> FusionPass::Run(hlo::Module& module) {
  ASSIGN_OR_RETURN(stats_, codegen::FuseModule(module));
  return stats_.fusions > 0;
}

std::vector<std::unique_ptr<hlo::Pass>> CompilerPasses(const CompilerSpec& spec, Stage first,
                                                       Stage last) {
  std::vector<std::unique_ptr<hlo::Pass>> passes;
  auto runs = [&](Stage s) { return first <= s && s <= last; };
  if (runs(Stage::kPrepare)) {
    // XLA's pre-partitioning simplification (CallInliner, then the
    // simplifier; not CSE, see AddPartitionPasses) on the module as the
    // user wrote it: the calls the MapReduce lowering makes next stay calls.
    passes.push_back(std::make_unique<hlo::CallInliner>());
    passes.push_back(std::make_unique<hlo::AlgebraicSimplifier>());
    const spmd::MapReduceMode mode = spec.mapreduce_mode;
    passes.push_back(std::make_unique<FunctionPass>(
        "lower-mapreduce", [mode](hlo::Module& m) { return spmd::LowerMapReduce(m, mode); }));
    if (spec.lower_shard_maps) {
      passes.push_back(std::make_unique<FunctionPass>("lower-shard-maps", spmd::LowerShardMaps));
    }
  }
  if (runs(Stage::kPropagate)) passes.push_back(std::make_unique<PropagatePass>());
  if (runs(Stage::kPartition)) AddPartitionPasses(spec.partition, passes);
  if (runs(Stage::kKernels)) AddKernelPasses(spec, passes);
  return passes;
}

hlo::Pipeline CompilerPipeline(const CompilerSpec& spec, Stage first, Stage last,
                               hlo::PipelineOptions options) {
  hlo::Pipeline pipeline("sharc", std::move(options));
  for (std::unique_ptr<hlo::Pass>& pass : CompilerPasses(spec, first, last)) {
    pipeline.AddPass(std::move(pass));
  }
  return pipeline;
}

}  // namespace sharc::driver

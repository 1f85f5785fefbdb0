// The whole compile as one list of passes (hlo/passes/pass.h), in the
// order they run. `sharc` (propagate, partition, compile, run, report,
// compare), the frontend's jit, the C API and the Python package all run
// this list, or a contiguous part of it, so they cannot disagree on the
// order:
//
//   stage      pass                    what it does
//   kPrepare   inline                  calls -> their callee's body (hlo/passes/call_inliner.h)
//              algsimp                 exact algebraic identities (hlo/passes/algebraic_simplifier.h)
//              lower-mapreduce         MapReduce blocks -> ordinary ops (spmd/mapreduce_lowering.h)
//              lower-shard-maps        shard_maps -> manual regions (spmd/shard_map_lowering.h)
//   kPropagate propagate               shardings for every value (spmd/propagation.h)
//   kPartition insert-reshards         explicit reshards (spmd/partition/insert_reshards.h)
//              reshard-to-collectives  reshards -> global-view collectives
//              localize                per-device shapes and collectives
//              algsimp                 as above, on the per-device program
//   (no cse: fusion does not duplicate shared producers yet; `sharc opt` runs it)
//              dce                     drop what the per-device program does not use (hlo/passes/dce.h)
//   kKernels   check-kernel-support    every op has a Halide lowering (or, in the default
//                                      backend's mixed mode, the interpreter runs it), or an
//                                      error naming it
//              canonicalize-dots       dots in the form the GEMM kernels take (codegen/dot_canonicalizer.h)
//              sink-gemm-result-reshapes  elementwise readers of a flattened dot in its 2-D shape,
//                                      so they fuse into its epilogue (codegen/gemm_result_reshapes.h)
//              fusion                  kernel instructions -> fused calls (codegen/fusion.h)
//              compile-kernels         every kernel into the kernel cache, in parallel
//
// A caller runs the stages it needs: `sharc propagate` kPrepare..kPropagate,
// CompiledProgram kPropagate, then kPartition on a copy, then (when Halide
// runs the program) kKernels on another. Every pass can be dumped with
// `--dump-to DIR --dump-pass-re RE` (hlo/passes/pipeline.h).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "codegen/fusion.h"
#include "codegen/halide_kernel_factory.h"
#include "hlo/passes/pipeline.h"
#include "spmd/mapreduce_lowering.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"

namespace sharc::driver {

enum class Stage { kPrepare, kPropagate, kPartition, kKernels };

// What the passes are built with.
struct CompilerSpec {
  spmd::MapReduceMode mapreduce_mode = spmd::MapReduceMode::kAnnotated;
  // With one device the interpreter runs shard_map bodies per mesh device
  // itself, so callers that run on one device keep them.
  bool lower_shard_maps = true;
  // num_devices 0: the module's num_partitions when insert-reshards runs.
  // stop_after ends kPartition early (`sharc partition --stop-after`).
  spmd::PartitionOptions partition;
  // false: kKernels ends after fusion (`sharc compile --no-compile`).
  bool compile_kernels = true;
  codegen::PrecompileOptions precompile;
};

// The passes of stages first..last, in order.
std::vector<std::unique_ptr<hlo::Pass>> CompilerPasses(const CompilerSpec& spec, Stage first,
                                                       Stage last);

// A pipeline named "sharc" holding CompilerPasses(spec, first, last).
hlo::Pipeline CompilerPipeline(const CompilerSpec& spec, Stage first, Stage last,
                               hlo::PipelineOptions options = hlo::DefaultPipelineOptions());

// The passes whose results callers read after a run (through the pipeline's
// observer or its passes()).
class PropagatePass final : public hlo::Pass {
 public:
  std::string_view name() const override { return "propagate"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
  const spmd::PropagationResult& result() const { return result_; }

 private:
  spmd::PropagationResult result_;
};

class FusionPass final : public hlo::Pass {
 public:
  std::string_view name() const override { return "fusion"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
  const codegen::FusionStats& stats() const { return stats_; }

 private:
  codegen::FusionStats stats_;
};

}  // namespace sharc::driver

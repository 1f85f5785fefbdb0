// Internal to codegen/ (includes Halide.h): turns a KernelGraph into a
// scheduled Halide pipeline with static shapes, ready to compile.
#pragma once

#include <vector>

#include "Halide.h"
#include "absl/status/statusor.h"
#include "codegen/kernel_graph.h"

namespace sharc::codegen {

struct BuiltPipeline {
  Halide::Pipeline pipeline;
  std::vector<Halide::Argument> arguments;  // the inputs, in kernel argument order
  std::string lowered_text;                 // the Halide Funcs, for --dump-dir
  // How far ahead of a streamed input's loads to prefetch, in elements
  // (each load's own width), when the schedule walks several pages at once
  // (0: the object writer's default, one page).
  int64_t prefetch_elements = 0;
  // False when a dot's tiled schedule runs in the kernel: its loads and
  // stores are not a linear walk, so the object writer streams nothing
  // (kernel_compiler.cc's StreamedBuffersOf says why and what it measured).
  bool linear_walk = true;
};

// Lowers every body instruction with its table rule and schedules the result.
// Halide exceptions become errors naming the kernel.
absl::StatusOr<BuiltPipeline> BuildPipeline(const KernelGraph& graph);

}  // namespace sharc::codegen

// Internal to codegen/: writes a compiled Halide module as an object file,
// editing the LLVM module Halide produces between Halide's code generation
// and LLVM's instruction selection, for what Halide 14 cannot schedule:
// - FMA contraction under StrictFloat: StrictFloat (needed for the NaN and
//   infinity rules) forbids it, XLA's CPU backend allows it;
// - non-temporal stores: a kernel that streams a big output through the
//   cache first reads every line it is about to overwrite
//   (read-for-ownership), so here it moves 1.5x the bytes of a copy
//   (docs/performance_log.md);
// - software prefetch ahead of big inputs;
// - division by a value the same in every lane through its reciprocal,
//   still rounded correctly (Halide 14 has no FMA to express it with).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "Halide.h"

namespace sharc::codegen {

struct ObjectWriteStats {
  int nontemporal_stores = 0;  // vector stores given the non-temporal mark
  int prefetches = 0;          // software prefetches added ahead of loads
  int reciprocal_divisions = 0;  // vector divisions by one value, through its reciprocal
  int64_t llvm_ir_us = 0;   // Halide's LLVM IR and LLVM's optimisation passes
  int64_t object_us = 0;    // the edits and LLVM's instruction selection
};

// Buffers to treat as streams, named as the pipeline names them (output
// Funcs, input ImageParams).
struct StreamedBuffers {
  std::vector<std::string> outputs;  // written once, not re-read soon
  std::vector<std::string> inputs;   // read front to back, larger than the caches
  // How far ahead of a load from `inputs` to prefetch, in elements of the
  // load (so an f32 input of a kernel with a bf16 output keeps its place):
  // 0 for the next page, or the distance the schedule chose when it walks
  // several pages or rows side by side.
  int64_t prefetch_elements = 0;
};

// True where dividing through the reciprocal was measured faster: AVX-512
// on a core whose divider is slow (`divider_is_slow`, cpu_tuning.h; Ice
// Lake: 16-lane vdivps issues once per 10 cycles; softmax in cache went
// from 0.048-0.051 to 0.038-0.043 ms with the first, one-correction
// version), and non-x86 FMA targets, where it was never measured against
// the division. Not on AVX2 (Zen 3: the 8-lane division beat the path's
// range checks and corrections; softmax rows 5-9% faster from memory,
// 8-12% in cache), nor on Zen 4 (its 16-lane division is 6 cycles).
bool ReciprocalDivisionPays(const Halide::Target& target, bool divider_is_slow);

// Compiles `module` to an object file's bytes, in `*object`.
// - Every fmul, fadd and fsub may contract: a multiply feeding an add or
//   subtract becomes one FMA, rounding once. No other IEEE rule changes.
// - Full-width vector stores into `streamed.outputs` become non-temporal
//   where the address is aligned to the store's size (up to 64 bytes) at
//   run time (a branch chooses per store; an unaligned one stays an
//   ordinary store), and every function that has them ends with an sfence,
//   so the data is visible to whichever thread reads it next.
// - Every full-width vector load from `streamed.inputs` is preceded by a
//   prefetch `streamed.prefetch_elements` elements further on (4 KiB when
//   0): one core has too few
//   misses in flight to reach the memory's bandwidth by itself, and a load
//   that waits stalls the arithmetic behind it.
// - With `divide_through_reciprocals`, every division of an f32 vector by a
//   splat divides through the divisor's reciprocal, with two FMA
//   corrections that give the correctly rounded quotient; vectors outside
//   the range where that is proven take the division itself
//   (object_writer.cc). Only where the target has FMA.
// Throws Halide::Error like Halide's own compile_to_object.
ObjectWriteStats WriteKernelObject(const Halide::Module& module, std::string* object,
                                   const StreamedBuffers& streamed,
                                   bool divide_through_reciprocals);

}  // namespace sharc::codegen

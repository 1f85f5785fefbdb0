// Scratch memory for kernels' own intermediates (Halide's halide_malloc: a
// GEMM's packed panels, a convolution's padded input), kept and reused
// across calls. Halide's default takes each from malloc and frees it at the
// end of the call; a block past glibc's mmap threshold then comes back as
// fresh pages on every call, each faulted in and zeroed by the kernel
// (`perf record -e page-faults` put most of a training step's faults in
// the GEMM's lhs packing).
//
// The kernel library's loader points Halide's runtime here
// (halide_set_custom_malloc / _free in codegen/kernel_compiler.cc). The
// signatures are Halide's halide_malloc_t / halide_free_t, restated so that
// runtime/ needs no Halide header. Blocks are kept by size (whole pages from
// 16 KiB; smaller ones go straight back to malloc, whose heap reuses them),
// at most twice the most scratch ever in use at once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sharc::runtime {

// Memory for `bytes`, 64-byte aligned, safe to read 64 bytes beyond either
// end (Halide's contract); nullptr if the system has none.
void* KernelScratchAllocate(void* user_context, size_t bytes);
void KernelScratchFree(void* user_context, void* ptr);

struct KernelScratchStats {
  int64_t hits = 0;    // pooled blocks handed out again
  int64_t misses = 0;  // pooled-size blocks taken from the system
  int64_t held_bytes = 0;
};
KernelScratchStats GetKernelScratchStats();

}  // namespace sharc::runtime

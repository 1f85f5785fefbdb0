// Internal to codegen/: how memory-bound schedules walk big buffers, shared
// by the elementwise schedule (pipeline_builder.cc) and long sums
// (reduce_lowering.cc).
#pragma once

#include <cstdint>

namespace sharc::codegen {

// A big output of a memory-bound kernel, and each chunk of a long sum to a
// scalar, walks this many pages (or rows of a page or more) side by side, a
// few vectors of each at a time. One stream
// per page leaves an Ice Lake core's hardware prefetcher (which stops at
// page boundaries) too few misses in flight: there BM_LoopAffineStreams, a
// plain a*x+b loop with non-temporal stores, ran in 7.2-7.5 ms walking one
// page and 6.2-6.5 ms walking four (STREAM copy 6.9-7.1 ms), while one
// vector per page instead of four was slower than one stream
// (docs/performance_log.md, session 8). On Zen 3 (session 9) the plain loop is
// faster walking one page (21 against 16 GB/s) and the kernel's walk runs
// level with it, so the walk stays. On Zen 4 (session 18) reads alone are
// 1.4x slower walked four pages side by side, and long sums read front to
// back there (CpuTuning::sums_walk_pages). A step's vectors (16 of 64 bytes, or 32
// of 32) are one rolled loop: unrolled, the tanh chain's cold compile
// tripled (47 -> 143 ms), and as nested loops LLVM unrolled them itself
// (47 -> 48 ms against 35). A compute-bound kernel
// (LoweringRule::compute_bound) keeps the plain loop: the tanh chain, bound
// by its arithmetic on one thread, gained nothing from the walk (it measured
// 5-10% slower, within the host's spread).
inline constexpr int kInterleavedPages = 4;
// Bytes of each page per visit: four 64-byte lines. In bytes, not vectors:
// on AVX2 (Zen 3) four 32-byte vectors per visit, half of it, ran a*x+b at
// 18-19 ms against 5.5-6.0 ms for 256 or 512 bytes.
inline constexpr int64_t kPageStepBytes = 256;
inline constexpr int64_t kPageBytes = 4096;

}  // namespace sharc::codegen

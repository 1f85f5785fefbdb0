// The target this process's CPU can run, as Halide names it.
//
// Halide 14's own host detection (Halide::get_host_target) names a target
// by the CPU generation whose features it saw, and LLVM then compiles for
// that generation's whole feature set. On an AMD Zen 4 it sees AVX-512
// BF16 and VNNI and says "avx512_sapphirerapids", and LLVM's
// sapphirerapids also has AVX512-FP16 and AVX-VNNI, which Zen 4 lacks: f16
// and 16-bit integer kernels then die on `vmovw` (SIGILL). The host target
// here asks the CPU for those features itself and steps the target down
// when they are missing.
//
// Targets are passed as Halide's target strings, so that this header (used
// by tests and benchmarks) does not pull in Halide.h.
#ifndef SHARC_CODEGEN_HOST_TARGET_H_
#define SHARC_CODEGEN_HOST_TARGET_H_

#include <string>

namespace sharc::codegen {

// Extensions Halide's detection does not ask about but LLVM's CPU names
// imply.
struct X86Extensions {
  bool avx512_fp16 = false;  // CPUID.(7,0):EDX[23]
  bool avx_vnni = false;     // CPUID.(7,1):EAX[4], the VEX-encoded form
};

// What this CPU reports (all false on other architectures).
X86Extensions DetectX86Extensions();

// `halide_target` (a Halide target string) without the features a CPU with
// `cpu`'s extensions cannot execute. Pure, so tests can check other CPUs.
std::string WithoutMissingFeatures(const std::string& halide_target, const X86Extensions& cpu);

// Halide's host target for this CPU, corrected so.
std::string HostTargetName();

}  // namespace sharc::codegen

#endif  // SHARC_CODEGEN_HOST_TARGET_H_

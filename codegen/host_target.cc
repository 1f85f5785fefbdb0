#include "codegen/host_target.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "codegen/lowering.h"

namespace sharc::codegen {

X86Extensions DetectX86Extensions() {
  X86Extensions cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0) {
    cpu.avx512_fp16 = (edx & (1u << 23)) != 0;
  }
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) {
    cpu.avx_vnni = (eax & (1u << 4)) != 0;
  }
#endif
  return cpu;
}

std::string WithoutMissingFeatures(const std::string& halide_target, const X86Extensions& cpu) {
  Halide::Target target(halide_target);
  // Halide 14 turns AVX512_SapphireRapids into LLVM's -mcpu=sapphirerapids,
  // which lets the backend use AVX512-FP16 (f16 moves and arithmetic) and
  // AVX-VNNI. Without them the next tier, Cannonlake (AVX-512 with IFMA and
  // VBMI), is what the CPU runs: Halide only names SapphireRapids where it
  // saw Cannonlake's features too.
  if (target.arch == Halide::Target::X86 &&
      target.has_feature(Halide::Target::AVX512_SapphireRapids) &&
      !(cpu.avx512_fp16 && cpu.avx_vnni)) {
    target = target.without_feature(Halide::Target::AVX512_SapphireRapids);
  }
  return target.to_string();
}

std::string HostTargetName() {
  static const std::string host =
      WithoutMissingFeatures(Halide::get_host_target().to_string(), DetectX86Extensions());
  return host;
}

}  // namespace sharc::codegen

#include "codegen/cpu_tuning.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace sharc::codegen {

CoreKind ClassifyCore(const std::string& vendor, int family, int model) {
  if (vendor != "AuthenticAMD" || family != 0x19) return CoreKind::kOther;
  // Family 19h holds both, by model, as Linux's bsp_init_amd splits them:
  // Zen 3 is 00h-0Fh (Milan) and 20h-5Fh (client parts), Zen 4 is 10h-1Fh
  // (Genoa, Bergamo, Storm Peak) and 60h-AFh (Raphael, Phoenix, Siena,
  // MI300A). Anything else is not a core sharc knows.
  if ((model >= 0x00 && model <= 0x0f) || (model >= 0x20 && model <= 0x5f)) return CoreKind::kAmdZen3;
  if ((model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0xaf)) return CoreKind::kAmdZen4;
  return CoreKind::kOther;
}

CpuTuning TuningFor(CoreKind core) {
  CpuTuning tuning;
  tuning.core = core;
  // Only what was measured on a core changes for it: Zen 3 keeps the
  // defaults (its AVX2 target never divides through the reciprocal anyway).
  const bool zen4 = core == CoreKind::kAmdZen4;
  tuning.sums_walk_pages = !zen4;
  tuning.underflow_takes_microcode_assist = !zen4;
  tuning.vector_division_is_slow = !zen4;
  return tuning;
}

std::string CoreKindName(CoreKind core) {
  switch (core) {
    case CoreKind::kAmdZen3: return "zen3";
    case CoreKind::kAmdZen4: return "zen4";
    case CoreKind::kOther: break;
  }
  return "other";
}

bool ParseCoreKind(const std::string& name, CoreKind* core) {
  for (CoreKind kind : {CoreKind::kOther, CoreKind::kAmdZen3, CoreKind::kAmdZen4}) {
    if (name == CoreKindName(kind)) {
      *core = kind;
      return true;
    }
  }
  return false;
}

namespace {

CoreKind DetectCore() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return CoreKind::kOther;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return CoreKind::kOther;
  const int base_family = static_cast<int>((eax >> 8) & 0xf);
  const int base_model = static_cast<int>((eax >> 4) & 0xf);
  const int family = base_family == 0xf ? base_family + static_cast<int>((eax >> 20) & 0xff) : base_family;
  const int model = base_family == 0xf || base_family == 0x6
                        ? (static_cast<int>((eax >> 16) & 0xf) << 4) | base_model
                        : base_model;
  return ClassifyCore(vendor, family, model);
#else
  return CoreKind::kOther;
#endif
}

CoreKind ChosenCore() {
  const char* name = std::getenv("SHARC_CPU_TUNE");
  if (name == nullptr || *name == '\0') return DetectCore();
  CoreKind core = CoreKind::kOther;
  if (ParseCoreKind(name, &core)) return core;
  std::fprintf(stderr, "sharc: ignoring SHARC_CPU_TUNE=%s (expected zen3, zen4 or other)\n", name);
  return DetectCore();
}

}  // namespace

const CpuTuning& HostCpuTuning() {
  static const CpuTuning tuning = TuningFor(ChosenCore());
  return tuning;
}

}  // namespace sharc::codegen

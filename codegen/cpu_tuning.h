// Schedule choices that depend on the core's microarchitecture, not on its
// instruction set (which the Halide target already names), like LLVM's
// -mtune or OpenBLAS's core types. Each value here was measured on the core
// it is for (docs/performance_log.md); a core sharc has not been measured on
// gets the defaults.
#ifndef SHARC_CODEGEN_CPU_TUNING_H_
#define SHARC_CODEGEN_CPU_TUNING_H_

#include <string>

namespace sharc::codegen {

// The cores told apart here (x86 vendor, family and model from CPUID).
enum class CoreKind { kOther, kAmdZen3, kAmdZen4 };

struct CpuTuning {
  CoreKind core = CoreKind::kOther;
  // Whether a long sum to a scalar reads each parallel chunk four pages
  // side by side (page_walk.h) rather than front to back. On Zen 3 the walk
  // made a 64M-float sum 1.2x faster (session 10); on Zen 4 it made it 1.4x
  // slower (session 18): there one stream with a prefetch a page ahead
  // reads at the plain loop's speed and four side by side do not. The two
  // add a chunk's elements into the 64 partial sums in different orders,
  // so a float sum rounds differently on Zen 4 than elsewhere (as XLA's
  // sums do from one CPU to another; every other choice here keeps the bits).
  bool sums_walk_pages = true;
  // Whether a vector multiply whose result is subnormal or rounds to zero
  // takes a microcode assist (of the order of a hundred cycles on Intel
  // cores). Then softmax's exp selects +0 for the lanes that would
  // underflow. Zen 4 does the multiply in hardware, at a small cost (16
  // lanes in 2 more cycles, session 18), and there exp scales the lanes it
  // clamps by an exact +0 instead, fewer instructions. (Zen 3 was not
  // measured for it and keeps the select.)
  bool underflow_takes_microcode_assist = true;
  // Whether the vector divider is slow next to FMAs: on Ice Lake a 16-lane
  // vdivps issues once per 10 cycles, and dividing through the reciprocal
  // with two FMA corrections (object_writer.h) paid. On Zen 4 a 16-lane
  // vdivps takes 6 cycles and that path's range checks cost more than they
  // save (softmax rows 7-9% faster with plain division, session 18). Zen 3
  // keeps the default, which does not matter there: with AVX2 the path is
  // never taken (ReciprocalDivisionPays).
  bool vector_division_is_slow = true;
};

// Which core kind CPUID's vendor string, family and model (the extended
// fields already added in, as the manuals define display family/model) name.
CoreKind ClassifyCore(const std::string& vendor, int family, int model);

// The tuning for a core kind.
CpuTuning TuningFor(CoreKind core);

// A short name of the core kind ("zen4"), which goes into kernel cache keys:
// a kernel's schedule depends on it.
std::string CoreKindName(CoreKind core);
// The core kind of a name CoreKindName gives; false if there is none.
bool ParseCoreKind(const std::string& name, CoreKind* core);

// The tuning kernels are compiled with, chosen once per process: this
// process's core, or the one SHARC_CPU_TUNE names (zen3, zen4 or other;
// like -mtune, to compile for another machine or to compare schedules; an
// unknown name is ignored with a note on stderr).
const CpuTuning& HostCpuTuning();

}  // namespace sharc::codegen

#endif  // SHARC_CODEGEN_CPU_TUNING_H_

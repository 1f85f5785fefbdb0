// The building blocks of halo exchanges (halo.h), shared by the plans that
// fetch a window of a split operand: where each device's window starts, the
// collective-permutes that fetch it, and the mask for positions outside the
// operand.
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/ir/instruction.h"
#include "hlo/ir/sharding.h"
#include "spmd/partition/halo.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// How the devices along a split dim read it: the device with tile index i
// has its window start at start[i] (possibly outside the operand), and the
// operand range its valid results read is [used_lo[i], used_hi[i]) (empty
// if lo >= hi); every window spans `window` elements.
struct DimAccess {
  bool changed = false;
  std::vector<int64_t> start, used_lo, used_hi;
  int64_t window = 0;
};

// The halo of dim `d` of an operand of `in`, laid out as `s` (split in `n`
// tiles of `t`), read through `a` by result blocks of `u`; adds each
// device's sends (bytes) to `sends`.
HaloDim PlanDim(const hlo::Sharding& s, const hlo::Shape& in, int64_t d, int64_t n, int64_t t,
                int64_t u, const DimAccess& a, std::vector<int64_t>& sends);

// This device's window of `x` along h.dim: the tiles it touches, fetched by
// collective-permutes and concatenated, then cut to h.window elements.
hlo::Instruction* FetchWindow(LocalBuilder& b, hlo::Instruction* x, const HaloDim& h);

// The window's positions outside the operand ([0, size) along h.dim) set
// to `fill` (a scalar or an array of the window's shape).
hlo::Instruction* MaskOutside(LocalBuilder& b, hlo::Instruction* w, const HaloDim& h,
                              int64_t size, hlo::Instruction* fill);

}  // namespace sharc::spmd

// Arithmetic on the narrow types (f8, f4, s2/s4, u2/u4; hlo/ir/narrow_types.h)
// runs in the type they compute in, between converts, as XLA's CPU backend
// upcasts them (its float-normalization passes):
//
//   %z = f8e4m3fn[4] multiply(f8e4m3fn[4] %x, f8e4m3fn[4] %y)
//     ->  %x.wide = f32[4] convert(%x)
//         %y.wide = f32[4] convert(%y)
//         %z.wide = f32[4] multiply(%x.wide, %y.wide)
//         %z = f8e4m3fn[4] convert(%z.wide)
//   %d = f32[2,2] dot(f8e5m2[2,3] %a, f8e5m2[3,2] %b), ...   (operands only)
//
// s2/s4 compute in s32 and u2/u4 in u32: the convert back keeps the low
// bits, which is the narrow type's own wrapping arithmetic. Ops that move
// bytes (narrow_type_semantics.h) stay as they are, and so do ops that call
// computations (reduce, scatter, sort...), which the run then refuses by
// name. Each op rounds once, to its result type, exactly as XLA's CPU
// backend does.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

absl::Status UpcastNarrowTypes(Module& module);

}  // namespace sharc::hlo

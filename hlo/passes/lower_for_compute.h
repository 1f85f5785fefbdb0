// Before anything computes with a module (propagation, partitioning, run,
// autodiff, vmap), the ops that only matter to XLA's own fusion and
// scheduling become the ops sharc computes with:
//
//   JAX's Shardy shardings and shard_maps  ->  GSPMD's (import_shardy.h)
//   %f = f32[4] fusion(%a, %b), kind=kLoop, calls=%fused  ->  %f = f32[4] call(%a, %b), to_apply=%fused
//   %o = (f32[4], s32[]) opt-barrier(%t)                  ->  uses of %o read %t
//     (and domain(%t), likewise)
//   %d = f32[4] add-dependency(%x, %token)                ->  uses of %d read %x
//     (when %token comes from after-all of nothing but after-alls; one that
//     orders %x after a transfer stays, keeping the transfer in the program)
//   %b = f32[8] bitcast(f32[2,4] %x)                      ->  %b = f32[8] reshape(%x)
//     (same element type; the parser refuses layouts that reorder dims)
//   %s = (f32[4], f32[8]) all-gather-start(%x), dimensions={0}
//   %d = f32[8] all-gather-done(%s)                       ->  %d = f32[8] all-gather(%x), dimensions={0}
//     (likewise all-reduce, collective-permute and copy -start/-done, and
//     async-start/-update/-done, which become a call of calls=)
//   batch-norm-training / -inference / -grad  ->  their primitive ops (expand_batch_norm.h)
//   %t = (f32[4,2], s32[4,2]) custom-call(%x), custom_call_target="TopK"
//                                                         ->  %t = (...) topk(%x), k=2, largest=true
//   %s = f32[2,4] dynamic-slice(%x, s32[2] %v), ...      ->  dynamic-slice(%x, %v0, %v1), ...
//     (start indices as one vector, XLA's older form, become scalars sliced
//     from it; likewise dynamic-update-slice)
//   %o = token[] outfeed(%x, %t), sharding={devices=[2]0,1}
//                                   ->  %o = token[] outfeed(custom-call(%x), %t) with the
//     sharding on a "Sharding" custom-call of each array leaf of the data (XLA writes an
//     outfeed's sharding for its data, or for (data, token))
//   %p = (f32[4], f32[8]) collective-permute(%a, %b), ...  ->  tuple(collective-permute(%a),
//                                                                  collective-permute(%b))
//   %y = f32[4] map(%a, %b), to_apply=%f   ->  f's elementwise ops on the arrays (inline_map.h)
//   %z = f8e4m3fn[4] add(%x, %y)  ->  the add in f32 between converts (upcast_narrow_types.h)
//   %c = f32[...] convolution(f32 %x, pred %k)  ->  convolution(%x, f32 convert(%k)), as XLA's
//     importer converts a pred operand
//
// and after-all instructions that no longer order anything are dropped. A
// fusion's value is its computation's (it records only which ops XLA's
// backend compiles together); opt-barrier and add-dependency constrain
// XLA's scheduler, and sharc's passes never move work across them in a way
// that changes a value, so the rewrite is exact. `fmt` and `verify` keep the
// ops as written.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

absl::Status LowerForCompute(Module& module);

}  // namespace sharc::hlo

// topk's order as a sort comparator: the partitioner sorts topk candidates
// gathered from several devices (spmd/partition/topk_combine.h) and must
// order them exactly as topk does. Defined beside topk's evaluator
// (topk_op.cc), whose order this is.
#pragma once

#include "hlo/ir/module.h"
#include "hlo/ir/primitive_type.h"

namespace sharc::hlo {

// A computation (a: T[], b: T[], i: s32[], j: s32[]) -> pred[]: whether
// value a goes before value b, larger (or smaller) first and NaN as the
// largest; a stable sort by it keeps equal values in their order, as topk
// does. Added to `module` under a fresh name.
Computation* TopKOrderComparator(Module& module, PrimitiveType type, bool largest);

}  // namespace sharc::hlo

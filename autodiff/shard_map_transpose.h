// The transpose of a shard_map: a shard_map of the transposed body with the
// specs swapped (cotangents of the outputs come in with the out_specs, those
// of the linear operands leave with their in_specs). How the boundary is
// treated depends on the shard_map's check_variance:
//
//  - checked (the default): the body is typed, so every cast between
//    invariant and varying values is an explicit pbroadcast, and each op's
//    transpose is exact (psum <-> pbroadcast, all_gather_invariant <->
//    pscatter, ...). Nothing is rescaled and no psum is added: an output
//    that is invariant over an axis has one cotangent there, not one per
//    device. The only boundary op is the transpose of an implicit fan-out
//    (an output less varying than its out_spec): a psum over those axes.
//  - unchecked (check_variance=false, JAX's check_vma=False): nothing is
//    known about invariance, so each device's body is transposed as a map of
//    its own inputs (psum -> psum) and the boundary is defensive: each
//    output cotangent is divided by the size of the axes its out_spec does
//    not name, each input cotangent psum'd over the axes its in_spec does
//    not name. Correct, but it communicates where the checked form does not
//    (the design note's "old" transposes, kept for comparison).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "autodiff/transpose_rule.h"

namespace sharc::autodiff {

absl::StatusOr<std::vector<Cotangent>> TransposeShardMap(const Instruction& shard_map,
                                                         const Cotangent& ct,
                                                         TransposeContext& ctx);

}  // namespace sharc::autodiff

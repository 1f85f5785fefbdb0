// The JVP rules of reduce and reduce-window beyond sums (reduction.cc
// dispatches on the reducer): max and min pooling, and reductions with any
// other reducer, including variadic ones such as argmax's value-and-index
// pairs; and select-and-scatter's.
#pragma once

#include "autodiff/jvp_rule.h"

namespace sharc::autodiff {

// reduce-window with a maximum or minimum reducer (window_extremum.cc).
absl::StatusOr<Instruction*> WindowExtremumJvp(const Instruction& inst, Opcode reducer,
                                               const JvpArgs& args, JvpContext& ctx);

// reduce with any reducer, as a tree of pairwise reducer applications
// (reduce_tree.cc). Exact for associative reducers, the ones XLA allows.
absl::StatusOr<Instruction*> ReduceTreeJvp(const Instruction& inst, const JvpArgs& args,
                                           JvpContext& ctx);

// reduce-window with any reducer, folding the window's positions in order
// (window_fold.cc).
absl::StatusOr<Instruction*> WindowFoldJvp(const Instruction& inst, const JvpArgs& args,
                                           JvpContext& ctx);

// select-and-scatter, linear in its source and init value when its scatter
// function adds (select_and_scatter.cc).
absl::StatusOr<Instruction*> SelectAndScatterJvp(const Instruction& inst, const JvpArgs& args,
                                                 JvpContext& ctx);
// Whether select-and-scatter's scatter function is an add (the case
// autodiff supports).
bool ScattersByAdding(const Instruction& inst);

}  // namespace sharc::autodiff

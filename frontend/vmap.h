// vmap: vectorise a function over an axis of its arguments, as jax.vmap does.
// The function is traced once on one example (the mapped axes removed) into
// a nested computation, hlo::Vmap (hlo/batching) batches that computation
// with the per-op batching rules, and the trace calls the batched
// computation. Results are batched along axis 0.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>

#include "frontend/tree_function.h"
#include "frontend/trees.h"

namespace sharc::frontend {

// Per argument leaf: the axis mapped over, or nullopt for an argument shared
// by every example. A prefix of the argument structure (one entry may stand
// for a subtree); AxisTree(0) maps every leaf over its leading axis.
using AxisTree = PyTree<std::optional<int64_t>>;

class Vmapped {
 public:
  Vmapped(AdaptedFunction fn, AxisTree in_axes, std::source_location loc)
      : fn_(std::move(fn)), in_axes_(std::move(in_axes)), loc_(loc) {}

  // Inside a trace: the batched results for `args` (for a function of
  // Tensors, a list of its positional arguments or a single leaf).
  Tree operator()(const Tree& args) const;
  // Inside a trace, for a function of Tensors: its positional arguments.
  template <typename... Tensors>
    requires(sizeof...(Tensors) > 0 && (std::is_same_v<Tensors, Tensor> && ...))
  Tree operator()(const Tensors&... args) const {
    return (*this)(Tree::list({Tree(args)...}));
  }

 private:
  AdaptedFunction fn_;
  AxisTree in_axes_;
  std::source_location loc_;
};

// `f` is a function of a tree or of 1 to 6 Tensors; errors (a bad axis,
// mapped sizes that differ, an op without a batching rule) are trace errors
// at the call of vmap.
template <typename F>
Vmapped vmap(F f, AxisTree in_axes = AxisTree(0),
             std::source_location loc = std::source_location::current()) {
  return Vmapped(AsTreeFunction(std::move(f)), std::move(in_axes), loc);
}

}  // namespace sharc::frontend

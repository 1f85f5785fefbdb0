// jit: trace a function of Tensors once per input signature, compile it and
// run it on host literals -- on one device, or on the devices of a Mesh
// through sharding propagation and SPMD partitioning (driver::CompiledProgram).
// Like jax.jit, the traced and the compiled program are cached by the input
// structure, shapes and dtypes (the shardings are fixed per jitted function
// by its options).
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <type_traits>

#include "absl/status/statusor.h"
#include "frontend/trace_module.h"
#include "frontend/tree_function.h"
#include "frontend/trees.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"
#include "driver/compiled_program.h"

namespace sharc::frontend {

struct JitOptions : TraceModuleOptions {
  // Kernels: the reference interpreter's (the default: nothing to compile,
  // right for small programs and tests), or Halide's (compiled once per
  // signature and cached on disk; worth it for programs run many times).
  driver::Backend backend = driver::Backend::kInterpreter;
};

class Jitted {
 public:
  // `positional`: `fn` takes a list of arguments (the wrapper of a function
  // of N Tensors); then calls with N literals pass them as that list.
  Jitted(TreeFunction fn, JitOptions options, bool positional, std::source_location loc);

  // Runs on `args` (traced and compiled on first use of their signature).
  absl::StatusOr<HostTree> operator()(const HostTree& args) const;
  // Runs on literals: the positional arguments of a function of Tensors, or
  // the single leaf argument of a function of a tree.
  template <typename... Literals>
    requires(sizeof...(Literals) > 0 && (std::is_same_v<Literals, hlo::Literal> && ...))
  absl::StatusOr<HostTree> operator()(const Literals&... args) const {
    if constexpr (sizeof...(Literals) == 1) {
      if (!positional_) return (*this)(HostTree(args)...);
    }
    return (*this)(HostTree::list({HostTree(args)...}));
  }

  // The module the arguments' signature traces to (a copy of the cached one),
  // for printing; Trace takes abstract shapes, Lower concrete arguments.
  absl::StatusOr<std::unique_ptr<hlo::Module>> Trace(const ShapeTree& args) const;
  absl::StatusOr<std::unique_ptr<hlo::Module>> Lower(const HostTree& args) const;

  // The compiled program for the arguments' signature (compiled on first
  // use and cached, as a call would): its cost report, per-device program
  // and timed runs. Calls share it.
  absl::StatusOr<std::shared_ptr<driver::CompiledProgram>> Compile(const ShapeTree& args) const;

  // How many times the function was traced (cache misses).
  int64_t trace_count() const;

 private:
  struct State;
  struct Compiled;
  absl::StatusOr<std::shared_ptr<const TracedModule>> Traced(const ShapeTree& args) const;
  absl::StatusOr<std::shared_ptr<Compiled>> CompiledFor(const ShapeTree& args) const;

  std::shared_ptr<State> state_;
  bool positional_ = false;
};


// jit(f): `f` is either a function of one tree (`Tree f(const Tree&)`) or a
// function of 1 to 6 Tensors returning a Tensor or a Tree.
template <typename F>
Jitted jit(F f, JitOptions options = {},
           std::source_location loc = std::source_location::current()) {
  AdaptedFunction adapted = AsTreeFunction(std::move(f));
  return Jitted(std::move(adapted.fn), std::move(options), adapted.positional, loc);
}

}  // namespace sharc::frontend

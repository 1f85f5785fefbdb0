// Derivatives of traced functions, composable with jit, vmap and the
// MapReduce blocks: the function is traced into a computation of the module
// being built, autodiff/ (module-to-module JVP and linearize-then-transpose)
// derives a new computation from it, and a call to that computation is
// emitted. The derivative therefore prints as ordinary IR (a MapReduce
// program's gradient shows mapreduce.* blocks) and can be derived again.
//
//   auto loss = [](Tensor w, Tensor x) { return sum(w * x); };
//   jit(grad(loss))(w, x)            // d loss / d w
//   jit(grad(grad(cube)))(x)         // second order
#pragma once

#include <cstdint>
#include <source_location>
#include <type_traits>
#include <vector>

#include "frontend/tensor.h"
#include "frontend/tree_function.h"
#include "frontend/trees.h"

namespace sharc::frontend {

namespace internal {

enum class DerivativeKind { kGrad, kValueAndGrad };

// Traces fn on `args`, derives it and calls the derivative. `argnums` picks
// the positional arguments to differentiate (a function of a tree is
// differentiated with respect to the whole tree).
Tree Derive(const TreeFunction& fn, bool positional, const Tree& args,
            const std::vector<int64_t>& argnums, DerivativeKind kind,
            const std::source_location& loc);

// (f(x), df(x)·t) for primals and tangents of the same structure.
Tree JvpOf(const TreeFunction& fn, bool positional, const Tree& primals, const Tree& tangents,
           const std::source_location& loc);

// (f(x), ct·df(x)) for a cotangent shaped like f's result.
Tree VjpOf(const TreeFunction& fn, bool positional, const Tree& primals, const Tree& cotangent,
           const std::source_location& loc);

// A derivative of f that keeps f's calling convention: a function of a tree
// stays one, a function of Tensors takes the same Tensors (so jit and
// further derivatives see the same signature).
template <typename F>
struct Derivative {
  F f;
  std::vector<int64_t> argnums;
  DerivativeKind kind;
  std::source_location loc;

  Tree operator()(const Tree& args) const
    requires std::is_invocable_r_v<Tree, const F&, const Tree&>
  {
    return Derive(AsTreeFunction(f).fn, false, args, argnums, kind, loc);
  }
  template <typename... Args>
    requires(sizeof...(Args) > 0 && (std::is_same_v<Args, Tensor> && ...) &&
             std::is_invocable_v<const F&, const Args&...>)
  Tree operator()(const Args&... args) const {
    return Derive(AsTreeFunction(f).fn, true, Tree::list({Tree(args)...}), argnums, kind, loc);
  }
};

}  // namespace internal

// grad(f): the gradient of a scalar-valued f with respect to positional
// arguments `argnums` (default: the first). One argnum gives that argument's
// gradient; several give a list. A function of one tree is differentiated
// with respect to the whole tree. The result takes the same arguments as f
// (pass it to jit, call it inside a traced function, or derive it again).
template <typename F>
internal::Derivative<F> grad(F f, std::vector<int64_t> argnums = {0},
                             std::source_location loc = std::source_location::current()) {
  return {std::move(f), std::move(argnums), internal::DerivativeKind::kGrad, loc};
}

// value_and_grad(f): a list (f(x), grad).
template <typename F>
internal::Derivative<F> value_and_grad(F f, std::vector<int64_t> argnums = {0},
                                       std::source_location loc = std::source_location::current()) {
  return {std::move(f), std::move(argnums), internal::DerivativeKind::kValueAndGrad, loc};
}

namespace internal {
// d f(x) / d x for a function of one Tensor, shaped [f(x) dims..., x dims...]:
// one jvp per input element (forward) or one vjp per output element
// (reverse), vectorised with vmap over the basis vectors.
Tensor Jacobian(const TreeFunction& fn, const Tensor& x, bool forward,
                const std::source_location& loc);

template <typename F>
struct JacobianFunction {
  F f;
  bool forward;
  std::source_location loc;
  Tensor operator()(const Tensor& x) const {
    return Jacobian(AsTreeFunction(f).fn, x, forward, loc);
  }
};
}  // namespace internal

// jacfwd(f) / jacrev(f) for a function of one Tensor: x -> the Jacobian,
// shaped [f(x) dims..., x dims...]. hessian(f) = jacfwd(jacrev(f)).
template <typename F>
internal::JacobianFunction<F> jacfwd(F f,
                                     std::source_location loc = std::source_location::current()) {
  return {std::move(f), true, loc};
}
template <typename F>
internal::JacobianFunction<F> jacrev(F f,
                                     std::source_location loc = std::source_location::current()) {
  return {std::move(f), false, loc};
}
template <typename F>
auto hessian(F f, std::source_location loc = std::source_location::current()) {
  return jacfwd(jacrev(std::move(f), loc), loc);
}

// jvp(f, primals, tangents) inside a traced function: a list (f(x), df(x)·t).
template <typename F>
Tree jvp(F f, const Tree& primals, const Tree& tangents,
         std::source_location loc = std::source_location::current()) {
  AdaptedFunction inner = AsTreeFunction(std::move(f));
  return internal::JvpOf(inner.fn, inner.positional, primals, tangents, loc);
}

// vjp(f, primals, cotangent) inside a traced function: a list
// (f(x), ct·df(x)) with the second element structured like `primals`.
template <typename F>
Tree vjp(F f, const Tree& primals, const Tree& cotangent,
         std::source_location loc = std::source_location::current()) {
  AdaptedFunction inner = AsTreeFunction(std::move(f));
  return internal::VjpOf(inner.fn, inner.positional, primals, cotangent, loc);
}

}  // namespace sharc::frontend

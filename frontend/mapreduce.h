// The MapReduce building blocks of DrJAX (and FAX's federated names) for
// traced C++ functions. A Program fixes a placement (the mesh axis its groups
// spread over) and the number of groups n; inside a function it wraps,
// broadcast / map_fn / reduce_sum / reduce_mean emit the first-class
// mapreduce.* ops, so the traced program shows them as the papers' jaxprs
// do. A value "placed" at the placement is an array with a leading dimension
// of n; structures are handled leaf by leaf.
//
//   mapreduce::Program clients("clients", 3);
//   auto f = clients.wrap([](Tensor x) {
//     return mapreduce::reduce_sum(mapreduce::map_fn([](Tensor v) { return v * 2.0f; },
//                                                    mapreduce::broadcast(x)));
//   });
//   jit(f)(x)  // 6 * x
//
// Misuse throws a TraceError naming the user's line (caught by jit and the
// tracing entry points, which return it as a status): a block outside a
// Program, a placed value where a non-placed one is expected or the other
// way round. A placement that names no mesh axis, or an n the axis does not
// divide, is reported when the program is compiled, also at the user's line.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <utility>

#include "frontend/tensor.h"
#include "frontend/tree_function.h"
#include "frontend/trees.h"

namespace sharc::frontend::mapreduce {

class Program {
 public:
  // DrJAX's program(placements={placement: n}).
  Program(std::string placement, int64_t n,
          std::source_location loc = std::source_location::current());

  const std::string& placement() const { return placement_; }
  int64_t n() const { return n_; }

  // `fn` (a function of a tree, or of 1 to 6 Tensors) with this program
  // active while it runs; it keeps fn's signature, so jit sees the same
  // function.
  template <typename F>
  auto wrap(F fn) const;

  // Makes the program active for the current scope (what wrap does around
  // each call). Programs nest; the innermost one is used.
  class Activation {
   public:
    explicit Activation(const Program& program);
    ~Activation();
    Activation(const Activation&) = delete;
    Activation& operator=(const Activation&) = delete;
  };

  // The innermost active program, or a TraceError at `loc` naming `block`.
  static const Program& Active(const char* block, const std::source_location& loc);

 private:
  std::string placement_;
  int64_t n_;
};

template <typename F>
struct ProgramFunction {
  Program program;
  F fn;
  template <typename... Args>
  auto operator()(Args&&... args) const
      -> decltype(std::declval<const F&>()(std::forward<Args>(args)...)) {
    Program::Activation active(program);
    return fn(std::forward<Args>(args)...);
  }
};

template <typename F>
auto Program::wrap(F fn) const {
  return ProgramFunction<F>{*this, std::move(fn)};
}

// Tiles each leaf of x over a new leading axis of n groups.
Tree broadcast(const Tree& x, std::source_location loc = std::source_location::current());
Tensor broadcast(const Tensor& x, std::source_location loc = std::source_location::current());

// Applies `fn` to every group's slice of the placed `args` (a list of
// arguments is unpacked into a function of Tensors, as DrJAX unpacks tuples).
// Non-placed values `fn` reads from the enclosing function are broadcast to
// the groups.
Tree map_fn(const TreeFunction& fn, bool positional, const Tree& args,
            std::source_location loc = std::source_location::current());
template <typename F>
Tree map_fn(F fn, const Tree& args, std::source_location loc = std::source_location::current()) {
  AdaptedFunction adapted = AsTreeFunction(std::move(fn));
  return map_fn(adapted.fn, adapted.positional, args, loc);
}
template <typename F>
Tensor map_fn(F fn, const Tensor& arg, std::source_location loc = std::source_location::current()) {
  AdaptedFunction adapted = AsTreeFunction(std::move(fn));
  Tree args = adapted.positional ? Tree::list({Tree(arg)}) : Tree(arg);
  return map_fn(adapted.fn, adapted.positional, args, loc).leaf();
}

// Sum / mean over the groups of each placed leaf.
Tree reduce_sum(const Tree& x, std::source_location loc = std::source_location::current());
Tensor reduce_sum(const Tensor& x, std::source_location loc = std::source_location::current());
Tree reduce_mean(const Tree& x, std::source_location loc = std::source_location::current());
Tensor reduce_mean(const Tensor& x, std::source_location loc = std::source_location::current());
// sum(x * w) / sum(w) per leaf, with one weight per group (w: f[n]); a
// composite of map_fn and two reduce_sums, as in DrJAX.
Tree reduce_weighted_mean(const Tree& x, const Tensor& weights,
                          std::source_location loc = std::source_location::current());

// FAX's names. Clients-placed values are placed at "clients"; server-placed
// values are plain (non-placed) values.
inline constexpr char kClients[] = "clients";
inline Program federated_program(int64_t clients,
                                 std::source_location loc = std::source_location::current()) {
  return Program(kClients, clients, loc);
}
inline Tree federated_broadcast(const Tree& x,
                                std::source_location loc = std::source_location::current()) {
  return broadcast(x, loc);
}
template <typename F>
Tree federated_map(F fn, const Tree& args,
                   std::source_location loc = std::source_location::current()) {
  return map_fn(std::move(fn), args, loc);
}
// On the server there is one value, so the map is the call.
template <typename F>
Tree federated_map_server(F fn, const Tree& args) {
  return AsTreeFunction(std::move(fn)).fn(args);
}
inline Tree federated_sum(const Tree& x,
                          std::source_location loc = std::source_location::current()) {
  return reduce_sum(x, loc);
}
inline Tree federated_mean(const Tree& x,
                           std::source_location loc = std::source_location::current()) {
  return reduce_mean(x, loc);
}
inline Tree federated_weighted_mean(const Tree& x, const Tensor& weights,
                                    std::source_location loc = std::source_location::current()) {
  return reduce_weighted_mean(x, weights, loc);
}

}  // namespace sharc::frontend::mapreduce

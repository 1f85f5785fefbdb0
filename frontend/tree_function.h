// Adapts the C++ callables users write to the traced-function type: a
// function of one tree stays as it is; a function of 1 to 6 Tensors becomes
// a function of a list of that many leaves (its positional arguments).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/trees.h"

namespace sharc::frontend {

struct AdaptedFunction {
  TreeFunction fn;
  bool positional = false;  // takes a list of positional Tensor arguments
};

namespace internal {
template <typename F, size_t... I>
TreeFunction Positional(F f, std::index_sequence<I...>) {
  return [f = std::move(f)](const Tree& args) -> Tree {
    if (!args.is_list() || args.size() != sizeof...(I)) {
      throw std::out_of_range(absl::StrCat("expected ", sizeof...(I),
                                           " positional arguments, got the structure ",
                                           StructureOf(args).ToString()));
    }
    return Tree(f(args[I].leaf()...));
  };
}

template <typename F, size_t N>
constexpr bool kTakesTensors = []<size_t... I>(std::index_sequence<I...>) {
  return std::is_invocable_v<F&, decltype((void(I), std::declval<Tensor>()))...>;
}(std::make_index_sequence<N>());
}  // namespace internal

template <typename F>
AdaptedFunction AsTreeFunction(F f) {
  if constexpr (std::is_invocable_r_v<Tree, F&, const Tree&>) {
    return {TreeFunction(std::move(f)), false};
  } else {
    constexpr size_t arity = internal::kTakesTensors<F, 1>   ? 1
                             : internal::kTakesTensors<F, 2> ? 2
                             : internal::kTakesTensors<F, 3> ? 3
                             : internal::kTakesTensors<F, 4> ? 4
                             : internal::kTakesTensors<F, 5> ? 5
                             : internal::kTakesTensors<F, 6> ? 6
                                                             : 0;
    static_assert(arity > 0, "expected a function of a const Tree& or of 1 to 6 Tensors");
    return {internal::Positional(std::move(f), std::make_index_sequence<arity>()), true};
  }
}

}  // namespace sharc::frontend

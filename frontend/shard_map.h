// shard_map for traced C++ functions, as jax.experimental.shard_map: the
// function is traced once on per-device (local) shapes and emitted as the
// IR's shard_map op (hlo/ops/shard_map_ops.cc), whose body runs once per
// device of a named mesh. Inside it the named-axis collectives of
// frontend/named_collectives.h talk over mesh axes.
//
//   spmd::Mesh mesh = *spmd::Mesh::Parse("i=4");
//   auto total = shard_map([](Tensor block) { return psum(block, "i"); },
//                          mesh, SpecTree(P("i")), SpecTree(P()));
//   jit([&](Tensor x) { return total(x).leaf(); })(x);   // the sum of x's 4 blocks
//
// Right after the op is emitted the variance pass (spmd/variance.h) types
// its body: pbroadcasts are inserted where values of different device
// variance meet, and an output varying over an axis its out_spec does not
// name is a TraceError at the user's line naming the axes and the fix.
// Values of the enclosing function the body reads enter it replicated
// (in_spec P()), as JAX's closed-over constants do. The trace adopts the
// shard_map's mesh (as with_sharding_constraint does), so jit runs the
// program on it.
#pragma once

#include <source_location>
#include <type_traits>

#include "frontend/partition_spec.h"
#include "frontend/tree_function.h"
#include "frontend/trees.h"
#include "spmd/mesh.h"

namespace sharc::frontend {

struct ShardMapOptions {
  // JAX's check_vma: type the body by device variance (efficient transposes,
  // the out_specs check). false gives JAX's check_vma=False behaviour.
  bool check_variance = true;
};

class ShardMapped {
 public:
  ShardMapped(AdaptedFunction fn, spmd::Mesh mesh, SpecTree in_specs, SpecTree out_specs,
              ShardMapOptions options, std::source_location loc)
      : fn_(std::move(fn)),
        mesh_(std::move(mesh)),
        in_specs_(std::move(in_specs)),
        out_specs_(std::move(out_specs)),
        options_(options),
        loc_(loc) {}

  // Inside a trace: the global results for the global `args` (for a
  // function of Tensors, a list of its positional arguments or one leaf).
  Tree operator()(const Tree& args) const;
  template <typename... Tensors>
    requires(sizeof...(Tensors) > 0 && (std::is_same_v<Tensors, Tensor> && ...))
  Tree operator()(const Tensors&... args) const {
    return (*this)(Tree::list({Tree(args)...}));
  }

  const spmd::Mesh& mesh() const { return mesh_; }

 private:
  AdaptedFunction fn_;
  spmd::Mesh mesh_;
  SpecTree in_specs_;   // a prefix of the argument structure
  SpecTree out_specs_;  // a prefix of the result structure
  ShardMapOptions options_;
  std::source_location loc_;
};

// `f` is a function of a tree or of 1 to 6 Tensors. Errors (specs that do
// not fit the arguments or name unknown axes, a dimension the mesh axes do
// not divide, an output that varies where its out_spec says it does not)
// are trace errors at the line of the shard_map call.
template <typename F>
ShardMapped shard_map(F f, spmd::Mesh mesh, SpecTree in_specs, SpecTree out_specs,
                      ShardMapOptions options = {},
                      std::source_location loc = std::source_location::current()) {
  return ShardMapped(AsTreeFunction(std::move(f)), std::move(mesh), std::move(in_specs),
                     std::move(out_specs), options, loc);
}

// The mesh of the innermost shard_map whose body is being traced on this
// thread, or null outside any (what the named collectives check).
const spmd::Mesh* ActiveShardMapMesh();

}  // namespace sharc::frontend

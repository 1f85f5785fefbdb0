#include "frontend/vmap.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "frontend/shape_ops.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"
#include "hlo/batching/vmap.h"

namespace sharc::frontend {

Tree Vmapped::operator()(const Tree& call_args) const {
  const std::source_location& loc = loc_;
  Tracer* tracer = Tracer::Current();
  if (tracer == nullptr) ThrowTraceError(loc, "vmap called outside of a traced function");
  // A function of one Tensor may be given its argument as a bare leaf.
  const Tree args = fn_.positional && call_args.is_leaf() ? Tree::list({call_args}) : call_args;
  auto [leaves, structure] = Flatten(args);
  absl::StatusOr<std::vector<std::optional<int64_t>>> axes = ExpandPrefix(in_axes_, structure);
  if (!axes.ok()) ThrowTraceError(loc, absl::StrCat("vmap in_axes: ", axes.status().message()));

  int64_t batch_size = -1;
  std::vector<Tensor> operands;
  std::vector<hlo::Shape> example_shapes;
  std::vector<bool> batched;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Tensor& leaf = leaves[i];
    const std::optional<int64_t>& axis = (*axes)[i];
    batched.push_back(axis.has_value());
    if (!axis.has_value()) {
      operands.push_back(leaf);
      example_shapes.push_back(leaf.shape());
      continue;
    }
    if (*axis < -leaf.rank() || *axis >= leaf.rank()) {
      ThrowTraceError(loc, absl::StrCat("vmap: axis ", *axis, " is out of range for argument leaf ",
                                        i, " (", leaf.ToString(), ")"));
    }
    const int64_t a = *axis < 0 ? *axis + leaf.rank() : *axis;
    if (batch_size >= 0 && leaf.dim(a) != batch_size) {
      ThrowTraceError(loc, absl::StrCat("vmap: argument leaf ", i, " (", leaf.ToString(),
                                        ") has size ", leaf.dim(a), " along axis ", a,
                                        " but earlier mapped arguments have size ", batch_size));
    }
    batch_size = leaf.dim(a);
    // hlo::Vmap batches along axis 0: move the mapped axis there.
    std::vector<int64_t> perm = {a};
    std::vector<int64_t> example_dims;
    for (int64_t d = 0; d < leaf.rank(); ++d) {
      if (d == a) continue;
      perm.push_back(d);
      example_dims.push_back(leaf.dim(d));
    }
    operands.push_back(transpose(leaf, perm, loc));
    example_shapes.push_back(hlo::Shape(leaf.dtype(), example_dims));
  }
  if (batch_size < 0) ThrowTraceError(loc, "vmap: no argument is mapped (every in_axes is None)");

  absl::StatusOr<TracedFunction> body =
      TraceComputation(fn_.fn, *Unflatten(structure, example_shapes), "vmap_body", false, loc);
  ThrowIfError(body.status(), loc);
  // Values the body captured from the enclosing function are shared by all
  // examples.
  batched.insert(batched.end(), body->captures.size(), false);
  operands.insert(operands.end(), body->captures.begin(), body->captures.end());
  // std::vector<bool> has no contiguous storage to make a Span from.
  std::unique_ptr<bool[]> batched_flags(new bool[batched.size()]);
  for (size_t i = 0; i < batched.size(); ++i) batched_flags[i] = batched[i];
  absl::StatusOr<hlo::Computation*> vectorized = hlo::Vmap(
      tracer->module(), *body->computation,
      absl::Span<const bool>(batched_flags.get(), batched.size()), batch_size,
      absl::StrCat(body->computation->name(), ".batched"));
  ThrowIfError(vectorized.status(), loc);
  // Only the batched computation is called; the per-example one would print
  // as dead code.
  tracer->module().RemoveComputation(body->computation);

  Tensor result = Emit(hlo::Opcode::kCall, operands, {{"to_apply", *vectorized}}, std::nullopt, loc);
  std::vector<Tensor> results;
  if (result.shape().is_tuple()) {
    for (int64_t i = 0; i < result.shape().tuple_size(); ++i) {
      results.push_back(TupleElement(result, i, loc));
    }
  } else {
    results.push_back(result);
  }
  absl::StatusOr<Tree> tree = Unflatten(body->results, std::move(results));
  ThrowIfError(tree.status(), loc);
  return *std::move(tree);
}

}  // namespace sharc::frontend

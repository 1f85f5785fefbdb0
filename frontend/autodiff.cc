#include "frontend/autodiff.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "autodiff/grad.h"
#include "autodiff/jvp.h"
#include "frontend/creation.h"
#include "frontend/elementwise.h"
#include "frontend/shape_ops.h"
#include "frontend/vmap.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"

namespace sharc::frontend::internal {
namespace {

ShapeTree ShapesOfTree(const Tree& tree) {
  return MapTree(tree, [](const Tensor& t) { return t.shape(); });
}

// Traces `fn` on the shapes of `args` into a computation nested in the
// current trace.
TracedFunction TraceBody(const TreeFunction& fn, bool positional, const Tree& args,
                         const char* what, const std::source_location& loc) {
  if (positional && !args.is_list()) {
    ThrowTraceError(loc, absl::StrCat(what, " of a function of Tensors takes its arguments as a list"));
  }
  absl::StatusOr<TracedFunction> body =
      TraceComputation(fn, ShapesOfTree(args), absl::StrCat(what, "_body"), false, loc);
  ThrowIfError(body.status(), loc);
  return *std::move(body);
}

// The values of a flat tuple (or a single array) as a tree of `structure`.
Tree Unpack(const Tensor& value, const TreeStructure& structure, const std::source_location& loc) {
  std::vector<Tensor> leaves;
  if (structure.kind() == TreeStructure::Kind::kLeaf && value.shape().is_array()) {
    leaves.push_back(value);
  } else {
    for (int64_t i = 0; i < value.shape().tuple_size(); ++i) {
      leaves.push_back(TupleElement(value, i, loc));
    }
  }
  absl::StatusOr<Tree> tree = Unflatten(structure, std::move(leaves));
  ThrowIfError(tree.status(), loc);
  return *std::move(tree);
}

// Emits a call of `derived` on `operands`.
Tensor CallDerived(hlo::Computation* derived, std::vector<Tensor> operands,
                   const std::source_location& loc) {
  return Emit(hlo::Opcode::kCall, operands, {hlo::Attribute{"to_apply", derived}}, std::nullopt,
              loc);
}

std::vector<Tensor> OperandsOf(const Tree& args, const TracedFunction& body) {
  std::vector<Tensor> operands = Flatten(args).first;
  operands.insert(operands.end(), body.captures.begin(), body.captures.end());
  return operands;
}

hlo::Computation* Derived(absl::StatusOr<hlo::Computation*> derived, const char* what,
                          const std::source_location& loc) {
  if (!derived.ok()) {
    ThrowTraceError(loc, absl::StrCat(what, ": ", derived.status().message()),
                    derived.status().code());
  }
  return *derived;
}

}  // namespace

Tree Derive(const TreeFunction& fn, bool positional, const Tree& args,
            const std::vector<int64_t>& argnums, DerivativeKind kind,
            const std::source_location& loc) {
  const char* what = kind == DerivativeKind::kGrad ? "grad" : "value_and_grad";
  TracedFunction body = TraceBody(fn, positional, args, what, loc);
  if (body.result_shapes.size() != 1 || !body.result_shapes[0].is_scalar() ||
      !hlo::IsFloatingPoint(body.result_shapes[0].type())) {
    ThrowTraceError(loc, absl::StrCat(what, " needs a function returning a floating-point scalar; "
                                            "this one returns ",
                                      body.results.ToString(), " of ",
                                      body.result_shapes.empty() ? std::string("nothing")
                                                                 : body.result_shapes[0].ToString()));
  }
  // Which parameter leaves to differentiate, and the structure of the result.
  std::vector<int64_t> wrt;
  std::vector<TreeStructure> selected;
  if (positional) {
    int64_t first_leaf = 0;
    std::vector<int64_t> starts;
    for (const Tree& arg : args.elements()) {
      starts.push_back(first_leaf);
      first_leaf += StructureOf(arg).num_leaves();
    }
    for (int64_t argnum : argnums) {
      if (argnum < 0 || argnum >= static_cast<int64_t>(args.size())) {
        ThrowTraceError(loc, absl::StrCat(what, ": argnum ", argnum, " is out of range for ",
                                          args.size(), " arguments"));
      }
      const TreeStructure s = StructureOf(args[argnum]);
      for (int64_t i = 0; i < s.num_leaves(); ++i) wrt.push_back(starts[argnum] + i);
      selected.push_back(s);
    }
  } else {
    for (int64_t i = 0; i < StructureOf(args).num_leaves(); ++i) wrt.push_back(i);
    selected.push_back(StructureOf(args));
  }
  hlo::Module& module = Tracer::Current()->module();
  hlo::Computation* derived =
      kind == DerivativeKind::kGrad
          ? Derived(autodiff::Grad(module, *body.computation, wrt), what, loc)
          : Derived(autodiff::ValueAndGrad(module, *body.computation, wrt), what, loc);
  Tensor result = CallDerived(derived, OperandsOf(args, body), loc);
  Tensor grads = kind == DerivativeKind::kGrad ? result : TupleElement(result, 1, loc);
  // The gradient tuple holds one leaf per differentiated parameter leaf.
  const TreeStructure structure = positional && argnums.size() != 1
                                      ? TreeStructure::List(selected)
                                      : selected[0];
  Tree gradient = Unpack(grads, structure, loc);
  if (kind == DerivativeKind::kGrad) return gradient;
  return Tree::list({Tree(TupleElement(result, 0, loc)), gradient});
}

Tree JvpOf(const TreeFunction& fn, bool positional, const Tree& primals, const Tree& tangents,
           const std::source_location& loc) {
  if (!(StructureOf(primals) == StructureOf(tangents))) {
    ThrowTraceError(loc, absl::StrCat("jvp: tangents ", StructureOf(tangents).ToString(),
                                      " do not match primals ", StructureOf(primals).ToString()));
  }
  TracedFunction body = TraceBody(fn, positional, primals, "jvp", loc);
  hlo::Computation* derived =
      Derived(autodiff::Jvp(Tracer::Current()->module(), *body.computation), "jvp", loc);
  // Parameters: primals (with captures), then one tangent per parameter;
  // captured values are constants of the function: zero tangents.
  std::vector<Tensor> operands = OperandsOf(primals, body);
  std::vector<Tensor> tangent_leaves = Flatten(tangents).first;
  for (const Tensor& captured : body.captures) tangent_leaves.push_back(zeros_like(captured, loc));
  operands.insert(operands.end(), tangent_leaves.begin(), tangent_leaves.end());
  Tensor result = CallDerived(derived, operands, loc);
  return Tree::list({Unpack(TupleElement(result, 0, loc), body.results, loc),
                     Unpack(TupleElement(result, 1, loc), body.results, loc)});
}

Tree VjpOf(const TreeFunction& fn, bool positional, const Tree& primals, const Tree& cotangent,
           const std::source_location& loc) {
  TracedFunction body = TraceBody(fn, positional, primals, "vjp", loc);
  if (!(StructureOf(cotangent) == body.results)) {
    ThrowTraceError(loc, absl::StrCat("vjp: the cotangent ", StructureOf(cotangent).ToString(),
                                      " does not match the result ", body.results.ToString()));
  }
  hlo::Computation* derived =
      Derived(autodiff::Vjp(Tracer::Current()->module(), *body.computation), "vjp", loc);
  std::vector<Tensor> operands = OperandsOf(primals, body);
  std::vector<Tensor> ct = Flatten(cotangent).first;
  if (ct.size() == 1) {
    operands.push_back(ct[0]);
  } else {
    operands.push_back(Emit(hlo::Opcode::kTuple, ct, {}, std::nullopt, loc));
  }
  Tensor result = CallDerived(derived, operands, loc);
  // (f(x), ct_0, ..., ct_{n-1}, cotangents of the captures, which are dropped)
  std::vector<Tensor> leaves;
  const int64_t n = StructureOf(primals).num_leaves();
  for (int64_t i = 0; i < n; ++i) leaves.push_back(TupleElement(result, 1 + i, loc));
  absl::StatusOr<Tree> grads = Unflatten(StructureOf(primals), std::move(leaves));
  ThrowIfError(grads.status(), loc);
  return Tree::list({Unpack(TupleElement(result, 0, loc), body.results, loc), *grads});
}

Tensor Jacobian(const TreeFunction& fn, const Tensor& x, bool forward,
                const std::source_location& loc) {
  // The function is called positionally with x alone.
  const Tree primals = Tree::list({Tree(x)});
  const Tensor y = fn(primals).leaf();
  const int64_t in = x.shape().num_elements();
  const int64_t out = y.shape().num_elements();
  const int64_t n = forward ? in : out;
  // Basis vectors e_0..e_{n-1}, shaped like x (forward) or y (reverse).
  Tensor identity = astype(equal(iota({n, n}, 0, s32, loc), iota({n, n}, 1, s32, loc), loc),
                           x.dtype(), loc);
  std::vector<int64_t> basis_dims = {n};
  const std::vector<int64_t>& unit_dims = forward ? x.dims() : y.dims();
  basis_dims.insert(basis_dims.end(), unit_dims.begin(), unit_dims.end());
  Tensor basis = reshape(identity, basis_dims, loc);
  Tensor rows;
  if (forward) {
    rows = vmap([&](Tensor t) { return JvpOf(fn, true, primals, Tree::list({Tree(t)}), loc)[1].leaf(); },
                AxisTree(0), loc)(basis)
               .leaf();
  } else {
    rows = vmap([&](Tensor ct) { return VjpOf(fn, true, primals, Tree(ct), loc)[1][0].leaf(); },
                AxisTree(0), loc)(basis)
               .leaf();
  }
  // rows: [in, y dims] (forward) or [out, x dims] (reverse) -> [y dims, x dims].
  std::vector<int64_t> result_dims = y.dims();
  result_dims.insert(result_dims.end(), x.dims().begin(), x.dims().end());
  if (!forward) return reshape(rows, result_dims, loc);
  Tensor flat = reshape(rows, {in, out}, loc);
  return reshape(transpose(flat, {1, 0}, loc), result_dims, loc);
}

}  // namespace sharc::frontend::internal

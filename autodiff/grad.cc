#include "autodiff/grad.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autodiff/linearizer.h"
#include "autodiff/transform_util.h"
#include "autodiff/transposer.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/primitive_type.h"

namespace sharc::autodiff {
namespace {

struct Reverse {
  Instruction* value = nullptr;
  std::vector<Instruction*> cotangents;  // one per parameter of f
};

// Emits f's primal part into `e` (parameters bound to `xs`) and, right after
// it, the transpose of its linear part applied to `ct`. The linear part is
// built in a scratch computation whose residual parameters are bound to the
// primal values they came from.
absl::StatusOr<Reverse> EmitReverse(Module& module, const Computation& f, Emitter& e,
                                    const std::vector<Instruction*>& xs,
                                    const std::function<Instruction*(Instruction*)>& make_ct) {
  Computation* linear = NewComputation(module, f.name() + ".linear");
  Emitter le(linear);
  std::vector<Instruction*> ts;
  std::vector<LinearTree> trees;
  const int64_t n = f.num_parameters();
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* p = f.parameter(i);
    Instruction* t = le.Add(
        Instruction::CreateParameter(i, absl::StrCat("tangent.", p->name()), p->shape()), true);
    const bool on = CarriesTangent(p->shape());
    ts.push_back(on ? t : nullptr);
    trees.push_back(LinearTree::Uniform(p->shape(), on));
  }
  Linearizer linearizer(e, le, /*split=*/true);
  ASSIGN_OR_RETURN(JvpValue root, linearizer.Run(f, xs, ts));
  le.set_origin(f.root());
  linear->set_root(root.tangent != nullptr ? root.tangent : Zeros(le, f.root()->shape()));
  std::vector<Instruction*> values(static_cast<size_t>(n), nullptr);
  for (Instruction* r : linearizer.residuals()) {
    values.push_back(r);
    trees.push_back(LinearTree::Uniform(r->shape(), false));
  }
  Reverse out;
  out.value = root.primal;
  Instruction* ct = make_ct(root.primal);
  Transposer transposer(e);
  ASSIGN_OR_RETURN(std::vector<Cotangent> cts,
                   transposer.Run(*linear, trees, values, Cotangent::Of(ct)));
  for (int64_t i = 0; i < n; ++i) {
    out.cotangents.push_back(
        transposer.Materialize(cts[static_cast<size_t>(i)], f.parameter(i)->shape()));
  }
  return out;
}

// f's parameters, copied into a new computation.
std::vector<Instruction*> CopyParameters(const Computation& f, Emitter& e) {
  std::vector<Instruction*> xs;
  for (int64_t i = 0; i < f.num_parameters(); ++i) {
    const Instruction* p = f.parameter(i);
    Instruction* x = e.Add(Instruction::CreateParameter(i, p->name(), p->shape()), true);
    if (p->sharding()) x->set_sharding(*p->sharding());
    x->set_location(p->location());
    xs.push_back(x);
  }
  return xs;
}

absl::StatusOr<std::vector<int64_t>> CheckGradable(const Computation& f,
                                                   std::vector<int64_t> wrt) {
  const Instruction* root = f.root();
  const Shape& y = root->shape();
  if (!y.is_array() || y.rank() != 0 || !hlo::IsFloatingPoint(y.type())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "grad needs a function with a floating-point scalar result, but '", f.name(),
        "' returns ", y.ToString(), " (from ", root->Describe(),
        "); use vjp for other results"));
  }
  if (wrt.empty()) {
    for (int64_t i = 0; i < f.num_parameters(); ++i) {
      const Shape& s = f.parameter(i)->shape();
      if (s.is_array() && IsDifferentiableType(s.type())) wrt.push_back(i);
    }
    if (wrt.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grad of '", f.name(), "': it has no floating-point parameter to differentiate by"));
    }
  }
  for (int64_t i : wrt) {
    if (i < 0 || i >= f.num_parameters()) {
      return absl::InvalidArgumentError(absl::StrCat("grad of '", f.name(), "': parameter ", i,
                                                     " does not exist (it has ",
                                                     f.num_parameters(), ")"));
    }
    const Instruction* p = f.parameter(i);
    if (!CarriesTangent(p->shape()) || p->shape().is_tuple()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "grad of '", f.name(), "' with respect to parameter ", i, " (", p->name(), ": ",
          p->shape().ToString(),
          ") is not defined: only floating-point and complex array parameters have gradients"));
    }
  }
  return wrt;
}

absl::StatusOr<Computation*> BuildGrad(Module& module, const Computation& f,
                                       std::vector<int64_t> wrt, bool with_value) {
  ASSIGN_OR_RETURN(wrt, CheckGradable(f, std::move(wrt)));
  return RunTransform(module, f, "grad", [&]() -> absl::StatusOr<Computation*> {
    Computation* g =
        NewComputation(module, f.name() + (with_value ? ".value_and_grad" : ".grad"));
    Emitter e(g);
    std::vector<Instruction*> xs = CopyParameters(f, e);
    ASSIGN_OR_RETURN(Reverse r, EmitReverse(module, f, e, xs, [&](Instruction* y) {
                       return Full(e, y->shape(), 1.0);
                     }));
    e.set_origin(f.root());
    std::vector<Instruction*> grads;
    for (int64_t i : wrt) grads.push_back(r.cotangents[static_cast<size_t>(i)]);
    Instruction* result = Tuple(e, std::move(grads));
    g->set_root(with_value ? Tuple(e, {r.value, result}) : result);
    return g;
  });
}

}  // namespace

absl::StatusOr<Computation*> Vjp(Module& module, const Computation& f) {
  return RunTransform(module, f, "vjp", [&]() -> absl::StatusOr<Computation*> {
    Computation* v = NewComputation(module, f.name() + ".vjp");
    Emitter e(v);
    std::vector<Instruction*> xs = CopyParameters(f, e);
    const int64_t n = f.num_parameters();
    ASSIGN_OR_RETURN(Reverse r, EmitReverse(module, f, e, xs, [&](Instruction* y) {
                       return e.Add(Instruction::CreateParameter(n, "cotangent", y->shape()),
                                    true);
                     }));
    e.set_origin(f.root());
    std::vector<Instruction*> results = {r.value};
    for (Instruction* c : r.cotangents) results.push_back(c);
    v->set_root(Tuple(e, std::move(results)));
    return v;
  });
}

absl::StatusOr<Computation*> Grad(Module& module, const Computation& f, std::vector<int64_t> wrt) {
  return BuildGrad(module, f, std::move(wrt), /*with_value=*/false);
}

absl::StatusOr<Computation*> ValueAndGrad(Module& module, const Computation& f,
                                          std::vector<int64_t> wrt) {
  return BuildGrad(module, f, std::move(wrt), /*with_value=*/true);
}

absl::StatusOr<std::unique_ptr<Module>> GradModule(const Module& module,
                                                   std::vector<int64_t> wrt) {
  return TransformEntry(module, [&](Module& m, const Computation& f) {
    return Grad(m, f, wrt);
  });
}

}  // namespace sharc::autodiff

#include "autodiff/jvp.h"

#include "absl/strings/str_cat.h"
#include "autodiff/linearizer.h"
#include "autodiff/transform_util.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {

absl::StatusOr<Computation*> Jvp(Module& module, const Computation& f) {
  return RunTransform(module, f, "jvp", [&]() -> absl::StatusOr<Computation*> {
    Computation* jvp = NewComputation(module, f.name() + ".jvp");
    Emitter e(jvp);
    const int64_t n = f.num_parameters();
    std::vector<Instruction*> xs;
    std::vector<Instruction*> ts;
    for (int64_t i = 0; i < n; ++i) {
      const Instruction* p = f.parameter(i);
      xs.push_back(e.Add(Instruction::CreateParameter(i, p->name(), p->shape()), true));
    }
    for (int64_t i = 0; i < n; ++i) {
      const Instruction* p = f.parameter(i);
      Instruction* t = e.Add(
          Instruction::CreateParameter(n + i, absl::StrCat("tangent.", p->name()), p->shape()),
          true);
      ts.push_back(CarriesTangent(p->shape()) ? t : nullptr);
    }
    Linearizer linearizer(e, e, /*split=*/false);
    ASSIGN_OR_RETURN(JvpValue root, linearizer.Run(f, xs, ts));
    e.set_origin(f.root());
    Instruction* tangent = root.tangent != nullptr ? root.tangent : Zeros(e, f.root()->shape());
    jvp->set_root(Tuple(e, {root.primal, tangent}));
    return jvp;
  });
}

absl::StatusOr<std::unique_ptr<Module>> JvpModule(const Module& module) {
  return TransformEntry(module, [](Module& m, const Computation& f) { return Jvp(m, f); });
}

}  // namespace sharc::autodiff

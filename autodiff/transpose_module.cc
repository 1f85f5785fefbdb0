#include "autodiff/transpose_module.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "autodiff/builder.h"
#include "autodiff/linearizer.h"
#include "autodiff/transform_util.h"
#include "autodiff/transpose_naming.h"
#include "autodiff/transposer.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/primitive_type.h"

namespace sharc::autodiff {
namespace {

absl::StatusOr<std::vector<bool>> LinearParameters(const Computation& f, int64_t num_linear) {
  const int64_t n = f.num_parameters();
  if (num_linear > n) {
    return absl::InvalidArgumentError(absl::StrCat("transpose of '", f.name(), "': ", num_linear,
                                                   " linear parameters requested, it has ", n));
  }
  std::vector<bool> linear;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = f.parameter(i)->shape();
    const bool floating = s.is_array() && IsDifferentiableType(s.type());
    if (num_linear >= 0 && i < num_linear && !floating) {
      return absl::InvalidArgumentError(
          absl::StrCat("transpose of '", f.name(), "': parameter ", i, " (", f.parameter(i)->name(),
                       ": ", s.ToString(), ") cannot be linear: only floating-point and complex arrays are"));
    }
    linear.push_back(num_linear < 0 ? floating : i < num_linear);
  }
  if (std::find(linear.begin(), linear.end(), true) == linear.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transpose of '", f.name(), "': it has no floating-point or complex parameter to be linear in"));
  }
  return linear;
}

absl::StatusOr<Computation*> BuildTranspose(Module& module, const Computation& f,
                                            int64_t num_linear) {
  ASSIGN_OR_RETURN(std::vector<bool> linear, LinearParameters(f, num_linear));
  Computation* t = module.AddComputation(
      std::make_unique<Computation>(TransposedComputationName(module, f.name())));
  Emitter e(t);
  e.set_origin(f.root());
  // Cotangent parameters first, one per result element, laid out like the
  // results; then the parameters that pass through (so transposing twice
  // keeps the parameter order).
  int64_t number = 0;
  const Shape& y = f.root()->shape();
  const Instruction* root = f.root();
  const std::vector<std::string> names = ResultElementNames(f);
  std::vector<Cotangent> elements;
  for (size_t k = 0; k < names.size(); ++k) {
    const Shape& shape = y.is_tuple() ? y.tuple_shape(static_cast<int64_t>(k)) : y;
    Instruction* ct = e.Add(Instruction::CreateParameter(number++, names[k], shape), true);
    const Instruction* element =
        root->opcode() == Opcode::kTuple ? root->operand(static_cast<int64_t>(k)) : root;
    if ((!y.is_tuple() || root->opcode() == Opcode::kTuple) && element->sharding()) {
      ct->set_sharding(*element->sharding());
    }
    elements.push_back(Cotangent::Of(ct));
  }
  const int64_t n = f.num_parameters();
  std::vector<LinearTree> trees;
  std::vector<Instruction*> values(static_cast<size_t>(n), nullptr);
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* p = f.parameter(i);
    trees.push_back(LinearTree::Uniform(p->shape(), linear[static_cast<size_t>(i)]));
    if (linear[static_cast<size_t>(i)]) continue;
    Instruction* v = e.Add(Instruction::CreateParameter(number++, p->name(), p->shape()), true);
    if (p->sharding()) v->set_sharding(*p->sharding());
    values[static_cast<size_t>(i)] = v;
  }
  Cotangent root_ct = y.is_tuple() ? Cotangent{nullptr, std::move(elements)} : elements[0];
  Transposer transposer(e);
  ASSIGN_OR_RETURN(std::vector<Cotangent> cts, transposer.Run(f, trees, values, root_ct));
  std::vector<Instruction*> results;
  std::vector<int64_t> owners;
  for (int64_t i = 0; i < n; ++i) {
    if (!linear[static_cast<size_t>(i)]) continue;
    results.push_back(transposer.Materialize(cts[static_cast<size_t>(i)], f.parameter(i)->shape()));
    owners.push_back(i);
  }
  for (size_t j = 0; j < results.size(); ++j) {
    if (std::find(results.begin(), results.begin() + static_cast<int64_t>(j), results[j]) ==
        results.begin() + static_cast<int64_t>(j)) {
      NameCotangent(results[j], f.parameter(owners[j])->name());
    }
  }
  t->set_root(results.size() == 1 ? results[0] : Tuple(e, results));
  return t;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> TransposeModule(const Module& module, int64_t num_linear) {
  return TransformEntry(module, [&](Module& m, const Computation& f) {
    return RunTransform(m, f, "transpose", [&]() { return BuildTranspose(m, f, num_linear); });
  });
}

}  // namespace sharc::autodiff

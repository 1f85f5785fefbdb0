#include "autodiff/jvp_rules/reducer_application.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "autodiff/linearizer.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/vmap.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {

absl::StatusOr<const Computation*> ReducerApplication::Vectorized(int64_t size) {
  auto it = vectorized_.find(size);
  if (it != vectorized_.end()) return it->second;
  const Computation& reducer = *inst_.attr_computation("to_apply");
  // Every parameter is batched (a std::vector<bool> cannot back a Span).
  const size_t params = static_cast<size_t>(reducer.num_parameters());
  std::unique_ptr<bool[]> batched(new bool[params]);
  std::fill(batched.get(), batched.get() + params, true);
  absl::StatusOr<Computation*> vectorized =
      hlo::Vmap(ModuleOf(ctx_.primal()), reducer, absl::MakeConstSpan(batched.get(), params),
                size, reducer.name() + ".elementwise");
  if (!vectorized.ok()) {
    return hlo::OpError(inst_, "is not differentiable: its reducer %", reducer.name(),
                        " cannot be applied to whole arrays (", vectorized.status().message(),
                        ")");
  }
  vectorized_[size] = *vectorized;
  return *vectorized;
}

Instruction* ReducerApplication::TangentOrZeros(const JvpValue& v) {
  return v.tangent != nullptr ? v.tangent : Zeros(ctx_.tangent(), v.primal->shape());
}

Instruction* ReducerApplication::ResultTangent(const ReductionState& state) {
  if (state.size() == 1) return state[0].tangent;
  bool any = false;
  for (const JvpValue& v : state) any |= v.tangent != nullptr;
  if (!any) return nullptr;
  std::vector<Instruction*> leaves;
  for (const JvpValue& v : state) leaves.push_back(TangentOrZeros(v));
  return Tuple(ctx_.tangent(), std::move(leaves));
}

ReductionState ReducerApplication::Map(
    const ReductionState& state, const std::function<Instruction*(Emitter&, Instruction*)>& fn) {
  ReductionState out;
  for (const JvpValue& v : state) {
    out.push_back(JvpValue{fn(ctx_.primal(), v.primal),
                           v.tangent != nullptr ? fn(ctx_.tangent(), v.tangent) : nullptr});
  }
  return out;
}

ReductionState ReducerApplication::Select(Instruction* pred, const ReductionState& a,
                                          const ReductionState& b) {
  ReductionState out;
  Instruction* tangent_pred = nullptr;
  for (size_t i = 0; i < a.size(); ++i) {
    JvpValue v;
    v.primal = autodiff::Select(ctx_.primal(), pred, a[i].primal, b[i].primal);
    if (a[i].tangent != nullptr || b[i].tangent != nullptr) {
      if (tangent_pred == nullptr) tangent_pred = ctx_.Residual(pred);
      v.tangent = autodiff::Select(ctx_.tangent(), tangent_pred, TangentOrZeros(a[i]),
                                   TangentOrZeros(b[i]));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<ReductionState> ReducerApplication::Apply(const ReductionState& acc,
                                                         const ReductionState& x) {
  const std::vector<int64_t> dims = acc[0].primal->shape().dims();
  int64_t size = 1;
  for (int64_t d : dims) size *= d;
  const size_t n = acc.size();
  if (size == 0) {
    // Nothing to combine: any value of the right shape will do.
    return acc;
  }
  ASSIGN_OR_RETURN(const Computation* vectorized, Vectorized(size));
  std::vector<Instruction*> primals;
  std::vector<Instruction*> tangents;
  for (const ReductionState* state : {&acc, &x}) {
    for (const JvpValue& v : *state) {
      primals.push_back(Reshape(ctx_.primal(), v.primal, {size}));
      tangents.push_back(v.tangent != nullptr ? Reshape(ctx_.tangent(), v.tangent, {size})
                                              : nullptr);
    }
  }
  absl::StatusOr<JvpValue> result = ctx_.Inline(*vectorized, primals, tangents);
  ctx_.primal().set_origin(&inst_);
  ctx_.tangent().set_origin(&inst_);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(result.status().message(), "; differentiating the reducer %",
                                     inst_.attr_computation("to_apply")->name(), " of ",
                                     inst_.Describe()));
  }
  ReductionState out;
  for (size_t i = 0; i < n; ++i) {
    JvpValue leaf = *result;
    if (n > 1) {
      leaf.primal = Gte(ctx_.primal(), result->primal, static_cast<int64_t>(i));
      leaf.tangent = result->tangent != nullptr
                         ? Gte(ctx_.tangent(), result->tangent, static_cast<int64_t>(i))
                         : nullptr;
    }
    if (!IsDifferentiableType(leaf.primal->shape().type())) leaf.tangent = nullptr;
    leaf.primal = Reshape(ctx_.primal(), leaf.primal, dims);
    if (leaf.tangent != nullptr) leaf.tangent = Reshape(ctx_.tangent(), leaf.tangent, dims);
    out.push_back(leaf);
  }
  return out;
}

}  // namespace sharc::autodiff

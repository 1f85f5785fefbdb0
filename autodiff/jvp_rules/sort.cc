// JVP of sort: sorting moves elements, so each output's tangent is its
// operand's tangent moved the same way. The primal sorts an iota along
// with the operands (the comparator ignores it) to get the permutation, and
// the tangent gathers along the sort dimension with it (take-along-axis):
//
//   (y..., perm) = sort(x..., iota(d)), to_apply=cmp'   cmp' calls cmp on the first 2n parameters
//   ty_i[..., j, ...] = tx_i[..., perm[..., j, ...], ...]
//
// The gather is linear in the tangent, so reverse mode transposes it into a
// scatter-add. topk's values take the operand's tangent the same way, at
// the indices it returns.
#include "absl/strings/str_cat.h"
#include "autodiff/builder.h"
#include "autodiff/jvp_rule.h"
#include "autodiff/linearizer.h"
#include "autodiff/ops_outside_autodiff.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

// cmp' : cmp with two more (s32) parameters, which it ignores.
Computation* ComparatorWithIndex(hlo::Module& module, const Computation& cmp) {
  Computation* out = NewComputation(module, absl::StrCat(cmp.name(), ".with_index"));
  std::vector<Instruction*> args;
  for (int64_t i = 0; i < cmp.num_parameters(); ++i) {
    args.push_back(out->AddInstruction(Instruction::CreateParameter(
        i, absl::StrCat("p", i), cmp.parameter(i)->shape())));
  }
  const Shape index = Shape::Scalar(PrimitiveType::kS32);
  for (int64_t i = 0; i < 2; ++i) {
    const int64_t number = cmp.num_parameters() + i;
    out->AddInstruction(Instruction::CreateParameter(number, absl::StrCat("p", number), index));
  }
  auto call = Instruction::Create(Opcode::kCall, "less", Shape::Scalar(PrimitiveType::kPred), args);
  call->set_attr("to_apply", const_cast<Computation*>(&cmp));
  out->set_root(out->AddInstruction(std::move(call)));
  return out;
}

Instruction* Iota(hlo::Emitter& e, const std::vector<int64_t>& dims, int64_t dim) {
  return e.Add(Opcode::kIota, Shape(PrimitiveType::kS32, dims), {},
               {{"iota_dimension", int64_t{dim}}});
}

// t read at `perm` along `dim`: out[i] = t[i with i_dim replaced by
// perm[i]], shaped like perm (which may be shorter along `dim`, as topk's
// indices are).
Instruction* TakeAlongDim(hlo::Emitter& e, Instruction* t, Instruction* perm, int64_t dim) {
  const std::vector<int64_t>& dims = perm->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> column = dims;
  column.push_back(1);
  std::vector<Instruction*> parts;
  for (int64_t d = 0; d < rank; ++d) {
    Instruction* index = d == dim ? perm : Iota(e, dims, d);
    parts.push_back(Reshape(e, index, column));
  }
  std::vector<int64_t> indices_dims = dims;
  indices_dims.push_back(rank);
  Instruction* indices = e.Add(Opcode::kConcatenate, Shape(PrimitiveType::kS32, indices_dims),
                               parts, {{"dimensions", hlo::IntList{rank}}});
  hlo::IntList all;
  for (int64_t d = 0; d < rank; ++d) all.push_back(d);
  return e.Add(Opcode::kGather, Shape(t->shape().type(), dims), {t, indices},
               {{"offset_dims", hlo::IntList{}},
                {"collapsed_slice_dims", all},
                {"start_index_map", all},
                {"index_vector_dim", int64_t{rank}},
                {"slice_sizes", hlo::IntList(static_cast<size_t>(rank), 1)}});
}

absl::StatusOr<JvpValue> SortJvp(const Instruction& inst, const JvpArgs& a, JvpContext& ctx) {
  bool any_tangent = false;
  for (Instruction* t : a.tangents) any_tangent = any_tangent || t != nullptr;
  if (!any_tangent || !CarriesTangent(inst.shape())) {
    return JvpValue{ctx.EmitPrimal(inst, a.primals), nullptr};
  }
  hlo::Emitter& p = ctx.primal();
  const std::vector<int64_t>& dims = inst.operand(0)->shape().dims();
  if (dims[static_cast<size_t>(inst.attr_ints("dimensions")[0])] > (int64_t{1} << 31) - 1) {
    return hlo::OpError(inst, "is too long to differentiate: its permutation is s32");
  }
  const int64_t dim = inst.attr_ints("dimensions")[0];
  std::vector<Instruction*> operands = a.primals;
  operands.push_back(Iota(p, dims, dim));
  std::vector<Shape> shapes;
  for (Instruction* op : operands) shapes.push_back(op->shape());
  auto sort = hlo::CloneWithOperands(inst, operands);
  sort->set_shape(Shape::Tuple(shapes));
  sort->clear_sharding();
  sort->set_attr("to_apply", ComparatorWithIndex(ModuleOf(p), *inst.attr_computation("to_apply")));
  Instruction* sorted = p.Add(std::move(sort));
  const int64_t n = inst.operand_count();
  std::vector<Instruction*> outputs;
  for (int64_t i = 0; i < n; ++i) outputs.push_back(Gte(p, sorted, i));
  Instruction* primal = n == 1 ? outputs[0] : Tuple(p, outputs);
  Instruction* perm = ctx.Residual(Gte(p, sorted, n));
  std::vector<Instruction*> tangents;
  for (int64_t i = 0; i < n; ++i) {
    tangents.push_back(TakeAlongDim(ctx.tangent(), a.TangentOrZeros(ctx, i), perm, dim));
  }
  return JvpValue{primal, n == 1 ? tangents[0] : Tuple(ctx.tangent(), tangents)};
}

// JVP of topk: the values are the operand's at the indices topk returns,
// so their tangent is the operand's tangent taken at those indices along
// the last dim; the indices carry none.
//
//   (v, i) = topk(x), k=K      tv[..., j] = tx[..., i[..., j]]
absl::StatusOr<JvpValue> TopKJvp(const Instruction& inst, const JvpArgs& a, JvpContext& ctx) {
  Instruction* primal = ctx.EmitPrimal(inst, a.primals);
  if (a.tangents.empty() || a.tangents[0] == nullptr) return JvpValue{primal, nullptr};
  hlo::Emitter& p = ctx.primal();
  Instruction* indices = ctx.Residual(Gte(p, primal, 1));
  const int64_t last = inst.operand(0)->shape().rank() - 1;
  Instruction* values = TakeAlongDim(ctx.tangent(), a.tangents[0], indices, last);
  Instruction* no_tangent = Zeros(ctx.tangent(), inst.shape().tuple_shape(1));
  return JvpValue{primal, Tuple(ctx.tangent(), {values, no_tangent})};
}

}  // namespace

void RegisterSortAndTokenJvpRules(JvpRuleRegistry& r) {
  r.RegisterPrimalAndTangent(Opcode::kSort, SortJvp);
  r.RegisterPrimalAndTangent(Opcode::kTopK, TopKJvp);
  // A token has no derivative; the transfers cannot run. Random draws are
  // constants to autodiff (as in JAX, where keys carry no tangent).
  for (Opcode op : {Opcode::kAfterAll, Opcode::kRng, Opcode::kRngBitGenerator,
                    Opcode::kRngGetAndUpdateState}) {
    r.RegisterZeroDerivative(op);
  }
  r.RegisterUnsupported(Opcode::kBitcastConvert,
                        "bitcast-convert reinterprets bits, which is not differentiable");
  RegisterOpsOutsideAutodiff(r);
}

}  // namespace sharc::autodiff

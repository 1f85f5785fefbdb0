#include "autodiff/shard_map_transpose.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autodiff/shard_map_region.h"
#include "autodiff/shard_map_variance.h"
#include "autodiff/transpose_naming.h"
#include "autodiff/transposer.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/named_collectives.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

std::string Braced(const Axes& axes) { return absl::StrCat("{", absl::StrJoin(axes, ","), "}"); }

Axes Minus(const Axes& a, const Axes& b) {
  Axes out;
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) == b.end()) out.push_back(x);
  }
  return out;
}

Axes Intersect(const Axes& a, const Axes& b) {
  Axes out;
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) out.push_back(x);
  }
  return out;
}

constexpr char kTypeHint[] =
    "; the transpose of a checked body needs every cast between invariant and varying values "
    "explicit: run the variance pass first (spmd::InferDeviceVariance; sharc's commands do), "
    "or write the pbroadcast";

// In a checked body, a linear value that is implicitly cast up (used by an
// op more varying than itself, or by a collective that needs it varying)
// would transpose without the psum its cast needs. The variance pass makes
// every such cast an explicit pbroadcast, and the bodies autodiff builds
// from typed bodies keep them; this refuses the rest rather than give a
// wrong transpose. Control-flow callees are typed by the variance pass,
// which lifts their joins explicitly, and are not rechecked here.
absl::Status CheckCastsExplicit(const Instruction& shard_map, const Computation& body,
                                const hlo::ManualMesh& mesh, const BodyVariance& variance,
                                const absl::flat_hash_map<const Instruction*, LinearTree>& linear) {
  auto is_linear = [&](const Instruction* v) {
    auto it = linear.find(v);
    return it != linear.end() && it->second.Any();
  };
  for (const Instruction* inst : body.instructions()) {
    if (!is_linear(inst)) continue;
    // Ops that only move values (their data-flow edges) cast nothing.
    if (inst->opcode() == Opcode::kParameter || hlo::GetOpDef(inst->opcode()).data_flow) {
      continue;
    }
    if (const hlo::NamedCollectiveInfo* info = hlo::FindNamedCollective(inst->opcode())) {
      if (inst->operand_count() == 0 || !is_linear(inst->operand(0))) continue;
      ASSIGN_OR_RETURN(Axes axes, hlo::CollectiveAxes(*inst, mesh));
      const Axes have = variance.Of(inst->operand(0));
      if (info->operand == hlo::OperandVariance::kVarying) {
        Axes missing = Minus(axes, have);
        if (!missing.empty()) {
          return hlo::OpError(*inst, "in the body of shard_map %", shard_map.name(),
                              " needs its operand %", inst->operand(0)->name(), " varying over ",
                              Braced(axes), " but it varies over ", Braced(have), kTypeHint,
                              " (pbroadcast over ", Braced(missing), ")");
        }
      } else if (info->operand == hlo::OperandVariance::kInvariant) {
        Axes already = Intersect(axes, have);
        if (!already.empty()) {
          return hlo::OpError(*inst, "in the body of shard_map %", shard_map.name(),
                              " casts to varying over ", Braced(already),
                              " a value already varying over them; drop those axes");
        }
      }
      continue;
    }
    const Axes result = variance.Of(inst);
    for (const Instruction* op : inst->operands()) {
      if (!is_linear(op)) continue;
      const Axes have = variance.Of(op);
      if (have != result) {
        return hlo::OpError(*inst, "in the body of shard_map %", shard_map.name(), " varies over ",
                            Braced(result), " but its linear operand %", op->name(),
                            " varies over ", Braced(have), kTypeHint, " (pbroadcast(%", op->name(),
                            "), axes=", Braced(Minus(result, have)), ")");
      }
    }
  }
  return absl::OkStatus();
}

Instruction* Psum(Emitter& e, Instruction* x, const Axes& axes) {
  return EmitCollective(e, Opcode::kPSum, x->shape(), x, hlo::PrintAxesText(axes));
}

}  // namespace

absl::StatusOr<std::vector<Cotangent>> TransposeShardMap(const Instruction& inst,
                                                         const Cotangent& ct,
                                                         TransposeContext& ctx) {
  ASSIGN_OR_RETURN(ShardMapSignature sig, ReadShardMap(inst));
  const Computation& body = *inst.attr_computation("to_apply");
  const hlo::ManualMesh& mesh = sig.mesh;
  const int64_t n = inst.operand_count();
  const size_t outputs = sig.out_specs.size();
  const bool tuple = inst.shape().is_tuple();

  std::vector<LinearTree> trees;
  std::vector<Axes> param_axes;
  for (int64_t i = 0; i < n; ++i) {
    trees.push_back(LinearTree::Uniform(sig.local_inputs[static_cast<size_t>(i)],
                                        ctx.IsLinear(inst.operand(i))));
    param_axes.push_back(hlo::SpecAxes(sig.in_specs[static_cast<size_t>(i)], mesh));
  }
  absl::flat_hash_map<const Instruction*, LinearTree> linearity;
  ASSIGN_OR_RETURN(LinearTree root_tree, AnalyzeLinearity(body, trees, &linearity));
  ASSIGN_OR_RETURN(BodyVariance variance, BodyVariance::Infer(body, param_axes, mesh));
  if (sig.checked) {
    RETURN_IF_ERROR(CheckCastsExplicit(inst, body, mesh, variance, linearity));
  }

  // The cotangent of each output that carries one (nullptr: zero).
  Emitter& e = ctx.emitter();
  std::vector<Instruction*> output_cts(outputs, nullptr);
  for (size_t k = 0; k < outputs; ++k) {
    const bool linear_output =
        tuple ? root_tree.element(static_cast<int64_t>(k)).Any() : root_tree.Any();
    if (!linear_output) continue;
    if (!tuple) {
      output_cts[k] = ctx.Materialize(ct, inst.shape());
    } else if (ct.value != nullptr) {
      output_cts[k] = Gte(e, ct.value, static_cast<int64_t>(k));
    } else if (k < ct.elements.size() && !ct.elements[k].zero()) {
      output_cts[k] =
          ctx.Materialize(ct.elements[k], inst.shape().tuple_shape(static_cast<int64_t>(k)));
    }
  }

  Module& module = ModuleOf(e);
  Computation* transposed = module.AddComputation(
      std::make_unique<Computation>(TransposedComputationName(module, body.name())));
  Emitter te(transposed);
  te.set_origin(&inst);
  // Parameters: the output cotangents first (so transposing twice keeps
  // the operand order), then the non-linear operands.
  std::vector<Instruction*> operands;
  std::vector<hlo::AxisSpec> in_specs;
  std::vector<Axes> transposed_param_axes;
  int64_t number = 0;
  const std::vector<std::string> names = ResultElementNames(body);
  const std::vector<Axes>& root_elements = variance.Elements(body.root());
  std::vector<Instruction*> ct_params(outputs, nullptr);
  for (size_t k = 0; k < outputs; ++k) {
    if (output_cts[k] == nullptr) continue;
    ct_params[k] =
        te.Add(Instruction::CreateParameter(number++, names[k], sig.local_outputs[k]), true);
    operands.push_back(output_cts[k]);
    in_specs.push_back(sig.out_specs[k]);
    transposed_param_axes.push_back(hlo::SpecAxes(sig.out_specs[k], mesh));
  }
  std::vector<Instruction*> values(static_cast<size_t>(n), nullptr);
  for (int64_t i = 0; i < n; ++i) {
    if (ctx.IsLinear(inst.operand(i))) continue;
    const Instruction* param = body.parameter(i);
    values[static_cast<size_t>(i)] =
        te.Add(Instruction::CreateParameter(number++, param->name(), param->shape()), true);
    ASSIGN_OR_RETURN(Instruction * operand, ctx.Primal(inst.operand(i)));
    operands.push_back(operand);
    in_specs.push_back(sig.in_specs[static_cast<size_t>(i)]);
    transposed_param_axes.push_back(param_axes[static_cast<size_t>(i)]);
  }
  std::vector<Cotangent> root_cts(outputs);
  for (size_t k = 0; k < outputs; ++k) {
    Instruction* c = ct_params[k];
    if (c == nullptr) continue;
    const Axes out_axes = hlo::SpecAxes(sig.out_specs[k], mesh);
    if (sig.checked) {
      // An output less varying than its out_spec was cast up to it (the
      // implicit fan-out); the transpose of that cast is a psum.
      const Axes& have = k < root_elements.size() ? root_elements[k] : variance.Of(body.root());
      Axes missing = Minus(out_axes, have);
      if (!missing.empty()) c = Psum(te, c, missing);
    } else {
      // Every device along an unnamed axis returned the same block, and the
      // per-device transpose below counts each of them: share the cotangent.
      const int64_t copies = mesh.GroupSize(OtherAxes(mesh, out_axes));
      if (copies > 1) c = Div(te, c, Full(te, c->shape(), static_cast<double>(copies)));
    }
    root_cts[k] = Cotangent::Of(c);
  }
  Cotangent root_ct = tuple ? Cotangent{nullptr, std::move(root_cts)} : root_cts[0];

  Transposer transposer(te);
  ASSIGN_OR_RETURN(std::vector<Cotangent> cts,
                   transposer.Run(body, trees, values, std::move(root_ct)));
  std::vector<Instruction*> results;
  std::vector<hlo::AxisSpec> out_specs;
  std::vector<int64_t> linear_operands;
  for (int64_t i = 0; i < n; ++i) {
    if (!ctx.IsLinear(inst.operand(i))) continue;
    const size_t s = static_cast<size_t>(i);
    Instruction* r = transposer.Materialize(cts[s], sig.local_inputs[s]);
    if (!sig.checked) {
      // The devices along an axis the in_spec does not name all read the
      // same block: its cotangent is the sum of theirs.
      Axes unnamed = OtherAxes(mesh, param_axes[s]);
      if (mesh.GroupSize(unnamed) > 1) r = Psum(te, r, unnamed);
    }
    results.push_back(r);
    out_specs.push_back(sig.in_specs[s]);
    linear_operands.push_back(i);
  }
  if (results.empty()) return NoCotangents(inst);
  for (size_t j = 0; j < results.size(); ++j) {
    const bool repeated = std::find(results.begin(), results.begin() + static_cast<int64_t>(j),
                                    results[j]) != results.begin() + static_cast<int64_t>(j);
    if (!repeated) NameCotangent(results[j], body.parameter(linear_operands[j])->name());
  }
  const bool one = results.size() == 1;
  transposed->set_root(one ? results[0] : Tuple(te, results));
  if (sig.checked) {
    ASSIGN_OR_RETURN(BodyVariance typed,
                     BodyVariance::Infer(*transposed, transposed_param_axes, mesh));
    typed.Annotate(*transposed);
  }

  ASSIGN_OR_RETURN(Instruction * result, EmitShardMap(e, inst, std::move(operands), in_specs,
                                                      out_specs, transposed, !one));
  std::vector<Cotangent> out = NoCotangents(inst);
  for (size_t j = 0; j < linear_operands.size(); ++j) {
    out[static_cast<size_t>(linear_operands[j])] =
        Cotangent::Of(one ? result : Gte(e, result, static_cast<int64_t>(j)));
  }
  return out;
}

}  // namespace sharc::autodiff

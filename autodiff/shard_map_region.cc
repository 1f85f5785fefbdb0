#include "autodiff/shard_map_region.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

// The instruction calling `computation`, or nullptr. Bodies are called
// once (autodiff gives every new body its own computation), so the first
// caller is the caller.
const Instruction* CallerOf(const Computation* computation) {
  const Module* module = computation->parent();
  if (module == nullptr) return nullptr;
  for (const Computation* c : module->computations()) {
    for (const Instruction* inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        if (callee == computation) return inst;
      }
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<ShardMapSignature> ReadShardMap(const Instruction& shard_map) {
  ShardMapSignature sig;
  ASSIGN_OR_RETURN(sig.mesh, hlo::ShardMapMesh(shard_map));
  ASSIGN_OR_RETURN(sig.in_specs, hlo::ShardMapSpecs(shard_map, "in_specs"));
  ASSIGN_OR_RETURN(sig.out_specs, hlo::ShardMapSpecs(shard_map, "out_specs"));
  sig.checked = shard_map.attr_bool("check_variance", true);
  const Computation* body = shard_map.attr_computation("to_apply");
  if (body == nullptr || body->root() == nullptr) {
    return hlo::OpError(shard_map, "needs a to_apply body");
  }
  if (static_cast<int64_t>(sig.in_specs.size()) != shard_map.operand_count() ||
      body->num_parameters() != shard_map.operand_count()) {
    return hlo::OpError(shard_map, "has ", shard_map.operand_count(), " operands, ",
                        sig.in_specs.size(), " in_specs and a body of ", body->num_parameters(),
                        " parameters");
  }
  for (const Instruction* param : body->parameters()) sig.local_inputs.push_back(param->shape());
  const Shape& root = body->root()->shape();
  sig.local_outputs = root.is_tuple() ? root.tuple_shapes() : std::vector<Shape>{root};
  if (sig.local_outputs.size() != sig.out_specs.size()) {
    return hlo::OpError(shard_map, "has ", sig.out_specs.size(), " out_specs but its body returns ",
                        sig.local_outputs.size(), " value(s)");
  }
  return sig;
}

const Instruction* EnclosingShardMap(const Instruction& inst) {
  const Computation* computation = inst.parent();
  // Bounded walk up the callers (a malformed module could call in a cycle).
  for (int depth = 0; computation != nullptr && depth < 64; ++depth) {
    const Instruction* caller = CallerOf(computation);
    if (caller == nullptr) return nullptr;
    if (caller->opcode() == Opcode::kShardMap) return caller;
    computation = caller->parent();
  }
  return nullptr;
}

bool InCheckedBody(const Instruction& inst) {
  const Instruction* shard_map = EnclosingShardMap(inst);
  return shard_map == nullptr || shard_map->attr_bool("check_variance", true);
}

Axes OtherAxes(const hlo::ManualMesh& mesh, const Axes& axes) {
  Axes out;
  for (const hlo::MeshAxis& a : mesh.axes()) {
    if (std::find(axes.begin(), axes.end(), a.name) == axes.end()) out.push_back(a.name);
  }
  return out;
}

absl::StatusOr<Instruction*> EmitShardMap(Emitter& e, const Instruction& like,
                                          std::vector<Instruction*> operands,
                                          const std::vector<hlo::AxisSpec>& in_specs,
                                          const std::vector<hlo::AxisSpec>& out_specs,
                                          Computation* body, bool tuple) {
  ASSIGN_OR_RETURN(hlo::ManualMesh mesh, hlo::ShardMapMesh(like));
  const Shape& root = body->root()->shape();
  const std::vector<Shape> locals =
      root.is_tuple() ? root.tuple_shapes() : std::vector<Shape>{root};
  if (locals.size() != out_specs.size() || (!tuple && locals.size() != 1)) {
    return absl::InternalError(absl::StrCat("shard_map body '", body->name(), "' returns ",
                                            root.ToString(), " for ", out_specs.size(),
                                            " out_specs"));
  }
  std::vector<Shape> globals;
  for (size_t k = 0; k < locals.size(); ++k) {
    absl::StatusOr<Shape> global = hlo::GlobalShape(locals[k], out_specs[k], mesh);
    if (!global.ok()) {
      return hlo::OpError(like, "derivative output ", k, ": ", global.status().message());
    }
    globals.push_back(*std::move(global));
  }
  auto inst = Instruction::Create(Opcode::kShardMap, "", tuple ? Shape::Tuple(globals) : globals[0],
                                  std::move(operands));
  if (const hlo::AttrValue* m = like.attr("mesh")) inst->set_attr("mesh", *m);
  inst->set_attr("in_specs", hlo::PrintSpecsText(in_specs));
  inst->set_attr("out_specs", hlo::PrintSpecsText(out_specs));
  if (const hlo::AttrValue* c = like.attr("check_variance")) inst->set_attr("check_variance", *c);
  inst->set_attr("to_apply", body);
  return e.Add(std::move(inst));
}

Instruction* EmitCollective(Emitter& e, Opcode opcode, const Shape& shape, Instruction* operand,
                            const std::string& axes, std::vector<hlo::Attribute> attributes) {
  std::vector<hlo::Attribute> all = {{"axes", axes}};
  for (hlo::Attribute& a : attributes) all.push_back(std::move(a));
  std::vector<Instruction*> operands;
  if (operand != nullptr) operands.push_back(operand);
  return e.Add(opcode, shape, std::move(operands), std::move(all));
}

}  // namespace sharc::autodiff

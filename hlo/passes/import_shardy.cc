#include "hlo/passes/import_shardy.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/sdy_sharding.h"
#include "hlo/ops/collective_devices.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/op_util.h"
#include "hlo/passes/call_inliner.h"
#include "hlo/text/frontend_attributes.h"
#include "hlo/text/parse_sdy.h"

namespace sharc::hlo {
namespace {

// Names XLA's Shardy round trip writes (xla/service/spmd/shardy/constants.h).
constexpr char kMeshesAttr[] = "xla.sdy.meshes";
constexpr char kShardingAttr[] = "xla.sdy.sharding";
constexpr char kInShardingsAttr[] = "xla.sdy.in_shardings";
constexpr char kOutShardingsAttr[] = "xla.sdy.out_shardings";
constexpr char kManualAxesAttr[] = "xla.sdy.manual_axes";
constexpr char kShardingGroupIdAttr[] = "xla.sdy.sharding_group_id";
constexpr char kGlobalToLocalTarget[] = "xla.sdy.GlobalToLocalShape";
constexpr char kLocalToGlobalTarget[] = "xla.sdy.LocalToGlobalShape";
constexpr char kFuncResultShardingTarget[] = "xla.sdy.FuncResultSharding";
constexpr char kShardingGroupTarget[] = "xla.sdy.ShardingGroup";
constexpr char kPropagationBarrierTarget[] = "xla.sdy.PropagationBarrier";
// A shard_map body's name holds this (JAX may prefix and suffix it).
constexpr char kManualBodyName[] = "manual_computation_body";

bool IsManualBodyCall(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCall) return false;
  const Computation* callee = inst.attr_computation("to_apply");
  return callee != nullptr && absl::StrContains(callee->name(), "xla.sdy.") &&
         absl::StrContains(callee->name(), kManualBodyName);
}

absl::StatusOr<FrontendAttributes> AttributesOf(const Instruction& inst) {
  absl::StatusOr<FrontendAttributes> attributes = ParseFrontendAttributes(inst.frontend_attributes());
  if (!attributes.ok()) return OpError(inst, attributes.status().message());
  return attributes;
}

bool MentionsShardy(const Module& module) {
  if (absl::StrContains(module.config().frontend_attributes, kMeshesAttr)) return true;
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (absl::StrContains(inst->frontend_attributes(), "xla.sdy.")) return true;
      if (inst->opcode() == Opcode::kCustomCall &&
          absl::StartsWith(inst->attr_string("custom_call_target"), "xla.sdy.")) {
        return true;
      }
    }
  }
  return false;
}

Instruction* AddCustomCall(Computation& comp, Instruction* before, std::string name,
                           std::string_view target, Shape shape, Instruction* operand,
                           Sharding sharding) {
  std::unique_ptr<Instruction> call =
      Instruction::Create(Opcode::kCustomCall, std::move(name), std::move(shape), {operand});
  call->set_attr("custom_call_target", std::string(target));
  call->set_sharding(std::move(sharding));
  call->set_location(before->location());
  return comp.AddInstructionBefore(std::move(call), before);
}

class ShardyImporter {
 public:
  explicit ShardyImporter(Module& module) : module_(module) {}

  absl::Status Run() {
    RETURN_IF_ERROR(ReadMeshes());
    // Caller first, so that each computation knows the manual axes of the
    // shard_maps around it before its own shardings are read.
    std::deque<Computation*> work = {module_.entry()};
    region_axes_[module_.entry()] = {};
    while (!work.empty()) {
      Computation* comp = work.front();
      work.pop_front();
      const std::vector<std::string> axes = region_axes_.at(comp);
      // Rewriting a shard_map removes its boundaries: find the body calls
      // first, then walk what is left.
      std::vector<Instruction*> body_calls;
      for (Instruction* inst : comp->instructions()) {
        if (IsManualBodyCall(*inst)) body_calls.push_back(inst);
      }
      for (Instruction* call : body_calls) {
        ASSIGN_OR_RETURN(std::vector<std::string> region, RewriteShardMap(*comp, call, axes));
        RETURN_IF_ERROR(Visit(call->attr_computation("to_apply"), region, *call, work));
        body_calls_.push_back(call);
      }
      for (Instruction* inst : comp->instructions()) {
        if (IsManualBodyCall(*inst)) continue;
        for (Computation* callee : inst->called_computations()) {
          RETURN_IF_ERROR(Visit(callee, axes, *inst, work));
        }
      }
      for (Instruction* inst : comp->instructions()) RETURN_IF_ERROR(ImportInstruction(*comp, inst, axes));
    }
    // Innermost bodies first, so that an inlined body carries its own
    // inlined inner bodies.
    for (auto it = body_calls_.rbegin(); it != body_calls_.rend(); ++it) {
      Instruction* call = *it;
      Computation* body = call->attr_computation("to_apply");
      InlineCallSite(*call->parent(), call);
      if (!IsCalled(body)) module_.RemoveComputation(body);
    }
    for (const Computation* comp : module_.computations()) {
      for (const Instruction* inst : comp->instructions()) {
        if (IsCustomCallTo(*inst, kGlobalToLocalTarget) || IsCustomCallTo(*inst, kLocalToGlobalTarget)) {
          return OpError(*inst, "is not part of a shard_map (a call of a manual computation body "
                                "between xla.sdy.GlobalToLocalShape and xla.sdy.LocalToGlobalShape)");
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ReadMeshes() {
    if (module_.config().frontend_attributes.empty()) return absl::OkStatus();
    absl::StatusOr<FrontendAttributes> header =
        ParseFrontendAttributes(module_.config().frontend_attributes);
    if (!header.ok()) return absl::InvalidArgumentError(absl::StrCat("module header: ", header.status().message()));
    std::optional<std::string> meshes = FindFrontendAttribute(*header, kMeshesAttr);
    if (!meshes) return absl::OkStatus();
    absl::StatusOr<std::map<std::string, SdyMesh>> parsed = ParseSdyMeshes(*meshes);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("module header's ", kMeshesAttr, ": ", parsed.status().message()));
    }
    meshes_ = *std::move(parsed);
    // JAX's HLO names no device count; the mesh is the program's devices.
    int64_t devices = 1;
    for (const auto& [name, mesh] : meshes_) {
      if (!mesh.axes.empty()) devices = std::max(devices, mesh.num_devices());
    }
    ModuleConfig& config = module_.mutable_config();
    if (devices > 1 && HeaderDeclaresNoDevices(config)) config.num_partitions = devices;
    return absl::OkStatus();
  }

  absl::Status Visit(Computation* callee, const std::vector<std::string>& axes,
                     const Instruction& caller, std::deque<Computation*>& work) {
    auto [it, inserted] = region_axes_.emplace(callee, axes);
    if (inserted) {
      work.push_back(callee);
    } else if (it->second != axes) {
      return OpError(caller, "calls ", callee->name(),
                     ", which is also called inside a shard_map with other manual axes");
    }
    return absl::OkStatus();
  }

  bool IsCalled(const Computation* computation) const {
    for (const Computation* comp : module_.computations()) {
      for (const Instruction* inst : comp->instructions()) {
        for (const Computation* callee : inst->called_computations()) {
          if (callee == computation) return true;
        }
      }
    }
    return false;
  }

  absl::StatusOr<const SdyMesh*> MeshOf(const SdyTensorSharding& sharding, const Instruction& inst) {
    if (sharding.inline_mesh) return &*sharding.inline_mesh;
    auto it = meshes_.find(sharding.mesh_name);
    if (it == meshes_.end()) {
      return OpError(inst, "names Shardy mesh '@", sharding.mesh_name,
                     "', which the module's ", kMeshesAttr, " does not define");
    }
    return &it->second;
  }

  absl::StatusOr<Sharding> Convert(const SdyTensorSharding& sharding,
                                   const std::vector<std::string>& manual_axes,
                                   const Instruction& inst) {
    ASSIGN_OR_RETURN(const SdyMesh* mesh, MeshOf(sharding, inst));
    absl::StatusOr<Sharding> converted = SdyToHloSharding(sharding, *mesh, manual_axes);
    if (!converted.ok()) {
      return OpError(inst, "has a Shardy sharding that does not fit its mesh: ",
                     converted.status().message());
    }
    return converted;
  }

  // One sharding per value of `shape` (its leaves, for a tuple).
  absl::StatusOr<Sharding> ConvertPerValue(const std::vector<SdyTensorSharding>& shardings,
                                           const Shape& shape,
                                           const std::vector<std::string>& manual_axes,
                                           const Instruction& inst) {
    const std::vector<Shape> leaves = shape.is_tuple() ? shape.tuple_shapes() : std::vector<Shape>{shape};
    // A value-less op (a side-effecting custom-call) has one sharding for
    // where it runs.
    if (shardings.size() == 1 && (!shape.is_tuple() || leaves.empty())) {
      return ConvertLeaf(shardings[0], shape, manual_axes, inst);
    }
    if (shardings.size() != leaves.size()) {
      return OpError(inst, "has ", shardings.size(), " Shardy shardings for ", leaves.size(),
                     " values");
    }
    std::vector<Sharding> converted;
    for (size_t i = 0; i < leaves.size(); ++i) {
      ASSIGN_OR_RETURN(Sharding leaf, ConvertLeaf(shardings[i], leaves[i], manual_axes, inst));
      converted.push_back(std::move(leaf));
    }
    return Sharding::Tuple(std::move(converted));
  }

  absl::StatusOr<Sharding> ConvertLeaf(const SdyTensorSharding& sharding, const Shape& shape,
                                       const std::vector<std::string>& manual_axes,
                                       const Instruction& inst) {
    ASSIGN_OR_RETURN(const SdyMesh* mesh, MeshOf(sharding, inst));
    if (!mesh->axes.empty() && shape.is_array() &&
        static_cast<int64_t>(sharding.dims.size()) != shape.rank()) {
      return OpError(inst, "has a Shardy sharding of ", sharding.dims.size(),
                     " dimensions for a value of rank ", shape.rank());
    }
    return Convert(sharding, manual_axes, inst);
  }

  absl::StatusOr<std::vector<SdyTensorSharding>> ShardingsIn(const Instruction& inst,
                                                             const FrontendAttributes& attributes,
                                                             std::string_view key) {
    std::optional<std::string> text = FindFrontendAttribute(attributes, key);
    if (!text) return OpError(inst, "has no ", key, " frontend attribute");
    absl::StatusOr<std::vector<SdyTensorSharding>> shardings = ParseSdyShardings(*text);
    if (!shardings.ok()) return OpError(inst, key, ": ", shardings.status().message());
    return shardings;
  }

  // The instruction's own `xla.sdy.sharding`, and the custom-calls that
  // are Shardy's annotations.
  absl::Status ImportInstruction(Computation& comp, Instruction* inst,
                                 const std::vector<std::string>& axes) {
    if (inst->frontend_attributes().empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(FrontendAttributes attributes, AttributesOf(*inst));
    std::vector<SdyTensorSharding> shardings;
    if (FindFrontendAttribute(attributes, kShardingAttr)) {
      ASSIGN_OR_RETURN(shardings, ShardingsIn(*inst, attributes, kShardingAttr));
    }
    // A module that defines no Shardy mesh is not in Shardy's round-trip
    // form: a sharding naming one is a stray attribute (XLA's importer tests
    // carry such), and the instruction's own `sharding=` stands.
    const bool inert = meshes_.empty() &&
                       std::none_of(shardings.begin(), shardings.end(),
                                    [](const SdyTensorSharding& s) { return s.inline_mesh.has_value(); });
    if (!shardings.empty() && !inert) {
      ASSIGN_OR_RETURN(Sharding sharding, ConvertPerValue(shardings, inst->shape(), axes, *inst));
      const bool annotation = IsCustomCallTo(*inst, kShardingTarget) ||
                              IsCustomCallTo(*inst, kFuncResultShardingTarget);
      const bool all_open = shardings.size() == 1 && shardings[0].HasOpenDims() &&
                            std::all_of(shardings[0].dims.begin(), shardings[0].dims.end(),
                                        [](const SdyDimSharding& d) { return d.axes.empty(); });
      if (annotation && shardings.size() == 1 && shardings[0].HasOpenDims()) {
        std::vector<std::string> open;
        for (size_t d = 0; d < shardings[0].dims.size(); ++d) {
          if (shardings[0].dims[d].open) open.push_back(absl::StrCat(d));
        }
        inst->set_attr("backend_config", absl::StrCat("unspecified_dims=[", absl::StrJoin(open, ","), "]"));
      }
      // A value Shardy leaves wholly open is not constrained at all.
      if (annotation || !all_open) {
        inst->set_sharding(std::move(sharding));
      } else {
        inst->clear_sharding();
      }
    }
    if (IsCustomCallTo(*inst, kFuncResultShardingTarget) && inst->has_sharding()) {
      inst->set_attr("custom_call_target", std::string(kShardingTarget));
      inst->remove_attr("custom_call_has_side_effect");
    } else if (IsCustomCallTo(*inst, kShardingGroupTarget)) {
      return ImportShardingGroup(comp, inst, attributes);
    } else if (IsCustomCallTo(*inst, kPropagationBarrierTarget) ||
               IsCustomCallTo(*inst, kFuncResultShardingTarget)) {
      // A barrier GSPMD has no form for; a result sharding that names no
      // mesh. Either way the value is its operand's.
      if (inst->operand_count() != 1) return OpError(*inst, "takes one operand");
      inst->ReplaceAllUsesWith(inst->operand(0));
      if (comp.root() == inst) comp.set_root(inst->operand(0));
      return comp.RemoveInstruction(inst);
    }
    return absl::OkStatus();
  }

  // Values in one sharding group get one sharding: GSPMD's `shard_as`.
  absl::Status ImportShardingGroup(Computation& comp, Instruction* group,
                                   const FrontendAttributes& attributes) {
    if (group->operand_count() != 1 || !group->operand(0)->shape().is_array()) {
      return OpError(*group, "takes one array operand");
    }
    std::optional<std::string> id_text = FindFrontendAttribute(attributes, kShardingGroupIdAttr);
    int64_t id = 0;
    if (!id_text || !absl::SimpleAtoi(*id_text, &id) || id < 0) {
      return OpError(*group, "needs a non-negative integer ", kShardingGroupIdAttr);
    }
    Instruction* value = group->operand(0);
    Sharding member = Sharding::Unknown();
    member.set_shard_group(ShardGroup{true, id});
    Instruction* annotated = AddCustomCall(comp, group, absl::StrCat(value->name(), ".group"),
                                           kShardingTarget, value->shape(), value, member);
    for (Instruction* user : std::vector<Instruction*>(value->users())) {
      if (user != annotated && user != group) user->ReplaceOperandWith(value, annotated);
    }
    if (comp.root() == value) comp.set_root(annotated);
    return comp.RemoveInstruction(group);
  }

  // The custom-call of `target` that `call`'s operands come from (through
  // get-tuple-elements), or that reads its results.
  static Instruction* BoundaryFeeding(Instruction* call) {
    for (Instruction* operand : call->operands()) {
      Instruction* source = operand->opcode() == Opcode::kGetTupleElement ? operand->operand(0) : operand;
      if (IsCustomCallTo(*source, kGlobalToLocalTarget)) return source;
    }
    return nullptr;
  }
  static Instruction* BoundaryReading(Instruction* call) {
    for (Instruction* user : call->users()) {
      if (IsCustomCallTo(*user, kLocalToGlobalTarget)) return user;
      if (user->opcode() != Opcode::kGetTupleElement) continue;
      for (Instruction* reader : user->users()) {
        if (IsCustomCallTo(*reader, kLocalToGlobalTarget)) return reader;
      }
    }
    return nullptr;
  }

  absl::StatusOr<std::vector<std::string>> ManualAxesOf(const Instruction& boundary) {
    ASSIGN_OR_RETURN(FrontendAttributes attributes, AttributesOf(boundary));
    std::optional<std::string> text = FindFrontendAttribute(attributes, kManualAxesAttr);
    if (!text) return OpError(boundary, "has no ", kManualAxesAttr, " frontend attribute");
    absl::StatusOr<std::vector<std::string>> axes = ParseSdyManualAxes(*text);
    if (!axes.ok()) return OpError(boundary, kManualAxesAttr, ": ", axes.status().message());
    return axes;
  }

  // Rewrites the boundaries of the shard_map whose body `call` calls;
  // returns the manual axes inside it (the enclosing ones, then its own).
  absl::StatusOr<std::vector<std::string>> RewriteShardMap(Computation& comp, Instruction* call,
                                                           const std::vector<std::string>& parent) {
    Instruction* entry = BoundaryFeeding(call);
    Instruction* exit = BoundaryReading(call);
    if (entry == nullptr && exit == nullptr) {
      // A shard_map with neither operands nor results: its body runs as is.
      return parent;
    }
    std::vector<std::string> own;
    if (entry != nullptr) {
      ASSIGN_OR_RETURN(own, ManualAxesOf(*entry));
    }
    if (exit != nullptr) {
      ASSIGN_OR_RETURN(std::vector<std::string> exit_axes, ManualAxesOf(*exit));
      if (entry != nullptr && exit_axes != own) {
        return OpError(*exit, "names other manual axes than its shard_map's ", entry->name());
      }
      own = exit_axes;
    }
    std::vector<std::string> region = parent;
    for (const std::string& axis : own) {
      if (std::find(region.begin(), region.end(), axis) != region.end()) {
        return OpError(*call, "makes axis \"", axis, "\" manual inside a shard_map already manual in it");
      }
      region.push_back(axis);
    }

    if (entry != nullptr) {
      ASSIGN_OR_RETURN(FrontendAttributes attributes, AttributesOf(*entry));
      ASSIGN_OR_RETURN(std::vector<SdyTensorSharding> in, ShardingsIn(*entry, attributes, kInShardingsAttr));
      if (static_cast<int64_t>(in.size()) != entry->operand_count()) {
        return OpError(*entry, "has ", in.size(), " in_shardings for ", entry->operand_count(), " operands");
      }
      std::vector<Instruction*> local;
      for (int64_t i = 0; i < entry->operand_count(); ++i) {
        Instruction* global = entry->operand(i);
        const Shape local_shape =
            entry->shape().is_tuple() ? entry->shape().tuple_shape(i) : entry->shape();
        ASSIGN_OR_RETURN(Sharding outside, ConvertLeaf(in[i], global->shape(), parent, *entry));
        ASSIGN_OR_RETURN(Sharding inside, ConvertLeaf(EraseAxes(in[i], own), global->shape(), region, *entry));
        Instruction* annotated = AddCustomCall(comp, entry, absl::StrCat(entry->name(), ".in", i, ".sharding"),
                                               kShardingTarget, global->shape(), global, outside);
        local.push_back(AddCustomCall(comp, entry, absl::StrCat(entry->name(), ".in", i),
                                      kFullToShardShapeTarget, local_shape, annotated, inside));
      }
      // The call reads the local values where it read the boundary's.
      for (int64_t k = 0; k < call->operand_count(); ++k) {
        Instruction* operand = call->operand(k);
        if (operand == entry) {
          if (entry->shape().is_tuple()) {
            return OpError(*call, "reads all of ", entry->name(),
                           " at once; a shard_map's body takes its values one by one "
                           "(get-tuple-element), as XLA writes it");
          }
          call->ReplaceOperand(k, local[0]);
        } else if (operand->opcode() == Opcode::kGetTupleElement && operand->operand(0) == entry) {
          call->ReplaceOperand(k, local[static_cast<size_t>(operand->attr_int("index"))]);
        }
      }
      RETURN_IF_ERROR(RemoveWithUnusedReaders(comp, entry));
    }

    if (exit != nullptr) {
      ASSIGN_OR_RETURN(FrontendAttributes attributes, AttributesOf(*exit));
      ASSIGN_OR_RETURN(std::vector<SdyTensorSharding> out, ShardingsIn(*exit, attributes, kOutShardingsAttr));
      if (static_cast<int64_t>(out.size()) != exit->operand_count()) {
        return OpError(*exit, "has ", out.size(), " out_shardings for ", exit->operand_count(), " operands");
      }
      std::vector<Instruction*> global;
      for (int64_t j = 0; j < exit->operand_count(); ++j) {
        Instruction* local = exit->operand(j);
        const Shape global_shape = exit->shape().is_tuple() ? exit->shape().tuple_shape(j) : exit->shape();
        ASSIGN_OR_RETURN(Sharding inside, ConvertLeaf(EraseAxes(out[j], own), global_shape, region, *exit));
        ASSIGN_OR_RETURN(Sharding outside, ConvertLeaf(out[j], global_shape, parent, *exit));
        Instruction* annotated = AddCustomCall(comp, exit, absl::StrCat(exit->name(), ".out", j, ".sharding"),
                                               kShardingTarget, local->shape(), local, inside);
        global.push_back(AddCustomCall(comp, exit, absl::StrCat(exit->name(), ".out", j),
                                       kShardToFullShapeTarget, global_shape, annotated, outside));
      }
      Instruction* replacement = global[0];
      if (exit->shape().is_tuple()) {
        std::unique_ptr<Instruction> tuple = Instruction::Create(
            Opcode::kTuple, absl::StrCat(exit->name(), ".results"), exit->shape(), global);
        tuple->set_location(exit->location());
        replacement = comp.AddInstructionBefore(std::move(tuple), exit);
      }
      exit->ReplaceAllUsesWith(replacement);
      if (comp.root() == exit) comp.set_root(replacement);
      RETURN_IF_ERROR(comp.RemoveInstruction(exit));
    }
    call->remove_attr("frontend_attributes");
    return region;
  }

  // Removes `boundary` and the get-tuple-elements of it nothing reads.
  static absl::Status RemoveWithUnusedReaders(Computation& comp, Instruction* boundary) {
    for (Instruction* user : std::vector<Instruction*>(boundary->users())) {
      if (user->opcode() == Opcode::kGetTupleElement && user->users().empty() && comp.root() != user) {
        RETURN_IF_ERROR(comp.RemoveInstruction(user));
      }
    }
    if (!boundary->users().empty() || comp.root() == boundary) {
      return OpError(*boundary, "has readers other than its shard_map's body call");
    }
    return comp.RemoveInstruction(boundary);
  }

  Module& module_;
  std::map<std::string, SdyMesh> meshes_;
  absl::flat_hash_map<const Computation*, std::vector<std::string>> region_axes_;
  std::vector<Instruction*> body_calls_;
};

}  // namespace

absl::StatusOr<bool> ImportShardyRoundTrip(Module& module) {
  if (!MentionsShardy(module)) return false;
  ShardyImporter importer(module);
  RETURN_IF_ERROR(importer.Run());
  return true;
}

}  // namespace sharc::hlo

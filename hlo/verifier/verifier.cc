#include "hlo/verifier/verifier.h"

#include "absl/container/flat_hash_map.h"
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/directed_graph.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::Status CheckAttributes(const Instruction& inst, const OpDef& def) {
  for (const AttrSpec& spec : def.attributes) {
    if (spec.required && !inst.has_attr(spec.name)) {
      return OpError(inst, "is missing required attribute '", spec.name, "'");
    }
  }
  for (const Attribute& attr : inst.attributes()) {
    if (FindAttrSpec(def, attr.name) == nullptr) {
      return OpError(inst, "does not take attribute '", attr.name, "'");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOperandCount(const Instruction& inst, const OpDef& def) {
  int64_t n = inst.operand_count();
  if (def.syntax != OperandSyntax::kOperands) {
    if (n != 0) return OpError(inst, "takes no operands, got ", n);
    return absl::OkStatus();
  }
  if (n < def.min_operands || (def.max_operands >= 0 && n > def.max_operands)) {
    if (def.min_operands == def.max_operands) {
      return OpError(inst, "takes ", def.min_operands, " operands, got ", n);
    }
    if (def.max_operands < 0) {
      return OpError(inst, "takes at least ", def.min_operands, " operands, got ", n);
    }
    return OpError(inst, "takes ", def.min_operands, " to ", def.max_operands,
                   " operands, got ", n);
  }
  return absl::OkStatus();
}

// Names the instructions of a cycle through operands, if there is one.
std::string DescribeCycle(const Computation& computation) {
  std::vector<Instruction*> insts = computation.instructions();
  absl::flat_hash_map<const Instruction*, int64_t> id;
  for (size_t i = 0; i < insts.size(); ++i) id[insts[i]] = static_cast<int64_t>(i);
  DirectedGraph graph(static_cast<int64_t>(insts.size()));
  for (size_t i = 0; i < insts.size(); ++i) {
    for (const Instruction* op : insts[i]->operands()) {
      auto it = id.find(op);
      if (it != id.end()) graph.AddEdge(it->second, static_cast<int64_t>(i));
    }
  }
  std::vector<int64_t> cycle = graph.FindCycle();
  if (cycle.empty()) return "";
  std::string out = "cycle detected: ";
  for (int64_t v : cycle) absl::StrAppend(&out, insts[v]->name(), " -> ");
  absl::StrAppend(&out, insts[cycle[0]]->name());
  return out;
}

// Every operand must be defined earlier in the same computation.
absl::Status CheckDefinitionOrder(const Computation& computation) {
  std::string cycle = DescribeCycle(computation);
  if (!cycle.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(cycle, " in computation '", computation.name(), "'"));
  }
  absl::flat_hash_set<const Instruction*> defined;
  absl::flat_hash_set<std::string_view> names;
  for (const Instruction* inst : computation.instructions()) {
    for (const Instruction* op : inst->operands()) {
      if (op->parent() != &computation) {
        return OpError(*inst, "uses '", op->name(), "' from another computation");
      }
      if (!defined.contains(op)) {
        return OpError(*inst, "uses '", op->name(), "' before its definition");
      }
    }
    if (!names.insert(inst->name()).second) {
      return OpError(*inst, "redefines the name '", inst->name(), "'");
    }
    defined.insert(inst);
  }
  return absl::OkStatus();
}

absl::Status CheckParameters(const Computation& computation) {
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    if (computation.parameter(i) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "computation '", computation.name(), "' has no parameter ", i, " but has parameter ",
          computation.num_parameters() - 1));
    }
  }
  int64_t count = 0;
  for (const Instruction* inst : computation.instructions()) {
    if (inst->opcode() == Opcode::kParameter) ++count;
  }
  if (count != computation.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "computation '", computation.name(), "' declares a parameter number twice"));
  }
  return absl::OkStatus();
}

// The call graph must be acyclic: a computation may not call itself.
absl::Status CheckNoRecursion(const Module& module) {
  absl::flat_hash_map<const Computation*, int> state;  // 1 = visiting, 2 = done
  std::function<absl::Status(const Computation*)> visit =
      [&](const Computation* c) -> absl::Status {
    int& s = state[c];
    if (s == 2) return absl::OkStatus();
    if (s == 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", c->name(), "' calls itself (recursion is not allowed)"));
    }
    s = 1;
    for (const Instruction* inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        RETURN_IF_ERROR(visit(callee));
      }
    }
    state[c] = 2;
    return absl::OkStatus();
  };
  for (const Computation* c : module.computations()) RETURN_IF_ERROR(visit(c));
  return absl::OkStatus();
}

absl::Status VerifyInstruction(const Instruction& inst, const Module& module,
                               const VerifyOptions& options) {
  if (!HasOpDef(inst.opcode())) {
    return OpError(inst, "has no definition in the op table");
  }
  const OpDef& def = GetOpDef(inst.opcode());
  RETURN_IF_ERROR(ValidateShape(inst.shape())) << ", in " << inst.Describe();
  RETURN_IF_ERROR(CheckOperandCount(inst, def));
  RETURN_IF_ERROR(CheckAttributes(inst, def));
  for (const Computation* callee : inst.called_computations()) {
    if (callee == nullptr || callee->parent() != &module) {
      return OpError(inst, "calls a computation that is not in the module");
    }
  }
  ASSIGN_OR_RETURN(Shape inferred, def.infer_shape(inst));
  if (inferred != inst.shape()) {
    return OpError(inst, "declares ", inst.shape().ToString(), " but its operands imply ",
                   inferred.ToString());
  }
  if (def.verify) RETURN_IF_ERROR(def.verify(inst));
  if (inst.sharding()) {
    int64_t devices = options.check_sharding_devices ? module.config().num_partitions : 0;
    if (devices == 1) devices = 0;  // a single-partition module may still carry annotations
    absl::Status st = inst.sharding()->Validate(inst.shape(), devices);
    // XLA writes an outfeed's sharding for what it sends: its data, or the
    // tuple (data, token).
    if (!st.ok() && inst.opcode() == Opcode::kOutfeed) {
      const Shape& data = inst.operand(0)->shape();
      if (inst.sharding()->Validate(data, devices).ok() ||
          inst.sharding()->Validate(Shape::Tuple({data, inst.shape()}), devices).ok()) {
        st = absl::OkStatus();
      }
    }
    if (!st.ok()) return OpError(inst, "has an invalid sharding: ", st.message());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyModule(const Module& module, const VerifyOptions& options) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("module '", module.name(), "' has no entry"));
  }
  if (module.config().num_partitions < 1 || module.config().replica_count < 1) {
    return absl::InvalidArgumentError("num_partitions and replica_count must be at least 1");
  }
  RETURN_IF_ERROR(CheckNoRecursion(module));
  for (const Computation* computation : module.computations()) {
    if (computation->root() == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", computation->name(), "' has no root instruction"));
    }
    if (computation->root()->parent() != computation) {
      return absl::InvalidArgumentError(absl::StrCat(
          "computation '", computation->name(), "' has a root from another computation"));
    }
    RETURN_IF_ERROR(CheckParameters(*computation));
    RETURN_IF_ERROR(CheckDefinitionOrder(*computation));
    for (const Instruction* inst : computation->instructions()) {
      RETURN_IF_ERROR(VerifyInstruction(*inst, module, options));
    }
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo

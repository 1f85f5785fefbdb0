#include "codegen/fusion.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/halide_kernel_factory.h"
#include "codegen/kernel_graph.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"

namespace sharc::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Bigger fused kernels compile slower and rarely run faster.
constexpr size_t kMaxGroupSize = 48;
// Constants up to this many elements are copied into every kernel using them.
constexpr int64_t kMaxInlinedConstant = 64;

// A dot or a convolution: its operands stay kernel inputs (the contraction
// reads each many times) and it takes only elementwise epilogues.
bool IsContraction(const Instruction& inst) {
  return inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution;
}

bool IsHeavy(const Instruction& inst) {
  return IsContraction(inst) || inst.opcode() == Opcode::kReduce ||
         inst.opcode() == Opcode::kReduceWindow;
}

// The input dims of a reduce over its innermost dim only (one value per
// row), else nothing. Reductions over the same rows are siblings: a group
// may hold several of them (see row_kernel_schedule.h).
std::optional<std::vector<int64_t>> RowReductionInput(const Instruction& inst) {
  if (inst.opcode() != Opcode::kReduce || inst.operand_count() != 2) return std::nullopt;
  const hlo::Shape& input = inst.operand(0)->shape();
  const hlo::IntList& dims = inst.attr_ints("dimensions");
  if (!input.is_array() || input.rank() < 2 || dims.size() != 1 || dims[0] != input.rank() - 1) {
    return std::nullopt;
  }
  return input.dims();
}

bool IsSmallConstant(const Instruction& inst) {
  return inst.opcode() == Opcode::kConstant && inst.shape().is_array() &&
         inst.shape().num_elements() <= kMaxInlinedConstant;
}

// Can be computed inside a kernel at all.
bool Fusible(const Instruction& inst) {
  if (inst.opcode() == Opcode::kParameter) return false;
  if (inst.opcode() == Opcode::kConstant) return IsSmallConstant(inst);
  return CheckLowerable(inst).ok();
}

struct Group {
  Instruction* root = nullptr;
  absl::flat_hash_set<Instruction*> members;
  absl::flat_hash_set<Instruction*> copied_constants;  // members that stay outside too
  bool has_heavy = false;
  // Set while every heavy member is a reduction of rows of these dims.
  std::optional<std::vector<int64_t>> row_dims;
};

class Fuser {
 public:
  explicit Fuser(hlo::Module& module) : module_(module) {}

  absl::StatusOr<FusionStats> Run() {
    std::vector<hlo::Computation*> work = {module_.entry()};
    absl::flat_hash_set<hlo::Computation*> seen;
    while (!work.empty()) {
      hlo::Computation* c = work.back();
      work.pop_back();
      if (c == nullptr || !seen.insert(c).second) continue;
      for (Instruction* inst : c->instructions()) {
        const Opcode op = inst->opcode();
        if (op == Opcode::kWhile || op == Opcode::kConditional ||
            (op == Opcode::kCall && !IsFusionCall(*inst))) {
          for (hlo::Computation* callee : inst->called_computations()) work.push_back(callee);
        }
      }
      absl::Status st = FuseComputation(*c);
      if (!st.ok()) return st;
    }
    // Callees before callers, so the text parses back (a computation must
    // be defined before it is called); otherwise the original order.
    std::vector<hlo::Computation*> all = module_.computations();
    absl::flat_hash_map<const hlo::Computation*, int64_t> index;
    for (size_t i = 0; i < all.size(); ++i) index[all[i]] = static_cast<int64_t>(i);
    std::vector<int64_t> order;
    std::vector<bool> placed(all.size(), false);
    std::function<void(hlo::Computation*)> place = [&](hlo::Computation* c) {
      const int64_t i = index.at(c);
      if (placed[static_cast<size_t>(i)]) return;
      placed[static_cast<size_t>(i)] = true;
      for (const Instruction* inst : c->instructions()) {
        for (hlo::Computation* callee : inst->called_computations()) place(callee);
      }
      order.push_back(i);
    };
    for (hlo::Computation* c : all) place(c);
    module_.ReorderComputations(order);
    return stats_;
  }

 private:
  absl::Status FuseComputation(hlo::Computation& computation) {
    std::vector<Instruction*> order = computation.instructions();
    absl::flat_hash_map<Instruction*, Group*> group_of;
    std::vector<std::unique_ptr<Group>> groups;
    for (size_t i = order.size(); i-- > 0;) {
      Instruction* inst = order[i];
      if (group_of.contains(inst) || !Fusible(*inst) || inst->opcode() == Opcode::kConstant) {
        continue;
      }
      auto group = std::make_unique<Group>();
      group->root = inst;
      Grow(*group, inst, group_of);
      groups.push_back(std::move(group));
    }
    for (const auto& g : groups) {
      // A lone instruction is already one kernel; fusing it changes nothing.
      if (g->members.size() - g->copied_constants.size() < 2) continue;
      absl::Status st = Outline(computation, *g);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  void Add(Group& g, Instruction* inst, absl::flat_hash_map<Instruction*, Group*>& group_of) {
    g.members.insert(inst);
    if (IsHeavy(*inst)) {
      std::optional<std::vector<int64_t>> rows = RowReductionInput(*inst);
      g.row_dims = (!g.has_heavy || g.row_dims == rows) ? rows : std::nullopt;
      g.has_heavy = true;
    }
    if (inst->opcode() == Opcode::kConstant) {
      g.copied_constants.insert(inst);
    } else {
      group_of[inst] = &g;
    }
  }

  // Grows `g` from `start` towards producers.
  void Grow(Group& g, Instruction* start, absl::flat_hash_map<Instruction*, Group*>& group_of) {
    Add(g, start, group_of);
    std::vector<Instruction*> frontier = {start};
    while (!frontier.empty() && g.members.size() < kMaxGroupSize) {
      Instruction* consumer = frontier.back();
      frontier.pop_back();
      if (IsContraction(*consumer)) continue;  // its operands stay inputs
      for (Instruction* p : consumer->operands()) {
        if (g.members.contains(p) || group_of.contains(p) || !Fusible(*p)) continue;
        if (IsSmallConstant(*p)) {
          Add(g, p, group_of);
          continue;
        }
        if (IsHeavy(*p) && g.has_heavy &&
            !(g.row_dims.has_value() && RowReductionInput(*p) == g.row_dims)) {
          continue;
        }
        if (IsContraction(*p) && !EpilogueOnly(g)) continue;
        bool all_users_inside = true;
        for (Instruction* u : p->users()) all_users_inside &= g.members.contains(u);
        if (!all_users_inside) continue;
        Add(g, p, group_of);
        frontier.push_back(p);
      }
    }
  }

  // True if every member is elementwise (a dot may take them as epilogue).
  static bool EpilogueOnly(const Group& g) {
    for (Instruction* m : g.members) {
      if (m->opcode() == Opcode::kConstant) continue;
      if (!hlo::GetOpDef(m->opcode()).traits.elementwise &&
          m->opcode() != Opcode::kBroadcast) {
        return false;
      }
    }
    return true;
  }

  // Moves the group's instructions into a new computation called from where
  // the root was.
  absl::Status Outline(hlo::Computation& parent, const Group& g) {
    const int64_t id = next_id_++;
    auto fused = std::make_unique<hlo::Computation>(absl::StrCat("fused_computation.", id));
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    std::vector<Instruction*> inputs;
    std::vector<Instruction*> members;
    for (Instruction* inst : parent.instructions()) {
      if (g.members.contains(inst)) members.push_back(inst);
    }
    for (Instruction* inst : members) {
      for (Instruction* op : inst->operands()) {
        if (g.members.contains(op) || map.contains(op)) continue;
        auto param = Instruction::CreateParameter(static_cast<int64_t>(inputs.size()),
                                                  absl::StrCat("param_", inputs.size()),
                                                  op->shape());
        map[op] = fused->AddInstruction(std::move(param));
        inputs.push_back(op);
      }
    }
    for (Instruction* inst : members) {
      std::vector<Instruction*> operands;
      for (Instruction* op : inst->operands()) operands.push_back(map.at(op));
      auto copy = Instruction::Create(inst->opcode(), inst->name(), inst->shape(), operands);
      for (const hlo::Attribute& a : inst->attributes()) copy->set_attr(a.name, a.value);
      copy->set_literal(inst->literal());
      copy->mutable_metadata() = inst->metadata();
      copy->set_location(inst->location());
      map[inst] = fused->AddInstruction(std::move(copy));
    }
    fused->set_root(map.at(g.root));
    hlo::Computation* callee = module_.AddComputation(std::move(fused));
    created_.insert(callee);

    auto call = Instruction::Create(Opcode::kCall, absl::StrCat("fusion.", id), g.root->shape(),
                                    inputs);
    call->set_attr("to_apply", callee);
    call->set_backend_config(kFusionBackendConfig);
    if (g.root->sharding()) call->set_sharding(*g.root->sharding());
    call->set_location(g.root->location());
    Instruction* call_inst = parent.AddInstructionBefore(std::move(call), g.root);
    g.root->ReplaceAllUsesWith(call_inst);
    // Remove members, users before producers; copied constants may still
    // have users outside.
    for (size_t i = members.size(); i-- > 0;) {
      Instruction* m = members[i];
      if (!m->users().empty()) continue;
      if (absl::Status st = parent.RemoveInstruction(m); !st.ok()) return st;
    }
    ++stats_.fusions;
    stats_.fused_instructions += static_cast<int64_t>(members.size());
    return absl::OkStatus();
  }

  hlo::Module& module_;
  FusionStats stats_;
  int64_t next_id_ = 0;
  absl::flat_hash_set<hlo::Computation*> created_;
};

}  // namespace

absl::StatusOr<FusionStats> FuseModule(hlo::Module& module) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  return Fuser(module).Run();
}

}  // namespace sharc::codegen

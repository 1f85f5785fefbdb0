#include "codegen/fusion.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/fusion_recompute.h"
#include "codegen/halide_kernel_factory.h"
#include "codegen/kernel_graph.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"

namespace sharc::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Bigger fused kernels compile slower and rarely run faster.
constexpr size_t kMaxGroupSize = 48;
// Copies of cheap elementwise producers may take a full group this far past
// the limit; broadcasts and iotas join a full group regardless: one left
// outside is a buffer written and read back, and it adds no arithmetic.
constexpr size_t kMaxGroupSizeWithCopies = kMaxGroupSize + 16;
// Constants up to this many elements are copied into every kernel using them.
constexpr int64_t kMaxInlinedConstant = 64;
// How many elementwise ops deep a duplicated value may be (Duplicable).
constexpr int kMaxDuplicatedDepth = 4;

// A dot or a convolution: its operands stay kernel inputs (the contraction
// reads each many times) and it takes only elementwise epilogues.
bool IsContraction(const Instruction& inst) {
  return inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution;
}

bool IsHeavy(const Instruction& inst) {
  return IsContraction(inst) || inst.opcode() == Opcode::kReduce ||
         inst.opcode() == Opcode::kReduceWindow || inst.opcode() == Opcode::kSelectAndScatter;
}

bool IsSmallConstant(const Instruction& inst) {
  return inst.opcode() == Opcode::kConstant && inst.shape().is_array() &&
         inst.shape().num_elements() <= kMaxInlinedConstant;
}

// Cheap enough to compute again in every kernel that reads it, rather than
// storing it once and loading it back in each (XLA's InstructionFusion
// duplicates cheap producers the same way): a value made from indices and
// smaller arrays only -- a broadcast, an iota, or an elementwise op that is
// not compute-bound (lowering.h) over such values (a causal mask:
// compare(iota, iota)). Without this, a broadcast or mask shared by two
// kernels (as CSE leaves them) is a buffer written once and read back by
// each. Not an elementwise op over full-size arrays: each copy would read
// those arrays again, which costs more than one store and a load per
// reader (measured on the training step: more bytes, more FLOPs).
bool Duplicable(const Instruction& inst, int depth = 0) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kBroadcast || op == Opcode::kIota) return true;
  if (op == Opcode::kConstant) return IsSmallConstant(inst);
  if (depth >= kMaxDuplicatedDepth || !hlo::GetOpDef(op).traits.elementwise ||
      IsComputeBoundOp(op)) {
    return false;
  }
  for (const Instruction* operand : inst.operands()) {
    if (!Duplicable(*operand, depth + 1)) return false;
  }
  return true;
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
  std::vector<Instruction*> joined;  // members in the order they joined
  // Members that stay outside too: small constants, and cheap producers whose
  // other readers are elsewhere (Duplicable); the group computes its own copy.
  absl::flat_hash_set<Instruction*> copied;
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
      RETURN_IF_ERROR(FuseComputation(*c));
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
    group_of_.clear();
    copies_of_.clear();
    std::vector<std::unique_ptr<Group>> groups;
    absl::flat_hash_set<const Instruction*> recomputed;  // every reader has a copy
    for (size_t i = order.size(); i-- > 0;) {
      Instruction* inst = order[i];
      if (group_of_.contains(inst) || !Fusible(*inst) || inst->opcode() == Opcode::kConstant) {
        continue;
      }
      if (EveryReaderHasACopy(computation, *inst, recomputed)) {
        recomputed.insert(inst);
        continue;
      }
      // A reshape read from outside stays an alias of its operand's buffer
      // (row-major: it moves no data). As a kernel's root it would stand
      // between a dot and its epilogue (gemm_result_reshapes.h).
      if (inst->opcode() == Opcode::kReshape) continue;
      auto group = std::make_unique<Group>();
      group->root = inst;
      Grow(*group, inst);
      groups.push_back(std::move(group));
    }
    for (const auto& g : groups) {
      if (!Outlined(*g)) continue;
      RETURN_IF_ERROR(Outline(computation, *g));
    }
    return absl::OkStatus();
  }

  // A lone instruction is already one kernel; fusing it changes nothing.
  static bool Outlined(const Group& g) {
    int64_t computed = 0;
    for (Instruction* m : g.members) computed += m->opcode() == Opcode::kConstant ? 0 : 1;
    return computed >= 2;
  }

  // True if no kernel will read `inst` from memory: each of its readers is
  // inside a fused kernel that computes its own copy of it, or is itself
  // such a recomputed value. Then `inst` needs no kernel of its own; the
  // last fusion holding a copy removes it. Every group holding a reader is
  // complete here (groups grow towards producers, in reverse order).
  bool EveryReaderHasACopy(const hlo::Computation& computation, const Instruction& inst,
                           const absl::flat_hash_set<const Instruction*>& recomputed) const {
    if (&inst == computation.root() || inst.users().empty()) return false;
    for (Instruction* u : inst.users()) {
      std::vector<const Group*> holders;
      auto owner = group_of_.find(u);
      if (owner != group_of_.end() && Outlined(*owner->second)) {
        holders.push_back(owner->second);
      } else if (!recomputed.contains(u)) {
        return false;  // `u` stays an instruction of its own and reads `inst`
      }
      if (auto copies = copies_of_.find(u); copies != copies_of_.end()) {
        holders.insert(holders.end(), copies->second.begin(), copies->second.end());
      }
      for (const Group* g : holders) {
        if (!g->members.contains(&inst)) return false;  // `g` reads it as an input
      }
    }
    return true;
  }

  // True if `p` can move into `g` for good: `g` owns every reader of `p`, and
  // no other group computes a copy of a reader without `p` (such a group
  // reads `p` as an input, so `p` must stay).
  bool Ownable(const Group& g, const Instruction& p) const {
    for (Instruction* u : p.users()) {
      if (!g.members.contains(u) || g.copied.contains(u)) {
        // A reader in a group made earlier (a later consumer) that computes
        // its own copy of `p` does not read it (RecomputeInputs).
        auto owner = group_of_.find(u);
        if (owner == group_of_.end() || owner->second == &g ||
            !owner->second->copied.contains(&p)) {
          return false;
        }
      }
      if (auto copies = copies_of_.find(u); copies != copies_of_.end()) {
        for (const Group* h : copies->second) {
          if (!h->members.contains(&p)) return false;
        }
      }
    }
    return true;
  }

  void Add(Group& g, Instruction* inst, bool copy) {
    g.members.insert(inst);
    g.joined.push_back(inst);
    if (IsHeavy(*inst)) {
      std::optional<std::vector<int64_t>> rows = RowReductionInput(*inst);
      g.row_dims = (!g.has_heavy || g.row_dims == rows) ? rows : std::nullopt;
      g.has_heavy = true;
    }
    if (copy || inst->opcode() == Opcode::kConstant) {
      g.copied.insert(inst);
      copies_of_[inst].push_back(&g);
    } else {
      group_of_[inst] = &g;
    }
  }

  // Grows `g` from `start` towards producers: first every producer whose
  // readers are all members (to a fixed point, as a reader may join after
  // its producer was first seen), then copies of the duplicable producers
  // left at the edge (and of their duplicable producers: the original still
  // reads them, so they can only be copies too).
  void Grow(Group& g, Instruction* start) {
    Add(g, start, /*copy=*/false);
    std::vector<Instruction*> frontier = {start};
    while (!frontier.empty() && g.members.size() < kMaxGroupSize) {
      Instruction* consumer = frontier.back();
      frontier.pop_back();
      if (IsContraction(*consumer)) continue;  // its operands stay inputs
      for (Instruction* p : consumer->operands()) {
        if (g.members.contains(p) || group_of_.contains(p) || !Fusible(*p)) continue;
        if (IsSmallConstant(*p)) {
          Add(g, p, /*copy=*/true);
          continue;
        }
        if (IsHeavy(*p) && g.has_heavy &&
            !(g.row_dims.has_value() && RowReductionInput(*p) == g.row_dims)) {
          continue;
        }
        if (IsContraction(*p) && !EpilogueOnly(g)) continue;
        if (!Ownable(g, *p)) continue;
        Add(g, p, /*copy=*/false);
        frontier.push_back(p);
      }
    }
    for (Instruction* m : g.joined) {
      if (!IsContraction(*m)) frontier.push_back(m);
    }
    while (!frontier.empty()) {
      Instruction* consumer = frontier.back();
      frontier.pop_back();
      for (Instruction* p : consumer->operands()) {
        if (g.members.contains(p) || group_of_.contains(p) || !Fusible(*p) || !Duplicable(*p)) {
          continue;
        }
        const bool generated = p->opcode() == Opcode::kBroadcast || p->opcode() == Opcode::kIota;
        if (!generated && g.members.size() >= kMaxGroupSizeWithCopies) continue;
        Add(g, p, /*copy=*/true);
        frontier.push_back(p);
      }
    }
    RecomputeInputs(g);
  }

  // The values `g` reads, each once, in the order its members first read
  // them.
  static std::vector<Instruction*> InputsOf(const Group& g) {
    std::vector<Instruction*> inputs;
    absl::flat_hash_set<Instruction*> seen;
    for (Instruction* m : g.joined) {
      for (Instruction* operand : m->operands()) {
        if (!g.members.contains(operand) && seen.insert(operand).second) inputs.push_back(operand);
      }
    }
    return inputs;
  }

  // Lets a kernel over rows compute the full-size and per-row values it
  // reads from what else it reads (fusion_recompute.h): softmax's gradient
  // computes the max, the sum of exp and the probabilities again from the
  // scores it reads anyway, instead of reading three more buffers. Copies
  // are taken one input at a time, as each may leave another computable.
  // Not in a kernel with a dot: its operands stay inputs.
  void RecomputeInputs(Group& g) {
    const hlo::Shape& shape = g.root->shape();
    if (!shape.is_array() || shape.rank() < 2 || shape.num_elements() == 0) return;
    const std::vector<int64_t> full(shape.dims().begin(), shape.dims().end());
    for (Instruction* m : g.members) {
      if (IsContraction(*m)) return;
    }
    if (g.has_heavy && g.row_dims != full) return;
    auto joinable = [this, &g](const Instruction& i) {
      auto owner = group_of_.find(&i);
      return Fusible(i) && (owner == group_of_.end() || owner->second == &g);
    };
    // Stored whatever this kernel does: a dot or an op no kernel computes
    // reads it, directly or through reshapes (which stay aliases: a dot's
    // 2-D view of its operand), or the computation returns it.
    std::function<bool(const Instruction&)> stored = [&stored](const Instruction& i) {
      if (i.parent() != nullptr && &i == i.parent()->root()) return true;
      for (const Instruction* u : i.users()) {
        if (IsContraction(*u) || !Fusible(*u)) return true;
        if (u->opcode() == Opcode::kReshape && stored(*u)) return true;
      }
      return false;
    };
    bool changed = true;
    while (changed) {
      changed = false;
      const std::vector<Instruction*> inputs = InputsOf(g);
      const absl::flat_hash_set<Instruction*> input_set(inputs.begin(), inputs.end());
      for (Instruction* input : inputs) {
        std::optional<std::vector<Instruction*>> closure =
            RecomputeClosure(input, g.members, input_set, full, joinable, stored, RecomputeLimits());
        if (!closure.has_value() || g.members.size() + closure->size() > kMaxGroupSizeWithCopies) {
          continue;
        }
        for (Instruction* i : *closure) Add(g, i, /*copy=*/true);
        changed = true;
        break;
      }
    }
  }

  // True if every member is elementwise (a dot may take them as epilogue),
  // or a broadcast, or a reshape of a kernel input (a residual read in the
  // GEMM's 2-D shape: gemm_result_reshapes.h), but not of a dot: the GEMM
  // schedule computes a dot inside its output's tiles only where the path
  // between them is elementwise in the dot's dims (pipeline_builder.cc).
  static bool EpilogueOnly(const Group& g) {
    for (Instruction* m : g.members) {
      if (m->opcode() == Opcode::kConstant) continue;
      if (m->opcode() == Opcode::kReshape && !g.members.contains(m->operand(0)) &&
          !IsContraction(*m->operand(0))) {
        continue;
      }
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
    // Remove members, users before producers; copies may still have readers
    // outside (they go with the last fusion that holds one).
    for (size_t i = members.size(); i-- > 0;) {
      Instruction* m = members[i];
      if (!m->users().empty()) continue;
      RETURN_IF_ERROR(parent.RemoveInstruction(m));
    }
    ++stats_.fusions;
    stats_.fused_instructions += static_cast<int64_t>(members.size());
    return absl::OkStatus();
  }

  hlo::Module& module_;
  // Per computation being fused: the group owning each member, and the
  // groups holding a copy of each copied member.
  absl::flat_hash_map<Instruction*, Group*> group_of_;
  absl::flat_hash_map<const Instruction*, std::vector<const Group*>> copies_of_;
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

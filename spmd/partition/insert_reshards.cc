#include "spmd/partition/insert_reshards.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "spmd/partition/computation_copy.h"
#include "spmd/partition/global_view.h"
#include "spmd/partition/halo.h"
#include "spmd/partition/reshard.h"
#include "spmd/partition/strategy.h"
#include "spmd/partition/window_split_convolution.h"
#include "spmd/sharding_rule.h"
#include "spmd/sharding_util.h"
#include "spmd/unreduced.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;
using hlo::Shape;
using hlo::Sharding;

namespace {

// True if both lists hold the same groups of devices, in any order.
bool SameGroups(std::vector<std::vector<int64_t>> a, std::vector<std::vector<int64_t>> b) {
  for (auto* list : {&a, &b}) {
    for (std::vector<int64_t>& g : *list) std::sort(g.begin(), g.end());
    std::sort(list->begin(), list->end());
  }
  return a == b;
}

// True if the partial results of `inst`'s split reduction are partial sums
// (a dot, a convolution, a reduce by addition), so that an unreduced result
// can keep them; a max-reduce's partial maxima are not.
bool SumsPartials(const Instruction& inst) {
  if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) return true;
  if (inst.opcode() != Opcode::kReduce || inst.operand_count() != 2) return false;
  return hlo::MatchBinaryReducer(*inst.attr_computation("to_apply")) == Opcode::kAdd;
}

// State shared by the rewriters of one module.
struct InsertContext {
  Module* module = nullptr;
  ComputationMap scalar_copies;
  // Bodies rewritten so far, by "name|param sharding|root sharding", and how
  // many copies of each body exist.
  absl::flat_hash_map<std::string, Computation*> bodies;
  absl::flat_hash_map<std::string, int64_t> body_copies;
  StrategyLog* log = nullptr;
  bool halo_exchange = true;
};

class ReshardInserter {
 public:
  explicit ReshardInserter(InsertContext& context) : context_(context) {}

  // Rewrites `comp`; parameters take `param_sharding` if given (bodies of
  // control flow), else their own; the root ends in `root_sharding` if
  // given, else its own.
  absl::StatusOr<Computation*> Run(const Computation& comp,
                                   const std::optional<Sharding>& param_sharding,
                                   const std::optional<Sharding>& root_sharding) {
    out_ = context_.module->AddComputation(std::make_unique<Computation>(comp.name()));
    for (const Instruction* inst : comp.instructions()) {
      ASSIGN_OR_RETURN(Instruction* value, Rewrite(*inst, param_sharding));
      ASSIGN_OR_RETURN(value, ToOwnSharding(*inst, value));
      values_[inst] = value;
    }
    const Instruction* root = comp.root();
    out_->set_root(Need(values_.at(root), root_sharding ? *root_sharding : ShardingOrReplicated(*root)));
    return out_;
  }

 private:
  // `value` laid out as `target`: itself, or a reshard of it.
  Instruction* Need(Instruction* value, const Sharding& target) {
    if (NeedsNoReshard(ShardingOrReplicated(*value), target)) return value;
    return AddGlobalView(*out_, hlo::kSpmdReshard, value, target, value->name() + ".reshard");
  }

  Instruction* Operand(const Instruction& inst, int64_t i, const Sharding& target) {
    return Need(values_.at(inst.operand(i)), target);
  }

  Instruction* Clone(const Instruction& inst, const std::vector<Instruction*>& operands,
                     const Sharding& sharding) {
    Instruction* c = out_->AddInstruction(CloneWith(inst, operands, inst.shape(),
                                                    FreshGlobalName(*out_, inst.name()),
                                                    context_.scalar_copies));
    c->set_sharding(sharding);
    return c;
  }

  // Every value ends in its instruction's own sharding (as in GSPMD), and
  // that value carries the instruction's name.
  absl::StatusOr<Instruction*> ToOwnSharding(const Instruction& inst, Instruction* value) {
    if (!inst.has_sharding() || inst.opcode() == Opcode::kParameter) return value;
    const Sharding& own = *inst.sharding();
    const Sharding produced = ShardingOrReplicated(*value);
    if (own.IsManual() || own.HasManualSubgroup() || produced.IsManual()) return value;
    if (NeedsNoReshard(produced, own)) return value;
    // rng draws a stream seeded by its name (hlo/ops/random_ops.cc): it
    // keeps the name, or the partitioned program would draw other numbers.
    if (inst.opcode() == Opcode::kRng && value->name() == inst.name()) {
      return AddGlobalView(*out_, hlo::kSpmdReshard, value, own,
                           FreshGlobalName(*out_, inst.name() + ".reshard"));
    }
    if (value->name() == inst.name()) {
      value->set_name(FreshGlobalName(*out_, inst.name() + ".local"));
    }
    return AddGlobalView(*out_, hlo::kSpmdReshard, value, own, inst.name());
  }

  // An op of a manual region: its operands' per-device values as they are.
  Instruction* ManualClone(const Instruction& inst, const Sharding& own) {
    std::vector<Instruction*> ops;
    for (const Instruction* op : inst.operands()) ops.push_back(values_.at(op));
    return Clone(inst, ops, own);
  }

  // A partially manual op that splits no data dim (last_tile_dims={manual,
  // replicated} over whole dims) fed only by values of a manual region, such
  // as SPMDFullToShardShape's: every device of a manual group holds the same
  // whole per-device value, so the op runs on it as in a manual region.
  // (Fed by a value split inside the region, it replicates that value
  // within the group first: the default action.)
  bool InsidePartialManualRegion(const Instruction& inst, const Sharding& own) const {
    auto per_device = [](const Sharding& s) {
      return IsManualLike(s) || (s.HasManualSubgroup() && s.NumTiles() == 1);
    };
    if (!own.HasManualSubgroup() || own.NumTiles() != 1) return false;
    for (const Instruction* op : inst.operands()) {
      if (!per_device(ShardingOrReplicated(*values_.at(op)))) return false;
    }
    return inst.operand_count() > 0;
  }

  // A partially manual op that splits data dims inside its region, fed by
  // values of the same manual groups.
  bool FedByManualGroups(const Instruction& inst, const Sharding& own) const {
    for (const Instruction* op : inst.operands()) {
      const Sharding s = ShardingOrReplicated(*values_.at(op));
      if (!s.IsTiled() || !s.HasManualSubgroup() || s.TiledDataRank() != op->shape().rank() ||
          GroupsOf(s) != GroupsOf(own)) {
        return false;
      }
    }
    return inst.operand_count() > 0;
  }

  // A partially manual layout with its data dims replicated: each device
  // holds its manual group's whole value.
  static Sharding GroupsOf(const Sharding& s) {
    std::vector<int64_t> all(static_cast<size_t>(s.TiledDataRank()));
    std::iota(all.begin(), all.end(), 0);
    return ReplicateDims(s, all);
  }

  // Such an op runs on each manual group's whole value: its operands are
  // gathered within the group, and its result is that value (consumers
  // slice their tiles locally). An elementwise op and a collective run on
  // the tiles as they are: a collective's pairs and groups name devices,
  // so it must see each device's own tile.
  Instruction* InManualGroups(const Instruction& inst, const Sharding& own) {
    const bool tiles = inst.opcode() == Opcode::kCollectivePermute ||
                       inst.opcode() == Opcode::kAllReduce || IsElementwiseOnSameShape(inst);
    const Sharding layout = tiles ? own : GroupsOf(own);
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      operands.push_back(Operand(inst, i, tiles ? own : GroupsOf(ShardingOrReplicated(*values_.at(inst.operand(i))))));
    }
    return Clone(inst, operands, layout);
  }

  static bool IsElementwiseOnSameShape(const Instruction& inst) {
    if (!hlo::HasOpDef(inst.opcode()) || !hlo::GetOpDef(inst.opcode()).traits.elementwise) {
      return false;
    }
    for (const Instruction* op : inst.operands()) {
      if (op->shape().dims() != inst.shape().dims()) return false;
    }
    return inst.shape().is_array();
  }

  // Replicate every operand and run the op whole.
  Instruction* DefaultAction(const Instruction& inst) {
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      operands.push_back(Operand(inst, i, Sharding::Replicated()));
    }
    return Clone(inst, operands, Sharding::Replicated());
  }

  // An op whose sharding puts all of it on one device (XLA's
  // HandleSingleDevice): its operands are taken to that device and it runs
  // whole; other devices read its result broadcast from there (reshard.h).
  std::optional<Instruction*> OnOneDevice(const Instruction& inst, const Sharding& own) {
    std::optional<int64_t> device;
    for (const Sharding& leaf : own.LeavesFor(inst.shape())) {
      if (!leaf.IsMaximal() || (device && *device != leaf.maximal_device())) return std::nullopt;
      device = leaf.maximal_device();
    }
    if (!device) return std::nullopt;
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      operands.push_back(Operand(inst, i, Sharding::Maximal(*device)));
    }
    return Clone(inst, operands, own);
  }

  // A sort split along its sorted dim (XLA's HandleSort): the split moves
  // to the first other dim that holds it evenly, so each device sorts whole
  // rows; the operands get there and the result back by all-to-all.
  //   (f32[7,1024,1024], s32[..]) sort {devices=[1,2,4]<=[8]}, dimensions={2}
  //     -> operands {devices=[1,8,1]<=[8]}, sort of f32[7,128,1024] pieces
  std::optional<Instruction*> SortWithMovedTiles(const Instruction& inst, const Sharding& own) {
    const Shape& shape = inst.operand(0)->shape();
    const int64_t sorted = inst.attr_ints("dimensions")[0];
    const std::vector<Sharding> leaves = own.LeavesFor(inst.shape());
    const Sharding layout = leaves[0];
    for (const Sharding& leaf : leaves) {
      if (leaf != layout) return std::nullopt;
    }
    if (shape.rank() < 2 || !layout.IsTiled() || layout.HasManualSubgroup() ||
        layout.HasUnreduced() || layout.TileCount(sorted) == 1) {
      return std::nullopt;
    }
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (d == sorted || shape.dim(d) % (layout.TileCount(sorted) * layout.TileCount(d)) != 0) {
        continue;
      }
      const Sharding moved = MoveTiles(layout, sorted, d, layout.TileCount(sorted));
      std::vector<Instruction*> operands;
      for (int64_t i = 0; i < inst.operand_count(); ++i) operands.push_back(Operand(inst, i, moved));
      return Clone(inst, operands,
                   inst.shape().is_tuple()
                       ? Sharding::Tuple(std::vector<Sharding>(leaves.size(), moved))
                       : moved);
    }
    return std::nullopt;
  }

  // A topk whose operand is split evenly along its last dim, each shard
  // holding at least k: each device takes the top k of its shard and the
  // candidates are combined by a gather, sort and slice
  // (spmd/partition/topk_combine.h) instead of gathering the operand.
  std::optional<Instruction*> TopKPerShard(const Instruction& inst) {
    Instruction* x = values_.at(inst.operand(0));
    const Sharding layout = ReducedForm(ShardingOrReplicated(*x));
    const Shape& shape = inst.operand(0)->shape();
    const int64_t last = shape.rank() - 1, k = inst.attr_int("k");
    if (last < 0 || !layout.IsTiled() || layout.HasManualSubgroup() ||
        ShardingOrReplicated(*x).HasUnreduced()) {
      return std::nullopt;
    }
    const int64_t n = layout.TileCount(last);
    if (n == 1 || shape.dim(last) % n != 0 || shape.dim(last) / n < k) return std::nullopt;
    const Sharding rows = ReplicateDims(layout, {last});
    Instruction* partial = Clone(inst, {x}, Sharding::Tuple({rows, rows}));
    partial->set_name(FreshGlobalName(*out_, inst.name() + ".partial"));
    Instruction* complete = AddGlobalView(*out_, hlo::kSpmdAllReduce, partial,
                                          Sharding::Tuple({rows, rows}), inst.name());
    complete->set_attr("backend_config", FormatReplicaGroups(GroupsAlongDims(layout, {last})));
    return complete;
  }

  // A sum, difference, negation or copy of partial values laid out as its
  // own unreduced sharding is the partial value of the result: no
  // collective (as XLA keeps copy(dot) unreduced).
  std::optional<Instruction*> KeepPartials(const Instruction& inst, const Sharding& own) {
    if (!own.HasUnreduced()) return std::nullopt;
    const Opcode op = inst.opcode();
    if (op != Opcode::kAdd && op != Opcode::kSubtract && op != Opcode::kNegate &&
        op != Opcode::kCopy) {
      return std::nullopt;
    }
    std::vector<Instruction*> operands;
    for (const Instruction* operand : inst.operands()) {
      Instruction* value = values_.at(operand);
      if (ShardingOrReplicated(*value) != own) return std::nullopt;
      operands.push_back(value);
    }
    return Clone(inst, operands, own);
  }

  // A convolution whose input and kernel are split alike along a window
  // dim (window_split_convolution.h) keeps them so when that sends less
  // than the best plan keeping the window whole (which gathers both):
  // each device convolves its blocks with a halo, and the partial results
  // are all-reduced.
  std::optional<Instruction*> SplitAlongWindow(const Instruction& inst, const ShardingRule& rule) {
    if (inst.opcode() != Opcode::kConvolution || !context_.halo_exchange) return std::nullopt;
    Instruction* lhs = values_.at(inst.operand(0));
    Instruction* rhs = values_.at(inst.operand(1));
    const std::vector<Sharding> current = {ShardingOrReplicated(*lhs), ShardingOrReplicated(*rhs)};
    std::optional<WindowSplitPlan> plan =
        PlanWindowSplitConvolution(inst, current[0], current[1]);
    if (!plan) return std::nullopt;
    absl::StatusOr<OpStrategy> whole =
        ChooseStrategy(inst, rule, current, ReducedForm(ShardingOrReplicated(inst)), nullptr);
    const int64_t n = static_cast<int64_t>(plan->groups[0].size());
    const int64_t all_reduce = 2 * (n - 1) * inst.shape().byte_size() / n;
    if (whole.ok() && plan->bytes_sent + all_reduce > whole->bytes_sent) return std::nullopt;
    Instruction* partial = Clone(inst, {lhs, rhs}, Sharding::Replicated());
    partial->set_name(FreshGlobalName(*out_, inst.name() + ".partial"));
    Instruction* complete =
        AddGlobalView(*out_, hlo::kSpmdAllReduce, partial, Sharding::Replicated(), inst.name());
    complete->set_attr("backend_config", FormatReplicaGroups(plan->groups));
    return complete;
  }

  // Plans compute whole values: unreduced operands are summed first and an
  // unreduced result is split into partials after (spmd/unreduced.h),
  // except that partial sums over exactly the result's unreduced groups
  // are kept as they are.
  absl::StatusOr<Instruction*> SplitByRule(const Instruction& inst, const ShardingRule& rule) {
    std::vector<Sharding> current;
    for (const Instruction* op : inst.operands()) {
      current.push_back(ReducedForm(ShardingOrReplicated(*values_.at(op))));
    }
    const Sharding own = ShardingOrReplicated(inst);
    const bool explain = context_.log != nullptr && context_.log->name == inst.name();
    StrategyExplanation explanation;
    ASSIGN_OR_RETURN(OpStrategy strategy, ChooseStrategy(inst, rule, current, ReducedForm(own),
                                                         explain ? &explanation : nullptr));
    std::string account = explain ? explanation.ToText(inst) : "";
    if (std::optional<Instruction*> halo = HaloExchange(inst, strategy, current, &account)) {
      if (explain) context_.log->accounts.push_back(account);
      return *halo;
    }
    if (explain) context_.log->accounts.push_back(account);
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      operands.push_back(Operand(inst, i, strategy.operand_targets[static_cast<size_t>(i)]));
    }
    Instruction* result = Clone(inst, operands, strategy.local_result);
    if (strategy.split_reduction_factors.empty()) return result;
    std::vector<std::vector<int64_t>> groups =
        GroupsAlongDims(strategy.iteration, strategy.split_reduction_factors);
    if (own.HasUnreduced() && SumsPartials(inst) &&
        NeedsNoReshard(strategy.local_result, ReducedForm(own)) &&
        SameGroups(groups, UnreducedGroups(own, context_.module->config().num_partitions))) {
      result->set_sharding(own);
      return result;
    }
    result->set_name(FreshGlobalName(*out_, inst.name() + ".partial"));
    // strategy.h decided whether one reduce-scatter replaces the all-reduce
    // and the slice after it.
    Instruction* complete =
        strategy.scatter_dim
            ? AddGlobalView(*out_, hlo::kSpmdReduceScatter, result, *inst.sharding(), inst.name())
            : AddGlobalView(*out_, hlo::kSpmdAllReduce, result, strategy.local_result, inst.name());
    complete->set_attr("backend_config", FormatReplicaGroups(groups));
    return complete;
  }

  // Slice, pad, reverse, reduce-window, concatenate or convolution along a
  // split dim by halo exchange (halo.h): the operands take the shardings
  // the plan names and each device fetches the window it needs. Taken when it sends no more than `strategy`, the best
  // plan keeping the changed dims whole (ties go to the halo, as GSPMD
  // always exchanges halos here).
  std::optional<Instruction*> HaloExchange(const Instruction& inst, const OpStrategy& strategy,
                                           const std::vector<Sharding>& current,
                                           std::string* account) {
    if (!context_.halo_exchange || !inst.has_sharding() || inst.sharding()->HasUnreduced()) {
      return std::nullopt;
    }
    const Sharding& own = *inst.sharding();
    std::optional<HaloPlan> plan = PlanHalo(inst, own);
    if (!plan) return std::nullopt;
    int64_t bytes = plan->bytes_sent;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      bytes += ReshardBytesSent(inst.operand(i)->shape(), current[i],
                                plan->operand_shardings[static_cast<size_t>(i)]);
    }
    const bool take = bytes <= strategy.bytes_sent;
    if (context_.log != nullptr && context_.log->name == inst.name()) {
      std::vector<std::string> taken;
      for (const Sharding& t : plan->operand_shardings) taken.push_back(t.ToString());
      absl::StrAppend(account, "halo exchange (operands in ", absl::StrJoin(taken, ", "),
                      ", each device fetching its window with collective-permutes): ", bytes,
                      " B: ",
                      take ? "chosen instead (it sends no more than the plan chosen above)"
                           : "not taken (it sends more)",
                      "\n");
    }
    if (!take) return std::nullopt;
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < inst.operand_count(); ++i)
      operands.push_back(Operand(inst, i, plan->operand_shardings[static_cast<size_t>(i)]));
    return Clone(inst, operands, own);
  }

  absl::StatusOr<Instruction*> Rewrite(const Instruction& inst,
                                       const std::optional<Sharding>& param_sharding) {
    const Sharding own = ShardingOrReplicated(inst);
    switch (inst.opcode()) {
      case Opcode::kParameter: {
        Sharding s = param_sharding ? *param_sharding : own;
        auto p = Instruction::CreateParameter(inst.parameter_number(), inst.name(), inst.shape());
        p->set_location(inst.location());
        p->mutable_metadata() = inst.metadata();
        p->set_sharding(s);
        return out_->AddInstruction(std::move(p));
      }
      case Opcode::kConstant:
        // In a manual region a constant is the whole value on every device,
        // which is what the region's per-device value is. A maximal constant
        // stays maximal: other devices read it broadcast from its device, as
        // in XLA (it is known everywhere, but the program says where it lives).
        return Clone(inst, {}, own.IsManual() || own.IsMaximal() ? own : Sharding::Replicated());
      case Opcode::kRng:
        // A replicated draw is made on device 0 and broadcast, as XLA does:
        // a backend may draw other numbers on each device (sharc's draw is
        // seeded by the name and the same everywhere, but the partitioned
        // program should not depend on it).
        if (own.IsReplicated()) {
          return Clone(inst, {Operand(inst, 0, own), Operand(inst, 1, own)}, Sharding::Maximal(0));
        }
        break;
      case Opcode::kSort:
        if (std::optional<Instruction*> moved = SortWithMovedTiles(inst, own)) return *moved;
        break;
      case Opcode::kTopK:
        if (own.IsManual() || own.HasManualSubgroup()) break;
        if (std::optional<Instruction*> split = TopKPerShard(inst)) return *split;
        break;
      case Opcode::kIota:
        // (An unreduced iota is computed whole, then split into partials.)
        return Clone(inst, {},
                     own.IsTiled() || own.IsManual() ? ReducedForm(own) : Sharding::Replicated());
      case Opcode::kTuple: {
        std::vector<Instruction*> ops;
        std::vector<Sharding> leaves;
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          Sharding elem = own.ElementSharding(inst.shape(), i);
          ops.push_back(Operand(inst, i, elem));
          for (const Sharding& leaf : elem.LeavesFor(inst.operand(i)->shape())) leaves.push_back(leaf);
        }
        return Clone(inst, ops, Sharding::Tuple(leaves));
      }
      case Opcode::kGetTupleElement: {
        Instruction* t = values_.at(inst.operand(0));
        Sharding elem = ShardingOrReplicated(*t).ElementSharding(inst.operand(0)->shape(), inst.attr_int("index"));
        return Clone(inst, {t}, elem);
      }
      case Opcode::kWhile: {
        Instruction* init = Operand(inst, 0, own);
        // In a manual region each device decides its own trip count.
        const Sharding predicate = IsManualLike(own) ? Sharding::Manual() : Sharding::Replicated();
        ASSIGN_OR_RETURN(Computation * cond, Body(*inst.attr_computation("condition"), own, predicate));
        ASSIGN_OR_RETURN(Computation * body, Body(*inst.attr_computation("body"), own, own));
        Instruction* c = Clone(inst, {init}, own);
        SetCallees(c, "condition", {cond});
        SetCallees(c, "body", {body});
        return c;
      }
      case Opcode::kCall: {
        const Computation* callee = inst.attr_computation("to_apply");
        std::vector<Instruction*> ops;
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          ops.push_back(Operand(inst, i, ShardingOrReplicated(*callee->parameter(i))));
        }
        ASSIGN_OR_RETURN(Computation * body, Body(*callee, std::nullopt, own));
        Instruction* c = Clone(inst, ops, own);
        SetCallees(c, "to_apply", {body});
        return c;
      }
      case Opcode::kConditional: {
        const Sharding selector = IsManualLike(own) ? Sharding::Manual() : Sharding::Replicated();
        std::vector<Instruction*> ops{Operand(inst, 0, selector)};
        std::vector<Computation*> branches;
        for (size_t k = 0; k < inst.called_computations().size(); ++k) {
          const Computation* branch = inst.called_computations()[k];
          Sharding param = branch->num_parameters() > 0 ? ShardingOrReplicated(*branch->parameter(0))
                                                        : Sharding::Replicated();
          ops.push_back(Operand(inst, static_cast<int64_t>(k) + 1, param));
          ASSIGN_OR_RETURN(Computation * b, Body(*branch, param, own));
          branches.push_back(b);
        }
        Instruction* c = Clone(inst, ops, own);
        SetBranches(c, inst, branches);
        return c;
      }
      case Opcode::kCustomCall: {
        // A sharding constraint; so are the global-view ops of a module that
        // already went through these passes (`--stop-after`): on global
        // values they are the identity, and their sharding is the layout
        // asked for there.
        if (IsCustomCallTo(inst, hlo::kShardingTarget) ||
            hlo::IsSpmdGlobalViewTarget(inst.attr_string("custom_call_target"))) {
          Instruction* value = values_.at(inst.operand(0));
          if (NeedsNoReshard(ShardingOrReplicated(*value), own)) return value;
          return AddGlobalView(*out_, hlo::kSpmdReshard, value, own, inst.name());
        }
        if (IsCustomCallTo(inst, hlo::kFullToShardShapeTarget)) {
          // The operand's shard becomes this device's manual value (in a
          // partially manual region, its manual group's value, laid out as
          // the op's own sharding says).
          return Clone(inst, {Operand(inst, 0, ReducedForm(ShardingOrReplicated(*inst.operand(0))))},
                       own.HasManualSubgroup() ? own : Sharding::Manual());
        }
        if (IsCustomCallTo(inst, hlo::kShardToFullShapeTarget)) {
          // This device's value, laid out as the operand's own sharding,
          // is its tile of the result (as in GSPMD).
          const Instruction& op = *inst.operand(0);
          if (op.has_sharding() && op.sharding()->HasManualSubgroup()) {
            return Clone(inst, {Operand(inst, 0, *op.sharding())}, own);
          }
          return Clone(inst, {values_.at(inst.operand(0))}, ReducedForm(own));
        }
        // Any other custom-call of a manual region (manual, or a tuple of
        // manual values) runs on each device's own values, like every op
        // there: replicating its operands would mean leaving the region.
        if (IsManualLike(own, inst.shape())) return ManualClone(inst, own);
        // A memory-space annotation (MoveToHost, ...) is its operand, element
        // for element: its pointwise rule splits it like its operand.
        if (hlo::IsMemorySpaceAnnotation(inst.attr_string("custom_call_target"))) break;
        if (std::optional<Instruction*> placed = OnOneDevice(inst, own)) return *placed;
        return DefaultAction(inst);
      }
      default:
        break;
    }
    if (std::optional<Instruction*> placed = OnOneDevice(inst, own)) return *placed;
    ASSIGN_OR_RETURN(ShardingRule rule, GetShardingRule(inst));
    // Inside a manual region values are already per device.
    if (IsManualLike(own, inst.shape()) || InsidePartialManualRegion(inst, own)) {
      return ManualClone(inst, own);
    }
    if (own.HasManualSubgroup() && own.IsTiled() && FedByManualGroups(inst, own)) {
      return InManualGroups(inst, own);
    }
    if (rule.kind != ShardingRule::Kind::kFactors || own.HasManualSubgroup()) {
      return DefaultAction(inst);
    }
    if (std::optional<Instruction*> kept = KeepPartials(inst, own)) return *kept;
    if (std::optional<Instruction*> split = SplitAlongWindow(inst, rule)) return *split;
    return SplitByRule(inst, rule);
  }

  // Rewrites a control-flow body for one set of shardings. A body used at
  // several sites with different shardings gets one copy per set.
  absl::StatusOr<Computation*> Body(const Computation& callee, const std::optional<Sharding>& params,
                                    const Sharding& root) {
    std::string key = absl::StrCat(callee.name(), "|", params ? params->ToString() : "own", "|",
                                   root.ToString());
    auto it = context_.bodies.find(key);
    if (it != context_.bodies.end()) return it->second;
    ReshardInserter inner(context_);
    ASSIGN_OR_RETURN(Computation * out, inner.Run(callee, params, root));
    int64_t copies = context_.body_copies[callee.name()]++;
    if (copies > 0) out->set_name(absl::StrCat(callee.name(), ".", copies));
    context_.bodies[key] = out;
    return out;
  }

  InsertContext& context_;
  Computation* out_ = nullptr;
  absl::flat_hash_map<const Instruction*, Instruction*> values_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> InsertReshards(const Module& global,
                                                       const InsertReshardsOptions& options) {
  if (global.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  auto out = std::make_unique<Module>(global.name());
  out->mutable_config() = global.config();
  InsertContext context;
  context.module = out.get();
  context.log = options.log;
  context.halo_exchange = options.halo_exchange;
  context.scalar_copies = CopyScalarComputations(global, *out);
  ReshardInserter inserter(context);
  ASSIGN_OR_RETURN(Computation * entry, inserter.Run(*global.entry(), std::nullopt, std::nullopt));
  out->set_entry(entry);
  out->SortCalleesFirst();
  return out;
}

}  // namespace sharc::spmd

#include "spmd/partition/partitioner.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "spmd/partition/local_builder.h"
#include "spmd/partition/reshard.h"
#include "spmd/partition/strategy.h"
#include "spmd/sharding_rule.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;
using hlo::Shape;
using hlo::Sharding;

namespace {

// A per-device value and the layout it has.
struct Local {
  Instruction* value = nullptr;
  Sharding sharding;
};

bool IsTarget(const Instruction& inst, const char* target) {
  return inst.opcode() == Opcode::kCustomCall && inst.attr_string("custom_call_target") == target;
}

Sharding ShardingOf(const Instruction& inst) {
  return inst.sharding() ? *inst.sharding() : Sharding::Replicated();
}

// Manual, or a tuple of manual leaves: a value of a manual region.
bool IsManualLike(const Sharding& s) {
  if (s.IsManual()) return true;
  if (!s.IsTuple() || s.tuple_elements().empty()) return false;
  for (const Sharding& e : s.tuple_elements()) {
    if (!IsManualLike(e)) return false;
  }
  return true;
}

// Copies a computation unchanged (scalar reducers and comparators).
Computation* CopyComputation(const Computation& comp, Module& into,
                             const absl::flat_hash_map<const Computation*, Computation*>& mapped) {
  auto copy = std::make_unique<Computation>(comp.name());
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (const Instruction* inst : comp.instructions()) {
    std::vector<Instruction*> ops;
    for (const Instruction* op : inst->operands()) ops.push_back(map.at(op));
    auto c = Instruction::Create(inst->opcode(), inst->name(), inst->shape(), ops);
    for (const hlo::Attribute& a : inst->attributes()) {
      hlo::AttrValue v = a.value;
      if (auto* cp = std::get_if<Computation*>(&v)) *cp = mapped.at(*cp);
      if (auto* l = std::get_if<std::vector<Computation*>>(&v))
        for (Computation*& x : *l) x = mapped.at(x);
      c->set_attr(a.name, std::move(v));
    }
    c->set_literal(inst->literal());
    c->set_parameter_number(inst->parameter_number());
    c->mutable_metadata() = inst->metadata();
    map[inst] = copy->AddInstruction(std::move(c));
  }
  copy->set_root(map.at(comp.root()));
  return into.AddComputation(std::move(copy));
}

class ComputationPartitioner {
 public:
  ComputationPartitioner(PartitionContext& context,
                         absl::flat_hash_map<const Computation*, Computation*>& mapped,
                         absl::flat_hash_map<const Computation*, Sharding>& body_shardings)
      : context_(context), mapped_(mapped), body_shardings_(body_shardings) {}

  // Partitions `comp`; parameters take `param_sharding` if given (bodies of
  // control flow), else their own; the root ends in `root_sharding` if
  // given, else its own.
  absl::StatusOr<Computation*> Run(const Computation& comp,
                                   const std::optional<Sharding>& param_sharding,
                                   const std::optional<Sharding>& root_sharding) {
    auto out = std::make_unique<Computation>(comp.name());
    Computation* raw = context_.module->AddComputation(std::move(out));
    LocalBuilder b(context_, *raw);
    absl::flat_hash_map<const Instruction*, Local> locals;
    for (const Instruction* inst : comp.instructions()) {
      ASSIGN_OR_RETURN(Local local, PartitionInstruction(b, *inst, locals, param_sharding));
      ASSIGN_OR_RETURN(local, ToOwnSharding(b, *inst, local));
      locals[inst] = local;
    }
    const Instruction* root = comp.root();
    Local r = locals.at(root);
    Sharding want = root_sharding ? *root_sharding : ShardingOf(*root);
    ASSIGN_OR_RETURN(Instruction* final_root, Reshard(b, r.value, root->shape(), r.sharding, want));
    raw->set_root(final_root);
    return raw;
  }

 private:
  // Every value ends in its instruction's own sharding (as in GSPMD), and
  // that per-device value carries the instruction's name.
  absl::StatusOr<Local> ToOwnSharding(LocalBuilder& b, const Instruction& inst, Local local) {
    if (!inst.has_sharding() || inst.opcode() == Opcode::kParameter) return local;
    const Sharding& own = *inst.sharding();
    // A constant or iota in a manual region is the whole value on every
    // device, which is what the region's per-device value is.
    if (own.IsManual() && local.sharding.IsReplicated()) return Local{local.value, own};
    if (own.IsManual() || own.HasManualSubgroup() || local.sharding.IsManual()) return local;
    ASSIGN_OR_RETURN(Instruction* v, Reshard(b, local.value, inst.shape(), local.sharding, own));
    if (v != local.value && v->opcode() != Opcode::kParameter) {
      if (Instruction* holder = b.computation().FindInstruction(inst.name());
          holder != nullptr && holder != v && holder->opcode() != Opcode::kParameter) {
        holder->set_name(b.FreshName(inst.name() + ".local"));
      }
      if (b.computation().FindInstruction(inst.name()) == nullptr) v->set_name(inst.name());
    }
    return Local{v, own};
  }

  absl::StatusOr<Instruction*> Operand(LocalBuilder& b, const Instruction& inst, int64_t i,
                                       absl::flat_hash_map<const Instruction*, Local>& locals,
                                       const Sharding& target) {
    const Instruction* op = inst.operand(i);
    const Local& l = locals.at(op);
    return Reshard(b, l.value, op->shape(), l.sharding, target);
  }

  // Clones `inst` onto per-device operands with the given local shape.
  // (Control-flow callees are set by the caller afterwards.)
  Instruction* EmitLocal(LocalBuilder& b, const Instruction& inst,
                         const std::vector<Instruction*>& operands, const Shape& local_shape) {
    auto c = Instruction::Create(inst.opcode(), inst.name(), local_shape, operands);
    auto map = [&](Computation* comp) {
      auto it = mapped_.find(comp);
      return it != mapped_.end() ? it->second : comp;
    };
    for (const hlo::Attribute& a : inst.attributes()) {
      hlo::AttrValue v = a.value;
      if (auto* cp = std::get_if<Computation*>(&v)) *cp = map(*cp);
      if (auto* l = std::get_if<std::vector<Computation*>>(&v))
        for (Computation*& x : *l) x = map(x);
      c->set_attr(a.name, std::move(v));
    }
    c->set_literal(inst.literal());
    c->set_parameter_number(inst.parameter_number());
    c->mutable_metadata() = inst.metadata();
    c->set_location(inst.location());
    if (b.computation().FindInstruction(inst.name()) != nullptr) c->set_name(b.FreshName(inst.name()));
    // Attributes that spell out sizes follow the local shape.
    if (inst.opcode() == Opcode::kDynamicSlice) {
      c->set_attr("dynamic_slice_sizes", hlo::IntList(local_shape.dims()));
    }
    if (inst.opcode() == Opcode::kSlice) {
      // Only whole dims ([0:size:1]) can be split; they slice the whole
      // local dim.
      hlo::IntListList spec = inst.attr_int_lists("slice");
      for (size_t d = 0; d < spec.size(); ++d) {
        int64_t local = operands[0]->shape().dim(static_cast<int64_t>(d));
        if (local != inst.operand(0)->shape().dim(static_cast<int64_t>(d))) spec[d] = {0, local, 1};
      }
      c->set_attr("slice", std::move(spec));
    }
    if (inst.opcode() == Opcode::kGather) {
      hlo::IntList sizes = inst.attr_ints("slice_sizes");
      for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] == inst.operand(0)->shape().dim(static_cast<int64_t>(d)))
          sizes[d] = operands[0]->shape().dim(static_cast<int64_t>(d));
      }
      c->set_attr("slice_sizes", std::move(sizes));
    }
    return b.Add(std::move(c));
  }

  // Replicate every operand, run the op whole, then take this device's part.
  absl::StatusOr<Local> DefaultAction(LocalBuilder& b, const Instruction& inst,
                                      absl::flat_hash_map<const Instruction*, Local>& locals) {
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      ASSIGN_OR_RETURN(Instruction* op, Operand(b, inst, i, locals, Sharding::Replicated()));
      operands.push_back(op);
    }
    Instruction* full = EmitLocal(b, inst, operands, inst.shape());
    return Local{full, Sharding::Replicated()};
  }

  absl::StatusOr<Local> PartitionByRule(LocalBuilder& b, const Instruction& inst,
                                        const ShardingRule& rule,
                                        absl::flat_hash_map<const Instruction*, Local>& locals) {
    std::vector<Sharding> current;
    for (const Instruction* op : inst.operands()) current.push_back(locals.at(op).sharding);
    ASSIGN_OR_RETURN(OpStrategy strategy, ChooseStrategy(inst, rule, current, ShardingOf(inst)));
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      ASSIGN_OR_RETURN(Instruction* op,
                       Operand(b, inst, i, locals, strategy.operand_targets[static_cast<size_t>(i)]));
      operands.push_back(op);
    }
    RETURN_IF_ERROR(MaskPadding(b, inst, strategy, operands));
    Shape local_shape = strategy.local_result.ShardShape(inst.shape());
    Instruction* result = EmitLocal(b, inst, operands, local_shape);
    if (!strategy.split_reduction_factors.empty()) {
      std::vector<std::vector<int64_t>> groups =
          GroupsAlongDims(strategy.iteration, strategy.split_reduction_factors);
      Computation* reducer = inst.opcode() == Opcode::kReduce
                                 ? mapped_.at(inst.attr_computation("to_apply"))
                                 : b.Reducer(Opcode::kAdd, inst.shape().type());
      Instruction* partial = result;
      // If the instruction's own sharding splits one dim exactly across the
      // reduction groups (member i keeping block i), one reduce-scatter
      // replaces the all-reduce and the slice after it.
      if (std::optional<int64_t> dim = ScatterDim(inst, strategy, groups)) {
        result = b.ReduceScatter(result, reducer, *dim, groups);
        partial->set_name(b.FreshName(inst.name() + ".partial"));
        if (b.computation().FindInstruction(inst.name()) == nullptr) result->set_name(inst.name());
        return Local{result, *inst.sharding()};
      }
      result = b.AllReduce(result, reducer, groups);
      // The completed value carries the instruction's name.
      partial->set_name(b.FreshName(inst.name() + ".partial"));
      if (b.computation().FindInstruction(inst.name()) == nullptr) result->set_name(inst.name());
    }
    return Local{result, strategy.local_result};
  }

  // The result dim a reduce-scatter can produce directly, if any: the
  // instruction's sharding must equal the reduced layout with exactly one
  // more split dim, divisible, whose device groups are the reduction groups.
  std::optional<int64_t> ScatterDim(const Instruction& inst, const OpStrategy& strategy,
                                    const std::vector<std::vector<int64_t>>& groups) {
    if (!inst.has_sharding() || !inst.shape().is_array()) return std::nullopt;
    const Sharding& own = *inst.sharding();
    if (!own.IsTiled() || own.HasManualSubgroup()) return std::nullopt;
    for (int64_t d = 0; d < inst.shape().rank(); ++d) {
      const int64_t n = static_cast<int64_t>(groups[0].size());
      if (own.TileCount(d) != n * strategy.local_result.TileCount(d)) continue;
      if (strategy.local_result.TileCount(d) != 1 || inst.shape().dim(d) % n != 0) continue;
      if (!(ReplicateDims(own, {d}) == strategy.local_result)) continue;
      if (GroupsAlongDims(own, {d}) != groups) continue;
      return d;
    }
    return std::nullopt;
  }

  // Padding of unevenly split dims must not reach a reduction: reduced dims
  // get the reducer's init value, a dot's contracting dims get zero.
  absl::Status MaskPadding(LocalBuilder& b, const Instruction& inst, const OpStrategy& strategy,
                           std::vector<Instruction*>& operands) {
    auto mask = [&](int64_t i, int64_t dim, Instruction* fill) {
      const Sharding& s = strategy.operand_targets[static_cast<size_t>(i)];
      const Shape& global = inst.operand(i)->shape();
      int64_t tiles = s.TileCount(dim);
      if (tiles <= 1 || global.dim(dim) % tiles == 0) return;
      Instruction* offset = b.PerDeviceValue(TileOffsets(s, global, dim, b.num_devices()), "offset");
      operands[static_cast<size_t>(i)] =
          b.MaskPadding(operands[static_cast<size_t>(i)], dim, offset, global.dim(dim), fill);
    };
    if (inst.opcode() == Opcode::kReduce) {
      const int64_t n = inst.operand_count() / 2;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t d : inst.attr_ints("dimensions")) mask(i, d, operands[n + i]);
      }
    } else if (inst.opcode() == Opcode::kDot) {
      const auto& lc = inst.attr_ints("lhs_contracting_dims");
      const auto& rc = inst.attr_ints("rhs_contracting_dims");
      for (size_t k = 0; k < lc.size(); ++k) {
        mask(0, lc[k], b.ScalarConstant(inst.operand(0)->shape().type(), 0));
        mask(1, rc[k], b.ScalarConstant(inst.operand(1)->shape().type(), 0));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Local> PartitionIota(LocalBuilder& b, const Instruction& inst) {
    Sharding s = ShardingOf(inst);
    if (!s.IsTiled()) return Local{EmitLocal(b, inst, {}, inst.shape()), Sharding::Replicated()};
    Shape local_shape = s.ShardShape(inst.shape());
    Instruction* iota = EmitLocal(b, inst, {}, local_shape);
    int64_t dim = inst.attr_int("iota_dimension");
    if (s.TileCount(dim) == 1 || inst.shape().type() == hlo::PrimitiveType::kPred) {
      return Local{iota, s};
    }
    Instruction* offset =
        b.PerDeviceValue(TileOffsets(s, inst.shape(), dim, b.num_devices()), "iota.offset");
    Instruction* converted = b.Add(Instruction::Create(
        Opcode::kConvert, b.FreshName("convert"), Shape::Scalar(inst.shape().type()), {offset}));
    Instruction* off = b.Broadcast(converted, local_shape, {});
    Instruction* sum = b.Add(Instruction::Create(Opcode::kAdd, b.FreshName(inst.name()),
                                                 local_shape, {iota, off}));
    return Local{sum, s};
  }

  absl::StatusOr<Local> PartitionInstruction(LocalBuilder& b, const Instruction& inst,
                                             absl::flat_hash_map<const Instruction*, Local>& locals,
                                             const std::optional<Sharding>& param_sharding) {
    const Sharding own = ShardingOf(inst);
    switch (inst.opcode()) {
      case Opcode::kParameter: {
        Sharding s = param_sharding ? *param_sharding : own;
        auto p = Instruction::CreateParameter(inst.parameter_number(), inst.name(),
                                              s.ShardShape(inst.shape()));
        p->set_location(inst.location());
        return Local{b.Add(std::move(p)), s};
      }
      case Opcode::kConstant:
        return Local{EmitLocal(b, inst, {}, inst.shape()), Sharding::Replicated()};
      case Opcode::kIota:
        return PartitionIota(b, inst);
      case Opcode::kTuple: {
        std::vector<Instruction*> ops;
        std::vector<Sharding> leaves;
        std::vector<Shape> shapes;
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          Sharding elem = own.ElementSharding(inst.shape(), i);
          ASSIGN_OR_RETURN(Instruction* op, Operand(b, inst, i, locals, elem));
          ops.push_back(op);
          shapes.push_back(op->shape());
          for (const Sharding& leaf : elem.LeavesFor(inst.operand(i)->shape())) leaves.push_back(leaf);
        }
        return Local{EmitLocal(b, inst, ops, Shape::Tuple(shapes)), Sharding::Tuple(leaves)};
      }
      case Opcode::kGetTupleElement: {
        const Local& t = locals.at(inst.operand(0));
        int64_t index = inst.attr_int("index");
        Sharding elem = t.sharding.ElementSharding(inst.operand(0)->shape(), index);
        return Local{EmitLocal(b, inst, {t.value}, t.value->shape().tuple_shape(index)), elem};
      }
      case Opcode::kWhile: {
        ASSIGN_OR_RETURN(Instruction* init, Operand(b, inst, 0, locals, own));
        // In a manual region each device decides its own trip count.
        const Sharding predicate = IsManualLike(own) ? Sharding::Manual() : Sharding::Replicated();
        ASSIGN_OR_RETURN(Computation * cond, PartitionCallee(*inst.attr_computation("condition"),
                                                             own, predicate));
        ASSIGN_OR_RETURN(Computation * body, PartitionCallee(*inst.attr_computation("body"), own, own));
        Instruction* local = EmitLocal(b, inst, {init}, init->shape());
        SetCallees(local, "condition", {cond});
        SetCallees(local, "body", {body});
        return Local{local, own};
      }
      case Opcode::kCall: {
        const Computation* callee = inst.attr_computation("to_apply");
        std::vector<Instruction*> ops;
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          ASSIGN_OR_RETURN(Instruction* op,
                           Operand(b, inst, i, locals, ShardingOf(*callee->parameter(i))));
          ops.push_back(op);
        }
        ASSIGN_OR_RETURN(Computation * partitioned, PartitionCallee(*callee, std::nullopt, own));
        Instruction* local = EmitLocal(b, inst, ops, own.ShardShape(inst.shape()));
        SetCallees(local, "to_apply", {partitioned});
        return Local{local, own};
      }
      case Opcode::kConditional: {
        const Sharding selector = IsManualLike(own) ? Sharding::Manual() : Sharding::Replicated();
        ASSIGN_OR_RETURN(Instruction* pred, Operand(b, inst, 0, locals, selector));
        std::vector<Instruction*> ops{pred};
        std::vector<Computation*> branches = inst.called_computations();
        std::vector<Computation*> partitioned;
        for (size_t k = 0; k < branches.size(); ++k) {
          const Computation* branch = branches[k];
          Sharding param = branch->num_parameters() > 0 ? ShardingOf(*branch->parameter(0))
                                                        : Sharding::Replicated();
          ASSIGN_OR_RETURN(Instruction* op,
                           Operand(b, inst, static_cast<int64_t>(k) + 1, locals, param));
          ops.push_back(op);
          ASSIGN_OR_RETURN(Computation * p, PartitionCallee(*branch, param, own));
          partitioned.push_back(p);
        }
        Instruction* local = EmitLocal(b, inst, ops, own.ShardShape(inst.shape()));
        if (inst.has_attr("branch_computations")) {
          SetCallees(local, "branch_computations", partitioned);
        } else {
          SetCallees(local, "true_computation", {partitioned[0]});
          SetCallees(local, "false_computation", {partitioned[1]});
        }
        return Local{local, own};
      }
      case Opcode::kCustomCall: {
        if (IsTarget(inst, "Sharding")) {
          ASSIGN_OR_RETURN(Instruction* op, Operand(b, inst, 0, locals, own));
          return Local{op, own};
        }
        if (IsTarget(inst, "SPMDFullToShardShape")) {
          // The operand's shard becomes this device's manual value.
          const Local& l = locals.at(inst.operand(0));
          Sharding source = ShardingOf(*inst.operand(0));
          ASSIGN_OR_RETURN(Instruction* op, Reshard(b, l.value, inst.operand(0)->shape(), l.sharding, source));
          return Local{b.Reshape(op, inst.shape().dims()), Sharding::Manual()};
        }
        if (IsTarget(inst, "SPMDShardToFullShape")) {
          const Local& l = locals.at(inst.operand(0));
          return Local{b.Reshape(l.value, own.ShardShape(inst.shape()).dims()), own};
        }
        return DefaultAction(b, inst, locals);
      }
      default:
        break;
    }
    ASSIGN_OR_RETURN(ShardingRule rule, GetShardingRule(inst));
    if (rule.kind != ShardingRule::Kind::kFactors || own.IsManual() || own.HasManualSubgroup()) {
      if (own.IsManual()) {
        // Inside a manual region values are already per device.
        std::vector<Instruction*> ops;
        for (const Instruction* op : inst.operands()) ops.push_back(locals.at(op).value);
        return Local{EmitLocal(b, inst, ops, inst.shape()), own};
      }
      return DefaultAction(b, inst, locals);
    }
    return PartitionByRule(b, inst, rule, locals);
  }

  // Partitions a control-flow callee for one set of shardings. A callee
  // used at several sites with different shardings gets one copy per set.
  absl::StatusOr<Computation*> PartitionCallee(const Computation& callee,
                                               const std::optional<Sharding>& params,
                                               const Sharding& root) {
    std::string key = absl::StrCat(callee.name(), "|", params ? params->ToString() : "own", "|",
                                   root.ToString());
    auto it = context_.partitioned_callees.find(key);
    if (it != context_.partitioned_callees.end()) return it->second;
    ComputationPartitioner inner(context_, mapped_, body_shardings_);
    ASSIGN_OR_RETURN(Computation * out, inner.Run(callee, params, root));
    int64_t copies = context_.callee_copies[callee.name()]++;
    if (copies > 0) out->set_name(absl::StrCat(callee.name(), ".", copies));
    context_.partitioned_callees[key] = out;
    return out;
  }

  // Points a local control-flow instruction at the partitioned callees.
  static void SetCallees(Instruction* local, const std::string& attr,
                         std::vector<Computation*> callees) {
    if (attr == "branch_computations") {
      local->set_attr(attr, std::move(callees));
    } else {
      local->set_attr(attr, callees[0]);
    }
  }

  PartitionContext& context_;
  absl::flat_hash_map<const Computation*, Computation*>& mapped_;
  absl::flat_hash_map<const Computation*, Sharding>& body_shardings_;
};

absl::Status CheckShardings(const Module& module, int64_t num_devices,
                            PartitionOptions::Unsharded unsharded) {
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (!inst->has_sharding()) {
        if (unsharded == PartitionOptions::Unsharded::kError && comp == module.entry()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "instruction '", inst->name(),
              "' has no sharding: run sharding propagation first (`sharc propagate`, or let "
              "`sharc partition` do it), or annotate it, in ",
              inst->Describe()));
        }
        continue;
      }
      absl::Status st = inst->sharding()->Validate(inst->shape(), num_devices);
      if (!st.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot partition for ", num_devices, " devices: ", st.message(),
            "; pass --devices matching the module's num_partitions, or fix the annotation, in ",
            inst->Describe()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> PartitionModule(const Module& global,
                                                        const PartitionOptions& options) {
  if (global.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  const int64_t n = options.num_devices > 0 ? options.num_devices : global.config().num_partitions;
  RETURN_IF_ERROR(CheckShardings(global, n, options.unsharded));

  auto out = std::make_unique<Module>(global.name());
  out->mutable_config() = global.config();
  out->mutable_config().num_partitions = n;
  PartitionContext context;
  context.module = out.get();
  context.num_devices = n;

  // Computations applied to scalars (reducers, comparators) are copied as
  // they are; control-flow bodies are partitioned when their caller is.
  absl::flat_hash_set<const Computation*> bodies;
  for (const Computation* comp : global.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kCall ||
          inst->opcode() == Opcode::kConditional) {
        for (const Computation* c : inst->called_computations()) bodies.insert(c);
      }
    }
  }
  // Computations the entry never reaches (left over by the passes that built
  // the module) are not part of the program.
  absl::flat_hash_set<const Computation*> reachable;
  std::vector<const Computation*> work = {global.entry()};
  while (!work.empty()) {
    const Computation* comp = work.back();
    work.pop_back();
    if (!reachable.insert(comp).second) continue;
    for (const Instruction* inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) work.push_back(callee);
    }
  }
  absl::flat_hash_map<const Computation*, Computation*> mapped;
  absl::flat_hash_map<const Computation*, Sharding> body_shardings;
  for (const Computation* comp : global.computations()) {
    if (comp == global.entry() || bodies.contains(comp) || !reachable.contains(comp)) continue;
    mapped[comp] = CopyComputation(*comp, *out, mapped);
  }
  ComputationPartitioner partitioner(context, mapped, body_shardings);
  ASSIGN_OR_RETURN(Computation * entry, partitioner.Run(*global.entry(), std::nullopt, std::nullopt));
  out->set_entry(entry);
  // Drop what the new program does not use.
  for (Computation* comp : out->computations()) {
    std::vector<Instruction*> insts = comp->instructions();
    for (auto it = insts.rbegin(); it != insts.rend(); ++it) {
      Instruction* inst = *it;
      if (inst->users().empty() && inst != comp->root() && inst->opcode() != Opcode::kParameter)
        RETURN_IF_ERROR(comp->RemoveInstruction(inst));
    }
  }
  out->SortCalleesFirst();
  return out;
}

}  // namespace sharc::spmd

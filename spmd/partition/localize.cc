#include "spmd/partition/localize.h"


#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/convolution_dims.h"
#include "spmd/partition/computation_copy.h"
#include "spmd/partition/global_view.h"
#include "spmd/partition/halo.h"
#include "spmd/partition/local_builder.h"
#include "spmd/partition/reshard.h"
#include "spmd/partition/strategy.h"
#include "spmd/partition/topk_combine.h"
#include "spmd/partition/window_split_convolution.h"
#include "spmd/partition/split_gather.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;
using hlo::Shape;
using hlo::Sharding;

namespace {

absl::Status At(const Instruction& inst, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(status.message(), ", in ", inst.Describe()));
}

// Whether operand i of `inst` holds its data as `shardings[i]` says.
bool OperandsIn(const Instruction& inst, const std::vector<Sharding>& shardings) {
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (!NeedsNoReshard(ShardingOrReplicated(*inst.operand(i)), shardings[static_cast<size_t>(i)]))
      return false;
  }
  return true;
}

class Localizer {
 public:
  Localizer(PartitionContext& context, ComputationMap& mapped, const LocalizeOptions& options)
      : context_(context), mapped_(mapped), options_(options) {}

  absl::StatusOr<Computation*> Run(const Computation& comp) {
    Computation* out = context_.module->AddComputation(std::make_unique<Computation>(comp.name()));
    LocalBuilder b(context_, *out);
    for (const Instruction* inst : comp.instructions()) {
      ASSIGN_OR_RETURN(locals_[inst], LocalizeInstruction(b, *inst));
    }
    out->set_root(locals_.at(comp.root()));
    return out;
  }

 private:
  Instruction* Local(const Instruction* global) { return locals_.at(global); }

  // Clones `inst` onto per-device operands with the given local shape.
  // (Control-flow callees are set by the caller afterwards.)
  Instruction* EmitLocal(LocalBuilder& b, const Instruction& inst,
                         const std::vector<Instruction*>& operands, const Shape& local_shape) {
    std::string name = inst.name();
    if (b.computation().FindInstruction(name) != nullptr) name = b.FreshName(name);
    auto c = CloneWith(inst, operands, local_shape, name, mapped_);
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

  // A global-view step's per-device value carries the step's name.
  static Instruction* Named(LocalBuilder& b, const Instruction& inst, Instruction* operand,
                            Instruction* value) {
    if (value != operand && value->opcode() != Opcode::kParameter &&
        b.computation().FindInstruction(inst.name()) == nullptr) {
      value->set_name(inst.name());
    }
    return value;
  }

  // Padding of unevenly split dims must not reach a reduction: reduced dims
  // get the reducer's init value, a dot's (or ragged-dot's) contracting dims
  // get zero.
  void MaskPadding(LocalBuilder& b, const Instruction& inst, std::vector<Instruction*>& operands) {
    auto mask = [&](int64_t i, int64_t dim, Instruction* fill) {
      const Sharding s = ShardingOrReplicated(*inst.operand(i));
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
    } else if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kRaggedDot) {
      const auto& lc = inst.attr_ints("lhs_contracting_dims");
      const auto& rc = inst.attr_ints("rhs_contracting_dims");
      for (size_t k = 0; k < lc.size(); ++k) {
        mask(0, lc[k], b.ScalarConstant(inst.operand(0)->shape().type(), 0));
        mask(1, rc[k], b.ScalarConstant(inst.operand(1)->shape().type(), 0));
      }
    } else if (inst.opcode() == Opcode::kConvolution) {
      // The contracted input feature (split only without feature groups),
      // and spatial dims contracted by one window over the whole input.
      absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(inst);
      if (cd.ok() && cd->feature_group_count == 1) {
        mask(0, cd->lhs_feature, b.ScalarConstant(inst.operand(0)->shape().type(), 0));
        mask(1, cd->rhs_input_feature, b.ScalarConstant(inst.operand(1)->shape().type(), 0));
      }
      for (size_t k = 0; cd.ok() && k < cd->window.size(); ++k) {
        mask(0, cd->lhs_spatial[k], b.ScalarConstant(inst.operand(0)->shape().type(), 0));
        mask(1, cd->rhs_spatial[k], b.ScalarConstant(inst.operand(1)->shape().type(), 0));
      }
    }
  }

  // The identity of a split scatter's combiner as a constant.
  static Instruction* CombinerIdentity(LocalBuilder& b, hlo::PrimitiveType type, Opcode combiner) {
    return b.Add(Instruction::CreateConstant(b.FreshName("identity"),
                                             *hlo::BinaryReducerIdentity(combiner, type)));
  }

  // A scatter whose updates are split along their scatter dims (strategy.h,
  // SplitScatterCombiner) scatters each device's updates; the partial
  // results are then all-reduced with the combiner. Under add, the devices
  // other than the first of each group start from -0 (x + -0 is x, -0 too),
  // so the operand counts once; max and min may count it on every device.
  // Padding rows of the updates become the combiner's identity, so wherever
  // their indices point they change nothing.
  //   scatter(x, i, u) -> all-reduce(scatter(first ? x : -0, i_local, u_local))
  void PrepareSplitScatter(LocalBuilder& b, const Instruction& inst,
                           std::vector<Instruction*>& operands) {
    if (inst.users().size() != 1 || !IsCustomCallTo(*inst.users()[0], hlo::kSpmdAllReduce) &&
                                         !IsCustomCallTo(*inst.users()[0], hlo::kSpmdReduceScatter)) {
      return;
    }
    const std::optional<Opcode> combiner = SplitScatterCombiner(inst);
    absl::StatusOr<std::vector<std::vector<int64_t>>> groups = ReplicaGroupsOf(*inst.users()[0]);
    if (!combiner || !groups.ok()) return;
    const hlo::PrimitiveType type = inst.shape().type();
    if (*combiner == Opcode::kAdd) {
      std::vector<int64_t> first(static_cast<size_t>(b.num_devices()), 0);
      for (const std::vector<int64_t>& g : *groups) first[static_cast<size_t>(g[0])] = 1;
      operands[0] = b.KeepOnly(operands[0], first, CombinerIdentity(b, type, *combiner));
    }
    const Instruction& updates = *inst.operand(2);
    const Sharding s = ShardingOrReplicated(updates);
    const std::vector<int64_t>& window = inst.attr_ints("update_window_dims");
    for (int64_t d = 0; d < updates.shape().rank(); ++d) {
      const int64_t tiles = s.TileCount(d);
      if (std::find(window.begin(), window.end(), d) != window.end() || tiles <= 1 ||
          updates.shape().dim(d) % tiles == 0) {
        continue;
      }
      Instruction* offset =
          b.PerDeviceValue(TileOffsets(s, updates.shape(), d, b.num_devices()), "offset");
      operands[2] = b.MaskPadding(operands[2], d, offset, updates.shape().dim(d),
                                  CombinerIdentity(b, type, *combiner));
    }
  }

  // A local convolution's window is its local kernel: a kernel split along a
  // spatial dim (a contraction, above) convolves with a window of its block.
  // Its group counts are its share of the groups (the rule splits feature
  // and batch groups like batch rows): input features over the kernel's
  // input features, input batch over result batch.
  static void FitConvolutionToShards(const Instruction& inst, Instruction* local) {
    if (inst.opcode() != Opcode::kConvolution) return;
    absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(inst);
    if (!cd.ok()) return;
    const Shape& lhs = local->operand(0)->shape();
    const Shape& rhs = local->operand(1)->shape();
    hlo::IntListList window = local->attr_int_lists("window");
    for (size_t k = 0; k < cd->rhs_spatial.size() && k < window.size(); ++k) {
      if (!window[k].empty()) window[k][0] = rhs.dim(cd->rhs_spatial[k]);
    }
    local->set_attr("window", std::move(window));
    if (cd->feature_group_count > 1 && rhs.dim(cd->rhs_input_feature) > 0) {
      local->set_attr("feature_group_count",
                      lhs.dim(cd->lhs_feature) / rhs.dim(cd->rhs_input_feature));
    }
    if (cd->batch_group_count > 1 && local->shape().dim(cd->out_batch) > 0) {
      local->set_attr("batch_group_count", lhs.dim(cd->lhs_batch) / local->shape().dim(cd->out_batch));
    }
  }

  // A scatter whose operand is split along an inserted dim that an index
  // component addresses (the rule allows no other split indexed dim) gets
  // indices relative to this device's shard: the component minus the
  // shard's offset. An update outside the shard then falls outside the
  // local operand and scatter skips it, so exactly one device applies it
  // (an index past the global end lands in the last shard's padding at most,
  // which no one reads). Gather clamps instead: split_gather.h shifts and
  // masks its rows.
  void ShiftScatterIndices(LocalBuilder& b, const Instruction& inst,
                           std::vector<Instruction*>& operands) {
    if (inst.opcode() != Opcode::kScatter || inst.operand_count() < 3) return;
    const size_t indices_index = static_cast<size_t>((inst.operand_count() - 1) / 2);
    const Sharding s = ShardingOrReplicated(*inst.operand(0));
    if (!s.IsTiled()) return;
    const Shape& operand = inst.operand(0)->shape();
    const auto& to_operand = inst.attr_ints("scatter_dims_to_operand_dims");
    bool any = false;
    for (int64_t d : to_operand) any |= s.TileCount(d) > 1;
    if (!any) return;
    Instruction* indices = operands[indices_index];
    // A narrow index type may not hold the offsets (row 150 in s8): such
    // indices are shifted in s32, which scatter takes as well.
    if (hlo::ByteWidth(indices->shape().type()) < 4) {
      indices = b.Add(Instruction::Create(Opcode::kConvert, b.FreshName("scatter.wide_indices"),
                                          Shape(hlo::PrimitiveType::kS32, indices->shape().dims()),
                                          {indices}));
    }
    const Shape ishape = indices->shape();
    const hlo::PrimitiveType itype = ishape.type();
    std::vector<Instruction*> parts;
    for (int64_t d : to_operand) {
      Instruction* offset =
          s.TileCount(d) > 1
              ? b.PerDeviceValue(TileOffsets(s, operand, d, b.num_devices()), "scatter.offset")
              : b.ConstantS32(0);
      if (itype != hlo::PrimitiveType::kS32) {
        offset = b.Add(Instruction::Create(Opcode::kConvert, b.FreshName("convert"),
                                           Shape::Scalar(itype), {offset}));
      }
      parts.push_back(offset);
    }
    const int64_t index_vector_dim = inst.attr_int("index_vector_dim");
    Instruction* offsets = parts[0];
    std::vector<int64_t> broadcast_dims;
    if (index_vector_dim < ishape.rank() && parts.size() == 1) {
      offsets = b.Reshape(parts[0], {1});
      broadcast_dims = {index_vector_dim};
    } else if (index_vector_dim < ishape.rank()) {
      for (Instruction*& p : parts) p = b.Reshape(p, {1});
      auto concat = Instruction::Create(
          Opcode::kConcatenate, b.FreshName("scatter.offsets"),
          Shape(itype, {static_cast<int64_t>(parts.size())}), parts);
      concat->set_attr("dimensions", hlo::IntList{0});
      offsets = b.Add(std::move(concat));
      broadcast_dims = {index_vector_dim};
    }
    Instruction* wide = b.Broadcast(offsets, ishape, broadcast_dims);
    operands[indices_index] = b.Add(Instruction::Create(
        Opcode::kSubtract, b.FreshName("scatter.local_indices"), ishape, {indices, wide}));
  }

  Instruction* LocalizeIota(LocalBuilder& b, const Instruction& inst) {
    Sharding s = ShardingOrReplicated(inst);
    if (!s.IsTiled()) return EmitLocal(b, inst, {}, inst.shape());
    Shape local_shape = s.ShardShape(inst.shape());
    Instruction* iota = EmitLocal(b, inst, {}, local_shape);
    int64_t dim = inst.attr_int("iota_dimension");
    if (s.TileCount(dim) == 1 || inst.shape().type() == hlo::PrimitiveType::kPred) return iota;
    Instruction* offset =
        b.PerDeviceValue(TileOffsets(s, inst.shape(), dim, b.num_devices()), "iota.offset");
    Instruction* converted = b.Add(Instruction::Create(
        Opcode::kConvert, b.FreshName("convert"), Shape::Scalar(inst.shape().type()), {offset}));
    Instruction* off = b.Broadcast(converted, local_shape, {});
    return b.Add(Instruction::Create(Opcode::kAdd, b.FreshName(inst.name()), local_shape,
                                     {iota, off}));
  }

  // A variadic reduce (argmax: values and indices) has no all-reduce: each
  // device's partial results get a trailing dim, are all-gathered along it
  // within the groups, and reduced again over it with the same computation
  // and init values (as XLA does).
  //   (f32[14], s32[14]) partial, 4 devices -> f32[14,1] -> all-gather f32[14,4]
  //     -> (f32[14], s32[14]) reduce(..., dimensions={1})
  Instruction* GatherAndReduceAgain(LocalBuilder& b, const Instruction& partial, Instruction* local,
                                    const std::vector<std::vector<int64_t>>& groups) {
    const int64_t n = partial.operand_count() / 2;
    std::vector<Instruction*> gathered, inits;
    for (int64_t i = 0; i < n; ++i) {
      const Shape& piece = local->shape().tuple_shape(i);
      std::vector<int64_t> dims = piece.dims();
      dims.push_back(1);
      gathered.push_back(
          b.AllGather(b.Reshape(b.GetTupleElement(local, i), dims), piece.rank(), groups));
      inits.push_back(Local(partial.operand(n + i)));
    }
    std::vector<Instruction*> operands = gathered;
    operands.insert(operands.end(), inits.begin(), inits.end());
    auto reduce = Instruction::Create(Opcode::kReduce, b.FreshName("reduce"), local->shape(),
                                      operands);
    reduce->set_attr("dimensions", hlo::IntList{local->shape().tuple_shape(0).rank()});
    reduce->set_attr("to_apply", mapped_.at(partial.attr_computation("to_apply")));
    return b.Add(std::move(reduce));
  }

  // Completes the partial results of a split reduction.
  absl::StatusOr<Instruction*> CompletePartial(LocalBuilder& b, const Instruction& inst) {
    const Instruction* partial = inst.operand(0);
    Instruction* local = Local(partial);
    if (summed_by_window_.contains(&inst)) return Named(b, inst, nullptr, local);
    absl::StatusOr<std::vector<std::vector<int64_t>>> parsed = ReplicaGroupsOf(inst);
    if (!parsed.ok()) return At(inst, parsed.status());
    const std::vector<std::vector<int64_t>>& groups = *parsed;
    for (const auto& g : groups) {
      for (int64_t d : g) {
        if (d < 0 || d >= b.num_devices()) {
          return At(inst, absl::InvalidArgumentError(absl::StrCat(
                              "replica group names device ", d, ", outside [0, ",
                              b.num_devices(), ")")));
        }
      }
    }
    if (partial->opcode() == Opcode::kTopK) {
      const Instruction& x = *partial->operand(0);
      const int64_t last = x.shape().rank() - 1;
      Instruction* offset = b.PerDeviceValue(
          TileOffsets(ShardingOrReplicated(x), x.shape(), last, b.num_devices()), "topk.offset");
      const bool largest = !partial->has_attr("largest") || partial->attr_bool("largest");
      return Named(b, inst, local,
                   CombineTopKCandidates(b, local, offset, partial->attr_int("k"), largest, groups));
    }
    if (partial->opcode() == Opcode::kReduce && partial->shape().is_tuple()) {
      if (!IsCustomCallTo(inst, hlo::kSpmdAllReduce)) {
        return At(inst, absl::InvalidArgumentError("a variadic reduce's partial results are "
                                                   "combined by gathering, not reduce-scatter"));
      }
      return Named(b, inst, local, GatherAndReduceAgain(b, *partial, local, groups));
    }
    Computation* reducer = partial->opcode() == Opcode::kReduce ||
                                   partial->opcode() == Opcode::kScatter
                               ? mapped_.at(partial->attr_computation("to_apply"))
                               : b.Reducer(Opcode::kAdd, partial->shape().type());
    if (IsCustomCallTo(inst, hlo::kSpmdAllReduce)) {
      return Named(b, inst, local, b.AllReduce(local, reducer, groups));
    }
    const Sharding from = ShardingOrReplicated(*partial), to = ShardingOrReplicated(inst);
    const int64_t n = static_cast<int64_t>(groups[0].size());
    for (int64_t d = 0; d < inst.shape().rank(); ++d) {
      if (to.TileCount(d) == n * from.TileCount(d) && n > 1) {
        return Named(b, inst, local, b.ReduceScatter(local, reducer, d, groups));
      }
    }
    return At(inst, absl::InvalidArgumentError(absl::StrCat("reduce-scatter: no dim of ",
                                                            to.ToString(), " splits ",
                                                            from.ToString(), " ", n,
                                                            " ways further")));
  }

  absl::StatusOr<Instruction*> LocalizeInstruction(LocalBuilder& b, const Instruction& inst) {
    const Sharding own = ShardingOrReplicated(inst);
    std::vector<Instruction*> ops;
    for (const Instruction* op : inst.operands()) ops.push_back(Local(op));
    switch (inst.opcode()) {
      case Opcode::kParameter: {
        auto p = Instruction::CreateParameter(inst.parameter_number(), inst.name(),
                                              own.ShardShape(inst.shape()));
        p->set_location(inst.location());
        p->mutable_metadata() = inst.metadata();
        return b.Add(std::move(p));
      }
      case Opcode::kConstant:
        return EmitLocal(b, inst, {}, inst.shape());
      case Opcode::kIota:
        return LocalizeIota(b, inst);
      case Opcode::kTuple: {
        std::vector<Shape> shapes;
        for (Instruction* op : ops) shapes.push_back(op->shape());
        return EmitLocal(b, inst, ops, Shape::Tuple(shapes));
      }
      case Opcode::kGetTupleElement:
        return EmitLocal(b, inst, ops, ops[0]->shape().tuple_shape(inst.attr_int("index")));
      case Opcode::kWhile: {
        ASSIGN_OR_RETURN(Computation * cond, Callee(*inst.attr_computation("condition")));
        ASSIGN_OR_RETURN(Computation * body, Callee(*inst.attr_computation("body")));
        Instruction* local = EmitLocal(b, inst, ops, ops[0]->shape());
        SetCallees(local, "condition", {cond});
        SetCallees(local, "body", {body});
        return local;
      }
      case Opcode::kCall: {
        ASSIGN_OR_RETURN(Computation * callee, Callee(*inst.attr_computation("to_apply")));
        Instruction* local = EmitLocal(b, inst, ops, own.ShardShape(inst.shape()));
        SetCallees(local, "to_apply", {callee});
        return local;
      }
      case Opcode::kConditional: {
        std::vector<Computation*> branches;
        for (const Computation* branch : inst.called_computations()) {
          ASSIGN_OR_RETURN(Computation * c, Callee(*branch));
          branches.push_back(c);
        }
        Instruction* local = EmitLocal(b, inst, ops, own.ShardShape(inst.shape()));
        SetBranches(local, inst, branches);
        return local;
      }
      case Opcode::kCustomCall: {
        const std::string& target = inst.attr_string("custom_call_target");
        if (target == hlo::kSpmdReshard || target == hlo::kShardingTarget) {
          return At(inst, absl::FailedPreconditionError(absl::StrCat(
                              "custom-call \"", target, "\" is still in the module: run "
                              "InsertReshards and ReshardToCollectives before Localize")));
        }
        if (target == hlo::kSpmdAllReduce || target == hlo::kSpmdReduceScatter) {
          return CompletePartial(b, inst);
        }
        if (hlo::IsSpmdGlobalViewTarget(target)) {
          absl::StatusOr<Instruction*> v = LowerReshardStep(
              b, ops[0], inst.shape(), ShardingOrReplicated(*inst.operand(0)), ReshardStep{target, own});
          if (!v.ok()) return At(inst, v.status());
          return Named(b, inst, ops[0], *v);
        }
        if (target == hlo::kFullToShardShapeTarget) return b.Reshape(ops[0], inst.shape().dims());
        if (target == hlo::kShardToFullShapeTarget) {
          return b.Reshape(ops[0], own.ShardShape(inst.shape()).dims());
        }
        if (IsManualLike(own, inst.shape())) return EmitLocal(b, inst, ops, inst.shape());
        return EmitLocal(b, inst, ops, own.ShardShape(inst.shape()));
      }
      default:
        break;
    }
    if (IsManualLike(own, inst.shape())) return EmitLocal(b, inst, ops, inst.shape());
    // A slice, pad, reverse, reduce-window, concatenate or convolution
    // whose result stays split along a dim it changes: InsertReshards chose
    // a halo exchange (the other plans keep such dims whole), and gave the
    // operands the shardings the plan names.
    if (std::optional<HaloPlan> plan = PlanHalo(inst, own);
        plan && OperandsIn(inst, plan->operand_shardings)) {
      Computation* to_apply = inst.opcode() == Opcode::kReduceWindow
                                  ? mapped_.at(inst.attr_computation("to_apply"))
                                  : nullptr;
      auto emit = [&](const std::vector<Instruction*>& operands, const Shape& shape) {
        return b.Add(CloneWith(inst, operands, shape, b.FreshName(inst.name()), mapped_));
      };
      absl::StatusOr<Instruction*> v = LowerHalo(b, inst, ops, own, *plan, to_apply, emit);
      if (!v.ok()) return At(inst, v.status());
      return Named(b, inst, ops[0], *v);
    }
    if (std::optional<WindowedDotPlan> plan =
            PlanWindowedDot(inst, options_.windowed_einsum_threshold_bytes)) {
      // The operand block from before the all-gather, which is left unused.
      std::vector<Instruction*> blocks = ops;
      blocks[static_cast<size_t>(plan->operand)] = Local(inst.operand(plan->operand)->operand(0));
      auto emit = [&](const std::vector<Instruction*>& operands, const Shape& shape) {
        return b.Add(CloneWith(inst, operands, shape, b.FreshName(inst.name() + ".window"),
                               mapped_));
      };
      absl::StatusOr<Instruction*> v =
          LowerWindowedDot(b, inst, *plan, blocks, own.ShardShape(inst.shape()), emit);
      if (!v.ok()) return At(inst, v.status());
      return Named(b, inst, ops[0], *v);
    }
    if (std::optional<WindowSplitPlan> plan =
            inst.opcode() != Opcode::kConvolution
                ? std::nullopt
                : PlanWindowSplitConvolution(inst, ShardingOrReplicated(*inst.operand(0)),
                                             ShardingOrReplicated(*inst.operand(1)))) {
      auto emit = [&](const std::vector<Instruction*>& operands, const Shape& shape) {
        return b.Add(CloneWith(inst, operands, shape, b.FreshName(inst.name()), mapped_));
      };
      absl::StatusOr<Instruction*> v = LowerWindowSplitConvolution(
          b, inst, *plan, ops[0], ops[1], ShardingOrReplicated(*inst.operand(1)), emit);
      if (!v.ok()) return At(inst, v.status());
      return *v;
    }
    if (std::optional<ReduceScatterDotPlan> plan =
            PlanReduceScatterDot(inst, options_.windowed_einsum_threshold_bytes)) {
      auto emit = [&](const std::vector<Instruction*>& operands, const Shape& shape) {
        return b.Add(CloneWith(inst, operands, shape, b.FreshName(inst.name() + ".window"),
                               mapped_));
      };
      absl::StatusOr<Instruction*> v =
          LowerReduceScatterDot(b, inst, *plan, ops, own.ShardShape(inst.shape()), emit);
      if (!v.ok()) return At(inst, v.status());
      // Already this device's summed block: its reduce-scatter passes it on.
      summed_by_window_.insert(inst.users()[0]);
      return *v;
    }
    MaskPadding(b, inst, ops);
    PrepareSplitScatter(b, inst, ops);
    ShiftScatterIndices(b, inst, ops);
    Instruction* gather_rows =
        GathersFromSplitIndexedDim(inst) ? LocalizeSplitGatherIndices(b, inst, ops) : nullptr;
    Instruction* local = EmitLocal(b, inst, ops, own.ShardShape(inst.shape()));
    FitConvolutionToShards(inst, local);
    return gather_rows ? MaskSplitGather(b, inst, local, gather_rows) : local;
  }

  // Each body of the explicit module has one set of shardings (pass 1
  // copied it per use), so it is localized once.
  absl::StatusOr<Computation*> Callee(const Computation& callee) {
    auto it = context_.localized_bodies.find(&callee);
    if (it != context_.localized_bodies.end()) return it->second;
    Localizer inner(context_, mapped_, options_);
    ASSIGN_OR_RETURN(Computation * out, inner.Run(callee));
    context_.localized_bodies[&callee] = out;
    return out;
  }

  PartitionContext& context_;
  ComputationMap& mapped_;
  const LocalizeOptions& options_;
  absl::flat_hash_map<const Instruction*, Instruction*> locals_;
  // Reduce-scatters whose dot a windowed einsum already summed.
  absl::flat_hash_set<const Instruction*> summed_by_window_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> Localize(const Module& explicit_global,
                                                 int64_t num_devices,
                                                 const LocalizeOptions& options) {
  if (explicit_global.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  auto out = std::make_unique<Module>(explicit_global.name());
  out->mutable_config() = explicit_global.config();
  out->mutable_config().num_partitions = num_devices;
  PartitionContext context;
  context.module = out.get();
  context.num_devices = num_devices;
  ComputationMap mapped = CopyScalarComputations(explicit_global, *out);
  Localizer localizer(context, mapped, options);
  ASSIGN_OR_RETURN(Computation * entry, localizer.Run(*explicit_global.entry()));
  out->set_entry(entry);
  out->SortCalleesFirst();
  return out;
}

}  // namespace sharc::spmd

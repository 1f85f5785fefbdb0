// Tuples and control flow: tuple, get-tuple-element, call, while,
// conditional, and custom-call (the escape hatch XLA also uses for sharding
// annotations and the manual-region markers of shard_map).
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/identity_custom_calls.h"

namespace sharc::hlo {
namespace {

std::vector<Shape> OperandShapes(const Instruction& inst) {
  std::vector<Shape> shapes;
  for (const Instruction* op : inst.operands()) shapes.push_back(op->shape());
  return shapes;
}

// The shape a called computation returns, or an error if it has no root.
absl::StatusOr<Shape> RootShape(const Instruction& inst, const Computation* computation,
                                std::string_view role) {
  if (computation == nullptr) return OpError(inst, "is missing its ", role, " computation");
  if (computation->root() == nullptr) {
    return OpError(inst, role, " computation '", computation->name(), "' has no root");
  }
  return computation->root()->shape();
}

// ------------------------------------------------ tuple, get-tuple-element --

absl::StatusOr<Shape> InferTuple(const Instruction& inst) {
  return Shape::Tuple(OperandShapes(inst));
}

absl::StatusOr<Literal> EvaluateTuple(const Instruction& inst,
                                      absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  std::vector<Literal> elements;
  elements.reserve(operands.size());
  for (const Literal* op : operands) elements.push_back(*op);
  return Literal::Tuple(std::move(elements));
}

absl::StatusOr<Shape> InferGetTupleElement(const Instruction& inst) {
  if (inst.operand_count() != 1) {
    return OpError(inst, "expects 1 operand, got ", inst.operand_count());
  }
  const Shape& tuple = inst.operand(0)->shape();
  if (!tuple.is_tuple()) return OpError(inst, "operand must be a tuple, got ", tuple.ToString());
  int64_t index = inst.attr_int("index", -1);
  if (index < 0 || index >= tuple.tuple_size()) {
    return OpError(inst, "index ", index, " is out of range for a tuple of ", tuple.tuple_size(),
                   " elements");
  }
  return tuple.tuple_shape(index);
}

absl::StatusOr<Literal> EvaluateGetTupleElement(const Instruction& inst,
                                                absl::Span<const Literal* const> operands,
                                                EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(InferGetTupleElement(inst).status());
  return operands[0]->element(inst.attr_int("index"));
}

// ------------------------------------------------------------------- call --

absl::StatusOr<Shape> InferCall(const Instruction& inst) {
  return RootShape(inst, inst.attr_computation("to_apply"), "to_apply");
}

absl::Status VerifyCall(const Instruction& inst) {
  std::vector<Shape> params = OperandShapes(inst);
  return ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply", params,
                                    nullptr);
}

absl::StatusOr<Literal> EvaluateCall(const Instruction& inst,
                                     absl::Span<const Literal* const> operands, EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(InferCall(inst).status());
  RETURN_IF_ERROR(VerifyCall(inst));
  return ctx.Call(*inst.attr_computation("to_apply"), operands);
}

// ----------------------------------------------------------------- fusion --

// A fusion is XLA's record of which ops its backend compiles into one
// kernel: its value is that of calling `calls` on its operands, and that is
// all sharc reads from it (hlo/passes/lower_for_compute.h turns it into a
// call before anything computes). `kind` says which fusion emitter XLA used.
constexpr std::string_view kFusionKinds[] = {"kLoop", "kInput", "kOutput", "kCustom"};

absl::StatusOr<Shape> InferFusion(const Instruction& inst) {
  return RootShape(inst, inst.attr_computation("calls"), "calls");
}

absl::Status VerifyFusion(const Instruction& inst) {
  const std::string& kind = inst.attr_string("kind");
  bool known = false;
  for (std::string_view k : kFusionKinds) known = known || kind == k;
  if (!known) {
    return OpError(inst, "has kind=", kind, "; expected kLoop, kInput, kOutput or kCustom");
  }
  return ExpectComputationSignature(inst, inst.attr_computation("calls"), "calls",
                                    OperandShapes(inst), nullptr);
}

absl::StatusOr<Literal> EvaluateFusion(const Instruction& inst,
                                       absl::Span<const Literal* const> operands,
                                       EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(InferFusion(inst).status());
  RETURN_IF_ERROR(VerifyFusion(inst));
  return ctx.Call(*inst.attr_computation("calls"), operands);
}

// ------------------------------------------------------------------ while --

absl::StatusOr<Shape> InferWhile(const Instruction& inst) {
  if (inst.operand_count() != 1) {
    return OpError(inst, "expects 1 operand (the loop state), got ", inst.operand_count());
  }
  return inst.operand(0)->shape();
}

absl::Status VerifyWhile(const Instruction& inst) {
  ASSIGN_OR_RETURN(Shape state, InferWhile(inst));
  Shape pred = Shape::Scalar(PrimitiveType::kPred);
  RETURN_IF_ERROR(ExpectComputationSignature(inst, inst.attr_computation("condition"), "condition",
                                             {state}, &pred));
  return ExpectComputationSignature(inst, inst.attr_computation("body"), "body", {state}, &state);
}

absl::StatusOr<Literal> EvaluateWhile(const Instruction& inst,
                                      absl::Span<const Literal* const> operands, EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyWhile(inst));
  const Computation& condition = *inst.attr_computation("condition");
  const Computation& body = *inst.attr_computation("body");
  Literal state = *operands[0];
  while (true) {
    const Literal* args[] = {&state};
    ASSIGN_OR_RETURN(Literal keep_going, ctx.Call(condition, args));
    if (keep_going.is_tuple() || keep_going.shape().type() != PrimitiveType::kPred ||
        keep_going.num_elements() != 1) {
      return OpError(inst, "condition returned ", keep_going.shape().ToString(),
                     " instead of pred[]");
    }
    if (!keep_going.data<bool>()[0]) break;
    ASSIGN_OR_RETURN(Literal next, ctx.Call(body, args));
    if (next.shape() != state.shape()) {
      return OpError(inst, "body returned ", next.shape().ToString(), " for a loop state of ",
                     state.shape().ToString());
    }
    state = std::move(next);
  }
  return state;
}

// ------------------------------------------------------------ conditional --

// The branches of a conditional in selection order: {true, false} for a pred
// selector (true picks entry 0), else branch_computations.
absl::StatusOr<std::vector<Computation*>> Branches(const Instruction& inst) {
  // Checked before any OpError: printing the instruction would dereference a
  // null branch.
  for (const Computation* c : inst.attr_computations("branch_computations")) {
    if (c == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("conditional %", inst.name(), " has a missing branch computation"));
    }
  }
  if (inst.operand_count() < 1) return OpError(inst, "expects a branch selector operand");
  const Shape& selector = inst.operand(0)->shape();
  bool has_true_false = inst.has_attr("true_computation") || inst.has_attr("false_computation");
  bool has_list = inst.has_attr("branch_computations");
  if (selector.is_array() && selector.is_scalar() && selector.type() == PrimitiveType::kPred) {
    if (has_list) {
      return OpError(inst,
                     "with a pred selector takes true_computation and false_computation, "
                     "not branch_computations");
    }
    Computation* t = inst.attr_computation("true_computation");
    Computation* f = inst.attr_computation("false_computation");
    if (t == nullptr || f == nullptr) {
      return OpError(inst, "with a pred selector needs true_computation and false_computation");
    }
    if (inst.operand_count() != 3) {
      return OpError(inst,
                     "with a pred selector expects 3 operands (pred, true operand, false "
                     "operand), got ",
                     inst.operand_count());
    }
    return std::vector<Computation*>{t, f};
  }
  if (selector.is_array() && selector.is_scalar() && selector.type() == PrimitiveType::kS32) {
    if (has_true_false) {
      return OpError(inst,
                     "with an s32 branch index takes branch_computations, not "
                     "true_computation/false_computation");
    }
    const std::vector<Computation*>& list = inst.attr_computations("branch_computations");
    if (list.empty()) return OpError(inst, "with an s32 branch index needs branch_computations");
    if (inst.operand_count() != static_cast<int64_t>(list.size()) + 1) {
      return OpError(inst, "has ", list.size(), " branches but ", inst.operand_count() - 1,
                     " branch operands");
    }
    return list;
  }
  return OpError(inst, "selector must be pred[] or s32[], got ", selector.ToString());
}

absl::StatusOr<Shape> InferConditional(const Instruction& inst) {
  ASSIGN_OR_RETURN(std::vector<Computation*> branches, Branches(inst));
  ASSIGN_OR_RETURN(Shape result, RootShape(inst, branches[0], "branch 0"));
  for (size_t i = 1; i < branches.size(); ++i) {
    ASSIGN_OR_RETURN(Shape other, RootShape(inst, branches[i], absl::StrCat("branch ", i)));
    if (other != result) {
      return OpError(inst, "branch ", i, " '", branches[i]->name(), "' returns ", other.ToString(),
                     " but branch 0 '", branches[0]->name(), "' returns ", result.ToString());
    }
  }
  return result;
}

absl::Status VerifyConditional(const Instruction& inst) {
  ASSIGN_OR_RETURN(std::vector<Computation*> branches, Branches(inst));
  for (size_t i = 0; i < branches.size(); ++i) {
    RETURN_IF_ERROR(ExpectComputationSignature(inst, branches[i], absl::StrCat("branch ", i),
                                               {inst.operand(static_cast<int64_t>(i) + 1)->shape()},
                                               nullptr));
  }
  return InferConditional(inst).status();
}

absl::StatusOr<Literal> EvaluateConditional(const Instruction& inst,
                                            absl::Span<const Literal* const> operands,
                                            EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyConditional(inst));
  ASSIGN_OR_RETURN(std::vector<Computation*> branches, Branches(inst));
  int64_t n = static_cast<int64_t>(branches.size());
  int64_t chosen;
  if (operands[0]->shape().type() == PrimitiveType::kPred) {
    chosen = operands[0]->data<bool>()[0] ? 0 : 1;
  } else {
    // XLA runs the last branch for an out-of-range index.
    chosen = ScalarAsInt64(*operands[0]);
    if (chosen < 0 || chosen >= n) chosen = n - 1;
  }
  const Literal* args[] = {operands[static_cast<size_t>(chosen) + 1]};
  return ctx.Call(*branches[static_cast<size_t>(chosen)], args);
}

// ------------------------------------------------------------ custom-call --

// API_VERSION_UNSPECIFIED is the enum's zero, not a version: XLA refuses it.
constexpr std::array<std::string_view, 4> kApiVersions = {
    "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};

absl::StatusOr<Shape> InferCustomCall(const Instruction& inst) {
  const std::string& target = inst.attr_string("custom_call_target");
  if (IsIdentityCustomCallTarget(target)) {
    if (inst.operand_count() != 1) {
      return OpError(inst, "to \"", target, "\" expects 1 operand, got ", inst.operand_count());
    }
    return inst.operand(0)->shape();
  }
  if (!inst.shape().valid()) {
    return OpError(inst, "to \"", target, "\" needs a declared result shape");
  }
  bool full_to_shard = target == kFullToShardShapeTarget;
  if (IsManualRegionMarker(target)) {
    if (inst.operand_count() != 1) {
      return OpError(inst, "to \"", target, "\" expects 1 operand, got ", inst.operand_count());
    }
    RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
    const Shape& operand = inst.operand(0)->shape();
    const Shape& declared = inst.shape();
    if (!declared.is_array() || declared.type() != operand.type() ||
        declared.rank() != operand.rank()) {
      return OpError(inst, "to \"", target, "\" must keep the element type and rank of ",
                     operand.ToString(), ", declares ", declared.ToString());
    }
    // The shard is never larger than the full value along any dim.
    const Shape& full = full_to_shard ? operand : declared;
    const Shape& shard = full_to_shard ? declared : operand;
    for (int64_t d = 0; d < full.rank(); ++d) {
      if (shard.dim(d) > full.dim(d)) {
        return OpError(inst, "shard dim ", d, " (", shard.dim(d), ") exceeds the full dim (",
                       full.dim(d), ")");
      }
    }
  }
  RETURN_IF_ERROR(ValidateShape(inst.shape())) << " (in " << inst.Describe() << ")";
  return inst.shape();
}

absl::Status VerifyCustomCall(const Instruction& inst) {
  if (inst.attr_string("custom_call_target").empty()) {
    return OpError(inst, "needs a non-empty custom_call_target");
  }
  if (const AttrValue* v = inst.attr("api_version")) {
    const std::string* s = std::get_if<std::string>(v);
    bool known = false;
    for (std::string_view a : kApiVersions) known |= s != nullptr && *s == a;
    if (!known) {
      std::string names;
      for (std::string_view a : kApiVersions)
        absl::StrAppend(&names, names.empty() ? "" : ", ", std::string(a));
      return OpError(inst, "api_version must be one of ", names);
    }
  }
  return InferCustomCall(inst).status();
}

// Copies the overlap of `from` into a zero-filled literal of `shape`: a
// slice at offset 0 when shrinking, zero padding at the end when growing.
Literal CopyOverlap(const Literal& from, const Shape& shape) {
  Literal out(shape);
  std::vector<int64_t> overlap;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    overlap.push_back(std::min(shape.dim(d), from.shape().dim(d)));
  }
  ForEachIndex(overlap, [&](const std::vector<int64_t>& index) {
    CopyElement(from, LinearIndex(from.shape().dims(), index), out,
                LinearIndex(shape.dims(), index));
  });
  return out;
}

absl::StatusOr<Literal> EvaluateCustomCall(const Instruction& inst,
                                           absl::Span<const Literal* const> operands,
                                           EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  const std::string& target = inst.attr_string("custom_call_target");
  if (IsManualRegionMarker(target)) {
    ASSIGN_OR_RETURN(Shape shape, InferCustomCall(inst));
    if (shape == operands[0]->shape()) return *operands[0];
    // In a global (one-partition) program there is no device to take a tile
    // for: FullToShard yields the tile at offset 0, ShardToFull pads with
    // zeros. The SPMD partitioner replaces both ops before a multi-device
    // run, so a real per-device program never reaches this.
    if (ctx.num_partitions() == 1) return CopyOverlap(*operands[0], shape);
    return absl::UnimplementedError(absl::StrCat(
        "custom-call \"", target, "\" changes the shape and cannot be evaluated on ",
        ctx.num_partitions(), " partitions before SPMD partitioning, in ", inst.Describe()));
  }
  if (IsIdentityCustomCallTarget(target)) {
    RETURN_IF_ERROR(InferCustomCall(inst).status());
    return *operands[0];
  }
  return absl::UnimplementedError(absl::StrCat(
      "custom-call target \"", target, "\" has no reference evaluator, in ", inst.Describe()));
}

// Data-flow edges (hlo/ops/data_flow.h) of the ops that only move values.
DataFlow TupleFlow(const Instruction& inst) {
  DataFlow flow;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    flow.edges.push_back({FlowPoint::Operand(k), FlowPoint::Result({k})});
  }
  return flow;
}

DataFlow GetTupleElementFlow(const Instruction& inst) {
  return DataFlow{{{FlowPoint::Operand(0, {inst.attr_int("index")}), FlowPoint::Result()}}, {}};
}

// call and fusion: operand i is parameter i of the callee, its root the result.
DataFlow CalleeFlow(const Computation* callee, const Instruction& inst) {
  DataFlow flow;
  if (callee == nullptr) return flow;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    flow.edges.push_back({FlowPoint::Operand(i), FlowPoint::Parameter(callee, i)});
  }
  flow.edges.push_back({FlowPoint::Root(callee), FlowPoint::Result()});
  return flow;
}

// The carry enters both computations from the initial value and from the
// body's result; the predicate decides how often it flows.
DataFlow WhileFlow(const Instruction& inst) {
  DataFlow flow;
  const Computation* cond = inst.attr_computation("condition");
  const Computation* body = inst.attr_computation("body");
  if (cond == nullptr || body == nullptr) return flow;
  for (const Computation* c : {body, cond}) {
    flow.edges.push_back({FlowPoint::Operand(0), FlowPoint::Parameter(c, 0)});
    flow.edges.push_back({FlowPoint::Root(body), FlowPoint::Parameter(c, 0)});
    flow.controls.push_back({FlowPoint::Root(cond), FlowPoint::Parameter(c, 0)});
  }
  flow.edges.push_back({FlowPoint::Operand(0), FlowPoint::Result()});
  flow.edges.push_back({FlowPoint::Root(body), FlowPoint::Result()});
  flow.controls.push_back({FlowPoint::Root(cond), FlowPoint::Result()});
  return flow;
}

// Operand b+1 is branch b's argument; the index (operand 0) picks the branch.
DataFlow ConditionalFlow(const Instruction& inst) {
  DataFlow flow;
  std::vector<Computation*> branches = inst.called_computations();
  for (size_t b = 0; b < branches.size(); ++b) {
    const int64_t operand = static_cast<int64_t>(b) + 1;
    if (operand >= inst.operand_count()) break;
    flow.edges.push_back({FlowPoint::Operand(operand), FlowPoint::Parameter(branches[b], 0)});
    flow.edges.push_back({FlowPoint::Root(branches[b]), FlowPoint::Result()});
  }
  flow.controls.push_back({FlowPoint::Operand(0), FlowPoint::Result()});
  return flow;
}

}  // namespace

void RegisterControlFlowOps(OpRegistry& registry) {
  {
    OpDef def;
    def.opcode = Opcode::kTuple;
    def.min_operands = 0;
    def.max_operands = -1;
    def.infer_shape = InferTuple;
    def.evaluate = EvaluateTuple;
    def.data_flow = TupleFlow;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kGetTupleElement;
    def.min_operands = 1;
    def.max_operands = 1;
    def.attributes = {{"index", AttrKind::kInt, true}};
    def.infer_shape = InferGetTupleElement;
    def.evaluate = EvaluateGetTupleElement;
    def.data_flow = GetTupleElementFlow;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kCall;
    def.min_operands = 0;
    def.max_operands = -1;
    def.attributes = {{"to_apply", AttrKind::kComputation, true}};
    def.infer_shape = InferCall;
    def.verify = VerifyCall;
    def.evaluate = EvaluateCall;
    def.data_flow = [](const Instruction& inst) {
      return CalleeFlow(inst.attr_computation("to_apply"), inst);
    };
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kFusion;
    def.min_operands = 0;
    def.max_operands = -1;
    def.attributes = {{"kind", AttrKind::kEnum, true}, {"calls", AttrKind::kComputation, true}};
    def.infer_shape = InferFusion;
    def.verify = VerifyFusion;
    def.evaluate = EvaluateFusion;
    def.data_flow = [](const Instruction& inst) {
      return CalleeFlow(inst.attr_computation("calls"), inst);
    };
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kWhile;
    def.min_operands = 1;
    def.max_operands = 1;
    def.attributes = {{"condition", AttrKind::kComputation, true},
                      {"body", AttrKind::kComputation, true}};
    def.infer_shape = InferWhile;
    def.verify = VerifyWhile;
    def.evaluate = EvaluateWhile;
    def.data_flow = WhileFlow;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kConditional;
    def.min_operands = 2;
    def.max_operands = -1;
    def.attributes = {{"true_computation", AttrKind::kComputation},
                      {"false_computation", AttrKind::kComputation},
                      {"branch_computations", AttrKind::kComputationList}};
    def.infer_shape = InferConditional;
    def.verify = VerifyConditional;
    def.evaluate = EvaluateConditional;
    def.data_flow = ConditionalFlow;
    registry.Register(std::move(def));
  }
  // side_effecting stays false: only instructions with
  // custom_call_has_side_effect=true are side-effecting, and passes read that
  // attribute per instruction.
  {
    OpDef def;
    def.opcode = Opcode::kCustomCall;
    def.min_operands = 0;
    def.max_operands = -1;
    // The computations, window and convolution dimensions a target may
    // take are kept as written (the target, not sharc, gives them meaning).
    def.attributes = {{"custom_call_target", AttrKind::kString, true},
                      {"called_computations", AttrKind::kComputationList},
                      {"window", AttrKind::kWindow},
                      {"dim_labels", AttrKind::kDimLabels},
                      {"feature_group_count", AttrKind::kInt},
                      {"batch_group_count", AttrKind::kInt},
                      {"custom_call_has_side_effect", AttrKind::kBool},
                      {"api_version", AttrKind::kEnum},
                      {"literal", AttrKind::kLiteral},
                      {"slice_sizes", AttrKind::kIntList},
                      {"backend_config", AttrKind::kString}};
    def.infer_shape = InferCustomCall;
    def.verify = VerifyCustomCall;
    def.evaluate = EvaluateCustomCall;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo

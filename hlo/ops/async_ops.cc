// Asynchronous pairs: XLA splits an op into a start, which begins it and
// returns a tuple holding its operands (and scratch state), and a done,
// which waits for it and returns its value (async-update sits in between
// for async-start). sharc reads, verifies and evaluates each form, and
// hlo/passes/lower_for_compute.h rewrites each start/done pair to its
// synchronous op before anything computes, so partitioning and `run` see
// only the ops they know:
//
//   all-reduce-start(x)        -> x's shape (the reduced value)      done: the same value
//   all-gather-start(x)        -> (x, gathered)                      done: gathered
//   collective-permute-start(x)-> (x, permuted [, u32[], u32[]])     done: permuted
//   copy-start(x)              -> (copy, x, u32[])                   done: copy
//   async-start(a, b), calls=C -> ((a, b), C(a, b), context...)      done: C(a, b)
//
// The starts of collectives check what the synchronous op checks (its
// definition is asked directly), and evaluate as it does. Older XLA text
// (its MHLO exporter's) writes other start shapes, which sharc reads too:
// all-gather-start and collective-permute-start returning their value
// alone (done: that value), and a one-operand all-reduce-start returning
// (x, reduced) (done: reduced).
#include <vector>

#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

// XLA's scratch state in a start's tuple.
Shape Context() { return Shape::Scalar(PrimitiveType::kU32); }

std::vector<Shape> OperandShapes(const Instruction& inst) {
  std::vector<Shape> shapes;
  for (const Instruction* op : inst.operands()) shapes.push_back(op->shape());
  return shapes;
}

std::vector<Literal> OperandValues(absl::Span<const Literal* const> operands) {
  std::vector<Literal> values;
  for (const Literal* v : operands) values.push_back(*v);
  return values;
}

absl::Status ExpectValues(const Instruction& inst, absl::Span<const Literal* const> operands) {
  for (const Literal* v : operands) {
    if (v == nullptr) return OpError(inst, "evaluated without an operand value");
  }
  if (static_cast<int64_t>(operands.size()) != inst.operand_count()) {
    return OpError(inst, "evaluated with ", operands.size(), " operands");
  }
  return absl::OkStatus();
}

// The operand of a done or update: one of `starts`, holding a tuple.
absl::StatusOr<const Instruction*> StartOperand(const Instruction& inst,
                                                std::initializer_list<Opcode> starts) {
  if (inst.operand_count() != 1) {
    return OpError(inst, "takes 1 operand, got ", inst.operand_count());
  }
  const Instruction* start = inst.operand(0);
  bool known = false;
  std::vector<std::string> names;
  for (Opcode op : starts) {
    known = known || start->opcode() == op;
    names.push_back(std::string(OpcodeName(op)));
  }
  if (!known) {
    return OpError(inst, "needs the result of ", absl::StrJoin(names, " or "), ", got ",
                   OpcodeName(start->opcode()), " %", start->name());
  }
  if (!start->shape().is_tuple() || start->shape().tuple_size() < 2) {
    return OpError(inst, "needs a start whose result is a tuple, got ", start->shape().ToString());
  }
  return start;
}

// Starts whose older form returns the value alone.
bool AllowsValueOnlyStart(Opcode start) {
  return start == Opcode::kAllGatherStart || start == Opcode::kCollectivePermuteStart;
}

// A done: element `k` of its start's tuple.
OpDef DoneDef(Opcode done, std::initializer_list<Opcode> starts, int64_t k) {
  OpDef def;
  def.opcode = done;
  def.min_operands = 1;
  def.max_operands = 1;
  std::vector<Opcode> start_list(starts);
  def.infer_shape = [start_list, k](const Instruction& inst) -> absl::StatusOr<Shape> {
    if (inst.operand_count() != 1) {
      return OpError(inst, "takes 1 operand, got ", inst.operand_count());
    }
    const Instruction* start = inst.operand(0);
    bool known = false;
    for (Opcode op : start_list) known = known || start->opcode() == op;
    if (!known) {
      return OpError(inst, "needs the result of its start op, got ",
                     OpcodeName(start->opcode()), " %", start->name());
    }
    const Shape& s = start->shape();
    // The older form's start returns the value itself.
    if (s.is_array() && AllowsValueOnlyStart(start->opcode())) return s;
    if (!s.is_tuple() || s.tuple_size() <= k) {
      return OpError(inst, "needs a start whose result is a tuple of at least ", k + 1,
                     " elements, got ", s.ToString());
    }
    return s.tuple_shape(k);
  };
  def.evaluate = [k](const Instruction& inst, absl::Span<const Literal* const> operands,
                     EvalContext&) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(ExpectValues(inst, operands));
    if (!operands[0]->shape().is_tuple() && AllowsValueOnlyStart(inst.operand(0)->opcode())) {
      return *operands[0];
    }
    if (!operands[0]->shape().is_tuple() || operands[0]->shape().tuple_size() <= k) {
      return OpError(inst, "evaluated on ", operands[0]->shape().ToString());
    }
    return operands[0]->element(k);
  };
  return def;
}

std::vector<AttrSpec> GroupAttrs(bool with_dimensions, bool with_reducer) {
  std::vector<AttrSpec> attrs = {{"channel_id", AttrKind::kInt},
                                 {"replica_groups", AttrKind::kReplicaGroups},
                                 {"use_global_device_ids", AttrKind::kBool}};
  if (with_dimensions) attrs.push_back({"dimensions", AttrKind::kIntList, true});
  if (with_reducer) attrs.push_back({"to_apply", AttrKind::kComputation, true});
  return attrs;
}

// ------------------------------------------------------ all-reduce-start --

// The older one-operand form, declared (x, reduced).
bool HoldsOperand(const Instruction& inst, const Shape& reduced) {
  return inst.operand_count() == 1 && inst.shape().is_tuple() &&
         inst.shape() == Shape::Tuple({inst.operand(0)->shape(), reduced});
}

OpDef AllReduceStartDef() {
  OpDef def;
  def.opcode = Opcode::kAllReduceStart;
  def.min_operands = 1;
  def.max_operands = -1;
  def.attributes = GroupAttrs(false, true);
  def.infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
    ASSIGN_OR_RETURN(Shape reduced, GetOpDef(Opcode::kAllReduce).infer_shape(inst));
    if (HoldsOperand(inst, reduced)) return Shape::Tuple({inst.operand(0)->shape(), reduced});
    return reduced;
  };
  def.verify = [](const Instruction& inst) { return GetOpDef(Opcode::kAllReduce).verify(inst); };
  def.evaluate = [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    EvalContext& ctx) -> absl::StatusOr<Literal> {
    ASSIGN_OR_RETURN(Literal reduced, GetOpDef(Opcode::kAllReduce).evaluate(inst, operands, ctx));
    if (!inst.shape().is_tuple() || inst.operand_count() != 1) return reduced;
    std::vector<Literal> out;
    out.push_back(*operands[0]);
    out.push_back(std::move(reduced));
    return Literal::Tuple(std::move(out));
  };
  def.traits.collective = true;
  return def;
}

// A one-operand all-reduce-start whose result is (x, reduced).
bool OlderAllReduceStart(const Instruction& start) {
  return start.operand_count() == 1 && start.shape().is_tuple() &&
         start.shape().tuple_size() == 2 && start.operand(0)->shape().is_array();
}

OpDef AllReduceDoneDef() {
  OpDef def;
  def.opcode = Opcode::kAllReduceDone;
  def.min_operands = 1;
  def.max_operands = 1;
  def.infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
    if (inst.operand_count() != 1 || inst.operand(0)->opcode() != Opcode::kAllReduceStart) {
      return OpError(inst, "needs the result of one all-reduce-start");
    }
    const Instruction* start = inst.operand(0);
    if (OlderAllReduceStart(*start)) return start->shape().tuple_shape(1);
    return start->shape();
  };
  def.evaluate = [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    EvalContext&) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(ExpectValues(inst, operands));
    if (OlderAllReduceStart(*inst.operand(0))) return operands[0]->element(1);
    return *operands[0];
  };
  return def;
}

// ------------------------------------------------------ all-gather-start --

// (x, gathered) for one operand, ((x, y), (gathered x, gathered y)) for more.
Shape WithOperands(const Instruction& inst, Shape result) {
  if (inst.operand_count() == 1) return Shape::Tuple({inst.operand(0)->shape(), result});
  return Shape::Tuple({Shape::Tuple(OperandShapes(inst)), result});
}

OpDef AllGatherStartDef() {
  OpDef def;
  def.opcode = Opcode::kAllGatherStart;
  def.min_operands = 1;
  def.max_operands = -1;
  def.attributes = GroupAttrs(true, false);
  def.infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
    ASSIGN_OR_RETURN(Shape gathered, GetOpDef(Opcode::kAllGather).infer_shape(inst));
    if (inst.shape() == gathered && gathered.is_array()) return gathered;  // the older form
    return WithOperands(inst, gathered);
  };
  def.verify = [](const Instruction& inst) { return GetOpDef(Opcode::kAllGather).verify(inst); };
  def.evaluate = [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    EvalContext& ctx) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(ExpectValues(inst, operands));
    ASSIGN_OR_RETURN(Literal gathered, GetOpDef(Opcode::kAllGather).evaluate(inst, operands, ctx));
    if (inst.shape().is_array()) return gathered;
    std::vector<Literal> values = OperandValues(operands);
    Literal held = values.size() == 1 ? std::move(values[0]) : Literal::Tuple(std::move(values));
    std::vector<Literal> out;
    out.push_back(std::move(held));
    out.push_back(std::move(gathered));
    return Literal::Tuple(std::move(out));
  };
  def.traits.collective = true;
  return def;
}

// ---------------------------------------------- collective-permute-start --

// (x, permuted), or with XLA's two u32[] scratch values (x, permuted, u32[],
// u32[]) when the declared shape has them. With several operands x and
// permuted are tuples of them (the combined form); the in-place form
// (slice_sizes=) holds (input, output[, u32[], u32[]]).
absl::StatusOr<Shape> InferCollectivePermuteStart(const Instruction& inst) {
  ASSIGN_OR_RETURN(Shape permuted, GetOpDef(Opcode::kCollectivePermute).infer_shape(inst));
  Shape x = inst.operand_count() == 1 ? inst.operand(0)->shape() : Shape::Tuple(OperandShapes(inst));
  if (inst.has_attr("slice_sizes")) x = inst.operand(0)->shape();
  Shape with_scratch = Shape::Tuple({x, permuted, Context(), Context()});
  if (inst.shape() == with_scratch) return with_scratch;
  if (inst.shape() == permuted && permuted.is_array()) return permuted;  // the older form
  return Shape::Tuple({x, permuted});
}

OpDef CollectivePermuteStartDef() {
  OpDef def;
  def.opcode = Opcode::kCollectivePermuteStart;
  def.min_operands = 1;
  def.max_operands = -1;
  def.attributes = {{"channel_id", AttrKind::kInt},
                    {"source_target_pairs", AttrKind::kPairs, true},
                    {"slice_sizes", AttrKind::kEnum}};
  def.infer_shape = InferCollectivePermuteStart;
  def.verify = [](const Instruction& inst) {
    return GetOpDef(Opcode::kCollectivePermute).verify(inst);
  };
  def.evaluate = [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    EvalContext& ctx) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(ExpectValues(inst, operands));
    ASSIGN_OR_RETURN(Shape shape, InferCollectivePermuteStart(inst));
    ASSIGN_OR_RETURN(Literal permuted,
                     GetOpDef(Opcode::kCollectivePermute).evaluate(inst, operands, ctx));
    if (shape.is_array()) return permuted;
    std::vector<Literal> out;
    out.push_back(operands.size() == 1 ? *operands[0] : Literal::Tuple(OperandValues(operands)));
    out.push_back(std::move(permuted));
    for (int64_t i = 2; i < shape.tuple_size(); ++i) out.push_back(Literal(Context()));
    return Literal::Tuple(std::move(out));
  };
  def.traits.collective = true;
  return def;
}

// ------------------------------------------------------------ copy-start --

OpDef CopyStartDef() {
  OpDef def;
  def.opcode = Opcode::kCopyStart;
  def.min_operands = 1;
  def.max_operands = 1;
  def.attributes = {{"cross_program_prefetch_index", AttrKind::kInt}};
  def.infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
    RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
    const Shape& x = inst.operand(0)->shape();
    return Shape::Tuple({x, x, Context()});
  };
  def.evaluate = [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    EvalContext&) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(ExpectValues(inst, operands));
    std::vector<Literal> out = {*operands[0], *operands[0], Literal(Context())};
    return Literal::Tuple(std::move(out));
  };
  return def;
}

// ----------------------------------------------- async-start, -update, -done --

const Computation* Wrapped(const Instruction& inst) { return inst.attr_computation("calls"); }

// ((operands), calls' result, context...): the context elements are XLA's
// scratch state, kept as declared; without a declared shape, one s32[].
absl::StatusOr<Shape> InferAsyncStart(const Instruction& inst) {
  const Computation* wrapped = Wrapped(inst);
  if (wrapped == nullptr || wrapped->root() == nullptr) {
    return OpError(inst, "needs calls= naming the computation it runs");
  }
  Shape operands = Shape::Tuple(OperandShapes(inst));
  const Shape& result = wrapped->root()->shape();
  const Shape& declared = inst.shape();
  if (!declared.valid()) {
    return Shape::Tuple({operands, result, Shape::Scalar(PrimitiveType::kS32)});
  }
  if (!declared.is_tuple() || declared.tuple_size() < 2) {
    return OpError(inst, "must produce a tuple ((operands), result, context...), declares ",
                   declared.ToString());
  }
  if (declared.tuple_shape(0) != operands) {
    return OpError(inst, "declares ", declared.tuple_shape(0).ToString(),
                   " for its operands, which are ", operands.ToString());
  }
  if (declared.tuple_shape(1) != result) {
    return OpError(inst, "declares ", declared.tuple_shape(1).ToString(), " for the result of ",
                   wrapped->name(), ", which returns ", result.ToString());
  }
  return declared;
}

absl::Status VerifyAsyncStart(const Instruction& inst) {
  RETURN_IF_ERROR(InferAsyncStart(inst).status());
  return ExpectComputationSignature(inst, Wrapped(inst), "calls", OperandShapes(inst), nullptr);
}

absl::StatusOr<Literal> EvaluateAsyncStart(const Instruction& inst,
                                           absl::Span<const Literal* const> operands,
                                           EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferAsyncStart(inst));
  ASSIGN_OR_RETURN(Literal result, ctx.Call(*Wrapped(inst), operands));
  std::vector<Literal> out;
  out.push_back(Literal::Tuple(OperandValues(operands)));
  out.push_back(std::move(result));
  for (int64_t i = 2; i < shape.tuple_size(); ++i) out.push_back(Literal(shape.tuple_shape(i)));
  return Literal::Tuple(std::move(out));
}

// An update or done names the same computation as its start (through any
// updates), if it names one.
absl::Status VerifySameWrapped(const Instruction& inst) {
  ASSIGN_OR_RETURN(const Instruction* start,
                   StartOperand(inst, {Opcode::kAsyncStart, Opcode::kAsyncUpdate}));
  while (start->opcode() == Opcode::kAsyncUpdate && start->operand_count() == 1) {
    start = start->operand(0);
  }
  if (inst.has_attr("calls") && start->has_attr("calls") && Wrapped(inst) != Wrapped(*start)) {
    return OpError(inst, "calls ", Wrapped(inst)->name(), " but its start calls ",
                   Wrapped(*start)->name());
  }
  return absl::OkStatus();
}

OpDef AsyncStartDef() {
  OpDef def;
  def.opcode = Opcode::kAsyncStart;
  def.min_operands = 0;
  def.max_operands = -1;
  def.attributes = {{"calls", AttrKind::kComputation, true},
                    {"async_execution_thread", AttrKind::kString}};
  def.infer_shape = InferAsyncStart;
  def.verify = VerifyAsyncStart;
  def.evaluate = EvaluateAsyncStart;
  return def;
}

OpDef AsyncUpdateDef() {
  OpDef def;
  def.opcode = Opcode::kAsyncUpdate;
  def.min_operands = 1;
  def.max_operands = 1;
  def.attributes = {{"calls", AttrKind::kComputation},
                    {"async_execution_thread", AttrKind::kString}};
  def.infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
    ASSIGN_OR_RETURN(const Instruction* start,
                     StartOperand(inst, {Opcode::kAsyncStart, Opcode::kAsyncUpdate}));
    return start->shape();
  };
  def.verify = VerifySameWrapped;
  def.evaluate = [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    EvalContext&) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(ExpectValues(inst, operands));
    return *operands[0];
  };
  return def;
}

// async-start passes its operands to the wrapped computation and holds
// them, with that computation's result, in its tuple ((operands...),
// result, context...); an update passes the tuple on, a done takes the result.
DataFlow AsyncStartFlow(const Instruction& inst) {
  DataFlow flow;
  const Computation* wrapped = Wrapped(inst);
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    flow.edges.push_back({FlowPoint::Operand(i), FlowPoint::Result({0, i})});
    if (wrapped != nullptr) {
      flow.edges.push_back({FlowPoint::Operand(i), FlowPoint::Parameter(wrapped, i)});
    }
  }
  if (wrapped != nullptr) flow.edges.push_back({FlowPoint::Root(wrapped), FlowPoint::Result({1})});
  return flow;
}

DataFlow ForwardsOperandLeaf(std::vector<int64_t> leaf) {
  return DataFlow{{{FlowPoint::Operand(0, std::move(leaf)), FlowPoint::Result()}}, {}};
}

}  // namespace

void RegisterAsyncOps(OpRegistry& registry) {
  registry.Register(AllReduceStartDef());
  registry.Register(AllReduceDoneDef());
  registry.Register(AllGatherStartDef());
  registry.Register(DoneDef(Opcode::kAllGatherDone, {Opcode::kAllGatherStart}, 1));
  registry.Register(CollectivePermuteStartDef());
  registry.Register(
      DoneDef(Opcode::kCollectivePermuteDone, {Opcode::kCollectivePermuteStart}, 1));
  OpDef copy_start = CopyStartDef();
  copy_start.data_flow = [](const Instruction&) {
    return DataFlow{{{FlowPoint::Operand(0), FlowPoint::Result({0})},
                     {FlowPoint::Operand(0), FlowPoint::Result({1})}},
                    {}};
  };
  registry.Register(std::move(copy_start));
  OpDef copy_done = DoneDef(Opcode::kCopyDone, {Opcode::kCopyStart}, 0);
  copy_done.data_flow = [](const Instruction&) { return ForwardsOperandLeaf({0}); };
  registry.Register(std::move(copy_done));
  OpDef start = AsyncStartDef();
  start.data_flow = AsyncStartFlow;
  registry.Register(std::move(start));
  OpDef update = AsyncUpdateDef();
  update.data_flow = [](const Instruction&) { return ForwardsOperandLeaf({}); };
  registry.Register(std::move(update));
  OpDef done = DoneDef(Opcode::kAsyncDone, {Opcode::kAsyncStart, Opcode::kAsyncUpdate}, 1);
  done.data_flow = [](const Instruction&) { return ForwardsOperandLeaf({1}); };
  done.attributes = {{"calls", AttrKind::kComputation},
                     {"async_execution_thread", AttrKind::kString}};
  done.verify = VerifySameWrapped;
  registry.Register(std::move(done));
}

}  // namespace sharc::hlo

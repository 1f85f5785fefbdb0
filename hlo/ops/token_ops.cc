// Ordering and the outside world. A token (`token[]`) orders side effects
// and carries no value (it computes as an empty value, so it can sit in
// tuples, loop states and parameters):
//   after-all(values...)        -> token[]   joins orderings (usually of tokens)
//   add-dependency(x, token)    -> x         x, ordered after the token
//   opt-barrier(x)              -> x         a barrier XLA's scheduler may not move work across
// the host queues of a device (hlo/eval/host_queues.h):
//   infeed(token)               -> (T, token[])   pops the next value the host transferred
//   outfeed(data, token)        -> token[]        pushes data for the host
// and the transfers to other programs, which sharc reads, verifies and
// partitions but cannot run (its devices talk only to each other through
// collectives, and to their host):
//   send(data, token)           -> (data, u32[], token[])   send-done(send) -> token[]
//   recv(token)                 -> (T, u32[], token[])      recv-done(recv) -> (T, token[])
// Before anything computes, hlo/passes/lower_for_compute.h replaces
// add-dependency and opt-barrier by their value and drops after-all that
// orders nothing.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/eval/host_queues.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

const Shape& TokenShape() {
  static const Shape* token = new Shape(Shape::Scalar(PrimitiveType::kToken));
  return *token;
}

bool IsToken(const Shape& shape) { return shape == TokenShape(); }

absl::Status ExpectTokenOperand(const Instruction& inst, int64_t i) {
  if (!IsToken(inst.operand(i)->shape())) {
    return OpError(inst, "operand ", i, " must be token[], got ",
                   inst.operand(i)->shape().ToString());
  }
  return absl::OkStatus();
}

// The declared result of an op whose result the operands cannot imply
// (recv, infeed): it must be written, and be (T..., token[]).
absl::StatusOr<Shape> DeclaredWithToken(const Instruction& inst, int64_t extra_u32) {
  const Shape& shape = inst.shape();
  if (!shape.valid()) return OpError(inst, "needs its result shape written");
  const int64_t size = 2 + extra_u32;
  if (!shape.is_tuple() || shape.tuple_size() != size ||
      !IsToken(shape.tuple_shape(size - 1)) ||
      (extra_u32 == 1 && shape.tuple_shape(1) != Shape::Scalar(PrimitiveType::kU32))) {
    return OpError(inst, "must return ", extra_u32 ? "(T, u32[], token[])" : "(T, token[])",
                   ", declares ", shape.ToString());
  }
  return shape;
}

// ------------------------------------------------------------ after-all --

// XLA accepts any values here (the token comes after they are computed).
absl::StatusOr<Shape> InferAfterAll(const Instruction&) { return TokenShape(); }

absl::StatusOr<Literal> EvaluateAfterAll(const Instruction&, absl::Span<const Literal* const>,
                                         EvalContext&) {
  return Literal(TokenShape());
}

// ------------------------------------------------------- add-dependency --

absl::StatusOr<Shape> InferAddDependency(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTokenOperand(inst, 1));
  return inst.operand(0)->shape();
}

absl::StatusOr<Literal> EvaluateFirstOperand(const Instruction& inst,
                                             absl::Span<const Literal* const> operands,
                                             EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  return *operands[0];
}

// ---------------------------------------------------------- opt-barrier --

absl::StatusOr<Shape> InferOptBarrier(const Instruction& inst) { return inst.operand(0)->shape(); }

// ---------------------------------------------------------- send, recv --

absl::StatusOr<Shape> InferSend(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTokenOperand(inst, 1));
  return Shape::Tuple({inst.operand(0)->shape(), Shape::Scalar(PrimitiveType::kU32), TokenShape()});
}

// The operand of send-done / recv-done is a send's / recv's result, often
// carried through a loop's state (pipelined transfers): only its shape is
// checked.
absl::Status ExpectTransferOperand(const Instruction& inst) {
  const Shape& s = inst.operand(0)->shape();
  if (!s.is_tuple() || s.tuple_size() != 3 || s.tuple_shape(1) != Shape::Scalar(PrimitiveType::kU32) ||
      !IsToken(s.tuple_shape(2))) {
    return OpError(inst, "operand must be a transfer's (T, u32[], token[]), got ", s.ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferSendDone(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTransferOperand(inst));
  return TokenShape();
}

absl::StatusOr<Shape> InferRecv(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTokenOperand(inst, 0));
  return DeclaredWithToken(inst, 1);
}

absl::StatusOr<Shape> InferRecvDone(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTransferOperand(inst));
  return Shape::Tuple({inst.operand(0)->shape().tuple_shape(0), TokenShape()});
}

// ------------------------------------------------------ infeed, outfeed --

absl::StatusOr<Shape> InferInfeed(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTokenOperand(inst, 0));
  return DeclaredWithToken(inst, 0);
}

absl::StatusOr<Shape> InferOutfeed(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectTokenOperand(inst, 1));
  return TokenShape();
}

absl::StatusOr<HostQueues*> QueuesOf(const Instruction& inst, EvalContext& ctx) {
  HostQueues* queues = ctx.host_queues();
  if (queues == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        OpcodeName(inst.opcode()), " needs a device's host queues, which this evaluation has "
        "none of, in ", inst.Describe()));
  }
  return queues;
}

absl::StatusOr<Literal> EvaluateInfeed(const Instruction& inst,
                                       absl::Span<const Literal* const> operands,
                                       EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(HostQueues * queues, QueuesOf(inst, ctx));
  ASSIGN_OR_RETURN(Literal value, queues->PopInfeed(inst));
  std::vector<Literal> result;
  result.push_back(std::move(value));
  result.push_back(Literal(TokenShape()));
  return Literal::Tuple(std::move(result));
}

absl::StatusOr<Literal> EvaluateOutfeed(const Instruction& inst,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(HostQueues * queues, QueuesOf(inst, ctx));
  queues->PushOutfeed(*operands[0]);
  return Literal(TokenShape());
}

absl::Status VerifyOutfeed(const Instruction& inst) {
  // XLA writes the data's shape again (with its layout); it must agree.
  if (!inst.has_attr("outfeed_shape")) return absl::OkStatus();
  const std::string& declared = inst.attr_string("outfeed_shape");
  if (declared != inst.operand(0)->shape().ToString()) {
    return OpError(inst, "outfeed_shape=", declared, " differs from the data's shape ",
                   inst.operand(0)->shape().ToString());
  }
  return absl::OkStatus();
}

// The attributes every transfer takes. channel_id pairs a send with its recv
// (kept: it is what the transfer means); is_host_transfer says the other end
// is the host.
std::vector<AttrSpec> TransferAttrs() {
  return {{"channel_id", AttrKind::kInt}, {"is_host_transfer", AttrKind::kBool}};
}

OpDef Def(Opcode opcode, int min_operands, int max_operands, InferShapeFn infer,
          std::vector<AttrSpec> attrs = {}, std::string cannot_run = "") {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = min_operands;
  def.max_operands = max_operands;
  def.attributes = std::move(attrs);
  def.infer_shape = std::move(infer);
  def.traits.side_effecting = !cannot_run.empty();
  def.cannot_run = std::move(cannot_run);
  def.evaluate = def.cannot_run.empty() ? EvaluateFn(EvaluateFirstOperand) : CannotRunEvaluator();
  return def;
}

void Add(OpRegistry& registry, Opcode opcode, int min_operands, int max_operands,
         InferShapeFn infer, std::vector<AttrSpec> attrs = {}, std::string cannot_run = "") {
  registry.Register(
      Def(opcode, min_operands, max_operands, std::move(infer), std::move(attrs), cannot_run));
}

// Ops whose value is their first operand's, leaf for leaf (hlo/ops/data_flow.h).
void AddForwarding(OpRegistry& registry, Opcode opcode, int min_operands, int max_operands,
                   InferShapeFn infer, std::vector<AttrSpec> attrs = {}) {
  OpDef def = Def(opcode, min_operands, max_operands, std::move(infer), std::move(attrs));
  def.data_flow = [](const Instruction&) {
    return DataFlow{{{FlowPoint::Operand(0), FlowPoint::Result()}}, {}};
  };
  registry.Register(std::move(def));
}

}  // namespace

void RegisterTokenOps(OpRegistry& registry) {
  {
    OpDef def = Def(Opcode::kAfterAll, 0, -1, InferAfterAll);
    def.evaluate = EvaluateAfterAll;
    registry.Register(std::move(def));
  }
  AddForwarding(registry, Opcode::kAddDependency, 2, 2, InferAddDependency);
  AddForwarding(registry, Opcode::kOptimizationBarrier, 1, 1, InferOptBarrier);
  // domain marks where XLA's sharding domains meet; its value is its
  // operand's (lower_for_compute.h forwards it). `domain=` is kept as written.
  AddForwarding(registry, Opcode::kDomain, 1, 1, InferOptBarrier, {{"domain", AttrKind::kEnum}});
  const std::string kOtherProgram =
      "it transfers data to or from another program, and sharc's devices talk only to each "
      "other (through collectives) and to their host (infeed, outfeed)";
  Add(registry, Opcode::kSend, 2, 2, InferSend, TransferAttrs(), kOtherProgram);
  Add(registry, Opcode::kSendDone, 1, 1, InferSendDone, TransferAttrs(), kOtherProgram);
  Add(registry, Opcode::kRecv, 1, 1, InferRecv, TransferAttrs(), kOtherProgram);
  Add(registry, Opcode::kRecvDone, 1, 1, InferRecvDone, TransferAttrs(), kOtherProgram);
  {
    OpDef def = Def(Opcode::kInfeed, 1, 1, InferInfeed, {{"infeed_config", AttrKind::kString}});
    def.traits.side_effecting = true;  // each pops the next value: never removed nor duplicated
    def.evaluate = EvaluateInfeed;
    registry.Register(std::move(def));
  }
  {
    OpDef def;
    def.opcode = Opcode::kOutfeed;
    def.min_operands = 2;
    def.max_operands = 2;
    def.attributes = {{"outfeed_shape", AttrKind::kShape}, {"outfeed_config", AttrKind::kString}};
    def.infer_shape = InferOutfeed;
    def.verify = VerifyOutfeed;
    def.traits.side_effecting = true;
    def.evaluate = EvaluateOutfeed;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo

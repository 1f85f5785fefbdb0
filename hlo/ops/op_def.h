// OpDef: everything hlo/ knows about one op, defined once (DESIGN.md, "Ops are
// defined once"). The parser, printer, verifier, shape inference and the
// reference interpreter are generic algorithms over this table; none of them
// switches over opcodes.
//
// To add an op: add it to hlo/ir/opcode.def, then register its OpDef in the
// family file under hlo/ops/ (elementwise_ops.cc, shape_ops.cc, ...). The
// registry test fails until every opcode has a complete definition.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/attribute.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/opcode.h"
#include "hlo/ir/shape.h"
#include "hlo/ops/data_flow.h"

namespace sharc::hlo {

class Computation;
class HostQueues;

// How the operand list is written in text.
enum class OperandSyntax {
  kOperands,         // op(%a, %b)
  kLiteral,          // constant({1, 2})
  kParameterNumber,  // parameter(0)
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  bool required = false;
};

// What the interpreter offers an op's evaluator: calling computations and
// talking to the other simulated devices.
class EvalContext {
 public:
  virtual ~EvalContext() = default;
  // Evaluates `computation` on `args` (used by reduce, call, while, ...).
  virtual absl::StatusOr<Literal> Call(const Computation& computation,
                                       absl::Span<const Literal* const> args) = 0;
  // This device's partition id and the number of partitions (1 when the
  // interpreter runs a global program).
  virtual int64_t partition_id() const = 0;
  virtual int64_t num_partitions() const = 0;
  virtual int64_t replica_id() const { return 0; }
  // Collective rendezvous: every device contributes `value` for the
  // collective `instruction`; returns the contributions of all devices,
  // indexed by partition id. Blocks until all devices arrive (or fails after
  // the interpreter's timeout, naming the collective).
  virtual absl::StatusOr<std::vector<Literal>> ExchangeWithAllDevices(
      const Instruction& instruction, Literal value) = 0;
  // This device's host queues (hlo/eval/host_queues.h), which infeed pops
  // and outfeed pushes; null where the run has none (inside a kernel).
  virtual HostQueues* host_queues() { return nullptr; }
};

using InferShapeFn = std::function<absl::StatusOr<Shape>(const Instruction&)>;
using VerifyFn = std::function<absl::Status(const Instruction&)>;
using EvaluateFn = std::function<absl::StatusOr<Literal>(
    const Instruction&, absl::Span<const Literal* const> operands, EvalContext&)>;

struct OpTraits {
  bool elementwise = false;     // result[i] depends only on operands[i]
  bool commutative = false;     // binary op with f(a,b) == f(b,a)
  bool side_effecting = false;  // must not be removed or duplicated
  bool collective = false;      // communicates between devices
};

struct OpDef {
  Opcode opcode;
  OperandSyntax syntax = OperandSyntax::kOperands;
  int min_operands = 0;
  int max_operands = 0;  // -1: any number
  std::vector<AttrSpec> attributes;
  // Computes the result shape from the operands and attributes. Ops whose
  // result cannot be inferred (reshape, convert, broadcast...) read the
  // instruction's declared shape and check it against the operands.
  InferShapeFn infer_shape;
  // Extra checks beyond the shape (called computations' signatures,
  // attribute ranges). Optional.
  VerifyFn verify;
  // The reference semantics.
  EvaluateFn evaluate;
  OpTraits traits;
  // How the op passes values on unchanged between its operands, its
  // callees and its result (hlo/ops/data_flow.h); empty for ops that
  // compute their result. Device variance, linearity and any other
  // analysis on hlo/analysis/data_flow_walk.h follow these edges.
  DataFlowFn data_flow;
  // Non-empty for ops sharc reads, verifies and partitions but cannot run
  // (they talk to the host or to other programs): why. `run` refuses a
  // module holding one with this reason, naming the instruction
  // (CheckRunnableTypes), and the evaluator returns the same error.
  std::string cannot_run;
};

// The op table, built once on first use from the family files.
const OpDef& GetOpDef(Opcode opcode);
// True if `opcode` has a registered definition (the registry test uses this).
bool HasOpDef(Opcode opcode);
const AttrSpec* FindAttrSpec(const OpDef& def, std::string_view name);

// Family registration functions, one per file in hlo/ops/.
class OpRegistry;
void RegisterSourceOps(OpRegistry& registry);       // source_ops.cc
void RegisterElementwiseOps(OpRegistry& registry);  // elementwise_ops.cc
void RegisterShapeOps(OpRegistry& registry);        // shape_ops.cc
void RegisterReductionOps(OpRegistry& registry);    // reduction_ops.cc
void RegisterDotOp(OpRegistry& registry);           // dot_op.cc
void RegisterConvolutionOp(OpRegistry& registry);   // convolution_op.cc
void RegisterSortOp(OpRegistry& registry);          // sort_op.cc
void RegisterTokenOps(OpRegistry& registry);        // token_ops.cc
void RegisterBitcastConvertOp(OpRegistry& registry);// bitcast_convert_op.cc
void RegisterRandomOps(OpRegistry& registry);       // random_ops.cc
void RegisterLinalgOps(OpRegistry& registry);       // linalg_ops.cc
void RegisterGatherScatterOps(OpRegistry& registry);// gather_scatter_ops.cc
void RegisterControlFlowOps(OpRegistry& registry);  // control_flow_ops.cc
void RegisterCollectiveOps(OpRegistry& registry);   // collective_ops.cc
void RegisterMapReduceOps(OpRegistry& registry);    // mapreduce_ops.cc
void RegisterShardMapOps(OpRegistry& registry);     // shard_map_ops.cc
void RegisterNamedCollectiveOps(OpRegistry& registry);  // named_collective_ops.cc

class OpRegistry {
 public:
  void Register(OpDef def);
  const OpDef* Find(Opcode opcode) const;

 private:
  std::vector<std::unique_ptr<OpDef>> defs_ =
      std::vector<std::unique_ptr<OpDef>>(static_cast<size_t>(kNumOpcodes));
};

}  // namespace sharc::hlo

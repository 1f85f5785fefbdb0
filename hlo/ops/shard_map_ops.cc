// shard_map: a body computation run once per device of a named mesh on the
// devices' local blocks of its operands (in_specs), whose per-device results
// are assembled into global values (out_specs):
//
//   %r = f32[8,4] shard_map(%x), mesh={i=4, j=2}, in_specs={P(i)},
//        out_specs={P(i,j)}, to_apply=%body
//
// Its reference semantics runs the body on one simulated device per mesh
// device (EvaluateComputationSpmd), so the named-axis collectives of
// hlo/ops/named_collective_ops.cc meet between those runs; no partitioner is
// involved, which makes this the oracle for spmd/shard_map_lowering.h.
#include <vector>

#include "hlo/base/status_macros.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/shard_map_attrs.h"
#include "hlo/ops/shard_map_blocks.h"

namespace sharc::hlo {
namespace {

constexpr bool kRequired = true;

// Everything the shard_map's attributes say, checked against its operands.
struct Signature {
  ManualMesh mesh;
  std::vector<AxisSpec> in_specs;
  std::vector<AxisSpec> out_specs;
  std::vector<Shape> local_inputs;  // body parameter shapes
  std::vector<Shape> local_outputs; // body result leaves
  std::vector<Shape> global_outputs;
};

absl::StatusOr<Signature> ReadSignature(const Instruction& inst) {
  Signature sig;
  ASSIGN_OR_RETURN(sig.mesh, ShardMapMesh(inst));
  ASSIGN_OR_RETURN(sig.in_specs, ShardMapSpecs(inst, "in_specs"));
  ASSIGN_OR_RETURN(sig.out_specs, ShardMapSpecs(inst, "out_specs"));
  if (static_cast<int64_t>(sig.in_specs.size()) != inst.operand_count()) {
    return OpError(inst, "has ", inst.operand_count(), " operands but ", sig.in_specs.size(),
                   " in_specs; give one P(...) per operand");
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    absl::StatusOr<Shape> local =
        LocalShape(inst.operand(i)->shape(), sig.in_specs[static_cast<size_t>(i)], sig.mesh);
    if (!local.ok()) return OpError(inst, "operand ", i, ": ", local.status().message());
    sig.local_inputs.push_back(*std::move(local));
  }
  const Computation* body = inst.attr_computation("to_apply");
  if (body == nullptr || body->root() == nullptr) return OpError(inst, "needs a to_apply body");
  const Shape& result = body->root()->shape();
  if (result.is_tuple()) {
    sig.local_outputs = result.tuple_shapes();
  } else {
    sig.local_outputs = {result};
  }
  if (sig.local_outputs.size() != sig.out_specs.size()) {
    return OpError(inst, "has ", sig.out_specs.size(), " out_specs but its body returns ",
                   sig.local_outputs.size(), " value(s) (", result.ToString(), ")");
  }
  for (size_t k = 0; k < sig.local_outputs.size(); ++k) {
    absl::StatusOr<Shape> global = GlobalShape(sig.local_outputs[k], sig.out_specs[k], sig.mesh);
    if (!global.ok()) return OpError(inst, "output ", k, ": ", global.status().message());
    sig.global_outputs.push_back(*std::move(global));
  }
  return sig;
}

absl::StatusOr<Shape> InferShardMap(const Instruction& inst) {
  ASSIGN_OR_RETURN(Signature sig, ReadSignature(inst));
  if (inst.attr_computation("to_apply")->root()->shape().is_tuple()) {
    return Shape::Tuple(sig.global_outputs);
  }
  return sig.global_outputs[0];
}

absl::Status VerifyShardMap(const Instruction& inst) {
  ASSIGN_OR_RETURN(Signature sig, ReadSignature(inst));
  return ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply",
                                    sig.local_inputs, nullptr);
}

absl::StatusOr<Literal> EvaluateShardMap(const Instruction& inst,
                                         absl::Span<const Literal* const> operands,
                                         EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyShardMap(inst));
  ASSIGN_OR_RETURN(Signature sig, ReadSignature(inst));
  const int64_t n = sig.mesh.num_devices();
  std::vector<std::vector<Literal>> args(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    for (size_t i = 0; i < operands.size(); ++i) {
      args[static_cast<size_t>(d)].push_back(ExtractBlock(
          *operands[i], sig.local_inputs[i],
          BlockOffset(sig.mesh, d, sig.in_specs[i], sig.local_inputs[i])));
    }
  }
  SpmdOptions options;
  options.num_devices = n;
  ASSIGN_OR_RETURN(std::vector<Literal> per_device,
                   EvaluateComputationSpmd(*inst.attr_computation("to_apply"), args, options));
  const bool tuple = inst.shape().is_tuple();
  std::vector<Literal> outputs;
  for (size_t k = 0; k < sig.out_specs.size(); ++k) {
    Literal out(sig.global_outputs[k]);
    // Devices that differ only on axes the out_spec does not name hold the
    // same block (the variance check guarantees it); device order makes the
    // last of them win, deterministically.
    for (int64_t d = 0; d < n; ++d) {
      const Literal& local = tuple ? per_device[static_cast<size_t>(d)].element(
                                         static_cast<int64_t>(k))
                                   : per_device[static_cast<size_t>(d)];
      InsertBlock(local, out, BlockOffset(sig.mesh, d, sig.out_specs[k], sig.local_outputs[k]));
    }
    outputs.push_back(std::move(out));
  }
  if (tuple) return Literal::Tuple(std::move(outputs));
  return std::move(outputs[0]);
}

}  // namespace

void RegisterShardMapOps(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kShardMap;
  def.min_operands = 0;
  def.max_operands = -1;
  def.attributes = {{"mesh", AttrKind::kMesh},
                    {"in_specs", AttrKind::kPartitionSpecs, kRequired},
                    {"out_specs", AttrKind::kPartitionSpecs, kRequired},
                    {"check_variance", AttrKind::kBool},
                    {"to_apply", AttrKind::kComputation, kRequired}};
  def.infer_shape = InferShardMap;
  def.verify = VerifyShardMap;
  def.evaluate = EvaluateShardMap;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo

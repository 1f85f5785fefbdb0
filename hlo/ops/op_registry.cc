#include <memory>

#include "hlo/ops/complex_semantics.h"
#include "hlo/ops/narrow_type_semantics.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {

void OpRegistry::Register(OpDef def) {
  size_t index = static_cast<size_t>(def.opcode);
  defs_[index] = std::make_unique<OpDef>(std::move(def));
}

const OpDef* OpRegistry::Find(Opcode opcode) const {
  return defs_[static_cast<size_t>(opcode)].get();
}

// Registered here rather than in op_def.h's list, which every target
// precompiles (a change to it rebuilds everything): async_ops.cc,
// batch_norm_ops.cc, dimension_size_ops.cc, map_op.cc, topk_op.cc,
// ragged_dot_op.cc, stochastic_convert_op.cc, complex_ops.cc.
void RegisterAsyncOps(OpRegistry& registry);
void RegisterBatchNormOps(OpRegistry& registry);
void RegisterComplexOps(OpRegistry& registry);
void RegisterRaggedDotOp(OpRegistry& registry);
void RegisterStochasticConvertOp(OpRegistry& registry);
void RegisterDimensionSizeOps(OpRegistry& registry);
void RegisterMapOp(OpRegistry& registry);
void RegisterTopKOp(OpRegistry& registry);

namespace {

const OpRegistry& Registry() {
  // Built on first use (no static constructors); never destroyed.
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterSourceOps(*r);
    RegisterElementwiseOps(*r);
    RegisterShapeOps(*r);
    RegisterReductionOps(*r);
    RegisterDotOp(*r);
    RegisterConvolutionOp(*r);
    RegisterSortOp(*r);
    RegisterTokenOps(*r);
    RegisterBitcastConvertOp(*r);
    RegisterRandomOps(*r);
    RegisterLinalgOps(*r);
    RegisterGatherScatterOps(*r);
    RegisterControlFlowOps(*r);
    RegisterCollectiveOps(*r);
    RegisterMapReduceOps(*r);
    RegisterShardMapOps(*r);
    RegisterNamedCollectiveOps(*r);
    RegisterAsyncOps(*r);
    RegisterBatchNormOps(*r);
    RegisterDimensionSizeOps(*r);
    RegisterMapOp(*r);
    RegisterTopKOp(*r);
    RegisterRaggedDotOp(*r);
    RegisterStochasticConvertOp(*r);
    RegisterComplexOps(*r);
    // Last: it wraps definitions the calls above registered.
    AddComplexSemantics(*r);
    AddNarrowTypeSemantics(*r);
    return r;
  }();
  return *registry;
}

}  // namespace

bool HasOpDef(Opcode opcode) { return Registry().Find(opcode) != nullptr; }

const OpDef& GetOpDef(Opcode opcode) {
  const OpDef* def = Registry().Find(opcode);
  if (def == nullptr) {
    // A missing definition is a build-time omission caught by the registry
    // test; fall back to a definition that rejects the op cleanly.
    static const OpDef* missing = [] {
      auto* d = new OpDef();
      d->max_operands = -1;
      d->infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
        return absl::UnimplementedError(
            std::string("op '") + std::string(OpcodeName(inst.opcode())) + "' has no definition");
      };
      d->evaluate = [](const Instruction& inst, absl::Span<const Literal* const>,
                       EvalContext&) -> absl::StatusOr<Literal> {
        return absl::UnimplementedError(
            std::string("op '") + std::string(OpcodeName(inst.opcode())) + "' has no evaluator");
      };
      return d;
    }();
    return *missing;
  }
  return *def;
}

const AttrSpec* FindAttrSpec(const OpDef& def, std::string_view name) {
  for (const AttrSpec& spec : def.attributes) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace sharc::hlo

// Batching rules: how each op is vectorised by vmap, registered once per
// opcode (DESIGN.md, "Ops are defined once"). The driver (vmap.cc) walks a
// computation and asks each instruction's rule for its batched version; ops
// vmap cannot batch register a reason that becomes the user's error message.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/batching/batch_tree.h"
#include "hlo/batching/emitter.h"
#include "hlo/batching/vmap.h"
#include "hlo/ir/module.h"
#include "hlo/ir/opcode.h"

namespace sharc::hlo {

// A value of the batched computation and which of its leaves carry the batch
// dimension (always at dim 0).
struct BatchedValue {
  Instruction* inst = nullptr;
  BatchTree batched;
};

struct BatchedComputation {
  Computation* computation = nullptr;
  BatchTree result;  // which leaves of its result are batched
};

// What a rule may do besides emitting instructions.
class BatchingContext {
 public:
  virtual ~BatchingContext() = default;
  virtual int64_t batch_size() const = 0;
  virtual const VmapOptions& options() const = 0;
  // Appends to the batched computation being built.
  virtual Emitter& emitter() = 0;
  // Parameter `number` of the batched computation.
  virtual BatchedValue Parameter(int64_t number) const = 0;
  // Batches a called computation whose parameters are batched as `params`.
  // With `result`, the batched result is exactly that (it must include every
  // leaf the callee batches; the others are broadcast); without, it is
  // whatever the callee's ops give. Results are cached per signature.
  virtual absl::StatusOr<BatchedComputation> BatchCallee(const Computation& callee,
                                                         std::vector<BatchTree> params,
                                                         const BatchTree* result) = 0;
  // Adds a helper computation (a reducer, a loop wrapper) that the rule
  // built; it is named uniquely in the module from its current name.
  virtual Computation* AddComputation(std::unique_ptr<Computation> computation) = 0;
};

// Emits the batched version of `inst`, given the batched values of its
// operands. Called only when some operand leaf is batched (otherwise the
// driver copies the instruction unchanged), except for rules that set
// `apply_to_unbatched`. The result's shape must be
// result.batched.Apply(inst.shape()).
using BatchFn = std::function<absl::StatusOr<BatchedValue>(
    const Instruction& inst, absl::Span<const BatchedValue> operands, BatchingContext& ctx)>;

struct BatchingRule {
  BatchFn batch;
  // Non-empty for ops vmap cannot batch: why, as shown to the user.
  std::string unsupported_reason;
  // The rule runs even when no operand is batched (parameters, whose
  // batching comes from the vmap call rather than from operands).
  bool apply_to_unbatched = false;
};

class BatchingRuleRegistry {
 public:
  void Register(Opcode opcode, BatchFn batch);
  void RegisterAlways(Opcode opcode, BatchFn batch);
  void RegisterUnsupported(Opcode opcode, std::string reason);
  const BatchingRule* Find(Opcode opcode) const;

 private:
  std::vector<std::unique_ptr<BatchingRule>> rules_ =
      std::vector<std::unique_ptr<BatchingRule>>(static_cast<size_t>(kNumOpcodes));
};

// The rule table, built once on first use; nullptr for an opcode without an
// entry (the completeness test keeps that from happening).
const BatchingRule* FindBatchingRule(Opcode opcode);

// Family registration functions, one per file.
void RegisterSourceBatchingRules(BatchingRuleRegistry& registry);         // source_rules.cc
void RegisterElementwiseBatchingRules(BatchingRuleRegistry& registry);    // elementwise_rules.cc
void RegisterShapeBatchingRules(BatchingRuleRegistry& registry);          // shape_rules.cc
void RegisterDynamicSliceBatchingRules(BatchingRuleRegistry& registry);   // dynamic_slice_rules.cc
void RegisterGatherScatterBatchingRules(BatchingRuleRegistry& registry);  // gather_scatter_rules.cc
void RegisterReductionBatchingRules(BatchingRuleRegistry& registry);      // reduction_rules.cc
void RegisterDotBatchingRule(BatchingRuleRegistry& registry);             // dot_rule.cc
void RegisterConvolutionBatchingRule(BatchingRuleRegistry& registry);     // convolution_rule.cc
void RegisterSortBatchingRule(BatchingRuleRegistry& registry);            // sort_rule.cc
void RegisterTokenBatchingRules(BatchingRuleRegistry& registry);          // token_rules.cc
void RegisterControlFlowBatchingRules(BatchingRuleRegistry& registry);    // control_flow_rules.cc
void RegisterWhileBatchingRule(BatchingRuleRegistry& registry);           // while_rule.cc
void RegisterConditionalBatchingRule(BatchingRuleRegistry& registry);     // conditional_rule.cc
void RegisterCustomCallBatchingRule(BatchingRuleRegistry& registry);      // custom_call_rule.cc
void RegisterCollectiveBatchingRules(BatchingRuleRegistry& registry);     // collective_rules.cc
void RegisterShardMapBatchingRules(BatchingRuleRegistry& registry);       // shard_map_rules.cc
void RegisterMapReduceBatchingRules(BatchingRuleRegistry& registry);      // mapreduce_rules.cc

}  // namespace sharc::hlo

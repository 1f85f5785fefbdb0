// Transpose rules: for each op that can appear in a linear program, how a
// cotangent of its result flows back to its linear operands (reverse mode).
// Registered once per opcode, like the JVP rules; ops that are never linear
// register that fact, so a nonlinear program fails with a message naming the
// op instead of being silently mis-transposed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autodiff/builder.h"
#include "hlo/batching/batch_tree.h"

namespace sharc::autodiff {

// Which array leaves of a value depend linearly on the linear inputs ("B" in
// the tree means linear). Values of linear programs can mix both, e.g. the
// carry of a loop whose counter is not linear.
using LinearTree = hlo::BatchTree;

// The cotangent accumulated for one value. Tuple-shaped cotangents can be
// built leaf by leaf (a get-tuple-element sends back one leaf), so missing
// leaves stay symbolic zeros instead of materialized arrays.
struct Cotangent {
  Instruction* value = nullptr;       // the whole cotangent, if known as one value
  std::vector<Cotangent> elements;    // else per tuple element (empty = zero)
  bool zero() const;
  static Cotangent Of(Instruction* v) { return Cotangent{v, {}}; }
};

// A called computation transposed for given parameter linearities:
//   params: every parameter that is not entirely linear (its full value; its
//           linear leaves are ignored), in order, then the root's cotangent;
//   result: tuple of the cotangents of every parameter with a linear leaf.
struct TransposedCallee {
  Computation* computation = nullptr;
  std::vector<int64_t> passed_params;
  std::vector<int64_t> cotangent_params;
};

class TransposeContext {
 public:
  virtual ~TransposeContext() = default;
  // Where the transposed program is built.
  virtual Emitter& emitter() = 0;
  virtual const LinearTree& Linearity(const Instruction* value) const = 0;
  bool IsLinear(const Instruction* value) const { return Linearity(value).Any(); }
  // The value of a non-linear operand (or the non-linear leaves of a mixed
  // one) in the transposed program.
  virtual absl::StatusOr<Instruction*> Primal(const Instruction* value) = 0;
  // The cotangent as one value of `shape` (zeros where it is zero).
  virtual Instruction* Materialize(const Cotangent& ct, const Shape& shape) = 0;
  virtual absl::StatusOr<TransposedCallee> TransposeCallee(
      const Computation& callee, const std::vector<LinearTree>& params) = 0;
};

// Returns one cotangent per operand (zero for operands that are not linear).
using TransposeFn = std::function<absl::StatusOr<std::vector<Cotangent>>(
    const Instruction& inst, const Cotangent& ct, TransposeContext& ctx)>;

struct TransposeRule {
  TransposeFn transpose;
  // Non-empty for ops that are never linear, or whose transpose sharc lacks:
  // why, as shown to the user.
  std::string unsupported_reason;
};

class TransposeRuleRegistry {
 public:
  void Register(Opcode opcode, TransposeFn fn);
  void RegisterNotLinear(Opcode opcode);
  void RegisterUnsupported(Opcode opcode, std::string reason);
  const TransposeRule* Find(Opcode opcode) const;

 private:
  std::vector<std::unique_ptr<TransposeRule>> rules_ =
      std::vector<std::unique_ptr<TransposeRule>>(static_cast<size_t>(hlo::kNumOpcodes));
};

const TransposeRule* FindTransposeRule(Opcode opcode);

// Helpers for rules: `n` zero cotangents, and one for operand `i`.
std::vector<Cotangent> NoCotangents(const Instruction& inst);

void RegisterElementwiseTransposeRules(TransposeRuleRegistry& registry);  // elementwise.cc
void RegisterShapeTransposeRules(TransposeRuleRegistry& registry);        // shape.cc
void RegisterIndexingTransposeRules(TransposeRuleRegistry& registry);     // indexing.cc
void RegisterReductionTransposeRules(TransposeRuleRegistry& registry);    // reduction.cc
void RegisterConvolutionTransposeRule(TransposeRuleRegistry& registry);   // convolution.cc
void RegisterControlFlowTransposeRules(TransposeRuleRegistry& registry);  // control_flow.cc
void RegisterWhileTransposeRule(TransposeRuleRegistry& registry);         // while.cc
void RegisterMapReduceTransposeRules(TransposeRuleRegistry& registry);    // mapreduce.cc
void RegisterShardMapTransposeRules(TransposeRuleRegistry& registry);     // shard_map.cc
void RegisterLinalgTransposeRules(TransposeRuleRegistry& registry);       // linalg.cc
void RegisterComplexTransposeRules(TransposeRuleRegistry& registry);      // complex.cc
void RegisterSelectAndScatterTransposeRule(TransposeRuleRegistry& registry);  // select_and_scatter.cc

}  // namespace sharc::autodiff

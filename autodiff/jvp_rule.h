// JVP rules: the forward-mode derivative of each op, registered once per
// opcode (DESIGN.md, "Ops are defined once"). The linearizer (linearizer.h)
// walks a computation and asks each instruction's rule for its tangent; ops
// without a derivative say why, and that reason is the user's error message.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autodiff/builder.h"
#include "hlo/ir/opcode.h"

namespace sharc::autodiff {

// A called computation split by linearization (JAX's partial evaluation):
//   primal(x...)                 -> (y..., r_0, ..., r_{k-1})
//   linear(t..., r_0, ..., r_{k-1}) -> dy
// `primal` returns y's elements flattened one level (y itself when y is an
// array) followed by the residuals; `linear` takes one tangent per
// differentiable parameter of the original (same shapes), then the residuals.
struct LinearizedCallee {
  Computation* primal = nullptr;
  Computation* linear = nullptr;
  int64_t num_outputs = 1;  // leading elements of primal's result that are y
  int64_t num_residuals = 0;
  bool tuple_output = false;  // y is a tuple (its elements are flattened)
};

struct JvpValue {
  Instruction* primal = nullptr;
  Instruction* tangent = nullptr;  // nullptr = zero
};

// What a rule may use besides its operands.
class JvpContext {
 public:
  virtual ~JvpContext() = default;
  // True when linearizing (primal and tangent go to separate computations),
  // false in forward mode.
  virtual bool split() const = 0;
  // Where primal values are computed.
  virtual Emitter& primal() = 0;
  // Where tangent values are computed: the same computation in forward mode
  // (Jvp), a separate linear computation when linearizing.
  virtual Emitter& tangent() = 0;
  // `value` (computed in primal()) as the tangent computation sees it: the
  // value itself in forward mode, a residual parameter when linearizing.
  virtual Instruction* Residual(Instruction* value) = 0;
  // Splits a called computation; `differentiable[i]` says whether parameter i
  // carries a tangent (the linear part has no tangent parameter for it
  // otherwise).
  virtual absl::StatusOr<LinearizedCallee> LinearizeCallee(const Computation& callee,
                                                          std::vector<bool> differentiable) = 0;
  // Differentiates `callee` in place (its instructions are emitted into
  // primal() and tangent() directly, as for an inlined call).
  virtual absl::StatusOr<JvpValue> Inline(const Computation& callee,
                                          const std::vector<Instruction*>& primals,
                                          const std::vector<Instruction*>& tangents) = 0;
  // A copy of `inst` over `operands`, in primal(), keeping its name.
  virtual Instruction* EmitPrimal(const Instruction& inst, std::vector<Instruction*> operands) = 0;
};

struct JvpArgs {
  std::vector<Instruction*> primals;   // operands, in primal()
  std::vector<Instruction*> tangents;  // their tangents in tangent(); nullptr = zero
  Instruction* result = nullptr;       // the primal result (for tangent rules)
  // The tangent of operand i, with zeros made explicit.
  Instruction* TangentOrZeros(JvpContext& ctx, int64_t i) const;
};

// Emits the tangent of `inst` (whose primal result is args.result); nullptr
// for a zero tangent.
using TangentFn = std::function<absl::StatusOr<Instruction*>(const Instruction& inst,
                                                             const JvpArgs& args,
                                                             JvpContext& ctx)>;
// Emits both the primal and the tangent (control flow, whose primal must
// change shape to carry residuals).
using PrimalAndTangentFn = std::function<absl::StatusOr<JvpValue>(
    const Instruction& inst, const JvpArgs& args, JvpContext& ctx)>;

struct JvpRule {
  TangentFn tangent;
  PrimalAndTangentFn primal_and_tangent;
  // Integer, boolean and piecewise-constant ops: the tangent is zero.
  bool zero_derivative = false;
  // Non-empty for ops autodiff cannot differentiate: why, as shown to users.
  std::string unsupported_reason;
};

class JvpRuleRegistry {
 public:
  void Register(Opcode opcode, TangentFn fn);
  void RegisterPrimalAndTangent(Opcode opcode, PrimalAndTangentFn fn);
  void RegisterZeroDerivative(Opcode opcode);
  void RegisterUnsupported(Opcode opcode, std::string reason);
  const JvpRule* Find(Opcode opcode) const;

 private:
  std::vector<std::unique_ptr<JvpRule>> rules_ =
      std::vector<std::unique_ptr<JvpRule>>(static_cast<size_t>(hlo::kNumOpcodes));
};

// The rule table, built once; nullptr for an opcode without an entry (the
// completeness test keeps that from happening).
const JvpRule* FindJvpRule(Opcode opcode);

// Family registration functions, one per file in jvp_rules/.
void RegisterElementwiseJvpRules(JvpRuleRegistry& registry);   // elementwise.cc
void RegisterShapeJvpRules(JvpRuleRegistry& registry);         // shape.cc
void RegisterReductionJvpRules(JvpRuleRegistry& registry);     // reduction.cc
void RegisterControlFlowJvpRules(JvpRuleRegistry& registry);   // control_flow.cc
void RegisterWhileJvpRule(JvpRuleRegistry& registry);          // while.cc
void RegisterMapReduceJvpRules(JvpRuleRegistry& registry);     // mapreduce.cc
void RegisterSourceJvpRules(JvpRuleRegistry& registry);        // control_flow.cc
void RegisterShardMapJvpRules(JvpRuleRegistry& registry);      // shard_map.cc
void RegisterSortAndTokenJvpRules(JvpRuleRegistry& registry);  // sort.cc
void RegisterLinalgJvpRules(JvpRuleRegistry& registry);        // linalg.cc

}  // namespace sharc::autodiff

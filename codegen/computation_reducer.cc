// Reducers that are whole computations (argmax's value+index pairs,
// composites such as add-then-clamp) as Halide expressions. The reducer's
// instructions are lowered with the ordinary lowering table on 0-d Funcs
// whose parameters are placeholders; the Funcs are then inlined into one
// expression per result and the placeholders replaced by the actual
// accumulator and element, so reducers get exactly the kernels' semantics
// (NaN rules, f16 rounding after every op) without a second implementation.
// A `call` inside a reducer applies its callee the same way to the caller's
// values (a callee returning a tuple is read through get-tuple-element).
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/kernel_graph.h"
#include "codegen/lowering.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"

namespace sharc::codegen {
namespace {

// The instructions whose values the reducer returns.
std::vector<const hlo::Instruction*> ReducerResults(const hlo::Computation& reducer) {
  const hlo::Instruction* root = reducer.root();
  if (root->opcode() != hlo::Opcode::kTuple) return {root};
  return std::vector<const hlo::Instruction*>(root->operands().begin(), root->operands().end());
}

}  // namespace

absl::Status CheckReducerLowerable(const hlo::Instruction& inst, const hlo::Computation& reducer) {
  if (reducer.root() == nullptr) return LoweringError(inst, "reducer '" + reducer.name() + "' has no root");
  for (const hlo::Instruction* r : ReducerResults(reducer)) {
    if (!r->shape().is_array() || !r->shape().is_scalar()) {
      return LoweringError(inst, "reducer '" + reducer.name() + "' returns a non-scalar " +
                                     r->shape().ToString());
    }
  }
  for (const hlo::Instruction* i : reducer.instructions()) {
    const hlo::Opcode op = i->opcode();
    if (op == hlo::Opcode::kParameter || (i == reducer.root() && op == hlo::Opcode::kTuple)) continue;
    if (op == hlo::Opcode::kCall) {
      const hlo::Computation* callee = i->attr_computation("to_apply");
      if (callee == nullptr) return LoweringError(inst, "call " + i->name() + " has no callee");
      // Scalars in (tuples only come out, read by get-tuple-element).
      for (const hlo::Instruction* p : callee->parameters()) {
        if (!p->shape().is_array() || !p->shape().is_scalar()) {
          return LoweringError(inst, absl::StrCat("reducer '", reducer.name(), "' calls '",
                                                  callee->name(), "' with a non-scalar ",
                                                  p->shape().ToString()));
        }
      }
      if (absl::Status s = CheckReducerLowerable(inst, *callee); !s.ok()) return s;
      continue;
    }
    if (op == hlo::Opcode::kGetTupleElement && i->operand(0)->opcode() == hlo::Opcode::kCall) {
      continue;
    }
    const bool elementwise = hlo::HasOpDef(op) && hlo::GetOpDef(op).traits.elementwise;
    if (!elementwise && op != hlo::Opcode::kConstant) {
      return LoweringError(inst, absl::StrCat("reducer '", reducer.name(), "' uses ",
                                              hlo::OpcodeName(op), " (", i->name(),
                                              "); only elementwise ops, constants and calls "
                                              "of such computations lower"));
    }
    if (absl::Status s = CheckLowerable(*i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

// ApplyReducer once CheckReducerLowerable has passed for `reducer` (and so
// for everything it calls).
absl::StatusOr<std::vector<Halide::Expr>> ApplyChecked(const hlo::Instruction& inst,
                                                       const hlo::Computation& reducer,
                                                       const std::vector<Halide::Expr>& args) {
  if (static_cast<size_t>(reducer.num_parameters()) != args.size()) {
    return LoweringError(inst, absl::StrCat("reducer '", reducer.name(), "' takes ",
                                            reducer.num_parameters(), " values, given ", args.size()));
  }
  absl::flat_hash_map<const hlo::Instruction*, LoweredValue> values;
  std::vector<Halide::Func> funcs;  // in definition order
  std::vector<std::pair<std::string, Halide::Expr>> placeholders;
  for (int64_t k = 0; k < reducer.num_parameters(); ++k) {
    const hlo::Instruction* p = reducer.parameter(k);
    // A Param may appear in a Func's definition where a free variable may not.
    Halide::Param<void> placeholder(StorageType(p->shape().type()), HalideName("arg", inst));
    Halide::Func f(HalideName("param", inst));
    f() = Halide::Expr(placeholder);
    values[p] = LoweredValue{f, p->shape()};
    funcs.push_back(f);
    placeholders.emplace_back(placeholder.name(), args[static_cast<size_t>(k)]);
  }
  // The results of a call whose callee returns a tuple, per element.
  absl::flat_hash_map<const hlo::Instruction*, std::vector<Halide::Expr>> call_results;
  auto bind = [&](const hlo::Instruction* i, const Halide::Expr& e) {
    Halide::Func f(HalideName("call", inst));
    f() = e;
    values[i] = LoweredValue{f, i->shape()};
    funcs.push_back(f);
  };
  for (const hlo::Instruction* i : reducer.instructions()) {
    if (values.contains(i) || (i == reducer.root() && i->opcode() == hlo::Opcode::kTuple)) continue;
    if (i->opcode() == hlo::Opcode::kCall) {
      std::vector<Halide::Expr> call_args;
      for (const hlo::Instruction* op : i->operands()) call_args.push_back(values.at(op).func());
      absl::StatusOr<std::vector<Halide::Expr>> r =
          ApplyChecked(inst, *i->attr_computation("to_apply"), call_args);
      if (!r.ok()) return r.status();
      if (i->shape().is_tuple()) {
        call_results[i] = *std::move(r);
      } else {
        bind(i, r->at(0));
      }
      continue;
    }
    if (i->opcode() == hlo::Opcode::kGetTupleElement && call_results.contains(i->operand(0))) {
      const std::vector<Halide::Expr>& elements = call_results.at(i->operand(0));
      const int64_t index = i->attr_int("index", -1);
      if (index < 0 || index >= static_cast<int64_t>(elements.size())) {
        return LoweringError(inst, absl::StrCat(i->name(), " reads element ", index, " of ",
                                                elements.size()));
      }
      bind(i, elements[static_cast<size_t>(index)]);
      continue;
    }
    std::vector<LoweredValue> operands;
    for (const hlo::Instruction* op : i->operands()) operands.push_back(values.at(op));
    ASSIGN_OR_RETURN(Lowered l, FindLoweringRule(i->opcode())->lower(*i, operands));
    if (l.kind != LoweringKind::kInline) {
      return LoweringError(inst, "reducer '" + reducer.name() + "' is not elementwise");
    }
    values[i] = LoweredValue{l.func, i->shape()};
    funcs.push_back(l.func);
  }
  // inline_function reads each Func's (default, inline) schedule, which
  // Halide only lets one inspect once its loop levels are locked.
  for (Halide::Func& f : funcs) f.function().lock_loop_levels();
  std::vector<Halide::Expr> results;
  for (const hlo::Instruction* r : ReducerResults(reducer)) {
    Halide::Expr e = values.at(r).func.value();
    // Later Funcs call earlier ones, so inlining from the last exposes all.
    for (size_t j = funcs.size(); j-- > 0;) e = Halide::Internal::inline_function(e, funcs[j].function());
    for (const auto& [name, value] : placeholders) e = Halide::Internal::substitute(name, value, e);
    results.push_back(e);
  }
  return results;
}

}  // namespace

absl::StatusOr<std::vector<Halide::Expr>> ApplyReducer(const hlo::Instruction& inst,
                                                       const hlo::Computation& reducer,
                                                       const std::vector<Halide::Expr>& args) {
  if (absl::Status s = CheckReducerLowerable(inst, reducer); !s.ok()) return s;
  return ApplyChecked(inst, reducer, args);
}

}  // namespace sharc::codegen

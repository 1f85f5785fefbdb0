// One walk over a computation for every forward analysis of values: device
// variance (hlo/analysis/device_variance_analysis.h), linearity
// (autodiff/transposer.h), and whatever comes next. The analysis supplies a
// lattice (bottom, join, tuples, a transfer function for ops that compute
// their result); the walk follows each op's declared data-flow edges
// (hlo/ops/data_flow.h) through tuples, calls, loops and branches, solving
// loop carries as fixed points. An op with edges needs no code in any
// analysis; an op without them is one call of the lattice's Transfer.
//
// Before: an analysis hand-writes tuple/get-tuple-element/call/while/
// conditional cases. After:
//   MyLattice lattice;
//   DataFlowWalk<MyValue> walk(lattice);
//   RETURN_IF_ERROR(walk.Run(computation, {param0, param1}));
//   walk.At(computation.root());
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {

// The analysis's value domain: V must be copyable and equality-comparable.
template <typename V>
class DataFlowLattice {
 public:
  virtual ~DataFlowLattice() = default;
  // The least value of `shape` (nothing known to flow yet).
  virtual V Bottom(const Shape& shape) const = 0;
  virtual V Join(const V& a, const V& b) const = 0;
  // A tuple of `elements`, and element k of `tuple` (of tuple shape `shape`).
  virtual V Tuple(std::vector<V> elements) const = 0;
  virtual V Element(const V& tuple, const Shape& shape, int64_t k) const = 0;
  // `value` flowing only as often, or only where, `control` decides.
  virtual V Control(const V& value, const V& control) const { return value; }
  // `value` landing on a value of `shape` (lattices that track leaves fit
  // a value whose structure differs).
  virtual V Fit(V value, const Shape& shape) const { return value; }
  // The result of an op without data-flow edges, from its operands'.
  virtual absl::StatusOr<V> Transfer(const Instruction& inst,
                                     absl::Span<const V* const> operands) = 0;
};

template <typename V>
class DataFlowWalk {
 public:
  explicit DataFlowWalk(DataFlowLattice<V>& lattice) : lattice_(lattice) {}

  // Walks `computation` with parameter i holding params[i] (bottom for
  // missing ones), and every computation it reaches through edges.
  absl::Status Run(const Computation& computation, const std::vector<V>& params) {
    return Walk(computation, params, 0);
  }

  bool Has(const Instruction* value) const { return values_.contains(value); }
  // The value of an instruction walked (the last walk's, for a body walked
  // once per round of a fixed point: the fixed point).
  const V& At(const Instruction* value) const { return values_.at(value); }
  const absl::flat_hash_map<const Instruction*, V>& values() const { return values_; }
  absl::flat_hash_map<const Instruction*, V>& mutable_values() { return values_; }

 private:
  static constexpr int kMaxDepth = 64;
  static constexpr int kMaxRounds = 1000;

  absl::Status Walk(const Computation& computation, const std::vector<V>& params, int depth) {
    if (depth > kMaxDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", computation.name(), "' calls itself too deeply"));
    }
    for (const Instruction* param : computation.parameters()) {
      if (param == nullptr) continue;
      const size_t i = static_cast<size_t>(param->parameter_number());
      values_.insert_or_assign(param, i < params.size()
                                          ? lattice_.Fit(params[i], param->shape())
                                          : lattice_.Bottom(param->shape()));
    }
    for (const Instruction* inst : computation.instructions()) {
      if (inst->opcode() == Opcode::kParameter) continue;
      const DataFlowFn& flow = GetOpDef(inst->opcode()).data_flow;
      if (flow) {
        RETURN_IF_ERROR(Follow(*inst, flow(*inst), depth));
        continue;
      }
      for (const Instruction* op : inst->operands()) Value(op);  // no rehash below
      std::vector<const V*> operands;
      for (const Instruction* op : inst->operands()) operands.push_back(&values_.at(op));
      ASSIGN_OR_RETURN(V value, lattice_.Transfer(*inst, operands));
      values_.insert_or_assign(inst, std::move(value));
    }
    return absl::OkStatus();
  }

  const V& Value(const Instruction* inst) {
    auto it = values_.find(inst);
    if (it == values_.end()) it = values_.emplace(inst, lattice_.Bottom(inst->shape())).first;
    return it->second;
  }

  // The value at a source point (nullopt: a callee's root not walked yet).
  std::optional<V> Source(const Instruction& inst, const FlowPoint& point,
                          const absl::flat_hash_map<const Computation*, bool>& walked) {
    const Instruction* whole = nullptr;
    if (point.kind == FlowPoint::Kind::kOperand) {
      whole = inst.operand(point.number);
    } else if (point.kind == FlowPoint::Kind::kRoot && walked.contains(point.computation)) {
      whole = point.computation->root();
    }
    if (whole == nullptr) return std::nullopt;
    V value = Value(whole);
    const Shape* shape = &whole->shape();
    for (int64_t k : point.leaf) {
      if (!shape->is_tuple() || k >= shape->tuple_size()) break;
      value = lattice_.Element(value, *shape, k);
      shape = &shape->tuple_shape(k);
    }
    return value;
  }

  static bool SameTarget(const FlowPoint& a, const FlowPoint& b) {
    return a.kind == b.kind && a.number == b.number && a.computation == b.computation;
  }
  static bool HasPrefix(const std::vector<int64_t>& leaf, const std::vector<int64_t>& prefix) {
    return leaf.size() > prefix.size() && std::equal(prefix.begin(), prefix.end(), leaf.begin());
  }

  // The join of every edge into `target` at `leaf` (of shape `shape`),
  // element edges assembled into tuples.
  V Gather(const Instruction& inst, const DataFlow& flow, const FlowPoint& target,
           const std::vector<int64_t>& leaf, const Shape& shape,
           const absl::flat_hash_map<const Computation*, bool>& walked) {
    V value = lattice_.Bottom(shape);
    bool deeper = false;
    for (const FlowEdge& edge : flow.edges) {
      if (!SameTarget(edge.target, target)) continue;
      if (edge.target.leaf == leaf) {
        std::optional<V> source = Source(inst, edge.source, walked);
        if (source) value = lattice_.Join(value, lattice_.Fit(std::move(*source), shape));
      }
      deeper = deeper || HasPrefix(edge.target.leaf, leaf);
    }
    if (deeper && shape.is_tuple()) {
      std::vector<V> elements;
      for (int64_t k = 0; k < shape.tuple_size(); ++k) {
        std::vector<int64_t> element = leaf;
        element.push_back(k);
        elements.push_back(Gather(inst, flow, target, element, shape.tuple_shape(k), walked));
      }
      value = lattice_.Join(value, lattice_.Tuple(std::move(elements)));
    }
    return value;
  }

  V Target(const Instruction& inst, const DataFlow& flow, const FlowPoint& target,
           const Shape& shape, const absl::flat_hash_map<const Computation*, bool>& walked) {
    V value = Gather(inst, flow, target, {}, shape, walked);
    for (const FlowEdge& control : flow.controls) {
      if (!SameTarget(control.target, target)) continue;
      std::optional<V> decides = Source(inst, control.source, walked);
      if (decides) value = lattice_.Control(value, *decides);
    }
    return lattice_.Fit(std::move(value), shape);
  }

  // Walks the callees an instruction's edges reach until their parameters
  // stop changing (a loop's carry), then gathers its result.
  absl::Status Follow(const Instruction& inst, const DataFlow& flow, int depth) {
    std::vector<const Computation*> callees;
    auto reach = [&](const FlowPoint& point) {
      const Computation* c = point.computation;
      if (c != nullptr && std::find(callees.begin(), callees.end(), c) == callees.end()) {
        callees.push_back(c);
      }
    };
    for (const FlowEdge& edge : flow.edges) {
      reach(edge.target);
      reach(edge.source);
    }
    for (const FlowEdge& control : flow.controls) reach(control.source);
    absl::flat_hash_map<const Computation*, bool> walked;
    absl::flat_hash_map<const Computation*, std::vector<V>> params;
    for (int round = 0; !callees.empty(); ++round) {
      if (round == kMaxRounds) {
        return OpError(inst, "data flow through its computations does not reach a fixed point");
      }
      bool changed = false;
      for (const Computation* c : callees) {
        std::vector<V> next;
        for (int64_t i = 0; i < c->num_parameters(); ++i) {
          const Instruction* param = c->parameter(i);
          next.push_back(param == nullptr ? lattice_.Bottom(Shape())
                                          : Target(inst, flow, FlowPoint::Parameter(c, i),
                                                   param->shape(), walked));
        }
        changed = changed || !params.contains(c) || params[c] != next;
        params[c] = std::move(next);
      }
      if (!changed) break;
      for (const Computation* c : callees) {
        RETURN_IF_ERROR(Walk(*c, params[c], depth + 1));
        walked[c] = true;
      }
    }
    values_.insert_or_assign(&inst,
                             Target(inst, flow, FlowPoint::Result(), inst.shape(), walked));
    return absl::OkStatus();
  }

  DataFlowLattice<V>& lattice_;
  absl::flat_hash_map<const Instruction*, V> values_;
};

}  // namespace sharc::hlo

// Data-flow edges: how an op passes values on unchanged, per tuple leaf,
// between its operands, the parameters and roots of the computations it
// calls, and its result (Shardy's ShardableDataFlowOpInterface). An op with
// edges (tuple, get-tuple-element, call, while, conditional, opt-barrier,
// the async pairs) is walked through by every analysis written on
// hlo/analysis/data_flow_walk.h; every other op computes its result, and
// the analysis's lattice says how (its transfer function).
//
// For example, `%w = while(%init), condition=%c, body=%b` declares
//   operand 0 -> parameter 0 of %b and of %c
//   root of %b -> parameter 0 of %b and of %c, and -> the result
//   operand 0 -> the result (a loop that runs no step returns it)
//   control: root of %c -> parameter 0 of %b and %c, and the result (the
//   predicate decides how often data flows)
// so an analysis of the carry is a fixed point over the body, and a value
// that decides the trip count reaches every carry.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace sharc::hlo {

class Computation;
class Instruction;

// One end of an edge, seen from the instruction that declares it.
struct FlowPoint {
  enum class Kind { kOperand, kResult, kParameter, kRoot };
  Kind kind = Kind::kResult;
  int64_t number = 0;                         // kOperand, kParameter: which one
  const Computation* computation = nullptr;   // kParameter, kRoot: the callee
  std::vector<int64_t> leaf;                  // path into a tuple; empty: the whole value

  static FlowPoint Operand(int64_t i, std::vector<int64_t> leaf = {}) {
    return {Kind::kOperand, i, nullptr, std::move(leaf)};
  }
  static FlowPoint Result(std::vector<int64_t> leaf = {}) {
    return {Kind::kResult, 0, nullptr, std::move(leaf)};
  }
  static FlowPoint Parameter(const Computation* callee, int64_t i,
                             std::vector<int64_t> leaf = {}) {
    return {Kind::kParameter, i, callee, std::move(leaf)};
  }
  static FlowPoint Root(const Computation* callee, std::vector<int64_t> leaf = {}) {
    return {Kind::kRoot, 0, callee, std::move(leaf)};
  }
};

struct FlowEdge {
  FlowPoint source;  // kOperand or kRoot
  FlowPoint target;  // kParameter or kResult
};

struct DataFlow {
  std::vector<FlowEdge> edges;
  // Values that decide whether, or how often, data reaches a target (a
  // loop's predicate for its carry and result, a conditional's index for
  // its result): the target depends on them as well, whatever their shape.
  std::vector<FlowEdge> controls;
};

// An op's edges for one instruction (they name its called computations).
// Empty for ops that compute their result.
using DataFlowFn = std::function<DataFlow(const Instruction&)>;

}  // namespace sharc::hlo

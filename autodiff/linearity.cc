#include "autodiff/linearity.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/analysis/data_flow_walk.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {

namespace {

// Linearity as a lattice of hlo/analysis/data_flow_walk.h: a value is linear
// where any operand is; tuples, calls and loops pass it on leaf by leaf
// through their data-flow edges (a loop's carry: the fixed point over its
// body), so an op that only moves values needs nothing here.
class LinearityLattice : public hlo::DataFlowLattice<LinearTree> {
 public:
  LinearTree Bottom(const Shape& shape) const override { return LinearTree::Uniform(shape, false); }
  LinearTree Join(const LinearTree& a, const LinearTree& b) const override {
    if (a.is_tuple() != b.is_tuple() || a.elements().size() != b.elements().size()) {
      // Structures differ only for values of different shapes (a control
      // value): linear wherever either is.
      return a.is_tuple() ? LinearTree::Tuple(Spread(a, b.Any())) : LinearTree::Leaf(a.Any() || b.Any());
    }
    return a.Union(b);
  }
  LinearTree Tuple(std::vector<LinearTree> elements) const override {
    return LinearTree::Tuple(std::move(elements));
  }
  LinearTree Element(const LinearTree& tuple, const Shape& shape, int64_t k) const override {
    return tuple.is_tuple() ? tuple.element(k) : LinearTree::Uniform(shape.tuple_shape(k), tuple.batched());
  }
  // A predicate or branch index only decides which values flow; it does
  // not make them linear.
  LinearTree Control(const LinearTree& value, const LinearTree&) const override { return value; }
  absl::StatusOr<LinearTree> Transfer(const Instruction& inst,
                                      absl::Span<const LinearTree* const> operands) override {
    bool any = false;
    for (const LinearTree* op : operands) any = any || op->Any();
    return LinearTree::Uniform(inst.shape(), any);
  }

 private:
  static std::vector<LinearTree> Spread(const LinearTree& tuple, bool linear) {
    std::vector<LinearTree> out;
    for (const LinearTree& e : tuple.elements()) out.push_back(e.Union(Uniform(e, linear)));
    return out;
  }
  static LinearTree Uniform(const LinearTree& like, bool linear) {
    if (!like.is_tuple()) return LinearTree::Leaf(linear);
    std::vector<LinearTree> out;
    for (const LinearTree& e : like.elements()) out.push_back(Uniform(e, linear));
    return LinearTree::Tuple(std::move(out));
  }
};

}  // namespace

absl::StatusOr<LinearTree> AnalyzeLinearity(
    const Computation& computation, const std::vector<LinearTree>& params,
    absl::flat_hash_map<const Instruction*, LinearTree>* trees) {
  if (computation.root() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation '", computation.name(), "' has no root"));
  }
  LinearityLattice lattice;
  hlo::DataFlowWalk<LinearTree> walk(lattice);
  RETURN_IF_ERROR(walk.Run(computation, params));
  LinearTree root = walk.At(computation.root());
  if (trees != nullptr) {
    for (auto& [inst, tree] : walk.mutable_values()) (*trees)[inst] = std::move(tree);
  }
  return root;
}

}  // namespace sharc::autodiff

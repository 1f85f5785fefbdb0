// The one walk behind every forward analysis of values
// (hlo/analysis/data_flow_walk.h), with a toy lattice: which entry
// parameters each tuple element of a value is computed from. It must follow
// tuples leaf by leaf, solve loop carries as fixed points, join branches,
// add a control's sources where the edges say, and walk callees it reaches
// only through their roots.
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/analysis/data_flow_walk.h"
#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using Sources = std::set<int64_t>;
using Value = std::vector<Sources>;  // per top-level tuple element

class SourcesLattice : public DataFlowLattice<Value> {
 public:
  Value Bottom(const Shape& shape) const override { return Value(Count(shape)); }
  Value Join(const Value& a, const Value& b) const override {
    Value out = a.size() >= b.size() ? a : b;
    const Value& other = a.size() >= b.size() ? b : a;
    for (size_t k = 0; k < other.size(); ++k) out[k].insert(other[k].begin(), other[k].end());
    return out;
  }
  Value Tuple(std::vector<Value> elements) const override {
    Value out;
    for (const Value& e : elements) out.push_back(All(e));
    return out;
  }
  Value Element(const Value& tuple, const Shape& shape, int64_t k) const override {
    return {tuple.at(static_cast<size_t>(k))};
  }
  Value Control(const Value& value, const Value& control) const override {
    Value out = value;
    for (Sources& leaf : out) {
      Sources c = All(control);
      leaf.insert(c.begin(), c.end());
    }
    return out;
  }
  Value Fit(Value value, const Shape& shape) const override {
    if (value.size() == Count(shape)) return value;
    return Value(Count(shape), All(value));
  }
  absl::StatusOr<Value> Transfer(const Instruction& inst,
                                 absl::Span<const Value* const> operands) override {
    ++transfers;
    Sources all;
    for (const Value* op : operands) {
      Sources s = All(*op);
      all.insert(s.begin(), s.end());
    }
    return Fit({all}, inst.shape());
  }
  int transfers = 0;

 private:
  static size_t Count(const Shape& shape) {
    return shape.is_tuple() ? static_cast<size_t>(shape.tuple_size()) : 1;
  }
  static Sources All(const Value& v) {
    Sources out;
    for (const Sources& s : v) out.insert(s.begin(), s.end());
    return out;
  }
};

// Runs the walk over the entry computation, parameter i having source {i}.
struct Walked {
  std::unique_ptr<Module> module;
  SourcesLattice lattice;
  std::unique_ptr<DataFlowWalk<Value>> walk;
  const Value& At(const std::string& computation, const std::string& name) const {
    return walk->At(module->FindComputation(computation)->FindInstruction(name));
  }
};

std::unique_ptr<Walked> Walk(const std::string& text) {
  auto w = std::make_unique<Walked>();
  absl::StatusOr<std::unique_ptr<Module>> module = ParseAndVerifyModule(text);
  EXPECT_OK(module.status());
  if (!module.ok()) return nullptr;
  w->module = std::move(*module);
  w->walk = std::make_unique<DataFlowWalk<Value>>(w->lattice);
  std::vector<Value> params;
  for (int64_t i = 0; i < w->module->entry()->num_parameters(); ++i) params.push_back({{i}});
  EXPECT_OK(w->walk->Run(*w->module->entry(), params));
  return w;
}

// Each step shifts the carry one element along: (i, a, b, c) -> (i+1, a, a,
// b), so c reaches a's sources only after two rounds, and every element
// depends on the predicate's (i's).
TEST(DataFlowWalkTest, LoopCarriesAreAFixedPointPerElement) {
  std::unique_ptr<Walked> w = Walk(R"(HloModule m
%cond {
  %c = (s32[], f32[], f32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%step {
  %c = (s32[], f32[], f32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %a = f32[] get-tuple-element(%c), index=1
  %b = f32[] get-tuple-element(%c), index=2
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[], f32[], f32[]) tuple(%j, %a, %a, %b)
}
ENTRY %e {
  %p0 = s32[] parameter(0)
  %p1 = f32[] parameter(1)
  %p2 = f32[] parameter(2)
  %p3 = f32[] parameter(3)
  %t = (s32[], f32[], f32[], f32[]) tuple(%p0, %p1, %p2, %p3)
  %l = (s32[], f32[], f32[], f32[]) while(%t), condition=%cond, body=%step
  ROOT %g = s32[] get-tuple-element(%l), index=0
})");
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(w->At("e", "l"), ElementsAre(Sources{0}, Sources{0, 1}, Sources{0, 1, 2},
                                           Sources{0, 1, 2, 3}));
  // The counter stays apart from the data it counts.
  EXPECT_THAT(w->At("e", "g"), ElementsAre(Sources{0}));
  // The body was last walked with the fixed point.
  EXPECT_THAT(w->At("step", "c"), ElementsAre(Sources{0}, Sources{0, 1}, Sources{0, 1, 2},
                                              Sources{0, 1, 2, 3}));
  EXPECT_THAT(w->At("cond", "lt"), ElementsAre(Sources{0}));
}

// Branches join into the result with the index's sources; a branch's
// parameter has only its argument's (the index decides the result, not
// what the branch reads).
TEST(DataFlowWalkTest, ConditionalBranchesJoinWithTheirIndex) {
  std::unique_ptr<Walked> w = Walk(R"(HloModule m
%keep {
  ROOT %p = f32[] parameter(0)
}
%zero {
  %p = f32[] parameter(0)
  ROOT %z = f32[] constant(0)
}
ENTRY %e {
  %c = pred[] parameter(0)
  %x = f32[] parameter(1)
  %y = f32[] parameter(2)
  ROOT %r = f32[] conditional(%c, %x, %y), true_computation=%keep, false_computation=%zero
})");
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(w->At("e", "r"), ElementsAre(Sources{0, 1}));
  EXPECT_THAT(w->At("keep", "p"), ElementsAre(Sources{1}));
  EXPECT_THAT(w->At("zero", "p"), ElementsAre(Sources{2}));
}

// Tuples through a call, an opt-barrier and nested tuples keep each
// element's sources; a callee with no operands is still walked (its root
// flows to the result), and only ops without edges reach Transfer.
TEST(DataFlowWalkTest, TuplesCallsAndBarriersKeepElementsApart) {
  std::unique_ptr<Walked> w = Walk(R"(HloModule m
%swap {
  %q = (f32[], f32[]) parameter(0)
  %a = f32[] get-tuple-element(%q), index=0
  %b = f32[] get-tuple-element(%q), index=1
  ROOT %t = (f32[], f32[]) tuple(%b, %a)
}
%seven {
  ROOT %k = f32[] constant(7)
}
ENTRY %e {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  %t = (f32[], f32[]) tuple(%x, %y)
  %s = (f32[], f32[]) call(%t), to_apply=%swap
  %o = (f32[], f32[]) opt-barrier(%s)
  %k = f32[] call(), to_apply=%seven
  %n = ((f32[], f32[]), f32[]) tuple(%o, %k)
  %inner = (f32[], f32[]) get-tuple-element(%n), index=0
  ROOT %second = f32[] get-tuple-element(%inner), index=1
})");
  ASSERT_NE(w, nullptr);
  EXPECT_THAT(w->At("e", "o"), ElementsAre(Sources{1}, Sources{0}));
  EXPECT_THAT(w->At("e", "k"), ElementsAre(Sources{}));
  EXPECT_THAT(w->At("seven", "k"), ElementsAre(Sources{}));
  // Nested tuples: this lattice keeps one level, so the inner pair is joined.
  EXPECT_THAT(w->At("e", "second"), ElementsAre(Sources{0, 1}));
  // The constant is the only op without edges.
  EXPECT_EQ(w->lattice.transfers, 1);
}

}  // namespace
}  // namespace sharc::hlo

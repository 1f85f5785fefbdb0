// An op that only moves values declares its data-flow edges in its op
// definition (hlo/ops/data_flow.h), and device variance and linearity then
// follow it with no code of their own: opt-barrier and the async pairs are
// named nowhere in either, yet both keep their tuple elements apart
// (before the edges, both analyses treated them as ops computing a result
// from all their operands, so an invariant element came out varying and a
// non-linear one linear).
#include <fstream>
#include <sstream>
#include <string>

#include "autodiff/linearity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/text/parser.h"
#include "spmd/variance.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The body of a shard_map: %a varies over x, %b does not; both pass through
// an opt-barrier and an async pair before the outputs read them apart.
constexpr char kBarrierAndAsync[] = R"(HloModule m, mesh={x=2}
%neg {
  %v = f32[2] parameter(0)
  ROOT %n = f32[2] negate(%v)
}
%body {
  %a = f32[2] parameter(0)
  %b = f32[2] parameter(1)
  %t = (f32[2], f32[2]) tuple(%a, %b)
  %o = (f32[2], f32[2]) opt-barrier(%t)
  %oa = f32[2] get-tuple-element(%o), index=0
  %ob = f32[2] get-tuple-element(%o), index=1
  %as = ((f32[2]), f32[2], s32[]) async-start(%ob), calls=%neg
  %ad = f32[2] async-done(%as), calls=%neg
  ROOT %r = (f32[2], f32[2]) tuple(%oa, %ad)
}
ENTRY %e {
  %x = f32[4] parameter(0)
  %y = f32[2] parameter(1)
  ROOT %s = (f32[4], f32[2]) shard_map(%x, %y), in_specs={P(x), P()}, out_specs={P(x), P()}, to_apply=%body
})";

TEST(DataFlowOpsTest, VarianceFollowsBarrierAndAsyncEdges) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       hlo::ParseAndVerifyModule(kBarrierAndAsync));
  // out_specs[1] = P() holds only if %ad stayed invariant through both.
  ASSERT_OK(spmd::InferDeviceVariance(*module));
  const std::string typed = module->ToString();
  EXPECT_THAT(typed, HasSubstr("%o = (f32[2], f32[2]){V:x} opt-barrier(%t)"));
  EXPECT_THAT(typed, HasSubstr("%oa = f32[2]{V:x} get-tuple-element(%o), index=0"));
  EXPECT_THAT(typed, HasSubstr("%ob = f32[2] get-tuple-element(%o), index=1"));
  EXPECT_THAT(typed, HasSubstr("%ad = f32[2] async-done(%as)"));
  EXPECT_THAT(typed, HasSubstr("%n = f32[2] negate(%v)"));
  EXPECT_THAT(typed, Not(HasSubstr("pbroadcast")));
}

TEST(DataFlowOpsTest, LinearityFollowsBarrierAndAsyncEdges) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       hlo::ParseAndVerifyModule(kBarrierAndAsync));
  const hlo::Computation* body = module->FindComputation("body");
  absl::flat_hash_map<const Instruction*, LinearTree> trees;
  // %a linear, %b a residual.
  ASSERT_OK_AND_ASSIGN(LinearTree root,
                       AnalyzeLinearity(*body, {LinearTree::Leaf(true), LinearTree::Leaf(false)},
                                        &trees));
  EXPECT_EQ(root.ToString(), LinearTree::Tuple({LinearTree::Leaf(true),
                                                LinearTree::Leaf(false)}).ToString());
  EXPECT_TRUE(trees.at(body->FindInstruction("oa")).Any());
  EXPECT_FALSE(trees.at(body->FindInstruction("ob")).Any());
  EXPECT_FALSE(trees.at(body->FindInstruction("ad")).Any());
  // The async-start holds the linear nothing: ((%ob), neg(%ob), context).
  EXPECT_FALSE(trees.at(body->FindInstruction("as")).Any());
}

// The analyses name no op that only moves values: those ops' behaviour is
// their edges. (An op added with edges needs no edit in these files.)
TEST(DataFlowOpsTest, AnalysesNameNoDataFlowOp) {
  for (const char* file : {"spmd/variance.cc", "autodiff/shard_map_variance.cc",
                           "autodiff/linearity.cc", "hlo/analysis/device_variance_analysis.cc",
                           "hlo/analysis/data_flow_walk.h"}) {
    std::ifstream in(std::string(SHARC_SOURCE_DIR) + "/" + file);
    ASSERT_TRUE(in.good()) << file;
    std::stringstream text;
    text << in.rdbuf();
    for (const char* op : {"kWhile", "kConditional", "kCall", "kGetTupleElement",
                           "kOptimizationBarrier", "kAsyncStart", "kAsyncDone", "kCopyStart"}) {
      EXPECT_THAT(text.str(), Not(HasSubstr(std::string("Opcode::") + op))) << file;
    }
  }
}

}  // namespace
}  // namespace sharc::autodiff

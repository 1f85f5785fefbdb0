// Device-variance inference (spmd/variance.h) on printed programs: JAX's
// shard_map VMA tests that need no transposes (reference note, c.7).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/variance.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A shard_map over `mesh` of a body with parameters `params` (local shapes)
// and instructions `body`; entry parameters have `globals`.
std::string Program(const std::string& mesh, const std::string& params,
                    const std::string& body, const std::string& globals,
                    const std::string& in_specs, const std::string& out_specs,
                    const std::string& out_shape, const std::string& extra = "") {
  return "HloModule m, mesh={" + mesh + "}\n%body {\n" + params + body + "}\nENTRY %e {\n" +
         globals + "  ROOT %s = " + out_shape + " shard_map(" +
         (globals.find("%y") != std::string::npos ? "%x, %y" : "%x") + "), in_specs={" +
         in_specs + "}, out_specs={" + out_specs + "}" + extra + ", to_apply=%body\n}\n";
}

absl::StatusOr<std::string> Typed(const std::string& text, VarianceOptions options = {}) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
  if (!module.ok()) return module.status();
  absl::Status st = InferDeviceVariance(**module, options);
  if (!st.ok()) return st;
  st = hlo::VerifyModule(**module);
  if (!st.ok()) return st;
  std::string printed = (*module)->ToString();
  // The typed program is itself valid text that prints the same.
  absl::StatusOr<std::unique_ptr<hlo::Module>> again = hlo::ParseAndVerifyModule(printed);
  if (!again.ok()) return again.status();
  if ((*again)->ToString() != printed) return absl::InternalError("round trip differs");
  return printed;
}

TEST(VarianceTest, PsumOfAVaryingInputIsInvariant) {
  std::string text = Program("x=4", "  %a = f32[2] parameter(0)\n",
                             "  ROOT %p = f32[2] psum(%a), axes={x}\n",
                             "  %x = f32[8] parameter(0)\n", "P(x)", "P()", "f32[2]");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("%a = f32[2]{V:x} parameter(0)"));
  EXPECT_THAT(typed, HasSubstr("ROOT %p = f32[2] psum(%a), axes={x}"));
  EXPECT_THAT(typed, Not(HasSubstr("pbroadcast")));  // fan-in: nothing to insert
}

TEST(VarianceTest, BinaryOpOfMixedVarianceGetsAPbroadcast) {
  // test_rewrite_binops: x*y with in (P(), P(x)): the first body op is a
  // pbroadcast over x of the invariant operand.
  std::string text = Program("x=4",
                             "  %a = f32[2] parameter(0)\n  %b = f32[2] parameter(1)\n",
                             "  ROOT %m = f32[2] multiply(%a, %b)\n",
                             "  %x = f32[2] parameter(0)\n  %y = f32[8] parameter(1)\n",
                             "P(), P(x)", "P(x)", "f32[8]");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("%a.pbroadcast.0 = f32[2]{V:x} pbroadcast(%a), axes={x}\n"
                               "  ROOT %m = f32[2]{V:x} multiply(%a.pbroadcast.0, %b)"));
}

TEST(VarianceTest, FanOutOutSpecInsertsAPbroadcastAtTheOutput) {
  // test_fanout_specs_transpose_to_psum's forward program: identity with
  // in P(), out P(x) is cast up to varying over x.
  std::string text = Program("x=4", "  ROOT %a = f32[2] parameter(0)\n", "",
                             "  %x = f32[2] parameter(0)\n", "P()", "P(x)", "f32[8]");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("ROOT %a.pbroadcast.0 = f32[2]{V:x} pbroadcast(%a), axes={x}"));
}

TEST(VarianceTest, RepeatedPsumRebroadcastsTheInvariantOperand) {
  std::string text = Program("i=4", "  %a = f32[1] parameter(0)\n",
                             "  %p = f32[1] psum(%a), axes={i}\n"
                             "  ROOT %q = f32[1] psum(%p), axes={i}\n",
                             "  %x = f32[4] parameter(0)\n", "P(i)", "P()", "f32[1]");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("%p.pbroadcast.0 = f32[1]{V:i} pbroadcast(%p), axes={i}"));
  EXPECT_THAT(typed, HasSubstr("ROOT %q = f32[1] psum(%p.pbroadcast.0), axes={i}"));
  // The cast changes no value: psum(psum(arange(4))) is still [24].
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> m, hlo::ParseAndVerifyModule(typed));
  ASSERT_OK_AND_ASSIGN(hlo::Literal r,
                       hlo::Evaluate(*m, {hlo::Literal::Vector<float>({0, 1, 2, 3})}));
  EXPECT_EQ(r.data<float>()[0], 24.0f);
}

TEST(VarianceTest, PsumRemovesOnlyItsAxes) {
  // test_get_check_rep on a 2x2 mesh.
  for (const auto& [axes, expected] :
       std::vector<std::pair<std::string, std::string>>{
           {"y", "{V:x}"}, {"x", "{V:y}"}, {"x,y", " psum"}}) {
    std::string out_spec = axes == "y" ? "P(x)" : axes == "x" ? "P(None, y)" : "P()";
    std::string out_shape = axes == "y" ? "f32[2,2]" : axes == "x" ? "f32[1,4]" : "f32[1,2]";
    std::string text = Program("x=2, y=2", "  %a = f32[1,2] parameter(0)\n",
                               "  ROOT %p = f32[1,2] psum(%a), axes={" + axes + "}\n",
                               "  %x = f32[2,4] parameter(0)\n", "P(x, y)", out_spec, out_shape);
    ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
    EXPECT_THAT(typed, HasSubstr("ROOT %p = f32[1,2]" + expected)) << axes;
  }
}

TEST(VarianceTest, CollectivesOnInvariantOperandsArePbroadcastFirst) {
  // test_pmax_vma_in_types / test_all_gather_with_vma_in_types.
  std::string text = Program("x=4", "  %a = f32[2] parameter(0)\n",
                             "  %m = f32[2] pmax(%a), axes={x}\n"
                             "  ROOT %g = f32[8] all_gather(%m), axes={x}, dimension=0, "
                             "tiled=true\n",
                             "  %x = f32[2] parameter(0)\n", "P()", "P(x)", "f32[32]");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("%a.pbroadcast.0 = f32[2]{V:x} pbroadcast(%a), axes={x}"));
  EXPECT_THAT(typed, HasSubstr("%m = f32[2] pmax(%a.pbroadcast.0)"));
  EXPECT_THAT(typed, HasSubstr("%m.pbroadcast.1 = f32[2]{V:x} pbroadcast(%m), axes={x}"));
  EXPECT_THAT(typed, HasSubstr("ROOT %g = f32[8]{V:x} all_gather(%m.pbroadcast.1)"));
}

TEST(VarianceTest, AxisIndexAndPscatterVary) {
  std::string text = Program("i=2, j=2", "  %a = f32[4] parameter(0)\n",
                             "  %k = s32[] axis_index(), axes={j}\n"
                             "  ROOT %s = f32[2] pscatter(%a), axes={i}, dimension=0, tiled=true\n",
                             "  %x = f32[4] parameter(0)\n", "P()", "P(i)", "f32[4]");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("%k = s32[]{V:j} axis_index()"));
  EXPECT_THAT(typed, HasSubstr("ROOT %s = f32[2]{V:i} pscatter(%a)"));
}

TEST(VarianceTest, AllGatherInvariantIsInvariant) {
  // test_all_gather_invariant_basic: the output may be P().
  std::string text = Program("x=4", "  %a = f32[2] parameter(0)\n",
                             "  ROOT %g = f32[8] all_gather_invariant(%a), axes={x}, "
                             "dimension=0, tiled=true\n",
                             "  %x = f32[8] parameter(0)\n", "P(x)", "P()", "f32[8]");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("ROOT %g = f32[8] all_gather_invariant(%a)"));
}

TEST(VarianceTest, OutSpecsErrorNamesTheAxesAndTheFix) {
  // test_vma_out_specs_error_check on a 2x2x2 mesh.
  std::string text = Program("x=2, y=2, z=2", "  %a = f32[1,1,1] parameter(0)\n",
                             "  %c = f32[1,1,1] constant({ { {2} } })\n"
                             "  ROOT %m = f32[1,1,1] multiply(%a, %c)\n",
                             "  %x = f32[2,2,2] parameter(0)\n", "P(x, y, z)", "P(x)",
                             "f32[2,1,1]");
  absl::StatusOr<std::string> typed = Typed(text);
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(typed.status().message(),
              HasSubstr("shard_map %s: out_specs[0] is P(x) which implies that the output value "
                        "is only varying across mesh axes {x} and not {y,z}, but it was inferred "
                        "to be possibly varying over {x,y,z}; psum (or all_gather_invariant) it "
                        "over {y,z}"));
  EXPECT_THAT(typed.status().message(), HasSubstr("check_variance=false"));
}

TEST(VarianceTest, ReplicationCheckPassesAfterAPsum) {
  // test_replication_checker_jit: 2*x with in P(x,y), out P(None,y) fails;
  // psum over x fixes it.
  std::string base = "  %c = f32[1,1] constant({ {2} })\n  %m = f32[1,1] multiply(%a, %c)\n";
  std::string bad = Program("x=2, y=2", "  %a = f32[1,1] parameter(0)\n",
                            base + "  ROOT %r = f32[1,1] copy(%m)\n",
                            "  %x = f32[2,2] parameter(0)\n", "P(x, y)", "P(None, y)",
                            "f32[1,2]");
  EXPECT_THAT(Typed(bad).status().message(), HasSubstr("not {x}"));
  std::string good = Program("x=2, y=2", "  %a = f32[1,1] parameter(0)\n",
                             base + "  ROOT %r = f32[1,1] psum(%m), axes={x}\n",
                             "  %x = f32[2,2] parameter(0)\n", "P(x, y)", "P(None, y)",
                             "f32[1,2]");
  EXPECT_OK(Typed(good).status());
}

TEST(VarianceTest, WithInsertionOffMismatchesAreErrorsNamingOpAndAxes) {
  std::string text = Program("x=4",
                             "  %a = f32[2] parameter(0)\n  %b = f32[2] parameter(1)\n",
                             "  ROOT %m = f32[2] multiply(%a, %b)\n",
                             "  %x = f32[2] parameter(0)\n  %y = f32[8] parameter(1)\n",
                             "P(), P(x)", "P(x)", "f32[8]");
  VarianceOptions off;
  off.insert_pbroadcast = false;
  absl::StatusOr<std::string> typed = Typed(text, off);
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(typed.status().message(),
              HasSubstr("multiply combines operands of different device variance: operand 0 (%a) "
                        "varies over {} but must vary over {x}; apply pbroadcast(%a), axes={x}"));
}

TEST(VarianceTest, PbroadcastOverAnAlreadyVaryingAxisIsAnError) {
  std::string text = Program("x=4", "  %a = f32[2] parameter(0)\n",
                             "  ROOT %b = f32[2] pbroadcast(%a), axes={x}\n",
                             "  %x = f32[8] parameter(0)\n", "P(x)", "P(x)", "f32[8]");
  EXPECT_THAT(Typed(text).status().message(),
              HasSubstr("pbroadcast casts to varying over {x} but its operand already varies"));
}

TEST(VarianceTest, CheckVarianceFalseLeavesTheBodyUntyped) {
  std::string text = Program("x=4", "  %a = f32[2] parameter(0)\n",
                             "  ROOT %c = f32[2] copy(%a)\n", "  %x = f32[8] parameter(0)\n",
                             "P(x)", "P()", "f32[2]", ", check_variance=false");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("%a = f32[2] parameter(0)"));
  EXPECT_THAT(typed, Not(HasSubstr("{V:")));
}

TEST(VarianceTest, TupleLeavesKeepTheirOwnVariance) {
  // An invariant psum and a varying product leave in one tuple: neither is
  // lifted, and each is checked against its own out_spec.
  std::string text = Program("x=4",
                             "  %a = f32[2] parameter(0)\n  %b = f32[2] parameter(1)\n",
                             "  %m = f32[2] multiply(%a, %b)\n"
                             "  %p = f32[2] psum(%m), axes={x}\n"
                             "  %t = (f32[2], f32[2]) tuple(%p, %m)\n"
                             "  %g = f32[2] get-tuple-element(%t), index=0\n"
                             "  ROOT %r = (f32[2], f32[2]) tuple(%g, %m)\n",
                             "  %x = f32[8] parameter(0)\n  %y = f32[2] parameter(1)\n",
                             "P(x), P()", "P(), P(x)", "(f32[2], f32[8])");
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("%t = (f32[2], f32[2]){V:x} tuple(%p, %m)"));
  EXPECT_THAT(typed, HasSubstr("%g = f32[2] get-tuple-element(%t), index=0"));
  EXPECT_THAT(typed, Not(HasSubstr("%p.pbroadcast")));
}

TEST(VarianceTest, LoopsThatReadAxisIndexVary) {
  std::string text = R"(HloModule m, mesh={x=2}
%cond {
  %c = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%step {
  %c = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %v = f32[2] get-tuple-element(%c), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %k = s32[] axis_index(), axes={x}
  %f = f32[] convert(%k)
  %b = f32[2] broadcast(%f), dimensions={}
  %w = f32[2] add(%v, %b)
  ROOT %t = (s32[], f32[2]) tuple(%j, %w)
}
%body {
  %a = f32[2] parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[2]) tuple(%z, %a)
  %l = (s32[], f32[2]) while(%t), condition=%cond, body=%step
  ROOT %r = f32[2] get-tuple-element(%l), index=1
}
ENTRY %e {
  %x = f32[2] parameter(0)
  ROOT %s = f32[2] shard_map(%x), in_specs={P()}, out_specs={P()}, to_apply=%body
})";
  absl::StatusOr<std::string> typed = Typed(text);
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(typed.status().message(), HasSubstr("possibly varying over {x}"));
}


// The loop of LoopsThatReadAxisIndexVary with an out_spec that allows the
// variance: the initial carry gets the pbroadcast JAX makes users write.
std::string LoopProgram(const std::string& out_spec, const std::string& out_shape) {
  return R"(HloModule m, mesh={x=2}
%cond {
  %c = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%step {
  %c = (s32[], f32[2]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %v = f32[2] get-tuple-element(%c), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %k = s32[] axis_index(), axes={x}
  %f = f32[] convert(%k)
  %b = f32[2] broadcast(%f), dimensions={}
  %w = f32[2] add(%v, %b)
  ROOT %t = (s32[], f32[2]) tuple(%j, %w)
}
%body {
  %a = f32[2] parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[2]) tuple(%z, %a)
  %l = (s32[], f32[2]) while(%t), condition=%cond, body=%step
  %n = s32[] get-tuple-element(%l), index=0
  %r = f32[2] get-tuple-element(%l), index=1
  ROOT %o = (s32[], f32[2]) tuple(%n, %r)
}
ENTRY %e {
  %x = f32[2] parameter(0)
  ROOT %s = (s32[], )" + out_shape + R"() shard_map(%x), in_specs={P()}, out_specs={P(), )" +
         out_spec + R"(}, to_apply=%body
})";
}

TEST(VarianceTest, LoopCarryJoinsGetAPbroadcastOnTheInitialCarry) {
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(LoopProgram("P(x)", "f32[4]")));
  EXPECT_THAT(typed, HasSubstr("%a.pbroadcast.0 = f32[2]{V:x} pbroadcast(%a), axes={x}\n"
                               "  %t = (s32[], f32[2]){V:x} tuple(%z, %a.pbroadcast.0)"));
  EXPECT_THAT(typed, HasSubstr("%l = (s32[], f32[2]){V:x} while(%t)"));
  // The counter stays invariant through the loop, leaf by leaf.
  EXPECT_THAT(typed, HasSubstr("%n = s32[] get-tuple-element(%l), index=0"));
  EXPECT_THAT(typed, HasSubstr("%r = f32[2]{V:x} get-tuple-element(%l), index=1"));
  EXPECT_THAT(typed, HasSubstr("%i = s32[] get-tuple-element(%c), index=0"));
  EXPECT_THAT(typed, HasSubstr("%k = s32[]{V:x} axis_index(), axes={x}"));
  // The out_spec P() of the counter is satisfied; P() for the sum is not.
  EXPECT_THAT(Typed(LoopProgram("P()", "f32[2]")).status().message(),
              HasSubstr("out_specs[1] is P() which implies"));
}

TEST(VarianceTest, LoopCarryJoinWithInsertionOffSuggestsTheCast) {
  VarianceOptions off;
  off.insert_pbroadcast = false;
  EXPECT_THAT(Typed(LoopProgram("P(x)", "f32[4]"), off).status().message(),
              HasSubstr("tuple starts a loop carry less varying than the loop makes it: operand "
                        "1 (%a) varies over {} but must vary over {x}; apply pbroadcast(%a), "
                        "axes={x}"));
}

TEST(VarianceTest, ConditionalBranchesJoin) {
  std::string text = R"(HloModule m, mesh={x=2}
%same {
  ROOT %p = f32[2] parameter(0)
}
%shifted {
  %p = f32[2] parameter(0)
  %k = s32[] axis_index(), axes={x}
  %f = f32[] convert(%k)
  %b = f32[2] broadcast(%f), dimensions={}
  ROOT %r = f32[2] add(%p, %b)
}
%body {
  %a = f32[2] parameter(0)
  %c = pred[] constant(true)
  ROOT %r = f32[2] conditional(%c, %a, %a), true_computation=%same, false_computation=%shifted
}
ENTRY %e {
  %x = f32[2] parameter(0)
  ROOT %s = f32[4] shard_map(%x), in_specs={P()}, out_specs={P(x)}, to_apply=%body
})";
  ASSERT_OK_AND_ASSIGN(std::string typed, Typed(text));
  EXPECT_THAT(typed, HasSubstr("ROOT %p.pbroadcast.1 = f32[2]{V:x} pbroadcast(%p), axes={x}"));
  EXPECT_THAT(typed, HasSubstr("ROOT %r = f32[2]{V:x} conditional(%c, %a, %a)"));
}

}  // namespace
}  // namespace sharc::spmd

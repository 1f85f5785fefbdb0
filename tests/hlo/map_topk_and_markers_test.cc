// map, topk (and XLA's TopK custom call), get-/set-dimension-size, domain
// and collective-broadcast: results by hand, the verifier's errors, and what
// LowerForCompute makes of them.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ops/topk_order.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/runnable_types.h"
#include "hlo/verifier/verifier.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <typename T>
std::vector<T> Values(const Literal& l) {
  return std::vector<T>(l.data<T>().begin(), l.data<T>().end());
}

std::string VerifyError(const std::string& text) {
  absl::Status status = ParseAndVerifyModule(text).status();
  return status.ok() ? "verified" : std::string(status.message());
}

TEST(MapTest, AppliesTheComputationAtEachIndex) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
%fma (a: f32[], b: s32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = s32[] parameter(1)
  %bf = f32[] convert(%b)
  %ab = f32[] multiply(%a, %bf)
  ROOT %r = f32[] add(%ab, %a)
}
ENTRY %e {
  %x = f32[2,2] parameter(0)
  %y = s32[2,2] parameter(1)
  ROOT %m = f32[2,2] map(%x, %y), dimensions={0,1}, to_apply=%fma
})"));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       Evaluate(*module, {Literal::FromValues<float>({2, 2}, {1, 2, 3, 4}),
                                          Literal::FromValues<int32_t>({2, 2}, {0, 1, 2, -1})}));
  // a * b + a.
  EXPECT_THAT(Values<float>(out), ElementsAre(1, 4, 9, 0));
  EXPECT_THAT(VerifyError(R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[2,2] parameter(0)
  ROOT %m = f32[2,2] map(%x, %x), dimensions={1}, to_apply=%add
})"),
              HasSubstr("must list every dim of the operands in order"));
}

// LowerForCompute turns a map of elementwise ops into those ops on the
// arrays (same values) and keeps a map whose function calls another.
TEST(MapTest, ElementwiseFunctionsAreInlinedOthersStay) {
  const std::string text = R"(HloModule m
%fma (a: f32[], b: s32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = s32[] parameter(1)
  %bf = f32[] convert(%b)
  %two = f32[] constant(2)
  %ab = f32[] multiply(%a, %bf)
  ROOT %r = f32[] add(%ab, %two)
}
%calls (a: f32[], b: s32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %c = f32[] call(%a, %b), to_apply=%fma
}
ENTRY %e {
  %x = f32[2,2] parameter(0)
  %y = s32[2,2] parameter(1)
  %m = f32[2,2] map(%x, %y), dimensions={0,1}, to_apply=%fma
  %n = f32[2,2] map(%x, %y), dimensions={0,1}, to_apply=%calls
  ROOT %t = (f32[2,2], f32[2,2]) tuple(%m, %n)
})";
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(text));
  const std::vector<Literal> args = {Literal::FromValues<float>({2, 2}, {1, 2, 3, 4}),
                                     Literal::FromValues<int32_t>({2, 2}, {0, 1, 2, -1})};
  ASSERT_OK_AND_ASSIGN(Literal before, Evaluate(*module, args));
  ASSERT_OK(LowerForCompute(*module));
  ASSERT_OK(VerifyModule(*module));
  const Instruction* m = module->entry()->root()->operand(0);
  EXPECT_EQ(m->opcode(), Opcode::kAdd);
  EXPECT_EQ(m->name(), "m");
  EXPECT_EQ(module->entry()->root()->operand(1)->opcode(), Opcode::kMap);
  ASSERT_OK_AND_ASSIGN(Literal after, Evaluate(*module, args));
  EXPECT_EQ(before, after);
  EXPECT_THAT(Values<float>(after.element(0)), ElementsAre(2, 4, 8, -2));
}

TEST(TopKTest, LargestOrSmallestPerRowTiesByIndexNanFirst) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %x = f32[2,4] parameter(0)
  %big = (f32[2,2], s32[2,2]) topk(%x), k=2, largest=true
  %small = (f32[2,3], s32[2,3]) topk(%x), k=3, largest=false
  ROOT %t = ((f32[2,2], s32[2,2]), (f32[2,3], s32[2,3])) tuple(%big, %small)
})"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {Literal::FromValues<float>(
                                                          {2, 4}, {3, 7, 7, 1, 2, nan, -5, 2})}));
  std::vector<float> big = Values<float>(out.element(0).element(0));
  EXPECT_EQ(big[0], 7);
  EXPECT_EQ(big[1], 7);
  EXPECT_TRUE(std::isnan(big[2]));
  EXPECT_EQ(big[3], 2);
  EXPECT_THAT(Values<int32_t>(out.element(0).element(1)), ElementsAre(1, 2, 1, 0));
  EXPECT_THAT(Values<float>(out.element(1).element(0)), ElementsAre(1, 3, 7, -5, 2, 2));
  EXPECT_THAT(Values<int32_t>(out.element(1).element(1)), ElementsAre(3, 0, 1, 2, 0, 3));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %x = f32[2,4] parameter(0)
  ROOT %t = (f32[2,5], s32[2,5]) topk(%x), k=5
})"),
              HasSubstr("k=5 must be in [0, 4]"));
}

// topk's order as a sort comparator (hlo/ops/topk_order.h): a stable sort
// of (x, iota) by it, sliced to k, is topk, NaN, infinities, -0 and ties
// included.
TEST(TopKTest, TheOrderComparatorSortsAsTopKSelects) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  for (const bool largest : {true, false}) {
    ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(absl::StrCat(R"(HloModule m
%placeholder (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %lt = pred[] compare(%a, %b), direction=LT
}
ENTRY %e {
  %x = f32[9] parameter(0)
  %top = (f32[9], s32[9]) topk(%x), k=9, largest=)", largest ? "true" : "false", R"(
  %iota = s32[9] iota(), iota_dimension=0
  %sorted = (f32[9], s32[9]) sort(%x, %iota), dimensions={0}, is_stable=true, to_apply=%placeholder
  ROOT %t = ((f32[9], s32[9]), (f32[9], s32[9])) tuple(%top, %sorted)
})")));
    Instruction* sort = module->entry()->FindInstruction("sorted");
    ASSERT_NE(sort, nullptr);
    sort->set_attr("to_apply", TopKOrderComparator(*module, PrimitiveType::kF32, largest));
    ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {Literal::Vector<float>(
                                                           {2, nan, -0.0f, inf, 0, 2, -inf, nan, -3})}));
    // Indices say which element went where: equal ones (the NaNs, -0 and
    // 0, the 2s) must keep their order in both.
    EXPECT_THAT(Values<int32_t>(out.element(1).element(1)),
                ElementsAreArray(Values<int32_t>(out.element(0).element(1))))
        << (largest ? "largest" : "smallest");
  }
}

TEST(TopKTest, TheTopKCustomCallBecomesTopK) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
%gt (a: s32[], b: s32[]) -> pred[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GT
}
ENTRY %e {
  %x = s32[5] parameter(0)
  ROOT %t = (s32[2], s32[2]) custom-call(%x), custom_call_target="TopK", called_computations={%gt}
})"));
  ASSERT_OK(LowerForCompute(*module));
  EXPECT_THAT(PrintModule(*module), HasSubstr("%t = (s32[2], s32[2]) topk(%x), k=2, largest=true"));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       Evaluate(*module, {Literal::Vector<int32_t>({4, -1, 9, 4, 0})}));
  EXPECT_THAT(Values<int32_t>(out.element(0)), ElementsAre(9, 4));
  EXPECT_THAT(Values<int32_t>(out.element(1)), ElementsAre(2, 0));
}

TEST(DimensionSizeTest, StaticSizesRunDynamicOnesAreRefused) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %x = f32[4,3] parameter(0)
  ROOT %n = s32[] get-dimension-size(%x), dimensions={1}
})"));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {Literal(Shape(PrimitiveType::kF32, {4, 3}))}));
  EXPECT_THAT(Values<int32_t>(out), ElementsAre(3));

  ASSERT_OK_AND_ASSIGN(auto dynamic, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %x = f32[4,3] parameter(0)
  %n = s32[] parameter(1)
  ROOT %d = f32[4,<=3] set-dimension-size(%x, %n), dimensions={1}
})"));
  EXPECT_THAT(PrintModule(*dynamic), HasSubstr("f32[4,<=3] set-dimension-size(%x, %n)"));
  absl::Status refused = CheckRunnableTypes(*dynamic);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("sharc keeps dynamic dims at their bound"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %x = f32[4,3] parameter(0)
  ROOT %n = s32[] get-dimension-size(%x), dimensions={2}
})"),
              HasSubstr("needs dimensions={d} naming one dim of the operand (rank 2)"));
}

TEST(DomainTest, IsItsOperandAndKeepsItsAttributeAsWritten) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %x = f32[2] parameter(0)
  %d = f32[2] domain(%x), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  ROOT %n = f32[2] negate(%d)
})"));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr(
      R"(domain(%x), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}})"));
  ASSERT_OK_AND_ASSIGN(auto again, ParseAndVerifyModule(printed));
  EXPECT_EQ(PrintModule(*again), printed);
  ASSERT_OK(LowerForCompute(*module));
  EXPECT_THAT(PrintModule(*module), HasSubstr("negate(%x)"));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {Literal::Vector<float>({1, -2})}));
  EXPECT_THAT(Values<float>(out), ElementsAre(-1, 2));
}

TEST(CollectiveBroadcastTest, EachGroupReceivesItsFirstMembersValue) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[2] parameter(0)
  ROOT %b = f32[2] collective-broadcast(%x), channel_id=1, replica_groups={{1,0},{2,3}}
})"));
  std::vector<std::vector<Literal>> args;
  for (int d = 0; d < 4; ++d) {
    args.push_back({Literal::Vector<float>({10.0f * d, 10.0f * d + 1})});
  }
  SpmdOptions options;
  options.num_devices = 4;
  ASSERT_OK_AND_ASSIGN(std::vector<Literal> out, EvaluateSpmd(*module, args, options));
  EXPECT_THAT(Values<float>(out[0]), ElementsAre(10, 11));
  EXPECT_THAT(Values<float>(out[1]), ElementsAre(10, 11));
  EXPECT_THAT(Values<float>(out[2]), ElementsAre(20, 21));
  EXPECT_THAT(Values<float>(out[3]), ElementsAre(20, 21));
}

}  // namespace
}  // namespace sharc::hlo

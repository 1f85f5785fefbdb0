// Tokens, fusion and the ops sharc reads but cannot run (send, recv):
// parsing, the verifier's errors, the rewrite before computing
// (LowerForCompute), and the refusal that names the op that stops a run.
// Infeed and outfeed run: host_queues_test.cc.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/runnable_types.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string VerifyError(const std::string& text) {
  absl::Status status = ParseAndVerifyModule(text).status();
  return status.ok() ? "verified" : std::string(status.message());
}

constexpr char kTransfers[] = R"(HloModule m
ENTRY %e {
  %p = f32[4] parameter(0)
  %t = token[] after-all()
  %s = (f32[4], u32[], token[]) send(%p, %t), channel_id=3, is_host_transfer=true
  %sd = token[] send-done(%s), channel_id=3
  %r = (f32[4], u32[], token[]) recv(%sd), channel_id=4
  %rd = (f32[4], token[]) recv-done(%r), channel_id=4
  ROOT %v = f32[4] get-tuple-element(%rd), index=0
})";

TEST(TokenOpsTest, TransfersParseVerifyAndPrintBack) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kTransfers));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("%t = token[] after-all()"));
  EXPECT_THAT(printed, HasSubstr("send(%p, %t), channel_id=3, is_host_transfer=true"));
  ASSERT_OK_AND_ASSIGN(auto again, ParseAndVerifyModule(printed));
  EXPECT_EQ(PrintModule(*again), printed);
}

TEST(TokenOpsTest, ShapesAreInferredWhereTheOperandsImplyThem) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %p = f32[4] parameter(0)
  %t = after-all()
  %s = send(%p, %t), channel_id=1
  ROOT %sd = send-done(%s), channel_id=1
})"));
  EXPECT_EQ(module->entry()->FindInstruction("s")->shape().ToString(), "(f32[4], u32[], token[])");
  EXPECT_EQ(module->entry()->root()->shape().ToString(), "token[]");
}

TEST(TokenOpsTest, VerifierNamesTheProblem) {
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %p = f32[4] parameter(0)
  ROOT %d = f32[4] add-dependency(%p, %p)
})"),
              HasSubstr("operand 1 must be token[], got f32[4]"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %p = f32[4] parameter(0)
  ROOT %d = token[] send-done(%p)
})"),
              HasSubstr("operand must be a transfer's (T, u32[], token[]), got f32[4]"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %t = token[] after-all()
  ROOT %r = (f32[4], token[]) recv(%t), channel_id=1
})"),
              HasSubstr("must return (T, u32[], token[])"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %p = f32[4] parameter(0)
  %t = token[] after-all()
  ROOT %o = token[] outfeed(%p, %t), outfeed_shape=f32[5]{0}
})"),
              HasSubstr("outfeed_shape=f32[5] differs from the data's shape f32[4]"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  ROOT %t = token[2] after-all()
})"),
              HasSubstr("a token has no dimensions"));
  EXPECT_THAT(VerifyError(R"(HloModule m
%f (x: f32[4]) -> f32[4] {
  ROOT %x = f32[4] parameter(0)
}
ENTRY %e {
  %p = f32[4] parameter(0)
  ROOT %c = f32[4] fusion(%p), kind=kFast, calls=%f
})"),
              HasSubstr("kind=kFast; expected kLoop, kInput, kOutput or kCustom"));
}

TEST(TokenOpsTest, RunIsStoppedByTheTransferNotByItsToken) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kTransfers));
  ASSERT_OK(LowerForCompute(*module));
  absl::Status status = CheckRunnableTypes(*module);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("'%s' (send) stops the run: it transfers data to or from another "
                        "program"));
  // Propagating and partitioning move no values: tokens are fine there.
  EXPECT_OK(CheckPartitionableTypes(*module));
}

constexpr char kOrderingOnly[] = R"(HloModule m
%fused (x: f32[3], y: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %y = f32[3] parameter(1)
  ROOT %m = f32[3] multiply(%x, %y)
}
ENTRY %e {
  %p = f32[3] parameter(0)
  %t0 = token[] after-all()
  %t = token[] after-all(%t0)
  %d = f32[3] add-dependency(%p, %t)
  %b = (f32[3], f32[3]) opt-barrier((f32[3], f32[3]) tuple(%d, %p))
  %g = f32[3] get-tuple-element(%b), index=0
  ROOT %f = f32[3] fusion(%g, %p), kind=kLoop, calls=%fused
})";

TEST(TokenOpsTest, LowerForComputeLeavesOnlyWhatComputes) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kOrderingOnly));
  ASSERT_OK(LowerForCompute(*module));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("%f = f32[3] call(%g, %p), to_apply=%fused"));
  EXPECT_THAT(printed, HasSubstr("tuple(%p, %p)"));
  for (const char* gone : {"after-all", "add-dependency", "opt-barrier", "fusion", "token"}) {
    EXPECT_THAT(printed, Not(HasSubstr(gone))) << gone;
  }
  EXPECT_OK(CheckRunnableTypes(*module));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {Literal::Vector<float>({1, -2, 3})}));
  std::vector<float> values(out.data<float>().begin(), out.data<float>().end());
  EXPECT_THAT(values, ElementsAre(1, 4, 9));
}

TEST(TokenOpsTest, FusionEvaluatesAsACallOfItsComputation) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
%fused (x: f32[3], y: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %y = f32[3] parameter(1)
  ROOT %s = f32[3] subtract(%x, %y)
}
ENTRY %e {
  %p = f32[3] parameter(0)
  %q = f32[3] parameter(1)
  ROOT %f = f32[3] fusion(%p, %q), kind=kLoop, calls=%fused
})"));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {Literal::Vector<float>({5, 5, 5}),
                                                       Literal::Vector<float>({1, 2, 8})}));
  std::vector<float> values(out.data<float>().begin(), out.data<float>().end());
  EXPECT_THAT(values, ElementsAre(4, 3, -3));
}

TEST(TokenOpsTest, AShardingOnTheBarrierMovesToItsValueOrIsRefused) {
  ASSERT_OK_AND_ASSIGN(auto moved, ParseAndVerifyModule(R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[4] parameter(0)
  %n = f32[4] negate(%p)
  ROOT %b = f32[4] opt-barrier(%n), sharding={devices=[2]0,1}
})"));
  ASSERT_OK(LowerForCompute(*moved));
  EXPECT_EQ(moved->entry()->root()->name(), "n");
  ASSERT_TRUE(moved->entry()->root()->has_sharding());
  EXPECT_EQ(moved->entry()->root()->sharding()->ToString(), "{devices=[2]0,1}");

  ASSERT_OK_AND_ASSIGN(auto conflict, ParseAndVerifyModule(R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[4] parameter(0), sharding={replicated}
  ROOT %b = f32[4] opt-barrier(%p), sharding={devices=[2]0,1}
})"));
  EXPECT_THAT(std::string(LowerForCompute(*conflict).message()),
              HasSubstr("other than its operand's"));
}

}  // namespace
}  // namespace sharc::hlo

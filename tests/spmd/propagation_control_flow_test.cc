// Golden tests for sharding propagation through tuples, control flow
// (while, call, conditional), "Sharding" custom-calls (fixed copies,
// shard_as groups) and manual regions (SPMDFullToShardShape /
// SPMDShardToFullShape). Expected values are what XLA's GSPMD
// (ShardingPropagation, is_spmd=true) produces; see
// ../shared/reference/xla_gspmd.md Part B.
#include <source_location>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "spmd/propagation.h"
#include "tests/spmd/propagation_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;

using testing_util::ExpectNoSharding;
using testing_util::ExpectSharding;
using testing_util::FindInstruction;

class ControlFlowPropagationTest : public testing_util::PropagationTest {};

// --- Tuple and get-tuple-element. ---

TEST_F(ControlFlowPropagationTest, TupleForwardDefaultsUnshardedLeafToReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule tuple_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %p1 = f32[8,16] parameter(1)
  %a = f32[8,16] copy(%p0)
  %b = f32[8,16] copy(%p1)
  ROOT %t = (f32[8,16], f32[8,16]) tuple(%a, %b)
}
)"));
  ExpectSharding(module(), "t", "{{devices=[4,1]0,1,2,3}, {replicated}}");
  ExpectSharding(module(), "a", "{devices=[4,1]0,1,2,3}");
  // The replicated leaf flows back into the unsharded tuple operand.
  ExpectSharding(module(), "b", "{replicated}");
  ExpectNoSharding(module(), "p1");
}

TEST_F(ControlFlowPropagationTest, GetTupleElementForwardFromNestedTuple) {
  ASSERT_TRUE(Run(R"(
HloModule gte_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p = ((f32[8], f32[8,16]), f32[16]) parameter(0), sharding={{devices=[4]0,1,2,3}, {devices=[2,2]0,2,1,3}, {replicated}}
  %g0 = (f32[8], f32[8,16]) get-tuple-element(%p), index=0
  %g00 = f32[8] get-tuple-element(%g0), index=0
  %g01 = f32[8,16] get-tuple-element(%g0), index=1
  %g1 = f32[16] get-tuple-element(%p), index=1
  ROOT %res = (f32[8], f32[8,16], f32[16]) tuple(%g00, %g01, %g1)
}
)"));
  ExpectSharding(module(), "g0", "{{devices=[4]0,1,2,3}, {devices=[2,2]0,2,1,3}}");
  ExpectSharding(module(), "g00", "{devices=[4]0,1,2,3}");
  ExpectSharding(module(), "g01", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "g1", "{replicated}");
  ExpectSharding(module(), "res",
                 "{{devices=[4]0,1,2,3}, {devices=[2,2]0,2,1,3}, {replicated}}");
}

TEST_F(ControlFlowPropagationTest, GetTupleElementBackwardBuildsTupleSharding) {
  ASSERT_TRUE(Run(R"(
HloModule gte_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %p1 = f32[16] parameter(1)
  %c0 = f32[8,16] copy(%p0)
  %c1 = f32[16] copy(%p1)
  %t = (f32[8,16], f32[16]) tuple(%c0, %c1)
  %g0 = f32[8,16] get-tuple-element(%t), index=0
  %hint = f32[8,16] copy(%g0), sharding={devices=[2,2]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "g0", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "t", "{{devices=[2,2]0,1,2,3}, {replicated}}");
  ExpectSharding(module(), "c0", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "c1", "{replicated}");
}

// A value used twice by a tuple takes the more specific of the two leaves;
// it then refines the tuple and the other element.
TEST_F(ControlFlowPropagationTest, TupleOperandUsedTwiceTakesMostSpecificLeaf) {
  ASSERT_TRUE(Run(R"(
HloModule tuple_twice, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %c = f32[8,16] copy(%p0)
  %t = (f32[8,16], f32[8,16]) tuple(%c, %c)
  %g0 = f32[8,16] get-tuple-element(%t), index=0
  %g1 = f32[8,16] get-tuple-element(%t), index=1
  %hint0 = f32[8,16] copy(%g0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %hint1 = f32[8,16] copy(%g1), sharding={devices=[2,2]0,1,2,3}
  ROOT %res = (f32[8,16], f32[8,16]) tuple(%hint0, %hint1)
}
)"));
  ExpectSharding(module(), "c", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "t", "{{devices=[2,2]0,1,2,3}, {devices=[2,2]0,1,2,3}}");
  ExpectSharding(module(), "g0", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "hint0", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
}

// --- While: init, body parameter/root, condition parameter and the while
// itself share one sharding. ---

// The condition's root %lt (a compare of the replicated counter) becomes
// {replicated}, but it must not be copied onto the loop: XLA's
// MaybeComputationPropagation only copies when the changed instruction is one
// of GetRelatedInstructions(while) = {while, body root, body param, condition
// param}, so the loop keeps the init's tuple sharding.
TEST_F(ControlFlowPropagationTest, WhileTakesInitShardingAndTiesBodyAndCondition) {
  ASSERT_TRUE(Run(R"(
HloModule while_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%cond (vars.cond: (s32[], f32[8,16])) -> pred[] {
  %vars.cond = (s32[], f32[8,16]) parameter(0)
  %count.cond = s32[] get-tuple-element(%vars.cond), index=0
  %limit = s32[] constant(10)
  ROOT %lt = pred[] compare(%count.cond, %limit), direction=LT
}

%body (vars: (s32[], f32[8,16])) -> (s32[], f32[8,16]) {
  %vars = (s32[], f32[8,16]) parameter(0)
  %count = s32[] get-tuple-element(%vars), index=0
  %acc = f32[8,16] get-tuple-element(%vars), index=1
  %one = s32[] constant(1)
  %count.1 = s32[] add(%count, %one)
  %acc.1 = f32[8,16] exponential(%acc)
  ROOT %body.root = (s32[], f32[8,16]) tuple(%count.1, %acc.1)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %zero = s32[] constant(0)
  %init = (s32[], f32[8,16]) tuple(%zero, %p0)
  %loop = (s32[], f32[8,16]) while(%init), condition=%cond, body=%body
  %res = f32[8,16] get-tuple-element(%loop), index=1
  ROOT %out = f32[8,16] copy(%res)
}
)"));
  constexpr const char* kLoop = "{{replicated}, {devices=[2,2]0,1,2,3}}";
  ExpectSharding(module(), "init", kLoop);
  ExpectSharding(module(), "loop", kLoop);
  ExpectSharding(module(), "vars", kLoop);
  ExpectSharding(module(), "vars.cond", kLoop);
  ExpectSharding(module(), "body.root", kLoop);
  ExpectSharding(module(), "acc", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "acc.1", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "count.1", "{replicated}");
  ExpectSharding(module(), "res", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,1,2,3}");
}

TEST_F(ControlFlowPropagationTest, WhileBodyAnnotationReachesOutsideTheLoop) {
  ASSERT_TRUE(Run(R"(
HloModule while_body, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%cond (vars.cond: (s32[], f32[8,16])) -> pred[] {
  %vars.cond = (s32[], f32[8,16]) parameter(0)
  %count.cond = s32[] get-tuple-element(%vars.cond), index=0
  %limit = s32[] constant(10)
  ROOT %lt = pred[] compare(%count.cond, %limit), direction=LT
}

%body (vars: (s32[], f32[8,16])) -> (s32[], f32[8,16]) {
  %vars = (s32[], f32[8,16]) parameter(0)
  %count = s32[] get-tuple-element(%vars), index=0
  %acc = f32[8,16] get-tuple-element(%vars), index=1
  %one = s32[] constant(1)
  %count.1 = s32[] add(%count, %one)
  %acc.1 = f32[8,16] add(%acc, %acc), sharding={devices=[4,1]0,1,2,3}
  ROOT %body.root = (s32[], f32[8,16]) tuple(%count.1, %acc.1)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %p0.copy = f32[8,16] copy(%p0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8,16]) tuple(%zero, %p0.copy)
  %loop = (s32[], f32[8,16]) while(%init), condition=%cond, body=%body
  %res = f32[8,16] get-tuple-element(%loop), index=1
  ROOT %out = f32[8,16] copy(%res)
}
)"));
  constexpr const char* kLoop = "{{replicated}, {devices=[4,1]0,1,2,3}}";
  ExpectSharding(module(), "body.root", kLoop);
  ExpectSharding(module(), "loop", kLoop);
  ExpectSharding(module(), "vars", kLoop);
  ExpectSharding(module(), "vars.cond", kLoop);
  ExpectSharding(module(), "init", kLoop);
  ExpectSharding(module(), "acc", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "p0.copy", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "res", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[4,1]0,1,2,3}");
  ExpectNoSharding(module(), "p0");
}

// --- Call: parameters follow the caller's operands, the call follows the
// callee root, and a parameter's sharding flows back to the caller operand.

TEST_F(ControlFlowPropagationTest, CallParametersRootAndOperandsAreTied) {
  ASSERT_TRUE(Run(R"(
HloModule call_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%callee (x: f32[8,16], y: f32[8,16]) -> f32[8,16] {
  %x = f32[8,16] parameter(0)
  %y = f32[8,16] parameter(1)
  ROOT %s = f32[8,16] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,2,1,3}
  %p1 = f32[8,16] parameter(1)
  %a = f32[8,16] copy(%p0)
  %b = f32[8,16] copy(%p1)
  %c = f32[8,16] call(%a, %b), to_apply=%callee
  ROOT %out = f32[8,16] copy(%c)
}
)"));
  ExpectSharding(module(), "x", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "s", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "c", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "y", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "b", "{devices=[2,2]0,2,1,3}");
}

// --- Conditional. ---

TEST_F(ControlFlowPropagationTest, ConditionalBranchesShareTheResultSharding) {
  ASSERT_TRUE(Run(R"(
HloModule cond_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%branch_t (tp: f32[8,16]) -> f32[8,16] {
  %tp = f32[8,16] parameter(0)
  ROOT %neg = f32[8,16] negate(%tp)
}

%branch_f (fp: f32[8,16]) -> f32[8,16] {
  %fp = f32[8,16] parameter(0)
  ROOT %e = f32[8,16] exponential(%fp)
}

ENTRY %main {
  %pred = pred[] parameter(0)
  %p1 = f32[8,16] parameter(1), sharding={devices=[2,2]0,1,2,3}
  %p2 = f32[8,16] parameter(2)
  %a = f32[8,16] copy(%p1)
  %b = f32[8,16] copy(%p2)
  %cond = f32[8,16] conditional(%pred, %a, %b), true_computation=%branch_t, false_computation=%branch_f
  ROOT %out = f32[8,16] copy(%cond)
}
)"));
  ExpectSharding(module(), "tp", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "neg", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "cond", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "e", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "fp", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "b", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,1,2,3}");
  ExpectNoSharding(module(), "pred");
}

// --- "Sharding" custom-calls. ---

bool HasShardingCustomCall(const hlo::Module& module) {
  for (const hlo::Computation* comp : module.computations()) {
    for (const hlo::Instruction* inst : comp->instructions()) {
      if (inst->opcode() == hlo::Opcode::kCustomCall &&
          inst->attr_string("custom_call_target") == "Sharding")
        return true;
    }
  }
  return false;
}

// The annotation becomes a fixed copy; its unsharded operand takes the same
// sharding, and users follow it.
TEST_F(ControlFlowPropagationTest, ShardingCustomCallBecomesFixedCopy) {
  ASSERT_TRUE(Run(R"(
HloModule sharding_cc, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %x = f32[8,16] exponential(%p0)
  %s = f32[8,16] custom-call(%x), custom_call_target="Sharding", sharding={devices=[2,2]0,2,1,3}
  %neg = f32[8,16] negate(%s)
  ROOT %out = f32[8,16] copy(%neg)
}
)"));
  EXPECT_FALSE(HasShardingCustomCall(module())) << module().ToString();
  ExpectSharding(module(), "x", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "neg", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,2,1,3}");
  const hlo::Instruction* neg = FindInstruction(module(), "neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(neg->operand(0)->opcode(), hlo::Opcode::kCopy);
}

// Preprocessing gives the annotation to its unsharded operand before the
// fixed set is collected, so that operand is fixed too: the more specific
// sharding of its own operand never replaces it.
TEST_F(ControlFlowPropagationTest, ShardingCustomCallFixesItsOperand) {
  ASSERT_TRUE(Run(R"(
HloModule sharding_cc_fixed, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %x = f32[8,16] negate(%p0)
  %s = f32[8,16] custom-call(%x), custom_call_target="Sharding", sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %e = f32[8,16] exponential(%s)
  ROOT %out = f32[8,16] copy(%e)
}
)"));
  EXPECT_FALSE(HasShardingCustomCall(module()));
  ExpectSharding(module(), "x", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "e", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
}

TEST_F(ControlFlowPropagationTest, ShardingCustomCallOnParameterAnnotatesIt) {
  ASSERT_TRUE(Run(R"(
HloModule sharding_cc_param, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %s = f32[8,16] custom-call(%p0), custom_call_target="Sharding", sharding={devices=[4,1]0,1,2,3}
  %neg = f32[8,16] negate(%s)
  ROOT %out = f32[8,16] copy(%neg)
}
)"));
  ExpectSharding(module(), "p0", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "neg", "{devices=[4,1]0,1,2,3}");
}

// An "unknown" Sharding custom-call only joins its operand to a shard_as
// group; the group members end with one sharding.
TEST_F(ControlFlowPropagationTest, UnknownShardingWithShardAsAlignsGroup) {
  ASSERT_TRUE(Run(R"(
HloModule shard_as, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %p1 = f32[8,16] parameter(1)
  %a = f32[8,16] copy(%p0)
  %b = f32[8,16] copy(%p1)
  %sa = f32[8,16] custom-call(%a), custom_call_target="Sharding", sharding={unknown shard_as 0}
  %sb = f32[8,16] custom-call(%b), custom_call_target="Sharding", sharding={unknown shard_as 0}
  %na = f32[8,16] negate(%sa)
  %nb = f32[8,16] negate(%sb)
  ROOT %res = (f32[8,16], f32[8,16]) tuple(%na, %nb)
}
)"));
  EXPECT_FALSE(HasShardingCustomCall(module()));
  ExpectSharding(module(), "a", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "b", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "nb", "{devices=[4,1]0,1,2,3}");
  ExpectNoSharding(module(), "p1");
}

// --- Manual regions. ---

TEST_F(ControlFlowPropagationTest, ManualRegionMakesInsideValuesManual) {
  ASSERT_TRUE(Run(R"(
HloModule manual, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %c = f32[8,16] copy(%p0), sharding={devices=[4,1]0,1,2,3}
  %annotate = f32[8,16] custom-call(%c), custom_call_target="Sharding", sharding={devices=[4,1]0,1,2,3}
  %to_manual = f32[2,16] custom-call(%annotate), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %one = f32[] constant(1)
  %b = f32[2,16] broadcast(%one), dimensions={}
  %add = f32[2,16] add(%to_manual, %b)
  %e = f32[2,16] exponential(%add)
  %annotate2 = f32[2,16] custom-call(%e), custom_call_target="Sharding", sharding={manual}
  %to_auto = f32[8,16] custom-call(%annotate2), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]0,1,2,3}
  ROOT %out = f32[8,16] copy(%to_auto)
}
)"));
  ExpectSharding(module(), "add", "{manual}");
  ExpectSharding(module(), "e", "{manual}");
  ExpectSharding(module(), "b", "{manual}");
  ExpectSharding(module(), "one", "{manual}");
  ExpectSharding(module(), "to_manual", "{manual}");
  ExpectSharding(module(), "to_auto", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[4,1]0,1,2,3}");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

// --- XLA's propagation barriers. ---

TEST_F(ControlFlowPropagationTest, ShardBarrierToOffersItsOperandOnlyReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[12] parameter(0)
  %c = f32[12] copy(%p)
  %to = f32[12] custom-call(%c), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %b = f32[6,12] broadcast(%to), dimensions={1}
  ROOT %r = f32[6,12] copy(%b), sharding={devices=[1,4]0,1,2,3}
})"));
  // The barrier takes its user's sharding; what is behind it is replicated.
  ExpectSharding(module(), "to", "{devices=[4]0,1,2,3}");
  ExpectSharding(module(), "c", "{replicated}");
}

TEST_F(ControlFlowPropagationTest, ShardBarrierFromStopsShardingsGoingForward) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[12] parameter(0), sharding={devices=[4]0,1,2,3}
  %from = f32[12] custom-call(%p), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  ROOT %n = f32[12] negate(%from)
})"));
  ExpectNoSharding(module(), "from");
  ExpectNoSharding(module(), "n");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

TEST_F(ControlFlowPropagationTest, AShardAsMemberThatIsAShardingConstraintItselfStaysInItsGroup) {
  // %g2's "unknown" annotation dissolves into %fixed, a "Sharding"
  // custom-call that then becomes a copy: the group must follow it (the
  // group used to keep the removed custom-call and crash).
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[8,6] parameter(0), sharding={replicated}
  %a = f32[8,6] negate(%p)
  %g1 = f32[8,6] custom-call(%a), custom_call_target="Sharding", sharding={unknown shard_as 3}
  %b = f32[8,6] exponential(%p)
  %fixed = f32[8,6] custom-call(%b), custom_call_target="Sharding", sharding={devices=[4,1]0,1,2,3}
  %g2 = f32[8,6] custom-call(%fixed), custom_call_target="Sharding", sharding={unknown shard_as 3}
  ROOT %t = (f32[8,6], f32[8,6]) tuple(%g1, %g2)
})"));
  ExpectSharding(module(), "a", "{devices=[4,1]0,1,2,3}");
}

}  // namespace
}  // namespace sharc::spmd

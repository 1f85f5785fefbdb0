// Golden tests for sharding propagation through elementwise ops (unary,
// binary, compare, select, clamp, convert), the tie-break between conflicting
// operand shardings, merges of partially replicated shardings, and the
// checks on bad annotations. Expected values are what XLA's GSPMD
// (ShardingPropagation, is_spmd=true) produces; see
// ../shared/reference/xla_gspmd.md Part B.
#include <source_location>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_replace.h"
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

class ElementwisePropagationTest : public testing_util::PropagationTest {};

// --- Unary ops: forward from the operand, backward from the user. ---

struct UnaryCase {
  const char* op;
  const char* in;   // operand element type
  const char* out;  // result element type
};

class UnaryPropagationTest : public ElementwisePropagationTest,
                             public ::testing::WithParamInterface<UnaryCase> {
 protected:
  std::string Fill(std::string_view text) const {
    return absl::StrReplaceAll(std::string(text), {{"$OP", GetParam().op},
                                      {"$IN", GetParam().in},
                                      {"$OUT", GetParam().out}});
  }
};

TEST_P(UnaryPropagationTest, ForwardFromOperand) {
  ASSERT_TRUE(Run(Fill(R"(
HloModule unary_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = $IN[8,16] parameter(0), sharding={devices=[2,2]0,2,1,3}
  %u = $OUT[8,16] $OP(%p0)
  ROOT %out = $OUT[8,16] copy(%u)
}
)")));
  ExpectSharding(module(), "u", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,2,1,3}");
}

TEST_P(UnaryPropagationTest, BackwardFromUser) {
  ASSERT_TRUE(Run(Fill(R"(
HloModule unary_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = $IN[8,16] parameter(0)
  %c = $IN[8,16] copy(%p0)
  %u = $OUT[8,16] $OP(%c)
  %hint = $OUT[8,16] copy(%u), sharding={devices=[4,1]3,2,1,0}
  ROOT %out = $OUT[8,16] copy(%hint)
}
)")));
  ExpectSharding(module(), "u", "{devices=[4,1]3,2,1,0}");
  ExpectSharding(module(), "c", "{devices=[4,1]3,2,1,0}");
  ExpectSharding(module(), "out", "{devices=[4,1]3,2,1,0}");
  // Entry parameters never receive shardings (propagation to parameters is off).
  ExpectNoSharding(module(), "p0");
}

INSTANTIATE_TEST_SUITE_P(
    AllUnaryOps, UnaryPropagationTest,
    ::testing::Values(UnaryCase{"abs", "f32", "f32"}, UnaryCase{"cbrt", "f32", "f32"},
                      UnaryCase{"ceil", "f32", "f32"}, UnaryCase{"convert", "f32", "s32"},
                      UnaryCase{"copy", "f32", "f32"}, UnaryCase{"cosine", "f32", "f32"},
                      UnaryCase{"exponential", "f32", "f32"},
                      UnaryCase{"exponential-minus-one", "f32", "f32"},
                      UnaryCase{"floor", "f32", "f32"}, UnaryCase{"is-finite", "f32", "pred"},
                      UnaryCase{"log", "f32", "f32"}, UnaryCase{"log-plus-one", "f32", "f32"},
                      UnaryCase{"logistic", "f32", "f32"}, UnaryCase{"negate", "f32", "f32"},
                      UnaryCase{"not", "pred", "pred"},
                      UnaryCase{"round-nearest-afz", "f32", "f32"},
                      UnaryCase{"round-nearest-even", "f32", "f32"},
                      UnaryCase{"rsqrt", "f32", "f32"}, UnaryCase{"sign", "f32", "f32"},
                      UnaryCase{"sine", "f32", "f32"}, UnaryCase{"sqrt", "f32", "f32"},
                      UnaryCase{"tan", "f32", "f32"}, UnaryCase{"tanh", "f32", "f32"},
                      UnaryCase{"acos", "f32", "f32"}, UnaryCase{"erf", "f32", "f32"},
                      UnaryCase{"popcnt", "s32", "s32"},
                      UnaryCase{"count-leading-zeros", "u8", "u8"}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) {
      std::string name = info.param.op;
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

// --- Binary ops. ---

struct BinaryCase {
  const char* op;
  const char* type;
};

class BinaryPropagationTest : public ElementwisePropagationTest,
                              public ::testing::WithParamInterface<BinaryCase> {
 protected:
  std::string Fill(std::string_view text) const {
    return absl::StrReplaceAll(std::string(text), {{"$OP", GetParam().op}, {"$T", GetParam().type}});
  }
};

// Only the second operand is sharded. Most ops take it at level 0; power and
// the shifts only look at operand 0 at level 0 but, being elementwise, take
// every operand from level 1 on, so all end the same.
TEST_P(BinaryPropagationTest, ForwardFromSecondOperand) {
  ASSERT_TRUE(Run(Fill(R"(
HloModule binary_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = $T[8,16] parameter(0)
  %p1 = $T[8,16] parameter(1), sharding={devices=[2,2]0,2,1,3}
  %b = $T[8,16] $OP(%p0, %p1)
  ROOT %out = $T[8,16] copy(%b)
}
)")));
  ExpectSharding(module(), "b", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,2,1,3}");
  ExpectNoSharding(module(), "p0");
}

TEST_P(BinaryPropagationTest, BackwardToBothOperands) {
  ASSERT_TRUE(Run(Fill(R"(
HloModule binary_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = $T[8,16] parameter(0)
  %p1 = $T[8,16] parameter(1)
  %c0 = $T[8,16] copy(%p0)
  %c1 = $T[8,16] copy(%p1)
  %b = $T[8,16] $OP(%c0, %c1)
  %hint = $T[8,16] copy(%b), sharding={devices=[1,4]1,0,3,2}
  ROOT %out = $T[8,16] copy(%hint)
}
)")));
  ExpectSharding(module(), "b", "{devices=[1,4]1,0,3,2}");
  ExpectSharding(module(), "c0", "{devices=[1,4]1,0,3,2}");
  ExpectSharding(module(), "c1", "{devices=[1,4]1,0,3,2}");
}

INSTANTIATE_TEST_SUITE_P(
    AllBinaryOps, BinaryPropagationTest,
    ::testing::Values(BinaryCase{"add", "f32"}, BinaryCase{"subtract", "f32"},
                      BinaryCase{"multiply", "f32"}, BinaryCase{"divide", "f32"},
                      BinaryCase{"maximum", "f32"}, BinaryCase{"minimum", "f32"},
                      BinaryCase{"power", "f32"}, BinaryCase{"remainder", "f32"},
                      BinaryCase{"atan2", "f32"}, BinaryCase{"and", "s32"},
                      BinaryCase{"or", "s32"}, BinaryCase{"xor", "s32"},
                      BinaryCase{"shift-left", "s32"},
                      BinaryCase{"shift-right-arithmetic", "s32"},
                      BinaryCase{"shift-right-logical", "s32"}),
    [](const ::testing::TestParamInfo<BinaryCase>& info) {
      std::string name = info.param.op;
      for (char& c : name)
        if (c == '-') c = '_';
      return name;
    });

// --- Compare, select, clamp, convert. ---

TEST_F(ElementwisePropagationTest, CompareForwardGivesPredResultTheOperandSharding) {
  ASSERT_TRUE(Run(R"(
HloModule compare_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,4]0,1,2,3,4,5,6,7}
  %p1 = f32[8,16] parameter(1)
  %cmp = pred[8,16] compare(%p0, %p1), direction=LT
  ROOT %out = pred[8,16] copy(%cmp)
}
)"));
  ExpectSharding(module(), "cmp", "{devices=[2,4]0,1,2,3,4,5,6,7}");
  ExpectSharding(module(), "out", "{devices=[2,4]0,1,2,3,4,5,6,7}");
}

TEST_F(ElementwisePropagationTest, CompareBackwardIgnoresElementType) {
  ASSERT_TRUE(Run(R"(
HloModule compare_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %p1 = f32[8,16] parameter(1)
  %a = f32[8,16] copy(%p0)
  %b = f32[8,16] copy(%p1)
  %cmp = pred[8,16] compare(%a, %b), direction=GE
  %hint = pred[8,16] copy(%cmp), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  ROOT %out = pred[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "cmp", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "a", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "b", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
}

TEST_F(ElementwisePropagationTest, SelectForwardFromPredicateOnly) {
  ASSERT_TRUE(Run(R"(
HloModule select_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %pred = pred[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %on_true = f32[8,16] parameter(1)
  %on_false = f32[8,16] parameter(2)
  %sel = f32[8,16] select(%pred, %on_true, %on_false)
  ROOT %out = f32[8,16] copy(%sel)
}
)"));
  ExpectSharding(module(), "sel", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[4,1]0,1,2,3}");
  ExpectNoSharding(module(), "on_true");
  ExpectNoSharding(module(), "on_false");
}

TEST_F(ElementwisePropagationTest, SelectBackwardToAllThreeOperands) {
  ASSERT_TRUE(Run(R"(
HloModule select_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = pred[8,16] parameter(0)
  %p1 = f32[8,16] parameter(1)
  %p2 = f32[8,16] parameter(2)
  %c0 = pred[8,16] copy(%p0)
  %c1 = f32[8,16] copy(%p1)
  %c2 = f32[8,16] copy(%p2)
  %sel = f32[8,16] select(%c0, %c1, %c2)
  %hint = f32[8,16] copy(%sel), sharding={devices=[2,2]3,1,2,0}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "sel", "{devices=[2,2]3,1,2,0}");
  ExpectSharding(module(), "c0", "{devices=[2,2]3,1,2,0}");
  ExpectSharding(module(), "c1", "{devices=[2,2]3,1,2,0}");
  ExpectSharding(module(), "c2", "{devices=[2,2]3,1,2,0}");
}

TEST_F(ElementwisePropagationTest, ClampScalarBoundsGetNothingForward) {
  ASSERT_TRUE(Run(R"(
HloModule clamp_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lo = f32[] constant(0)
  %hi = f32[] constant(6)
  %x = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %cl = f32[8,16] clamp(%lo, %x, %hi)
  ROOT %out = f32[8,16] copy(%cl)
}
)"));
  ExpectSharding(module(), "cl", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,1,2,3}");
  ExpectNoSharding(module(), "lo");
  ExpectNoSharding(module(), "hi");
}

TEST_F(ElementwisePropagationTest, ClampScalarBoundsGetNothingBackward) {
  ASSERT_TRUE(Run(R"(
HloModule clamp_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lo = f32[] constant(0)
  %hi = f32[] constant(6)
  %p0 = f32[8,16] parameter(0)
  %x = f32[8,16] copy(%p0)
  %cl = f32[8,16] clamp(%lo, %x, %hi)
  %hint = f32[8,16] copy(%cl), sharding={devices=[1,4]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "cl", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "x", "{devices=[1,4]0,1,2,3}");
  ExpectNoSharding(module(), "lo");
  ExpectNoSharding(module(), "hi");
}

TEST_F(ElementwisePropagationTest, ClampFullShapeBoundsFollowTheUser) {
  ASSERT_TRUE(Run(R"(
HloModule clamp_full, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %p1 = f32[8,16] parameter(1)
  %p2 = f32[8,16] parameter(2)
  %lo = f32[8,16] copy(%p0)
  %x = f32[8,16] copy(%p1)
  %hi = f32[8,16] copy(%p2)
  %cl = f32[8,16] clamp(%lo, %x, %hi)
  %hint = f32[8,16] copy(%cl), sharding={devices=[4,1]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "lo", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "x", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "hi", "{devices=[4,1]0,1,2,3}");
}

TEST_F(ElementwisePropagationTest, ConvertChainKeepsPartialSharding) {
  ASSERT_TRUE(Run(R"(
HloModule convert_chain, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[1,2,4]0,4,1,5,2,6,3,7 last_tile_dim_replicate}
  %a = s32[8,16] convert(%p0)
  %b = bf16[8,16] convert(%a)
  ROOT %out = f32[8,16] convert(%b)
}
)"));
  ExpectSharding(module(), "a", "{devices=[1,2,4]0,4,1,5,2,6,3,7 last_tile_dim_replicate}");
  // Same sharding: replication groups compare as sets ({0,4,1,5} = {0,1,4,5}).
  ExpectSharding(module(), "b", "{devices=[1,2,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[1,2,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
}

// --- Conflicting annotations and the tie-break. ---

// Two fixed, equally specific shardings meet at an add: neither is more
// specific, so the first operand's (picked at level 0) is kept and the second
// never replaces it. The annotations themselves are kept as written.
TEST_F(ElementwisePropagationTest, TieBetweenOperandsFirstOperandWins) {
  ASSERT_TRUE(Run(R"(
HloModule tie_first, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,16] parameter(0)
  %p1 = f32[16,16] parameter(1)
  %a = f32[16,16] copy(%p0), sharding={devices=[4,1]0,1,2,3}
  %b = f32[16,16] copy(%p1), sharding={devices=[1,4]0,1,2,3}
  %add = f32[16,16] add(%a, %b)
  ROOT %out = f32[16,16] copy(%add)
}
)"));
  ExpectSharding(module(), "a", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "b", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "add", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[4,1]0,1,2,3}");
  ASSERT_OK_AND_ASSIGN(std::string why, ExplainSharding(module(), result_, "add"));
  EXPECT_THAT(why, HasSubstr("<- main/a\n"));
  EXPECT_THAT(why, HasSubstr("annotation"));
  EXPECT_THAT(why, ::testing::Not(HasSubstr("main/b")));
}

TEST_F(ElementwisePropagationTest, TieBetweenOperandsSwappedOrder) {
  ASSERT_TRUE(Run(R"(
HloModule tie_swapped, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,16] parameter(0)
  %p1 = f32[16,16] parameter(1)
  %a = f32[16,16] copy(%p0), sharding={devices=[4,1]0,1,2,3}
  %b = f32[16,16] copy(%p1), sharding={devices=[1,4]0,1,2,3}
  %add = f32[16,16] add(%b, %a)
  ROOT %out = f32[16,16] copy(%add)
}
)"));
  ExpectSharding(module(), "add", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[1,4]0,1,2,3}");
  ASSERT_OK_AND_ASSIGN(std::string why, ExplainSharding(module(), result_, "out"));
  EXPECT_THAT(why, HasSubstr("<- main/b\n"));
  EXPECT_THAT(why, HasSubstr("annotation"));
}

// A more specific operand wins over the first one.
TEST_F(ElementwisePropagationTest, MoreSpecificOperandBeatsFirstOperand) {
  ASSERT_TRUE(Run(R"(
HloModule more_specific, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,16] parameter(0)
  %p1 = f32[16,16] parameter(1)
  %a = f32[16,16] copy(%p0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %b = f32[16,16] copy(%p1), sharding={devices=[1,4]0,1,2,3}
  %add = f32[16,16] add(%a, %b)
  ROOT %out = f32[16,16] copy(%add)
}
)"));
  ExpectSharding(module(), "add", "{devices=[1,4]0,1,2,3}");
}

// An unannotated value between two different fixed shardings: the forward
// sweep runs first at level 0, and the user's equally specific sharding
// never replaces the operand's.
TEST_F(ElementwisePropagationTest, ValueBetweenConflictingAnnotationsFollowsOperand) {
  ASSERT_TRUE(Run(R"(
HloModule between, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,16] parameter(0)
  %a = f32[16,16] copy(%p0), sharding={devices=[4,1]0,1,2,3}
  %neg = f32[16,16] negate(%a)
  %b = f32[16,16] copy(%neg), sharding={devices=[1,4]0,1,2,3}
  ROOT %out = f32[16,16] copy(%b)
}
)"));
  ExpectSharding(module(), "neg", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "a", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "b", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[1,4]0,1,2,3}");
}

// --- Merging partially replicated shardings (level >= 1). ---

// Columns split 4-way in groups {0,1},{2,3},{4,5},{6,7} merged with rows split
// 2-way in groups {0,2,4,6},{1,3,5,7}: each tile's device is the
// intersection of its row and column groups.
TEST_F(ElementwisePropagationTest, PartialShardingsMergeIntoFullTiling8Devices) {
  ASSERT_TRUE(Run(R"(
HloModule merge8, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[1,4,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}
  %p1 = f32[8,16] parameter(1), sharding={devices=[2,1,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}
  %lhs = f32[8,16] copy(%p0)
  %rhs = f32[8,16] copy(%p1)
  %mul = f32[8,16] multiply(%lhs, %rhs)
  ROOT %out = f32[8,16] copy(%mul)
}
)"));
  ExpectSharding(module(), "mul", "{devices=[2,4]0,2,4,6,1,3,5,7}");
  ExpectSharding(module(), "out", "{devices=[2,4]0,2,4,6,1,3,5,7}");
  // The merge refines both operands' shardings, so it flows back into them.
  ExpectSharding(module(), "lhs", "{devices=[2,4]0,2,4,6,1,3,5,7}");
  ExpectSharding(module(), "rhs", "{devices=[2,4]0,2,4,6,1,3,5,7}");
}

// Row groups {0,1},{2,3} and column groups {0,1},{2,3} do not intersect in
// single devices: no merge, and the first operand's sharding stays.
TEST_F(ElementwisePropagationTest, IncompatiblePartialShardingsDoNotMerge) {
  ASSERT_TRUE(Run(R"(
HloModule no_merge, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}
  %p1 = f32[8,16] parameter(1), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %add = f32[8,16] add(%p0, %p1)
  ROOT %out = f32[8,16] copy(%add)
}
)"));
  ExpectSharding(module(), "add", "{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}");
}

// A partial sharding from a user merges with the operand-given partial
// sharding of an unannotated value.
TEST_F(ElementwisePropagationTest, PartialShardingsFromOperandAndUserMerge) {
  ASSERT_TRUE(Run(R"(
HloModule merge_user, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %e = f32[8,16] exponential(%p0)
  %hint = f32[8,16] copy(%e), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "e", "{devices=[2,2]0,1,2,3}");
}

// --- Uneven root fallback. ---

TEST_F(ElementwisePropagationTest, UnevenEntryRootFallsBackToReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule uneven_root, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[6,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %neg = f32[6,16] negate(%p0)
  ROOT %out = f32[6,16] copy(%neg)
}
)"));
  ExpectSharding(module(), "neg", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "out", "{replicated}");
}

// --- Bad annotations and explanations. ---

TEST_F(ElementwisePropagationTest, AnnotationRankMismatchIsInvalidArgument) {
  // The verifier would reject this too; propagation must not trust its input.
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseModule(R"(
HloModule bad_rank, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %bad = f32[8,16] copy(%p0), sharding={devices=[2,1,2]0,1,2,3}
  ROOT %out = f32[8,16] copy(%bad)
}
)"));
  EXPECT_THAT(PropagateShardings(*module),
              sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad")));
}

TEST_F(ElementwisePropagationTest, AnnotationDeviceOutOfRangeIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseModule(R"(
HloModule bad_device, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %far = f32[8,16] copy(%p0), sharding={devices=[4,1]0,1,2,7}
  ROOT %out = f32[8,16] copy(%far)
}
)"));
  EXPECT_THAT(PropagateShardings(*module),
              sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("far")));
}

TEST_F(ElementwisePropagationTest, AnnotationWithTooManyDevicesIsInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseModule(R"(
HloModule bad_count, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %wide = f32[8,16] parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %out = f32[8,16] copy(%wide)
}
)"));
  EXPECT_THAT(PropagateShardings(*module),
              sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("wide")));
}

TEST_F(ElementwisePropagationTest, ExplainFollowsChainBackToAnnotation) {
  ASSERT_TRUE(Run(R"(
HloModule explain, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %src = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %e = f32[8,16] exponential(%src)
  %n = f32[8,16] negate(%e)
  ROOT %out = f32[8,16] copy(%n)
}
)"));
  ExpectSharding(module(), "out", "{devices=[2,2]0,1,2,3}");
  ASSERT_OK_AND_ASSIGN(std::string why, ExplainSharding(module(), result_, "out"));
  EXPECT_THAT(why, HasSubstr("<- main/n\n"));
  EXPECT_THAT(why, HasSubstr("<- main/e\n"));
  EXPECT_THAT(why, HasSubstr("<- main/src\n"));
  EXPECT_THAT(why, HasSubstr("annotation"));
  EXPECT_THAT(ExplainSharding(module(), result_, "nonexistent"),
              sharc::testing::StatusIs(absl::StatusCode::kNotFound, HasSubstr("nonexistent")));
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

// XLA's pass-through custom-calls carry their first operand's layout, as an
// elementwise op does; a custom-call XLA knows nothing about does not.
TEST_F(ElementwisePropagationTest, PassThroughCustomCallsCarryTheirOperandsLayout) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %lo = f32[8,6] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %hi = f32[8,6] parameter(1), sharding={devices=[2,2]0,1,2,3}
  %wide = f64[8,6] custom-call(%lo, %hi), custom_call_target="X64Combine"
  %pinned = f64[8,6] custom-call(%wide), custom_call_target="LayoutConstraint"
  %opaque = f64[8,6] custom-call(%pinned), custom_call_target="SomethingElse"
  ROOT %r = f64[8,6] copy(%opaque)
})"));
  testing_util::ExpectSharding(module(), "wide", "{devices=[2,2]0,1,2,3}");
  testing_util::ExpectSharding(module(), "pinned", "{devices=[2,2]0,1,2,3}");
  testing_util::ExpectNoSharding(module(), "r");
}

}  // namespace
}  // namespace sharc::spmd

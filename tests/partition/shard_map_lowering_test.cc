// spmd::LowerShardMaps: shard_map programs lowered to manual regions and
// XLA collectives, partitioned and run on simulated devices, must equal the
// interpreter's reference semantics of shard_map (one body run per device).
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/shard_map_lowering.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"
#include "driver/spmd_runner.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Case {
  std::string name;
  std::string text;
};

std::string OneOp(const std::string& mesh, const std::string& in_shape,
                  const std::string& local_in, const std::string& in_spec,
                  const std::string& local_out, const std::string& op,
                  const std::string& out_shape, const std::string& out_spec) {
  return "HloModule m\n%body {\n  %a = " + local_in + " parameter(0)\n  %c = " + local_in +
         " cosine(%a)\n  ROOT %r = " + local_out + " " + op +
         "\n}\nENTRY %e {\n  %x = " + in_shape + " parameter(0)\n  %y = " + in_shape +
         " negate(%x)\n  %s = " + out_shape + " shard_map(%y), mesh={" + mesh + "}, in_specs={" +
         in_spec + "}, out_specs={" + out_spec + "}, to_apply=%body\n  ROOT %z = " + out_shape +
         " add(%s, %s)\n}\n";
}

std::vector<Case> Cases() {
  return {
      {"psum", OneOp("x=4", "f32[16]", "f32[4]", "P(x)", "f32[4]", "psum(%c), axes={x}",
                     "f32[4]", "P()")},
      {"pmax_2d", OneOp("i=2, j=2", "f32[4,4]", "f32[2,2]", "P(i,j)", "f32[2,2]",
                        "pmax(%c), axes={j}", "f32[4,2]", "P(i)")},
      {"pmin_both", OneOp("i=2, j=2", "f32[4,4]", "f32[2,2]", "P(i,j)", "f32[2,2]",
                          "pmin(%c), axes={i,j}", "f32[2,2]", "P()")},
      {"all_gather", OneOp("x=4", "f32[8,3]", "f32[2,3]", "P(x)", "f32[2,12]",
                           "all_gather(%c), axes={x}, dimension=1, tiled=true", "f32[8,12]",
                           "P(x)")},
      {"all_gather_invariant_untiled",
       OneOp("x=4", "f32[4,3]", "f32[1,3]", "P(x)", "f32[4,1,3]",
             "all_gather_invariant(%c), axes={x}, dimension=0", "f32[4,1,3]", "P()")},
      {"all_gather_2d_pair", OneOp("i=2, j=2", "f32[8]", "f32[2]", "P((i,j))", "f32[8]",
                                   "all_gather_invariant(%c), axes={j,i}, dimension=0, "
                                   "tiled=true",
                                   "f32[8]", "P()")},
      {"psum_scatter", OneOp("x=4", "f32[4,8]", "f32[1,8]", "P(x)", "f32[1,2]",
                             "psum_scatter(%c), axes={x}, dimension=1, tiled=true", "f32[4,2]",
                             "P(x)")},
      {"psum_scatter_untiled", OneOp("x=2", "f32[2,2,3]", "f32[1,2,3]", "P(x)", "f32[1,3]",
                                     "psum_scatter(%c), axes={x}, dimension=1", "f32[2,3]",
                                     "P(x)")},
      {"pscatter", OneOp("i=2, j=2", "f32[8,2]", "f32[8,2]", "P()", "f32[4,2]",
                         "pscatter(%c), axes={j}, dimension=0, tiled=true", "f32[8,2]",
                         "P(j)")},
      {"all_to_all", OneOp("x=4", "f32[8,8]", "f32[2,8]", "P(x)", "f32[8,2]",
                           "all_to_all(%c), axes={x}, split_dimension=1, concat_dimension=0, "
                           "tiled=true",
                           "f32[8,8]", "P(None, x)")},
      {"all_to_all_2d", OneOp("i=2, j=2", "f32[4,6,4]", "f32[2,6,2]", "P(i, None, j)",
                              "f32[4,3,2]",
                              "all_to_all(%c), axes={i}, split_dimension=1, concat_dimension=0, "
                              "tiled=true",
                              "f32[8,6,2]", "P(i, j)")},
      {"ppermute", OneOp("i=2, j=2", "f32[4,4]", "f32[2,2]", "P(i,j)", "f32[2,2]",
                         "ppermute(%c), axes={i,j}, pairs={{0,1},{1,2},{2,3},{3,0}}", "f32[4,4]",
                         "P(i,j)")},
      {"psum_scatter_4x2", OneOp("i=4, j=2", "f32[8,32]", "f32[2,16]", "P(i, j)", "f32[2,2]",
                                 "psum_scatter(%c), axes={j,i}, dimension=1, tiled=true",
                                 "f32[8,4]", "P(i, j)")},
      {"all_to_all_4x2", OneOp("i=4, j=2", "f32[8,8]", "f32[1,8]", "P((i,j))", "f32[4,2]",
                               "all_to_all(%c), axes={i}, split_dimension=1, "
                               "concat_dimension=0, tiled=true",
                               "f32[8,8]", "P(j, i)")},
      {"axis_index", R"(HloModule m
%body {
  %a = f32[2] parameter(0)
  %k = s32[] axis_index(), axes={j,i}
  %f = f32[] convert(%k)
  %b = f32[2] broadcast(%f), dimensions={}
  ROOT %r = f32[2] add(%a, %b)
}
ENTRY %e {
  %x = f32[8] parameter(0)
  ROOT %s = f32[8] shard_map(%x), mesh={i=2, j=2}, in_specs={P((i,j))}, out_specs={P((i,j))}, to_apply=%body
})"},
      {"mixed_variance", R"(HloModule m, mesh={x=4}
%body {
  %a = f32[2] parameter(0)
  %w = f32[2] parameter(1)
  %m = f32[2] multiply(%a, %w)
  %s = f32[2] psum(%m), axes={x}
  ROOT %t = (f32[2], f32[2]) tuple(%s, %m)
}
ENTRY %e {
  %x = f32[8] parameter(0)
  %w = f32[2] parameter(1)
  ROOT %r = (f32[2], f32[8]) shard_map(%x, %w), in_specs={P(x), P()}, out_specs={P(), P(x)}, to_apply=%body
})"},
 // A body whose root returns a constant directly: the constant is the
      // whole value on every device, a valid per-device value.
      {"constant_root", R"(HloModule m, mesh={data=4}
%body {
  %x = f32[2] parameter(0)
  %c = f32[] constant(2)
  %n = f32[2] negate(%x)
  ROOT %t = (f32[], f32[2]) tuple(%c, %n)
}
ENTRY %e {
  %x = f32[8] parameter(0)
  ROOT %s = (f32[], f32[8]) shard_map(%x), in_specs={P(data)}, out_specs={P(), P(data)}, to_apply=%body
})"},
      {"constant_only_root", R"(HloModule m, mesh={data=2}
%body {
  %x = f32[2] parameter(0)
  ROOT %c = f32[3] constant({1, 2, 3})
}
ENTRY %e {
  %x = f32[4] parameter(0)
  ROOT %s = f32[3] shard_map(%x), in_specs={P(data)}, out_specs={P()}, to_apply=%body
})"},
      // Control flow in bodies runs per device, collectives inside it too.
      {"while_with_psum", R"(HloModule m, mesh={x=2}
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
  %s = f32[2] psum(%v), axes={x}
  %h = f32[] constant(0.5)
  %hb = f32[2] broadcast(%h), dimensions={}
  %m = f32[2] multiply(%s, %hb)
  ROOT %t = (s32[], f32[2]) tuple(%j, %m)
}
%body {
  %a = f32[2] parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[2]) tuple(%z, %a)
  %l = (s32[], f32[2]) while(%t), condition=%cond, body=%step
  ROOT %r = f32[2] get-tuple-element(%l), index=1
}
ENTRY %e {
  %x = f32[4] parameter(0)
  ROOT %s = f32[4] shard_map(%x), in_specs={P(x)}, out_specs={P(x)}, to_apply=%body
})"},
      // Each device runs its own number of iterations (a varying trip count).
      {"while_varying_trip_count", R"(HloModule m, mesh={i=2, j=2}
%cond {
  %c = (s32[], f32[3]) parameter(0)
  %k = s32[] get-tuple-element(%c), index=0
  %n = s32[] axis_index(), axes={i,j}
  ROOT %lt = pred[] compare(%k, %n), direction=LT
}
%step {
  %c = (s32[], f32[3]) parameter(0)
  %k = s32[] get-tuple-element(%c), index=0
  %v = f32[3] get-tuple-element(%c), index=1
  %one = s32[] constant(1)
  %k1 = s32[] add(%k, %one)
  %v1 = f32[3] add(%v, %v)
  ROOT %t = (s32[], f32[3]) tuple(%k1, %v1)
}
%body {
  %a = f32[3] parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[3]) tuple(%z, %a)
  %l = (s32[], f32[3]) while(%t), condition=%cond, body=%step
  ROOT %r = f32[3] get-tuple-element(%l), index=1
}
ENTRY %e {
  %x = f32[12] parameter(0)
  ROOT %s = f32[12] shard_map(%x), in_specs={P((i,j))}, out_specs={P((i,j))}, to_apply=%body
})"},
      {"conditional_varying_predicate", R"(HloModule m, mesh={x=4}
%same {
  ROOT %p = f32[2] parameter(0)
}
%squared {
  %p = f32[2] parameter(0)
  ROOT %r = f32[2] multiply(%p, %p)
}
%body {
  %a = f32[2] parameter(0)
  %k = s32[] axis_index(), axes={x}
  %two = s32[] constant(2)
  %c = pred[] compare(%k, %two), direction=LT
  ROOT %r = f32[2] conditional(%c, %a, %a), true_computation=%same, false_computation=%squared
}
ENTRY %e {
  %x = f32[8] parameter(0)
  ROOT %s = f32[8] shard_map(%x), in_specs={P(x)}, out_specs={P(x)}, to_apply=%body
})"},
      // An invariant predicate (from a psum) lets a branch hold a collective.
      {"conditional_with_collective", R"(HloModule m, mesh={x=4}
%add {
  %l = f32[] parameter(0)
  %r = f32[] parameter(1)
  ROOT %s = f32[] add(%l, %r)
}
%gathered {
  %p = f32[2] parameter(0)
  %g = f32[8] all_gather_invariant(%p), axes={x}, dimension=0, tiled=true
  ROOT %r = f32[2] slice(%g), slice={[0:2]}
}
%summed {
  %p = f32[2] parameter(0)
  ROOT %r = f32[2] psum(%p), axes={x}
}
%body {
  %a = f32[2] parameter(0)
  %z = f32[] constant(0)
  %t = f32[] reduce(%a, %z), dimensions={0}, to_apply=%add
  %s = f32[] psum(%t), axes={x}
  %c = pred[] compare(%s, %z), direction=GT
  ROOT %r = f32[2] conditional(%c, %a, %a), true_computation=%gathered, false_computation=%summed
}
ENTRY %e {
  %x = f32[8] parameter(0)
  ROOT %s = f32[2] shard_map(%x), in_specs={P(x)}, out_specs={P()}, to_apply=%body
})"},
      {"call_with_collectives", R"(HloModule m, mesh={i=2, j=2}
%helper {
  %p = f32[2,2] parameter(0)
  %w = f32[2,2] parameter(1)
  %m = f32[2,2] multiply(%p, %w)
  %s = f32[2,2] psum(%m), axes={j}
  %k = s32[] axis_index(), axes={i}
  %f = f32[] convert(%k)
  %b = f32[2,2] broadcast(%f), dimensions={}
  ROOT %r = f32[2,2] add(%s, %b)
}
%body {
  %a = f32[2,2] parameter(0)
  %w = f32[2,2] parameter(1)
  ROOT %r = f32[2,2] call(%a, %w), to_apply=%helper
}
ENTRY %e {
  %x = f32[4,4] parameter(0)
  %w = f32[2,2] parameter(1)
  ROOT %s = f32[4,2] shard_map(%x, %w), in_specs={P(i,j), P()}, out_specs={P(i)}, to_apply=%body
})"},
      // Globally sharded operands whose layout differs from the in_specs are
      // resharded on the way in, and the output feeds sharded code.
      {"sharded_operands_resharded", R"(HloModule m, mesh={i=2, j=2}
%body {
  %a = f32[4,2] parameter(0)
  %s = f32[4,2] psum(%a), axes={j}
  ROOT %r = f32[4,2] exponential(%s)
}
ENTRY %e {
  %x = f32[8,4] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %y = f32[8,4] negate(%x)
  %s = f32[8,4] shard_map(%y), in_specs={P(i, j)}, out_specs={P(i, j)}, to_apply=%body
  %t = f32[8,4] add(%s, %x), sharding={devices=[1,4]0,1,2,3}
  ROOT %r = f32[8,4] multiply(%t, %t)
})"},
  };
}

class ShardMapLoweringTest : public ::testing::TestWithParam<Case> {};

TEST_P(ShardMapLoweringTest, PartitionedRunEqualsTheReference) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       hlo::ParseAndVerifyModule(GetParam().text));
  std::unique_ptr<hlo::Module> lowered = module->Clone();
  ASSERT_OK(LowerShardMaps(*lowered));
  ASSERT_OK(hlo::VerifyModule(*lowered));
  const std::string text = lowered->ToString();
  EXPECT_THAT(text, Not(HasSubstr("shard_map(")));
  EXPECT_THAT(text, HasSubstr("SPMDFullToShardShape"));
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::vector<hlo::Literal> args;
    for (const hlo::Instruction* p : module->entry()->parameters()) {
      args.push_back(testing_util::RandomLiteral(p->shape(), rng));
    }
    ASSERT_OK_AND_ASSIGN(hlo::Literal want, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal got, driver::RunPartitioned(
                                               *lowered, args, lowered->config().num_partitions));
    EXPECT_OK(testing_util::CompareLiterals(want, got, GetParam().name)) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCollective, ShardMapLoweringTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(ShardMapLoweringShapeTest, CollectivesGetMeshAxisReplicaGroups) {
  std::string text = OneOp("i=2, j=2", "f32[4,4]", "f32[2,2]", "P(i,j)", "f32[2,2]",
                           "psum(%c), axes={i}", "f32[2,4]", "P(None, j)");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  ASSERT_OK(LowerShardMaps(*module));
  const std::string lowered = module->ToString();
  // Axis i is the major one: its groups pair devices 0,2 and 1,3.
  EXPECT_THAT(lowered, HasSubstr("replica_groups={{0,2},{1,3}}"));
  EXPECT_THAT(lowered, HasSubstr("sharding={manual}"));
  EXPECT_THAT(lowered, HasSubstr("SPMDShardToFullShape"));
  EXPECT_EQ(module->config().num_partitions, 4);
}

TEST(ShardMapLoweringShapeTest, MismatchedDeviceCountIsAnError) {
  std::string text =
      "HloModule m, num_partitions=8\n" +
      OneOp("x=4", "f32[16]", "f32[4]", "P(x)", "f32[4]", "psum(%c), axes={x}", "f32[4]", "P()")
          .substr(std::string("HloModule m\n").size());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  EXPECT_THAT(LowerShardMaps(*module).message(),
              HasSubstr("runs on a mesh of 4 devices but the module has num_partitions=8"));
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

}  // namespace
}  // namespace sharc::spmd

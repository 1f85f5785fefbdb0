// Transposes of shard_map programs, on the printed programs: the design
// note's examples (reference note c.6) with variance checking on, where the
// transposes add no communication and transposing twice gives back the
// program, and off, where they show JAX's old defensive psums and
// rescaling; JAX's eqn-count tests (c.7); and every named collective's
// transpose by the dot-product test in both modes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/autodiff/shard_map_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using testing::BodyOps;
using testing::CountCommunicating;
using testing::CountOps;
using ::testing::ElementsAre;
using testing::ExpectAdjoint;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Transposed;
using testing::Typed;
using ::testing::UnorderedElementsAre;
using testing::UpToNames;

std::string Program(const std::string& mesh, const std::string& body, const std::string& entry) {
  return absl::StrCat("HloModule m, mesh={", mesh, "}\n\n%body {\n", body, "}\n\nENTRY %main {\n",
                      entry, "}\n");
}

// The same program with variance checking off (JAX's check_vma=False).
std::string Unchecked(const std::string& text) {
  return absl::StrReplaceAll(text, {{"to_apply=%body", "check_variance=false, to_apply=%body"}});
}

// ----------------------------------------------- the design note, checked --

// Example 1, g = identity: f1 = shmap(x -> psum(x), P(i) -> P()).
constexpr char kExample1[] = R"(HloModule example1, num_partitions=8, mesh={i=8}

%body {
  %x = f32[2]{V:i} parameter(0)
  ROOT %y = f32[2] psum(%x), axes={i}
}

ENTRY %main {
  %x = f32[16] parameter(0)
  ROOT %y = f32[2] shard_map(%x), in_specs={P(i)}, out_specs={P()}, to_apply=%body
}
)";

TEST(ShardMapTransposeTest, Example1TransposesToOnePbroadcast) {
  auto f1 = Typed(kExample1);
  ASSERT_NE(f1, nullptr);
  EXPECT_EQ(hlo::PrintModule(*f1), kExample1);  // already typed as written
  auto t = Transposed(*f1);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(hlo::PrintModule(*t), R"(HloModule example1, num_partitions=8, mesh={i=8}

%body.transpose {
  %y = f32[2] parameter(0)
  ROOT %x = f32[2]{V:i} pbroadcast(%y), axes={i}
}

ENTRY %main.transpose {
  %y = f32[2] parameter(0)
  ROOT %x = f32[16] shard_map(%y), in_specs={P()}, out_specs={P(i)}, to_apply=%body.transpose
}
)");
  auto tt = Transposed(*t);
  ASSERT_NE(tt, nullptr);
  EXPECT_EQ(hlo::PrintModule(*tt), kExample1);
  ExpectAdjoint(*f1, *t, 1, 1, "example 1");
  ExpectAdjoint(*t, *tt, 1, 2, "example 1 transposed");
}

TEST(ShardMapTransposeTest, Example1WithALinearG) {
  // g = negate: the transpose is t(g)(pbroadcast(ybar)), no psum.
  auto f1 = Typed(Program("i=8",
                          "  %x = f32[2] parameter(0)\n"
                          "  %g = f32[2] negate(%x)\n"
                          "  ROOT %y = f32[2] psum(%g), axes={i}\n",
                          "  %x = f32[16] parameter(0)\n"
                          "  ROOT %y = f32[2] shard_map(%x), in_specs={P(i)}, out_specs={P()}, "
                          "to_apply=%body\n"));
  ASSERT_NE(f1, nullptr);
  auto t = Transposed(*f1);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(BodyOps(*t), UnorderedElementsAre("pbroadcast", "negate"));
  auto tt = Transposed(*t);
  ASSERT_NE(tt, nullptr);
  EXPECT_EQ(UpToNames(hlo::PrintModule(*tt)), UpToNames(hlo::PrintModule(*f1)));
  ExpectAdjoint(*f1, *t, 1, 3, "example 1 with g");
}

// Example 2: f2 = shmap((x, y) -> psum(g(x)) * y, P(i), P(i) -> P(i)),
// linear in x. The forward pass needs a pbroadcast (the variance pass
// inserts it) and the transpose needs its psum.
std::string Example2() {
  return Program("i=8",
                 "  %x = f32[2] parameter(0)\n"
                 "  %y = f32[2] parameter(1)\n"
                 "  %g = f32[2] negate(%x)\n"
                 "  %s = f32[2] psum(%g), axes={i}\n"
                 "  ROOT %z = f32[2] multiply(%s, %y)\n",
                 "  %x = f32[16] parameter(0)\n"
                 "  %y = f32[16] parameter(1)\n"
                 "  ROOT %z = f32[16] shard_map(%x, %y), in_specs={P(i), P(i)}, "
                 "out_specs={P(i)}, to_apply=%body\n");
}

TEST(ShardMapTransposeTest, Example2KeepsItsPsumBothWays) {
  auto f2 = Typed(Example2());
  ASSERT_NE(f2, nullptr);
  EXPECT_EQ(CountOps(*f2, hlo::Opcode::kPBroadcast), 1);
  auto t = Transposed(*f2, 1);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(CountOps(*t, hlo::Opcode::kPSum), 1);
  EXPECT_EQ(CountOps(*t, hlo::Opcode::kPBroadcast), 1);
  // psum of zbar * y, then pbroadcast.
  EXPECT_THAT(hlo::PrintModule(*t), HasSubstr("psum(%multiply"));
  auto tt = Transposed(*t, 1);
  ASSERT_NE(tt, nullptr);
  EXPECT_EQ(CountOps(*tt, hlo::Opcode::kPSum), 1);
  EXPECT_EQ(UpToNames(hlo::PrintModule(*tt)), UpToNames(hlo::PrintModule(*f2)));
  ExpectAdjoint(*f2, *t, 1, 4, "example 2");
  ExpectAdjoint(*t, *tt, 1, 5, "example 2 transposed");
}

// The cursed identity shmap(x -> x, P() -> P()).
constexpr char kCursedIdentity[] = R"(HloModule cursed, num_partitions=8, mesh={i=8}

%body {
  ROOT %x = f32[4] parameter(0)
}

ENTRY %main {
  %x = f32[4] parameter(0)
  ROOT %y = f32[4] shard_map(%x), in_specs={P()}, out_specs={P()}, to_apply=%body
}
)";

TEST(ShardMapTransposeTest, CursedIdentityStaysTheIdentity) {
  auto f = Typed(kCursedIdentity);
  ASSERT_NE(f, nullptr);
  std::unique_ptr<Module> current = f->Clone();
  for (int k = 1; k <= 5; ++k) {
    current = Transposed(*current);
    ASSERT_NE(current, nullptr);
    EXPECT_THAT(BodyOps(*current), IsEmpty()) << k << " transpositions";
    ExpectAdjoint(*f, *current, 1, 10 + k, "cursed identity");  // it is self-adjoint
    if (k % 2 == 0) {
      EXPECT_EQ(hlo::PrintModule(*current), kCursedIdentity);
    }
  }
}

// Example 4: all_gather to an unmapped output; all_gather_invariant makes it
// invariant, and its transpose is pscatter, a local slice.
constexpr char kExample4[] = R"(HloModule example4, num_partitions=8, mesh={i=8}

%body {
  %x = f32[2]{V:i} parameter(0)
  ROOT %y = f32[16] all_gather_invariant(%x), axes={i}, dimension=0, tiled=true
}

ENTRY %main {
  %x = f32[16] parameter(0)
  ROOT %y = f32[16] shard_map(%x), in_specs={P(i)}, out_specs={P()}, to_apply=%body
}
)";

TEST(ShardMapTransposeTest, Example4AllGatherInvariantTransposesToPscatter) {
  auto f4 = Typed(kExample4);
  ASSERT_NE(f4, nullptr);
  auto t = Transposed(*f4);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(BodyOps(*t), ElementsAre("pscatter"));
  EXPECT_EQ(CountCommunicating(*t), 0);
  EXPECT_THAT(hlo::PrintModule(*t),
              HasSubstr("ROOT %x = f32[2]{V:i} pscatter(%y), axes={i}, dimension=0, tiled=true"));
  auto tt = Transposed(*t);
  ASSERT_NE(tt, nullptr);
  EXPECT_EQ(hlo::PrintModule(*tt), kExample4);
  ExpectAdjoint(*f4, *t, 1, 6, "example 4");
  ExpectAdjoint(*t, *tt, 1, 7, "example 4 transposed");
}

// Example 5: all_gather to a mapped output: psum_scatter(zbar * y), with or
// without the check.
std::string Example5() {
  return Program("i=8",
                 "  %x = f32[2] parameter(0)\n"
                 "  %y = f32[16] parameter(1)\n"
                 "  %g = f32[16] all_gather(%x), axes={i}, dimension=0, tiled=true\n"
                 "  ROOT %z = f32[16] multiply(%g, %y)\n",
                 "  %x = f32[16] parameter(0)\n"
                 "  %y = f32[128] parameter(1)\n"
                 "  ROOT %z = f32[128] shard_map(%x, %y), in_specs={P(i), P(i)}, "
                 "out_specs={P(i)}, to_apply=%body\n");
}

TEST(ShardMapTransposeTest, Example5AllGatherTransposesToPsumScatter) {
  for (bool checked : {true, false}) {
    auto f5 = Typed(checked ? Example5() : Unchecked(Example5()));
    ASSERT_NE(f5, nullptr);
    auto t = Transposed(*f5, 1);
    ASSERT_NE(t, nullptr);
    EXPECT_THAT(BodyOps(*t), ElementsAre("multiply", "psum_scatter")) << checked;
    EXPECT_THAT(hlo::PrintModule(*t), HasSubstr("psum_scatter(%multiply"));
    auto tt = Transposed(*t, 1);
    ASSERT_NE(tt, nullptr);
    EXPECT_EQ(UpToNames(hlo::PrintModule(*tt)), UpToNames(hlo::PrintModule(*f5)));
    ExpectAdjoint(*f5, *t, 1, 8, "example 5");
  }
}

// --------------------------------------------- the design note, unchecked --

TEST(ShardMapTransposeTest, UncheckedExample1RescalesAndPsums) {
  auto f1 = Typed(Unchecked(kExample1));
  ASSERT_NE(f1, nullptr);
  auto t = Transposed(*f1);
  ASSERT_NE(t, nullptr);
  // t(g)(psum(ybar / 8)): an all-reduce where the checked form has none.
  EXPECT_THAT(BodyOps(*t), ElementsAre("constant", "broadcast", "divide", "psum"));
  EXPECT_THAT(hlo::PrintModule(*t), HasSubstr("f32[] constant(8)"));
  ExpectAdjoint(*f1, *t, 1, 20, "unchecked example 1");
  // Transposing again does not give back f1, it grows: psum transposes to
  // psum, and the now unmapped input adds the defensive psum(psum(.)/8).
  auto tt = Transposed(*t);
  ASSERT_NE(tt, nullptr);
  EXPECT_NE(hlo::PrintModule(*tt), hlo::PrintModule(*f1));
  EXPECT_EQ(CountOps(*tt, hlo::Opcode::kPSum), 2);
  ExpectAdjoint(*t, *tt, 1, 21, "unchecked example 1 transposed");
}

TEST(ShardMapTransposeTest, UncheckedExample2KeepsItsPsum) {
  auto f2 = Typed(Unchecked(Example2()));
  ASSERT_NE(f2, nullptr);
  EXPECT_EQ(CountOps(*f2, hlo::Opcode::kPBroadcast), 0);  // no types, no casts
  auto t = Transposed(*f2, 1);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(CountOps(*t, hlo::Opcode::kPSum), 1);
  ExpectAdjoint(*f2, *t, 1, 22, "unchecked example 2");
}

TEST(ShardMapTransposeTest, UncheckedCursedIdentityGrows) {
  auto f = Typed(Unchecked(kCursedIdentity));
  ASSERT_NE(f, nullptr);
  std::unique_ptr<Module> current = f->Clone();
  for (int k = 1; k <= 3; ++k) {
    current = Transposed(*current);
    ASSERT_NE(current, nullptr);
    // t adds psum(x/8), t∘t psum(psum(x/8)/8), ...
    EXPECT_EQ(CountOps(*current, hlo::Opcode::kPSum), k);
    EXPECT_EQ(CountOps(*current, hlo::Opcode::kDivide), k);
    ExpectAdjoint(*f, *current, 1, 30 + k, "unchecked cursed identity");
  }
}

TEST(ShardMapTransposeTest, UncheckedExample4IsPsumScatterOfTheRescaledCotangent) {
  // With all_gather_invariant, and with the all_gather JAX's old programs
  // used (legal only unchecked: its result varies).
  for (const char* gather : {"all_gather_invariant", "all_gather"}) {
    auto f4 = Typed(absl::StrReplaceAll(Unchecked(kExample4), {{"all_gather_invariant", gather}}));
    ASSERT_NE(f4, nullptr);
    auto t = Transposed(*f4);
    ASSERT_NE(t, nullptr);
    EXPECT_THAT(BodyOps(*t), ElementsAre("constant", "broadcast", "divide", "psum_scatter"))
        << gather;
    ExpectAdjoint(*f4, *t, 1, 23, absl::StrCat("unchecked example 4, ", gather));
  }
}

// ----------------------------------------- JAX's eqn-count tests (c.7) ----

TEST(ShardMapTransposeTest, FanOutTransposesToPsum) {
  // test_fanout_specs_transpose_to_psum: identity, P() -> P(x).
  auto f = Typed(Program("x=4", "  ROOT %a = f32[4] parameter(0)\n",
                         "  %a = f32[4] parameter(0)\n"
                         "  ROOT %b = f32[16] shard_map(%a), in_specs={P()}, out_specs={P(x)}, "
                         "to_apply=%body\n"));
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(BodyOps(*f), ElementsAre("pbroadcast"));
  auto t = Transposed(*f);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(BodyOps(*t), ElementsAre("psum"));
  EXPECT_THAT(hlo::PrintModule(*t), HasSubstr("psum(%a.pbroadcast.0), axes={x}"));
  ExpectAdjoint(*f, *t, 1, 40, "fan-out");
}

TEST(ShardMapTransposeTest, FanInPsumTransposesToFanOut) {
  // test_fanin_psum_transposes_to_fanout: psum, P(x) -> P().
  auto f = Typed(Program("x=4",
                         "  %a = f32[1] parameter(0)\n"
                         "  ROOT %s = f32[1] psum(%a), axes={x}\n",
                         "  %a = f32[4] parameter(0)\n"
                         "  ROOT %b = f32[1] shard_map(%a), in_specs={P(x)}, out_specs={P()}, "
                         "to_apply=%body\n"));
  ASSERT_NE(f, nullptr);
  auto t = Transposed(*f);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(BodyOps(*t), ElementsAre("pbroadcast"));
  ExpectAdjoint(*f, *t, 1, 41, "fan-in");
}

TEST(ShardMapTransposeTest, PsumWithImplicitFanOutSelfTransposes) {
  // test_psum_with_implicit_fanout_self_transposes: psum, P(x) -> P(x).
  auto f = Typed(Program("x=4",
                         "  %a = f32[1] parameter(0)\n"
                         "  ROOT %s = f32[1] psum(%a), axes={x}\n",
                         "  %a = f32[4] parameter(0)\n"
                         "  ROOT %b = f32[4] shard_map(%a), in_specs={P(x)}, out_specs={P(x)}, "
                         "to_apply=%body\n"));
  ASSERT_NE(f, nullptr);
  EXPECT_THAT(BodyOps(*f), ElementsAre("psum", "pbroadcast"));
  auto t = Transposed(*f);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(BodyOps(*t), ElementsAre("psum", "pbroadcast"));
  ExpectAdjoint(*f, *t, 1, 42, "psum with fan-out");
}

// ------------------------------------------- every collective, both modes --

struct CollectiveCase {
  std::string name;
  std::string body;       // instructions after `%x = <local> parameter(0)`
  std::string local;      // the body parameter's shape
  std::string global_in;  // the entry parameter's shape
  std::string in_spec;
  std::string out_spec;
  std::string global_out;
};

std::vector<CollectiveCase> CollectiveCases() {
  return {
      {"psum", "  ROOT %r = f32[2,2] psum(%x), axes={i}\n", "f32[2,2]", "f32[4,4]", "P(i, j)",
       "P(None, j)", "f32[2,4]"},
      {"psum_two_axes", "  ROOT %r = f32[2,2] psum(%x), axes={i,j}\n", "f32[2,2]", "f32[4,4]",
       "P(i, j)", "P()", "f32[2,2]"},
      {"pbroadcast", "  ROOT %r = f32[4,2] pbroadcast(%x), axes={i}\n", "f32[4,2]", "f32[4,4]",
       "P(None, j)", "P(i, j)", "f32[8,4]"},
      {"all_gather", "  ROOT %r = f32[2,4] all_gather(%x), axes={j}, dimension=1, tiled=true\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i, j)", "f32[4,8]"},
      {"all_gather_untiled", "  ROOT %r = f32[2,2,2] all_gather(%x), axes={i}, dimension=0\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i, j)", "f32[4,4,2]"},
      {"all_gather_invariant",
       "  ROOT %r = f32[2,4] all_gather_invariant(%x), axes={j}, dimension=1, tiled=true\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i)", "f32[4,4]"},
      {"all_gather_invariant_untiled",
       "  ROOT %r = f32[2,2,2] all_gather_invariant(%x), axes={i}, dimension=2\n", "f32[2,2]",
       "f32[4,4]", "P(i, j)", "P(None, j)", "f32[2,4,2]"},
      {"psum_scatter", "  ROOT %r = f32[1,2] psum_scatter(%x), axes={j}, dimension=0, tiled=true\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i, j)", "f32[2,4]"},
      {"psum_scatter_untiled", "  ROOT %r = f32[2] psum_scatter(%x), axes={i}, dimension=0\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P((i,j))", "f32[8]"},
      {"pscatter", "  ROOT %r = f32[2,2] pscatter(%x), axes={j}, dimension=1, tiled=true\n",
       "f32[2,4]", "f32[4,4]", "P(i)", "P(i, j)", "f32[4,4]"},
      {"pscatter_untiled", "  ROOT %r = f32[2] pscatter(%x), axes={j}, dimension=1\n", "f32[2,2]",
       "f32[4,2]", "P(i)", "P((i,j))", "f32[8]"},
      {"all_to_all",
       "  ROOT %r = f32[4,1] all_to_all(%x), axes={j}, split_dimension=1, concat_dimension=0, "
       "tiled=true\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i, j)", "f32[8,2]"},
      {"ppermute_cycle",
       "  ROOT %r = f32[2,2] ppermute(%x), axes={i,j}, pairs={{0,1},{1,2},{2,3},{3,0}}\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i, j)", "f32[4,4]"},
      {"ppermute_partial", "  ROOT %r = f32[2,2] ppermute(%x), axes={j}, pairs={{0,1}}\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i, j)", "f32[4,4]"},
      {"axis_index_scale",
       "  %k = s32[] axis_index(), axes={i,j}\n  %f = f32[] convert(%k)\n"
       "  %b = f32[2,2] broadcast(%f), dimensions={}\n  ROOT %r = f32[2,2] multiply(%x, %b)\n",
       "f32[2,2]", "f32[4,4]", "P(i, j)", "P(i, j)", "f32[4,4]"},
      {"pbroadcast_then_psum",
       "  %v = f32[4,2] pbroadcast(%x), axes={i}\n  ROOT %r = f32[4,2] psum(%v), axes={i}\n",
       "f32[4,2]", "f32[4,4]", "P(None, j)", "P(None, j)", "f32[4,4]"},
  };
}

class CollectiveTransposeTest : public ::testing::TestWithParam<CollectiveCase> {};

TEST_P(CollectiveTransposeTest, DotProductTestBothModes) {
  const CollectiveCase& c = GetParam();
  const std::string text =
      Program("i=2, j=2", absl::StrCat("  %x = ", c.local, " parameter(0)\n", c.body),
              absl::StrCat("  %x = ", c.global_in, " parameter(0)\n  ROOT %y = ", c.global_out,
                           " shard_map(%x), in_specs={", c.in_spec, "}, out_specs={", c.out_spec,
                           "}, to_apply=%body\n"));
  for (bool checked : {true, false}) {
    const std::string what = absl::StrCat(c.name, checked ? " checked" : " unchecked");
    auto f = Typed(checked ? text : Unchecked(text));
    ASSERT_NE(f, nullptr) << what;
    auto t = Transposed(*f);
    ASSERT_NE(t, nullptr) << what;
    ExpectAdjoint(*f, *t, 1, 50, what);
    auto tt = Transposed(*t);
    ASSERT_NE(tt, nullptr) << what;
    ExpectAdjoint(*t, *tt, 1, 51, what + " transposed");
    if (checked) {
      // Exact transposes: twice is the original, up to names.
      EXPECT_EQ(UpToNames(hlo::PrintModule(*tt)), UpToNames(hlo::PrintModule(*f))) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Collectives, CollectiveTransposeTest,
                         ::testing::ValuesIn(CollectiveCases()),
                         [](const ::testing::TestParamInfo<CollectiveCase>& info) {
                           return info.param.name;
                         });

TEST(ShardMapTransposeTest, PartnersFollowTheTable) {
  auto one = [](const std::string& body, const std::string& local, const std::string& in,
                const std::string& out, const std::string& global_out) {
    return Typed(Program("i=2, j=2", absl::StrCat("  %x = ", local, " parameter(0)\n", body),
                         absl::StrCat("  %x = f32[4,4] parameter(0)\n  ROOT %y = ", global_out,
                                      " shard_map(%x), in_specs={", in, "}, out_specs={", out,
                                      "}, to_apply=%body\n")));
  };
  auto a2a =
      one("  ROOT %r = f32[4,1] all_to_all(%x), axes={j}, split_dimension=1, "
          "concat_dimension=0, tiled=true\n",
          "f32[2,2]", "P(i, j)", "P(i, j)", "f32[8,2]");
  ASSERT_NE(a2a, nullptr);
  auto t = Transposed(*a2a);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(hlo::PrintModule(*t), HasSubstr("all_to_all(%r), axes={j}, split_dimension=0, "
                                              "concat_dimension=1, tiled=true"));
  auto perm = one("  ROOT %r = f32[2,2] ppermute(%x), axes={i,j}, pairs={{0,1},{1,3}}\n",
                  "f32[2,2]", "P(i, j)", "P(i, j)", "f32[4,4]");
  ASSERT_NE(perm, nullptr);
  t = Transposed(*perm);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(hlo::PrintModule(*t), HasSubstr("ppermute(%r), axes={i,j}, pairs={{1,0},{3,1}}"));
  auto scatter = one("  ROOT %r = f32[1,2] psum_scatter(%x), axes={j}, dimension=0, tiled=true\n",
                     "f32[2,2]", "P(i, j)", "P(i, j)", "f32[2,4]");
  ASSERT_NE(scatter, nullptr);
  t = Transposed(*scatter);
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(BodyOps(*t), ElementsAre("all_gather"));
}

// ------------------------------------------------------------- errors ----

TEST(ShardMapTransposeTest, PmaxIsNotLinear) {
  auto f = Typed(Program("x=4",
                         "  %a = f32[1] parameter(0)\n"
                         "  ROOT %m = f32[1] pmax(%a), axes={x}\n",
                         "  %a = f32[4] parameter(0)\n"
                         "  ROOT %b = f32[1] shard_map(%a), in_specs={P(x)}, out_specs={P()}, "
                         "to_apply=%body\n"));
  ASSERT_NE(f, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> t = TransposeModule(*f);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("cannot transpose pmax: it is not linear"));
  EXPECT_THAT(t.status().message(), HasSubstr("%m"));
}

TEST(ShardMapTransposeTest, AnUntypedCheckedBodyIsRefusedNamingTheCast) {
  // Without the variance pass, the invariant %a meets the varying %b in an
  // add: transposing that without the psum of the implicit cast would be
  // wrong, so it is refused.
  auto f = testing::Parse(Program("x=4",
                                  "  %a = f32[2] parameter(0)\n"
                                  "  %b = f32[2]{V:x} parameter(1)\n"
                                  "  ROOT %c = f32[2]{V:x} add(%a, %b)\n",
                                  "  %a = f32[2] parameter(0)\n"
                                  "  %b = f32[8] parameter(1)\n"
                                  "  ROOT %y = f32[8] shard_map(%a, %b), in_specs={P(), P(x)}, "
                                  "out_specs={P(x)}, to_apply=%body\n"));
  ASSERT_NE(f, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> t = TransposeModule(*f);
  EXPECT_THAT(t, sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("linear operand %a varies over {}")));
  EXPECT_THAT(t.status().message(), HasSubstr("variance pass"));
  // Typed, it transposes to a psum for %a.
  auto typed = Typed(hlo::PrintModule(*f));
  ASSERT_NE(typed, nullptr);
  auto good = Transposed(*typed);
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(CountOps(*good, hlo::Opcode::kPSum), 1);
  ExpectAdjoint(*typed, *good, 2, 60, "mixed add");
}

TEST(ShardMapTransposeTest, NonLinearBodyIsRefused) {
  auto f = Typed(Program("x=4",
                         "  %a = f32[1] parameter(0)\n"
                         "  ROOT %m = f32[1] multiply(%a, %a)\n",
                         "  %a = f32[4] parameter(0)\n"
                         "  ROOT %b = f32[4] shard_map(%a), in_specs={P(x)}, out_specs={P(x)}, "
                         "to_apply=%body\n"));
  ASSERT_NE(f, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> t = TransposeModule(*f);
  EXPECT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("multiply"));
}

}  // namespace
}  // namespace sharc::autodiff

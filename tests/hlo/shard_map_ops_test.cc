// shard_map and the named-axis collectives through the reference
// interpreter: every collective against hand-computed values on 1-D and 2-D
// meshes (JAX's shard_map test facts), plus the verifier's errors.
#include <numeric>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

absl::StatusOr<Literal> RunText(const std::string& text, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseAndVerifyModule(text);
  if (!module.ok()) return module.status();
  return Evaluate(**module, args);
}

std::vector<float> Floats(const Literal& l) {
  auto d = l.data<float>();
  return std::vector<float>(d.begin(), d.end());
}

Literal Iota(std::vector<int64_t> dims) {
  Literal l(Shape(PrimitiveType::kF32, std::move(dims)));
  for (int64_t i = 0; i < l.num_elements(); ++i) l.data<float>()[i] = static_cast<float>(i);
  return l;
}

std::vector<float> IotaValues(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

// One body around one collective: x (in_spec) -> op -> out_spec.
std::string OneOp(const std::string& mesh, const std::string& in_shape,
                  const std::string& local_in, const std::string& in_spec,
                  const std::string& local_out, const std::string& op,
                  const std::string& out_shape, const std::string& out_spec) {
  return "HloModule m\n%body {\n  %a = " + local_in + " parameter(0)\n  ROOT %r = " + local_out +
         " " + op + "\n}\nENTRY %e {\n  %x = " + in_shape + " parameter(0)\n  ROOT %s = " +
         out_shape + " shard_map(%x), mesh={" + mesh + "}, in_specs={" + in_spec +
         "}, out_specs={" + out_spec + "}, to_apply=%body\n}\n";
}

TEST(ShardMapEvalTest, DocExamplePsumAddsTheFourBlocks) {
  std::string text = OneOp("i=4", "f32[16]", "f32[4]", "P(i)", "f32[4]", "psum(%a), axes={i}",
                           "f32[4]", "P()");
  Literal x = Literal::Vector<float>({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2});
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {x}));
  EXPECT_THAT(Floats(r), ElementsAre(22, 20, 12, 17));
}

TEST(ShardMapEvalTest, RepeatedPsumMultipliesByTheAxisSize) {
  // JAX test_repeated_psum_allowed: psum(psum(arange(4))) = [24].
  std::string text = R"(HloModule m
%body {
  %a = f32[1] parameter(0)
  %s = f32[1] psum(%a), axes={i}
  ROOT %t = f32[1] psum(%s), axes={i}
}
ENTRY %e {
  %x = f32[4] parameter(0)
  ROOT %r = f32[1] shard_map(%x), mesh={i=4}, in_specs={P(i)}, out_specs={P()}, to_apply=%body
})";
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({4})}));
  EXPECT_THAT(Floats(r), ElementsAre(24));
}

TEST(ShardMapEvalTest, AxisIndexOnTwoAxesIsRowMajor) {
  // JAX test_axis_index_twoaxes: axis_index((i,j)) on (4,2) = arange(8).reshape(4,2).
  std::string text = R"(HloModule m, mesh={i=4, j=2}
%body {
  %k = s32[] axis_index(), axes={i,j}
  ROOT %r = s32[1,1] reshape(%k)
}
ENTRY %e {
  ROOT %r = s32[4,2] shard_map(), in_specs={}, out_specs={P(i,j)}, to_apply=%body
})";
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {}));
  auto d = r.data<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(d.begin(), d.end()), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

TEST(ShardMapEvalTest, AxisIndexOfOneAxis) {
  std::string text = R"(HloModule m
%body {
  %k = s32[] axis_index(), axes={j}
  ROOT %r = s32[1,1] reshape(%k)
}
ENTRY %e {
  ROOT %r = s32[4,2] shard_map(), mesh={i=4, j=2}, in_specs={}, out_specs={P(i,j)}, to_apply=%body
})";
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {}));
  auto d = r.data<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(d.begin(), d.end()), ElementsAre(0, 1, 0, 1, 0, 1, 0, 1));
}

TEST(ShardMapEvalTest, AllGatherTiledRebuildsTheArray) {
  for (const char* op : {"all_gather", "all_gather_invariant"}) {
    std::string text = OneOp("x=4", "f32[8]", "f32[2]", "P(x)", "f32[8]",
                             std::string(op) + "(%a), axes={x}, dimension=0, tiled=true",
                             "f32[8]", "P()");
    ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({8})}));
    EXPECT_THAT(Floats(r), ElementsAreArray(IotaValues(8))) << op;
  }
}

TEST(ShardMapEvalTest, AllGatherUntiledStacks) {
  std::string text = OneOp("x=4", "f32[4]", "f32[1]", "P(x)", "f32[4,1]",
                           "all_gather_invariant(%a), axes={x}, dimension=0", "f32[4,1]", "P()");
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({4})}));
  EXPECT_EQ(r.shape(), Shape(PrimitiveType::kF32, {4, 1}));
  EXPECT_THAT(Floats(r), ElementsAre(0, 1, 2, 3));
}

TEST(ShardMapEvalTest, PsumScatterKeepsThisDevicesBlockOfTheSum) {
  // x[4,8] by rows over 4 devices; device i keeps columns 2i..2i+1 of the
  // column sums.
  std::string text = OneOp("x=4", "f32[4,8]", "f32[1,8]", "P(x)", "f32[1,2]",
                           "psum_scatter(%a), axes={x}, dimension=1, tiled=true", "f32[4,2]",
                           "P(x)");
  Literal x = Iota({4, 8});
  std::vector<float> expected;
  for (int i = 0; i < 4; ++i) {
    for (int c = 2 * i; c < 2 * i + 2; ++c) {
      float sum = 0;
      for (int r = 0; r < 4; ++r) sum += static_cast<float>(r * 8 + c);
      expected.push_back(sum);
    }
  }
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {x}));
  EXPECT_THAT(Floats(r), ElementsAreArray(expected));
}

TEST(ShardMapEvalTest, PscatterSlicesWithoutCommunication) {
  std::string text = OneOp("x=4", "f32[8]", "f32[8]", "P()", "f32[2]",
                           "pscatter(%a), axes={x}, dimension=0, tiled=true", "f32[8]", "P(x)");
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({8})}));
  EXPECT_THAT(Floats(r), ElementsAreArray(IotaValues(8)));
}

TEST(ShardMapEvalTest, AllToAllRowsToColumnsIsTheIdentity) {
  // JAX test_all_to_all_grad: 8x8 by rows -> all_to_all(split 1, concat 0)
  // -> by columns gives the input back.
  std::string text = OneOp("x=4", "f32[8,8]", "f32[2,8]", "P(x)", "f32[8,2]",
                           "all_to_all(%a), axes={x}, split_dimension=1, concat_dimension=0, "
                           "tiled=true",
                           "f32[8,8]", "P(None, x)");
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({8, 8})}));
  EXPECT_THAT(Floats(r), ElementsAreArray(IotaValues(64)));
}

TEST(ShardMapEvalTest, PpermuteShiftsAlongTheAxis) {
  std::string text = OneOp("x=4", "f32[4]", "f32[1]", "P(x)", "f32[1]",
                           "ppermute(%a), axes={x}, pairs={{0,1},{1,2},{2,3},{3,0}}", "f32[4]",
                           "P(x)");
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({4})}));
  EXPECT_THAT(Floats(r), ElementsAre(3, 0, 1, 2));
}

TEST(ShardMapEvalTest, PpermuteLeavesZerosWhereNoPairArrives) {
  std::string text = OneOp("x=4", "f32[4]", "f32[1]", "P(x)", "f32[1]",
                           "ppermute(%a), axes={x}, pairs={{0,1}}", "f32[4]", "P(x)");
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Literal::Vector<float>({5, 6, 7, 8})}));
  EXPECT_THAT(Floats(r), ElementsAre(0, 5, 0, 0));
}

TEST(ShardMapEvalTest, PmaxAndPmin) {
  Literal x = Literal::Vector<float>({3, 1, 4, 1});
  ASSERT_OK_AND_ASSIGN(Literal mx, RunText(OneOp("x=4", "f32[4]", "f32[1]", "P(x)", "f32[1]",
                                             "pmax(%a), axes={x}", "f32[1]", "P()"),
                                       {x}));
  EXPECT_THAT(Floats(mx), ElementsAre(4));
  ASSERT_OK_AND_ASSIGN(Literal mn, RunText(OneOp("x=4", "f32[4]", "f32[1]", "P(x)", "f32[1]",
                                             "pmin(%a), axes={x}", "f32[1]", "P()"),
                                       {x}));
  EXPECT_THAT(Floats(mn), ElementsAre(1));
}

TEST(ShardMapEvalTest, PsumOverOneAxisOfATwoDimensionalMesh) {
  // x[4,4] on P(i,j) over {i=2, j=2}; psum over j leaves row block i with
  // x[r, c] + x[r, c+2].
  std::string text = OneOp("i=2, j=2", "f32[4,4]", "f32[2,2]", "P(i,j)", "f32[2,2]",
                           "psum(%a), axes={j}", "f32[4,2]", "P(i)");
  std::vector<float> expected;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 2; ++c) expected.push_back(static_cast<float>(4 * r + c + 4 * r + c + 2));
  }
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({4, 4})}));
  EXPECT_THAT(Floats(r), ElementsAreArray(expected));
}

TEST(ShardMapEvalTest, PsumOverBothAxesAndAllGatherOverAPairOfAxes) {
  Literal x = Iota({8});
  ASSERT_OK_AND_ASSIGN(Literal s, RunText(OneOp("i=2, j=4", "f32[8]", "f32[1]", "P((i,j))", "f32[1]",
                                            "psum(%a), axes={i,j}", "f32[1]", "P()"),
                                      {x}));
  EXPECT_THAT(Floats(s), ElementsAre(28));
  // Gathering over (j,i) orders blocks by j major: device (i,j) holds x[4i+j].
  ASSERT_OK_AND_ASSIGN(Literal g, RunText(OneOp("i=2, j=4", "f32[8]", "f32[1]", "P((i,j))", "f32[8]",
                                            "all_gather(%a), axes={j,i}, dimension=0, tiled=true",
                                            "f32[8]", "P()"),
                                      {x}));
  EXPECT_THAT(Floats(g), ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
}

TEST(ShardMapEvalTest, TupleOutputsAndTwoOperands) {
  std::string text = R"(HloModule m
%body {
  %a = f32[2] parameter(0)
  %b = f32[4] parameter(1)
  %s = f32[2] psum(%a), axes={x}
  ROOT %t = (f32[2], f32[4]) tuple(%s, %b)
}
ENTRY %e {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  ROOT %r = (f32[2], f32[8]) shard_map(%x, %y), mesh={x=2}, in_specs={P(x), P()}, out_specs={P(), P(x)}, to_apply=%body
})";
  ASSERT_OK_AND_ASSIGN(Literal r, RunText(text, {Iota({4}), Literal::Vector<float>({1, 2, 3, 4})}));
  EXPECT_THAT(Floats(r.element(0)), ElementsAre(2, 4));
  EXPECT_THAT(Floats(r.element(1)), ElementsAre(1, 2, 3, 4, 1, 2, 3, 4));
}

// ---------------------------------------------------------------- errors --

TEST(ShardMapVerifyTest, AxisNotInTheMesh) {
  std::string text = OneOp("x=4", "f32[4]", "f32[1]", "P(x)", "f32[1]", "psum(%a), axes={y}",
                           "f32[1]", "P()");
  EXPECT_THAT(ParseAndVerifyModule(text).status().message(),
              HasSubstr("names axis 'y', which is not in the mesh {x}"));
}

TEST(ShardMapVerifyTest, ScatterDimensionNotDivisible) {
  std::string text = OneOp("x=2", "f32[6]", "f32[3]", "P(x)", "f32[1]",
                           "psum_scatter(%a), axes={x}, dimension=0, tiled=true", "f32[2]", "P(x)");
  EXPECT_THAT(ParseAndVerifyModule(text).status().message(),
              HasSubstr("dimension 0 of size 3 is not divisible by the 2 devices of axes {x}"));
}

TEST(ShardMapVerifyTest, GatherDimensionOutOfRange) {
  std::string text = OneOp("x=2", "f32[4]", "f32[2]", "P(x)", "f32[4]",
                           "all_gather(%a), axes={x}, dimension=1, tiled=true", "f32[4]", "P()");
  EXPECT_THAT(ParseAndVerifyModule(text).status().message(),
              HasSubstr("dimension 1 is out of range for f32[2]"));
}

TEST(ShardMapVerifyTest, InSpecCountAndDivisibility) {
  std::string text = OneOp("x=4", "f32[6]", "f32[2]", "P(x)", "f32[2]", "psum(%a), axes={x}",
                           "f32[2]", "P()");
  EXPECT_THAT(ParseAndVerifyModule(text).status().message(),
              HasSubstr("dimension 0 of f32[6] has size 6, not divisible by the 4 devices"));
  std::string two_specs = OneOp("x=4", "f32[8]", "f32[2]", "P(x), P()", "f32[2]",
                                "psum(%a), axes={x}", "f32[2]", "P()");
  EXPECT_THAT(ParseAndVerifyModule(two_specs).status().message(),
              HasSubstr("has 1 operands but 2 in_specs"));
}

TEST(ShardMapVerifyTest, BodySignatureMustBeTheLocalShapes) {
  std::string text = OneOp("x=4", "f32[8]", "f32[8]", "P(x)", "f32[8]", "psum(%a), axes={x}",
                           "f32[8]", "P()");
  EXPECT_FALSE(ParseAndVerifyModule(text).ok());
}

TEST(ShardMapVerifyTest, CollectiveOutsideAnyMesh) {
  std::string text = R"(HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  ROOT %s = f32[4] psum(%x), axes={x}
})";
  EXPECT_THAT(ParseAndVerifyModule(text).status().message(),
              HasSubstr("neither inside a shard_map body nor in a module with a mesh"));
}

TEST(ShardMapVerifyTest, BadSpecTextIsAParseErrorWithALocation) {
  std::string text = OneOp("x=4", "f32[8]", "f32[2]", "Q(x)", "f32[2]", "psum(%a), axes={x}",
                           "f32[2]", "P()");
  absl::Status st = ParseModule(text).status();
  EXPECT_THAT(st.message(), HasSubstr("invalid 'in_specs': expected P(...), found 'Q'"));
  EXPECT_THAT(st.message(), HasSubstr(":8:"));
}

// Found by tests/fuzz/shard_map_attrs_fuzzer.cc: P((None)) read as a tuple
// of one axis named None, which prints as P(None), "not split".
TEST(ShardMapVerifyTest, NoneInsideAnAxisTupleIsAParseError) {
  std::string text = OneOp("x=4", "f32[8]", "f32[8]", "P((None))", "f32[8]", "add(%a, %a)",
                           "f32[8]", "P()");
  EXPECT_THAT(ParseModule(text).status().message(),
              HasSubstr("invalid 'in_specs': 'None' cannot be in an axis tuple"));
}

// Found while writing the shard_map attribute fuzzer, and confirmed by the
// UBSan fuzz build: the sizes of a shard_map's own mesh were multiplied
// unbounded (signed overflow in ManualMesh::GroupSize). They are now bounded
// as the module header's mesh is.
TEST(ShardMapVerifyTest, MeshOfMoreDevicesThanAnyModuleMayUseIsAParseError) {
  std::string text = OneOp("i=1099511627776, j=1099511627776", "f32[4]", "f32[4]", "P()",
                           "f32[4]", "add(%a, %a)", "f32[4]", "P()");
  EXPECT_THAT(ParseModule(text).status().message(),
              HasSubstr("invalid 'mesh': mesh has more than 1048576 devices"));
}

// -------------------------------------------------------------- variance --

TEST(VarianceTextTest, SuffixRoundTripsAndLayoutsAreStillSkipped) {
  std::string text = R"(HloModule m, mesh={i=2, j=2}
ENTRY %e {
  %a = f32[3]{V:i} parameter(0)
  %b = f32[2,3]{1,0} parameter(1)
  %c = f32[3]{V:i,j} pbroadcast(%a), axes={j}
  ROOT %t = (f32[3], f32[2,3]){V:i,j} tuple(%c, %b)
})";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> m, ParseAndVerifyModule(text));
  EXPECT_THAT(m->entry()->parameter(0)->variance(), ElementsAre("i"));
  EXPECT_TRUE(m->entry()->parameter(1)->variance().empty());
  EXPECT_THAT(m->entry()->root()->variance(), ElementsAre("i", "j"));
  std::string printed = m->ToString();
  EXPECT_THAT(printed, HasSubstr("%a = f32[3]{V:i} parameter(0)"));
  EXPECT_THAT(printed, HasSubstr("%b = f32[2,3] parameter(1)"));
  EXPECT_THAT(printed, HasSubstr("%t = (f32[3], f32[2,3]){V:i,j} tuple"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> again, ParseAndVerifyModule(printed));
  EXPECT_EQ(again->ToString(), printed);
  EXPECT_EQ(m->Clone()->ToString(), printed);
}

TEST(VarianceTextTest, RepeatedAxisIsAnError) {
  std::string text = R"(HloModule m
ENTRY %e {
  ROOT %a = f32[3]{V:i,i} parameter(0)
})";
  EXPECT_THAT(ParseModule(text).status().message(),
              HasSubstr("axis 'i' appears twice in the device variance"));
}

}  // namespace
}  // namespace sharc::hlo

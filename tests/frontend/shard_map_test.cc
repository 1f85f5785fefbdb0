// shard_map and the named-axis collectives through the C++ API: JAX's
// shard_map test facts (reference note, section c.7), the variance pass
// run at the trace (pbroadcasts visible, the out_specs error at the user's
// line), runs on a mesh through jit equal to the interpreter, and the
// gradient of a data-parallel loss equal to the unsharded one.
#include "frontend/shard_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "frontend/autodiff.h"
#include "frontend/mapreduce.h"
#include "frontend/named_collectives.h"
#include "hlo/eval/interpreter.h"
#include "tests/frontend/frontend_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::frontend {
namespace {

using ::sharc::frontend::testing::F32;
using ::sharc::frontend::testing::Ramp;
using ::sharc::frontend::testing::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pointwise;

spmd::Mesh MeshOf(const char* text) { return *spmd::Mesh::Parse(text); }

// Runs `f` through jit (partitioned on the shard_map's mesh) and through
// the interpreter on the traced module; both must agree; returns jit's.
absl::StatusOr<hlo::Literal> RunBothWays(const Jitted& f, const std::vector<hlo::Literal>& args) {
  std::vector<HostTree> leaves;
  for (const hlo::Literal& a : args) leaves.push_back(HostTree(a));
  const HostTree tree = HostTree::list(leaves);
  absl::StatusOr<HostTree> out = f(tree);
  if (!out.ok()) return out.status();
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = f.Lower(tree);
  if (!module.ok()) return module.status();
  absl::StatusOr<hlo::Literal> reference = hlo::Evaluate(**module, args);
  if (!reference.ok()) return reference.status();
  const hlo::Literal got = out->leaf();
  const std::vector<double> a = Values(got), b = Values(reference->element(0));
  if (a.size() != b.size()) return absl::InternalError("jit and the interpreter differ in size");
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::abs(a[i] - b[i]) > 1e-4 * (1 + std::abs(b[i]))) {
      return absl::InternalError(absl::StrCat("jit and the interpreter differ at ", i, ": ", a[i],
                                              " vs ", b[i]));
    }
  }
  return got;
}

TEST(ShardMapTest, PsumOfTheDocExample) {
  auto total = shard_map([](Tensor block) { return psum(block, "i"); }, MeshOf("i=4"),
                         SpecTree(P("i")), SpecTree(P()));
  Jitted f = jit([total](Tensor x) { return total(x).leaf(); });
  const hlo::Literal x = F32({16}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2});
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {x}));
  EXPECT_THAT(Values(out), ElementsAre(22, 20, 12, 17));
  ASSERT_OK_AND_ASSIGN(auto module, f.Lower(HostTree::list({HostTree(x)})));
  const std::string text = module->ToString();
  EXPECT_THAT(text, HasSubstr("f32[4] shard_map(%"));
  EXPECT_THAT(text, HasSubstr("mesh={i=4}, in_specs={P(i)}, out_specs={P()}"));
  EXPECT_THAT(text, HasSubstr("f32[4] psum(%"));
  EXPECT_THAT(text, HasSubstr("f32[4]{V:i} parameter(0)"));
}

// A shard_map inside a MapReduce map_fn: each of 2 groups (placed at
// "clients") sums its row's two halves over "data". The map becomes a
// vmapped call, so the region is batched (its operands enter with a leading
// unsplit dim) and then lowered and partitioned on the 2x2 mesh.
TEST(ShardMapTest, InsideMapFnOfAMapReduceProgram) {
  const spmd::Mesh mesh = MeshOf("clients=2,data=2");
  auto halves = shard_map([](Tensor block) { return psum(block, "data"); }, mesh,
                          SpecTree(P("data")), SpecTree(P()));
  mapreduce::Program clients("clients", 2);
  JitOptions options;
  options.mesh = mesh;
  Jitted f = jit(clients.wrap([halves](Tensor rows) {
                   return mapreduce::map_fn([halves](Tensor row) { return halves(row).leaf(); },
                                            rows);
                 }),
                 options);
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {Ramp({2, 4})}));
  // Row 0 = [0,1,2,3] -> [0+2, 1+3]; row 1 = [4,5,6,7] -> [4+6, 5+7].
  EXPECT_THAT(Values(out), ElementsAre(2, 4, 10, 12));
}

// test_repeated_psum_allowed: the inner psum's invariant result is cast
// back to varying before the outer one, which multiplies by 4.
TEST(ShardMapTest, RepeatedPsumIsTwentyFour) {
  auto twice = shard_map([](Tensor x) { return psum(psum(x, "i"), "i"); }, MeshOf("i=4"),
                         SpecTree(P("i")), SpecTree(P()));
  Jitted f = jit([twice](Tensor x) { return twice(x).leaf(); });
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {Ramp({4})}));
  EXPECT_THAT(Values(out), ElementsAre(24));
  ASSERT_OK_AND_ASSIGN(auto module, f.Lower(HostTree::list({HostTree(Ramp({4}))})));
  EXPECT_THAT(module->ToString(), HasSubstr("pbroadcast("));
}

// test_rewrite_binops: x * y with in_specs (P(), P(x)) pbroadcasts x.
TEST(ShardMapTest, MixedVarianceOperandsGetAPbroadcast) {
  auto product = shard_map([](Tensor x, Tensor y) { return x * y; }, MeshOf("x=4"),
                           SpecTree::list({SpecTree(P()), SpecTree(P("x"))}), SpecTree(P("x")));
  Jitted f = jit([product](Tensor x, Tensor y) { return product(x, y).leaf(); });
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {Ramp({2}, 1, 1), Ramp({8})}));
  EXPECT_THAT(Values(out), ElementsAre(0, 2, 2, 6, 4, 10, 6, 14));
  ASSERT_OK_AND_ASSIGN(auto module,
                       f.Lower(HostTree::list({HostTree(Ramp({2})), HostTree(Ramp({8}))})));
  EXPECT_THAT(module->ToString(), HasSubstr("f32[2]{V:x} pbroadcast("));
  EXPECT_THAT(module->ToString(), HasSubstr("), axes={x}"));
}

// test_axis_index_basic and _twoaxes.
TEST(ShardMapTest, AxisIndexOnOneAndTwoAxes) {
  auto positions = shard_map(
      [](Tensor x) { return x + astype(axis_index("x"), f32); }, MeshOf("x=4"),
      SpecTree(P("x")), SpecTree(P("x")));
  Jitted f = jit([positions](Tensor x) { return positions(x).leaf(); });
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {F32({4}, {0, 0, 0, 0})}));
  EXPECT_THAT(Values(out), ElementsAre(0, 1, 2, 3));

  auto grid = shard_map(
      [](Tensor x) { return x + reshape(astype(axis_index({"i", "j"}), f32), {1, 1}); },
      MeshOf("i=4,j=2"), SpecTree(P("i", "j")), SpecTree(P("i", "j")));
  Jitted g = jit([grid](Tensor x) { return grid(x).leaf(); });
  ASSERT_OK_AND_ASSIGN(hlo::Literal out2, RunBothWays(g, {Ramp({4, 2}, 0)}));
  EXPECT_THAT(Values(out2), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

// test_all_gather_invariant_basic: gathering arange(8.) to P() gives it back.
TEST(ShardMapTest, AllGatherInvariantGivesTheWholeArray) {
  auto gathered = shard_map(
      [](Tensor x) { return all_gather_invariant(x, "x", 0, /*tiled=*/true); }, MeshOf("x=4"),
      SpecTree(P("x")), SpecTree(P()));
  Jitted f = jit([gathered](Tensor x) { return gathered(x).leaf(); });
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {Ramp({8})}));
  EXPECT_THAT(Values(out), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  ASSERT_OK_AND_ASSIGN(auto module, f.Lower(HostTree::list({HostTree(Ramp({8}))})));
  EXPECT_THAT(module->ToString(), HasSubstr("f32[8] all_gather_invariant("));
}

// test_all_to_all_grad's forward: rows in, columns out, the same array.
TEST(ShardMapTest, AllToAllMovesRowBlocksToColumnBlocks) {
  auto exchanged = shard_map(
      [](Tensor x) { return all_to_all(x, "x", /*split=*/1, /*concat=*/0); }, MeshOf("x=4"),
      SpecTree(P("x")), SpecTree(P(None, "x")));
  Jitted f = jit([exchanged](Tensor x) { return exchanged(x).leaf(); });
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {Ramp({8, 8})}));
  EXPECT_THAT(Values(out), ElementsAreArray(Values(Ramp({8, 8}))));
}

TEST(ShardMapTest, EveryOtherCollectiveMatchesTheInterpreter) {
  const spmd::Mesh mesh = MeshOf("i=2,j=2");
  auto body = [](Tensor x) {
    Tensor shifted = ppermute(x, {"i", "j"}, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
    Tensor scattered = psum_scatter(shifted, "j", 1, /*tiled=*/true);        // [2,1]
    Tensor regathered = all_gather(scattered, "j", 1, /*tiled=*/true);       // [2,2]
    Tensor high = pmax(regathered, "i") - pmin(regathered, "i");             // invariant in i
    Tensor mean = pmean(x, {"i", "j"});                                      // invariant
    Tensor slice = pscatter(mean, "j", 1, /*tiled=*/true);                   // [2,1]{V:j}
    Tensor untiled = all_gather(slice, "j", 0);                              // [2,2,1]
    return Tree::list({high + regathered, mean, reshape(untiled, {2, 2}) + pbroadcast(mean, "i")});
  };
  auto mapped = shard_map(body, mesh, SpecTree(P("i", "j")),
                          SpecTree::list({SpecTree(P("i", "j")), SpecTree(P()),
                                          SpecTree(P("i", "j"))}));
  Jitted f = jit([mapped](Tensor x) { return mapped(x); });
  const hlo::Literal x = Ramp({4, 4}, 0.5f, -3);
  ASSERT_OK_AND_ASSIGN(HostTree out, f(HostTree::list({HostTree(x)})));
  ASSERT_OK_AND_ASSIGN(auto module, f.Lower(HostTree::list({HostTree(x)})));
  ASSERT_OK_AND_ASSIGN(hlo::Literal want, hlo::Evaluate(*module, {x}));
  for (int64_t k = 0; k < 3; ++k) {
    EXPECT_THAT(Values(out[k].leaf()), Pointwise(DoubleNear(1e-5), Values(want.element(k))))
        << "output " << k;
  }
  // pmean of the whole mesh is the mean of x's 4 blocks.
  EXPECT_THAT(Values(out[1].leaf()), ElementsAre(-0.5, 0, 1.5, 2));
}

// test_vma_out_specs_error_check: the message names the axes and the fix,
// at the line of the shard_map call.
TEST(ShardMapTest, OutputVaryingOverUnnamedAxesIsAnErrorAtTheUserLine) {
  const int line = __LINE__ + 1;
  auto doubled = shard_map([](Tensor x) { return x * 2.0f; }, MeshOf("x=2,y=2,z=2"),
                           SpecTree(P("x", "y", "z")), SpecTree(P("x")));
  Jitted f = jit([doubled](Tensor x) { return doubled(x).leaf(); });
  absl::StatusOr<HostTree> out = f(Ramp({2, 2, 2}));
  ASSERT_FALSE(out.ok());
  const std::string message(out.status().message());
  EXPECT_THAT(message, HasSubstr(absl::StrCat("shard_map_test.cc:", line, ": ")));
  EXPECT_THAT(message, HasSubstr("out_specs[0] is P(x) which implies that the output value is "
                                 "only varying across mesh axes {x} and not {y,z}"));
  EXPECT_THAT(message, HasSubstr("possibly varying over {x,y,z}; psum (or all_gather_invariant) "
                                 "it over {y,z}"));
  EXPECT_THAT(message, HasSubstr("check_variance=false"));

  // test_replication_checker: with a psum over the unnamed axes it is fine.
  auto reduced = shard_map([](Tensor x) { return psum(x * 2.0f, {"y", "z"}); },
                           MeshOf("x=2,y=2,z=2"), SpecTree(P("x", "y", "z")), SpecTree(P("x")));
  Jitted g = jit([reduced](Tensor x) { return reduced(x).leaf(); });
  ASSERT_OK_AND_ASSIGN(hlo::Literal sums, RunBothWays(g, {Ramp({2, 2, 2})}));
  EXPECT_THAT(Values(sums), ElementsAre(12, 44));

  // With the check off the program traces (JAX's check_vma=False).
  auto unchecked = shard_map([](Tensor x) { return x * 2.0f; }, MeshOf("x=2,y=2,z=2"),
                             SpecTree(P("x", "y", "z")), SpecTree(P("x")),
                             {.check_variance = false});
  Jitted h = jit([unchecked](Tensor x) { return unchecked(x).leaf(); });
  ASSERT_OK_AND_ASSIGN(auto module, h.Trace(ShapeTree::list({hlo::Shape(f32, {2, 2, 2})})));
  EXPECT_THAT(module->ToString(), HasSubstr("check_variance=false"));
}

TEST(ShardMapTest, CollectivesOutsideAShardMapAreTraceErrors) {
  const int line = __LINE__ + 1;
  Jitted f = jit([](Tensor x) { return psum(x, "i"); });
  absl::StatusOr<HostTree> out = f(Ramp({4}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr(absl::StrCat("shard_map_test.cc:", line, ": ")));
  EXPECT_THAT(out.status().message(),
              HasSubstr("psum over {i} is only defined inside the function of a shard_map"));

  const int axis_line = __LINE__ + 2;
  auto bad = shard_map([](Tensor x) {
    return psum(x, "j");
  }, MeshOf("i=2"), SpecTree(P("i")), SpecTree(P()));
  Jitted g = jit([bad](Tensor x) { return bad(x).leaf(); });
  absl::StatusOr<HostTree> bad_out = g(Ramp({4}));
  ASSERT_FALSE(bad_out.ok());
  EXPECT_THAT(bad_out.status().message(),
              HasSubstr(absl::StrCat("shard_map_test.cc:", axis_line,
                                     ": psum names axis 'j', which is not in the shard_map's "
                                     "mesh {i=2}")));
}

TEST(ShardMapTest, SpecsThatDoNotFitAreTraceErrors) {
  auto uneven = shard_map([](Tensor x) { return x; }, MeshOf("i=4"), SpecTree(P("i")),
                          SpecTree(P("i")));
  Jitted f = jit([uneven](Tensor x) { return uneven(x).leaf(); });
  absl::StatusOr<HostTree> out = f(Ramp({6}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("shard_map argument leaf 0 (f32[6])"));

  auto unknown = shard_map([](Tensor x) { return x; }, MeshOf("i=4"), SpecTree(P("k")),
                           SpecTree(P("i")));
  Jitted g = jit([unknown](Tensor x) { return unknown(x).leaf(); });
  absl::StatusOr<HostTree> bad = g(Ramp({8}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("shard_map in_specs leaf 0"));
}

// Values of the enclosing function that the body reads enter replicated.
TEST(ShardMapTest, ClosedOverValuesEnterReplicated) {
  Jitted f = jit([](Tensor x, Tensor w) {
    auto scaled = shard_map([w](Tensor block) { return psum(block * w, "d"); }, MeshOf("d=2"),
                            SpecTree(P("d")), SpecTree(P()));
    return scaled(x).leaf();
  });
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunBothWays(f, {Ramp({4}), F32({2}, {1, 10})}));
  EXPECT_THAT(Values(out), ElementsAre(2, 40));
}

// The mean squared error of a linear model whose batch is split over
// `data`, each device's mean combined by pmean.
Tensor ShardedLoss(const spmd::Mesh& mesh, Tensor w, Tensor x, Tensor y) {
  auto loss = shard_map(
      [](Tensor w, Tensor x, Tensor y) {
        Tensor e = matmul(x, w) - y;
        return pmean(mean(e * e), "data");
      },
      mesh, SpecTree::list({SpecTree(P()), SpecTree(P("data")), SpecTree(P("data"))}),
      SpecTree(P()));
  return loss(w, x, y).leaf();
}

Tensor UnshardedLoss(Tensor w, Tensor x, Tensor y) {
  Tensor e = matmul(x, w) - y;
  return mean(e * e);
}

TEST(ShardMapTest, DataParallelGradientEqualsTheUnshardedOne) {
  const hlo::Literal w = F32({3}, {0.5, -1, 2});
  const hlo::Literal x = Ramp({8, 3}, 0.25f, -2);
  const hlo::Literal y = Ramp({8}, -0.5f, 1);
  ASSERT_OK_AND_ASSIGN(HostTree want, jit(grad(UnshardedLoss))(w, x, y));
  for (const char* mesh_text : {"data=1", "data=2", "data=4"}) {
    SCOPED_TRACE(mesh_text);
    const spmd::Mesh mesh = MeshOf(mesh_text);
    Jitted g = jit(grad([mesh](Tensor w, Tensor x, Tensor y) {
      return ShardedLoss(mesh, w, x, y);
    }));
    ASSERT_OK_AND_ASSIGN(hlo::Literal got, RunBothWays(g, {w, x, y}));
    EXPECT_THAT(Values(got), Pointwise(DoubleNear(1e-4), Values(want.leaf())));
  }
  // Partitioned on 4 devices: one all-reduce for w's gradient (its
  // pbroadcast's transpose) and none on the loss path.
  const spmd::Mesh mesh = MeshOf("data=4");
  Jitted g = jit(grad([mesh](Tensor w, Tensor x, Tensor y) { return ShardedLoss(mesh, w, x, y); }));
  ASSERT_OK_AND_ASSIGN(auto program, g.Compile(ShapeTree::list({hlo::Shape(f32, {3}),
                                                                hlo::Shape(f32, {8, 3}),
                                                                hlo::Shape(f32, {8})})));
  const std::string text = program->per_device().ToString();
  int all_reduces = 0;
  for (size_t at = text.find(" all-reduce("); at != std::string::npos;
       at = text.find(" all-reduce(", at + 1)) {
    ++all_reduces;
  }
  EXPECT_EQ(all_reduces, 1) << text;
}

}  // namespace
}  // namespace sharc::frontend

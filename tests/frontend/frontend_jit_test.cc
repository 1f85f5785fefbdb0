// jit: tracing once per signature, running on one device and on a mesh with
// shardings, printing the traced module, sharding constraints, and nested
// traced functions (with captures) called from the trace.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "tests/frontend/frontend_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::frontend {
namespace {

using ::sharc::frontend::testing::F32;
using ::sharc::frontend::testing::Ramp;
using ::sharc::frontend::testing::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

TEST(JitTest, TracesOncePerSignature) {
  Jitted f = jit([](Tensor x) { return x * 2.0f + 1.0f; });
  ASSERT_OK_AND_ASSIGN(HostTree a, f(F32({2}, {1, 2})));
  EXPECT_THAT(Values(a.leaf()), ElementsAre(3, 5));
  ASSERT_OK_AND_ASSIGN(HostTree b, f(F32({2}, {5, 6})));
  EXPECT_THAT(Values(b.leaf()), ElementsAre(11, 13));
  EXPECT_EQ(f.trace_count(), 1);
  // A new shape, then a new dtype, each trace again; a repeat does not.
  ASSERT_OK(f(F32({3}, {1, 2, 3})).status());
  EXPECT_EQ(f.trace_count(), 2);
  ASSERT_OK(f(hlo::Literal::Vector<double>({1.0, 2.0})).status());
  EXPECT_EQ(f.trace_count(), 3);
  ASSERT_OK(f(F32({3}, {4, 5, 6})).status());
  EXPECT_EQ(f.trace_count(), 3);
  // Trace/Lower reuse the cache too.
  ASSERT_OK(f.Trace(ShapeTree::list({hlo::Shape(f32, {3})})).status());
  EXPECT_EQ(f.trace_count(), 3);
}

TEST(JitTest, TraceGivesAPrintableModuleThatParsesBack) {
  Jitted f = jit([](Tensor x, Tensor w) { return tanh(matmul(x, w)); });
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       f.Trace(ShapeTree::list({hlo::Shape(f32, {4, 3}), hlo::Shape(f32, {3, 2})})));
  const std::string text = module->ToString();
  EXPECT_THAT(text, HasSubstr("HloModule jit_f"));
  EXPECT_THAT(text, HasSubstr("f32[4,2] dot("));
  EXPECT_THAT(text, HasSubstr("tanh("));
  EXPECT_THAT(text, HasSubstr("source_file=\"" __FILE__ "\""));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> parsed, hlo::ParseModule(text));
  EXPECT_EQ(parsed->ToString(), text);
}

TEST(JitTest, MeshRunWithInShardingsMatchesOneDevice) {
  auto mlp = [](const Tree& args) -> Tree {
    Tensor h = maximum(matmul(args["x"].leaf(), args["w1"].leaf()), 0.0);
    return Tree(sum(matmul(h, args["w2"].leaf()), 1));
  };
  HostTree args = HostTree::dict({{"x", Ramp({8, 4}, 0.1f, -1.0f)},
                                  {"w1", Ramp({4, 6}, 0.05f, -0.5f)},
                                  {"w2", Ramp({6, 2}, -0.1f, 0.3f)}});
  ASSERT_OK_AND_ASSIGN(HostTree one, jit(mlp)(args));

  JitOptions options;
  options.mesh = spmd::Mesh::OneDimensional("data", 2);
  options.in_shardings =
      SpecTree::dict({{"x", P("data", None)}, {"w1", P()}, {"w2", P()}});
  options.out_shardings = SpecTree(P("data"));
  Jitted sharded = jit(mlp, options);
  ASSERT_OK_AND_ASSIGN(HostTree two, sharded(args));
  EXPECT_THAT(Values(two.leaf()), Pointwise(DoubleNear(1e-5), Values(one.leaf())));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, sharded.Lower(args));
  EXPECT_EQ(module->config().num_partitions, 2);
  const std::string text = module->ToString();
  EXPECT_THAT(text, HasSubstr("f32[8,4] parameter(2), sharding={devices=[2,1]0,1}"));
  EXPECT_THAT(text, HasSubstr("sharding={{devices=[2]0,1}}"));
  EXPECT_THAT(text, HasSubstr("op_name=\"args.x\""));
}

TEST(JitTest, ShardingConstraintIsPrintedAndRunsOnItsMesh) {
  const spmd::Mesh mesh = spmd::Mesh::OneDimensional("model", 2);
  Jitted f = jit([&](Tensor x, Tensor w) {
    Tensor y = with_sharding_constraint(matmul(x, w), mesh, P(None, "model"));
    return y * 3.0f;
  });
  hlo::Literal x = Ramp({2, 3}), w = Ramp({3, 4}, 0.5f);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, f.Lower(HostTree::list({x, w})));
  const std::string text = module->ToString();
  EXPECT_THAT(text, HasSubstr("custom-call("));
  EXPECT_THAT(text, HasSubstr("custom_call_target=\"Sharding\""));
  EXPECT_THAT(text, HasSubstr("sharding={devices=[1,2]0,1}"));
  EXPECT_EQ(module->config().num_partitions, 2);
  ASSERT_OK_AND_ASSIGN(HostTree out, f(x, w));
  ASSERT_OK_AND_ASSIGN(HostTree expected, jit([](Tensor a, Tensor b) {
                                            return matmul(a, b) * 3.0f;
                                          })(x, w));
  EXPECT_THAT(Values(out.leaf()), Pointwise(DoubleNear(1e-5), Values(expected.leaf())));
}

TEST(JitTest, NestedFunctionsBecomeCalledComputationsWithCaptures) {
  Jitted f = jit([](Tensor x, Tensor scale) -> Tensor {
    // The body reads `scale` from the enclosing function: it becomes a
    // trailing parameter of the nested computation.
    absl::StatusOr<TracedFunction> body = TraceComputation(
        [&](const Tree& args) -> Tree { return Tree(args.leaf() * scale + 1.0f); },
        ShapeTree(x.shape()), "scaled");
    ThrowIfError(body.status());
    EXPECT_EQ(body->captures.size(), 1u);
    EXPECT_EQ(body->computation->num_parameters(), 2);
    Tree once = Call(*body, Tree(x));
    return Call(*body, once).leaf();
  });
  ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({2}, {1, 2}), F32({}, {10})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(111, 211));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       f.Trace(ShapeTree::list({hlo::Shape(f32, {2}), hlo::Shape(f32, {})})));
  EXPECT_THAT(module->ToString(), HasSubstr("to_apply=%scaled"));
}

TEST(JitTest, EmitReachesOpsWithoutATensorFunction) {
  // A new op is emitted by opcode, attributes and (when not inferable) a
  // declared shape, without changes to Tensor.
  Jitted f = jit([](Tensor x) {
    Tensor reversed = Emit(hlo::Opcode::kReverse, {x}, {{"dimensions", hlo::IntList{0}}});
    Tensor tuple = Emit(hlo::Opcode::kTuple, {reversed, x});
    return TupleElement(tuple, 0) - TupleElement(tuple, 1);
  });
  ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({3}, {1, 2, 4})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(3, 0, -3));
}

TEST(JitTest, InstructionsRecordTheirCallSite) {
  int line = 0;
  auto fn = [&](const Tree& args) -> Tree {
    line = __LINE__ + 1;
    return Tree(exp(args.leaf()));
  };
  ASSERT_OK_AND_ASSIGN(TracedModule traced, TraceModule(fn, ShapeTree(hlo::Shape(f32, {2}))));
  const hlo::Instruction* root = traced.module->entry()->root()->operand(0);
  EXPECT_EQ(root->opcode(), hlo::Opcode::kExp);
  EXPECT_EQ(root->location().file, __FILE__);
  EXPECT_EQ(root->location().line, line);
  EXPECT_EQ(root->metadata().source_line, line);
  EXPECT_EQ(traced.outputs.ToString(), "*");
  EXPECT_FALSE(traced.mesh.has_value());

  TraceModuleOptions quiet;
  quiet.trace.source_metadata = false;
  ASSERT_OK_AND_ASSIGN(TracedModule plain,
                       TraceModule(fn, ShapeTree(hlo::Shape(f32, {2})), quiet));
  EXPECT_THAT(plain.module->ToString(), ::testing::Not(HasSubstr("metadata=")));
  EXPECT_EQ(plain.module->entry()->root()->operand(0)->location().line, line);
}

TEST(JitTest, PartitionSpecSpelling) {
  EXPECT_EQ(P("data", None), spmd::PartitionSpec({{"data"}, {}}));
  EXPECT_EQ(P(SpecDim{"x", "y"}, std::string("z")), spmd::PartitionSpec({{"x", "y"}, {"z"}}));
  EXPECT_EQ(P(), spmd::PartitionSpec());
}

}  // namespace
}  // namespace sharc::frontend

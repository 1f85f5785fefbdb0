// vmap: a function mapped over an axis gives, slice by slice, what the
// function gives on that slice alone.
#include <functional>

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
using ::sharc::testing::StatusIs;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// Slice `b` of `x` along `axis` (through the frontend, so the test does not
// re-implement strided copies).
hlo::Literal SliceAt(const hlo::Literal& x, int64_t axis, int64_t b) {
  auto out = jit([axis, b](Tensor t) {
    std::vector<int64_t> perm = {axis};
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (d != axis) perm.push_back(d);
    }
    return index(transpose(t, perm), b);
  })(x);
  EXPECT_TRUE(out.ok()) << out.status();
  return out->leaf();
}

// Runs vmap(f) on `args` (leaf i mapped over axes[i], or shared) and checks
// every slice of the result against f on the sliced arguments.
template <typename F>
void ExpectMatchesPerSlice(F f, const std::vector<hlo::Literal>& args,
                           const std::vector<std::optional<int64_t>>& axes) {
  std::vector<AxisTree> axis_leaves;
  for (const auto& a : axes) axis_leaves.push_back(AxisTree(a));
  Vmapped batched = vmap(f, AxisTree::list(axis_leaves));
  HostTree host_args = HostTree::list(std::vector<HostTree>(args.begin(), args.end()));
  absl::StatusOr<HostTree> out = jit([&](const Tree& t) { return batched(t); })(host_args);
  ASSERT_TRUE(out.ok()) << out.status();
  int64_t n = -1;
  for (size_t i = 0; i < args.size(); ++i) {
    if (axes[i]) n = args[i].shape().dim(*axes[i]);
  }
  ASSERT_EQ(out->leaf().shape().dim(0), n);
  for (int64_t b = 0; b < n; ++b) {
    std::vector<HostTree> sliced;
    for (size_t i = 0; i < args.size(); ++i) {
      sliced.push_back(axes[i] ? SliceAt(args[i], *axes[i], b) : args[i]);
    }
    absl::StatusOr<HostTree> expected = jit(f)(HostTree::list(sliced));
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_THAT(Values(SliceAt(out->leaf(), 0, b)),
                Pointwise(DoubleNear(1e-4), Values(expected->leaf())))
        << "slice " << b;
  }
}

TEST(VmapTest, Elementwise) {
  ExpectMatchesPerSlice([](Tensor x, Tensor y) { return tanh(x) * y + 1.0f; },
                        {Ramp({3, 4}, 0.1f), Ramp({3, 4}, -0.2f, 1.0f)}, {0, 0});
}

TEST(VmapTest, MatmulWithASharedWeight) {
  ExpectMatchesPerSlice([](Tensor x, Tensor w) { return matmul(x, w); },
                        {Ramp({5, 2, 3}, 0.5f), Ramp({3, 4}, 0.25f, -1.0f)}, {0, std::nullopt});
}

TEST(VmapTest, ReductionsAndBroadcasting) {
  ExpectMatchesPerSlice(
      [](Tensor x) { return sum(x, 1) + max(x) - squeeze(mean(x, 1, true)); },
      {Ramp({2, 3, 4}, 0.3f, -2.0f)}, {0});
}

TEST(VmapTest, MappedAxisOtherThanZero) {
  ExpectMatchesPerSlice([](Tensor x, Tensor v) { return matmul(x, v); },
                        {Ramp({2, 4, 3}, 0.5f), Ramp({3, 4}, -0.25f, 1.0f)}, {1, 1});
}

TEST(VmapTest, CapturedValuesAreShared) {
  Jitted f = jit([](Tensor xs, Tensor scale) {
    return vmap([&](Tensor x) { return sum(x * scale); })(xs).leaf();
  });
  ASSERT_OK_AND_ASSIGN(HostTree out, f(Ramp({3, 2}), F32({2}, {1, 10})));
  // rows [0,1], [2,3], [4,5] -> 0+10, 2+30, 4+50
  EXPECT_THAT(Values(out.leaf()), ElementsAre(10, 32, 54));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       f.Trace(ShapeTree::list({hlo::Shape(f32, {3, 2}), hlo::Shape(f32, {2})})));
  const std::string text = module->ToString();
  EXPECT_THAT(text, HasSubstr("to_apply=%vmap_body.batched"));
  // Only the batched body is kept, and the module prints and parses back.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("%vmap_body {")));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> parsed, hlo::ParseModule(text));
  EXPECT_EQ(parsed->ToString(), text);
}

TEST(VmapTest, MismatchedSizesNameTheVmapLine) {
  int line = 0;
  Jitted f = jit([&](Tensor a, Tensor b) {
    line = __LINE__ + 1;
    return vmap([](Tensor x, Tensor y) { return x + y; })(a, b).leaf();
  });
  absl::StatusOr<HostTree> out = f(Ramp({3, 2}), Ramp({4, 2}));
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument,
                            HasSubstr(absl::StrCat("frontend_vmap_test.cc:", line, ": vmap"))));
}

TEST(VmapTest, EveryTensorOpMatchesPerSlice) {
  // One function per family of Tensor operations, each on an example of
  // shape [3, 4] mapped over a leading axis of 2.
  const std::vector<std::pair<std::string, std::function<Tensor(Tensor)>>> ops = {
      {"unary", [](Tensor x) { return exp(x) + log(x + 3.0f) - sqrt(abs(x)) * sign(x); }},
      {"more unary", [](Tensor x) { return rsqrt(x * x + 1.0f) + sin(x) * cos(x) + floor(x); }},
      {"logistic tanh neg", [](Tensor x) { return logistic(x) - tanh(x) + neg(ceil(x)); }},
      {"binary", [](Tensor x) { return maximum(x, 0.5) * minimum(x, 1.0) / (pow(x, 2.0) + 1.0f); }},
      {"compare where", [](Tensor x) { return where(x > 0.25, x, -x) + astype(x <= 0.0, f32); }},
      {"astype", [](Tensor x) { return astype(astype(x * 4.0f, s32), f32); }},
      {"broadcast", [](Tensor x) { return x + reshape(arange(0.0, 4.0, 1.0), {1, 4}); }},
      {"reshape transpose", [](Tensor x) { return reshape(transpose(x), {3, 4}); }},
      {"slice index", [](Tensor x) {
         return concatenate({slice(x, {0, 0}, {3, 4}, {2, 1}), expand_dims(index(x, -1), 0)}, 0);
       }},
      {"concatenate", [](Tensor x) { return concatenate({x, x * 2.0f}, 1); }},
      {"reductions", [](Tensor x) {
         return sum(x, 0) + mean(x, 0) + max(x, 0) + min(x, 0) + sum(x);
       }},
      {"matmul", [](Tensor x) { return matmul(x, transpose(x)); }},
      {"einsum", [](Tensor x) { return einsum("ij,kj->ik", x, x) + einsum("ij->i", x); }},
      {"creation", [](Tensor x) { return x + ones({3, 4}) + full({4}, 2.0) + zeros_like(x); }},
  };
  const hlo::Literal xs = Ramp({2, 3, 4}, 0.125f, -1.0f);
  for (const auto& [name, op] : ops) {
    SCOPED_TRACE(name);
    ExpectMatchesPerSlice(op, {xs}, {0});
  }
}

}  // namespace
}  // namespace sharc::frontend
